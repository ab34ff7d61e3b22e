"""passk run from YAML, resume after SIGKILL, reproduce: against the real Docker engine."""

import json
import signal
import subprocess
import sys
import time

import pytest

from harness.inputs.config import load_config
from harness.run.reproduce import reproduce
from harness.records.results import read_rows
from harness.run.runner import evaluate

from .conftest import DEMO_SAMPLES, ROOT, write_jsonl

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def config_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cfg") / "run"
    cfg = load_config(str(ROOT / "configs" / "demo.yaml"), overrides={"out": str(out)})
    return out, evaluate(cfg, progress=False)


def test_config_run_is_pinned_in_the_manifest(config_run):
    out, outcome = config_run
    m = json.loads((out / "manifest.json").read_text())
    assert m["config"]["generation"]["kind"] == "independent"
    assert m["config"]["limits"]["timeout_s"] == 2 and m["sandbox"]["docker_server_version"]
    assert m["host"]["cpu_count"] >= 1 and m["inputs"]["samples"]["sha256"]
    assert m["sandbox"]["source_sha256"] and m["started_at"] < m["finished_at"]


def test_reproduce_agrees_and_exits_zero(config_run, tmp_path):
    out, outcome = config_run
    result = reproduce(out, tmp_path / "again")
    assert result["identical"] == result["total"] == 48 and result["changed"] == []
    assert {k: v["reproduced"] for k, v in result["pass_at_k_exact"].items()} == outcome.score["pass_at_k_exact"]
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "reproduce", str(out), "--out", str(tmp_path / "cli"),
                           "--no-progress"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and "labels identical: 48 of 48" in proc.stdout


def test_reproduce_refuses_changed_inputs(tmp_path):
    samples = write_jsonl(tmp_path / "s.jsonl", [json.loads(l) for l in DEMO_SAMPLES.read_text().splitlines()[:4]])
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text(f"problems: {ROOT / 'problems/demo/problems.jsonl'}\nsamples: s.jsonl\nout: run\nk: [1]\n"
                        "limits: {timeout_s: 1}\nsandbox: {workers: 1}\n")
    evaluate(load_config(str(cfg_file)), progress=False)
    samples.write_text(samples.read_text() + json.dumps({"task_id": "Demo/1", "completion": "    return 0\n"}) + "\n")
    from harness.core.errors import InputError
    with pytest.raises(InputError, match="samples now hash differently"):
        reproduce(tmp_path / "run", tmp_path / "again")


def test_sigkill_midway_then_resume_gives_no_duplicate_or_missing_rows(tmp_path):
    rows = [json.loads(l) for l in DEMO_SAMPLES.read_text().splitlines()] * 4
    samples = write_jsonl(tmp_path / "s.jsonl", rows)  # 192 candidates, 16 of them time out
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(ROOT / "problems/demo/problems.jsonl"),
           "--samples", str(samples), "--out", str(out), "--timeout-s", "0.5", "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not results.exists() or results.read_text().count("\n") < 40):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = results.read_text().count("\n")
    assert 40 <= partial < 192
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    final = read_rows(results)
    keys = [(r.task_id, r.sample_index) for r in final]
    assert len(keys) == len(set(keys)) == 192
    by_text = {}
    for r in final:  # the same program text must get the same label wherever it appears
        by_text.setdefault(r.candidate_sha256, set()).add(r.status)
    assert all(len(v) == 1 for v in by_text.values())
    m = json.loads((out / "manifest.json").read_text())
    assert m["label_counts"]["timed_out"] == 16 and m["label_counts"]["error"] == 0


def test_calibrated_limits_are_measured_recorded_and_reused(tmp_path):
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text(f"problems: {ROOT / 'problems/demo/problems.jsonl'}\nsamples: {DEMO_SAMPLES}\nout: run\n"
                        "k: [1]\nlimits: {timeout_s: 3}\nsandbox: {workers: 2}\n"
                        "calibration: {factor: 5, minimum_s: 0.5, repeats: 1}\n")
    outcome = evaluate(load_config(str(cfg_file)), progress=False)
    m = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert set(m["calibration"]) == {f"Demo/{i}" for i in range(12)}
    entry = m["calibration"]["Demo/8"]
    assert entry["timeout_s"] == max(0.5, round(5 * entry["canonical_wall_s"], 3)) and entry["canonical_passed"]
    rows = {(r.task_id, r.sample_index): r for r in read_rows(tmp_path / "run" / "results.jsonl")}
    assert rows[("Demo/8", 0)].limits["timeout_s"] == entry["timeout_s"]
    assert rows[("Demo/8", 0)].limits["calibrated"]["factor"] == 5
    assert outcome.score["labels"]["timed_out"] == 4
    again = reproduce(tmp_path / "run", tmp_path / "again")
    assert again["changed"] == []
    m2 = json.loads((tmp_path / "again" / "manifest.json").read_text())
    assert m2["calibration"] == m["calibration"]  # a reproduction runs under the same limits
