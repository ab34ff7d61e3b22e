"""A repository task's label, from what its run recorded: pure, so that a row can be graded again from its
log. The default is SWE-bench's own grading (grading.py, swebench 5.0.2's rule and its guard against a log
that does not describe the run: a run that exited badly while its log reports no failure, or that reported
no test and shows no sign its suite ran, counts as no result); `strict` adds passk's:

- a patch that changed the tests, what runs them or the repository's .git (patches.touches_tests, read
  from the paths the tree showed changed after it applied, not from its text) fails (test_tampering);
  by default the row names the files (`touches_tests`) and the log grades it;
- where the runner wrote its own report (pytest's JUnit XML, outside the tree), a listed test passes only
  when the log and the report both say so; by default a disagreement is flagged on the row
  (`report_disagrees`), and the log decides, as in the harness.

Labels: passed resolved; failed empty_patch, patch_too_large, patch_apply_failed, tests_failed (with the
counts: FAIL_TO_PASS x of y, PASS_TO_PASS x of y), test_tampering; timed_out time_limit; error for what is
not the candidate's (environment_error: the repository did not install before any patch)."""

from __future__ import annotations

import base64
import re

from harness.core.text import clean
from harness.inputs.repos.grading import PASSING, believable, grade, resolve
from harness.inputs.repos.known import for_repository
from harness.inputs.repos.parsers import parse
from harness.inputs.repos.patches import touches_tests
from harness.inputs.repos.rows import EMPTY_PATCH, PATCH_TOO_LARGE

MAX_LOG_BYTES = 64 << 20
MAX_TESTS_IN_ROW = 2000
START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
# signs that a test runner ran, where its log parsed to nothing (swebench 5.0.2 grading.py SUITE_RAN, for
# the runners passk parses: pytest's and sympy's summaries)
SUITE_RAN = re.compile(r"^=+ .*\b(passed|failed|skipped|error|errors|xfailed|xpassed|deselected|no tests ran)\b.* =+$"
                       r"|^tests finished: \d+ passed", re.M)


def before_running(task, sample) -> dict | None:
    """The result of a candidate that does not need to run: an empty or oversized patch. None otherwise."""
    problem = (sample.extra or {}).get("patch_problem")
    if problem in (EMPTY_PATCH, PATCH_TOO_LARGE) or not (sample.program or "").strip():
        reason = problem if problem in (EMPTY_PATCH, PATCH_TOO_LARGE) else EMPTY_PATCH
        what = "the prediction's patch is empty" if reason == EMPTY_PATCH else "the prediction's patch is over the size bound"
        return {"status": "failed", "reason": reason, "detail": what, "verdict_channel": "repo",
                "channel_detail": {"step": "before"}}
    return None


def _names(paths, n: int) -> str:
    """Paths a patch made, for a row: each made safe text (a name may hold anything but / and NUL), joined."""
    shown = ("".join(c if c.isprintable() else repr(c)[1:-1] for c in clean(p, 300)) for p in paths[:n])
    return ", ".join(shown)[:1000]


def log_statuses(task, log: str, exit_code) -> tuple[dict, str | None]:
    """({test: status}, why the log is not graded or None) as the harness reads a log (get_logs_eval)."""
    if START in log and END in log:
        sliced = log.split(START, 1)[1].split(END, 1)[0]
    else:
        return {}, "the log has no test output"
    statuses = parse(task.spec.parser, sliced) or parse(task.spec.parser, log)
    if not statuses:
        return {}, None if SUITE_RAN.search(log) else "the test run reported no test and shows no sign that its suite ran"
    why = believable(statuses, exit_code)
    return ({}, why) if why else (statuses, None)


def junit_statuses(xml: bytes) -> dict[str, str]:
    """{(classname, name): status} of a JUnit report (pytest's), read as data (no entities, bounded)."""
    import xml.etree.ElementTree as ET
    if b"<!DOCTYPE" in xml[:4096] or b"<!ENTITY" in xml:
        return {}
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return {}
    out = {}
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        status = ("FAILED" if "failure" in tags else "ERROR" if "error" in tags else
                  "SKIPPED" if "skipped" in tags else "PASSED")
        out[(case.get("classname") or "", case.get("name") or "")] = status
    return out


def junit_by_nodeid(junit: dict, names) -> dict[str, str]:
    """The report's statuses under the log's names (pytest's node ids): classname `a.b.test_x.TestC` and name
    `test_y[p]` stand for `a/b/test_x.py::TestC::test_y[p]`."""
    wanted = set(names)
    out = {}
    for (classname, name), status in junit.items():
        parts = classname.split(".") if classname else []
        for i in range(len(parts), 0, -1):
            nodeid = "/".join(parts[:i]) + ".py::" + "::".join(parts[i:] + [name])
            if nodeid in wanted:
                out[nodeid] = status
                break
    return out


def apply(row, task, sample, result: dict) -> None:
    """Grade a repo channel's result into `row` (its status, reason, detail, tests and flags)."""
    changed = result.get("changed") if isinstance(result.get("changed"), list) else []
    touched = touches_tests(changed, task.task.test_patch)
    detail = row.channel_detail
    if touched:
        detail["touches_tests"] = _names(touched, 20)
    log_b64 = result.get("repo_log_b64")
    if touched and task.strict and row.status in ("passed", "failed") and row.reason != "patch_apply_failed":
        row.status, row.reason = "failed", "test_tampering"
        row.detail = "--strict-tests: the patch changed the tests, what runs them or .git: " + _names(touched, 10)
        if isinstance(log_b64, str):
            row.log = base64.b64decode(log_b64)[:MAX_LOG_BYTES]
        return
    if not isinstance(log_b64, str):
        return   # nothing ran to the tests (a patch that does not apply, a limit, the environment): as sent
    raw = base64.b64decode(log_b64)[:MAX_LOG_BYTES]
    row.log = raw
    if row.status != "passed":   # a limit stopped the tests: the label stands, the log is kept
        return
    log = raw.decode("utf-8", "replace")
    exit_code = result.get("test_exit_code")
    statuses, unbelievable = log_statuses(task, log, exit_code)
    listed = list(task.task.fail_to_pass) + list(task.task.pass_to_pass)
    report_statuses = None
    if task.junit and not isinstance(result.get("junit_b64"), str):
        detail["report_missing"] = 1   # pytest writes it at its session's end: this run did not get there
        if task.strict:
            statuses, unbelievable = {}, "the runner's own report is missing: its run did not finish"
    if isinstance(result.get("junit_b64"), str):
        report_statuses = junit_by_nodeid(junit_statuses(base64.b64decode(result["junit_b64"])),
                                          [resolve(n, statuses) or n for n in listed])
        disagree = [n for n in listed if (k := resolve(n, statuses)) is not None and statuses[k] in PASSING
                    and report_statuses.get(k) not in (None, *PASSING)]
        if disagree:
            detail["report_disagrees"] = ", ".join(disagree[:10])[:1000]
            if task.strict:   # a pass needs both: the log and the runner's own report
                statuses = {k: ("FAILED" if k in {resolve(n, statuses) for n in disagree} else v)
                            for k, v in statuses.items()}
    known = for_repository(task.task.repo) if task.known_differences else {}
    report = grade(statuses, task.task.fail_to_pass, task.task.pass_to_pass, strict=task.strict,
                   known=frozenset(known))
    if report.known:   # set aside, and said: which listed tests, and why each cannot pass here
        detail["known_differences"] = "; ".join(
            f"{clean(n, 300)} ({known[n.rsplit('::', 1)[-1].split('[', 1)[0].strip()]})" for n in report.known[:10])[:1000]
    detail["graded_tests"] = len(statuses)
    # what a fractional reward reads (serve/bodies.py): FAIL_TO_PASS passing, and whether PASS_TO_PASS held
    detail["fail_to_pass_passed"], detail["fail_to_pass_total"] = len(report.fail_to_pass[0]), len(task.task.fail_to_pass)
    detail["pass_to_pass_held"] = int(not report.pass_to_pass[1])
    if unbelievable:
        detail["log_not_graded"] = unbelievable
    row.tests = [{"name": n[:500], "list": "FAIL_TO_PASS" if i < len(task.task.fail_to_pass) else "PASS_TO_PASS",
                  "status": report.statuses.get(n) or "missing"}
                 for i, n in enumerate(listed)][:MAX_TESTS_IN_ROW]
    if report.resolved:
        row.status, row.reason, row.detail = "passed", "resolved", report.counts()
    else:
        row.status, row.reason = "failed", "tests_failed"
        row.detail = report.counts() + (f" ({unbelievable})" if unbelievable else "")
    if report.uncounted:
        detail["uncounted"] = ", ".join(report.uncounted[:10])[:1000]
