"""The part of Docker's command line an agent harness uses, read as Docker reads it. mini-swe-agent's
DockerEnvironment (and SkyRL's, which swaps the executable the same way) runs four subcommands:

    run -d --name NAME -w CWD [ARGS...] IMAGE CMD...      the container's id on stdout
    exec -w CWD [-e K=V]... ID bash -c|-lc COMMAND        the command's output and exit status
    stop ID                                               (it started the container with --rm)
    rm -f ID                                              (when stop failed)

parse() turns argv into a Call; what Docker would refuse (an unknown flag, a missing argument) is a
UsageError with Docker's message and status (125, as its flag errors are), and what passk does not do (a
published port, a volume from the host) is refused by name rather than ignored."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

STATUS_USAGE = 125          # docker's status for a flag it cannot parse (and for the daemon's refusal of a run)

# per subcommand: flag -> (its canonical name, whether it takes a value); short flags are single letters
_FLAGS: dict[str, dict[str, tuple[str, bool]]] = {
    "run": {"-d": ("detach", False), "--detach": ("detach", False), "--name": ("name", True),
            "-w": ("workdir", True), "--workdir": ("workdir", True), "-e": ("env", True), "--env": ("env", True),
            "--rm": ("rm", False), "-i": ("interactive", False), "--interactive": ("interactive", False),
            "-t": ("tty", False), "--tty": ("tty", False), "--init": ("init", False),
            "--platform": ("platform", True), "--pull": ("pull", True), "--network": ("network", True),
            "--net": ("network", True), "-m": ("memory", True), "--memory": ("memory", True),
            "--cpus": ("cpus", True), "-u": ("user", True), "--user": ("user", True),
            "--entrypoint": ("entrypoint", True), "-l": ("label", True), "--label": ("label", True),
            "--stop-timeout": ("stop_timeout", True)},
    "exec": {"-w": ("workdir", True), "--workdir": ("workdir", True), "-e": ("env", True), "--env": ("env", True),
             "-i": ("interactive", False), "--interactive": ("interactive", False), "-t": ("tty", False),
             "--tty": ("tty", False), "-u": ("user", True), "--user": ("user", True), "-d": ("detach", False),
             "--detach": ("detach", False)},
    "stop": {"-t": ("time", True), "--time": ("time", True), "-s": ("signal", True), "--signal": ("signal", True)},
    "rm": {"-f": ("force", False), "--force": ("force", False), "-v": ("volumes", False),
           "--volumes": ("volumes", False)},
    "kill": {"-s": ("signal", True), "--signal": ("signal", True)},
}
_REFUSED = {"-p": "a published port (the sandbox has no network)", "--publish": "a published port",
            "-P": "published ports", "--publish-all": "published ports",
            "-v": "a volume from the host (passk mounts nothing of the host's)", "--volume": "a volume from the host",
            "--mount": "a mount from the host", "--privileged": "a privileged container",
            "--cap-add": "an added capability", "--security-opt": "a security option of the caller's",
            "--device": "a device of the host's", "--pid": "the host's process namespace",
            "--ipc": "another IPC namespace", "--userns": "another user namespace", "--runtime": "another runtime"}
# how many arguments after the flags each needs at least (the image or a container, and exec's command)
_ARGS = {"run": 1, "exec": 2, "stop": 1, "rm": 1, "kill": 1}
_SUBCOMMANDS = tuple(_FLAGS) + ("version", "info", "ps", "inspect", "images", "pull")


class UsageError(Exception):
    """What Docker's command line would print before doing anything, and its status."""

    def __init__(self, message: str, status: int = STATUS_USAGE):
        super().__init__(message)
        self.status = status


@dataclass
class Call:
    command: str
    options: dict = field(default_factory=dict)     # canonical name -> value (a list for env and label)
    args: list[str] = field(default_factory=list)   # what follows the flags (image and command; the ids)


def _help(command: str) -> str:
    return f"See 'docker {command} --help'."


def parse(argv: list[str]) -> Call:
    """argv after the program's name, as Docker's CLI parses it: flags until the first argument for run and
    exec (the rest is the container's command, flags and all), anywhere for stop and rm."""
    if not argv:
        raise UsageError("Usage:  docker [OPTIONS] COMMAND\n" + "passk-docker answers: " + ", ".join(_SUBCOMMANDS))
    if argv[0] in ("-v", "--version"):
        return Call("version")
    command, rest = argv[0], argv[1:]
    if command.startswith("-"):
        raise UsageError(f"unknown flag: {command[:80]}\n" + "See 'docker --help'.")
    if command not in _FLAGS:
        if command in _SUBCOMMANDS:
            return Call(command, {}, rest)
        raise UsageError(f"docker: '{command[:80]}' is not a docker command.\nSee 'docker --help'", 1)
    call = Call(command)
    stop_at_first = command in ("run", "exec")
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            call.args.extend(rest[i + 1:])
            break
        if not word.startswith("-") or word == "-":
            if stop_at_first:
                call.args.extend(rest[i:])
                break
            call.args.append(word)
            i += 1
            continue
        if word.startswith("--"):              # --flag, --flag=value, --flag value
            name, eq, value = word.partition("=")
            i = _one(call, command, name, value if eq else None, rest, i, word)
        else:                                  # -d, -dit, -wCWD, -w CWD, -e=K=V: pflag's shorthand rules
            chars = word[1:]
            for j, c in enumerate(chars):
                if _takes(command, "-" + c):
                    tail = chars[j + 1:]
                    i = _one(call, command, "-" + c, tail[1:] if tail.startswith("=") else (tail or None), rest, i,
                             word)
                    break
                i = _one(call, command, "-" + c, None, rest, i, word)
        i += 1
    low = _ARGS[command]
    if len(call.args) < low:
        raise UsageError(f"\"docker {command}\" requires at least {low} argument{'s' if low > 1 else ''}.\n"
                         f"{_help(command)}")
    return call


def _takes(command: str, flag: str) -> bool:
    return _FLAGS[command].get(flag, ("", False))[1]


def _one(call: Call, command: str, flag: str, value: str | None, rest: list[str], i: int, word: str) -> int:
    """One flag (its value given, or None); the index of the last word it used."""
    if flag in _REFUSED and not (command != "run" and flag == "-v"):
        raise UsageError(f"passk-docker: {flag} asks for {_REFUSED[flag]}, which passk's sandbox does not give")
    if flag not in _FLAGS[command]:
        shown = f"flag: {flag[:80]}" if flag.startswith("--") else f"shorthand flag: '{flag[1:]}' in {word[:80]}"
        raise UsageError(f"unknown {shown}\n{_help(command)}")
    key, takes = _FLAGS[command][flag]
    if takes:
        if value is None:
            if i + 1 >= len(rest):
                raise UsageError(f"flag needs an argument: {flag}\n{_help(command)}")
            i += 1
            value = rest[i]
        if key in ("env", "label"):
            call.options.setdefault(key, []).append(value)
        else:
            call.options[key] = value
    elif value is None:
        call.options[key] = True
    elif value.lower() in ("true", "false", "1", "0"):
        call.options[key] = value.lower() in ("true", "1")
    else:
        raise UsageError(f"invalid argument \"{value[:80]}\" for \"{flag}\" flag\n{_help(command)}")
    return i


def env_pairs(values: list[str]) -> dict[str, str]:
    """`-e K=V` values as Docker takes them (`-e K` alone passes the caller's K, which passk does not: the
    sandbox gets only what is written out); a name Docker would refuse is a UsageError."""
    out = {}
    for v in values:
        key, eq, value = v.partition("=")
        if not key or "\0" in v or any(c.isspace() for c in key):
            raise UsageError(f"invalid argument \"{v[:80]}\" for \"-e, --env\" flag: variable name is invalid")
        if eq:
            out[key] = value
    return out


# ---- the program ---------------------------------------------------------------------------------------

DEFAULT_LIFETIME_S = 7200


def lifetime(command: list[str]) -> float:
    """The sandbox's lifetime from the container's command, which agent harnesses make `sleep DURATION`
    (coreutils' suffixes s, m, h, d; `infinity`): passk's longest for infinity."""
    from harness.sessions.sandbox import MAX_LIFETIME_S
    if not command:
        return DEFAULT_LIFETIME_S
    if command[0] not in ("sleep", "/bin/sleep", "/usr/bin/sleep") or len(command) != 2:
        raise UsageError("passk-docker: a sandbox's command is `sleep DURATION` (it lives that long and runs what "
                         f"`exec` asks); {' '.join(command)[:120]!r} is not")
    text = command[1].strip().lower()
    if text in ("inf", "infinity"):
        return MAX_LIFETIME_S
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(text[-1:], None)
    number = text[:-1] if unit else text
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        raise UsageError(f"sleep: invalid time interval '{command[1][:60]}'") from None
    if not seconds > 0:
        raise UsageError(f"sleep: invalid time interval '{command[1][:60]}'")
    return min(seconds, MAX_LIFETIME_S)


def _out(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _err(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


ROOT_NAMES = ("root", "0", "0:0", "root:root")


def _as_user(call: Call) -> bool:
    """Whether the call asks for root (allowed for exec, under gVisor only); another user is refused."""
    from harness.sessions.sandbox import UID
    user = call.options.get("user")
    if user in (None, "", str(UID), f"{UID}:{UID}"):
        return False
    if user in ROOT_NAMES and call.command == "exec":
        return True
    raise UsageError(f"passk-docker: commands run as passk's user ({UID}){' or, under gVisor, root' if call.command == 'exec' else ''}, "
                     f"not {user[:40]!r}")


def _wait_for_room(sessions, limit: int, patience_s: float) -> None:
    """Hold a `run` while `limit` sandboxes are running, at most `patience_s` (then Docker's error shape)."""
    deadline = time.monotonic() + patience_s
    while True:
        running = sessions.running()
        if running < limit:
            return
        if time.monotonic() >= deadline:
            raise UsageError(f"docker: Error response from daemon: passk-docker: {running} sandboxes are running, "
                             f"the most PASSK_WORKERS allows ({limit}); waited {patience_s:.0f} s for one to end")
        time.sleep(0.5)


def cmd_run(call: Call, sessions) -> int:
    from harness.sessions.local import LocalSessions, UnknownImage
    from harness.sessions.sandbox import IDLE_S
    if not call.options.get("detach"):
        raise UsageError("passk-docker: run needs -d (a sandbox runs detached; commands go through exec)")
    _as_user(call)
    if call.options.get("entrypoint"):
        raise UsageError("passk-docker: --entrypoint: a sandbox's own process is passk's")
    image, command = call.args[0], call.args[1:]
    seconds = lifetime(command)
    if isinstance(sessions, LocalSessions):
        try:
            sessions.row(image)
        except UnknownImage as e:
            _err(f"Unable to find image '{image[:200]}' locally")
            raise UsageError(f"docker: Error response from daemon: passk-docker: {e}") from None
        sessions.sweep(float(os.environ.get("PASSK_IDLE_S") or IDLE_S))   # the sandboxes of agents that died
        workers = int(os.environ.get("PASSK_WORKERS") or os.cpu_count() or 1)
        _wait_for_room(sessions, max(1, workers), float(os.environ.get("PASSK_QUEUE_S") or 100))
    try:
        cid = sessions.create(image, seconds, name=call.options.get("name"),
                              workdir=call.options.get("workdir") or "/testbed", env=env_pairs(call.options.get("env", [])))
    except UnknownImage as e:
        _err(f"Unable to find image '{image[:200]}' locally")
        raise UsageError(f"docker: Error response from daemon: passk-docker: {e}") from None
    _out((cid + "\n").encode())
    return 0


def cmd_exec(call: Call, sessions) -> int:
    ref, argv = call.args[0], call.args[1:]
    root = _as_user(call)
    found = sessions.find(ref)
    if found is None:
        raise UsageError(f"Error response from daemon: No such container: {ref[:80]}", 1)
    if not found.running:
        raise UsageError(f"Error response from daemon: container {found.id} is not running", 1)
    limit = int(os.environ.get("PASSK_EXEC_OUTPUT_BYTES") or 16 << 20)
    timeout = os.environ.get("PASSK_EXEC_TIMEOUT_S")
    code, _ = sessions.exec(found.id, argv, workdir=call.options.get("workdir") or found.workdir,
                            env=env_pairs(call.options.get("env", [])), timeout_s=float(timeout) if timeout else None,
                            limit=limit, sink=_out, **({"root": True} if root else {}))
    return code


def cmd_remove(call: Call, sessions) -> int:
    """stop, kill and rm: the sandbox removed; a sandbox already gone is no error (both are idempotent)."""
    status = 0
    for ref in call.args:
        found = sessions.find(ref)
        if found is None:
            if sessions.exists(ref):
                _err(f"Error response from daemon: passk-docker removes only passk's agent sandboxes, not {ref[:80]}")
                status = 1
                continue
            _out((ref + "\n").encode())
            continue
        if call.command == "rm" and not call.options.get("force") and found.running:
            _err(f"Error response from daemon: You cannot remove a running container {found.id}. Stop the "
                 "container before attempting removal or force remove")
            status = 1
            continue
        sessions.remove(found.id)
        _out((ref + "\n").encode())
    return status


def main(argv: list[str] | None = None) -> int:
    """passk-docker: Docker's run, exec, stop, kill and rm for an agent harness, answered with passk's sandbox."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        call = parse(argv)
        if call.command == "version":
            from harness.core.version import __version__
            _out(f"passk-docker {__version__} (passk's agent sandboxes: run -d, exec, stop, kill, rm)\n".encode())
            return 0
        if call.command not in ("run", "exec", "stop", "kill", "rm"):
            raise UsageError(f"passk-docker: docker {call.command} is not one passk answers (run -d, exec, stop, "
                             "kill, rm)", 1)
        from harness.sessions import open_sessions
        sessions = open_sessions()
        if call.command == "run":
            return cmd_run(call, sessions)
        if call.command == "exec":
            return cmd_exec(call, sessions)
        return cmd_remove(call, sessions)
    except UsageError as e:
        _err(str(e))
        return e.status
    except Exception as e:  # noqa: BLE001 - one line, Docker's status for a daemon's error
        from harness.core.errors import HarnessError, InputError
        if isinstance(e, (HarnessError, InputError)):
            _err(f"docker: Error response from daemon: passk-docker: {str(e)[:2000]}")
        else:
            _err(f"docker: Error response from daemon: passk-docker: {type(e).__name__}: {str(e)[:2000]}")
        return STATUS_USAGE


if __name__ == "__main__":
    sys.exit(main())
