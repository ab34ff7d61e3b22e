import pytest

from harness.config import Limits, SandboxSettings, override, parse_k_list
from harness.errors import InputError


def test_k_list_is_parsed_and_sorted():
    assert parse_k_list("10,1,100,1") == (1, 10, 100)


@pytest.mark.parametrize("text", ["0", "1,-2", "a", "1,,2", "1.5"])
def test_bad_k_lists_are_refused(text):
    with pytest.raises(InputError, match="whole numbers"):
        parse_k_list(text)


@pytest.mark.parametrize("field,value", [("timeout_s", 0), ("memory_mb", -1), ("pids", 0), ("cpus", float("nan"))])
def test_limits_must_be_positive(field, value):
    with pytest.raises(InputError, match=field):
        Limits(**{field: value})


def test_cpu_time_defaults_from_timeout():
    assert Limits(timeout_s=3).effective_cpu_time_s == 4
    assert Limits(timeout_s=3, cpu_time_s=1.5).effective_cpu_time_s == 2


def test_unknown_key_suggests_the_nearest():
    with pytest.raises(InputError, match="unknown key 'timout_s'.*did you mean 'timeout_s'"):
        override(Limits(), "limits", timout_s=3)


def test_sandbox_settings_are_checked():
    with pytest.raises(InputError, match="runtime"):
        SandboxSettings(runtime="kata")
    with pytest.raises(InputError, match="workers"):
        SandboxSettings(workers=0)
