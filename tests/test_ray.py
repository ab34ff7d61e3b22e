"""The Ray executor, against a real local Ray cluster the tests start themselves: a head and a second node
on this machine, each with its own resources and its own raylet, both on this machine's Docker engine.
Nothing is mocked. The node-kill test is last: it takes the second node away."""

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import docker
import pytest

from harness.inputs.config import Limits, RunConfig, SandboxSettings
from harness.core.constants import LABEL_MANAGED
from harness.core.errors import HarnessError, InputError
from harness.run.runner import evaluate

from .conftest import DEMO_PROBLEMS, DEMO_SAMPLES, write_jsonl

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install -e '.[ray]')")

NODE_ARGS = {"num_cpus": 1, "object_store_memory": 80 << 20}


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster
    c = Cluster(initialize_head=True, head_node_args={**NODE_ARGS, "include_dashboard": False})
    second = c.add_node(**NODE_ARGS)
    c.wait_for_nodes()
    yield c, second
    c.shutdown()


def _config(tmp_path, name, problems=DEMO_PROBLEMS, samples=DEMO_SAMPLES, **sandbox):   # noqa: D103
    return RunConfig(problems=str(problems), samples=str(samples), out=str(tmp_path / name), k=(1,),
                     limits=Limits(timeout_s=3.0), sandbox=SandboxSettings(**{"workers": 1, **sandbox}))


def _rows(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _labels(rows):
    return {(r["task_id"], r["sample_index"]): (r["status"], r["reason"]) for r in rows}


def _passk_containers():
    return docker.from_env().containers.list(all=True, filters={"label": LABEL_MANAGED})


@pytest.mark.docker
def test_without_an_address_a_run_starts_its_own_local_cluster_and_keeps_it(tmp_path, monkeypatch):
    """Regression: the run started its local cluster from a short-lived thread, and Ray kills a cluster's
    processes when the thread that started them ends: the run died, exit 1, without a word."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    outcome = evaluate(_config(tmp_path, "run", executor="ray"), progress=False)
    rows = _rows(outcome.out_dir)
    assert len(rows) == 48 and len({r["node"] for r in rows}) == 1
    assert not ray.is_initialized()


@pytest.mark.docker
def test_without_an_address_a_run_ignores_the_cluster_a_killed_run_left_named(tmp_path, monkeypatch):
    """Regression: a run without an address joined the cluster Ray's current-cluster file names, and a killed
    run leaves that file naming a dead one: the next run waited for it without end (it hung a CI run). The
    run is a child process, so that a hang fails the test at its timeout instead of stopping the suite."""
    import subprocess
    import sys
    from ray._private.utils import get_ray_address_file
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    named = Path(get_ray_address_file(None))
    before = named.read_bytes() if named.exists() else None
    named.parent.mkdir(parents=True, exist_ok=True)
    named.write_text("192.0.2.2:44155")       # a documentation-only address: nothing answers there
    try:
        proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(DEMO_PROBLEMS),
                               "--samples", str(DEMO_SAMPLES), "--out", str(tmp_path / "run"), "--k", "1",
                               "--executor", "ray", "--workers", "1", "--no-progress"],
                              capture_output=True, text=True, timeout=300)
    finally:
        if before is None:
            named.unlink(missing_ok=True)
        else:
            named.write_bytes(before)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(_rows(tmp_path / "run")) == 48


@pytest.mark.docker
def test_an_evalplus_run_on_two_nodes_gets_the_local_run_s_verdicts_base_and_plus(tmp_path, cluster, monkeypatch):
    """Regression: the nodes rebuilt each job without its EvalPlus part (inputs, expected outputs, limits).
    The Ray run measures its own ground truth on the cluster (an empty cache)."""
    from .conftest import ROOT
    c, _ = cluster
    where = ROOT / "problems" / "mbppplus"
    files = {"problems": where / "problems.jsonl", "samples": where / "samples.jsonl"}
    local = evaluate(_config(tmp_path, "local", workers=2, **files), progress=False)
    monkeypatch.setenv("PASSK_CACHE_DIR", str(tmp_path / "cache-of-the-ray-run"))
    remote = evaluate(_config(tmp_path, "ray", executor="ray", ray_address=c.address, **files), progress=False)
    mine, theirs = _rows(local.out_dir), _rows(remote.out_dir)
    verdicts = lambda rows: {(r["task_id"], r["sample_index"]): (r["status"], r["reason"], r["base_status"])  # noqa: E731
                             for r in rows}
    assert len(theirs) == len(mine) == 34 and verdicts(theirs) == verdicts(mine)
    assert len({r["node"] for r in theirs}) == 2
    truth = [json.loads((run / "manifest.json").read_text())["ground_truth"] for run in (local.out_dir, remote.out_dir)]
    assert truth[0]["tasks"] == truth[1]["tasks"] == 11 and truth[1]["source"] == "measured"


@pytest.mark.docker
def test_a_run_on_two_nodes_gets_the_local_run_s_labels_row_for_row(tmp_path, cluster):
    c, _ = cluster
    local = evaluate(_config(tmp_path, "local", workers=2), progress=False)
    remote = evaluate(_config(tmp_path, "ray", executor="ray", ray_address=c.address), progress=False)
    mine, theirs = _rows(local.out_dir), _rows(remote.out_dir)
    assert len(theirs) == len(mine) == 48
    assert _labels(theirs) == _labels(mine)
    assert len({r["node"] for r in theirs}) == 2, "both nodes ran candidates"
    assert all(r["node"] == "" for r in mine)
    assert {r["run_id"] for r in theirs} == {json.loads((remote.out_dir / "manifest.json").read_text())["run_id"]}
    manifest = json.loads((remote.out_dir / "manifest.json").read_text())
    nodes = manifest["sandbox"]["nodes"]
    assert len(nodes) == 2 and all(n["docker_server_version"] and n["image_id"] == manifest["sandbox"]["image_id"]
                                   for n in nodes)
    assert manifest["sandbox"]["executor"] == "ray"
    assert json.loads((remote.out_dir / "score.json").read_text())["pass_at_k"] == \
        json.loads((local.out_dir / "score.json").read_text())["pass_at_k"]
    assert not [c for c in _passk_containers() if c.labels.get("org.passk.run", "").startswith(manifest["run_id"])]


@pytest.mark.docker
def test_a_ray_run_resumes_a_local_one(tmp_path, cluster):
    """Where candidates ran is not part of what a label means: a run started locally is finished on Ray."""
    c, _ = cluster
    cfg = _config(tmp_path, "run", workers=2)
    evaluate(cfg, progress=False)
    path = tmp_path / "run" / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:20]) + "\n")
    outcome = evaluate(replace(cfg, sandbox=SandboxSettings(workers=1, executor="ray", ray_address=c.address)),
                       progress=False)
    assert (outcome.ran, outcome.reused) == (28, 20)
    rows = _rows(outcome.out_dir)
    assert len(rows) == 48 and len({(r["task_id"], r["sample_index"]) for r in rows}) == 48
    assert sum(1 for r in rows if r["node"]) == 28


@pytest.mark.docker
def test_calibrated_limits_are_measured_once_and_every_ray_row_carries_its_task_s(tmp_path, cluster):
    from harness.inputs.config import CalibrationSettings
    c, _ = cluster
    cfg = replace(_config(tmp_path, "run", executor="ray", ray_address=c.address),
                  calibration=CalibrationSettings(factor=3.0, minimum_s=1.0, repeats=1))
    outcome = evaluate(cfg, progress=False)
    table = json.loads((outcome.out_dir / "manifest.json").read_text())["calibration"]
    rows = _rows(outcome.out_dir)
    assert len(rows) == 48 and len({r["node"] for r in rows}) == 2
    for r in rows:
        assert r["limits"]["calibrated"]["timeout_s"] == table[r["task_id"]]["timeout_s"] == r["limits"]["timeout_s"]


@pytest.mark.docker
def test_a_node_whose_image_is_not_the_driver_s_is_refused(tmp_path, cluster, monkeypatch, capsys):
    """Labels never mix images: here the driver's own image id is made to differ from the one every node
    has, so every node is refused, each with one line naming both ids, and the run stops (exit 1)."""
    from harness.execution import ray_executor
    c, _ = cluster
    monkeypatch.setattr(ray_executor.RayExecutor, "_reference_image", lambda self: "sha256:not-this-one")
    with pytest.raises(HarnessError, match="no Ray node could run the sandbox") as e:
        evaluate(_config(tmp_path, "run", executor="ray", ray_address=c.address), progress=False)
    assert e.value.exit_code == 1
    refused = [line for line in capsys.readouterr().err.splitlines() if line.startswith("passk: refused node")]
    assert len(refused) == 2 and all("is not the driver's sha256:not-this-one" in line for line in refused)


def test_an_unreachable_cluster_stops_the_run_with_one_line(tmp_path):
    cfg = _config(tmp_path, "run", executor="ray", ray_address="127.0.0.1:9")
    start = time.monotonic()
    with pytest.raises(HarnessError) as e:
        evaluate(cfg, progress=False)
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in str(e.value) and "\n" not in str(e.value)
    assert e.value.exit_code == 1
    assert time.monotonic() - start < 120
    assert not (tmp_path / "run").exists()


def test_without_ray_the_executor_says_how_to_install_it(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "ray", None)   # what `import ray` does where it is not installed
    with pytest.raises(InputError, match=r"pip install 'passk\[ray\]'") as e:
        evaluate(_config(tmp_path, "run", executor="ray"), progress=False)
    assert e.value.exit_code == 2


@pytest.mark.docker
def test_ctrl_c_cancels_the_remote_work_removes_its_containers_and_the_run_resumes(tmp_path, cluster):
    import subprocess
    import sys
    from .conftest import ROOT, interrupt_after_rows
    c, _ = cluster
    samples = write_jsonl(tmp_path / "s.jsonl", [json.loads(line) for line in DEMO_SAMPLES.read_text().splitlines()] * 4)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(DEMO_PROBLEMS), "--samples", str(samples),
           "--out", str(out), "--timeout-s", "0.5", "--workers", "1", "--no-progress", "--executor", "ray",
           "--ray-address", c.address]
    code, err, kept = interrupt_after_rows(cmd, out / "results.jsonl")
    assert code == 130, err[-2000:]
    assert "Run the same command again to resume" in err and "Traceback" not in err
    assert 20 <= kept < 192
    run_id = json.loads((out / "manifest.json").read_text())["run_id"]
    assert not [x for x in _passk_containers() if x.labels.get("org.passk.run", "").startswith(run_id)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and f"reused {kept} from an earlier run" in done.stdout, done.stderr[-2000:]
    assert len(_rows(out)) == 192


@pytest.mark.docker
def test_repository_tasks_spread_over_the_nodes_each_building_the_environment_from_its_recipe(tmp_path, cluster):
    from harness.inputs.config import RepoSettings
    from tests.repo_fixtures import BREAKS, GOLD, write_task
    c, _ = cluster
    t = write_task(tmp_path, [GOLD, BREAKS, GOLD, "", GOLD, BREAKS])
    repos = RepoSettings(dir=str(t["repos"]), specs=str(t["specs"]))
    cfg = RunConfig(problems=str(t["rows"]), samples=str(t["preds"]), out=str(tmp_path / "ray"), k=(1,),
                    sandbox=SandboxSettings(workers=1, executor="ray", ray_address=c.address), repos=repos)
    rows = _rows(evaluate(cfg, progress=False).out_dir)
    got = {r["sample_index"]: (r["status"], r["reason"]) for r in rows}
    assert got == {0: ("passed", "resolved"), 1: ("failed", "tests_failed"), 2: ("passed", "resolved"),
                   3: ("failed", "empty_patch"), 4: ("passed", "resolved"), 5: ("failed", "tests_failed")}
    assert len({r["node"] for r in rows if r["reason"] != "empty_patch"}) == 2, "both nodes ran candidates"


@pytest.mark.docker
def test_a_node_killed_mid_run_loses_no_row_and_blames_no_candidate(tmp_path, cluster):
    """The second node dies (its raylet and workers killed) while it runs candidates: they run again on the
    head node, every candidate is labelled exactly once, none is `error`, and the labels are the local run's."""
    c, second = cluster
    samples = [json.loads(line) for line in DEMO_SAMPLES.read_text().splitlines()]
    samples = write_jsonl(tmp_path / "samples.jsonl", samples * 3)   # 144 candidates
    local = evaluate(_config(tmp_path, "local", samples=samples, workers=2), progress=False)
    cfg = _config(tmp_path, "ray", samples=samples, executor="ray", ray_address=c.address)
    results = tmp_path / "ray" / "results.jsonl"
    outcome, failure = [], []

    def run():
        try:
            outcome.append(evaluate(cfg, progress=False))
        except BaseException as e:   # noqa: BLE001 - reported below
            failure.append(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and t.is_alive():
        if results.exists() and len(results.read_text().splitlines()) >= 30:
            break
        time.sleep(0.05)
    c.remove_node(second, allow_graceful=False)
    t.join(600)
    assert not failure, failure
    rows = _rows(outcome[0].out_dir)
    keys = [(r["task_id"], r["sample_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == 144
    assert not [r for r in rows if r["status"] == "error"]
    assert _labels(rows) == _labels(_rows(local.out_dir))
    manifest = json.loads((outcome[0].out_dir / "manifest.json").read_text())
    assert len(manifest["sandbox"]["lost_nodes"]) == 1
    assert any(r["attempt"] > 1 for r in rows), "the lost node's candidates ran again, and say so"
