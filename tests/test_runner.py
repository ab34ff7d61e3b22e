"""End to end through the real Docker engine: evaluate, resume, isolation modes."""

import json

import pytest

from harness.inputs.config import Limits, RunConfig, SandboxSettings
from harness.core.errors import InputError
from harness.records.results import read_rows
from harness.run.runner import evaluate

from .conftest import DEMO_PROBLEMS, DEMO_SAMPLES, write_jsonl

pytestmark = pytest.mark.docker


def config(out, samples=DEMO_SAMPLES, problems=DEMO_PROBLEMS, **sandbox):
    return RunConfig(problems=str(problems), samples=str(samples), out=str(out), k=(1, 2, 4),
                     limits=Limits(timeout_s=1.0, memory_mb=256), sandbox=SandboxSettings(**{"workers": 2, **sandbox}))


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    return out, evaluate(config(out), progress=False)


def test_demo_run_exercises_every_verdict(demo_run):
    out, outcome = demo_run
    labels = outcome.score["labels"]
    assert labels["passed"] > 0 and labels["failed"] > 0 and labels["timed_out"] > 0 and labels["error"] == 0
    rows = read_rows(out / "results.jsonl")
    assert len(rows) == 48 and len({(r.task_id, r.sample_index) for r in rows}) == 48
    row = rows[0]
    for key in ("timeout_s", "memory_mb", "cpus", "pids", "output_bytes", "network", "runtime", "isolation",
                "image", "image_id"):
        assert key in row.limits
    assert row.limits["network"] == "none" and row.limits["image_id"].startswith("sha256:")
    assert len(row.candidate_sha256) == 64 and row.attempt == 1


def test_score_file_and_manifest(demo_run):
    out, outcome = demo_run
    score = json.loads((out / "score.json").read_text())
    assert score == outcome.score and score["pass_at_k_exact"]["4"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["inputs"]["problems"]["sha256"]) == 64
    assert manifest["sandbox"]["image_id"] == read_rows(out / "results.jsonl")[0].limits["image_id"]
    assert manifest["label_counts"] == score["labels"]
    assert manifest["sandbox"]["image_python"].startswith("3.")
    assert manifest["source"]["commit"] is None or len(manifest["source"]["commit"]) == 40


def test_rerun_into_the_same_directory_reuses_every_row(demo_run):
    out, outcome = demo_run
    again = evaluate(config(out), progress=False)
    assert again.ran == 0 and again.reused == 48 and again.score == outcome.score
    assert len(read_rows(out / "results.jsonl")) == 48


def test_resume_refuses_different_settings(demo_run):
    out, _ = demo_run
    changed = RunConfig(**{**config(out).__dict__, "limits": Limits(timeout_s=2.0, memory_mb=256)})
    with pytest.raises(InputError, match=r"different settings \(limits\.timeout_s: 1\.0 then, 2\.0 now\)"):
        evaluate(changed, progress=False)


def test_settings_that_cannot_work_leave_no_run_directory(tmp_path):
    """Regression: a failed start left an empty run directory (and a manifest that refused the corrected
    command)."""
    out = tmp_path / "never"
    with pytest.raises(InputError, match="passk-no-such-image"):
        evaluate(config(out, image="passk-no-such-image:1"), progress=False)
    assert not out.exists()
    evaluate(config(out, samples=write_jsonl(tmp_path / "one.jsonl", [{"task_id": "Demo/0", "completion": "    return 1\n"}])),
             progress=False)
    assert len(read_rows(out / "results.jsonl")) == 1


def test_fresh_isolation_gives_the_same_labels(tmp_path, demo_run):
    out, outcome = demo_run
    evaluate(config(tmp_path / "fresh", isolation="fresh"), progress=False)
    pooled_rows = {(r.task_id, r.sample_index): r.status for r in read_rows(out / "results.jsonl")}
    fresh_rows = {(r.task_id, r.sample_index): r.status for r in read_rows(tmp_path / "fresh" / "results.jsonl")}
    assert fresh_rows == pooled_rows
    assert read_rows(tmp_path / "fresh" / "results.jsonl")[0].limits["isolation"] == "fresh"


def _gvisor_variants():
    try:
        from harness.execution.sandbox.docker import connect
        return sorted(r for r in (connect().info().get("Runtimes") or {}) if r.startswith("runsc-"))
    except Exception:  # noqa: BLE001
        return []


@pytest.mark.parametrize("runtime", _gvisor_variants() or [pytest.param("runsc-systrap", marks=pytest.mark.skip(
    reason="no gVisor variant registered (scripts/install_runsc.sh registers runsc-systrap and runsc-ptrace)"))])
def test_a_registered_gvisor_variant_gives_the_same_labels_and_rows_say_which(tmp_path, demo_run, runtime):
    out, _ = demo_run
    from dataclasses import replace
    # room for gVisor's slower starts on a loaded day: the demo's labels do not sit near a limit
    evaluate(replace(config(tmp_path / runtime, runtime=runtime), limits=Limits(timeout_s=3.0, memory_mb=256)),
             progress=False)
    runc_rows = {(r.task_id, r.sample_index): r.status for r in read_rows(out / "results.jsonl")}
    rows = read_rows(tmp_path / runtime / "results.jsonl")
    assert {(r.task_id, r.sample_index): r.status for r in rows} == runc_rows
    assert rows[0].limits["runtime"] == runtime
    assert rows[0].limits["runtime_detail"].startswith("runsc ") and "platform " in rows[0].limits["runtime_detail"]


def test_tasks_without_samples_are_counted(tmp_path):
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "Demo/0", "completion": "    return max(lo, min(hi, x))\n"}])
    outcome = evaluate(config(tmp_path / "out", samples=samples), progress=False)
    assert outcome.score["num_tasks"] == 1
    assert len(outcome.score["tasks_without_samples"]) == 11
    assert outcome.score["pass_at_k_exact"] == {"1": "1"}


def test_the_configs_generation_is_the_default_for_samples_that_do_not_say(tmp_path):
    """A config that says the samples are repair attempts must keep them from being scored as one
    independent pass@k; a sample's own `generation` still wins over the config's."""
    from dataclasses import replace
    rows = [{"task_id": "Demo/0", "completion": "    return max(lo, min(hi, x))\n"},
            {"task_id": "Demo/0", "completion": "    return lo\n",
             "generation": {"kind": "independent", "temperature": 0.2}}]
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    cfg = replace(config(tmp_path / "run", samples=samples), k=(1,), generation={"kind": "repair", "model": "m"})
    outcome = evaluate(cfg, progress=False)
    by_index = {r.sample_index: r for r in read_rows(tmp_path / "run" / "results.jsonl")}
    assert by_index[0].sample["generation"] == {"kind": "repair", "model": "m"}
    assert by_index[1].sample["generation"] == {"kind": "independent", "temperature": 0.2}
    assert outcome.score["pass_at_k"] == {} and "mix generation settings" in outcome.score["mixed_generation"]
    assert len(outcome.score["generation_groups"]) == 2
