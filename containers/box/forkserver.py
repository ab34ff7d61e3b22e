"""The forkserver (root): a clean interpreter that forks each candidate, then waits for it to end, and
removes whatever it left. It never holds candidate code or data (the supervisor watches the candidate's
output and limits), and while the candidate runs it only waits: every page it wrote after the fork
would be copied for it (~3 µs each), and a candidate forked from it inherits nothing of the last one.

Per job, on its control socket (fd 3): a "run" message with the candidate's descriptors (io: stdin, stdout,
stderr; otherwise stdout, stderr and the channel to the tests) -> the HELLO (its start); then exactly one stop
byte from the supervisor ("k": kill now; "g": its channel closed, let it end by itself for a moment) at
any time, and {the report} once the candidate is gone, its processes killed and its IPC objects removed."""

import ctypes
import fcntl
import math
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback

from .candidate import candidate_main
from .framing import HELLO, STOP_GONE, recv_with_fds, send_msg
from .layout import CANDIDATE_ENV, CANDIDATE_UID, CHECKER_UID, ENV_PRELOAD_FILE, PRELOAD, PRELOAD_MIN_MB, WORK_ROOT
from .protocol import TRANSPORT_CAP
from .procs import _reap_all, _signal_name, _uid_pids, clean_ipc, kill_uid
from .warmup import WARM_UP_ROUNDS, warm_up


PR_SET_CHILD_SUBREAPER = 36
MAX_STRAYS = 16
REAP_WAIT_S = 5.0
GONE_WAIT_S = 1.0          # how long a candidate whose channel closed may take to end by itself


EXEC_MODES = ("exec", "exec_io")   # a program run in place of the interpreter (exec_io: stdin and stdout are pipes)
RUN_UIDS = (CANDIDATE_UID, CHECKER_UID)   # who a run may be: the candidate, or a problem's checker or interactor


def _spawn_candidate(workdir, limits, keep, mode="proxy", program=None, uid=CANDIDATE_UID):
    """Fork the candidate: new session, limits, no privileges, a minimal environment, before any of its code.
    Mode "exec" (a compiler, or a compiled program): `program` is (argv, extra environment), executed in
    place of this interpreter; its memory is watched by the supervisor in the container's cgroup, not
    bounded by RLIMIT_AS, which runtimes that reserve large address spaces (the JVM, Go, V8) cannot start
    under."""
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        os.setsid()
        high = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for target, fd in keep.items()}
        for target, fd in high.items():
            os.dup2(fd, target)
        os.closerange(max(keep) + 1, 4096)
        # The kernel's OOM killer takes the candidate (and whatever it forks) first, never the supervisor,
        # forkserver or tester: memory a candidate holds outside its address space (memfd, shared memory)
        # can reach the container's limit. Raising it is allowed to anyone; the candidate cannot lower it.
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)  # not open(): no I/O stack in a fresh child
        os.write(fd, b"1000")
        os.close(fd)
        if mode not in EXEC_MODES:
            mem = limits["memory_mb"] * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        cpu = int(limits["cpu_time_s"])
        if mode == "proxy":   # its share of passk's transport (the wall clock's credit) is CPU it spends too
            cpu += int(math.ceil(TRANSPORT_CAP * limits["timeout_s"]))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        fsize = limits["file_size_bytes"]
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        nofile = limits["open_files"]
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        stack = limits.get("stack_bytes")
        if stack:   # a judge's stack (as large as the memory limit, as Codeforces sets it), within the hard limit
            hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
            stack = stack if hard == resource.RLIM_INFINITY else min(stack, hard)
            resource.setrlimit(resource.RLIMIT_STACK, (stack, hard))
        if limits.get("nproc"):  # only where uids are private to the sandbox (gVisor)
            resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"], limits["nproc"]))
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        os.chdir(workdir)
        # The forkserver already holds CANDIDATE_ENV and unbuffered stdout/stderr (forkserver_main):
        # set here, each would cost every candidate dozens of copied pages.
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        os.umask(0o077)
        if mode in EXEC_MODES:
            # what Python ignores at start-up, a program gets as any program does (a write to a closed pipe
            # ends it, a file past the size limit ends it with SIGXFSZ), as judges run it
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            argv, extra = program
            env = dict(os.environ)
            env.update(extra)
            try:
                os.execvpe(argv[0], argv, env)   # found on the candidate's PATH
            except OSError as e:
                os.write(2, f"passk: cannot run {argv[0]}: {e.strerror}\n".encode())
                os._exit(127)
        import gc
        gc.enable()
        candidate_main(socket.socket(fileno=3) if mode != "io" else None, mode)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    except SystemExit as e:  # the candidate's sys.exit at an unusual moment: exit as it asked
        os._exit(e.code if isinstance(e.code, int) else 1)
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(1 if mode == "io" else 70)  # io: a script's uncaught exception, as Python exits


# A program's start without forking this interpreter (containers/passk_exec.c): a fork copies the page
# tables of this warm heap and the exec then throws them away, most of a tiny test's cost (a C++ program's
# fork-to-exit was ~1.9 ms where posix_spawn of the helper takes ~1.1). An image without it forks.
EXEC_HELPER = "/opt/passk/bin/passk-exec"
HAS_EXEC_HELPER = os.access(EXEC_HELPER, os.X_OK)


def _spawn_program(workdir, limits, keep, program, uid):
    """Mode "exec"/"exec_io" through passk-exec: posix_spawn puts the run's descriptors in place (through
    high numbers first, so that none overwrites another's source), the helper makes itself the candidate
    as _spawn_candidate's child does (session, OOM score, limits, groups, user, directory, umask, signals,
    no other descriptor) and executes the program."""
    argv, extra = program
    env = dict(os.environ)
    env["HOME"] = env["TMPDIR"] = workdir
    env.update(extra)
    actions = [(os.POSIX_SPAWN_DUP2, fd, 100 + target) for target, fd in keep.items()]
    actions += [(os.POSIX_SPAWN_DUP2, 100 + target, target) for target in keep]
    stack = limits.get("stack_bytes") or 0
    helper = [EXEC_HELPER, str(uid), workdir, str(int(limits["cpu_time_s"])), str(limits["file_size_bytes"]),
              str(limits["open_files"]), str(stack), str(limits.get("nproc") or 0), str(max(keep) + 1), "--", *argv]
    return os.posix_spawn(EXEC_HELPER, helper, env, file_actions=actions, setsid=True)   # its group exists at once


def _preload_environment():
    """The environment's own modules (ENV_PRELOAD_FILE), imported once with one BLAS thread and
    matplotlib's Agg backend; the environment every candidate starts with is put back after."""
    import gc
    import importlib
    try:
        with open(ENV_PRELOAD_FILE) as f:
            names = [n.strip() for n in f if n.strip()]
    except OSError:
        return
    os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                       "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/opt/passk/mpl", "TF_CPP_MIN_LOG_LEVEL": "3"})
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:   # an environment without it: the candidate imports what it needs itself
            pass
    os.environ.clear()
    os.environ.update(CANDIDATE_ENV)
    gc.collect()
    gc.freeze()


def forkserver_main():
    import gc
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    global SUBREAPER
    try:
        SUBREAPER = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except Exception:
        pass  # without a subreaper, orphans go to the container's init; they are killed by uid anyway
    ctl = socket.socket(fileno=3)
    # What every candidate starts with, set once here: its environment (HOME and TMPDIR are added per
    # candidate) and unbuffered output, so that what it printed is kept even when it is killed.
    os.environ.clear()
    os.environ.update(CANDIDATE_ENV)
    sys.stdout.reconfigure(write_through=True, line_buffering=True)
    sys.stderr.reconfigure(write_through=True, line_buffering=True)
    for _ in range(WARM_UP_ROUNDS):
        warm_up()
        os.environ["HOME"] = os.environ["TMPDIR"] = WORK_ROOT  # warms the path a candidate takes
        del os.environ["HOME"], os.environ["TMPDIR"]
    gc.collect()
    gc.freeze()  # children do not walk (and so copy) the preloaded objects when they collect
    devnull = os.open(os.devnull, os.O_RDONLY)
    preloaded = not os.path.exists(ENV_PRELOAD_FILE)
    while True:
        got = recv_with_fds(ctl)
        if got is None:
            return
        fds, req = got
        mode = req.get("mode", "proxy")
        if not preloaded and mode == "in_process" and req["limits"].get("memory_mb", 0) >= PRELOAD_MIN_MB:
            preloaded = True
            _preload_environment()
        if mode in ("io", "exec_io"):
            keep = {0: fds[0], 1: fds[1], 2: fds[2]}
        elif mode == "exec":   # stdout, stderr and the completion marker's pipe (fd 3)
            keep = {0: devnull, 1: fds[0], 2: fds[1], 3: fds[2]}
        else:
            keep = {0: devnull, 1: fds[0], 2: fds[1], 3: fds[2]}
        start = time.monotonic()
        program = (req["argv"], req.get("env") or {}) if mode in EXEC_MODES else None
        uid = req.get("uid", CANDIDATE_UID)
        if uid not in RUN_UIDS or (uid != CANDIDATE_UID and mode not in EXEC_MODES):
            uid = CANDIDATE_UID   # nothing but a candidate's uid is ever taken from a request by mistake
        if mode in EXEC_MODES and HAS_EXEC_HELPER:
            pid = _spawn_program(req["dir"], req["limits"], keep, program, uid)
        else:
            pid = _spawn_candidate(req["dir"], req["limits"], keep, mode, program, uid)
        # From here until the candidate is gone, every page this process writes is copied (~3 µs each):
        # as little as possible runs, and nothing that allocates much (the hello is a fixed-size struct).
        for fd in fds:
            os.close(fd)
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None  # not every gVisor has pidfd_open: poll instead
        ctl.sendall(HELLO.pack(start))
        report, stop = _await_end(ctl, pid, pidfd, uid)
        send_msg(ctl, report)
        if stop is None:
            stop = ctl.recv(1)   # exactly one stop byte per job, before the next job
        if stop == b"":
            return               # the supervisor has gone


def _wait_ended(pid, seconds):
    """wait4 for up to `seconds`, without killing: (pid or 0, status, rusage)."""
    give_up = time.monotonic() + seconds
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got or time.monotonic() > give_up:
            return got, status, ru
        time.sleep(0.001)


def _reap_within(pid, seconds, pidfd=None):
    """Wait for the killed candidate to end (readable `pidfd`, or polling), killing its group again while
    waiting (a process forked while the first kill was delivered may have escaped it). Gives up after
    `seconds`: under gVisor a fork bomb's teardown can take a minute, and the container is then destroyed
    whole by the host."""
    give_up = time.monotonic() + seconds
    pause = 0.0002
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            return True, status, ru
        if time.monotonic() > give_up:
            return False, 0, None
        if pidfd is not None:
            select.select([pidfd], [], [], 0.05)  # readable when the process has ended
        else:
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# Whether this process is its candidates' subreaper: then every process a candidate leaves, however it
# detached, is a child of ours, and having no child at all proves none is left (no /proc scan needed).
SUBREAPER = False


def _has_children():
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _await_end(ctl, pid, pidfd, uid=CANDIDATE_UID):
    """Wait, touching as little memory as possible, until the candidate ends or the supervisor says
    stop; then kill what is left of it. (report, the stop byte or None when none came yet)."""
    stop = None
    status = ru = None
    ended = False
    t_exit = None
    waiting = [pidfd, ctl] if pidfd is not None else [ctl]
    pause = 0.001   # without a pidfd (older gVisor): how often to look whether it ended, backing off
    try:
        while True:
            got, status, ru = os.wait4(pid, os.WNOHANG)
            if got:
                ended, t_exit = True, time.monotonic()
                break
            ready = select.select(waiting, [], [], None if pidfd is not None else pause)[0]
            pause = min(pause * 2, 0.02)
            if ctl in ready:
                stop = ctl.recv(1)
                got, status, ru = os.wait4(pid, os.WNOHANG)   # it may have ended as the stop came
                if not got and stop == STOP_GONE:
                    # The tests saw the candidate's channel close: it is ending (a crash, an exit, the OOM
                    # killer) and its status is what labels it. Its teardown can take a moment (freeing a
                    # large heap); wait for it.
                    got, status, ru = _wait_ended(pid, GONE_WAIT_S)
                if got:
                    ended, t_exit = True, time.monotonic()
                break
        kill_at = time.monotonic()
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        reaped = ended
        if not reaped:
            reaped, status, ru = _reap_within(pid, REAP_WAIT_S, pidfd)
    finally:
        if pidfd is not None:
            os.close(pidfd)
    alone = reaped and SUBREAPER and not _has_children()
    if alone:
        clean = True   # no process of the candidate's is left: nothing to count or kill
    else:
        # What is left (processes that left the group, or are still dying): a fork bomb's are still dying
        # after they were reaped (under gVisor for seconds), and would slow the next candidate into a timeout.
        strays = len(_uid_pids(uid))
        _reap_all()   # the zombies among them, ours since their parents died
        if strays > MAX_STRAYS or not reaped:
            # A fork bomb: do not spend the job's time killing it one process at a time (under gVisor that
            # takes up to a minute). The container is reported unclean and the host destroys it whole.
            clean = False
        else:
            clean = kill_uid(uid) if strays else True  # it reaps what it killed
    clean = clean and clean_ipc(uid)
    exit_code = sig = None
    if ended:
        if os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = _signal_name(os.WTERMSIG(status))
    return ({"t_exit": t_exit, "exit_code": exit_code, "signal": sig,
             "cpu_s": round(ru.ru_utime + ru.ru_stime, 6) if reaped else None,
             "peak_memory_kb": ru.ru_maxrss if reaped else None,
             "clean": clean, "alone": alone, "cleanup_s": round(time.monotonic() - kill_at, 3)}, stop)
