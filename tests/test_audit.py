"""passk audit against the real Docker engine: limits that decided labels are found and relaxed."""

import json

import pytest

from harness.run.audit import audit
from harness.inputs.config import Limits, RunConfig, SandboxSettings
from harness.run.runner import evaluate

from .conftest import write_jsonl

pytestmark = pytest.mark.docker

PROBLEM = {"task_id": "A/0", "prompt": "def f(x):\n    \"\"\"Return x + 1.\"\"\"\n", "entry_point": "f",
           "canonical_solution": "    return x + 1\n", "test": "def check(candidate):\n    assert candidate(1) == 2\n"}
CANDIDATES = [
    "    return x + 1\n",
    "    import time\n    end = time.monotonic() + 1.6\n    while time.monotonic() < end:\n        pass\n    return x + 1\n",
    "    block = bytearray(200 * 1024 * 1024)\n    return x + 1\n",
    "    return x + 2\n",
    "    raise ValueError('no')\n",
]


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    d = tmp_path_factory.mktemp("audit")
    problems = write_jsonl(d / "p.jsonl", [PROBLEM])
    samples = write_jsonl(d / "s.jsonl", [{"task_id": "A/0", "completion": c} for c in CANDIDATES])
    cfg = RunConfig(problems=str(problems), samples=str(samples), out=str(d / "run"), k=(1,),
                    limits=Limits(timeout_s=1.0, memory_mb=128), sandbox=SandboxSettings(workers=2),
                    generation={"kind": "independent", "model": "m"})  # reruns must carry it too
    outcome = evaluate(cfg, progress=False)
    return d / "run", outcome, audit(d / "run", factors=(2.0, 4.0), repeat=1, sample=5)


def test_original_labels_were_decided_by_the_limits(audited):
    _, outcome, _ = audited
    assert outcome.score["reasons"] == {"failed:assertion": 1, "failed:exception:ValueError": 1,
                                        "failed:memory_limit": 1, "passed:tests_completed": 1,
                                        "timed_out:wall_time_limit": 1}


def test_both_limit_decisions_flip_at_each_factor_and_nothing_else(audited):
    run, _, result = audited
    for rel in result["relaxed"]:
        flipped = {(f["sample_index"], f["from"], f["to"]) for f in rel["flips"]}
        assert flipped == {(1, "timed_out", "passed"), (2, "failed", "passed")}, rel
        assert rel["pass_at_k_exact"] == {"1": "3/5"}
    assert result["original_pass_at_k"] == {"1": 0.2}
    saved = json.loads((run / "audit.json").read_text())
    assert {"relaxed", "margins", "canonical", "flaky"} <= set(saved)
    assert "## Audit" in (run / "report.md").read_text()


def test_canonical_and_flakiness_sections(audited):
    _, _, result = audited
    assert result["canonical"]["checked"] == 1 and result["canonical"]["cannot_pass"] == []
    assert result["flaky"]["checked"] == 5 and result["flaky"]["changed"] == []
    assert result["margins"]["passed"] == 1 and result["margins"]["max"] < 0.2
