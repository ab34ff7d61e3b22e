"""Hostile candidates through the real Docker engine, in both isolation modes and under every runtime
the engine has: each gets its exact label and reason, what it made of its result is bounded and valid,
and (pooled) the next candidate in the same container finds nothing left behind."""

import pytest

from .attacks import ATTACKS, LIBRARY_ATTACKS, PROBE, attack_job, make_job, matches, well_formed

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def pooled(docker_backend):
    holder = {"session": None}

    def get():
        if holder["session"] is None:
            holder["session"] = docker_backend.open_session()
            holder["session"].start()
        return holder["session"]

    def replace():
        holder["session"].stop()
        holder["session"] = None

    yield get, replace
    if holder["session"] is not None:
        holder["session"].stop()


@pytest.mark.parametrize("isolation", ["pooled", "fresh"])
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_gets_its_exact_label(docker_backend, pooled, attack, isolation):
    runtime = docker_backend.settings.runtime
    if runtime == "runsc" and attack.known_runsc:
        pytest.skip("known: " + attack.known_runsc)
    if isolation == "fresh":
        session = docker_backend.open_session()
        session.start()
        try:
            results = [session.run(attack_job(docker_backend.settings, attack))]
        finally:
            session.stop()
    else:
        get, replace = pooled
        results = []
        for _ in range(2 if attack.twice else 1):
            try:
                results.append(get().run(attack_job(docker_backend.settings, attack)))
            except Exception:
                replace()  # a lost container must not fail the attacks that follow it
                raise
            if not results[-1]["healthy"]:
                replace()  # what the runner does after anything abnormal
        probe = get().run(make_job(docker_backend.settings, PROBE, 2.0))
        assert (probe["status"], probe["reason"]) == ("passed", "tests_completed"), probe["detail"]
    for result in results:
        assert matches(attack, result, runtime), (result["status"], result["reason"], result["detail"][:300])
        assert well_formed(result), {k: result[k][:200] for k in ("reason", "detail")}
        assert result["status"] != "passed" or attack.expected(runtime)[0] == "passed"


@pytest.fixture(scope="module")
def environment_backends():
    """runc backends in BigCodeBench's environment (its image built if missing, then cached), one per
    candidate size the library attacks ask for."""
    import uuid

    from harness.inputs.config import Limits, SandboxSettings
    from harness.execution.sandbox.docker import DockerBackend
    made = {}

    def get(memory_mb, replace=False):
        if memory_mb not in made:
            backend = DockerBackend("test-" + uuid.uuid4().hex, Limits(timeout_s=2.0, memory_mb=memory_mb),
                                    SandboxSettings(workers=1, environment="bigcodebench"))
            backend.prepare()
            made[memory_mb] = (backend, None)
        backend, session = made[memory_mb]
        if session is None or replace:   # what the runner does after a job leaves its container unhealthy
            if session is not None:
                session.stop()
            session = backend.open_session()
            session.start()
            made[memory_mb] = (backend, session)
        return made[memory_mb]
    yield get
    for backend, session in made.values():
        session.stop()
        backend.close()


@pytest.mark.parametrize("attack", LIBRARY_ATTACKS, ids=[a.name for a in LIBRARY_ATTACKS])
def test_what_a_library_brings_gets_its_exact_label(environment_backends, attack):
    """The hostile suite in a library environment: memory held by numpy, memory maps, multiprocessing
    pools and shells left behind, the network, TensorFlow's threads; pooled, and the next candidate in the
    same container finds nothing left."""
    results = []
    for _ in range(2 if attack.twice else 1):
        backend, session = environment_backends(attack.memory_mb)
        results.append(session.run(attack_job(backend.settings, attack)))
        if not results[-1]["healthy"]:
            backend, session = environment_backends(attack.memory_mb, replace=True)
    for result in results:
        assert matches(attack, result), (result["status"], result["reason"], result["detail"][:300])
        assert well_formed(result)
    probe = session.run(make_job(backend.settings, PROBE, 2.0))
    assert (probe["status"], probe["reason"]) == ("passed", "tests_completed"), probe["detail"]


def test_a_run_of_every_attack_finishes_with_one_label_each(tmp_path):
    """Every attack in one shuffled run through the CLI, two workers: exit 0, no `error` row, each
    candidate labelled once with its expected label, no container left, one pass@k section."""
    import json
    import subprocess
    import sys

    import docker

    from harness.core.constants import LABEL_RUN

    from .attacks import check_attack_run, write_attack_run
    from .conftest import ROOT
    problems, samples, expected = write_attack_run(tmp_path / "in", seed=7)
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems),
                           "--samples", str(samples), "--out", str(out), "--k", "1", "--timeout-s", "5",
                           "--memory-mb", "256", "--workers", "2", "--no-progress"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert check_attack_run(out, expected) == []
    run_id = json.loads((out / "manifest.json").read_text())["run_id"]
    assert docker.from_env().containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}) == []
