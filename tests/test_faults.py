"""Infrastructure faults and bad input: the harness recovers or stops clearly; never a wrong label."""

import json
import os
import subprocess
import sys
import threading
import time
import uuid

import pytest

from harness.inputs.config import Limits, SandboxSettings
from harness.core.constants import LABEL_RUN
from harness.core.errors import HarnessError
from harness.execution.jobs import Job
from harness.execution.dispatch import execute
from harness.inputs.problem import Problem
from harness.records.results import ResultRow, ResultStore
from harness.inputs.samples import Sample

from .conftest import DEMO_PROBLEMS, ROOT, write_jsonl

PROBLEM = Problem("F/0", "def f(x):\n    \"\"\"x + 1, slowly\"\"\"\n", "def check(candidate):\n    assert candidate(1) == 2\n", "f")
SLOW_RIGHT = PROBLEM.prompt + "    import time\n    time.sleep(0.6)\n    return x + 1\n"


def _sabotage(run_prefix, action, delay=0.3):
    """Wait for a container of the run, let a job start, then do `action` to it."""
    import docker
    client = docker.from_env()

    def go():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = [c for c in client.containers.list(filters={"label": LABEL_RUN})
                     if c.labels.get(LABEL_RUN, "").startswith(run_prefix)]
            if found:
                time.sleep(delay)
                action(found[0])
                return
            time.sleep(0.02)
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def _run_with(action):
    run_id = "fault-" + uuid.uuid4().hex
    jobs = [Job(PROBLEM, Sample("F/0", i, SLOW_RIGHT, "completion", "test")) for i in range(4)]
    rows = []
    t = _sabotage(run_id, action)
    execute(jobs, Limits(timeout_s=5.0, memory_mb=256), SandboxSettings(workers=1), run_id, rows.append)
    t.join(timeout=5)
    return rows


@pytest.mark.docker
def test_container_killed_from_outside_is_retried_not_scored():
    rows = _run_with(lambda c: c.kill())
    assert [r.status for r in rows] == ["passed"] * 4
    assert max(r.attempt for r in rows) == 2


@pytest.mark.docker
def test_supervisor_crash_is_retried_not_scored():
    kill_supervisor = ("import os, signal\n"
                       "for p in os.listdir('/proc'):\n"
                       "    if p.isdigit():\n"
                       "        try:\n"
                       "            cmd = open(f'/proc/{p}/cmdline', 'rb').read()\n"
                       "        except OSError:\n"
                       "            continue\n"
                       "        if b'start.py\\x00serve' in cmd:\n"
                       "            os.kill(int(p), signal.SIGKILL)\n")
    rows = _run_with(lambda c: c.exec_run(["passk-python", "-c", kill_supervisor], user="root"))
    assert [r.status for r in rows] == ["passed"] * 4
    assert max(r.attempt for r in rows) == 2


@pytest.mark.docker
def test_no_engine_is_a_clear_harness_failure(tmp_path):
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "Demo/0", "completion": "    return x\n"}])
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(DEMO_PROBLEMS),
                           "--samples", str(samples), "--out", str(tmp_path / "out"), "--no-progress"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "no Docker engine answers" in proc.stderr and "Traceback" not in proc.stderr
    assert "passk doctor" in proc.stderr
    assert not (tmp_path / "out").exists()  # a run that never started leaves no directory behind
    # Regression: the same command, once an engine answers, resumes instead of refusing the directory.
    again = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(DEMO_PROBLEMS),
                            "--samples", str(samples), "--out", str(tmp_path / "out"), "--no-progress"],
                           cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr


def test_a_full_disk_stops_with_a_message_and_keeps_rows(tmp_path):
    store = ResultStore(tmp_path / "results.jsonl")
    store.append(ResultRow("t", 0, "passed"))

    class Full:
        closed = False

        def write(self, _):
            raise OSError(28, "No space left on device")

        def flush(self):
            pass

    real, store._f = store._f, Full()
    with pytest.raises(HarnessError, match="No space left on device.*rerun the same command to resume"):
        store.append(ResultRow("t", 1, "passed"))
    store._f = real
    store.close()
    assert ResultStore(tmp_path / "results.jsonl").finished() == {("t", 0)}


@pytest.mark.parametrize("rows,fragment", [
    ([{"task_id": "Nope/1", "completion": "x"}], "s.jsonl:1: unknown task_id 'Nope/1'"),
    ([{"task_id": "Demo/0", "completion": 1}], "s.jsonl:1: field 'completion' must be a string"),
])
def test_bad_samples_exit_2_with_one_line_and_no_output(tmp_path, rows, fragment):
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(DEMO_PROBLEMS),
                           "--samples", str(samples), "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and fragment in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


@pytest.mark.docker
def test_sixteen_workers_on_two_cores_change_no_label(tmp_path):
    from harness.inputs.config import RunConfig
    from harness.run.runner import evaluate
    from .conftest import DEMO_SAMPLES

    def labels(workers):
        cfg = RunConfig(problems=str(DEMO_PROBLEMS), samples=str(DEMO_SAMPLES), out=str(tmp_path / str(workers)),
                        k=(1,), limits=Limits(timeout_s=1.0, memory_mb=256), sandbox=SandboxSettings(workers=workers))
        evaluate(cfg, progress=False)
        return {(r["task_id"], r["sample_index"]): (r["status"], r["reason"])
                for r in map(json.loads, (tmp_path / str(workers) / "results.jsonl").read_text().splitlines())}
    assert labels(16) == labels(1)


@pytest.mark.docker
def test_ctrl_c_stops_cleanly_keeps_rows_and_says_how_to_resume(tmp_path):
    import docker

    from harness.core.constants import LABEL_OWNER_PID
    from .conftest import DEMO_SAMPLES, interrupt_after_rows
    rows = [json.loads(line) for line in DEMO_SAMPLES.read_text().splitlines()] * 4
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(DEMO_PROBLEMS), "--samples",
           str(samples), "--out", str(out), "--timeout-s", "0.5", "--workers", "2", "--no-progress"]
    code, err, kept = interrupt_after_rows(cmd, out / "results.jsonl", timeout=60)
    assert code == 130
    assert "Run the same command again to resume" in err and "Traceback" not in err
    assert 20 <= kept < 192
    client = docker.from_env()
    left = [c for c in client.containers.list(all=True, filters={"label": LABEL_OWNER_PID})
            if c.labels.get("org.passk.run") == json.loads((out / "manifest.json").read_text())["run_id"]]
    assert left == []
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and f"reused {kept} from an earlier run" in done.stdout


@pytest.mark.docker
def test_the_hosts_wait_follows_the_jobs_own_limits(monkeypatch):
    """Regression (issue 24, item 6): the host waited the job's wall clock plus a fixed grace, whatever the
    job's own limits allowed. An io candidate whose tests together run well inside their limits (10 tests
    of 0.4 s, each limit 1 s, all of them 10 s) was cut: `error infrastructure`, three attempts. The wait
    now comes from the job's limits (jobs.host_wait_s); with the grace at 2 s it still passes."""
    from harness.execution.sandbox import docker as docker_backend
    from harness import Evaluator

    monkeypatch.setattr(docker_backend, "RESULT_GRACE_S", 2.0)
    tests = tuple((f"{i}\n", f"{i}\n") for i in range(10))
    problem = Problem("slow-io", "", "", None, channel="io", runner="script", tests=tests, format="native")
    with Evaluator(timeout_s=1.0, workers=1, max_attempts=1) as ev:
        row = ev.evaluate([(problem, "import time\ntime.sleep(0.4)\nprint(input())\n")])[0]
    assert (row.status, row.reason) == ("passed", "tests_completed"), (row.status, row.reason, row.detail)


def test_a_program_larger_than_the_jobs_space_is_the_candidates_failure():
    """Regression (issue 24, item 4): writing a candidate's program that does not fit in the job's /tmp
    failed with ENOSPC inside the supervisor: a fault, `error infrastructure` on every attempt. It is now
    the candidate's `failed file_size_limit`, nothing ran, and the container takes the next candidate."""
    from harness import Evaluator

    huge = PROBLEM.prompt + "    return x + 1\n# " + "y" * (9 << 20) + "\n"
    right = PROBLEM.prompt + "    return x + 1\n"
    with Evaluator(timeout_s=2.0, workers=1, max_attempts=1, tmpfs_mb=8) as ev:
        rows = ev.evaluate([(PROBLEM, huge), (PROBLEM, right)])
    assert (rows[0].status, rows[0].reason) == ("failed", "file_size_limit"), (rows[0].status, rows[0].reason, rows[0].detail)
    assert "does not fit" in rows[0].detail
    assert (rows[1].status, rows[1].reason) == ("passed", "tests_completed"), (rows[1].status, rows[1].reason)


def _stop_drill(tmp_path, grace: str, signals: int):
    """`passk evaluate` of candidates that sleep through a 60 s limit, stopped by SIGTERM (`signals` of
    them, a second apart) once they run: (exit code, seconds from the first signal to the exit, stderr,
    containers of the run left)."""
    import signal
    import time

    import docker
    problems = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "poison", "prompt": "def f():\n", "entry_point": "f",
                                                    "canonical_solution": "    return 1\n",
                                                    "test": "def check(candidate):\n    assert candidate() == 1\n"}])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "poison", "completion": "    import time\n    time.sleep(120)\n"}] * 6)
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples",
                             str(samples), "--out", str(out), "--timeout-s", "60", "--workers", "2", "--no-progress"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PASSK_STOP_GRACE_S": grace})
    client = docker.from_env()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out / "manifest.json").exists():
        time.sleep(0.2)
    time.sleep(4)   # the candidates run (they sleep through their limit)
    t0 = time.monotonic()
    for _ in range(signals):
        proc.send_signal(signal.SIGTERM)
        time.sleep(1)
    _, err = proc.communicate(timeout=120)
    took = time.monotonic() - t0
    run_id = json.loads((out / "manifest.json").read_text())["run_id"]
    left = [c for c in client.containers.list(all=True, filters={"label": f"org.passk.run={run_id}"})]
    return proc.returncode, took, err, left


@pytest.mark.docker
def test_a_stop_waits_a_bounded_grace_then_removes_every_container(tmp_path):
    # regression (issue 43): SIGTERM printed `finishing the candidates already running…` and waited for
    # them without end (a stop with long limits never stopped)
    code, took, err, left = _stop_drill(tmp_path, "2", 1)
    assert code == 130 and "Traceback" not in err, err
    assert "at most 2 s" in err and took < 25, (took, err)
    assert left == []


@pytest.mark.docker
def test_a_second_stop_does_not_wait_for_the_grace(tmp_path):
    code, took, err, left = _stop_drill(tmp_path, "600", 2)
    assert code == 130 and "Traceback" not in err, err
    assert took < 30, (took, err)
    assert left == []


def test_a_row_is_handed_over_while_later_jobs_are_still_being_submitted():
    """Regression: every job was submitted before any row was handed over. Submitting a repository task can
    take minutes (its environment's image is built when its first job comes), so a run over many
    environments held every finished row in memory, unwritten, until the last image was built: a run killed
    meanwhile lost them. A fake executor (pure logic: no sandbox) blocks the second submission until the
    first row has been handed over."""
    import concurrent.futures
    from harness.execution.dispatch import execute
    from harness.execution.jobs import Job
    from harness.inputs.problem import Problem
    from harness.inputs.samples import Sample
    from harness.records.results import ResultRow
    handed = threading.Event()

    class Fake:
        def start(self):
            return {}

        def submit_job(self, job):
            if job.sample.sample_index == 1:
                assert handed.wait(10), "the first row was not handed over while the second job was submitted"
            f = concurrent.futures.Future()
            f.set_result(ResultRow(task_id=job.sample.task_id, sample_index=job.sample.sample_index, status="passed"))
            return f

    problem = Problem("t/0", "def f():\n", "def check(c):\n    pass\n", "f")
    jobs = [Job(problem, Sample("t/0", i, "def f():\n    pass\n", "completion", "test")) for i in range(2)]
    rows = []

    def on_row(row):
        rows.append(row)
        handed.set()
    execute(jobs, Limits(), SandboxSettings(workers=1), "fake", on_row, evaluator=Fake())
    assert [r.sample_index for r in rows] == [0, 1]


def test_an_evaluator_closed_while_its_image_is_built_starts_no_container():
    """Regression: with jobs submitted beside the rows' loop, a run stopped while a repository environment's
    image was being built closed the executor first; the build then finished and its lanes started
    containers nobody would remove (a stopped run left two behind). A fake backend (pure logic) holds
    prepare() until close() has run."""
    from harness.execution.evaluator import Evaluator
    from harness.execution.executor import Stopped
    from harness.execution.sandbox.base import Backend, register_backend
    building, closed, opened = threading.Event(), threading.Event(), []

    @register_backend("test-slow-prepare")
    class SlowPrepare(Backend):
        name = "test-slow-prepare"

        def __init__(self, run_id, limits, settings):
            pass

        def prepare(self):
            building.set()
            assert closed.wait(10)
            return {"image": "x", "image_id": "x", "runtime": "runc", "isolation": "fresh"}

        def supervisor_limits(self, limits):
            return {}

        def open_session(self, slot=0):
            opened.append(slot)
            raise AssertionError("a session was opened after close()")

        def healthy(self):
            return True

        def close(self):
            pass

    ev = Evaluator(Limits(), SandboxSettings(backend="test-slow-prepare", workers=2))
    outcome = []

    def start():
        try:
            ev.start()
            outcome.append("started")
        except Stopped:
            outcome.append("stopped")
    t = threading.Thread(target=start)
    t.start()
    assert building.wait(10)
    ev.close()
    closed.set()
    t.join(10)
    time.sleep(0.2)   # a lane's container would be started in the background
    assert outcome == ["stopped"] and opened == []


def test_a_candidate_whose_environment_cannot_be_built_gets_a_whole_row():
    """The row of a candidate whose environment cannot be built lacked the run id and finish time every
    other row carries (the pool's, Ray's): it was made apart from them."""
    from harness.execution.evaluator import Evaluator
    ev = Evaluator(Limits(timeout_s=3.0, memory_mb=256), SandboxSettings(workers=1), run_id="run-x")
    sample = Sample("F/0", 3, SLOW_RIGHT, "completion", "test")
    row = ev.unbuildable_row(Job(PROBLEM, sample), "Python 3.6, which no Debian base gives")
    assert (row.status, row.reason) == ("error", "environment_error")
    assert row.run_id == "run-x" and row.finished_at and row.attempt == 1
    assert row.candidate_sha256 == sample.sha256 and row.sample_index == 3
    assert "Python 3.6" in row.detail
