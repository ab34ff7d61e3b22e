"""passk as an inspect_ai sandbox: `sandbox="passk"` in any inspect task (or `--sandbox passk` on inspect's
command line) runs the task's `exec`, `write_file` and `read_file` in a passk container, one per sample.

inspect finds this provider through the `inspect_ai` entry point of passk's package (pyproject.toml), so a task
needs no change and no import of passk. The contract is inspect's own (inspect_ai/util/_sandbox/environment.py);
how each part of it is met:

- A container per sample, a sandbox of passk's session layer (harness/sessions/sandbox.start, as passk-docker's
  and serve's sessions) laid out for this contract: from passk's image (or a language's, or a library
  environment's, chosen by the config below) with a `python` on its PATH: no network, a read-only root,
  every capability dropped, no-new-privileges, private IPC with small System V limits, a process limit, a
  memory limit (the processes and the files in /workspace and /tmp together), a CPU quota and a file-size
  limit. Every command runs as passk's candidate user (uid 10001), whose home and working directory is
  /workspace (a tmpfs; /tmp is another); the only other process is the session layer's keeper, PID 1
  (uid 0 of the container with the KILL capability alone: it reaps orphans, and nothing the sample runs can
  signal it).
- `exec`: the command runs under GNU timeout started by absolute path (`timeout` seconds, wall clock, as
  inspect's docker sandbox; then SIGKILL after 1 s), in a process group of its own; a timeout is
  inspect's TimeoutError (with the output so far as `truncated_output`). Each of stdout and stderr is held to
  inspect's exec output limit (10 MiB, INSPECT_SANDBOX_MAX_EXEC_OUTPUT_SIZE): a command that passes it is
  killed (its process group) and the call raises OutputLimitExceededError with what was read, instead of
  running on with its output discarded. `env` goes through Docker's exec API, never through a command.
- `write_file` and `read_file` run a fixed helper (`python3 -I -S`, by absolute path) as the same user:
  parents are created, a missing file is FileNotFoundError, a directory IsADirectoryError, a path the user may
  not write (anything outside /workspace and /tmp: the root is read-only) PermissionError, a file over inspect's
  read limit (100 MiB, INSPECT_SANDBOX_MAX_READ_FILE_SIZE) OutputLimitExceededError; text is read as UTF-8
  with its newlines kept.
- A process a command leaves behind in a session of its own (setsid) outlives the command, as in inspect's
  docker sandbox, and ends with the sample's container. Every container carries passk's labels, so
  `sample_cleanup`, `task_cleanup`, `inspect sandbox cleanup passk` and any later passk run (whose sweep
  removes containers whose process is gone) remove it.

- SWE-bench instances: with `rows` and `repos` in the config, a sample whose metadata names `instance_id` gets
  that instance's agent sandbox from passk's session layer (harness/sessions, as passk-docker and passk
  serve's sessions): its environment's image, /testbed the instance as set up (the working directory and
  where relative paths point), the repository task's limits, labels and sweep. Commands and files go
  through the same contract as above.

Config (`SandboxEnvironmentSpec("passk", PasskSandboxConfig(...))`, or a YAML file of the same fields given as
`("passk", "passk.yaml")` / `--sandbox passk:passk.yaml`, or a language's name as `("passk", "cpp")`):
language, environment, runtime (runc or runsc, gVisor), memory_mb, cpus, pids, workspace_mb, tmp_mb,
open_files; for instances rows, repos, repo_specs, repo_pins. The eval log records the config a task ran
with."""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import socket
import struct
import tempfile
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import Any, Literal, Union, overload

import anyio
from pydantic import BaseModel, ConfigDict, Field

from inspect_ai.util import (ExecResult, OutputLimitExceededError, SandboxConnection, SandboxEnvironment,
                             SandboxEnvironmentConfigType, SandboxEnvironmentLimits, SandboxUnavailableError,
                             SandboxUserUnsupportedError, sandboxenv)

from harness.core.constants import (LABEL_MANAGED, LABEL_OWNER_HOST, LABEL_OWNER_PID, LABEL_RUN,
                                    LABEL_SOURCE_HASH)
from harness.execution.sandbox.docker import LiveContainers, remove_containers_where

NAME = "passk"
UID = 10001                       # passk's candidate user (containers/Dockerfile)
USER_NAMES = {str(UID), f"{UID}:{UID}", "candidate"}
WORKSPACE = "/workspace"          # the per-sample working directory (a tmpfs)
LABEL_INSPECT = "org.passk.inspect"            # the container is an inspect sample's
KILL_AFTER_S = 1                  # SIGKILL this long after the timeout's SIGTERM
HOST_MARGIN_S = 15.0              # the host gives up on a timed command this long after its timeout
FILE_OP_TIMEOUT_S = 120           # write_file/read_file: inspect's TimeoutError after this long
EXIT_WAIT_S = 10.0                # how long the engine may take to report an ended command's exit code
PGID_DIGITS = 10                  # the wrapper's first stderr bytes: its process group, zero-padded
ENDED_WAIT_S = 2.0                # under gVisor, how long a command's signal-like exit waits to see its container end
DRAIN_S = 5.0                     # past the output limit, how long to read on for the process group (dropped)

# The command as the container runs it: a shell (by absolute path) writes its own pid, which `exec` makes
# timeout's pid and timeout's setpgid makes the group's id, to stderr before the command exists (so the
# command cannot forge it), then becomes GNU timeout; "0" is no time limit.
_WRAPPER = ["/usr/bin/sh", "-c", f'printf "%0{PGID_DIGITS}d" "$$" >&2; exec "$@"', "passk-inspect"]

# The helper behind write_file and read_file: the path in argv, the contents on stdin or stdout; an OSError's
# errno on stderr with exit 10, a file over the read limit exit 13. -I -S: no environment, no site.
_FILE_HELPER = r"""
import os, sys
op, path = sys.argv[1], sys.argv[2]
try:
    if op == "write":
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as f:
            while True:
                chunk = sys.stdin.buffer.read(1 << 20)
                if not chunk:
                    break
                f.write(chunk)
    else:
        limit = int(sys.argv[3])
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > limit:
                sys.exit(13)
            data = f.read(limit + 1)
        if len(data) > limit:
            sys.exit(13)
        sys.stdout.buffer.write(data)
except OSError as e:
    sys.stderr.write(str(e.errno or 0))
    sys.exit(10)
"""
_FILE_OSERROR, _FILE_TOO_LARGE = 10, 13

_DOCKERFILE = """ARG FROM_IMAGE
FROM ${FROM_IMAGE}
RUN if [ ! -e /usr/local/bin/python ] && [ -x /usr/bin/python3 ]; then ln -s /usr/bin/python3 /usr/local/bin/python; fi \\
 && mkdir -p /workspace
"""


class PasskSandboxConfig(BaseModel):
    """What a sample's container is: its image and its limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    language: str = "python"        # passk's image for Python, or a language's (cpp, rust, java, ...)
    environment: str | None = None  # a passk library environment for Python (bigcodebench, ...; docs/environments.md)
    runtime: Literal["runc", "runsc"] = "runc"
    memory_mb: int = Field(default=1024, gt=0, le=1 << 20)    # the sample's processes and its files, together
    cpus: float = Field(default=1.0, gt=0, le=1024)
    pids: int = Field(default=256, gt=0, le=1 << 16)
    workspace_mb: int = Field(default=256, gt=0, le=1 << 20)  # /workspace (a tmpfs)
    tmp_mb: int = Field(default=64, gt=0, le=1 << 20)         # /tmp (a tmpfs)
    open_files: int = Field(default=1024, gt=0, le=1 << 20)
    base_image: str | None = None   # the base passk's image is built on (default: passk's)
    # SWE-bench instances: a sample whose metadata names `instance_id` gets that instance's agent sandbox
    # (harness/sessions: its environment's image, /testbed the instance as set up) from these rows (files,
    # `:`-separated) and the repositories under `repos`; the repository task's limits apply, not the above
    rows: str | None = None
    repos: str | None = None
    repo_specs: str | None = None
    repo_pins: Literal["official", "spec"] = "official"


def load_config(config: SandboxEnvironmentConfigType | None) -> PasskSandboxConfig:
    """The config inspect hands over: None, our model, a dict of its fields, a YAML file's name, a language."""
    if config is None:
        return PasskSandboxConfig()
    if isinstance(config, PasskSandboxConfig):
        return config
    if isinstance(config, BaseModel):
        return PasskSandboxConfig(**config.model_dump())
    if isinstance(config, dict):
        return PasskSandboxConfig(**config)
    text = str(config)
    if text.endswith((".yaml", ".yml")):
        import yaml
        try:
            data = yaml.safe_load(Path(text).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as e:
            raise ValueError(f"{text}: the passk sandbox's config cannot be read ({type(e).__name__}: "
                             f"{str(e)[:200]})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{text}: the passk sandbox's config must be a mapping of "
                             f"{', '.join(PasskSandboxConfig.model_fields)}")
        try:
            return PasskSandboxConfig(**data)
        except ValueError as e:
            raise ValueError(f"{text}: {e}") from None
    return PasskSandboxConfig(language=text)


# ---- the engine and the images (blocking; called in worker threads) ----

_client_lock = threading.Lock()
_client = None
_images: dict[PasskSandboxConfig, str] = {}
_image_lock = threading.Lock()


def _docker():
    global _client
    with _client_lock:
        if _client is None:
            from harness.execution.sandbox.docker import connect
            _client = connect()
        return _client


def _settings(cfg: PasskSandboxConfig):
    from harness.inputs.config import SandboxSettings
    from harness.inputs.languages import canonical
    try:
        language = canonical(cfg.language)
    except Exception as e:
        raise ValueError(f"passk sandbox: {e}") from None
    if cfg.environment is not None and language != "python":
        raise ValueError(f"passk sandbox: an environment ({cfg.environment!r}) is for Python, not {language}")
    extra = {"base_image": cfg.base_image} if cfg.base_image else {}
    return SandboxSettings(language=language, environment=cfg.environment or "none", runtime=cfg.runtime,
                           **extra)


def image_for(cfg: PasskSandboxConfig) -> str:
    """The sample image of a config, built once: passk's image of the language (or environment) with a
    `python` on its PATH and /workspace."""
    with _image_lock:
        if cfg in _images:
            return _images[cfg]
        import docker.errors
        from harness.environments.bases import build
        from harness.execution.sandbox.docker import resolve_image
        client = _docker()
        under = resolve_image(client, _settings(cfg))
        digest = hashlib.sha256(f"{under['image_id']}\0{_DOCKERFILE}".encode()).hexdigest()
        tag = f"passk-inspect:{digest[:12]}"
        try:
            client.images.get(tag)
        except docker.errors.ImageNotFound:
            with tempfile.TemporaryDirectory(prefix="passk-inspect-") as ctx:
                Path(ctx, "Dockerfile").write_text(_DOCKERFILE)
                build(client, ctx, tag, {"FROM_IMAGE": under["image"]}, {LABEL_SOURCE_HASH: digest})
        _images[cfg] = tag
        return tag


def _labels() -> dict[str, str]:
    """An inspect sample's labels, beside the session layer's own: `inspect sandbox cleanup passk` finds it by
    them, and a later passk run's sweep removes it once this process is gone."""
    return {LABEL_MANAGED: "1", LABEL_RUN: f"inspect-{uuid.uuid4().hex}", LABEL_OWNER_PID: str(os.getpid()),
            LABEL_OWNER_HOST: socket.gethostname(), LABEL_INSPECT: "1"}


def _start_container(cfg: PasskSandboxConfig, live: "_Live") -> str:
    """A plain sample's sandbox, from the session layer (harness/sessions/sandbox.start, as passk-docker's and
    serve's) laid out as this contract says: /workspace the user's (HOME and the working directory), /tmp,
    the config's limits. `live` knows the container from its creation on."""
    from harness.inputs.config import Limits
    from harness.sessions import sandbox
    image = image_for(cfg)
    layout = sandbox.Layout(tree=WORKSPACE, tree_mb=int(cfg.workspace_mb), tmp_mb=int(cfg.tmp_mb),
                            memory_mb=int(cfg.memory_mb), cpus=float(cfg.cpus), pids=int(cfg.pids),
                            open_files=int(cfg.open_files))
    prepared = sandbox.Prepared(f"{sandbox.PLAIN}inspect-{cfg.language}"[:200], image, image, None, {}, Limits(),
                                cfg.runtime, layout)
    return sandbox.start(prepared, INSTANCE_LIFETIME_S, name=f"passk-inspect-{uuid.uuid4().hex[:12]}",
                         workdir=WORKSPACE, labels=_labels(), created=live.add)


_sessions: dict[tuple, Any] = {}
_sessions_lock = threading.Lock()
INSTANCE_LIFETIME_S = 24 * 3600     # a sample's sandbox, at most (its cleanup removes it before)


def _instance_sessions(cfg: PasskSandboxConfig):
    """harness/sessions' LocalSessions for the config's rows and repositories, one per process and config."""
    key = (cfg.rows, cfg.repos, cfg.repo_specs, cfg.repo_pins, cfg.runtime)
    with _sessions_lock:
        if key not in _sessions:
            from harness.sessions.local import LocalSessions
            if not cfg.repos:
                raise ValueError("passk sandbox: rows need repos (where the repositories are, DIR/<owner>/<name>)")
            _sessions[key] = LocalSessions.from_environ({"PASSK_ROWS": cfg.rows, "PASSK_REPOS": cfg.repos,
                                                         "PASSK_REPO_SPECS": cfg.repo_specs or "",
                                                         "PASSK_REPO_PINS": cfg.repo_pins, "PASSK_RUNTIME": cfg.runtime})
        return _sessions[key]


def _start_instance(cfg: PasskSandboxConfig, instance_id: str, live: "_Live") -> str:
    """The sandbox of the instance a sample's metadata names (made ready the first time: minutes for an
    environment image not built yet; build ahead with `passk images build --rows`)."""
    sessions = _instance_sessions(cfg)
    try:
        sessions.row(instance_id)
    except Exception as e:
        raise ValueError(f"passk sandbox: {e}") from None
    return sessions.create(instance_id, INSTANCE_LIFETIME_S, labels=_labels(), created=live.add)


def _running(cid: str, wait_s: float = 0.0) -> bool:
    """Whether the container still runs, asked again for up to `wait_s` seconds: a gVisor sandbox whose kernel
    a command's memory ended can still be listed as running when the command's exit code comes back."""
    end = time.monotonic() + wait_s
    while True:
        try:
            running = bool(_docker().api.inspect_container(cid)["State"]["Running"])
        except Exception:
            return False
        if not running or time.monotonic() >= end:
            return running
        time.sleep(0.1)


class _Live(LiveContainers):
    """The containers of one inspect eval batch that no sample's cleanup has removed yet (built with no
    arguments: inspect's per-batch state makes it)."""

    def __init__(self) -> None:
        super().__init__(_docker)


_PROCESS_LIVE = _Live()


def _live() -> _Live:
    """The batch's registry: kept on inspect's per-batch sandbox state where this inspect has it (task_init and
    task_cleanup are called once per batch, not per task, so a registry of the process would let one batch's
    cleanup remove another's containers), else the process's own."""
    try:
        from inspect_ai.util._sandbox.lifecycle import sandbox_lifecycle_state
        state = sandbox_lifecycle_state()
    except ImportError:   # an inspect without per-batch state
        state = None
    return state.get(_Live) if state is not None else _PROCESS_LIVE


def remove_where(container: str | None = None) -> int:
    """Remove the inspect samples' containers (every one, or the one whose id starts with or whose name is
    `container`): `inspect sandbox cleanup passk [id]`."""
    def doomed(labels, entry) -> bool:
        return container is None or entry["Id"].startswith(container) or any(
            n.lstrip("/") == container for n in entry.get("Names") or [])
    return remove_containers_where(_docker(), doomed, label=f"{LABEL_INSPECT}=1")


# ---- one command in a sample's container ----

class _Run:
    """One command: its exec, the socket of its streams, its process group once known; cancel() ends it."""

    def __init__(self, cid: str):
        self.cid = cid
        self.sock = None
        self.pgid: int | None = None
        self.cancelled = False

    def kill(self) -> None:
        """SIGKILL the command's process group, from a command of the same user (so it works under gVisor too)."""
        if self.pgid is None:
            return
        try:
            api = _docker().api
            e = api.exec_create(self.cid, ["/usr/bin/sh", "-c", 'kill -KILL "-$1" 2>/dev/null', "kill",
                                           str(self.pgid)], user=f"{UID}:{UID}")
            api.exec_start(e["Id"])
        except Exception:
            pass   # the container is gone: so is the command

    def cancel(self) -> None:
        self.cancelled = True
        if self.sock is not None:   # first, as in _run: the engine is not left holding unread output
            _hang_up(self.sock)
        self.kill()


def _hang_up(sock) -> None:
    """End the connection of a command's streams now. close() alone does not: the HTTP response that opened it
    still holds the socket's file, so the engine would keep writing the command's output into a full buffer, and
    a command it cannot finish copying never ends for it (nor does any later command in that container)."""
    for step in (lambda: sock.shutdown(socket.SHUT_RDWR), sock.close):
        try:
            step()
        except OSError:
            pass


class _Overflow(Exception):
    def __init__(self, kept: bytes):
        self.kept = kept


def _run(run: _Run, argv: list[str], stdin: bytes | None, workdir: str, env: dict[str, str] | None,
         timeout: int | None, limit: int) -> tuple[int, bytes, bytes, float, bool]:
    """(exit code, stdout, stderr, seconds, whether the host gave up) of `argv` under the wrapper; _Overflow
    when a stream passed `limit` bytes (the command is killed)."""
    import docker.errors
    api = _docker().api
    wrapped = [*_WRAPPER, "/usr/bin/timeout", "-k", f"{KILL_AFTER_S}s", f"{int(timeout)}s" if timeout else "0",
               *argv]
    try:
        e = api.exec_create(run.cid, wrapped, stdin=True, user=f"{UID}:{UID}", workdir=workdir,
                            environment=[f"{k}={v}" for k, v in (env or {}).items()] or None)
        started = time.monotonic()
        raw = api.exec_start(e["Id"], socket=True)
    except docker.errors.NotFound:
        raise SandboxUnavailableError("the sample's passk container is gone") from None
    except docker.errors.APIError as err:
        if "is not running" in str(err) or err.status_code == 409:
            raise SandboxUnavailableError(f"the sample's passk container is not running ({err.explanation})") from None
        raise
    sock = getattr(raw, "_sock", raw)
    run.sock = sock
    from harness.sessions.sandbox import touch
    touch(run.cid)   # the session layer's idle sweep counts from a sandbox's last command, begun or ended

    def feed():
        try:
            if stdin:
                sock.sendall(stdin)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass   # the command ended without reading it all, or was killed
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    deadline = started + timeout + HOST_MARGIN_S if timeout else None
    out, err_, head = bytearray(), bytearray(), bytearray()
    buf = b""
    gave_up = False
    overflow: bytes | None = None
    drain_until = 0.0
    if deadline is None:
        sock.settimeout(None)   # the client's own timeout would end a quiet command that has no time limit
    try:
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    gave_up = True
                    break
                sock.settimeout(left)
            try:
                chunk = sock.recv(1 << 16)
            except socket.timeout:
                gave_up = True
                break
            except OSError as e:   # cancelled (nobody reads this any more), or the engine dropped the stream
                raise SandboxUnavailableError(f"lost the command's output stream ({e})") from None
            if not chunk:
                break
            buf += chunk
            while len(buf) >= 8:
                stream, size = buf[0], struct.unpack(">I", buf[4:8])[0]
                if len(buf) < 8 + size:
                    break
                payload, buf = buf[8:8 + size], buf[8 + size:]
                if stream == 2:
                    if run.pgid is None and len(head) < PGID_DIGITS:
                        take = PGID_DIGITS - len(head)
                        head += payload[:take]
                        payload = payload[take:]
                        if len(head) == PGID_DIGITS and bytes(head).isdigit():
                            run.pgid = int(head)
                    if overflow is not None:
                        continue
                    err_ += payload
                    target = err_
                elif overflow is not None:
                    continue
                else:
                    out += payload
                    target = out
                if len(target) > limit:
                    overflow = bytes(target[:limit])
                    # the engine may deliver a flood on stdout before the wrapper's process group on stderr
                    # (two pipes, copied apart): read on, keeping nothing, until it comes, to kill the group
                    drain_until = time.monotonic() + DRAIN_S
            if overflow is not None and (run.pgid is not None or time.monotonic() > drain_until):
                break
    finally:   # first: the engine must not be left holding output nobody reads (it then never ends the command)
        _hang_up(sock)
        touch(run.cid)
    seconds = time.monotonic() - started
    if overflow is not None:
        run.kill()
        raise _Overflow(overflow)
    if gave_up:
        run.kill()
        return -1, bytes(out), bytes(err_), seconds, True
    code = None
    waited = time.monotonic() + EXIT_WAIT_S
    while time.monotonic() < waited:
        info = api.exec_inspect(e["Id"])
        if not info.get("Running"):
            code = info.get("ExitCode")
            break
        time.sleep(0.02)
    if code is None:
        raise SandboxUnavailableError("the Docker engine did not report the command's exit code")
    return int(code), bytes(out), bytes(err_), seconds, False


def _limiter() -> anyio.CapacityLimiter:
    """A thread limiter of this event loop's own (inspect may run one loop per eval), so that long commands do
    not hold anyio's default pool of 40 threads that inspect uses for other work."""
    import asyncio
    loop = asyncio.get_running_loop()
    limiter = _LIMITERS.get(loop)
    if limiter is None:
        limiter = _LIMITERS[loop] = anyio.CapacityLimiter(256)
    return limiter


_LIMITERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


async def _in_thread(fn, *args, run: _Run | None = None):
    try:
        return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True, limiter=_limiter())
    except anyio.get_cancelled_exc_class():
        if run is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(run.cancel)
        raise


def _check_text(what: str, value: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"{what} contains a NUL character")
    return value


@sandboxenv(name=NAME)
class PasskSandboxEnvironment(SandboxEnvironment):
    """A sample's passk container."""

    def __init__(self, container_id: str, config: PasskSandboxConfig, workdir: str = WORKSPACE) -> None:
        super().__init__()
        self.container_id = container_id
        self.config = config
        self.workdir = workdir      # /workspace, or an instance's /testbed

    # ---- lifecycle ----

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return PasskSandboxConfig(**config)

    @classmethod
    def default_concurrency(cls) -> int | None:
        return 2 * (os.cpu_count() or 1)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        cfg = load_config(config)
        if cfg.rows:   # instances: each made ready by its first sample (rows read once)
            await anyio.to_thread.run_sync(lambda: _instance_sessions(cfg).catalog)
            return
        await anyio.to_thread.run_sync(image_for, cfg)   # built once, before the samples

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        cfg = load_config(config)
        if cfg.rows:
            iid = (metadata or {}).get("instance_id")
            if not isinstance(iid, str) or not iid:
                raise ValueError("passk sandbox: with rows, a sample's metadata names its SWE-bench instance_id")
            cid = await anyio.to_thread.run_sync(_start_instance, cfg, iid, _live())
            return {"default": cls(cid, cfg, "/testbed")}
        cid = await anyio.to_thread.run_sync(_start_container, cfg, _live())
        return {"default": cls(cid, cfg)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        live = _live()
        for env in environments.values():
            if isinstance(env, PasskSandboxEnvironment):
                await anyio.to_thread.run_sync(live.remove, env.container_id)

    @classmethod
    async def task_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool) -> None:
        if cleanup:   # what no sample's cleanup removed (a sample cancelled as its container started, an interrupted eval)
            await anyio.to_thread.run_sync(_live().remove_all)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        await anyio.to_thread.run_sync(lambda: remove_where(container=id))

    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        if user is not None and user not in USER_NAMES:
            raise SandboxUserUnsupportedError(f"the passk sandbox runs everything as uid {UID}, not {user!r}")
        return SandboxConnection(type=NAME, container=self.container_id,
                                 command=f"docker exec -it --user {UID} --workdir {self.workdir} {self.container_id} "
                                         "bash -l")

    def default_polling_interval(self) -> float:
        return 0.2

    # ---- the contract ----

    def _path(self, path: str) -> str:
        _check_text("path", path)
        return posixpath.normpath(path if posixpath.isabs(path) else posixpath.join(self.workdir, path))

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        if user is not None and user not in USER_NAMES:
            raise SandboxUserUnsupportedError(f"the passk sandbox runs commands as uid {UID} only, not {user!r}")
        if isinstance(cmd, str) or not cmd:
            raise ValueError("cmd must be a non-empty list of strings")
        argv = [_check_text("cmd argument", a) for a in cmd]
        for key, value in (env or {}).items():
            if not _check_text("env name", key) or "=" in key:
                raise ValueError(f"env name {key[:40]!r} is empty or has '='")
            _check_text(f"env {key[:40]}", value)
        if timeout is not None and (isinstance(timeout, bool) or timeout <= 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        stdin = input.encode("utf-8") if isinstance(input, str) else input
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        run = _Run(self.container_id)
        try:
            code, out, err, seconds, gave_up = await _in_thread(
                _run, run, argv, stdin, self._path(cwd or self.workdir), env,
                None if timeout is None else max(1, int(-(-timeout // 1))), limit, run=run)
        except _Overflow as o:
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR,
                                           o.kept.decode("utf-8", "replace")) from None
        if (code >= 126 or code < 0) and not await anyio.to_thread.run_sync(
                _running, self.container_id, ENDED_WAIT_S if self.config.runtime != "runc" and code not in (126, 127)
                else 0.0):
            # the container died under the command (under gVisor, a sample past its memory ends the sandbox
            # kernel with it): the engine's words are not the command's output
            raise SandboxUnavailableError(f"the sample's passk container ended during the command (exit {code}); "
                                          f"under gVisor a sample that passes memory_mb ({self.config.memory_mb} MB) "
                                          "ends its container")
        stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        # GNU timeout's 124 (SIGTERM) or 137 (SIGKILL after it) once the time is up; a command's own 124 or a
        # memory kill's 137 before then is the command's exit code
        if timeout is not None and (gave_up or (code in (124, 137) and seconds >= timeout)):
            error = TimeoutError(f"Command timed out after {timeout} seconds")
            if stdout or stderr:
                error.truncated_output = stdout + stderr
            raise error
        return ExecResult(success=code == 0, returncode=code, stdout=stdout, stderr=stderr)

    async def _file_op(self, op: str, path: str, stdin: bytes | None, limit: int) -> bytes:
        argv = ["/usr/bin/python3", "-I", "-S", "-c", _FILE_HELPER, op, path] + ([str(limit)] if op == "read" else [])
        run = _Run(self.container_id)
        try:
            code, out, err, seconds, gave_up = await _in_thread(
                _run, run, argv, stdin, self.workdir, None, FILE_OP_TIMEOUT_S, limit + 4096, run=run)
        except _Overflow:
            code, out, err, gave_up = _FILE_TOO_LARGE, b"", b"", False
        if gave_up or code in (124, 137):
            raise TimeoutError(f"{op} of {path} timed out after {FILE_OP_TIMEOUT_S} seconds")
        if code == _FILE_TOO_LARGE:
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
        if code == _FILE_OSERROR:
            number = int(err) if err.strip().isdigit() else errno.EIO
            if number in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise PermissionError(number, os.strerror(number), path)
            raise OSError(number, os.strerror(number), path)   # its subclass: FileNotFoundError, IsADirectoryError, ...
        if code != 0:
            raise SandboxUnavailableError(f"the passk sandbox's file helper failed (exit {code}): "
                                          f"{err.decode('utf-8', 'replace')[-300:]}")
        return out

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode("utf-8") if isinstance(contents, str) else bytes(contents)
        await self._file_op("write", self._path(file), data, 0)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> Union[str | bytes]:
        data = await self._file_op("read", self._path(file), None, SandboxEnvironmentLimits.MAX_READ_FILE_SIZE)
        return data.decode("utf-8") if text else data
