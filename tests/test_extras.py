"""A command whose optional extra is not installed says which extra to install, in one line, and exits 2."""

import subprocess
import sys
import textwrap

# A child interpreter in which the extra's modules cannot be imported (a finder that refuses them), so that the
# test needs no second environment.
HIDE = textwrap.dedent("""
    import sys
    from importlib.abc import MetaPathFinder
    HIDDEN = set(sys.argv[1].split(","))
    class Hide(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None
    sys.meta_path.insert(0, Hide())
    import importlib.util
    real = importlib.util.find_spec
    importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] in HIDDEN else real(name, *a)
    from harness.cli import main
    sys.exit(main(sys.argv[2:]))
""")


def _run(hidden, *argv):
    return subprocess.run([sys.executable, "-c", HIDE, hidden, *argv], capture_output=True, text=True, timeout=120)


def test_serve_without_its_extra_names_the_extra_and_exits_2():
    done = _run("uvicorn,starlette", "serve", "--port", "0")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "pip install 'passk[serve]'" in lines[0] and "uvicorn" in lines[0]


def test_doctor_lists_each_extra_present_or_absent():
    from harness.core.extras import EXTRAS
    from harness.execution.doctor import extra_checks
    found = {c.name: c for c in extra_checks()}
    assert set(found) == {f"extra {name}" for name in EXTRAS}
    assert found["extra serve"].ok   # the test environment installs it
    done = _run("ray", "doctor")
    assert "extra ray: not installed" in done.stdout and "pip install 'passk[ray]'" in done.stdout, done.stdout
