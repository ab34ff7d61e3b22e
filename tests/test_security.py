"""Hostile candidates through the real Docker engine, in both isolation modes and under every runtime
the engine has: each gets its exact label and reason, and (pooled) the next candidate in the same
container finds nothing left behind."""

import pytest

from .attacks import ATTACKS, PROBE, make_job, matches

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
    if docker_backend.settings.runtime == "runsc" and attack.known_runsc:
        pytest.skip("known: " + attack.known_runsc)
    if isolation == "fresh":
        session = docker_backend.open_session()
        session.start()
        try:
            result = session.run(make_job(docker_backend.settings, attack.code, attack.timeout_s))
        finally:
            session.stop()
    else:
        get, replace = pooled
        try:
            result = get().run(make_job(docker_backend.settings, attack.code, attack.timeout_s))
        except Exception:
            replace()  # a lost container must not fail the attacks that follow it
            raise
        if not result["healthy"]:
            replace()  # what the runner does after anything abnormal
        probe = get().run(make_job(docker_backend.settings, PROBE, 2.0))
        assert (probe["status"], probe["reason"]) == ("passed", "tests_completed"), probe["detail"]
    assert matches(attack, result), (result["status"], result["reason"], result["detail"])
    assert result["status"] != "passed" or attack.status == "passed"
