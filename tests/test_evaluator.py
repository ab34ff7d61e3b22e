"""The Python API against the real engine: programs in memory, rows in the caller's order or as they
finish with the caller's ids, warm containers across batches, safe for concurrent callers."""

import concurrent.futures
import os

import pytest

from harness import Evaluator, HarnessError, InputError, Limits, Problem, SandboxSettings, score_counts
from harness.core.constants import EXECUTORS
from harness.execution.dispatch import EXECUTOR_CLASSES, make_executor
from harness.execution.executor import Slots
from harness.execution.sandbox.docker import slot_cpus
from harness.execution.jobs import Job

ADD = Problem("add/0", "def add(a, b):\n", "def check(candidate):\n    assert candidate(1, 2) == 3\n", "add")
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
LOOP = "def add(a, b):\n    while True:\n        pass\n"


@pytest.fixture(scope="module")
def ev():
    with Evaluator(Limits(timeout_s=1.0, memory_mb=256), workers=2) as evaluator:
        yield evaluator


@pytest.mark.docker
def test_rows_come_back_in_the_callers_order(ev):
    rows = ev.evaluate([(ADD, WRONG), (ADD, LOOP), (ADD, RIGHT), (ADD, "def add(a, b):\n    return a +\n")])
    assert [(r.status, r.reason) for r in rows] == [
        ("failed", "assertion"), ("timed_out", "wall_time_limit"), ("passed", "tests_completed"),
        ("failed", "syntax_error")]
    assert all(r.limits["timeout_s"] == 1.0 and r.limits["image_id"] for r in rows)


@pytest.mark.docker
def test_stream_yields_the_callers_ids_as_rows_finish(ev):
    got = dict(ev.stream([("slow", ADD, LOOP), ("a", ADD, RIGHT), ("b", ADD, WRONG)]))
    assert {k: r.status for k, r in got.items()} == {"slow": "timed_out", "a": "passed", "b": "failed"}


@pytest.mark.docker
def test_concurrent_callers_each_get_their_own_results_and_containers_stay_warm(ev):
    def batch(i):
        program = RIGHT if i % 2 else WRONG
        return [r.status for r in ev.evaluate([(ADD, program)] * 5)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(batch, range(8)))
    assert results == [["failed"] * 5 if i % 2 == 0 else ["passed"] * 5 for i in range(8)]
    assert ev.facts["runtime"] == "runc"


@pytest.mark.docker
@pytest.mark.parametrize("transport", ["socket", "attach"])
def test_both_transports_give_the_same_labels_and_leave_no_socket(transport, tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # where the host's socket directories go
    with Evaluator(Limits(timeout_s=1.0, memory_mb=256), workers=1, transport=transport) as evaluator:
        rows = evaluator.evaluate([(ADD, RIGHT), (ADD, WRONG), (ADD, LOOP)])
        assert evaluator.facts["transport"] == transport
        assert list(tmp_path.iterdir()) == []   # the socket's directory is removed once the supervisor connected
    assert [r.status for r in rows] == ["passed", "failed", "timed_out"]


def test_unknown_options_are_refused_by_name():
    with pytest.raises(InputError, match="unknown option.*timeout"):
        Evaluator(timeout=3)


@pytest.mark.docker
def test_a_setting_that_cannot_work_fails_at_start():
    with pytest.raises(InputError, match="passk-no-such-image"):
        with Evaluator(image="passk-no-such-image:1"):
            pass


def test_scoring_plain_counts():
    score = score_counts({"a": (10, 3), "b": (10, 0)}, ks=(1, 5, 20))
    assert score["pass_at_k_exact"] == {"1": "3/20", "5": "11/24"}
    assert "needs n ≥ 20" in score["omitted_k"]["20"]
    assert score_counts([(1, 1), (1, 0), (1, 1)], ks=(1,))["pass_at_k_tasks"] == {"1": "2/3"}


@pytest.mark.parametrize("executor, noun", [("local", "Evaluator"), ("ray", "executor")])
def test_a_closed_executor_refuses_to_start_again_or_take_a_job(executor, noun):
    # both executors share these checks (harness/execution/executor.py); nothing starts, so no engine is used
    ex = make_executor(Limits(), SandboxSettings(executor=executor), run_id="closed")
    ex.close()
    with pytest.raises(HarnessError, match=f"this {noun} is closed; make a new one"):
        ex.start()
    with pytest.raises(HarnessError, match="is closed"):
        ex.submit_job(Job.__new__(Job))


def test_every_executor_name_the_config_accepts_has_an_executor_and_no_other():
    # the names are checked at the edge (inputs), the classes live in execution: a name without a class
    # would pass the config check and fail with a KeyError when the run starts
    assert set(EXECUTOR_CLASSES) == set(EXECUTORS)


def test_worker_slots_get_cpus_of_their_own_where_they_fit():
    assert slot_cpus([0, 1], 2, 1.0)[0] == ["0", "1"]
    assert slot_cpus(list(range(8)), 3, 1.0)[0] == ["0,1", "2,3", "4,5"]
    assert slot_cpus([2, 5], 2, 1.0)[0] == ["2", "5"]              # the CPUs this process may use, not 0..n-1
    assert slot_cpus([0, 1, 2, 3], 2, 2.0)[0] == ["0,1", "2,3"]    # as many as the quota needs
    for mine, workers, cpus in (([0, 1], 1, 1.0), ([0, 1], 3, 1.0), ([0, 1, 2, 3], 2, 3.0)):
        sets, why = slot_cpus(mine, workers, cpus)
        assert sets is None and why.startswith("off: ")


def test_slots_hand_out_each_number_once_at_a_time():
    slots = Slots(2)
    first, second = slots.take(), slots.take()
    assert {first, second} == {0, 1} and slots.taken() == 2
    slots.give(first)
    assert slots.taken() == 1 and slots.take() == first   # the one used last is taken first (warmest)


CPUS = Problem("cpus/0", "def cpus():\n", "def check(candidate):\n    assert len(candidate()) == EXPECTED\n", "cpus")
SHOW_CPUS = "import os\ndef cpus():\n    print(sorted(os.sched_getaffinity(0)))\n    return os.sched_getaffinity(0)\n"


@pytest.mark.docker
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two CPUs")
@pytest.mark.parametrize("pin", ["auto", "off"])
def test_each_worker_runs_its_candidates_on_its_own_cpus_unless_pinning_is_off(pin):
    mine = sorted(os.sched_getaffinity(0))
    expected = 1 if pin == "auto" else len(mine)
    problem = Problem(CPUS.task_id, CPUS.prompt, CPUS.test.replace("EXPECTED", str(expected)), CPUS.entry_point)
    with Evaluator(Limits(timeout_s=3.0, memory_mb=256), workers=2, pin_cpus=pin) as evaluator:
        rows = evaluator.evaluate([(problem, SHOW_CPUS)] * 8)
        pinning = evaluator.facts["cpu_pinning"]
    assert [r.status for r in rows] == ["passed"] * 8, [(r.reason, r.detail) for r in rows]
    seen = {r.stdout_tail.strip() for r in rows}
    if pin == "auto":
        assert pinning == f"each worker's containers on CPUs of their own: worker 0: {mine[0]}; worker 1: {mine[1]}"
        assert seen <= {f"[{mine[0]}]", f"[{mine[1]}]"}
    else:
        assert pinning == "off (pin_cpus off)" and seen == {str(mine)}
