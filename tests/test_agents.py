"""Agents in passk's environments (harness/agents): the Docker command line's parts without the engine."""

from harness.agents.images import Catalog, bare_name


ROWS = [{"instance_id": "pytest-dev__pytest-7373", "repo": "pytest-dev/pytest"},
        {"instance_id": "sympy__sympy-20590", "repo": "sympy/sympy", "image_name": "my.registry:5000/team/sym:v3"}]


def test_an_image_name_finds_its_instance_in_every_form_the_harnesses_ask_by():
    cat = Catalog(ROWS)
    for ref in ("docker.io/swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-7373:latest",
                "swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-7373",
                "sweb.eval.x86_64.pytest-dev_1776_pytest-7373:v1",
                "docker.io/xingyaoww/sweb.eval.x86_64.pytest-dev_s_pytest-7373:latest",
                "SWEB.EVAL.X86_64.PYTEST-DEV_1776_PYTEST-7373", "sweb.eval.x86_64.pytest-dev__pytest-7373"):
        assert cat.find(ref)["instance_id"] == "pytest-dev__pytest-7373", ref
    assert cat.find("my.registry:5000/team/sym:v3")["instance_id"] == "sympy__sympy-20590"
    assert bare_name("my.registry:5000/team/sym@sha256:" + "0" * 64) == "sym"


def test_an_image_passk_does_not_know_or_cannot_be_a_name_finds_nothing():
    cat = Catalog(ROWS)
    for ref in ("sweb.eval.x86_64.pytest-dev_1776_pytest-7374", "ubuntu:22.04", "", "a b", "../../etc",
                "sweb.eval.x86_64.pytest-dev__pytest-7373\n", "x" * 600):
        assert cat.find(ref) is None, ref


def test_docker_run_and_exec_read_as_docker_reads_them():
    from harness.agents.dockercli import env_pairs, parse
    c = parse(["run", "-d", "--name", "minisweagent-1a2b3c4d", "-w", "/testbed", "--rm",
               "docker.io/swebench/sweb.eval.x86_64.a_1776_b-1:latest", "sleep", "2h"])
    assert c.command == "run" and c.options == {"detach": True, "name": "minisweagent-1a2b3c4d", "workdir": "/testbed",
                                                "rm": True}
    assert c.args == ["docker.io/swebench/sweb.eval.x86_64.a_1776_b-1:latest", "sleep", "2h"]
    c = parse(["exec", "-w", "/testbed", "-e", "PAGER=cat", "--env=BASH_ENV=/root/.bashrc", "abc123", "bash", "-c",
               "ls -la && echo -e x"])
    assert c.options == {"workdir": "/testbed", "env": ["PAGER=cat", "BASH_ENV=/root/.bashrc"]}
    assert c.args == ["abc123", "bash", "-c", "ls -la && echo -e x"]      # flags after the container are its command
    assert env_pairs(c.options["env"]) == {"PAGER": "cat", "BASH_ENV": "/root/.bashrc"}
    assert parse(["run", "-dit", "-wCWD", "img"]).options == {"detach": True, "interactive": True, "tty": True,
                                                              "workdir": "CWD"}
    assert parse(["run", "-de=K=V", "img"]).options == {"detach": True, "env": ["K=V"]}
    assert parse(["rm", "-f", "abc"]).options == {"force": True} and parse(["stop", "abc", "-t", "3"]).args == ["abc"]
    assert parse(["run", "--rm=false", "img"]).options == {"rm": False}
    assert parse(["--version"]).command == "version"


def test_what_docker_refuses_is_refused_with_its_status_and_what_passk_does_not_give_is_named():
    import pytest
    from harness.agents.dockercli import UsageError, env_pairs, parse
    for argv, status, says in ((["run", "--bogus", "img"], 125, "unknown flag: --bogus"),
                               (["run", "-dZ", "img"], 125, "unknown shorthand flag: 'Z' in -dZ"),
                               (["run", "-d"], 125, "requires at least 1 argument"),
                               (["exec", "abc"], 125, "requires at least 2 arguments"),
                               (["run", "--name"], 125, "flag needs an argument: --name"),
                               (["run", "--rm=maybe", "img"], 125, "invalid argument"),
                               (["frobnicate"], 1, "is not a docker command"),
                               (["run", "-v", "/:/host", "img"], 125, "a volume from the host"),
                               (["run", "--privileged", "img"], 125, "a privileged container"),
                               (["run", "-p", "80:80", "img"], 125, "published port"),
                               ([], 125, "Usage")):
        with pytest.raises(UsageError) as e:
            parse(argv)
        assert e.value.status == status and says in str(e.value), (argv, str(e.value))
    assert parse(["rm", "-v", "abc"]).options == {"volumes": True}          # rm's -v is not run's
    with pytest.raises(UsageError):
        env_pairs(["=x"])
    assert env_pairs(["ONLY_NAME"]) == {}                                   # the caller's own value: not passed
