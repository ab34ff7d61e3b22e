import pytest

from harness.inputs.config import Limits, SandboxSettings, parse_k_list
from harness.core.errors import InputError


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


def test_sandbox_settings_are_checked():
    with pytest.raises(InputError, match="runtime"):
        SandboxSettings(runtime="kata")
    with pytest.raises(InputError, match="workers"):
        SandboxSettings(workers=0)
    with pytest.raises(InputError, match="transport must be one of auto, socket, attach"):
        SandboxSettings(transport="tcp")


@pytest.mark.parametrize("name,ok", [("runc", True), ("runsc", True), ("runsc-systrap", True), ("runsc-ptrace", True),
                                     ("kata", False), ("runsc-", False), ("runsc-../x", False), ("runsc systrap", False)])
def test_a_gvisor_runtime_may_be_a_registered_variant(name, ok):
    from harness.core.constants import runtime_ok
    assert runtime_ok(name) is ok
    if not ok:
        with pytest.raises(InputError, match="runtime"):
            SandboxSettings(runtime=name)


def test_a_gvisor_runtimes_version_and_platform_are_read_from_its_registration():
    from harness.execution.sandbox.docker import runtime_detail
    assert runtime_detail({"path": "/no/such/runsc", "runtimeArgs": ["--platform=systrap", "--network=none"]},
                          local=False) == "runsc version unknown (a remote engine's), platform systrap"
    assert runtime_detail({"path": "/no/such/runsc", "runtimeArgs": ["--network=none"]}, local=True) == \
        "runsc version unknown (its binary did not answer), platform ptrace (its default)"


def _write(tmp_path, text):
    p = tmp_path / "run.yaml"
    p.write_text(text)
    return p


def test_yaml_config_resolves_paths_and_precedence(tmp_path):
    from harness.inputs.config import load_config
    p = _write(tmp_path, "problems: p.jsonl\nsamples: s.jsonl\nout: out\nk: [1, 5]\n"
                         "limits: {timeout_s: 2, memory_mb: 256}\nsandbox: {workers: 3}\n"
                         "generation: {model: m1, temperature: 0.8}\n")
    cfg = load_config(str(p), sets=["limits.timeout_s=5"], overrides={"out": "elsewhere"})
    assert cfg.problems == str(tmp_path / "p.jsonl") and cfg.out == "elsewhere"
    assert cfg.limits.timeout_s == 5 and cfg.limits.memory_mb == 256 and cfg.sandbox.workers == 3
    assert cfg.k == (1, 5) and cfg.generation == {"model": "m1", "temperature": 0.8}
    assert load_config(str(p)).out == str(tmp_path / "out")


@pytest.mark.parametrize("text,fragment", [
    ("problems: p\nsamples: s\nout: o\nlimits: {timout_s: 2}\n", "unknown key 'timout_s' (did you mean 'timeout_s'?)"),
    ("problems: p\nsamples: s\nout: o\nsandbx: {}\n", "unknown key 'sandbx' (did you mean 'sandbox'?)"),
    ("problems: p\nsamples: s\nout: o\nlimits: {memory_mb: -5}\n", "memory_mb must be a positive number"),
    ("problems: p\nsamples: s\nout: o\nlimits: {memory_mb: '512'}\n", "memory_mb must be a positive number"),
    ("problems: p\nsamples: s\nout: o\nk: [0]\n", "k must be whole numbers"),
    ("problems: p\nsamples: s\nout: o\nscoring: {k_policy: bogus}\n", "scoring: k policy must be one of"),
    ("problems: p\nsamples: s\nout: o\nscoring: {ks: [1]}\n", "unknown key 'ks'"),
    ("problems: [unclosed\n", "invalid YAML"),
    ("problems: p\nsamples: s\n", "no output directory"),
    ("", "empty config"),
])
def test_bad_configs_name_the_problem(tmp_path, text, fragment):
    from harness.inputs.config import load_config
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_config(str(p))
    assert fragment in str(e.value) and str(p) in str(e.value)


def test_yaml_does_not_execute_code(tmp_path):
    from harness.inputs.config import load_config
    p = _write(tmp_path, "problems: !!python/object/apply:os.system ['touch pwned']\nsamples: s\nout: o\n")
    with pytest.raises(InputError, match="invalid YAML"):
        load_config(str(p))


def test_set_with_unknown_key_suggests(tmp_path):
    from harness.inputs.config import load_config
    p = _write(tmp_path, "problems: p\nsamples: s\nout: o\n")
    with pytest.raises(InputError, match="did you mean 'limits'"):
        load_config(str(p), sets=["limit.timeout_s=3"])


def test_shipped_configs_load():
    from harness.inputs.config import load_config
    from .conftest import ROOT
    cfg = load_config(str(ROOT / "configs" / "demo.yaml"))
    assert cfg.problems.endswith("problems/demo/problems.jsonl") and cfg.generation["kind"] == "independent"
    assert load_config(str(ROOT / "configs" / "humaneval.yaml")).k == (1, 10, 100)


def test_ceilings_come_from_the_config_and_the_command_line_and_are_recorded(tmp_path):
    from harness.inputs.config import load_config
    from harness.inputs.untrusted import Ceilings
    p = _write(tmp_path, "problems: p\nsamples: s\nout: o\nceilings: {time_limit_s: 120, memory_mb: 8192}\n")
    cfg = load_config(str(p))
    assert cfg.ceilings.time_limit_s == 120 and cfg.ceilings.memory_mb == 8192
    assert cfg.to_dict()["ceilings"]["time_limit_s"] == 120          # the manifest's config records them
    assert Ceilings.parse(["tests=5", "output_mb=64"]).tests == 5
    for bad in (["tests"], ["nope=1"], ["time_limit_s=x"], ["time_limit_s=-1"], ["time_limit_s=inf"]):
        with pytest.raises(InputError):
            Ceilings.parse(bad)
    with pytest.raises(InputError, match="ceilings: unknown key 'time_limit'"):
        load_config(str(_write(tmp_path, "problems: p\nsamples: s\nout: o\nceilings: {time_limit: 5}\n")))


def test_a_config_alias_bomb_is_refused_not_expanded(tmp_path):
    # regression (issue 43): a billion-laughs document held gigabytes and hung
    from harness.inputs.config import load_config
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    p = _write(tmp_path, "\n".join(lines) + "\nproblems: p\nsamples: s\nout: o\n")
    with pytest.raises(InputError, match="alias bomb"):
        load_config(str(p))
