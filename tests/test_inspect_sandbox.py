"""passk as an inspect_ai sandbox provider (harness/integrations/inspect_sandbox.py), run by inspect_ai's own
code: its entry-point registry finds "passk", its eval() runs tasks with its mockllm model, and the same tasks
with inspect's `local` sandbox give the same scores. The contract's errors are checked against the real engine."""

import asyncio

import pytest

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import bash
from inspect_ai.util import OutputLimitExceededError, SandboxUserUnsupportedError, sandbox
from inspect_ai.util._sandbox.limits import override_max_exec_output_size, override_max_read_file_size

from harness.integrations.inspect_sandbox import (LABEL_INSPECT, PasskSandboxConfig, PasskSandboxEnvironment,
                                                  load_config)

# Programs a model might answer with, by the prompt that asks for them; what each should score.
PROGRAMS = {
    "double": ("import sys\nn = int(sys.stdin.read())\nopen('out.txt', 'w').write(str(2 * n))\n", CORRECT),
    "off by one": ("import sys\nn = int(sys.stdin.read())\nopen('out.txt', 'w').write(str(2 * n + 1))\n", INCORRECT),
    "reads the data": ("lines = open('data/lines.txt', newline='').read().split('\\r\\n')\n"
                       "open('out.txt', 'w').write(str(6 * (len(lines) - 1) + 12))\n", CORRECT),
    "crashes": ("raise SystemExit('no')\n", INCORRECT),
    "loops": ("while True:\n    pass\n", INCORRECT),
    "writes then fails": ("open('out.txt', 'w').write('42')\nraise ValueError('after')\n", CORRECT),
}


def _canned(output: ModelOutput) -> ModelOutput:
    """A canned answer with its usage given (mockllm would otherwise count tokens with tiktoken, whose encoding
    it downloads from a host these machines do not reach)."""
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def _model():
    def answer(messages, tools, tool_choice, config):
        asked = messages[-1].text
        return _canned(ModelOutput.from_content(model="mockllm", content=PROGRAMS[asked][0]))
    return get_model("mockllm/model", custom_outputs=answer)


@scorer(metrics=[accuracy()])
def runs_the_program():
    """The program reads 21 on stdin (or the data file the scorer wrote) and must leave 42 in out.txt."""
    async def score(state, target):
        box = sandbox()
        await box.write_file("prog.py", state.output.completion)
        await box.write_file("data/lines.txt", "a\r\nb\r\nc\r\nd\r\ne\r\n")
        try:
            await box.exec(["python", "prog.py"], input="21\n", timeout=5)
        except TimeoutError:
            return Score(value=INCORRECT, explanation="timed out")
        try:
            out = await box.read_file("out.txt")
        except FileNotFoundError:
            return Score(value=INCORRECT, explanation="no out.txt")
        return Score(value=CORRECT if out.strip() == target.text else INCORRECT, explanation=out[:80])
    return score


def _task():
    return Task(dataset=[Sample(id=name, input=name, target="42") for name in PROGRAMS],
                solver=generate(), scorer=runs_the_program())


def _scores(log):
    assert log.status == "success", log.error
    return {s.id: s.scores["runs_the_program"].value for s in log.samples}


def _left() -> int:
    import docker
    return len(docker.from_env().containers.list(all=True, filters={"label": f"{LABEL_INSPECT}=1"}))


def test_inspect_finds_passk_through_its_entry_point():
    from inspect_ai._util.entrypoints import ensure_entry_points
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv
    ensure_entry_points()
    assert registry_find_sandboxenv("passk") is PasskSandboxEnvironment


def test_config_forms(tmp_path):
    assert load_config(None) == PasskSandboxConfig()
    assert load_config("cpp").language == "cpp"
    good = tmp_path / "passk.yaml"
    good.write_text("memory_mb: 300\npids: 32\n")
    assert load_config(str(good)) == PasskSandboxConfig(memory_mb=300, pids=32)
    bad = tmp_path / "bad.yaml"
    bad.write_text("memory_mb: -1\nshell: yes\n")
    with pytest.raises(ValueError, match="bad.yaml"):
        load_config(str(bad))
    with pytest.raises(ValueError, match="not one passk runs"):
        asyncio.run(PasskSandboxEnvironment.task_init("t", "cobol"))


@pytest.mark.docker
def test_a_task_scores_the_same_under_passk_as_under_local(tmp_path):
    expected = {name: verdict for name, (_, verdict) in PROGRAMS.items()}
    local = inspect_eval(_task(), model=_model(), sandbox="local", log_dir=str(tmp_path / "local"), display="none")
    passk = inspect_eval(_task(), model=_model(), sandbox="passk", log_dir=str(tmp_path / "passk"), display="none")
    assert _scores(local[0]) == expected
    assert _scores(passk[0]) == expected
    assert _left() == 0


@pytest.mark.docker
def test_inspects_bash_tool_runs_in_the_sample_container(tmp_path):
    def agent(messages, tools, tool_choice, config):
        if messages[-1].role == "tool":
            return _canned(ModelOutput.from_content(model="mockllm", content="done"))
        return _canned(ModelOutput.for_tool_call(
            model="mockllm", tool_name="bash", tool_arguments={"command": "id -u > who.txt; echo $((6 * 7)) > out.txt"}))

    @scorer(metrics=[accuracy()])
    def reads_it():
        async def score(state, target):
            who, out = await sandbox().read_file("who.txt"), await sandbox().read_file("out.txt")
            return Score(value=CORRECT if (who.strip(), out.strip()) == ("10001", "42") else INCORRECT,
                         explanation=f"{who!r} {out!r}")
        return score

    task = Task(dataset=[Sample(input="compute", target="42")], solver=[use_tools(bash(timeout=30)), generate()],
                scorer=reads_it())
    log = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=agent), sandbox="passk",
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    assert log.samples[0].scores["reads_it"].value == CORRECT, log.samples[0].scores["reads_it"].explanation
    assert _left() == 0


@pytest.mark.docker
def test_the_batch_cleanup_removes_what_no_sample_cleanup_did():
    """inspect calls task_cleanup once per batch with the name "shutdown", not the task's: a container whose
    sample never got to its own cleanup (cancelled as it started) is still the batch's to remove."""
    from inspect_ai.util._sandbox.lifecycle import sandbox_lifecycle_scope

    async def batch():
        with sandbox_lifecycle_scope():
            await PasskSandboxEnvironment.task_init("startup", None)
            await PasskSandboxEnvironment.sample_init("a task", None, {})
            await PasskSandboxEnvironment.sample_init("a task", None, {})
            before = _left()
            await PasskSandboxEnvironment.task_cleanup("shutdown", None, True)
            return before
    assert asyncio.run(batch()) == 2
    assert _left() == 0


async def _in_a_sample(body, config=None):
    await PasskSandboxEnvironment.task_init("contract", config)
    envs = await PasskSandboxEnvironment.sample_init("contract", config, {})
    try:
        return await body(envs["default"])
    finally:
        await PasskSandboxEnvironment.sample_cleanup("contract", config, envs, False)


LIST_PROCESSES = ["sh", "-c", "for p in /proc/[0-9]*; do [ $p = /proc/$$ ] || tr '\\0' ' ' < $p/cmdline; echo; done"]


async def _processes_after_a_kill(box, within_s: float = 5.0) -> str:
    """The sample's processes once a killed command's are gone, or after `within_s` (a SIGKILLed process can
    still be listed while the kernel ends it on a loaded machine; a command never killed, sleeping 60 s, stays)."""
    deadline = asyncio.get_running_loop().time() + within_s
    while True:
        listed = (await box.exec(LIST_PROCESSES, timeout=30)).stdout
        if ("sleep 60" not in listed and "yes" not in listed.split()) or asyncio.get_running_loop().time() > deadline:
            return listed
        await asyncio.sleep(0.2)


@pytest.mark.docker
def test_a_command_past_the_output_limit_is_killed_even_when_its_flood_comes_before_its_process_group():
    # regression: `yes & sleep 60` past the limit survived (CI, once): the engine copies stdout and stderr
    # apart, so the flood can arrive before the wrapper's process group on stderr, and the kill had no group
    async def body(box):
        left = []
        for _ in range(12):
            with override_max_exec_output_size(4096):
                with pytest.raises(OutputLimitExceededError):
                    await box.exec(["sh", "-c", "yes & sleep 60"], timeout=60)
            left.append(await _processes_after_a_kill(box))
        return left

    for after in asyncio.run(_in_a_sample(body)):
        assert "sleep 60" not in after and "yes" not in after.split(), after


@pytest.mark.docker
def test_inspects_error_contract():
    async def body(box):
        seen = {}
        try:
            await box.exec(["sh", "-c", "echo partial; sleep 60 & sleep 60"], timeout=2)
        except TimeoutError as e:
            seen["timeout"] = getattr(e, "truncated_output", "")
        with override_max_exec_output_size(4096):
            try:
                await box.exec(["sh", "-c", "yes & sleep 60"], timeout=60)
            except OutputLimitExceededError as e:
                seen["overflow"] = len(e.truncated_output)
        # nothing of either command is left; and the engine still ends commands in this container (a bug: the
        # overflowing command's connection was closed but not shut down, and no later command ever ended)
        seen["after"] = await _processes_after_a_kill(box)
        seen["own 124"] = (await box.exec(["sh", "-c", "exit 124"], timeout=30)).returncode
        await box.write_file("sub/dir/a.bin", bytes(range(256)) * 4)
        seen["binary"] = await box.read_file("sub/dir/a.bin", text=False) == bytes(range(256)) * 4
        await box.write_file("crlf.txt", "x\r\ny\n")
        seen["crlf"] = await box.read_file("crlf.txt")
        for name, call in [("missing", box.read_file("nope.txt")), ("directory", box.read_file("sub")),
                           ("outside", box.write_file("/etc/passk", "x")),
                           ("root", box.exec(["id"], user="root")),
                           ("nul", box.exec(["echo", "a\0b"])), ("env", box.exec(["true"], env={"A=B": "1"}))]:
            try:
                await call
                seen[name] = None
            except Exception as e:
                seen[name] = type(e)
        await box.write_file("big.txt", "x" * 5000)
        with override_max_read_file_size(4096):
            try:
                await box.read_file("big.txt")
            except OutputLimitExceededError:
                seen["too large"] = True
        await box.write_file("latin1.txt", b"caf\xe9")
        try:
            await box.read_file("latin1.txt")
        except UnicodeDecodeError:
            seen["not utf-8"] = True
        return seen

    seen = asyncio.run(_in_a_sample(body))
    assert seen["timeout"].startswith("partial")
    assert seen["overflow"] == 4096
    assert "sleep 60" not in seen["after"] and "yes" not in seen["after"].split(), seen["after"]
    assert seen["own 124"] == 124   # a command's own exit code is not read as a timeout
    assert seen["binary"] and seen["crlf"] == "x\r\ny\n"
    assert seen["missing"] is FileNotFoundError and seen["directory"] is IsADirectoryError
    assert seen["outside"] is PermissionError and seen["root"] is SandboxUserUnsupportedError
    assert seen["nul"] is ValueError and seen["env"] is ValueError
    assert seen["too large"] and seen["not utf-8"]
    assert _left() == 0


@pytest.mark.docker
def test_the_sample_container_is_hardened_and_bounded():
    config = PasskSandboxConfig(memory_mb=256, pids=48)

    async def body(box):
        probe = ("import os, socket\n"
                 "print(os.getuid(), os.getgid(), os.getcwd(), os.environ['HOME'])\n"
                 "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n"
                 "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=3); print('network')\n"
                 "except OSError:\n    print('no network')\n")
        who = (await box.exec(["python", "-c", probe])).stdout.split("\n")
        hog = await box.exec(["python", "-c", "x = bytearray(600 << 20)"], timeout=60)
        bomb = await box.exec(["python", "-c", "import os, time\nn = 0\ntry:\n    while True:\n        "
                                              "if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
                                              "        n += 1\nexcept OSError:\n    print(n)\n"], timeout=60)
        still = await box.exec(["echo", "still here"])
        return who, hog, bomb, still

    who, hog, bomb, still = asyncio.run(_in_a_sample(body, config))
    assert who[0] == "10001 10001 /workspace /workspace"
    assert who[1] == "0000000000000000" and who[2] == "no network"
    assert not hog.success   # the cgroup's limit ended it (137), not the machine
    assert bomb.success and int(bomb.stdout) < 48
    assert still.stdout == "still here\n"
    assert _left() == 0


@pytest.mark.docker
def test_a_quiet_command_without_a_time_limit_is_not_cut_by_the_engine_clients_timeout():
    """A bug: the exec's socket kept the Docker client's own timeout (120 s in passk; 3 s here, a real client
    with a shorter one), so a command with no time limit that printed nothing for that long was ended."""
    import docker

    from harness.integrations import inspect_sandbox

    async def body(box):
        return await box.exec(["sh", "-c", "sleep 5; echo woke"])

    saved = inspect_sandbox._client
    inspect_sandbox._client = docker.from_env(timeout=3)
    try:
        result = asyncio.run(_in_a_sample(body))
    finally:
        inspect_sandbox._client = saved
    assert result.success and result.stdout == "woke\n", result


@pytest.mark.docker
def test_a_sample_that_names_a_swe_bench_instance_gets_its_sandbox(tmp_path):
    """With rows and repos in the config, a sample whose metadata names an instance works in that instance's
    sandbox (harness/sessions'): /testbed as set up, as passk's user; inspect's bash tool edits it there, the
    scorer reads the change back and passk's diff of the sandbox is the fix; nothing is left after."""
    import json

    from harness.sessions import sandbox as sessions_sandbox
    from tests.repo_fixtures import write_task
    t = write_task(tmp_path, [None])
    config = PasskSandboxConfig(rows=str(t["rows"]), repos=str(t["repos"]), repo_specs=str(t["specs"]))
    fix = "sed -i 's|return sum(xs) / len(xs)|return sum(xs) / len(xs) if xs else 0.0|' tinycalc/__init__.py"
    diffs = []

    def agent(messages, tools, tool_choice, config):
        if messages[-1].role == "tool":
            return _canned(ModelOutput.from_content(model="mockllm", content="done"))
        return _canned(ModelOutput.for_tool_call(model="mockllm", tool_name="bash",
                                                 tool_arguments={"command": f"{fix} && id -u && pwd"}))

    @scorer(metrics=[accuracy()])
    def fixed():
        async def score(state, target):
            box = sandbox()
            text = await box.read_file("tinycalc/__init__.py")
            diffs.append(sessions_sandbox.diff(box.as_type(PasskSandboxEnvironment).container_id))
            ran = await box.exec(["bash", "-lc", "python -c 'import tinycalc; print(tinycalc.mean([]))'"])
            ok = "if xs else 0.0" in text and ran.stdout.strip() == "0.0"
            return Score(value=CORRECT if ok else INCORRECT, explanation=ran.stdout + ran.stderr)
        return score

    row = json.loads(t["rows"].read_text())
    task = Task(dataset=[Sample(input=row["problem_statement"], target="", metadata={"instance_id": row["instance_id"]})],
                solver=[use_tools(bash(timeout=60)), generate()], scorer=fixed(), sandbox=("passk", config))
    log = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=agent), log_dir=str(tmp_path / "logs"),
                       display="none")[0]
    assert log.status == "success", log.error
    sample = log.samples[0]
    assert sample.scores["fixed"].value == CORRECT, sample.scores["fixed"].explanation
    tool_output = [m.text for m in sample.messages if m.role == "tool"][0]
    assert tool_output.split() == ["10001", "/testbed"], tool_output
    assert "+    return sum(xs) / len(xs) if xs else 0.0" in diffs[0], diffs
    assert not [c for c in sessions_sandbox.listing() if c["instance"] == row["instance_id"]]


@pytest.mark.docker
def test_a_plain_sample_is_a_session_sandbox_its_commands_keep_alive():
    """A plain sample's container is the session layer's sandbox (the one passk-docker and serve's sessions
    start), laid out for inspect: listed among the agent sandboxes, its PID 1 the keeper no command can
    signal; and every command counts as activity, so the session layer's idle sweep (another passk-docker's
    or serve's, `passk doctor`) does not take a sample that is in use (a bug: the provider's commands did not
    count, and a sample idle by that measure for an hour was swept under inspect's feet)."""
    import os
    import time

    from harness.sessions import sandbox as sessions_sandbox

    async def body(box):
        cid = box.container_id
        os.utime(sessions_sandbox._activity(cid), (time.time() - 7200, time.time() - 7200))
        before = [c for c in sessions_sandbox.listing() if c["id"] == cid]
        killed = await box.exec(["sh", "-c", "kill -9 1; echo $?"])
        after = [c for c in sessions_sandbox.listing() if c["id"] == cid]
        swept = sessions_sandbox.sweep(idle_s=600)
        alive = await box.exec(["echo", "alive"])
        return before, killed, after, swept, alive

    before, killed, after, swept, alive = asyncio.run(_in_a_sample(body))
    assert before and before[0]["instance"].startswith("plain:inspect") and before[0]["idle_s"] >= 7000
    assert killed.stdout.strip() != "0"
    assert after and after[0]["idle_s"] < 600
    assert not [c for c in swept if c["id"] == before[0]["id"]]
    assert alive.stdout == "alive\n"
    assert _left() == 0
