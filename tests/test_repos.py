"""Repository tasks' pure parts: what a patch touches, the runners' log parsers and SWE-bench's grading
rule (no Docker)."""

import json

import pytest

from harness.core.errors import InputError
from harness.inputs.repos import parsers
from harness.inputs.repos.grading import believable, grade, resolve
from harness.inputs.repos.patches import directives, modified_files, touches_tests
from harness.inputs.repos.rows import EMPTY_PATCH, MAX_PATCH_BYTES, PATCH_TOO_LARGE, is_row, predictions, task_of, tasks
from tests.conftest import ROOT

PYTEST_LOG = """\
============================= test session starts ==============================
collected 6 items

tests/test_calc.py ..F.sx                                                [100%]

=========================== short test summary info ============================
PASSED tests/test_calc.py::test_add
PASSED tests/test_calc.py::test_sub[1-2]
PASSED tests/test_calc.py::test_path[/tmp/pytest-of-root/pytest-3/file0]
FAILED tests/test_calc.py::test_div - ZeroDivisionError: division by zero
SKIPPED [1] tests/test_calc.py:30: needs a network
XFAIL tests/test_calc.py::test_future - not yet
ERROR tests/test_calc.py::test_fixture - fixture 'db' not found
PASSED
==================== 1 failed, 3 passed, 1 skipped, 1 xfailed ==================
"""


def test_pytest_summary_lines_become_statuses():
    got = parsers.parse("pytest", PYTEST_LOG)
    assert got == {"tests/test_calc.py::test_add": "PASSED", "tests/test_calc.py::test_sub[1-2]": "PASSED",
                   "tests/test_calc.py::test_path[/tmp/pytest-of-root/pytest-3/file0]": "PASSED",
                   "tests/test_calc.py::test_div": "FAILED", "tests/test_calc.py::test_future": "XFAIL",
                   "tests/test_calc.py::test_fixture": "ERROR"}   # the SKIPPED [1] count is no test


def test_pytest_options_cut_an_absolute_path_parameter_to_its_last_part():
    got = parsers.parse("pytest_options", PYTEST_LOG)
    assert got["tests/test_calc.py::test_path[/file0]"] == "PASSED"
    assert "tests/test_calc.py::test_path[/tmp/pytest-of-root/pytest-3/file0]" not in got


def test_pytest_v2_keeps_spaces_and_drops_colour_and_reads_verbose_endings():
    log = ("\x1b[32mPASSED\x1b[0m tests/test_a.py::test_x[a b]\n"
           "FAILED tests/test_a.py::test_y - assert 1 == 2\n"
           "tests/test_a.py::test_z PASSED\n")
    assert parsers.parse("pytest_v2", log) == {"tests/test_a.py::test_x[a b]": "PASSED",
                                                "tests/test_a.py::test_y": "FAILED",
                                                "tests/test_a.py::test_z": "PASSED"}


def test_sympy_bin_test_lines_and_failure_banners():
    log = """\
sympy/core/tests/test_basic.py[3]
test_equality ok
test_subs F
test_atoms E
________________________________ sympy/core/tests/test_basic.py:test_subs _________________________________
Traceback (most recent call last):
"""
    got = parsers.parse("sympy", log)
    assert got == {"test_equality": "PASSED", "test_subs": "FAILED", "test_atoms": "ERROR",
                   "sympy/core/tests/test_basic.py:test_subs": "FAILED"}


def test_every_repository_names_a_known_parser():
    assert set(parsers.BY_REPOSITORY.values()) <= set(parsers.PARSERS)


def test_grading_passes_on_passed_or_xfail_and_maintains_on_skipped():
    status = {"a": "PASSED", "b": "XFAIL", "c": "SKIPPED", "d": "FAILED"}
    assert grade(status, ["a", "b"], ["c"]).resolved
    report = grade(status, ["a", "c"], ["c", "d", "e"])          # a skipped FAIL_TO_PASS test is no fix
    assert not report.resolved
    assert report.fail_to_pass == (["a"], ["c"]) and report.pass_to_pass == (["c"], ["d", "e"])
    assert report.counts() == "FAIL_TO_PASS 1 of 2, PASS_TO_PASS 1 of 3"
    assert report.statuses["e"] is None                          # absent: not passed
    assert grade({}, [], []).resolved                            # nothing asked, nothing failed


def test_a_name_cut_inside_its_parameters_matches_when_the_matches_agree():
    status = {"t.py::test_f[log(photon) x]": "PASSED", "t.py::test_f[log(photon) y]": "XFAIL",
              "t.py::test_g[a-1]": "PASSED", "t.py::test_g[a-2]": "FAILED"}
    assert resolve("t.py::test_f[log(photon", status) == "t.py::test_f[log(photon) x]"
    assert resolve("t.py::test_g[a", status) is None             # they disagree: no match
    assert resolve("t.py::test_f", status) is None               # no open bracket: exact names only


def test_a_log_that_contradicts_its_exit_status_is_not_graded():
    assert believable({"a": "PASSED"}, 0) is None
    assert believable({"a": "PASSED", "b": "FAILED"}, 1) is None
    assert "exited 1" in believable({"a": "PASSED"}, 1)          # fake PASSED lines, a failing run
    assert believable({}, 0) == "the test run reported no test"


PATCH = """\
diff --git a/src/calc.py b/src/calc.py
--- a/src/calc.py
+++ b/src/calc.py
@@ -1 +1 @@
-x
+y
diff --git a/tests/conftest.py b/tests/conftest.py
new file mode 100644
diff --git a/docs/notes.md b/docs/notes.md
diff --git a/old_test_helpers.py b/tests/test_calc.py
"""


def test_what_a_patch_touches():
    assert modified_files(PATCH) == ["src/calc.py", "tests/conftest.py", "docs/notes.md", "tests/test_calc.py"]
    assert directives(PATCH) == ["src/calc.py", "tests/conftest.py", "tests/test_calc.py"]
    test_patch = "diff --git a/tests/test_calc.py b/tests/test_calc.py\n"
    assert touches_tests(PATCH, test_patch) == ["tests/conftest.py", "tests/test_calc.py"]
    assert touches_tests("diff --git a/src/calc.py b/src/calc.py\n", test_patch) == []
    assert touches_tests("diff --git a/setup.cfg b/setup.cfg\n", test_patch) == ["setup.cfg"]


def test_a_status_swebench_does_not_know_counts_neither_way_unless_strict():
    status = {"a": "PASSED", "b": "PASSEDX"}
    report = grade(status, ["a", "b"], [])
    assert report.resolved and report.uncounted == ("b",)        # SWE-bench's own arithmetic
    assert not grade(status, ["a", "b"], [], strict=True).resolved


# ---------------------------------------------------------------------------------------------------------
# SWE-bench's rows and predictions
# ---------------------------------------------------------------------------------------------------------

ROW = {"instance_id": "acme__calc-7", "repo": "acme/calc", "base_commit": "a" * 40, "patch": PATCH,
       "test_patch": "diff --git a/tests/test_calc.py b/tests/test_calc.py\n", "version": 1.1,
       "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_div"]), "PASS_TO_PASS": ["tests/test_calc.py::test_add"],
       "environment_setup_commit": "b" * 40, "problem_statement": "division is wrong"}


def test_a_swebench_row_is_read_as_it_is():
    assert is_row(ROW) and not is_row({"task_id": "x"})
    task = task_of("rows.jsonl:1", ROW)
    assert (task.repo, task.version, task.fail_to_pass, task.pass_to_pass) == (
        "acme/calc", "1.1", ("tests/test_calc.py::test_div",), ("tests/test_calc.py::test_add",))
    assert task.extra == {"problem_statement": "division is wrong"}
    with pytest.raises(InputError, match="duplicate instance_id"):
        tasks([("a:1", ROW), ("a:2", ROW)])


@pytest.mark.parametrize("key, value, message", [
    ("instance_id", "../../etc", "instance_id"),
    ("repo", "acme/../../x", "owner/name"),
    ("repo", "acme", "owner/name"),
    ("base_commit", "HEAD", "40 hex digits"),
    ("base_commit", "--upload-pack=x" + "a" * 26, "40 hex digits"),
    ("FAIL_TO_PASS", "[not json", "JSON string"),
    ("PASS_TO_PASS", [1, 2], "list of test names"),
    ("FAIL_TO_PASS", ["a\0b"], "no NUL"),
    ("patch", ["x"], "a patch"),
])
def test_a_hostile_row_is_one_line_naming_the_field(key, value, message):
    with pytest.raises(InputError, match=message) as e:
        task_of("rows.jsonl:3", {**ROW, key: value})
    assert str(e.value).startswith("rows.jsonl:3: ") and "\n" not in str(e.value)


def test_predictions_in_both_of_swebenchs_files_keep_every_candidate(tmp_path):
    preds = [{"instance_id": "acme__calc-7", "model_name_or_path": "m", "model_patch": PATCH},
             {"instance_id": "acme__calc-7", "model_name_or_path": "m", "model_patch": PATCH},   # n = 2, not deduplicated
             {"instance_id": "acme__calc-7", "model_name_or_path": "m", "model_patch": None},
             {"instance_id": "acme__calc-7", "model_name_or_path": "m", "model_patch": "  \n"},
             {"instance_id": "acme__calc-7", "model_name_or_path": "m", "model_patch": "x" * (MAX_PATCH_BYTES + 1)}]
    jsonl = tmp_path / "all_preds.jsonl"
    jsonl.write_text("".join(json.dumps(p) + "\n" for p in preds))
    as_list = tmp_path / "preds.json"
    as_list.write_text(json.dumps(preds[:3]))
    keyed = tmp_path / "keyed" / "preds.json"
    keyed.parent.mkdir()
    keyed.write_text(json.dumps({"acme__calc-7": preds[2]}))
    got = predictions(jsonl)
    assert [p.problem for p in got] == [None, None, EMPTY_PATCH, EMPTY_PATCH, PATCH_TOO_LARGE]
    assert got[0].patch == PATCH and got[2].patch is None
    assert [p.problem for p in predictions(as_list)] == [None, None, EMPTY_PATCH]
    assert [(p.instance_id, p.problem) for p in predictions(keyed)] == [("acme__calc-7", EMPTY_PATCH)]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "x"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:1: missing field 'model_patch'"):
        predictions(bad)


def test_swebench_lite_rows_are_all_read():
    swebench_rows = ROOT.parent / "shared" / "data" / "swe-bench"
    if not swebench_rows.is_dir():
        pytest.skip("SWE-bench Lite's rows are not on this machine")
    records = [(f"{f.name}:{i}", json.loads(line)) for f in sorted(swebench_rows.glob("*.jsonl"))
               for i, line in enumerate(f.read_text().splitlines(), 1)]
    assert len(tasks(records)) == 323
