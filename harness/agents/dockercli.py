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
