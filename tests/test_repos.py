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


def test_django_runner_lines_banners_and_an_ok_pushed_to_its_own_line():
    log = """\
test_annotate (expressions.tests.BasicExpressionsTests) ... ok
test_order (expressions.tests.BasicExpressionsTests) ... FAIL
test_slow (expressions.tests.BasicExpressionsTests) ... skipped 'no database'
test_chatty (expressions.tests.BasicExpressionsTests) ... printed by the test
ok
test_broken (expressions.tests.BasicExpressionsTests) ... ERROR
======================================================================
FAIL: test_order (expressions.tests.BasicExpressionsTests)
"""
    assert parsers.parse("django", log) == {
        "test_annotate (expressions.tests.BasicExpressionsTests)": "PASSED",
        "test_order (expressions.tests.BasicExpressionsTests)": "FAILED", "test_order": "FAILED",
        "test_slow (expressions.tests.BasicExpressionsTests)": "SKIPPED",
        "test_chatty (expressions.tests.BasicExpressionsTests)": "PASSED",
        "test_broken (expressions.tests.BasicExpressionsTests)": "ERROR"}
    assert parsers.parse("django", "FAIL:\nERROR:\n") == {}   # a bare banner names nothing (and breaks nothing)


def test_seaborn_and_matplotlib_dialects():
    log = ("tests/test_core.py::test_a PASSED [ 50%]\nFAILED tests/test_core.py::test_b - assert 0\n"
           "PASSED tests/test_core.py::test_c\nSKIPPED [1] tests/test_core.py:9: no\nERROR tests/test_core.py::test_d\n")
    assert parsers.parse("seaborn", log) == {"tests/test_core.py::test_a": "PASSED",
                                             "tests/test_core.py::test_b": "FAILED",
                                             "tests/test_core.py::test_c": "PASSED"}
    mpl = "PASSED lib/matplotlib/tests/test_widgets.py::test_span[MouseButton.LEFT-MouseButton.RIGHT]\n"
    assert parsers.parse("pytest_matplotlib", mpl) == {"lib/matplotlib/tests/test_widgets.py::test_span[1-3]": "PASSED"}


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


def test_a_known_difference_is_set_aside_only_for_pass_to_pass_and_said():
    from harness.inputs.repos.known import for_repository
    known = frozenset(for_repository("psf/requests"))
    assert "test_connect_timeout" in known
    status = {"t.py::TestTimeout::test_connect_timeout[timeout0]": "FAILED", "t.py::test_fix": "PASSED",
              "t.py::test_other": "PASSED"}
    p2p = ["t.py::TestTimeout::test_connect_timeout[timeout0]", "t.py::test_other"]
    report = grade(status, ["t.py::test_fix"], p2p, known=known)
    assert report.resolved and report.known == ("t.py::TestTimeout::test_connect_timeout[timeout0]",)
    assert not grade(status, ["t.py::test_fix"], p2p).resolved                      # counted without the table
    assert not grade(status, ["t.py::TestTimeout::test_connect_timeout[timeout0]"], [], known=known).resolved   # F2P: counted
    assert not grade({**status, "t.py::test_other": "FAILED"}, ["t.py::test_fix"], p2p, known=known).resolved


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
    # what the tree showed changed after a patch applied (box/repo.py), never the patch's text
    changed = ["src/calc.py", "tests/conftest.py", "docs/notes.md", "old_test_helpers.py", "tests/test_calc.py"]
    assert touches_tests(changed, test_patch) == ["tests/conftest.py", "tests/test_calc.py"]
    assert touches_tests(["src/calc.py"], test_patch) == []
    assert touches_tests(["setup.cfg"], test_patch) == ["setup.cfg"]
    assert touches_tests([".git/hooks/post-checkout", ".git"], test_patch) == [".git/hooks/post-checkout", ".git"]
    assert touches_tests([None, 7, "x" * 5000, "conftest.py"], test_patch) == ["conftest.py"]   # hostile entries


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
    counts = {}
    for f in sorted(swebench_rows.glob("*.jsonl")):   # each file on its own: Lite and Verified share instances
        records = [(f"{f.name}:{i}", json.loads(line)) for i, line in enumerate(f.read_text().splitlines(), 1)]
        counts[f.name] = len(tasks(records))
    assert counts["swe-bench-lite-test.jsonl"] + counts["swe-bench-lite-dev.jsonl"] == 323
    assert counts.get("swe-bench-verified-test-9repos.jsonl", 203) == 203


# -- repository tasks end to end, on tinycalc (tests/repo_fixtures.py) ------------------------------------
def _evaluate(root, preds, *extra):
    import subprocess
    import sys
    from tests.repo_fixtures import write_task
    t = write_task(root, preds)
    out = root / "run"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(t["rows"]), "--samples",
                           str(t["preds"]), "--repos", str(t["repos"]), "--repo-specs", str(t["specs"]), "--out",
                           str(out), "--k", "1", "--workers", "2", "--quiet", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    rows = {}
    if (out / "results.jsonl").exists():
        for line in (out / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            rows[r["sample_index"]] = r
    return proc, rows, out, t


@pytest.mark.docker
def test_a_repository_task_is_graded_as_the_harness_grades_it(tmp_path):
    from tests.repo_fixtures import BREAKS, EDITS_TESTS, GOLD, NOT_APPLYING
    proc, rows, out, _ = _evaluate(tmp_path, [GOLD, "", BREAKS, NOT_APPLYING, EDITS_TESTS, None])
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = {i: (r["status"], r["reason"]) for i, r in rows.items()}
    assert got == {0: ("passed", "resolved"), 1: ("failed", "empty_patch"), 2: ("failed", "tests_failed"),
                   3: ("failed", "patch_apply_failed"), 4: ("failed", "tests_failed"), 5: ("failed", "empty_patch")}
    assert rows[2]["detail"].startswith("FAIL_TO_PASS 0 of 1, PASS_TO_PASS 1 of 2")
    assert {t["name"]: t["status"] for t in rows[2]["tests"]}["tests/test_calc.py::test_add"] == "FAILED"
    assert rows[0]["channel_detail"]["applied_with"] == "git apply --verbose"
    assert rows[4]["channel_detail"]["touches_tests"] == "tests/conftest.py"      # flagged, graded as the harness
    log = (out / rows[0]["channel_detail"]["log"]).read_text()
    assert ">>>>> Start Test Output" in log and ">>>>> Test Exit Code: 0" in log
    manifest = json.loads((out / "manifest.json").read_text())
    (env,) = manifest["sandbox"]["repo_environments"].values()
    assert env["python"].startswith("3.11") and any(p.startswith("pytest==8.3.3") for p in env["packages"])
    score = json.loads((out / "score.json").read_text())
    assert score["pass_at_k"]["1"] == pytest.approx(1 / 6)


def _evaluate_files(tmp_path, rows, preds, repos):
    """passk evaluate on the rows and predictions files, with tmp_path/specs.json: (its directory, its rows)."""
    import subprocess
    import sys
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(rows), "--samples",
                           str(preds), "--repos", str(repos), "--repo-specs", str(tmp_path / "specs.json"), "--out",
                           str(out), "--k", "1", "--workers", "2", "--quiet"], cwd=ROOT, capture_output=True, text=True,
                          timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.docker
def test_an_environment_builds_from_nothing_on_python_3_9_and_3_11(tmp_path):
    """Every real SWE-bench repository but flask 2.3 asks for Python 3.9: its environment is on Debian
    bullseye's base, where passk's image once did not build (passk-exec named a system call bullseye's
    headers do not). One instance per base, each with the gold patch and one that breaks a passing test."""
    from tests.repo_fixtures import BREAKS, SPECS, VERSION, VERSION_39, make_repository, row
    repos, base, _ = make_repository(tmp_path)
    rows = tmp_path / "rows.jsonl"
    ids = {VERSION: "passk-tests__tinycalc-311", VERSION_39: "passk-tests__tinycalc-39"}
    rows.write_text("".join(json.dumps(row(base, iid, version)) + "\n" for version, iid in ids.items()))
    (tmp_path / "specs.json").write_text(json.dumps(SPECS))
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": iid, "model_name_or_path": "t", "model_patch": p}) + "\n"
                             for iid in ids.values() for p in (row(base)["patch"], BREAKS)))
    out, rows_got = _evaluate_files(tmp_path, rows, preds, repos)
    got = {(r["task_id"], r["sample_index"]): (r["status"], r["reason"]) for r in rows_got}
    assert got == {(iid, i): label for iid in ids.values()
                   for i, label in ((0, ("passed", "resolved")), (1, ("failed", "tests_failed")))}
    envs = json.loads((out / "manifest.json").read_text())["sandbox"]["repo_environments"]
    assert sorted(e["python"][:4] for e in envs.values()) == ["3.11", "3.9."]


@pytest.mark.docker
def test_an_install_that_copies_the_code_runs_again_after_the_patch(tmp_path):
    """Regression: the instance's snapshot kept the venv's directories as root's, so the install done again
    after the patch (requests' `pip install .`) failed with permission denied and the tests ran the
    unpatched copy. Here the tests import the installed copy: the gold patch resolves only if it ran."""
    from tests.repo_fixtures import BREAKS, SPECS, VERSION_COPY, make_repository, row
    repos, base, _ = make_repository(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row(base, "passk-tests__tinycalc-copy", VERSION_COPY)) + "\n")
    (tmp_path / "specs.json").write_text(json.dumps(SPECS))
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": "passk-tests__tinycalc-copy", "model_name_or_path": "t",
                                         "model_patch": p}) + "\n" for p in (row(base)["patch"], BREAKS)))
    out, rows_got = _evaluate_files(tmp_path, rows, preds, repos)
    got = {r["sample_index"]: r for r in rows_got}
    assert (got[0]["status"], got[0]["reason"]) == ("passed", "resolved"), got[0]["detail"]
    assert (got[1]["status"], got[1]["reason"]) == ("failed", "tests_failed")
    assert got[0]["channel_detail"]["reinstalled"].startswith("yes: the install is not editable")
    assert "Permission denied" not in (out / got[0]["channel_detail"]["log"]).read_text()


@pytest.mark.docker
def test_a_spec_package_with_no_wheel_is_built_from_its_sdist_in_the_image(tmp_path):
    """Regression: atomicwrites 1.4.1 (pytest 4.x's specs) publishes an sdist only. It is built in the
    environment's base image, with the build tools downloaded first; resolving the spec's packages in one
    download had left no setuptools to build it with, and the environment failed on a fresh machine."""
    from tests.repo_fixtures import SPECS, VERSION_SDIST, make_repository, row
    repos, base, _ = make_repository(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row(base, "passk-tests__tinycalc-sdist", VERSION_SDIST)) + "\n")
    (tmp_path / "specs.json").write_text(json.dumps(SPECS))
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"instance_id": "passk-tests__tinycalc-sdist", "model_name_or_path": "t",
                                 "model_patch": row(base)["patch"]}) + "\n")
    out, got = _evaluate_files(tmp_path, rows, preds, repos)
    assert [(r["status"], r["reason"]) for r in got] == [("passed", "resolved")], got[0]["detail"]
    (env,) = json.loads((out / "manifest.json").read_text())["sandbox"]["repo_environments"].values()
    assert "atomicwrites==1.4.1" in env["packages"]
    assert any(n.startswith("atomicwrites==1.4.1: no wheel published") for n in env["notes"]), env["notes"]


@pytest.mark.docker
def test_what_the_gold_patch_adds_to_the_install_is_in_the_environment(tmp_path):
    """Regression (pylint-dev__pylint-4661: its fix adds appdirs): the install runs again after a patch that
    changes setup.py, and the harness's has the index to hand; the environment's wheels are resolved for
    the tree with its gold patch applied, so that a correct fix is not refused for want of a wheel."""
    from tests.repo_fixtures import GOLD_WITH_DEP, SPECS, make_repository, row
    repos, base, _ = make_repository(tmp_path)
    r = {**row(base, "passk-tests__tinycalc-dep"), "patch": GOLD_WITH_DEP}
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(r) + "\n")
    (tmp_path / "specs.json").write_text(json.dumps(SPECS))
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": "t",
                                 "model_patch": GOLD_WITH_DEP}) + "\n")
    out, got = _evaluate_files(tmp_path, rows, preds, repos)
    assert [(g["status"], g["reason"]) for g in got] == [("passed", "resolved")], got[0]["detail"]
    assert got[0]["channel_detail"]["reinstalled"].startswith("yes: the patch changed setup.py")
    assert "Could not find a version" not in (out / got[0]["channel_detail"]["log"]).read_text()


def test_a_repository_environment_keeps_no_cpu_affinity():
    """Regression: pinned to one CPU, pylint's tests that need two cores skipped themselves and left its
    PASS_TO_PASS test_jobs_score missing (the harness's containers see every CPU)."""
    from harness.execution.sandbox.docker import cpu_sets
    from harness.inputs.config import Limits, SandboxSettings
    sets, why = cpu_sets(Limits(), SandboxSettings(workers=2, repo_environment={"key": "k"}), client=None)
    assert sets is None and "repository" in why


@pytest.mark.docker
def test_strict_tests_refuses_a_patch_that_touches_the_tests(tmp_path):
    from tests.repo_fixtures import EDITS_TESTS, GOLD
    proc, rows, _, _ = _evaluate(tmp_path, [GOLD, EDITS_TESTS], "--strict-tests")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (rows[0]["status"], rows[0]["reason"]) == ("passed", "resolved")
    assert (rows[1]["status"], rows[1]["reason"]) == ("failed", "test_tampering")
    assert "tests/conftest.py" in rows[1]["detail"]


def test_a_missing_repository_or_commit_names_the_instance(tmp_path, capsys):
    from harness.cli import main
    from tests.repo_fixtures import GOLD, write_task
    t = write_task(tmp_path, [GOLD])
    base = ["evaluate", "--problems", str(t["rows"]), "--samples", str(t["preds"]), "--repo-specs", str(t["specs"]),
            "--out", str(tmp_path / "out")]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "rows.jsonl:1 (passk-tests__tinycalc-1): a repository task needs --repos DIR" in err and err.count("\n") == 1
    assert main(base + ["--repos", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "passk-tests/tinycalc is not under --repos" in err and err.count("\n") == 1
    row = json.loads(t["rows"].read_text())
    t["rows"].write_text(json.dumps({**row, "base_commit": "0" * 40}) + "\n")
    assert main(base + ["--repos", str(t["repos"])]) == 2
    assert f"commit {'0' * 40} is not in" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_candidates_tree_holds_no_later_commit_tag_or_reflog(tmp_path):
    import subprocess
    import tarfile
    from harness.inputs.repos.trees import tree
    from tests.repo_fixtures import GOLD, write_task
    t = write_task(tmp_path, [GOLD])
    got = tree(t["repos"], "passk-tests/tinycalc", t["base"], "passk-tests__tinycalc-1")
    where = tmp_path / "copy"
    where.mkdir()
    with tarfile.open(got.path) as tar:
        assert {m.uid for m in tar.getmembers()} == {10001}
        tar.extractall(where, filter="fully_trusted")
    git = ["git", "-c", f"safe.directory={where}", "-C", str(where)]
    assert subprocess.run([*git, "rev-list", "--all"], capture_output=True, text=True).stdout.split() == [got.base]
    assert subprocess.run([*git, "tag"], capture_output=True, text=True).stdout == ""
    assert subprocess.run([*git, "cat-file", "-e", t["later"]], capture_output=True).returncode != 0
    assert not (where / ".git" / "logs").exists()
    assert (where / "tinycalc" / "__init__.py").read_text().endswith("return sum(xs) / len(xs)\n")   # the base's


def test_a_submodule_comes_from_its_own_repository_under_repos(tmp_path, monkeypatch):
    """astropy 3.x's tree holds astropy_helpers as a submodule: its files are checked out at the recorded
    commit from DIR/<owner>/<name> (the URL .gitmodules names), never fetched."""
    monkeypatch.setenv("PASSK_CACHE_DIR", str(tmp_path / "cache"))   # a tree cached by another test is not this one
    import tarfile
    from harness.inputs.repos.trees import tree
    from tests.repo_fixtures import git, make_repository
    repos, base, _ = make_repository(tmp_path)
    helpers = repos / "passk-tests" / "helpers"
    helpers.mkdir(parents=True)
    git(helpers, "init", "-q", "-b", "main")
    (helpers / "helper.py").write_text("HELP = 1\n")
    git(helpers, "add", "-A")
    git(helpers, "commit", "-q", "-m", "helpers")
    sub = git(helpers, "rev-parse", "HEAD")
    work = repos / "passk-tests" / "tinycalc"
    (work / ".gitmodules").write_text('[submodule "helpers"]\n\tpath = helpers\n'
                                      '\turl = https://github.com/passk-tests/helpers.git\n')
    git(work, "add", ".gitmodules")
    git(work, "update-index", "--add", "--cacheinfo", f"160000,{sub},helpers")
    git(work, "commit", "-q", "-m", "with a submodule")
    with_sub = git(work, "rev-parse", "HEAD")
    t = tree(repos, "passk-tests/tinycalc", with_sub, "passk-tests__tinycalc-sub")
    with tarfile.open(t.path) as tar:
        names = tar.getnames()
        assert "helpers/helper.py" in names and "tinycalc/__init__.py" in names
        assert tar.extractfile("helpers/helper.py").read() == b"HELP = 1\n"
    # its commit not there: named
    git(work, "update-index", "--cacheinfo", f"160000,{'1' * 40},helpers")
    git(work, "commit", "-q", "-m", "a submodule commit nobody has")
    with pytest.raises(InputError, match="submodule helpers.*1111111111"):
        tree(repos, "passk-tests/tinycalc", git(work, "rev-parse", "HEAD"), "passk-tests__tinycalc-sub2")


def test_a_mirror_that_lacks_a_file_of_the_tree_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSK_CACHE_DIR", str(tmp_path / "cache"))   # a tree cached by another test is not this one
    from harness.inputs.repos.trees import tree
    from tests.repo_fixtures import git, make_repository
    repos, base, _ = make_repository(tmp_path)
    work = repos / "passk-tests" / "tinycalc"
    blob = git(work, "rev-parse", f"{base}:tests/test_calc.py")
    (work / ".git" / "objects" / blob[:2] / blob[2:]).unlink()   # as a size-limited mirror leaves a large file out
    with pytest.raises(InputError, match=r"lacks 1 file\(s\) the tree needs \(tests/test_calc.py\)"):
        tree(repos, "passk-tests/tinycalc", base, "passk-tests__tinycalc-1")


def test_a_requirements_files_comments_are_left_out_as_pip_leaves_them(tmp_path):
    """pylint's requirements_test_pre_commit.txt has `astroid==2.11.3  # Pinned ...`: passed to pip as an
    argument, the comment was part of the requirement and the environment did not build."""
    from harness.inputs.repos.trees import requirements_text
    from tests.repo_fixtures import git, make_repository
    repos, _, _ = make_repository(tmp_path)
    work = repos / "passk-tests" / "tinycalc"
    (work / "requirements.txt").write_text("-r more.txt\n# a comment\nastroid==2.11.3  # Pinned for tests\n"
                                           "pkg@https://example.org/a#egg=pkg\n-e .\n")
    (work / "more.txt").write_text("pytest~=7.0\t# the runner\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "requirements")
    got = requirements_text(repos, "passk-tests/tinycalc", git(work, "rev-parse", "HEAD"), ["requirements.txt"], "x")
    assert got.splitlines() == ["pytest~=7.0", "astroid==2.11.3", "pkg@https://example.org/a#egg=pkg"]


def test_a_swe_bench_environment_spec_is_read_or_refused_by_name():
    from harness.inputs.repos.specs import spec_for
    sympy = spec_for("sympy/sympy", "1.1")
    assert sympy.python == "3.9" and sympy.parser == "sympy" and sympy.unbuildable() is None
    from harness.inputs.repos.recipes import recipe

    def key(repo, version):   # the spec's packages (not an instance's official pins): what the image holds
        return recipe(spec_for(repo, version), "no-such-instance", None, None, official=False).key
    assert key("sympy/sympy", "1.12") == key("sympy/sympy", "1.1")      # the same packages share one environment
    assert key("pytest-dev/pytest", "5.4") != key("sympy/sympy", "1.1")
    assert "Python 3.6" in spec_for("scikit-learn/scikit-learn", "0.20").unbuildable()
    assert "environment.yml" in spec_for("matplotlib/matplotlib", "3.5").unbuildable()
    with pytest.raises(InputError, match="no environment specification for repository nobody/nothing"):
        spec_for("nobody/nothing", "1.0", where="rows.jsonl:1")
    with pytest.raises(InputError, match="version '0.0'"):
        spec_for("sympy/sympy", "0.0", where="rows.jsonl:1")


@pytest.mark.docker
def test_passk_serve_rewards_a_patch_to_a_preloaded_or_inline_instance(tmp_path):
    from tests.repo_fixtures import BREAKS, EDITS_TESTS, GOLD, row, write_task
    from tests.test_serve import Server
    t = write_task(tmp_path, [GOLD])
    s = Server("--workers", "2", "--problems", str(t["rows"]), "--repos", str(t["repos"]), "--repo-specs",
               str(t["specs"]), "--deadline-s", "600")
    try:
        got = s.post("/v1/evaluate", {"problem": {"id": "passk-tests__tinycalc-1"}, "reward": "fraction",
                                      "candidates": [{"patch": GOLD}, {"patch": BREAKS}, {"patch": ""},
                                                     {"patch": EDITS_TESTS}]}, timeout=900)
        rows = got["rows"]
        assert [(r["status"], r["reason"], r["reward"]) for r in rows] == [
            ("passed", "resolved", 1.0), ("failed", "tests_failed", 0.0), ("failed", "empty_patch", 0.0),
            ("failed", "test_tampering", 0.0)]   # the service grades strictly by default
        inline = s.post("/v1/evaluate", {"problem": {"record": {**row(t["base"]), "instance_id": "inline-1"}},
                                         "candidates": [{"patch": GOLD}]}, timeout=900)
        assert (inline["rows"][0]["status"], inline["rows"][0]["reward"]) == ("passed", 1.0)
    finally:
        s.stop()


@pytest.mark.docker
def test_the_hostile_patches_get_their_written_labels_and_reach_no_later_candidate(tmp_path):
    from tests.repo_attacks import run_table
    pairs, unexpected, honest = run_table(tmp_path)
    wrong = [(a.name, got) for a, got in pairs if got != (a.default, a.strict)]
    assert unexpected == 0, (wrong, honest)
    assert not [a.name for a, (_, strict) in pairs if strict[0] == "passed" and a.default != a.strict]


@pytest.mark.docker
def test_what_the_images_python_misses_among_the_wheels_is_named(tmp_path):
    # regression (issue 44): pip on the host reads a dependency's markers for the host's Python, so a wheel only
    # the image's Python needs (typing-extensions for setuptools-scm on 3.9) was never downloaded, and every
    # pytest instance's install failed; the check asks the image's own Python, and it had read a failing
    # pip's output from the wrong stream (always "nothing missing")
    import subprocess
    import sys

    import docker

    from harness.execution.sandbox.images import ensure_image
    from harness.environments.repository import _missing_in_image, base_image
    client = docker.from_env()
    wheels = tmp_path / "w"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), "pip==24.2",
                    "pytest==8.3.3"], check=True)
    base = base_image(client, ensure_image(client))
    assert _missing_in_image(client, base, wheels, ["pytest==8.3.3"], None).startswith(("iniconfig", "pluggy", "packaging"))


@pytest.mark.docker
def test_an_instance_that_needs_more_than_its_environments_commit_gets_it(tmp_path):
    # regression (issue 44): the environment's wheels were resolved for its environment_setup_commit alone; an
    # instance whose base commit requires another package (pytest 4.6's importlib-metadata) could not install
    import subprocess
    import sys
    from tests.repo_fixtures import GOLD, git, make_repository, row
    repos, base, _ = make_repository(tmp_path)
    work = repos / "passk-tests" / "tinycalc"
    git(work, "checkout", "-q", "-b", "later-base", base)
    (work / "setup.py").write_text("from setuptools import setup\nsetup(name='tinycalc', version='0.1', "
                                   "packages=['tinycalc'], install_requires=['six'])\n")
    git(work, "commit", "-q", "-am", "needs six")
    needs_six = git(work, "rev-parse", "HEAD")
    rows, preds, specs = tmp_path / "rows.jsonl", tmp_path / "preds.jsonl", tmp_path / "specs.json"
    from tests.repo_fixtures import SPECS
    specs.write_text(json.dumps({"repositories": {k: {**v, "versions": {"1.1": v["versions"]["1.0"]}}
                                                  for k, v in SPECS["repositories"].items()}}))
    rows.write_text(json.dumps({**row(needs_six), "version": "1.1", "environment_setup_commit": base}) + "\n")
    preds.write_text(json.dumps({"instance_id": "passk-tests__tinycalc-1", "model_patch": GOLD}) + "\n")
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(rows), "--samples",
                           str(preds), "--repos", str(repos), "--repo-specs", str(specs), "--out", str(out), "--k", "1",
                           "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    got = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["status"], r["reason"]) for r in got] == [("passed", "resolved")], (got, proc.stderr[-1500:])


@pytest.mark.docker
def test_audit_reruns_a_repository_task_that_its_time_limit_decided(tmp_path):
    import sys
    from harness.run.audit import audit
    from tests.repo_attacks import FIXED, patch_of
    slow = patch_of({"tinycalc/__init__.py": FIXED + "\nimport time\ntime.sleep(12)\n"})
    proc, rows, out, _ = _evaluate(tmp_path, [slow], "--repo-timeout-s", "10")
    assert (rows[0]["status"], rows[0]["reason"]) == ("timed_out", "time_limit"), proc.stderr[-1500:]
    result = audit(out, (3.0,), repeat=0)
    assert [(f["from"], f["to"]) for f in result["relaxed"][0]["flips"]] == [("timed_out", "passed")], result["relaxed"]
    assert sys.executable   # (the audit ran in this process, on the run's own recorded settings)


# -- pure pieces of the instance snapshot and the tree walk (containers/box/repo.py) ---------------------------
def test_the_install_runs_again_only_where_the_patch_changed_what_it_installs():
    import stat
    from harness.containers.box.repo import install_needed
    before = {"pkg": (stat.S_IFDIR, 0o755), "pkg/mod.py": (stat.S_IFREG,), "setup.py": (stat.S_IFREG,),
              "tests": (stat.S_IFDIR, 0o755)}
    editable = "python -m pip install -e .[test]"
    assert install_needed(["pkg/mod.py", "tests/test_x.py", ".git/index"], before, editable)[0] is False
    assert install_needed(["CHANGES.rst", "README.md", "pkg/mod.py"], before, editable)[0] is False
    for changed, why in ((["setup.py"], "setup.py"), (["pkg/_speedups.c"], "_speedups.c"), (["pkg/x.pyx"], "x.pyx"),
                         (["newpkg/__init__.py"], "top-level"), (["top.py"], "root"), (["pyproject.toml"], "pyproject")):
        needed, reason = install_needed(changed, before, editable)
        assert needed and why in reason, (changed, reason)
    assert install_needed(["pkg/mod.py"], before, "python -m pip install .")[0] is True   # it copies the code
    assert install_needed(["setup.py"], before, "")[0] is False                          # nothing to run


def test_the_tree_walk_sees_what_a_patch_changed_dot_git_included(tmp_path):
    import os
    from harness.containers.box.repo import changed_paths, tree_state
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "link").symlink_to("a/x.py")
    before, stopped = tree_state(tmp_path)
    assert not stopped and set(before) == {"a", "a/x.py", ".git", ".git/config", "link"}
    (tmp_path / "a" / "x.py").write_text("2\n")              # changed
    (tmp_path / ".git" / "hooks").mkdir()                     # a hook under .git
    (tmp_path / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    os.unlink(tmp_path / "link")                              # removed
    (tmp_path / "link").symlink_to("/etc/passwd")             # a link re-pointed (never followed)
    (tmp_path / "new\nline.py").write_text("")                # a hostile name, kept as it is
    after, _ = tree_state(tmp_path)
    assert changed_paths(before, after) == sorted([".git/hooks", ".git/hooks/post-checkout", "a/x.py", "link",
                                                   "new\nline.py"])


def test_two_instances_that_hold_the_same_share_an_environment():
    from harness.inputs.repos.recipes import recipe
    from harness.inputs.repos.specs import spec_for
    a = recipe(spec_for("sympy/sympy", "1.1"), "sympy__sympy-13031", None, None)
    b = recipe(spec_for("sympy/sympy", "1.7"), "sympy__sympy-20590", None, None)
    assert a.pinned and b.pinned
    assert (a.key == b.key) == (a.holds() == b.holds())
    # two versions years apart whose exported environments pin the same packages: one image
    assert a.spec.version != "1.12" and a.key == recipe(spec_for("sympy/sympy", "1.12"), "sympy__sympy-24213", None, None).key
    lite_only = recipe(spec_for("pytest-dev/pytest", "5.4"), "pytest-dev__pytest-7373", None, None)
    assert not lite_only.pinned and lite_only.differences()[0].startswith("SWE-bench published no exported")
    spec_only = recipe(spec_for("sympy/sympy", "1.1"), "sympy__sympy-13031", None, None, official=False)
    assert not spec_only.pinned and spec_only.key != a.key


def test_a_specs_sed_edits_of_setup_py_are_seen_by_the_hosts_resolution(tmp_path):
    """sphinx 3.0 to 4.4's specs pin Jinja2<3.0 and sphinxcontrib-applehelp<=1.0.7 by sed on setup.py: the
    host's pip resolved the tree without them, so the wheels lacked Jinja2 2.x and held only applehelp 1.0.7
    (which needs Sphinx 5), and 48 Lite instances did not install (regression). The edits are made on the
    host's copy as sed makes them, and the trees they change are resolved again."""
    from harness.environments.repository import _apply_declaration_edits, _declaration_edits, project_key
    steps = ("sed -i 's/pytest/pytest -rA/' tox.ini", "sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
             "sed -i 's/sphinxcontrib-applehelp/sphinxcontrib-applehelp<=1.0.7/' setup.py",
             "sed -i 's/a.b/X&Y/g' setup.cfg",
             "sed -i 's/htmlhelp>=2.0.0/htmlhelp>=2.0.0,<=2.0.4/' setup.py || sed -i 's/htmlhelp/htmlhelp<=2.0.4/' setup.py",
             "sed -i \"s/x/y/\" setup.py; rm -rf /", "sed -i 's/a\\(b\\)/c/' setup.py",
             "sed -i \"s/'packaging',/'packaging', 'markupsafe<=2.0.1',/\" setup.py", "sed -i \"s/x/$HOME/\" setup.py")
    assert [e[:3] for e in _declaration_edits(steps)] == [
        ("setup.py", "Jinja2>=2.3", "Jinja2<3.0"), ("setup.py", "sphinxcontrib-applehelp", "sphinxcontrib-applehelp<=1.0.7"),
        ("setup.cfg", "a.b", "X&Y"), ("setup.py", "htmlhelp>=2.0.0", "htmlhelp>=2.0.0,<=2.0.4"),
        ("setup.py", "'packaging',", "'packaging', 'markupsafe<=2.0.1',")]
    (tmp_path / "setup.py").write_text("install_requires=['sphinxcontrib-applehelp', 'Jinja2>=2.3', 'htmlhelp']\n"
                                       "x = 'Jinja2>=2.3'\ny = ['packaging',\n")
    (tmp_path / "setup.cfg").write_text("a.b a-b\nacb\n")
    _apply_declaration_edits(tmp_path, steps)
    assert (tmp_path / "setup.py").read_text() == ("install_requires=['sphinxcontrib-applehelp<=1.0.7', 'Jinja2<3.0', "
                                                   "'htmlhelp']\nx = 'Jinja2<3.0'\n"
                                                   "y = ['packaging', 'markupsafe<=2.0.1',\n")
    assert (tmp_path / "setup.cfg").read_text() == "Xa.bY Xa-bY\nXacbY\n"
    assert project_key(("c", steps, "pip install -e .", "")) != project_key(("c", steps[:1], "pip install -e .", ""))
    assert project_key(("c", steps[:1], "i", "")) == "c:" + __import__("hashlib").sha256(
        __import__("json").dumps([list(steps[:1]), "i", ""]).encode()).hexdigest()[:12]   # others: as before


def test_the_specs_pip_packages_override_the_same_package_from_the_requirements_file():
    """flask 2.0's environment did not build from nothing: its requirements file pins MarkupSafe 2.0.1 and
    its spec's pip packages 2.1.3, which the harness installs after the file; resolved together they
    conflicted (pip's ResolutionImpossible) and every candidate got environment_error."""
    from harness.inputs.repos.recipes import recipe
    from harness.inputs.repos.specs import spec_for
    spec = spec_for("pallets/flask", "2.0")
    env = recipe(spec, "no-such-instance", "click==7.0\nmarkupsafe==2.0.1\nWerkzeug>=2.0\npytest==6.2\n", None,
                 official=False)
    got = env.packages()
    assert "MarkupSafe==2.1.3" in got and "markupsafe==2.0.1" not in got and "click==7.0" not in got
    assert "pytest==6.2" in got and "Werkzeug>=2.0" not in got
    assert [p for p in got if p.lower().startswith("markupsafe")] == ["MarkupSafe==2.1.3"]


def test_an_environment_build_record_is_read_back_only_for_its_own_image(tmp_path, monkeypatch):
    from harness.environments.repository import build_record, cache_root, record_build
    monkeypatch.setenv("PASSK_CACHE_DIR", str(tmp_path / "cache"))
    (cache_root() / "sympy-sympy-py39-abc").mkdir(parents=True)
    tag = "passk-repo-env-sympy-sympy-py39-abc:0123456789ab"
    assert build_record("sympy-sympy-py39-abc", tag) is None
    record_build("sympy-sympy-py39-abc", tag, 123.45, wheels_cached=False)
    got = build_record("sympy-sympy-py39-abc", tag)
    assert got["seconds"] == 123.5 and got["wheels_cached"] is False and got["image"] == tag
    assert build_record("sympy-sympy-py39-abc", tag.replace("0123", "9999")) is None   # another image of the key
    (cache_root() / "sympy-sympy-py39-abc" / "built-0123456789ab.json").write_text("[not a record")
    assert build_record("sympy-sympy-py39-abc", tag) is None


def test_bench_repos_sizes_a_partial_mirror_it_cannot_clone_by_its_packed_objects(tmp_path):
    """bench_repos stopped on astropy after building every environment: `fetch`'s mirror lacks objects, and a
    clone of it fails. The official structure's size is then the mirror's packed objects (a lower bound)."""
    import subprocess
    import sys
    sys.path.insert(0, str(ROOT))
    from scripts.speed.bench_repos import clone_mb
    work = tmp_path / "w"
    work.mkdir()
    for args in (["init", "-q"], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=work, check=True)
    (work / "f.txt").write_text("data\n" * 1000)
    subprocess.run(["git", "add", "f.txt"], cwd=work, check=True)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "y"], cwd=work, check=True)
    mirror = tmp_path / "repos" / "o" / "r"
    mirror.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror)], check=True)
    mb, cloned = clone_mb(str(tmp_path / "repos"), "o/r")
    assert cloned and mb > 0
    blob = subprocess.run(["git", f"--git-dir={mirror}", "rev-parse", "HEAD:f.txt"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()                # a mirror without every object
    mb, cloned = clone_mb(str(tmp_path / "repos"), "o/r")
    assert not cloned and mb > 0


def test_the_index_as_of_a_day_drops_what_was_uploaded_later_or_undated():
    from datetime import datetime, timezone

    from harness.environments.as_of import bounded_page
    page = {"name": "docutils", "files": [
        {"filename": "docutils-0.21.2-py3-none-any.whl", "url": "u1", "upload-time": "2024-04-23T18:57:38.123Z"},
        {"filename": "docutils-0.22-py3-none-any.whl", "url": "u2", "upload-time": "2025-07-29T15:20:31Z"},
        {"filename": "docutils-0.1.tar.gz", "url": "u3"},
        "not a file"]}
    got = bounded_page(page, datetime(2025, 2, 25, 23, 59, 59, tzinfo=timezone.utc))
    assert [f["filename"] for f in got["files"]] == ["docutils-0.21.2-py3-none-any.whl"]


def test_a_spec_resolved_environment_resolves_as_of_the_official_exports_and_a_pinned_one_does_not():
    # regression (issue 57): sphinx 3.x's Lite-only instances resolved docutils 0.22 (2025-07), which no longer
    # has the `roman` module their code imports; SWE-bench's harness, building the official images, saw 0.21
    from harness.inputs.repos.official import exported_on
    from harness.inputs.repos.recipes import recipe
    from harness.inputs.repos.specs import spec_for
    day = exported_on()
    assert day is not None and "2024-06-01" <= day < "2026-01-01"
    spec = spec_for("sphinx-doc/sphinx", "3.1")
    resolved = recipe(spec, "sphinx-doc__sphinx-7686", None, None)
    assert resolved.official is None and resolved.as_of == day and resolved.holds()["as_of"] == day
    assert f"as of {day}" in resolved.differences()[0]
    pinned = recipe(spec_for("sphinx-doc/sphinx", "3.5"), "sphinx-doc__sphinx-8721", None, None)
    assert pinned.official is not None and pinned.as_of is None and "as_of" not in pinned.holds()


def test_pip_through_the_index_as_of_a_day_finds_that_days_newest_release(tmp_path):
    # PyPI itself (this machine reaches it, as every environment's resolution does): docutils 0.22 came out in
    # July 2025, so as of 2025-02-25 the newest is 0.21.2
    import os

    from harness.environments.as_of import BoundedIndex
    from harness.environments.bases import run_pip
    with BoundedIndex("2025-02-25") as index:
        proc = run_pip(["download", *index.pip_args, "--no-deps", "--only-binary=:all:", "-d", str(tmp_path),
                        "docutils<1"], env=index.pip_env(dict(os.environ)))
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert [p.name for p in tmp_path.iterdir()] == ["docutils-0.21.2-py3-none-any.whl"]
