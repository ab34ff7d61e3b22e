"""The supervisor's pure parts (its value encoding), imported from containers/ without Docker.
Its behaviour in a container is tested in test_sandbox.py against the real engine."""

import math

import pytest


@pytest.mark.parametrize("value", [
    None, True, False, 0, -7, 2**80, -(2**64), 1.5, -0.0, float("inf"), "tëxt", "",
    [1, [2, (3, 4)]], (1,), {"a": 1, 2: [3]}, {1, 2}, frozenset({3}), b"\x00\xff", 1 + 2j, {(1, 2): {3}},
])
def test_plain_values_round_trip_exactly(supervisor_module, value):
    sup = supervisor_module
    back = sup.decode(sup.encode(value))
    assert back == value and type(back) is type(value)


def test_nan_round_trips(supervisor_module):
    assert math.isnan(supervisor_module.decode(supervisor_module.encode(float("nan"))))


def test_bool_and_int_stay_distinct(supervisor_module):
    sup = supervisor_module
    assert sup.decode(sup.encode([True, 1])) == [True, 1]
    assert [type(v) for v in sup.decode(sup.encode([True, 1]))] == [bool, int]


def test_objects_with_custom_equality_cannot_cross(supervisor_module):
    class AlwaysEqual:
        def __eq__(self, other):
            return True

    class IntSub(int):
        pass

    for value in (AlwaysEqual(), IntSub(3), [1, AlwaysEqual()], iter([1])):
        with pytest.raises(supervisor_module.Unencodable):
            supervisor_module.encode(value)


def test_malformed_data_is_refused(supervisor_module):
    for data in ({"Q": 1}, {"F": "1", "T": []}, 1.5):
        with pytest.raises(supervisor_module.Unencodable):
            supervisor_module.decode(data)


def test_supervisor_refuses_to_run_outside_its_image(tmp_path):
    """Regression: run by hand on a host, the supervisor's scrub emptied the host's /tmp."""
    import os
    import subprocess
    import sys

    from .conftest import ROOT
    marker = tmp_path / "keep-me"
    marker.write_text("x")
    env = {k: v for k, v in os.environ.items() if k != "PASSK_SANDBOX"}
    proc = subprocess.run([sys.executable, str(ROOT / "containers" / "supervisor.py"), "serve"], input="",
                          capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode != 0 and "refusing to run outside" in proc.stderr
    assert marker.exists()


def test_a_job_whose_forkserver_never_reported_is_timed_out_and_unclean(supervisor_module):
    """A fork bomb under gVisor can keep the forkserver killing past the supervisor's patience; the
    candidate gave no verdict within its time, so it is timed out, and nothing unknown is made up."""
    sup = supervisor_module
    limits = {"timeout_s": 1.0, "output_bytes": 1000, "cpu_time_s": 2}
    report = sup._unreported(100.0, limits, now=125.0)
    result = sup.compose(None, None, report, limits)
    assert (result["status"], result["reason"]) == ("timed_out", "wall_time_limit")
    assert result["wall_s"] == 1.0
    assert result["cpu_s"] is None and result["peak_memory_kb"] is None and result["stdout_bytes"] is None
    assert report["clean"] is False and report["cleanup_s"] == 24.0
    late = sup.compose({"status": "passed", "reason": "", "detail": ""}, 102.5, report, limits)
    assert late["status"] == "timed_out"  # a verdict after the time limit is not a pass


def test_the_forkservers_warm_up_goes_through_every_serving_path(supervisor_module):
    """The warm-up must exercise what candidates do (load, lookup, call, copy-back, each error path);
    if a change to the protocol broke it, candidates would silently pay for cold paths again."""
    replies = supervisor_module.warm_up()
    assert replies[0] == {"ready": True}
    assert replies[1:3] == [{"kind": "callable"}, {"kind": "missing"}]
    assert replies[3] == {"ok": True}
    assert replies[4]["ok"]["D"][0] == ["the", 2]
    assert replies[5]["mut"] == [[0, [1, 2, 3, 5]]]
    assert replies[6]["exc"]["type"] == "passk.Unencodable"
    assert replies[7]["exc"]["type"] == "TypeError"
    assert len(replies) == len(supervisor_module.WARM_UP_CALLS) + 1
