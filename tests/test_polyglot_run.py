"""Exercism exercises run for real (the project channel, every language's project image): passk's own exercise
`digit-sum` in each of the six languages (tests/data/polyglot/), its reference passing, its stub failing, and
every hostile candidate of tests/project_attacks.py getting the label written for it; a second try reported
as repair; a benchmark run's directory as aider writes it regraded beside aider's record."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests import project_attacks
from tests.conftest import ROOT, write_jsonl

DATA = ROOT / "tests" / "data" / "polyglot"
LANGUAGES = ("python", "go", "rust", "javascript", "cpp", "java")


def evaluate(tmp_path, samples, *extra, problems=DATA, name="out"):
    out = tmp_path / name
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems),
                           "--samples", str(samples), "--out", str(out), "--workers", "2", "--project-timeout-s", "20",
                           *extra], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return out, rows, json.loads((out / "score.json").read_text()), proc.stderr


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """Every language's references (--check-ground-truth) and its hostile candidates, in one run."""
    tmp = tmp_path_factory.mktemp("polyglot")
    samples = write_jsonl(tmp / "attacks.jsonl", project_attacks.rows())
    return evaluate(tmp, samples, "--check-ground-truth")


def test_every_reference_passes_as_its_own_tree(attacked):
    out, _, _, _ = attacked
    truth = json.loads((out / "manifest.json").read_text())["ground_truth_check"]
    got = {t: m["passed"] for t, m in truth["per_task"].items()}
    assert {f"{lang}/digit-sum" for lang in LANGUAGES} <= set(got), truth
    assert all(got[f"{lang}/digit-sum"] for lang in LANGUAGES), truth


@pytest.mark.parametrize("language", LANGUAGES)
def test_hostile_candidates_get_the_labels_written_for_them(attacked, language):
    _, rows, _, _ = attacked
    mine = {r["sample"]["attack"]: r for r in rows if r["task_id"] == f"{language}/digit-sum"}
    assert set(mine) == set(project_attacks.ATTACKS[language])
    got = {a: f"{r['status']} {r['reason']}" for a, r in mine.items()}
    want = {a: project_attacks.expected(language, a) for a in mine}
    assert got == want
    for attack, names in project_attacks.SET_ASIDE.items():
        assert mine[attack]["sample"]["set_aside"] == sorted(names[language]), attack
    honest = mine["honest"]["channel_detail"]
    assert honest["tests_passed"] >= max(1, honest["tests_declared"]) and honest["tests_failed"] == 0
    assert honest["account"] and mine["honest"]["limits"]["timeout_s"] == 20
    # aider's own rule would have passed what exited 0 without running the tests: the row says so
    assert mine["early_exit"]["channel_detail"]["aider_rule"] == "passed"
    # a failed row carries the output as aider shows it before a second try, the run's directory by name
    feedback = mine["stub"]["feedback"]
    assert feedback and "/tmp/passk/" not in feedback


def test_the_static_count_follows_the_build_s_own_conditions():
    from harness.inputs import polyglot, projects
    ex = polyglot.read_exercise(DATA / "cpp" / "exercises" / "practice" / "digit-sum")
    tree = polyglot.tree_for(ex, None)
    assert projects.declared(ex, tree) == 3   # the benchmark's block is not built; the run-all block is
    js = polyglot.read_exercise(DATA / "javascript" / "exercises" / "practice" / "digit-sum")
    assert projects.declared(js, polyglot.tree_for(js, None)) == 3   # xtest made test, as aider makes it


def test_a_second_try_is_repair_reported_apart_from_pass_at_k(tmp_path):
    refs = {"python": "def digit_sum(n):\n    return sum(map(int, str(n)))\n"}
    rows = [{"task_id": "python/digit-sum", "files": {"digit_sum.py": "def digit_sum(n):\n    return n\n"}},
            {"task_id": "python/digit-sum", "files": {"digit_sum.py": refs["python"]}, "attempt": 2},
            {"task_id": "go/digit-sum", "files": {}},
            {"task_id": "go/digit-sum", "files": {}, "generation": {"kind": "repair"}}]
    samples = write_jsonl(tmp_path / "tries.jsonl", rows)
    _, got, score, _ = evaluate(tmp_path, samples)
    assert {r["sample_index"]: r["status"] for r in got if r["task_id"] == "python/digit-sum"} == {0: "failed", 1: "passed"}
    assert score["num_candidates"] == 2   # first tries only
    assert score["pass_at_k"]["1"] == 0.0
    repair = score["repair"]
    assert (repair["try1_rate"], repair["within_two_rate"], repair["second_tries"], repair["repaired"]) == (0.0, 0.5, 2, 1)
    assert repair["repair_rate"] == 0.5


def test_a_benchmark_run_s_directory_is_regraded_beside_aider_s_record(tmp_path):
    run = tmp_path / "run"
    for lang, files, outcomes in (("python", {"digit_sum.py": "def digit_sum(n):\n    return sum(map(int, str(n)))\n"},
                                   [False, True]),
                                  ("go", {}, [True])):   # aider recorded a pass passk does not give the stub
        src = DATA / lang / "exercises" / "practice" / "digit-sum"
        dst = run / lang / "exercises" / "practice" / "digit-sum"
        shutil.copytree(src, dst)
        for name, text in files.items():
            (dst / name).write_text(text)
        (dst / ".aider.results.json").write_text(json.dumps({"testcase": "digit-sum", "model": "m", "edit_format": "diff",
                                                             "tests_outcomes": outcomes, "test_timeouts": 0}))
    problems = tmp_path / "problems"
    for lang in ("python", "go"):
        shutil.copytree(DATA / lang, problems / lang)
    _, rows, score, _ = evaluate(tmp_path, run, problems=problems)
    by = {r["task_id"]: r for r in rows}
    assert by["python/digit-sum"]["status"] == "passed" and by["python/digit-sum"]["sample"]["attempt"] == 2
    assert by["go/digit-sum"]["status"] == "failed"
    aider = score["repair"]["aider"]
    assert (aider["exercises"], aider["pass_rate_1"], aider["pass_rate_2"], aider["agree"], aider["differ"]) == (2, 0.5, 1.0, 1, 1)
    assert aider["differences"] == ["go/digit-sum: aider passed, passk failed tests_failed"]
    assert score["repair"]["first_tries_as_recorded"]["count"] == 1
    assert score["repair"]["within_two_rate"] == 0.5 and score["repair"]["try1_rate"] == 0.0


def test_passk_serve_judges_an_exercise_s_files_and_returns_the_feedback_for_a_second_try():
    from tests.test_serve import Server
    server = Server("--workers", "2", "--problems", str(DATA / "python"), "--deadline-s", "120")
    try:
        answer = server.post("/v1/evaluate", {"problem": {"id": "python/digit-sum"}, "candidates": [
            {"files": {"digit_sum.py": "def digit_sum(n):\n    return n\n",
                       "digit_sum_test.py": "def test_nothing():\n    pass\n"}, "key": "first"},
            {"files": {"digit_sum.py": "def digit_sum(n):\n    return sum(map(int, str(n)))\n"}, "attempt": 2,
             "key": "second"}]})
        rows = {r["key"]: r for r in answer["rows"]}
        assert (rows["first"]["status"], rows["first"]["reward"]) == ("failed", 0.0)
        assert rows["first"]["sample"]["set_aside"] == ["digit_sum_test.py"]
        assert "test_many_digits" in rows["first"]["feedback"]
        assert (rows["second"]["status"], rows["second"]["sample"]["attempt"]) == ("passed", 2)
    finally:
        server.stop()
