"""What a patch touches, read from its text: the files of its `diff --git a/X b/Y` headers, the test
directives SWE-bench derives from a test patch (its files, less documentation and data), and whether a
candidate's patch reaches the tests or the machinery that runs them (the row's `touches_tests` flag;
`--strict-tests` refuses such a patch). A patch is hostile text: names are bounded, never followed,
and only compared."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$", re.M)
_NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")
MAX_NAME = 4096
# the runner's own configuration and entry points: a patch that edits one of these can change what the
# tests report without changing the code under test
_RUNNER_FILES = re.compile(r"(^|/)(conftest\.py|pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|noxfile\.py)$"
                           r"|^bin/test$|^tests/runtests\.py$")
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*\.py$|_tests?\.py$")


def modified_files(patch: str) -> list[str]:
    """The files a patch changes (the b/ side of each header), once each, in order."""
    seen: dict[str, None] = {}
    for _a, b in _HEADER.findall(patch or ""):
        if len(b) <= MAX_NAME:
            seen.setdefault(b.strip(), None)
    return list(seen)


def touched_by_both(patch: str) -> list[str]:
    """The files named on both sides of the headers (a rename's source too), once each."""
    seen: dict[str, None] = {}
    for a, b in _HEADER.findall(patch or ""):
        for name in (a.strip(), b.strip()):
            if len(name) <= MAX_NAME:
                seen.setdefault(name, None)
    return list(seen)


def directives(test_patch: str) -> list[str]:
    """The test files SWE-bench's test command is given: the test patch's files, less non-test ones."""
    return [f for f in modified_files(test_patch) if not f.endswith(_NON_TEST_EXTS)]


def touches_tests(patch: str, test_patch: str) -> list[str]:
    """The files of a candidate's patch that are tests or the test runner's configuration: every file the
    test patch names, anything under a tests directory or named as a test module, conftest.py and the
    runner's configuration files. Empty for a patch that only changes the code under test."""
    theirs = set(touched_by_both(test_patch))
    return [f for f in touched_by_both(patch)
            if f in theirs or _RUNNER_FILES.search(f) or _TEST_PATH.search(f)]
