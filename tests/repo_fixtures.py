"""A small repository written for the tests (never a fetched one): `tinycalc`, a Python package with a pytest
suite, as a git repository under DIR/passk-tests/tinycalc, and SWE-bench rows and predictions for it. Its
environment's spec (Python 3.11, pytest, an editable install) is the run's own (--repo-specs), so CI builds
it on the base image it already has.

The task: `tinycalc.mean([])` raises ZeroDivisionError; the fix returns 0.0. The test patch adds
test_mean_of_nothing (FAIL_TO_PASS); test_add and test_mean are PASS_TO_PASS."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

REPO = "passk-tests/tinycalc"
VERSION = "1.0"          # Python 3.11: Debian bookworm's base
VERSION_39 = "0.9"       # Python 3.9: Debian bullseye's (every real SWE-bench repository's but flask 2.3)
VERSION_COPY = "1.0-copy"   # a non-editable install
VERSION_SDIST = "1.0-sdist"   # a pinned package that publishes no wheel (an sdist only)
SPECS = {"repositories": {REPO: {"parser": "pytest", "versions": {
    VERSION: {"python": "3.11", "packages": "", "pip_packages": ["pytest==8.3.3"],
              "install": "python -m pip install -e .", "test_cmd": "pytest -rA"},
    VERSION_39: {"python": "3.9", "packages": "", "pip_packages": ["pytest==8.3.3"],
                 "install": "python -m pip install -e .", "test_cmd": "pytest -rA"},
    # an install that copies the code (requests' `pip install .`), and tests that import the installed copy
    VERSION_COPY: {"python": "3.11", "packages": "", "pip_packages": ["pytest==8.3.3"],
                   "install": "python -m pip install .", "test_cmd": "pytest -rA --import-mode=importlib"},
    VERSION_SDIST: {"python": "3.11", "packages": "", "pip_packages": ["pytest==8.3.3", "atomicwrites==1.4.1"],
                    "install": "python -m pip install -e .", "test_cmd": "pytest -rA"}}}}}
FILES = {
    "setup.py": "from setuptools import setup\nsetup(name='tinycalc', version='0.1', packages=['tinycalc'])\n",
    "tinycalc/__init__.py": "def add(a, b):\n    return a + b\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n",
    "tests/test_calc.py": "from tinycalc import add, mean\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
                          "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
}
GOLD = """diff --git a/tinycalc/__init__.py b/tinycalc/__init__.py
--- a/tinycalc/__init__.py
+++ b/tinycalc/__init__.py
@@ -3,4 +3,6 @@ def add(a, b):
 
 
 def mean(xs):
+    if not xs:
+        return 0.0
     return sum(xs) / len(xs)
"""
TEST_PATCH = """diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -7,3 +7,7 @@ def test_add():
 
 def test_mean():
     assert mean([1, 2, 3]) == 2
+
+
+def test_mean_of_nothing():
+    assert mean([]) == 0.0
"""
# the fix, with a new dependency: setup.py asks for six and the module imports it (the harness installs again
# after the patch, from the index; offline, the environment's wheels must hold what the gold patch adds)
GOLD_WITH_DEP = GOLD + """diff --git a/setup.py b/setup.py
--- a/setup.py
+++ b/setup.py
@@ -1,2 +1,3 @@
 from setuptools import setup
-setup(name='tinycalc', version='0.1', packages=['tinycalc'])
+setup(name='tinycalc', version='0.1', packages=['tinycalc'],
+      install_requires=['six==1.16.0'])
"""
# a patch that breaks what passed: add subtracts
BREAKS = """diff --git a/tinycalc/__init__.py b/tinycalc/__init__.py
--- a/tinycalc/__init__.py
+++ b/tinycalc/__init__.py
@@ -1,5 +1,5 @@
 def add(a, b):
-    return a + b
+    return a - b
 
 
 def mean(xs):
"""
# a patch for another file's text: applies with none of the chain
NOT_APPLYING = """diff --git a/tinycalc/__init__.py b/tinycalc/__init__.py
--- a/tinycalc/__init__.py
+++ b/tinycalc/__init__.py
@@ -1,2 +1,2 @@
-def multiply(a, b):
-    return a * b
+def multiply(a, b):
+    return b * a
"""
# a patch that deletes the test the task needs and makes the rest pass trivially
EDITS_TESTS = """diff --git a/tests/conftest.py b/tests/conftest.py
new file mode 100644
--- /dev/null
+++ b/tests/conftest.py
@@ -0,0 +1,4 @@
+import pytest
+@pytest.hookimpl(tryfirst=True)
+def pytest_runtest_call(item):
+    pass
"""


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def make_repository(root: Path) -> tuple[Path, str, str]:
    """DIR/passk-tests/tinycalc with two commits (the base, then the fix, as a later commit a patch must
    not see); (repos dir, base commit, the later commit)."""
    repos = root / "repos"
    work = repos / REPO
    work.mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    for name, text in FILES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "base")
    base = git(work, "rev-parse", "HEAD")
    subprocess.run(["git", "-C", str(work), "apply"], input=GOLD + TEST_PATCH, text=True, check=True)
    git(work, "commit", "-q", "-am", "the fix, later")
    git(work, "tag", "v9.9")
    later = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", base)
    return repos, base, later


def row(base: str, instance_id: str = "passk-tests__tinycalc-1", version: str = VERSION) -> dict:
    return {"instance_id": instance_id, "repo": REPO, "base_commit": base, "patch": GOLD, "test_patch": TEST_PATCH,
            "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_mean_of_nothing"]),
            "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_add", "tests/test_calc.py::test_mean"]),
            "version": version, "environment_setup_commit": base, "problem_statement": "mean([]) raises"}


def write_task(root: Path, predictions: list[str | None]) -> dict:
    """The repository, a rows file, a specs file and a predictions file: {repos, rows, specs, preds, base}."""
    repos, base, later = make_repository(root)
    rows = root / "rows.jsonl"
    rows.write_text(json.dumps(row(base)) + "\n")
    specs = root / "specs.json"
    specs.write_text(json.dumps(SPECS))
    preds = root / "preds.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": "passk-tests__tinycalc-1", "model_name_or_path": "t",
                                         "model_patch": p}) + "\n" for p in predictions))
    return {"repos": repos, "rows": rows, "specs": specs, "preds": preds, "base": base, "later": later}
