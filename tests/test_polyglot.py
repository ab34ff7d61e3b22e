"""Exercism exercises as aider's polyglot benchmark reads them (harness/inputs/polyglot.py), a benchmark run's
directory, and repair reported apart (harness/scoring/repair.py): pure, no Docker. The exercises here are
written for these tests, in the layout Exercism's tracks use."""

import json
import os

import pytest

from harness.core.errors import InputError
from harness.inputs import polyglot
from harness.scoring.repair import pair_tries, repair_rates


def _exercise(root, track, name, files, config_files):
    d = root / track / "exercises" / "practice" / name
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    (d / ".meta").mkdir(parents=True, exist_ok=True)
    (d / ".meta" / "config.json").write_text(json.dumps({"authors": [], "files": config_files}))
    return d


def _tracks(root):
    _exercise(root, "python", "two-fer", {
        "two_fer.py": "def two_fer(name):\n    pass\n",
        "two_fer_test.py": "from two_fer import two_fer\n\ndef test_one():\n    assert two_fer('A') == 'One for A'\n",
        ".meta/example.py": "def two_fer(name='you'):\n    return f'One for {name}'\n",
        ".docs/instructions.md": "Say it.\n"},
        {"solution": ["two_fer.py"], "test": ["two_fer_test.py"], "example": [".meta/example.py"]})
    _exercise(root, "java", "bowling", {
        "build.gradle": "apply plugin: 'java'\n",
        "src/main/java/BowlingGame.java": "class BowlingGame {}\n",
        "src/test/java/BowlingGameTest.java": ("import org.junit.jupiter.api.Disabled;\nclass BowlingGameTest {\n"
                                              "    @Test\n    void a() {}\n\n    @Disabled(\"Remove to run test\")\n"
                                              "    @Test\n    void b() {}\n}\n"),
        ".meta/src/reference/java/BowlingGame.java": "class BowlingGame { Frame f; }\n",
        ".meta/src/reference/java/Frame.java": "class Frame {}\n"},
        {"solution": ["src/main/java/BowlingGame.java"], "test": ["src/test/java/BowlingGameTest.java"],
         "example": [".meta/src/reference/java/Frame.java", ".meta/src/reference/java/BowlingGame.java"],
         "invalidator": ["build.gradle"]})
    _exercise(root, "javascript", "leap", {
        "leap.js": "export const isLeap = () => {};\n",
        "leap.spec.js": "test('a', () => {});\nxtest('b', () => {});\n  xtest('c', () => {});\nfoo.xtest(1);\n",
        "package.json": '{"scripts": {"test": "jest ./*"}}\n',
        ".meta/proof.ci.js": "export const isLeap = (y) => y % 4 === 0;\n"},
        {"solution": ["leap.js"], "test": ["leap.spec.js"], "example": [".meta/proof.ci.js"]})
    _exercise(root, "rust", "clock", {
        "Cargo.toml": "[package]\nname = \"clock\"\n", "src/lib.rs": "pub fn f() {}\n",
        "tests/clock.rs": "#[test]\n#[ignore]\nfn t() {}\n", ".meta/example.rs": "pub fn f() { }\n"},
        {"solution": ["src/lib.rs", "Cargo.toml"], "test": ["tests/clock.rs"], "example": [".meta/example.rs"]})
    _exercise(root, "cpp", "meetup", {
        "CMakeLists.txt": "project(meetup)\n", "meetup.h": "#pragma once\n", "meetup.cpp": "#include \"meetup.h\"\n",
        "meetup_test.cpp": "#include \"test/catch.hpp\"\n", "test/catch.hpp": "// catch\n",
        ".meta/example.h": "#pragma once\nint x;\n"},
        {"solution": ["meetup.cpp", "meetup.h"], "test": ["meetup_test.cpp"], "example": [".meta/example.h"]})
    return root


def test_every_form_of_problems_reads_the_same_exercises_with_what_a_candidate_may_write(tmp_path):
    root = _tracks(tmp_path / "bench")
    every = polyglot.exercises(root)
    assert [e.task_id for e in every] == ["cpp/meetup", "java/bowling", "javascript/leap", "python/two-fer", "rust/clock"]
    assert [e.task_id for e in polyglot.exercises(root / "java")] == ["java/bowling"]
    assert [e.task_id for e in polyglot.exercises(root / "java" / "exercises" / "practice")] == ["java/bowling"]
    (one,) = polyglot.exercises(root / "rust" / "exercises" / "practice" / "clock")
    assert one.task_id == "rust/clock" and one.language == "rust"
    assert one.editable == ("src/lib.rs",) and one.solution_extra == ("Cargo.toml",)   # aider never lets Cargo.toml change
    by = {e.task_id: e for e in every}
    # the reference solution stands for the files it names, by name, then extension, then beside them
    assert set(by["java/bowling"].example) == {"src/main/java/BowlingGame.java", "src/main/java/Frame.java"}
    assert list(by["javascript/leap"].example) == ["leap.js"] and list(by["rust/clock"].example) == ["src/lib.rs"]
    assert list(by["cpp/meetup"].example) == ["meetup.h"]
    # nothing of .meta/ or .docs/ is in the tree a candidate runs in
    assert not [p for e in every for p in e.tree if p.startswith((".meta/", ".docs/"))]
    assert "test/catch.hpp" in by["cpp/meetup"].tree


def test_a_lone_exercise_outside_a_track_is_named_by_its_tests_language(tmp_path):
    d = _exercise(tmp_path, "x", "two-fer", {"a.py": "", "a_test.py": ""}, {"solution": ["a.py"], "test": ["a_test.py"]})
    plain = tmp_path / "elsewhere"
    d.rename(plain)
    (one,) = polyglot.exercises(plain)
    assert one.task_id == "python/elsewhere"


@pytest.mark.parametrize("config, message", [
    ({"solution": ["../../escape.py"], "test": ["t_test.py"]}, "leads outside the exercise"),
    ({"solution": ["/etc/passwd"], "test": ["t_test.py"]}, "leads outside the exercise"),
    ({"solution": ["s.py"], "test": ["t.kt"]}, "no test command for its extension"),
    ({"solution": ["s.py"], "test": ["missing_test.py"]}, "is not a file of the exercise"),
    ({"solution": ["t_test.py"], "test": ["t_test.py"]}, "leaves no file a candidate may write"),
    ({"solution": "s.py", "test": ["t_test.py"]}, "must be a list of paths"),
    ({"solution": ["s.py"], "test": ["t_test.py"], "example": [".meta/x.rb"]}, "stands for no solution file"),
])
def test_a_config_that_is_wrong_is_one_line_naming_its_file(tmp_path, config, message):
    d = _exercise(tmp_path, "python", "bad", {"s.py": "", "t_test.py": "", ".meta/x.rb": ""}, config)
    with pytest.raises(InputError, match=message) as e:
        polyglot.read_exercise(d)
    assert str(d / ".meta" / "config.json") in str(e.value) and "\n" not in str(e.value)


def test_a_link_out_of_the_exercise_is_refused(tmp_path):
    (tmp_path / "secret.txt").write_text("host secret\n")
    d = _exercise(tmp_path, "python", "linked", {"s.py": "", "t_test.py": ""}, {"solution": ["s.py"], "test": ["t_test.py"]})
    os.symlink(tmp_path / "secret.txt", d / "data.txt")
    with pytest.raises(InputError, match="leads outside"):
        polyglot.read_exercise(d)


def test_a_candidates_files_outside_its_solution_are_set_aside_and_the_tests_restored_as_aider_rewrites_them(tmp_path):
    by = {e.task_id: e for e in polyglot.exercises(_tracks(tmp_path / "bench"))}
    java = by["java/bowling"]
    cand = polyglot.candidate("c.jsonl:1", java, {"src/main/java/BowlingGame.java": "class BowlingGame { int s; }\n",
                                                  "src/test/java/BowlingGameTest.java": "class BowlingGameTest {}\n",
                                                  "build.gradle": "evil", "../../x": "y"})
    assert cand.files == {"src/main/java/BowlingGame.java": b"class BowlingGame { int s; }\n"}
    assert cand.set_aside == ("../../x", "build.gradle", "src/test/java/BowlingGameTest.java")
    tree = polyglot.tree_for(java, cand)
    assert tree["build.gradle"] == b"apply plugin: 'java'\n"
    test = tree["src/test/java/BowlingGameTest.java"].decode()
    assert "@Disabled(" not in test and test.count("@Test") == 2 and "import org.junit.jupiter.api.Disabled;" in test
    js = polyglot.tree_for(by["javascript/leap"], None)["leap.spec.js"].decode()
    assert js == "test('a', () => {});\ntest('b', () => {});\n  test('c', () => {});\nfoo.xtest(1);\n".replace("foo.xtest", "foo.test")
    # the untouched stub, and the reference over the stub (the C++ reference gives only the header)
    cpp = by["cpp/meetup"]
    ref = polyglot.tree_for(cpp, polyglot.Candidate(cpp.task_id, cpp.example, ()))
    assert ref["meetup.h"] == b"#pragma once\nint x;\n" and ref["meetup.cpp"] == b'#include "meetup.h"\n'
    with pytest.raises(InputError, match="attempt"):
        polyglot.candidate("c.jsonl:2", java, {}, attempt=3)


def test_candidates_from_json_lines_with_second_tries(tmp_path):
    by = {e.task_id: e for e in polyglot.exercises(_tracks(tmp_path / "bench"))}
    rows = tmp_path / "c.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in [
        {"task_id": "python/two-fer", "files": {"two_fer.py": "x = 1\n"}},
        {"task_id": "python/two-fer", "files": {"two_fer.py": "x = 2\n"}, "attempt": 2},
        {"task_id": "python/two-fer", "files": {"two_fer.py": "x = 3\n"}, "generation": {"kind": "repair"}},
    ]) + "\n")
    got = polyglot.read_candidates(rows, by)
    assert [c.attempt for c in got] == [1, 2, 2]
    rows.write_text(json.dumps({"task_id": "python/nope", "files": {}}) + "\n")
    with pytest.raises(InputError, match=r"c.jsonl:1: task_id 'python/nope'"):
        polyglot.read_candidates(rows, by)
    rows.write_text("\n" + json.dumps({"task_id": "python/two-fer"}) + "\n")
    with pytest.raises(InputError, match=r"c.jsonl:2: missing field 'files'"):
        polyglot.read_candidates(rows, by)


def test_a_benchmark_runs_directory_is_regraded_as_it_stands(tmp_path):
    by = {e.task_id: e for e in polyglot.exercises(_tracks(tmp_path / "bench"))}
    run = tmp_path / "tmp.benchmarks" / "2026-01-01-00-00-00--model"
    for task, outcomes, text in [("python/two-fer", [False, True], "def two_fer(name='you'):\n    return 1\n"),
                                 ("javascript/leap", [True], "export const isLeap = () => true;\n")]:
        track, name = task.split("/")
        d = run / track / "exercises" / "practice" / name
        d.mkdir(parents=True)
        sol = by[task].editable[0]
        (d / sol).write_text(text)
        (d / "leap.spec.js").write_text("tampered")   # restored from the exercise: never the run's
        (d / ".aider.results.json").write_text(json.dumps({"tests_outcomes": outcomes, "test_timeouts": 0,
                                                           "model": "m", "edit_format": "diff"}))
    unfinished = run / "rust" / "exercises" / "practice" / "clock"
    unfinished.mkdir(parents=True)
    got = polyglot.aider_run(run, by)
    assert [(c.task_id, c.attempt, r.outcomes) for c, r in got] == [("javascript/leap", 1, (True,)),
                                                                   ("python/two-fer", 2, (False, True))]
    assert got[1][0].files == {"two_fer.py": b"def two_fer(name='you'):\n    return 1\n"}
    assert polyglot.tree_for(by["javascript/leap"], got[0][0])["leap.spec.js"].startswith(b"test('a'")


def test_aiders_output_cleaning():
    out = "FAILED two_fer_test.py::test_one in 0.12s\n/tmp/run/python/exercises/practice/two-fer/x.py:3\n"
    assert polyglot.cleaned_output(out, "/tmp/run/python/exercises/practice/two-fer") == \
        "FAILED two_fer_test.py::test_one \ntwo-fer/x.py:3\n"
    assert polyglot.cleaned_output("x" * 100, "", limit=10) == "x" * 10


def test_repair_is_reported_apart_per_task_then_averaged():
    pairs = pair_tries([("a", 1, False), ("a", 2, True), ("a", 1, True), ("b", 1, False), ("b", 2, False),
                        ("c", 1, False)])
    assert pairs == {"a": [(False, True), (True, None)], "b": [(False, False)], "c": [(False, None)]}
    r = repair_rates(pairs)
    assert r.tasks == 3 and r.samples == 4
    assert r.try1_rate == pytest.approx((1 / 2 + 0 + 0) / 3)
    assert r.within_two_rate == pytest.approx((2 / 2 + 0 + 0) / 3)
    assert (r.failed_first, r.with_second, r.repaired, r.repair_rate) == (3, 2, 1, 0.5)
    assert repair_rates({"x": [(True, None)]}).repair_rate is None
    with pytest.raises(ValueError, match="with no first try"):
        pair_tries([("z", 2, True)])


# -- the project channel's verdict, pure ---------------------------------------------------------------------

def _digit_sum(language):
    from tests.conftest import ROOT
    return polyglot.read_exercise(ROOT / "tests" / "data" / "polyglot" / language / "exercises" / "practice" / "digit-sum")


def test_a_new_source_file_beside_the_solution_is_kept_and_a_hook_is_not():
    ex = _digit_sum("java")
    cand = polyglot.candidate("x", ex, {"src/main/java/DigitSum.java": "a", "src/main/java/Helper.java": "b",
                                        "src/main/java/HelperTest.java": "c", "src/test/java/New.java": "d",
                                        "build.gradle": "e", "src/main/java/../../../x.java": "f"})
    assert sorted(cand.files) == ["src/main/java/DigitSum.java", "src/main/java/Helper.java"]
    assert len(cand.set_aside) == 4
    py = _digit_sum("python")
    assert [p for p in ("helper.py", "conftest.py", "unittest.py", "pytest.py", "test_more.py", "sub/x.py")
            if polyglot.writable(py, p)] == ["helper.py"]


def _result(status, output="", reports=None, code=0):
    import base64
    return {"status": status, "reason": "exit_0" if status == "passed" else "tests_failed", "detail": "", "exit_code": code,
            "project_output_b64": base64.b64encode(output.encode()).decode(),
            "project_reports_b64": {k: base64.b64encode(v.encode()).decode() for k, v in (reports or {}).items()}}


_JUNIT = ('<testsuites><testsuite name="x">' + '<testcase name="a"/>' * 2 + '%s</testsuite></testsuites>')


@pytest.mark.parametrize("extra, want", [
    ('<testcase name="c"/>', ("passed", "tests_passed")),                      # 3 of 3 declared
    ('', ("failed", "tests_not_run")),                                          # 2 of 3: one was not run
    ('<testcase name="c"><failure/></testcase>', ("failed", "tests_failed")),   # exit 0 yet a failure reported
])
def test_exit_0_passes_only_with_the_runner_s_account_of_every_declared_test(extra, want):
    from harness.inputs import projects
    ex = _digit_sum("python")
    got = projects.judge(ex, polyglot.tree_for(ex, None), _result("passed", reports={"junit.xml": _JUNIT % extra}))
    assert (got["status"], got["reason"]) == want
    assert got["facts"]["aider_rule"] == "passed" and got["facts"]["tests_declared"] == 3


def test_no_account_at_all_is_tests_not_run_and_a_failed_command_stays_failed():
    from harness.inputs import projects
    ex = _digit_sum("rust")
    tree = polyglot.tree_for(ex, None)
    assert projects.judge(ex, tree, _result("passed", "running 3 tests\n"))["reason"] == "tests_not_run"
    ok = "test result: ok. 0 passed; 0 failed; 0 ignored\ntest result: ok. 3 passed; 0 failed; 0 ignored\n"
    assert projects.judge(ex, tree, _result("passed", ok))["status"] == "passed"
    failed = projects.judge(ex, tree, _result("failed", ok, code=101))
    assert (failed["status"], failed["facts"]["aider_rule"]) == ("failed", "failed")


def test_go_counts_top_level_tests_by_name_from_its_events():
    from harness.inputs import projects
    ex = _digit_sum("go")
    events = "\n".join(json.dumps({"Action": a, "Package": "digitsum", "Test": t}) for a, t in
                       (("run", "TestZero"), ("pass", "TestZero"), ("pass", "TestOneDigit"), ("pass", "TestOneDigit/sub")))
    got = projects.judge(ex, polyglot.tree_for(ex, None), _result("passed", reports={"go.json": events}))
    assert (got["status"], got["reason"], got["facts"]["tests_passed"]) == ("failed", "tests_not_run", 2)


def test_c_plus_plus_counts_only_what_the_build_compiles():
    from harness.inputs.projects import _built_lines
    text = ("TEST_CASE(a)\n#if defined(EXERCISM_RUN_ALL_TESTS)\nTEST_CASE(b)\n#else\nTEST_CASE(c)\n#endif\n"
            "#ifdef EXERCISM_INCLUDE_BENCHMARK\nTEST_CASE(d)\n#endif\n#if !defined(X)\nTEST_CASE(e)\n#endif\n")
    assert [line for line in _built_lines(text, frozenset({"EXERCISM_RUN_ALL_TESTS"})).splitlines()] == \
        ["TEST_CASE(a)", "TEST_CASE(b)", "TEST_CASE(e)"]


def test_scoring_counts_first_tries_in_pass_at_k_and_reports_repair_and_aider_s_record():
    from harness.records.results import ResultRow
    from harness.scoring.score import score_rows

    def row(task, i, status, **sample):
        return ResultRow(task_id=task, sample_index=i, status=status, sample=sample)
    rows = [row("a", 0, "failed", attempt=1), row("a", 1, "passed", attempt=2),
            row("b", 0, "passed", attempt=1),
            # aider's run: only the second try's files; its first try failed as recorded
            row("c", 0, "failed", attempt=2, aider={"outcomes": [False, True]})]
    score = score_rows(rows, ks=(1,))
    assert score["num_candidates"] == 3 and score["pass_at_k"]["1"] == pytest.approx(1 / 3)
    rep = score["repair"]
    assert (rep["try1_rate"], rep["within_two_rate"], rep["second_tries"], rep["repaired"]) == (pytest.approx(1 / 3),
                                                                                             pytest.approx(2 / 3), 2, 1)
    assert rep["first_tries_as_recorded"]["tasks"] == ["c"]
    assert rep["aider"]["differences"] == ["c: aider passed, passk failed"]
    with pytest.raises(InputError):   # a second try with no first to repair, and no record of one
        score_rows([row("d", 0, "passed", attempt=2)], ks=(1,))


def test_a_run_directory_keeps_the_helper_classes_the_model_added(tmp_path):
    # regrading aider-shaped runs, Java's bowling, connect, forth, ocr-numbers and poker failed: their helper
    # classes were left behind
    import shutil
    from tests.conftest import ROOT
    src = ROOT / "tests" / "data" / "polyglot" / "java" / "exercises" / "practice" / "digit-sum"
    d = tmp_path / "run" / "java" / "exercises" / "practice" / "digit-sum"
    shutil.copytree(src, d)
    (d / "src/main/java/Digits.java").write_text("class Digits {}\n")
    (d / "src/main/java/DigitsTest.java").write_text("class DigitsTest {}\n")
    (d / ".aider.results.json").write_text(json.dumps({"tests_outcomes": [True]}))
    ex = polyglot.read_exercise(src)
    [(cand, rec)] = polyglot.aider_run(tmp_path / "run", {ex.task_id: ex})
    assert sorted(cand.files) == ["src/main/java/DigitSum.java", "src/main/java/Digits.java"]
    assert rec.outcomes == (True,) and cand.attempt == 1
