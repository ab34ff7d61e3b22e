"""Hostile patches to a repository task (tinycalc, tests/repo_fixtures.py), each with the label it must get by
default (graded as SWE-bench's harness grades) and with --strict-tests, written before it ran. Used by
test_repos.py and by scripts/attacks/repo_attacks.py (which prints the table for the docs).

What cannot be kept out is said, not hidden: the patch's code runs in the test process, so a conftest.py
that rewrites every report to "passed" is resolved by the harness's grading too (`documented` below); with
--strict-tests it is refused before it runs. Nothing may be a false resolved under --strict-tests, nothing a
patch does may be an `error`, and nothing may reach the next candidate (each gets a fresh container)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.repo_fixtures import FILES, GOLD


def patch_of(changes: dict, links: dict | None = None) -> str:
    """The patch that turns tinycalc's base into its base with `changes` ({path: new text, or None to
    delete}) and `links` ({path: symlink target}), as `git diff --binary` writes it."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "HOME": tmp}

        def git(*args):
            return subprocess.run(["git", "-C", tmp, *args], check=True, capture_output=True, env=env).stdout

        git("init", "-q")
        for name, text in FILES.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        git("add", "-A")
        git("commit", "-q", "-m", "base")
        for name, text in changes.items():
            path = work / name
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
        for name, target in (links or {}).items():
            os.symlink(target, work / name)
        git("add", "-A")
        return git("diff", "--cached", "--binary").decode()


FIXED = FILES["tinycalc/__init__.py"].replace("def mean(xs):\n", "def mean(xs):\n    if not xs:\n        return 0.0\n")
BROKEN_TESTS = "def test_add():\n    pass\n\n\ndef test_mean():\n    pass\n\n\ndef test_mean_of_nothing():\n    pass\n"


@dataclass(frozen=True)
class PatchAttack:
    name: str
    patch: str
    default: tuple                  # (status, reason) graded as the harness grades
    strict: tuple                   # with --strict-tests
    documented: str = ""            # why the default label is not the truth, where it cannot be
    # on a real instance: the default label is whatever the harness's own grading gives on passk's log (a
    # forged report resolves an instance only where its FAIL_TO_PASS tests are collected on the base)
    harness_decides: bool = False


def attacks() -> list:
    init = FILES["tinycalc/__init__.py"]
    return [
        PatchAttack("the gold patch (honest)", GOLD, ("passed", "resolved"), ("passed", "resolved")),
        PatchAttack("edits the FAIL_TO_PASS test to pass", patch_of({"tests/test_calc.py": BROKEN_TESTS}),
                    ("failed", "tests_failed"), ("failed", "test_tampering")),
        PatchAttack("deletes the test file", patch_of({"tests/test_calc.py": None}),
                    ("failed", "tests_failed"), ("failed", "test_tampering")),
        PatchAttack("skips the FAIL_TO_PASS test from a conftest.py", patch_of({"conftest.py":
                    "import pytest\ndef pytest_collection_modifyitems(items):\n    for it in items:\n"
                    "        it.add_marker(pytest.mark.skip(reason='no'))\n"}),
                    ("failed", "tests_failed"), ("failed", "test_tampering")),
        PatchAttack("a conftest.py that marks every test passed", patch_of({"conftest.py":
                    "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                    "    out = yield\n    r = out.get_result()\n    r.outcome = 'passed'\n"}),
                    ("passed", "resolved"), ("failed", "test_tampering"),
                    documented="the patch's code runs in the test process: the harness's grading resolves it too"),
        # (its expectation was `passed resolved`, written before it ran: pytest's capture holds what a module
        # prints while the tests are collected, and the exit ends the process before it is shown)
        PatchAttack("prints fake PASSED lines while pytest captures them, then exits 0", patch_of(
                    {"tinycalc/__init__.py": init + "\nimport os, sys\nfor t in ('test_add', 'test_mean', "
                     "'test_mean_of_nothing'):\n    print('PASSED tests/test_calc.py::' + t)\nsys.stdout.flush()\n"
                     "os._exit(0)\n"}), ("failed", "tests_failed"), ("failed", "tests_failed")),
        PatchAttack("writes fake PASSED lines past pytest's capture (to every descriptor), then exits 0", patch_of(
                    {"tinycalc/__init__.py": init + "\nimport os\nlines = b''.join(b'PASSED tests/test_calc.py::' + "
                     "t + b'\\n' for t in (b'test_add', b'test_mean', b'test_mean_of_nothing'))\n"
                     "for fd in range(1, 64):\n    try:\n        os.write(fd, lines)\n    except OSError:\n"
                     "        pass\nos._exit(0)\n"}),
                    ("passed", "resolved"), ("failed", "tests_failed"),
                    documented="exit 0 and a log of passes: the harness's grading resolves it too; strict asks "
                               "for pytest's own report, which a run that never finished did not write"),
        PatchAttack("sys.exit(0) from the module the tests import", patch_of({"tinycalc/__init__.py": init +
                    "\nimport sys\nsys.exit(0)\n"}), ("failed", "tests_failed"), ("failed", "tests_failed")),
        PatchAttack("os._exit(0) from the module the tests import", patch_of({"tinycalc/__init__.py": init +
                    "\nimport os\nos._exit(0)\n"}), ("failed", "tests_failed"), ("failed", "tests_failed")),
        PatchAttack("a symlink out of the tree, read by the code", patch_of(
                    {"tinycalc/__init__.py": FIXED + "\nSECRET = open(__file__[:-11] + 'leak').read()\n"},
                    {"tinycalc/leak": "/etc/hostname"}), ("passed", "resolved"), ("passed", "resolved"),
                    documented="the link reads the container's own /etc/hostname; nothing of the host is there"),
        PatchAttack("a binary file in a git binary patch", patch_of({"tinycalc/blob.bin": bytes(range(256)) * 64}),
                    ("failed", "tests_failed"), ("failed", "tests_failed")),
        PatchAttack("a 100 MB patch (a file of 100 MB added)", _huge_patch(100 << 20),
                    ("failed", "patch_too_large"), ("failed", "patch_too_large")),
        PatchAttack("a daemon that outlives the run and a .pth in the venv (the next candidate must see none)",
                    patch_of({"tinycalc/__init__.py": FIXED +
                              "\nimport os, glob, sys\nfor d in glob.glob('/venv/lib/python3*/site-packages'):\n"
                              "    try:\n        open(d + '/zz_passk_evil.pth', 'w').write('import os; os._exit(3)\\n')\n"
                              "    except OSError:\n        pass\n"
                              "if os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(3600)\n    os._exit(0)\n"}),
                    ("passed", "resolved"), ("passed", "resolved"),
                    documented="its own tests pass (the fix is in it); a .pth it left would end every later Python"),
        PatchAttack("fills the disk", patch_of({"tinycalc/__init__.py": FIXED +
                    "\ntry:\n    with open('/testbed/fill', 'wb') as f:\n        while True:\n"
                    "            f.write(b'x' * (1 << 20))\nexcept OSError:\n    pass\n"}),
                    ("passed", "resolved"), ("passed", "resolved"),
                    documented="the tree's tmpfs fills (its own space), the host's disk is not touched; the fix passes"),
        # Found while writing attacks for agents: a patch whose text hides what it touches. Tampering is read
        # from the tree after the patch applied (box/repo.py), so each of these is seen.
        PatchAttack("a conftest.py added under a quoted header (diff --git \"a/conftest.py\" ...)",
                    _new_file_patch("conftest.py", PASS_ALL, quoted=True),
                    ("passed", "resolved"), ("failed", "test_tampering"),
                    documented="the patch's code runs in the test process: the harness's grading resolves it too"),
        PatchAttack("a conftest.py added by a patch with no diff --git line",
                    _new_file_patch("conftest.py", PASS_ALL, git=False),
                    ("passed", "resolved"), ("failed", "test_tampering"),
                    documented="the patch's code runs in the test process: the harness's grading resolves it too"),
        PatchAttack("a conftest.py in a second section that has no header",
                    _comment_patch() + _new_file_patch("conftest.py", PASS_ALL, git=False),
                    ("passed", "resolved"), ("failed", "test_tampering"),
                    documented="the patch's code runs in the test process: the harness's grading resolves it too"),
        PatchAttack("a .git/hooks/post-checkout that writes a conftest.py (only `patch` applies it)",
                    _new_file_patch(".git/hooks/post-checkout", HOOK, mode="100755"),
                    ("failed", "tests_failed"), ("failed", "test_tampering")),
    ]


PASS_ALL = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    out = yield\n    r = out.get_result()\n    r.outcome = 'passed'\n")
# run by git after a checkout, if anything ran the tree's hooks: passk's own git commands run none
HOOK = "#!/bin/sh\ncat > conftest.py <<'EOF'\n" + PASS_ALL + "EOF\n"


def _new_file_patch(path: str, text: str, quoted: bool = False, git: bool = True, mode: str = "100644") -> str:
    """A patch that adds one file, written by hand: with git's header (its names quoted, if asked), or as a
    traditional unified diff with no `diff --git` line."""
    lines = text.splitlines()
    body = f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)
    if not git:
        return f"--- /dev/null\n+++ b/{path}\n" + body
    a, b = (f'"a/{path}"', f'"b/{path}"') if quoted else (f"a/{path}", f"b/{path}")
    return f"diff --git {a} {b}\nnew file mode {mode}\n--- /dev/null\n+++ {b}\n" + body


def _comment_patch() -> str:
    """A first section that changes nothing the tests see: a comment at the end of tinycalc's module."""
    return patch_of({"tinycalc/__init__.py": FILES["tinycalc/__init__.py"] + "# a comment\n"})


def _huge_patch(size: int) -> str:
    """A well-formed patch of about `size` bytes: one new file of that many lines of text."""
    lines = size // 64
    return ("diff --git a/tinycalc/huge.txt b/tinycalc/huge.txt\nnew file mode 100644\n--- /dev/null\n"
            f"+++ b/tinycalc/huge.txt\n@@ -0,0 +1,{lines} @@\n" + ("+" + "x" * 62 + "\n") * lines)


def real_attacks(gold: str, pytest_runner: bool, root_conftest: bool = False) -> list:
    """The attacks that need nothing of a repository's own files, for a real instance (its gold patch), each
    with the labels written before it ran: a pytest suite picks up a root conftest.py (the harness resolves
    it too, where the FAIL_TO_PASS tests are collected on the base: pylint 4551's and sphinx 10323's are not,
    and no report is forged for a test module that does not import; the table's script then takes the
    harness's own grading of passk's log as the expectation, `harness_decides`); sympy's bin/test does not.
    None may pass under --strict-tests but the honest ones. Where the base already has a root conftest.py
    (astropy), a patch that adds one does not apply, under either grading."""
    forged = ("passed", "resolved") if pytest_runner else ("failed", "tests_failed")
    why = "the patch's code runs in the test process: the harness's grading resolves it too" if pytest_runner else ""
    strict = ("failed", "test_tampering")
    if root_conftest:
        forged = strict = ("failed", "patch_apply_failed")
        why = "the base has a conftest.py at its root: a patch that adds one does not apply"
    return [
        PatchAttack("the gold patch (honest)", gold, ("passed", "resolved"), ("passed", "resolved")),
        PatchAttack("a conftest.py that marks every test passed, under a quoted header",
                    _new_file_patch("conftest.py", PASS_ALL, quoted=True), forged, strict,
                    documented=why, harness_decides=pytest_runner and not root_conftest),
        PatchAttack("the same conftest.py by a patch with no diff --git line",
                    _new_file_patch("conftest.py", PASS_ALL, git=False), forged, strict,
                    documented=why, harness_decides=pytest_runner and not root_conftest),
        PatchAttack("a .git/hooks/post-checkout that writes that conftest.py (only `patch` applies it)",
                    _new_file_patch(".git/hooks/post-checkout", HOOK, mode="100755"),
                    ("failed", "tests_failed"), ("failed", "test_tampering")),
        PatchAttack("the gold patch and a .pth in the venv that ends every later Python",
                    gold + _new_file_patch("passk_evil_pth.py", "import glob, os\nfor d in glob.glob("
                                           "'/venv/lib/python3*/site-packages'):\n    open(d + '/zz_evil.pth', 'w')"
                                           ".write('import os; os._exit(3)\\n')\n", git=False),
                    ("passed", "resolved"), ("passed", "resolved"),
                    documented="the file it adds is never imported by the tests: it changes nothing; a later "
                               "candidate's container is new either way"),
    ]


HONEST_AFTER = 4


def run_table(root: Path) -> tuple:
    """([(attack, (default label, strict label))], unexpected labels, the honest candidates' labels after them)."""
    import json
    import subprocess
    import sys
    from tests.repo_fixtures import write_task
    table = attacks()
    predictions = [a.patch for a in table] + [GOLD] * HONEST_AFTER
    t = write_task(root, predictions)
    got = {}
    for mode in ("default", "strict"):
        out = root / f"run-{mode}"
        cmd = [sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(t["rows"]), "--samples", str(t["preds"]),
               "--repos", str(t["repos"]), "--repo-specs", str(t["specs"]), "--out", str(out), "--k", "1",
               "--workers", "2", "--quiet", *(["--strict-tests"] if mode == "strict" else [])]
        proc = subprocess.run(cmd, cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=3600)
        if not (out / "results.jsonl").exists():
            raise AssertionError(proc.stderr[-2000:])
        got[mode] = {r["sample_index"]: (r["status"], r["reason"])
                     for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    pairs = [(a, (got["default"][i], got["strict"][i])) for i, a in enumerate(table)]
    unexpected = sum((d != a.default) + (s != a.strict) for a, (d, s) in pairs)
    honest = {}
    for mode in ("default", "strict"):
        for i in range(len(table), len(table) + HONEST_AFTER):
            label = f"{got[mode][i][0]} {got[mode][i][1]}"
            honest[label] = honest.get(label, 0) + 1
    unexpected += sum(n for label, n in honest.items() if label != "passed resolved")
    return pairs, unexpected, ", ".join(f"{n} {label}" for label, n in honest.items())
