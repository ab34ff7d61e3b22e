"""What a patch touches. From a row's own test patch, read as text: its files (`diff --git a/X b/Y`
headers) and the test directives SWE-bench derives from them (less documentation and data). From a
candidate's patch, never its text: the paths that differ in the tree after it applied (the container
walks the tree before and after: box/repo.py), of which those that are tests, the machinery that runs
them or the repository's .git are the row's `touches_tests` (`--strict-tests` fails such a patch). A
patch's text can hide what it does (a quoted header, a section with no header, a `patch` fallback that
writes into .git); the tree cannot. Every name is hostile: bounded, never followed, only compared."""

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


def touches_tests(changed, test_patch: str) -> list[str]:
    """Of the paths a candidate's patch changed (as the tree showed them), those that are tests, the test
    runner's configuration or the repository's .git: every file the test patch names, anything under a
    tests directory or named as a test module, conftest.py, the runner's configuration files, and anything
    under .git (its hooks and configuration run with git). Empty for a patch that only changes the code
    under test."""
    theirs = set(touched_by_both(test_patch))
    out = []
    for f in changed or ():
        if not isinstance(f, str) or len(f) > MAX_NAME:
            continue
        if f == ".git" or f.startswith(".git/") or f in theirs or _RUNNER_FILES.search(f) or _TEST_PATH.search(f):
            out.append(f)
    return out
