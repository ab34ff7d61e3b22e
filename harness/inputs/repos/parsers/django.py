"""Django's own runner (`tests/runtests.py --verbosity 2`): a line per test, `name (module.Class) ... ok`,
`... skipped '...'`, `... FAIL` or `... ERROR`, and a `FAIL: name (...)` / `ERROR: name (...)` banner over
each failure's traceback. As SWE-bench's parser reads them (its `parse_log_django`, swebench 5.0.2): the
name is the text before ` ... ` (with its class in parentheses: the rows' lists name tests so); an `ok`
that a test's own output pushed onto a later line passes the last test that started; a banner names a
test by its first word; and three multi-line shapes that Django's logger prints into a test's line pass
that test. A status line a candidate's code prints is indistinguishable from the runner's: the grading
checks the log against the run's exit status (grading.believable)."""

from __future__ import annotations

import re

_PASS_ENDINGS = (" ... ok", " ... OK", " ...  OK")
# a test's line interrupted by a message of Django's that runs over two lines, then `ok`
_INTERRUPTED = (
    re.compile(r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$", re.M),
    re.compile(r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$", re.M),
    re.compile(r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$", re.M),
)
_VERSION_TEST = "--version is equivalent to version"
# one migration's output runs into the next test's name on the same line (django__django-7188)
_MIGRATION_PREFIX = "Applying sites.0002_alter_domain_unique...test_no_migrations"


def parse(log: str) -> dict[str, str]:
    found: dict[str, str] = {}
    last_started = None
    for raw in log.split("\n"):
        line = raw.strip()
        if _VERSION_TEST in line:
            found[_VERSION_TEST] = "PASSED"
        if " ... " in line:
            last_started = line.split(" ... ")[0]
        for ending in _PASS_ENDINGS:
            if line.endswith(ending):
                if line.startswith(_MIGRATION_PREFIX):
                    line = line.split("...", 1)[-1].strip()
                found[line.rsplit(ending, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            found[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            found[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:") and len(line.split()) > 1:
            found[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            found[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:") and len(line.split()) > 1:
            found[line.split()[1].strip()] = "ERROR"
        if line.lstrip().startswith("ok") and last_started is not None:
            found[last_started] = "PASSED"
    for shape in _INTERRUPTED:
        for m in shape.finditer(log):
            found[m.group(1)] = "PASSED"
    return found
