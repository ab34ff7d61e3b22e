"""An agent's sandbox for a SWE-bench instance: the instance as the harness's instance image has it, in a
container of passk's, for the agent to work in with shell commands until it submits.

- The image is the instance's repository environment (environments/repository.py: one per environment, not
  per instance); /testbed is the instance's tree at its base commit with the spec's install done (its
  snapshot, environments/instances.py, copied in), /venv the environment's venv with what the install
  changed. Both are tmpfs the agent's user owns: it edits, installs and runs tests there, and nothing it does
  outlives the container. Only this instance's snapshot is mounted (read-only); no other instance's tree is
  in reach.
- Every command runs as passk's unprivileged user (uid 10001), never root: no network, a read-only root file
  system, every capability dropped, no-new-privileges, a memory limit (the processes and the
  tmpfs together), a process limit, a CPU quota and a file-size limit. HOME is /root, a tmpfs of the user's
  whose .bashrc and .profile put the venv first on PATH, so `bash -c` with BASH_ENV=/root/.bashrc (what
  mini-swe-agent's SWE-bench config sets for the official images' conda) and `bash -lc` both find the
  environment's Python.
- A command ends with its whole process group when the caller goes away: the wrapper (run below) reads
  the exec's stdin, which the engine closes when the caller's connection closes (mini-swe-agent kills the
  `docker exec` it started when its timeout passes), and then kills the group.
- The container's PID 1 is passk's keeper (_KEEPER below): out of the agent's reach, it reaps orphans, resets
  the sandbox on the engine's signal (a fork bomb's processes ended without a fork) and lives for the
  sandbox's lifetime; the engine removes the container when it ends (AutoRemove): a sandbox whose agent died
  goes away by itself; sweep() removes the ones past their time before then, and remove() at once. A
  command's background processes outlive it (as under `docker exec`) until the sandbox is reset or removed. Labels: org.passk.agent (the instance), org.passk.agent-expires.
- A plain environment has no instance: passk's image of a language and an empty /testbed. A caller with a
  contract of its own (the inspect provider's samples) lays one out itself (Layout): one writable folder that
  is also HOME, /tmp, and the whole sandbox's memory, processes and CPU as its config says."""

from __future__ import annotations

import socket
import struct
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from harness.core.errors import HarnessError

LABEL_AGENT = "org.passk.agent"
LABEL_EXPIRES = "org.passk.agent-expires"
UID = 10001
HOME = "/root"
SNAPSHOT = "/opt/passk/agent"          # this instance's snapshot, read-only: testbed/, venv/, venv-deleted
PRISTINE_VENV = "/opt/passk/venv"      # the environment's venv in its image (box/repo.py)
MAX_LIFETIME_S = 24 * 3600
SETUP_TIMEOUT_S = 600
STOP_POLL_S = 0.2                      # how often a running command looks at its caller's stop
IDLE_S = 3600                          # a sandbox with no command begun or ended for this long is swept

# the sandbox made ready, as its own user: the venv (the environment's, then what the install changed, less
# what it removed), the tree, and HOME's shell files
_SETUP = r"""set -eu
if [ ! -d /opt/passk/agent/testbed ]; then   # a plain environment: no tree, no venv of an environment's
  : > /root/.bashrc
  printf '%s\n' '. "$HOME/.bashrc"' > /root/.profile
  exit 0
fi
cp -a /opt/passk/venv/. /venv/
if [ -d /opt/passk/agent/venv ]; then cp -a /opt/passk/agent/venv/. /venv/; fi
if [ -f /opt/passk/agent/venv-deleted ]; then
  /usr/bin/python3 -I -S -c '
import os, shutil
for rel in open("/opt/passk/agent/venv-deleted", "rb").read().split(b"\0"):
    rel = os.fsdecode(rel)
    if not rel or rel.startswith("/") or ".." in rel.split("/"):
        continue
    p = os.path.join("/venv", rel)
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p, ignore_errors=True)
    elif os.path.lexists(p):
        os.unlink(p)
'
fi
cp -a /opt/passk/agent/testbed/. /testbed/
# what the install left untracked (an egg-info, a built extension) is not the agent's: `git status` starts
# clean and `git add -A` leaves it out, so a submitted diff applies where evaluate applies it (the instance
# as set up, where those files are)
if [ -d /testbed/.git ]; then
  mkdir -p /testbed/.git/info
  /usr/bin/git -C /testbed -c core.fsmonitor=false ls-files -z --others --exclude-standard | /usr/bin/python3 -I -S -c '
import re, sys
names = [n for n in sys.stdin.buffer.read().split(b"\0") if n and b"\n" not in n]
with open("/testbed/.git/info/exclude", "ab") as f:
    for n in names:
        f.write(b"/" + re.sub(rb"([\\*?\[\]!# ])", rb"\\\1", n) + b"\n")
'
fi
cat > /root/.bashrc <<'EOF'
export VIRTUAL_ENV=/venv
case ":$PATH:" in *":/venv/bin:"*) ;; *) export PATH="/venv/bin:$PATH" ;; esac
EOF
printf '%s\n' '. "$HOME/.bashrc"' > /root/.profile
"""

# The sandbox's own process, its PID 1: it lives for the sandbox's lifetime and reaps what ends under it.
# It is the one process that is not the agent's user: uid 0 of the container with one capability, KILL, and
# nothing else (every other dropped, no-new-privileges, a read-only root; no command runs as it, and every
# command runs as uid 10001, whose processes get no capability). So the agent cannot signal it (`kill -9 1`
# is refused under runc and gVisor alike, and kill(-1) passes it by): an agent ends its own processes, not
# the sandbox. On SIGUSR1 from the engine (reset() below) it kills every other process with kill(-1), which
# needs no fork: a sandbox a fork bomb has filled to its process limit is reset without starting anything in
# it. SIGTERM (the engine's stop) ends it.
_KEEPER = r"""
import os, signal, sys, time
def reap(signum, frame):
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
def reset(signum, frame):
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
signal.signal(signal.SIGCHLD, reap)
signal.signal(signal.SIGUSR1, reset)
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    time.sleep(min(5.0, max(0.0, end - time.monotonic())))
    reap(0, None)
"""

# Every command, as the container runs it: the command in a process group (and session) of its own with
# stdin from /dev/null; a thread reads the exec's stdin, which ends when the caller hangs up, and then
# kills the group. The wrapper's exit status is the command's (128 + a signal's number).
_WRAPPER = r"""
import os, signal, sys, threading
pid = os.fork()
if pid == 0:
    os.setsid()
    fd = os.open("/dev/null", os.O_RDONLY)
    os.dup2(fd, 0)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    except OSError as e:
        sys.stderr.write(f"passk-agent: {sys.argv[1][:200]}: {e.strerror}\n")
        os._exit(127 if e.errno == 2 else 126)
def watch():
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
threading.Thread(target=watch, daemon=True).start()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
"""


PLAIN = "plain:"                       # a plain environment's session is labelled plain:<language>


@dataclass(frozen=True)
class Layout:
    """A plain sandbox as its caller lays it out: `tree` the one writable folder (a tmpfs of the user's, also
    its HOME and working directory) beside /tmp; `memory_mb` the whole sandbox's (its processes and both
    tmpfs together; gVisor's kernel gets room above it); no shell files, no /venv, no /root."""
    tree: str
    tree_mb: int
    tmp_mb: int
    memory_mb: int
    cpus: float
    pids: int
    open_files: int
    shm_mb: int = 4


@dataclass
class Prepared:
    """An instance ready for sandboxes: its environment's image and its snapshot on this machine; or a plain
    environment (snapshot None): passk's image of a language, an empty /testbed, no tree to diff or grade."""
    instance_id: str
    image: str
    image_id: str
    snapshot: Path | None
    env: dict
    limits: object          # config.Limits: the repository task's (memory, processes, space)
    runtime: str = "runc"
    layout: Layout | None = None   # a plain sandbox its caller lays out (limits then unused)

    @property
    def plain(self) -> bool:
        return self.snapshot is None


def is_plain(instance: str) -> bool:
    """Whether a session's instance label is a plain environment's."""
    return instance.startswith(PLAIN)


def prepare_plain(language: str = "python", runtime: str = "runc") -> Prepared:
    """A plain environment: passk's image of `language` (its toolchain on passk's sandbox image, built if
    missing, as `passk evaluate --language` builds it) with passk's default limits; an unknown language is an
    InputError naming the ones passk has."""
    from harness.execution.sandbox.docker import resolve_image
    from harness.inputs.config import Limits, SandboxSettings
    from harness.inputs.languages import canonical
    lang = canonical(language)
    facts = resolve_image(_client(), SandboxSettings(language=lang, runtime=runtime))
    return Prepared(PLAIN + lang, facts["image"], facts["image_id"], None, {}, Limits(), runtime)


def _problems(rows: list[tuple[str, dict]], repos: str, specs: str | None, pins: str) -> dict:
    from harness.inputs.config import Limits, RepoSettings
    from harness.inputs.formats.swebench import load
    from harness.inputs.repos.tasks import prepare as prepare_tasks
    return prepare_tasks(load(Path("rows"), rows), RepoSettings(dir=repos, specs=specs, pins=pins), Limits())


def prepare(row: dict, repos: str, specs: str | None = None, pins: str = "official", runtime: str = "runc",
            where: str = "row") -> Prepared:
    """The row's environment image and instance snapshot, built if missing (minutes the first time: build
    ahead with `passk images build --rows`), as `passk evaluate` builds them. An instance whose set-up fails
    is a HarnessError naming why."""
    problem = next(iter(_problems([(where, row)], repos, specs, pins).values()))
    return prepare_problem(problem, runtime)


def prepare_problem(problem, runtime: str = "runc") -> Prepared:
    """prepare() of a problem tasks.prepare made ready."""
    from dataclasses import replace
    from harness.environments import instances
    from harness.execution.jobs import Job
    from harness.execution.pool import Pool
    from harness.execution.sandbox.docker import DockerBackend
    from harness.inputs.config import SandboxSettings
    from harness.inputs.repos.recipes import to_settings
    from harness.inputs.samples import Sample
    task = problem.repo
    settings = replace(SandboxSettings(), isolation="fresh", language=None, environment="none", workers=1,
                       runtime=runtime, repo_environment=to_settings(task.env, task.repos_dir, True))
    backend = DockerBackend("agent-prepare-" + uuid.uuid4().hex[:8], task.limits, settings)
    pool = None
    try:
        facts = backend.prepare()
        if backend.instances_dir is None:
            raise HarnessError("agent sandboxes need the Docker engine on this machine (they mount the instance's "
                               "snapshot)")
        pool = Pool(backend, task.limits, settings, facts)
        job = Job(problem, Sample(problem.task_id, 0, "", "solution", task.task.instance_id))
        failed = pool._ensure_instance(job)
        if failed is not None:
            raise HarnessError(f"{task.task.instance_id}: {failed.get('detail', 'the instance did not set up')}")
        name = pool._instances[id(problem)]
    finally:
        if pool is not None:
            pool.background.shutdown(wait=True)
        backend.close()
    env = {str(k): str(v) for k, v in (task.job_part(mode="snapshot").get("env") or {}).items()}
    return Prepared(task.task.instance_id, facts["image"], facts["image_id"],
                    instances.image_dir(facts["image_id"]) / name, env, task.limits, runtime)


def prepare_rows(rows: list[tuple[str, dict]], repos: str, specs: str | None = None, pins: str = "official",
                 runtime: str = "runc", jobs: int = 2, done=None) -> list[tuple[str, str]]:
    """Every environment image and instance snapshot the rows need (`rows`: (where, row)), the environments
    side by side (`jobs` at once; one environment's instances one after another, on its image); `done(
    Prepared)` after each. [(instance id, why it failed)] of the ones that did not."""
    from concurrent.futures import ThreadPoolExecutor
    from harness.core.errors import InputError
    groups: dict[str, list] = {}
    failures: list[tuple[str, str]] = []
    for where, row in rows:   # one at a time: a row this machine cannot build is listed, the others go on
        try:
            problem = next(iter(_problems([(where, row)], repos, specs, pins).values()))
        except InputError as e:
            failures.append((str(row.get("instance_id", where))[:200], str(e).splitlines()[0][:500]))
            continue
        groups.setdefault(problem.repo.env.key, []).append(problem)

    def group(members):
        for problem in members:
            try:
                p = prepare_problem(problem, runtime)
            except Exception as e:  # noqa: BLE001 - every instance is tried; each failure is listed
                failures.append((problem.repo.task.instance_id, str(e).splitlines()[0][:500] if str(e) else
                                 type(e).__name__))
                continue
            if done is not None:
                done(p)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for future in [pool.submit(group, members) for members in groups.values()]:
            future.result()
    return failures


def _client():
    from harness.execution.sandbox.docker import connect
    return connect()


def start(p: Prepared, lifetime_s: float = 7200, name: str | None = None, workdir: str = "/testbed",
          env: dict | None = None, labels: dict | None = None, created: Callable[[str], None] | None = None) -> str:
    """A sandbox of the instance, set up and ready: its container's id. `labels` are added to the sandbox's
    own; `created(id)` is called as soon as the container exists (before it starts), so a caller that is
    cancelled while it starts still knows what to remove."""
    import docker
    from harness.execution.sandbox.docker import IPC_SYSCTLS, RUNSC_MEMORY_HEADROOM_MB, RUNSC_PIDS_BACKSTOP
    client = _client()
    runc = p.runtime == "runc"
    headroom = 0 if runc else RUNSC_MEMORY_HEADROOM_MB
    lay = p.layout
    if lay is None:
        lim = p.limits
        space = int(lim.tmpfs_mb)
        memory = int(lim.memory_mb) + 4 * space + 256 + headroom
        fsize = max(space << 20, int(lim.file_size_bytes))
        pids, cpus, files, shm = int(lim.pids), float(lim.cpus), max(1024, int(lim.open_files)), 64
        owned = f"rw,nosuid,nodev,exec,size={space}m,mode=0755,uid={UID},gid={UID}"
        tmpfs = {"/testbed": owned, "/venv": owned, HOME: owned.replace("mode=0755", "mode=0700"),
                 "/tmp": f"rw,nosuid,nodev,exec,size={space}m,mode=1777"}
    else:
        memory = int(lay.memory_mb) + headroom
        fsize = max(int(lay.tree_mb), int(lay.tmp_mb)) << 20
        pids, cpus, files, shm = int(lay.pids), float(lay.cpus), int(lay.open_files), int(lay.shm_mb)
        tmpfs = {lay.tree: f"rw,nosuid,nodev,exec,size={int(lay.tree_mb)}m,mode=0755,uid={UID},gid={UID}",
                 "/tmp": f"rw,nosuid,nodev,exec,size={int(lay.tmp_mb)}m,mode=1777"}
    ulimits = [docker.types.Ulimit(name="nofile", soft=files, hard=files),
               docker.types.Ulimit(name="fsize", soft=fsize, hard=fsize)]
    if not runc:
        ulimits.append(docker.types.Ulimit(name="nproc", soft=pids, hard=pids))
    binds = [] if p.plain else [f"{p.snapshot / 'testbed'}:{SNAPSHOT}/testbed:ro"]
    if not p.plain and (p.snapshot / "venv").is_dir():
        binds.append(f"{p.snapshot / 'venv'}:{SNAPSHOT}/venv:ro")
    if not p.plain and (p.snapshot / "venv-deleted").is_file():
        binds.append(f"{p.snapshot / 'venv-deleted'}:{SNAPSHOT}/venv-deleted:ro")
    host = client.api.create_host_config(
        network_mode="none", read_only=True, binds=binds, auto_remove=True, tmpfs=tmpfs,
        shm_size=f"{shm}m", cap_drop=["ALL"], cap_add=["KILL"], security_opt=["no-new-privileges"],
        pids_limit=pids if runc else RUNSC_PIDS_BACKSTOP,
        mem_limit=f"{memory}m", memswap_limit=f"{memory}m", nano_cpus=int(cpus * 1e9),
        ulimits=ulimits, runtime=None if runc else p.runtime, init=False, ipc_mode="private", sysctls=IPC_SYSCTLS)
    lifetime = int(max(1, min(float(lifetime_s), MAX_LIFETIME_S)))
    labels = {**(labels or {}), LABEL_AGENT: p.instance_id[:200], LABEL_EXPIRES: str(int(time.time()) + lifetime)}
    if lay is not None:
        environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": lay.tree, "LANG": "C.UTF-8", **(env or {})}
    elif p.plain:
        environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": HOME, "LANG": "C.UTF-8", **(env or {})}
    else:
        environment = {"PATH": "/venv/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": "/venv", "HOME": HOME,
                       "LANG": "C.UTF-8", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/opt/passk/wheels",
                       "PIP_DISABLE_PIP_VERSION_CHECK": "1", **p.env, **(env or {})}
    made = client.api.create_container(
        p.image, entrypoint=["/usr/bin/python3", "-I", "-S", "-c", _KEEPER], command=[str(lifetime)],
        user="0:0", working_dir=workdir,
        environment=environment, labels=labels, host_config=host, name=name, network_disabled=True)
    cid = made["Id"]
    try:
        if created is not None:
            created(cid)
        client.api.start(cid)
        if lay is None:   # a laid-out sandbox has nothing to set up
            code, out = run(cid, ["/bin/sh", "-c", _SETUP], workdir="/", timeout_s=SETUP_TIMEOUT_S)
            if code != 0:
                raise HarnessError(f"the sandbox of {p.instance_id} did not set up (exit {code}): "
                                   + out[-600:].decode("utf-8", "replace"))
    except BaseException:
        remove(cid)
        raise
    touch(cid)
    return cid


def _open(cid: str, argv: list[str], user: str, workdir: str, env: dict | None = None):
    """An exec of argv in the sandbox, started with its stdin open: (the engine, the exec's id, its socket). A
    sandbox that is gone, or an engine that refuses: HarnessError."""
    from harness.sessions.engine import EngineError, NotFound, api as engine
    api = engine()
    try:
        e = api.exec_create(cid, argv, stdin=True, user=user, workdir=workdir,
                            environment=[f"{k}={v}" for k, v in (env or {}).items()] or None)
        raw = api.exec_start(e["Id"], socket=True)
    except NotFound:
        raise HarnessError(f"no such sandbox: {cid[:64]}") from None
    except (EngineError, OSError) as err:
        raise HarnessError(f"the sandbox {cid[:12]} cannot run a command: {getattr(err, 'explanation', err)}") from None
    touch(cid)
    return api, e["Id"], getattr(raw, "_sock", raw)


def _frames(buf: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The whole frames of the engine's multiplexed stream at the start of `buf` ((stream, payload)), and what
    is left of it."""
    frames = []
    while len(buf) >= 8:
        size = struct.unpack(">I", buf[4:8])[0]
        if len(buf) < 8 + size:
            break
        frames.append((buf[0], buf[8:8 + size]))
        buf = buf[8 + size:]
    return frames, buf


def _exit_code(api, exec_id: str) -> int:
    """The ended exec's exit status, as the engine reports it within 10 s of its output's end (137 after)."""
    for _ in range(500):
        info = api.exec_inspect(exec_id)
        if not info.get("Running"):
            return int(info.get("ExitCode") or 0)
        time.sleep(0.02)
    return 137


def run(cid: str, argv: list[str], workdir: str = "/testbed", env: dict | None = None, timeout_s: float | None = None,
        limit: int = 16 << 20, sink=None, stop=None, root: bool = False) -> tuple[int, bytes]:
    """Run argv in the sandbox as its user, stdout and stderr as one stream: (exit status, output, at most
    `limit` bytes; `sink(chunk)`, when given, gets each piece as it comes and the output is not kept). Past
    `timeout_s` or `limit`, or once `stop` (a threading.Event) is set, the command's process group is killed
    (status 137). `root`: as the sandbox's uid 0, which only a gVisor sandbox allows (root_allowed): there
    it is the sandbox kernel's root, never the host's. A sandbox that is gone: HarnessError."""
    if root and not root_allowed(cid):
        from harness.core.errors import InputError
        raise InputError("root in a sandbox only under gVisor (PASSK_RUNTIME=runsc), where it is not the host's "
                           "root; under runc every command runs as passk's user (10001)")
    api, exec_id, sock = _open(cid, ["/usr/bin/python3", "-I", "-S", "-c", _WRAPPER, *argv],
                               "0:0" if root else f"{UID}:{UID}", workdir, env)
    deadline = None if timeout_s is None else time.monotonic() + float(timeout_s)
    out, buf, total, killed = bytearray(), b"", 0, False
    try:
        while True:
            wait = None if deadline is None else max(0.01, deadline - time.monotonic())
            if stop is not None:
                wait = STOP_POLL_S if wait is None else min(wait, STOP_POLL_S)
            sock.settimeout(wait)
            try:
                chunk = sock.recv(1 << 16)
            except socket.timeout:
                if (stop is not None and stop.is_set()) or (deadline is not None and time.monotonic() >= deadline):
                    killed = True
                    break
                continue
            if not chunk:
                break
            if stop is not None and stop.is_set():
                killed = True
                break
            frames, buf = _frames(buf + chunk)
            for _, payload in frames:
                payload = payload[:max(0, limit - total)]
                total += len(payload)
                if sink is not None:
                    sink(payload)
                else:
                    out += payload
                if total >= limit:
                    killed = True
                    break
            if killed:
                break
    finally:
        for step in (lambda: sock.shutdown(socket.SHUT_RDWR), sock.close):   # the hang-up the wrapper waits for
            try:
                step()
            except OSError:
                pass
    touch(cid)
    if killed:
        return 137, bytes(out)
    return _exit_code(api, exec_id), bytes(out)


# A file written into the sandbox, as its user: stdin's bytes (at most argv[2]) to argv[1], its folders made;
# the file is written beside its place and renamed, so a reader never sees half of it
_WRITE = r"""
import os, sys
path, limit, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 8)
data = sys.stdin.buffer.read(limit + 1)
if len(data) > limit:
    sys.stderr.write(f"passk: the file is over {limit} bytes\n"); sys.exit(3)
try:
    os.makedirs(os.path.dirname(path) or "/", exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), ".passk-write-" + str(os.getpid()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
except OSError as e:
    sys.stderr.write(f"passk: {path[:300]}: {e.strerror}\n"); sys.exit(2)
"""

# A file read out of the sandbox: its bytes on stdout, at most argv[2] (exit 3 past it), or why not on stderr
_READ = r"""
import sys
path, limit = sys.argv[1], int(sys.argv[2])
try:
    with open(path, "rb") as f:
        data = f.read(limit + 1)
except OSError as e:
    sys.stderr.write(f"passk: {path[:300]}: {e.strerror}\n"); sys.exit(2)
if len(data) > limit:
    sys.stderr.write(f"passk: {path[:300]} is over {limit} bytes\n"); sys.exit(3)
sys.stdout.buffer.write(data)
"""

# The diff of /testbed against the instance as it was set up (the snapshot's tree, with the files the
# install left untracked: an egg-info is not the agent's change), as `git add -A && git diff --cached
# --binary` gives it, but through passk's read-only copy of the tree's .git: whatever the agent wrote into
# /testbed/.git (a forged history, an index, hooks, configuration) is not read; new objects go to a scratch
# directory, and no configuration but git's defaults applies (no global or system file, no hooks, no
# fsmonitor, no external diff or text conversion). A file is read again only where its size or mtime changed.
_DIFF = r"""set -eu
t=$(mktemp -d /tmp/.passk-diff.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir "$t/objects"
s=/opt/passk/agent/testbed
export GIT_DIR="$s/.git" GIT_OBJECT_DIRECTORY="$t/objects" GIT_ALTERNATE_OBJECT_DIRECTORIES="$s/.git/objects" \
  GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME="$t" GIT_OPTIONAL_LOCKS=0
g="/usr/bin/git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.attributesFile=/dev/null \
  -c core.checkStat=minimal -c core.trustctime=false -c core.excludesFile=/dev/null"
cp "$s/.git/index" "$t/before" 2>/dev/null || true
cp "$t/before" "$t/after" 2>/dev/null || true
GIT_INDEX_FILE="$t/before" GIT_WORK_TREE="$s" $g add -A -- "$s" >/dev/null
before=$(GIT_INDEX_FILE="$t/before" $g write-tree)
GIT_INDEX_FILE="$t/after" GIT_WORK_TREE=/testbed $g add -A -- /testbed >/dev/null
after=$(GIT_INDEX_FILE="$t/after" $g write-tree)
$g diff --binary --no-ext-diff --no-textconv --no-color --full-index "$before" "$after"
"""


def _exec(cid: str, argv: list[str], data: bytes = b"", workdir: str = "/", timeout_s: float = 120,
          limit: int = 64 << 20) -> tuple[int, bytes, bytes]:
    """A short command of passk's own in the sandbox as its user, `data` on its stdin: (exit status, stdout,
    stderr), each at most `limit` bytes; past `timeout_s`, status 137 (the container's command ends with the
    sandbox)."""
    api, exec_id, sock = _open(cid, argv, f"{UID}:{UID}", workdir)
    deadline = time.monotonic() + timeout_s
    streams = {1: bytearray(), 2: bytearray()}
    buf = b""
    try:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        if data:
            sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)      # the end of its stdin
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = sock.recv(1 << 16)
            except socket.timeout:
                return 137, bytes(streams[1]), bytes(streams[2])
            if not chunk:
                break
            frames, buf = _frames(buf + chunk)
            for kind, payload in frames:
                target = streams.get(kind, streams[2])
                target += payload[:max(0, limit - len(target))]
    except OSError as err:
        raise HarnessError(f"the sandbox {cid[:12]}: {err}") from None
    finally:
        try:
            sock.close()
        except OSError:
            pass
    return _exit_code(api, exec_id), bytes(streams[1]), bytes(streams[2])


def write_file(cid: str, path: str, data: bytes, mode: int = 0o644, limit: int = 64 << 20) -> None:
    """Write `data` to `path` (absolute) in the sandbox as its user; why not: InputError (one line)."""
    from harness.core.errors import InputError
    if not path.startswith("/") or "\0" in path:
        raise InputError(f"a sandbox's file path is absolute: {path[:200]!r}")
    if len(data) > limit:
        raise InputError(f"the file is {len(data)} bytes; the limit is {limit}")
    code, _, err = _exec(cid, ["/usr/bin/python3", "-I", "-S", "-c", _WRITE, path, str(limit), f"{mode & 0o777:o}"],
                         data)
    if code != 0:
        raise InputError(err.decode("utf-8", "replace").strip()[-300:] or f"writing {path[:200]} ended with {code}")


def read_file(cid: str, path: str, limit: int = 64 << 20) -> bytes:
    """The bytes of `path` (absolute) in the sandbox, read as its user; why not: InputError (one line)."""
    from harness.core.errors import InputError
    if not path.startswith("/") or "\0" in path:
        raise InputError(f"a sandbox's file path is absolute: {path[:200]!r}")
    code, out, err = _exec(cid, ["/usr/bin/python3", "-I", "-S", "-c", _READ, path, str(limit)], limit=limit + 1)
    if code != 0:
        raise InputError(err.decode("utf-8", "replace").strip()[-300:] or f"reading {path[:200]} ended with {code}")
    return out


def diff(cid: str, limit: int = 64 << 20, timeout_s: float = 300) -> str:
    """What the agent changed in /testbed, as a patch (_DIFF above): what evaluate applies to the instance."""
    try:
        code, out, err = _exec(cid, ["/bin/sh", "-c", _DIFF], timeout_s=timeout_s, limit=limit + 1)
    except HarnessError as e:   # the engine could not start the command in the sandbox
        code, out, err = 126, b"", str(e).encode()
    if code != 0 and any(m.lower() in err.lower() for m in _CANNOT_FORK):
        reset(cid)              # the agent filled its process limit: its processes end, its files stay
        code, out, err = _exec(cid, ["/bin/sh", "-c", _DIFF], timeout_s=timeout_s, limit=limit + 1)
    if code != 0:
        raise HarnessError(f"the diff of sandbox {cid[:12]} failed (exit {code}): "
                           + err.decode("utf-8", "replace").strip()[-400:])
    if len(out) > limit:
        raise HarnessError(f"the diff of sandbox {cid[:12]} is over {limit} bytes")
    return out.decode("utf-8", "replace")   # as a JSON string holds it (SWE-bench's model_patch)


def reset(cid: str, rounds: int = 3) -> None:
    """End every process the agent started in the sandbox (its files stay): what a fork bomb left running
    cannot stop passk from reading the sandbox (the diff) or the agent from going on."""
    from harness.sessions.engine import EngineError, NotFound, api as engine
    api = engine()
    for _ in range(rounds):   # a process forked while kill(-1) went through the list is caught by the next
        try:
            api.kill(cid, signal="SIGUSR1")
        except NotFound:
            raise HarnessError(f"no such sandbox: {cid[:64]}") from None
        except EngineError as e:
            raise HarnessError(f"the sandbox {cid[:12]} cannot be reset: {e.explanation}") from None
        time.sleep(0.2)


_CANNOT_FORK = (b"Cannot fork", b"Resource temporarily unavailable", b"fork: retry", b"can't fork")


def root_allowed(cid: str) -> bool:
    """Whether a command may run as the sandbox's root: only where the sandbox runs under gVisor (its root
    is the sandbox kernel's; under runc it would be the host's uid 0, capabilities dropped or not)."""
    from harness.sessions.engine import EngineError, api as engine
    try:
        info = engine().inspect_container(cid)
    except (EngineError, OSError):
        return False
    return str((info.get("HostConfig") or {}).get("Runtime") or "").startswith("runsc")


def remove(cid: str) -> bool:
    """Remove the sandbox (killing what runs in it); False when there was none. Idempotent."""
    import docker.errors
    try:
        _client().api.remove_container(cid, force=True)
        return True
    except docker.errors.NotFound:
        return False
    except docker.errors.APIError as e:
        if e.status_code == 409:   # already being removed (AutoRemove after its end)
            return True
        raise


def _activity(cid: str) -> Path:
    from harness.core.paths import cache_root
    d = cache_root("agents")
    d.mkdir(parents=True, exist_ok=True)
    return d / cid[:64]


def touch(cid: str) -> None:
    """The sandbox was used now (its start, each command's start and end): what its idle time counts from."""
    try:
        _activity(cid).write_text(str(time.time()))
    except OSError:
        pass


def listing(now: float | None = None) -> list[dict]:
    """Every agent sandbox on the engine: id, instance, state, seconds of its lifetime left, seconds idle
    (since its last command began or ended, or since it started)."""
    now = time.time() if now is None else now
    out = []
    for c in _client().api.containers(all=True, filters={"label": LABEL_AGENT}):
        labels = c.get("Labels") or {}
        try:
            left = int(labels.get(LABEL_EXPIRES, "0")) - now
        except ValueError:
            left = 0
        try:
            last = _activity(c["Id"]).stat().st_mtime
        except OSError:
            last = float(c.get("Created") or 0)
        out.append({"id": c["Id"], "instance": labels.get(LABEL_AGENT, "")[:200], "state": c.get("State", ""),
                    "seconds_left": max(0, int(left)), "idle_s": max(0, int(now - last))})
    return out


def sweep(idle_s: float = IDLE_S, now: float | None = None) -> list[dict]:
    """Remove the sandboxes past their lifetime, or idle longer than `idle_s` (their agent died or never
    said stop): the ones removed."""
    gone, kept = [], set()
    for c in listing(now):
        if c["seconds_left"] <= 0 or c["idle_s"] > idle_s or c["state"] not in ("running", "created"):
            if remove(c["id"]):
                gone.append(c)
        else:
            kept.add(c["id"][:64])
    for f in _activity("x").parent.iterdir():   # the records of sandboxes that are gone
        if f.name not in kept:
            f.unlink(missing_ok=True)
    return gone


def doctor_checks() -> list:
    """`passk doctor`'s lines for the agent sandboxes on the engine: the ones past their lifetime or idle too
    long are removed here; the others are listed."""
    from harness.execution.doctor import Check
    try:
        gone = sweep()
        live = listing()
    except Exception as e:  # noqa: BLE001 - reported
        return [Check("agent sandboxes", False, f"cannot list them ({type(e).__name__})", needed=False)]
    found = f"{len(live)} running" + (f" ({', '.join(c['instance'] + ' ' + c['id'][:12] for c in live[:5])}"
                                      f"{', ...' if len(live) > 5 else ''})" if live else "")
    if gone:
        found += f"; removed {len(gone)} past their lifetime or idle over {IDLE_S} s"
    return [Check("agent sandboxes (passk-docker, sessions)", True, found)]
