import json
import os
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_PROBLEMS = ROOT / "problems" / "demo" / "problems.jsonl"
DEMO_SAMPLES = ROOT / "problems" / "demo" / "samples.jsonl"
HUMANEVAL = ROOT.parent / "shared" / "data" / "HumanEval.jsonl.gz"


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def interrupt_after_rows(cmd, results: Path, rows: int = 20, timeout: float = 120.0):
    """Run a passk command, send it SIGINT (Ctrl-C) once `results` holds `rows` rows; (exit code, its
    stderr, the rows kept)."""
    import signal
    import subprocess
    import time
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (not results.exists() or results.read_text().count("\n") < rows):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err, results.read_text().count("\n")


@pytest.fixture
def jsonl(tmp_path):
    def make(name, rows):
        return write_jsonl(tmp_path / name, rows)
    return make


@pytest.fixture(scope="session")
def box():
    """passk's in-container package, imported on the host for its pure parts (codec, labels, clean-up)."""
    import importlib
    package = importlib.import_module("harness.containers.box")
    for name in ("candidate", "channels.base", "channels.proxy", "build", "cleanup", "codec", "forkserver", "framing",
                 "layout", "procs", "supervisor", "tester", "text", "warmup", "watch"):
        importlib.import_module(f"harness.containers.box.{name}")
    return package


def _registered_runtimes():
    from harness.execution.sandbox.docker import connect
    return set((connect().info().get("Runtimes") or {}).keys())


@pytest.fixture(scope="session", params=["runc", "runsc"])
def docker_backend(request):
    """A real Docker backend (never a mock), under each runtime the engine has. Fails, not skips,
    when no engine answers: scripts/test.sh starts one."""
    from harness.inputs.config import Limits, SandboxSettings
    from harness.execution.sandbox.docker import DockerBackend

    if request.param != "runc" and request.param not in _registered_runtimes():
        pytest.skip(f"runtime {request.param} is not registered with this Docker engine")
    backend = DockerBackend("test-" + uuid.uuid4().hex, Limits(timeout_s=2.0, memory_mb=256),
                            SandboxSettings(workers=1, runtime=request.param))
    backend.prepare()
    yield backend
    backend.close()


@pytest.fixture
def run_job(docker_backend):
    """Run one job in a warm session of the session's backend; returns the supervisor's result."""
    sessions = []

    def run(code, test="def check(candidate):\n    assert candidate(1, 2) == 3\n", entry_point="add",
            prompt="", timeout_s=2.0, memory_mb=256, output_bytes=1 << 20, session=None):
        from harness.inputs.config import Limits
        if session is None:
            session = docker_backend.open_session()
            session.start()
            sessions.append(session)
        from harness.execution.sandbox.docker import supervisor_limits
        limits = supervisor_limits(Limits(timeout_s=timeout_s, memory_mb=memory_mb, output_bytes=output_bytes),
                                   docker_backend.settings)
        job = {"id": uuid.uuid4().hex, "code": code, "prompt": prompt, "test": test,
               "entry_point": entry_point, "limits": limits}
        return session.run(job)

    yield run
    for s in sessions:
        s.stop()


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PASSK_SKIP_DOCKER") == "1":
        skip = pytest.mark.skip(reason="PASSK_SKIP_DOCKER=1")
        for item in items:
            if "docker" in item.keywords:
                item.add_marker(skip)
