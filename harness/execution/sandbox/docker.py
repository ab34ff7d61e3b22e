"""The Docker backend: hardened containers, each running passk's supervisor.

A session is one container. Jobs go to the supervisor and results come back as lines over one socket,
so a candidate costs no Docker API round trip of its own: a unix socket the host listens on, bind-mounted
into that container alone (transport "socket"; nothing of Docker's on the path), or the supervisor's
stdin and stdout over Docker's attach stream (transport "attach": remote engines, gVisor)."""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import shutil
import socket
import subprocess
import struct
import tempfile
import threading
import time

from harness.inputs.config import Limits, SandboxSettings
from harness.core.constants import (HOST_SOCKET_ENV, TESTER_MEMORY_ENV, LABEL_MANAGED, LABEL_OWNER_HOST,
                                    LABEL_OWNER_PID, LABEL_RUN, PROTOCOL_VERSION)
from harness.core.errors import HarnessError, InputError, SandboxUnavailableError
from harness.execution.sandbox.base import Backend, Session, register_backend
from harness.execution.sandbox.images import ensure_image, ensure_language_image, ensure_project_image

# What the supervisor needs and nothing more: chown/chmod of per-job directories, removing what
# candidates left (DAC_OVERRIDE, FOWNER), dropping to the candidate and tester users, killing them.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETUID", "SETGID"]
PIDS_OVERHEAD = 16          # tini, supervisor, forkserver, leader, tester, killer
RUNSC_PIDS_BACKSTOP = 8192  # gVisor's ptrace platform keeps host stub processes per guest process
READY_TIMEOUT_S = 60.0
CONTAINER_SOCKET_DIR = "/run/passk"     # where a container sees its host socket's directory (read-only)
INSTANCES_MOUNT = "/opt/passk/instances"   # a repository environment's instance snapshots (box/repo.py)
SNAPSHOT_OUT_MOUNT = "/opt/passk/snapshot-out"   # where a snapshot job writes one
RESULT_GRACE_S = 90.0       # beyond the candidate's timeout before the session is declared dead


def _docker_module():
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is a hard dependency
        raise HarnessError(f"the Docker SDK for Python is not installed ({e})") from None
    return docker


def connect():
    docker = _docker_module()
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as e:
        raise HarnessError(f"no Docker engine answers ({type(e).__name__}: {e}); "
                           "`passk doctor` says what is missing and how to fix it") from None
    return client


def container_pids(limits: Limits, settings: SandboxSettings) -> int:
    """Under runc the cgroup pids limit is the candidate's process limit. Under gVisor the cgroup also
    counts the sandbox kernel's own host threads (one per guest thread with the ptrace platform), so it
    is only a backstop there and the candidate's limit is RLIMIT_NPROC inside the sandbox kernel,
    where uids are private to the container."""
    if settings.runtime == "runc":
        return int(limits.pids) + PIDS_OVERHEAD
    return RUNSC_PIDS_BACKSTOP


# Under gVisor the host's cgroup limit is above what the supervisor lets the sandbox hold by this much: the
# forkserver reads the sandbox's memory every few milliseconds and stops a candidate that passes the lower
# figure, before the host's OOM killer would take the whole sandbox (and every candidate in it) down.
RUNSC_MEMORY_HEADROOM_MB = 256


def _language_commands(settings: SandboxSettings) -> dict:
    from harness.inputs.languages import LANGUAGES, commands, uses_pch, uses_server
    if settings.language not in LANGUAGES:   # an image for io programs only (pypy)
        from harness.inputs.judge import io_commands
        return io_commands(settings.language)
    out = commands(settings.language, settings.commands)
    if uses_server(settings.language, settings.commands):
        out["compile_server"] = list(LANGUAGES[settings.language].server)
    if uses_pch(settings.language, settings.commands):
        header, args = LANGUAGES[settings.language].pch
        out["precompiled_header"] = {"when_included": header, "compile_args": list(args)}
    return out


def resolve_image(client, settings: SandboxSettings) -> dict:
    """The image the settings run candidates in (`image` as given, or passk's, and the language's on it),
    built if missing: {image, image_id, source_sha256, base_image, ...}."""
    if settings.image:
        docker = _docker_module()
        try:
            img = client.images.get(settings.image)
        except docker.errors.ImageNotFound:
            raise InputError(f"image {settings.image!r} is not on this machine") from None
        return {"image": settings.image, "image_id": img.id, "source_sha256": None, "base_image": None}
    if settings.repo_environment is not None:   # a repository environment: its Python's base, then its image
        from harness.inputs.repos.recipes import from_settings
        env, projects = from_settings(settings.repo_environment)
        sandbox = ensure_image(client, env.base_image)
        return repo_image(client, sandbox, env, projects)
    image = ensure_image(client, settings.base_image)
    if is_project(settings):
        return ensure_project_image(client, image, settings.project)
    if is_native(settings):
        image = ensure_language_image(client, image, settings.language)
    else:
        from harness.environments import library as environments
        from harness.inputs import libraries
        env = libraries.load(settings.environment)
        if env is not None:
            image = environments.ensure_image(client, image, env)
    return image


def is_native(settings: SandboxSettings) -> bool:
    """Whether the run's candidates are in another language than Python (compiled or run by a toolchain)."""
    return settings.language not in (None, "python")


def is_project(settings: SandboxSettings) -> bool:
    """Whether the containers are a language's project image's (box/project.py: an exercise's build and tests)."""
    return settings.project is not None


def is_repo(settings: SandboxSettings) -> bool:
    """Whether the containers are a repository environment's (box/repo.py: one candidate each)."""
    return settings.repo_environment is not None


def repo_image(client, sandbox: dict, env, projects: dict) -> dict:
    """A repository environment's image (environments/repository.py), its wheels resolved for every tree
    `projects` exports (the environment's commit's and its instances')."""
    from harness.environments.repository import ensure_image as ensure_repo_image
    return ensure_repo_image(client, sandbox, env, projects)


def sandbox_memory_mb(limits: Limits, settings: SandboxSettings) -> int:
    """What the processes of a container may hold together: Python's candidate and test process, or
    another language's compile step or program (beside which a compile server keeps what it may hold
    between jobs, so that the program's own limit is all its own), or a repository's install and tests with
    their tmpfs (the tree, the environment's copy, /tmp)."""
    if is_repo(settings):
        return int(limits.memory_mb) + 3 * int(limits.tmpfs_mb) + 256
    if is_project(settings):   # the build and tests, and the job's directory in /tmp
        return int(limits.memory_mb) + int(limits.tmpfs_mb) + 256
    if not is_native(settings):
        return limits.container_memory_mb
    from harness.inputs.languages import LANGUAGES, uses_server
    if settings.language not in LANGUAGES:
        return limits.native_container_memory_mb(0)
    server = uses_server(settings.language, settings.commands)
    return limits.native_container_memory_mb(LANGUAGES[settings.language].server_keep_mb if server else 0)


def container_memory(limits: Limits, settings: SandboxSettings) -> int:
    """The container's cgroup memory limit (a Python candidate's own limit is RLIMIT_AS, another language's
    the supervisor's watch of the cgroup; this bounds what it holds outside them). Under gVisor the sandbox
    kernel's copies of forked processes count too: a fork bomb at the process limit must not take the
    container down, so there is room for each allowed process, and the headroom above the sandbox's own
    memory watch."""
    if settings.runtime == "runc":
        return sandbox_memory_mb(limits, settings)
    return sandbox_memory_mb(limits, settings) + 8 * int(limits.pids) + RUNSC_MEMORY_HEADROOM_MB


def supervisor_limits(limits: Limits, settings: SandboxSettings) -> dict:
    """The per-candidate limits the supervisor applies inside the container. Another language's program
    and its compile step have their memory watched in the container's cgroup (job_memory_kb): the JVM, Go
    and V8 reserve address space far beyond what they use and do not start under a small RLIMIT_AS."""
    runc = settings.runtime == "runc"
    out = {**limits.for_supervisor(), "nproc": None if runc else int(limits.pids),
           "memory_watch_kb": None if runc else sandbox_memory_mb(limits, settings) * 1024}
    if is_native(settings) or is_repo(settings) or is_project(settings):
        out["job_memory_kb"] = int(limits.memory_mb) * 1024
    return out


def compile_limits(limits: Limits, settings: SandboxSettings) -> dict:
    """The compile step's limits: its own wall clock and memory; output, files and processes as the run's."""
    # a compiler's files (a static, debuggable binary; cc1plus's assembly with -g) are bounded by the job's
    # space (tmpfs), not by the program's file limit: problemtools' -g -O2 -static passes 16 MiB
    return {**supervisor_limits(limits, settings), "timeout_s": float(limits.compile_timeout_s),
            "cpu_time_s": math.ceil(limits.compile_timeout_s) + 1, "job_memory_kb": int(limits.compile_memory_mb) * 1024,
            "file_size_bytes": max(int(limits.file_size_bytes), int(limits.tmpfs_mb) << 20)}


# System V IPC objects outlive the process that made them and their memory is charged to the container:
# the IPC namespace's own limits keep what a candidate can leave small (runc applies them; gVisor ignores
# them, and there the supervisor's memory watch replaces a container that a job left holding memory).
IPC_SYSCTLS = {
    "kernel.shmmax": str(16 << 20),   # bytes per shared memory segment
    "kernel.shmall": str(8192),       # pages of shared memory in all (32 MiB)
    "kernel.shmmni": "64",            # segments
    "kernel.msgmni": "16",            # message queues (16 KiB each by default)
    "kernel.sem": "250 4096 100 64",  # per set, in all, per call, sets
}


# An overflow lane's CPU weight once its container is warm (Docker's default is 1024; the container starts
# at the default, so that a start under load is not starved): its programs run on what the workers'
# programs leave, so that they never slow a worker's program (whose wall clock would then stop it: a
# machine stall), and a quick program still gets a slice at once (1.5 % of a CPU a worker keeps busy).
OVERFLOW_CPU_SHARES = 16


def host_config(client, limits: Limits, settings: SandboxSettings) -> dict:
    docker = _docker_module()
    # No file can outgrow /tmp, the only place a candidate writes; the hard limit must still let the
    # forkserver set the candidate's own file size limit when that is the larger (a small /tmp).
    fsize_bytes = max(int(limits.tmpfs_mb) * 1024 * 1024, int(limits.file_size_bytes))
    return client.api.create_host_config(
        network_mode="none",
        read_only=True,
        # A compiled program (another language's, or a problem's checker) runs from /tmp: exec there (Docker's
        # default for a tmpfs is noexec, which was never a boundary for a Python candidate: it can map code
        # itself).
        tmpfs={"/tmp": f"rw,nosuid,nodev,exec,size={int(limits.tmpfs_mb)}m,mode=1777",
               # a repository environment's: the tree and the environment's copy, each the candidate's own
               **({d: f"rw,nosuid,nodev,exec,size={int(limits.tmpfs_mb)}m,mode=0755,uid=10001,gid=10001"
                   for d in ("/testbed", "/venv")} if is_repo(settings) else {})},
        shm_size="4m",
        cap_drop=["ALL"],
        cap_add=CAPABILITIES,
        security_opt=["no-new-privileges"],
        pids_limit=container_pids(limits, settings),
        mem_limit=f"{container_memory(limits, settings)}m",
        memswap_limit=f"{container_memory(limits, settings)}m",
        nano_cpus=int(float(limits.cpus) * 1e9),
        ulimits=[docker.types.Ulimit(name="nofile", soft=max(1024, int(limits.open_files)),
                                     hard=max(1024, int(limits.open_files))),
                 docker.types.Ulimit(name="fsize", soft=fsize_bytes, hard=fsize_bytes)],
        runtime=None if settings.runtime == "runc" else settings.runtime,
        init=True,
        ipc_mode="private",
        sysctls=IPC_SYSCTLS,
    )


def cpu_sets(limits: Limits, settings: SandboxSettings, client) -> tuple[list[str] | None, str]:
    """(the CPUs of each worker slot's containers, as Docker's cpuset strings, or None; what was chosen and
    why, for the manifest). A candidate and its tests hand over to each other many times per candidate
    (every call through the proxy, every verdict): on one CPU that is a switch between two processes; across
    two, a wake-up of the other CPU, which costs several times more (on a virtual machine, an exit to the
    hypervisor). So each slot keeps its containers to CPUs of its own (slot_cpus) where the engine is on
    this machine. The quota (`cpus`) is unchanged: pinning moves no limit, only where the work runs."""
    if settings.pin_cpus == "off":
        return None, "off (pin_cpus off)"
    if is_repo(settings):   # pylint's tests skip what needs two cores when the affinity mask holds one
        return None, "off: a repository's tests see the machine's CPUs, as under the harness (some count them)"
    if not _local_engine(client):
        return None, "off: the Docker engine is not on this machine"
    try:
        mine = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None, "off: this system does not say which CPUs a process may use"
    return slot_cpus(mine, settings.workers, float(limits.cpus))


def slot_cpus(mine: list[int], workers: int, cpus: float) -> tuple[list[str] | None, str]:
    """Each of `workers` slots gets an equal run of the CPUs `mine`, at least as many as its quota `cpus`
    needs; None (no pinning) where one slot's share would be every CPU, or the shares do not fit."""
    each = max(math.ceil(cpus), len(mine) // workers)
    if each >= len(mine):
        return None, f"off: one worker's share is every CPU this process may use ({len(mine)})"
    if each * workers > len(mine):
        return None, (f"off: {workers} workers with {each} CPU(s) each do not fit in the {len(mine)} CPUs this "
                      "process may use")
    sets = [",".join(str(c) for c in mine[i * each:(i + 1) * each]) for i in range(workers)]
    return sets, "each worker's containers on CPUs of their own: " + "; ".join(
        f"worker {i}: {s}" for i, s in enumerate(sets))


def _local_engine(client) -> bool:
    """Whether the engine runs on this machine (a unix socket): only then can it bind-mount a host path."""
    return str(getattr(client.api, "base_url", "")).startswith("http+docker://")


def choose_transport(settings: SandboxSettings, client) -> str:
    """The transport a run uses: "socket" needs a local engine and a runtime that lets a container connect
    to a host socket (runc; gVisor only with --host-uds=open, which passk does not ask of it)."""
    if settings.transport != "auto":
        if settings.transport == "socket" and not _local_engine(client):
            raise InputError("transport socket needs a Docker engine on this machine (a unix socket); "
                             "use transport attach for a remote engine")
        return settings.transport
    return "socket" if settings.runtime == "runc" and _local_engine(client) else "attach"


class _SocketChannel:
    """Lines over the unix socket the supervisor connected to (no framing of Docker's)."""

    def __init__(self, sock):
        self.sock = getattr(sock, "_sock", sock)
        self.buf = b""
        self.lines: list[bytes] = []
        self.stderr_tail = b""

    def send_line(self, data: bytes) -> None:
        self.sock.settimeout(30)
        self.sock.sendall(data + b"\n")

    def _recv(self, deadline: float) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("deadline passed")
        self.sock.settimeout(remaining)
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise EOFError("the container's stream closed")
        return chunk

    def read_line(self, deadline: float) -> bytes:
        while not self.lines:
            *complete, self.buf = (self.buf + self._recv(deadline)).split(b"\n")
            self.lines.extend(complete)
        return self.lines.pop(0)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class _Channel(_SocketChannel):
    """Line-oriented view of an attached, multiplexed (non-TTY) container stream."""

    def __init__(self, sock):
        super().__init__(sock)
        self.partial = b""

    def read_line(self, deadline: float) -> bytes:
        while not self.lines:
            while len(self.buf) < 8:
                self.buf += self._recv(deadline)
            stream, size = self.buf[0], struct.unpack(">I", self.buf[4:8])[0]
            while len(self.buf) < 8 + size:
                self.buf += self._recv(deadline)
            payload, self.buf = self.buf[8:8 + size], self.buf[8 + size:]
            if stream == 2:
                self.stderr_tail = (self.stderr_tail + payload)[-4096:]
                continue
            data = self.partial + payload
            *complete, self.partial = data.split(b"\n")
            self.lines.extend(complete)
        return self.lines.pop(0)


class DockerSession(Session):
    def __init__(self, backend: "DockerBackend", slot: int = 0, binds: tuple = ()):
        self.backend = backend
        self.slot = slot
        self.binds = list(binds)   # host directories this container mounts besides the socket's
        self.container_id: str | None = None
        self.channel: _Channel | None = None
        self.python_version: str | None = None
        self.jobs_run = 0

    def start(self) -> None:
        b = self.backend
        api = b.client.api
        listener = sock_dir = None
        try:
            config, env = b.host_config, {}
            if b.cpu_sets:
                config = dict(config, CpusetCpus=b.cpu_sets[self.slot % len(b.cpu_sets)])
            binds = list(self.binds)
            if b.instances_dir is not None:   # the environment's instance snapshots: read-only, root's only
                binds.append(f"{b.instances_dir}:{INSTANCES_MOUNT}:ro")
            if not is_native(b.settings) and not is_repo(b.settings):   # the tester starts with the container
                env[TESTER_MEMORY_ENV] = str(int(b.limits.memory_mb))
            if b.transport == "socket":
                # Owner-only (root) directory and socket, for this container alone; the listener takes one
                # connection, the supervisor's, before any candidate exists, and is closed at once.
                sock_dir = tempfile.mkdtemp(prefix="passk-sock-")
                path = os.path.join(sock_dir, "s")
                listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                listener.bind(path)
                os.chmod(path, 0o600)
                listener.listen(1)
                binds.append(f"{sock_dir}:{CONTAINER_SOCKET_DIR}:ro")
                env[HOST_SOCKET_ENV] = f"{CONTAINER_SOCKET_DIR}/s"
            if binds:
                config = dict(config, Binds=binds)
            created = api.create_container(
                b.facts["image"], stdin_open=b.transport == "attach", tty=False, user="0",
                name=f"passk-{b.run_id[:8]}-{b.name_part}-{next(b.counter)}", environment=env,
                labels=b.labels, host_config=config)
            self.container_id = created["Id"]
            b.track(self.container_id)
            if listener is None:
                sock = api.attach_socket(self.container_id,
                                         params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
                self.channel = _Channel(sock)
                api.start(self.container_id)
            else:
                api.start(self.container_id)
                listener.settimeout(READY_TIMEOUT_S)
                conn, _ = listener.accept()
                self.channel = _SocketChannel(conn)
            hello = json.loads(self.channel.read_line(time.monotonic() + READY_TIMEOUT_S))
        except Exception as e:
            detail = self._why(e)
            self.stop()
            raise SandboxUnavailableError(f"container did not start: {detail}") from None
        finally:
            if listener is not None:
                listener.close()
            if sock_dir is not None:
                shutil.rmtree(sock_dir, ignore_errors=True)
        if hello.get("event") != "ready":
            self.stop()
            raise SandboxUnavailableError(f"container sent {hello!r} instead of ready")
        if hello.get("protocol") != PROTOCOL_VERSION:
            self.stop()
            raise HarnessError(f"image {b.facts['image']} speaks protocol {hello.get('protocol')}, this passk "
                               f"{PROTOCOL_VERSION}: rebuild it (passk images build --rebuild) or use passk's own image")
        if self.slot >= b.settings.workers:   # an overflow lane, warm now: its programs get what the workers leave
            try:
                api.update_container(self.container_id, cpu_shares=OVERFLOW_CPU_SHARES)
            except Exception as e:   # a runtime that cannot change it (the lane keeps the default weight)
                b.facts.setdefault("overflow_cpu_shares", f"unchanged: {type(e).__name__}: {e}"[:200])
        self.python_version = hello.get("python")
        b.facts.setdefault("image_python", self.python_version)
        if isinstance(hello.get("toolchain"), dict):
            b.facts.setdefault("toolchain", {str(k): str(v)[:200] for k, v in hello["toolchain"].items()})

    def _why(self, e: Exception) -> str:
        text = f"{type(e).__name__}: {e}"
        tail = self.channel.stderr_tail if self.channel is not None else b""
        if not tail and self.container_id is not None and self.backend.transport == "socket":
            try:   # nothing is attached: the engine kept what the supervisor wrote
                tail = self.backend.client.api.logs(self.container_id, stdout=False, stderr=True, tail=20)
            except Exception:
                tail = b""
        if tail:
            text += " | supervisor stderr: " + tail.decode("utf-8", "replace")[-500:]
        return text

    def run(self, job: dict, line: bytes | None = None) -> dict:
        if self.channel is None:
            raise SandboxUnavailableError("session not started")
        limits = job["limits"]
        # the job's own worst case (jobs.host_wait_s) where the header says it, else its wall clock
        deadline = time.monotonic() + float(limits.get("host_wait_s", limits["timeout_s"])) + RESULT_GRACE_S
        try:
            self.channel.send_line(line if line is not None else json.dumps(job).encode())
            while True:
                msg = json.loads(self.channel.read_line(deadline))
                if msg.get("event") == "result" and msg.get("id") == job["id"]:
                    break
                if msg.get("event") == "fault":
                    raise SandboxUnavailableError(f"supervisor fault: {msg.get('detail')}")
        except SandboxUnavailableError:
            raise
        except Exception as e:
            raise SandboxUnavailableError(f"lost the container during a job: {self._why(e)}") from None
        self.jobs_run += 1
        return msg

    def kill(self) -> None:
        cid = self.container_id   # the container goes; its channel, read by run()'s thread, ends with it
        if cid is not None:
            self.backend.remove(cid)

    def stop(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.container_id is not None:
            self.backend.remove(self.container_id)
            self.container_id = None


def runtime_detail(registered: dict, local: bool) -> str:
    """What a gVisor runtime is, as a row records it: its version and its platform ('runsc 0.0~20240729.0,
    platform systrap'), read from the engine's registration and, on a local engine, the binary itself."""
    args = registered.get("runtimeArgs") or []
    platform = next((a.split("=", 1)[1] for a in args if a.startswith("--platform=")), "ptrace (its default)")
    path = registered.get("path") or ""
    version = _runsc_version(path) if local and path else "version unknown (a remote engine's)"
    return f"runsc {version}, platform {platform}"


@functools.lru_cache(maxsize=8)
def _runsc_version(path: str) -> str:
    """A runsc binary's version, asked once per process (every executor and sibling prepares a backend)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return "version unknown (its binary did not answer)"
    return out.split("\n", 1)[0].replace("runsc version ", "") or "version unknown (its binary did not answer)"


@register_backend("docker")
class DockerBackend(Backend):
    name = "docker"

    def __init__(self, run_id: str, limits: Limits, settings: SandboxSettings):
        self.run_id = run_id
        self.limits = limits
        self.settings = settings
        self.client = connect()
        self.counter = itertools.count(1)
        self.labels = {LABEL_MANAGED: "1", LABEL_RUN: run_id,
                       LABEL_OWNER_PID: str(os.getpid()), LABEL_OWNER_HOST: socket.gethostname()}
        self._live = LiveContainers(lambda: self.client)
        self.facts: dict = {}
        self.host_config = None
        self.transport = "attach"
        self.cpu_sets: list[str] | None = None
        # what a container's name says it runs: its language, or its repository environment (each sibling
        # executor has its own backend and counter: the names must not meet)
        self.name_part = (f"repo-{settings.repo_environment['key'][-10:]}" if is_repo(settings)
                          else f"project-{settings.project}" if is_project(settings)
                          else settings.language or "python")
        self.instances_dir: str | None = None

    def prepare(self) -> dict:
        info = self.client.info()
        runtimes = set((info.get("Runtimes") or {}).keys())
        if self.settings.runtime != "runc" and self.settings.runtime not in runtimes:
            raise InputError(f"runtime {self.settings.runtime!r} is not registered with the Docker engine "
                             f"(it has: {', '.join(sorted(runtimes))}); see scripts/ensure_docker.sh")
        swept = sweep(self.client)
        image = resolve_image(self.client, self.settings)
        self.transport = choose_transport(self.settings, self.client)
        self.cpu_sets, pinning = cpu_sets(self.limits, self.settings, self.client)
        self.facts = {**image, "runtime": self.settings.runtime, "isolation": self.settings.isolation,
                      **({"runtime_detail": runtime_detail((info.get("Runtimes") or {}).get(self.settings.runtime) or {},
                                                           _local_engine(self.client))}
                         if self.settings.runtime != "runc" else {}),
                      "transport": self.transport, "language": self.settings.language or "python",
                      **({"commands": _language_commands(self.settings)} if is_native(self.settings) else {}),
                      "memory_enforced": ("cgroup watch (the container's memory.stat, every 5 ms) and the container's limit"
                                          if is_native(self.settings) or is_repo(self.settings)
                                          or is_project(self.settings)
                                          else "RLIMIT_AS, and the container's limit"),
                      "docker_server_version": self.client.version().get("Version"),
                      "container_pids": container_pids(self.limits, self.settings),
                      "container_memory_mb": container_memory(self.limits, self.settings),
                      "cpu_pinning": pinning, "swept_containers": swept}
        self.host_config = host_config(self.client, self.limits, self.settings)
        if is_repo(self.settings) and _local_engine(self.client) and self.settings.repo_environment.get("snapshots", True):
            from harness.environments import instances
            self.snapshots_image_id = image["image_id"]
            self.instances_dir = str(instances.image_dir(image["image_id"]))
        if is_repo(self.settings):
            self.facts["repo_snapshots"] = ("per instance, on this machine (set up once, copied per candidate)"
                                            if self.instances_dir else "none: each candidate's container sets its "
                                            "instance up")
        return self.facts

    def open_snapshot_session(self, staging: str) -> DockerSession:
        if self.instances_dir is None:
            return super().open_snapshot_session(staging)
        return DockerSession(self, 0, binds=(f"{staging}:{SNAPSHOT_OUT_MOUNT}:rw",))

    def supervisor_limits(self, limits: Limits) -> dict:
        return supervisor_limits(limits, self.settings)

    def compile_limits(self, limits: Limits) -> dict:
        return compile_limits(limits, self.settings)

    def open_session(self, slot: int = 0) -> DockerSession:
        return DockerSession(self, slot)

    def healthy(self) -> bool:
        try:
            return bool(self.client.ping())
        except Exception:
            return False

    def track(self, cid: str) -> None:
        self._live.add(cid)

    def remove(self, cid: str) -> None:
        self._live.remove(cid)

    def close(self) -> None:
        self._live.remove_all()


class LiveContainers:
    """The containers something started and has not removed yet: each removed once, the rest at its end.
    `client` gives the engine's client (called when a container is removed)."""

    def __init__(self, client) -> None:
        self._client = client
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def add(self, cid: str) -> None:
        with self._lock:
            self._ids.add(cid)

    def remove(self, cid: str) -> None:
        try:
            self._client().api.remove_container(cid, force=True)
        except Exception:
            pass  # already gone, or the engine is down: swept at the start of the next run
        with self._lock:
            self._ids.discard(cid)

    def remove_all(self) -> None:
        with self._lock:
            ids = list(self._ids)
        for cid in ids:
            self.remove(cid)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_containers_where(client, doomed, label: str = LABEL_MANAGED) -> int:
    """Remove the passk containers (those with `label`) whose labels `doomed` picks (`doomed(labels, entry)`:
    the entry of the listing, for its Id and Names), from the engine's one listing read as it is (no
    inspection of each container: another passk process may remove one meanwhile, which made the high-level
    list raise NotFound and the run stop before it started)."""
    removed = 0
    for c in client.api.containers(all=True, filters={"label": label}):
        if not doomed(c.get("Labels") or {}, c):
            continue
        try:
            client.api.remove_container(c["Id"], force=True)
            removed += 1
        except Exception:
            pass   # gone already (its own run removed it), or the engine refused: the next sweep tries again
    return removed


def sweep(client) -> int:
    """Remove passk containers left by runs on this host whose process is gone."""
    host = socket.gethostname()

    def orphaned(labels, _entry) -> bool:
        try:
            owner = int(labels.get(LABEL_OWNER_PID, "0"))
        except ValueError:
            owner = 0
        return not (labels.get(LABEL_OWNER_HOST) == host and owner and _pid_alive(owner))
    return remove_containers_where(client, orphaned)


def remove_runs(prefix: str) -> int:
    """Remove every passk container whose run id starts with `prefix` (a service's executors, including
    ones whose own close could not reach the engine while it restarted). Best effort: 0 without an engine."""
    try:
        client = _docker_module().from_env(timeout=30)
        return remove_containers_where(client, lambda labels, _entry: str(labels.get(LABEL_RUN, "")).startswith(prefix))
    except Exception:
        return 0
