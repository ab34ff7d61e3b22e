"""The forkserver (root): a clean interpreter that forks each candidate and watches it. It never turns
candidate data into Python objects: output goes through preallocated buffers that are wiped after every
job that wrote to them, so the next candidate, forked from this process, inherits nothing of the last one."""

import ctypes
import fcntl
import math
import os
import resource
import select
import selectors
import signal
import socket
import sys
import time
import traceback

from .candidate import candidate_main
from .framing import recv_msg, recv_with_fds, send_msg
from .layout import CANDIDATE_ENV, CANDIDATE_UID, PRELOAD, WORK_ROOT
from .protocol import TRANSPORT_CAP
from .procs import _reap_all, _signal_name, _uid_pids, clean_ipc, kill_uid
from .warmup import WARM_UP_ROUNDS, warm_up


TAIL_BYTES = 2048
ZEROS = bytes(65536)  # what output buffers are wiped with after a job (made once: no allocation per job)
PR_SET_CHILD_SUBREAPER = 36
MAX_STRAYS = 16
REAP_WAIT_S = 5.0


def _spawn_candidate(workdir, limits, keep, mode="proxy"):
    """Fork the candidate: new session, limits, no privileges, a minimal environment, before any of its code."""
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
        if limits.get("nproc"):  # only where uids are private to the sandbox (gVisor)
            resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"], limits["nproc"]))
        os.setgroups([])
        os.setgid(CANDIDATE_UID)
        os.setuid(CANDIDATE_UID)
        os.chdir(workdir)
        # The forkserver already holds CANDIDATE_ENV and unbuffered stdout/stderr (forkserver_main):
        # set here, each would cost every candidate dozens of copied pages.
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        os.umask(0o077)
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


class Capture:
    """A program's whole stdout, up to the output limit (the io channel compares it), in one buffer made
    once and wiped after every use: a later candidate, forked from this process, finds nothing of it."""

    def __init__(self):
        self.buf = bytearray(0)
        self.n = 0

    def ready(self, size):
        if len(self.buf) < size:
            self.buf = bytearray(size)
        self.n = 0

    def add(self, view, n):
        room = len(self.buf) - self.n
        take = min(n, room)
        if take > 0:
            self.buf[self.n:self.n + take] = view[:take]
            self.n += take

    def data(self):
        return memoryview(self.buf)[:self.n]

    def clear(self):
        if self.n:
            self.buf[:self.n] = bytes(self.n)
        self.n = 0


class Ring:
    """The last TAIL_BYTES of a stream, kept in place: no bytes objects are made from the data."""

    def __init__(self):
        self.buf = bytearray(TAIL_BYTES)
        self.view = memoryview(self.buf)
        self.pos = 0        # next write position
        self.total = 0

    def add(self, view, n):
        self.total += n
        if n >= TAIL_BYTES:
            self.view[:] = view[n - TAIL_BYTES:n]
            self.pos = 0
            return
        first = min(n, TAIL_BYTES - self.pos)
        self.view[self.pos:self.pos + first] = view[:first]
        if n > first:
            self.view[:n - first] = view[first:n]
        self.pos = (self.pos + n) % TAIL_BYTES

    def segments(self):
        if self.total < TAIL_BYTES:
            return [self.view[:self.pos]]
        return [self.view[self.pos:], self.view[:self.pos]]

    def length(self):
        return min(self.total, TAIL_BYTES)

    def clear(self):
        if self.total:  # untouched buffers stay as they are: writing them would copy their pages
            self.view[:] = ZEROS[:TAIL_BYTES]
        self.pos = 0
        self.total = 0


class OomCounter:
    """How many processes the kernel's OOM killer has killed in this container (cgroup v1 or v2), read
    through a file kept open; None where there is no such counter (gVisor)."""

    PATHS = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")

    def __init__(self):
        self.fd = None
        for path in self.PATHS:
            try:
                self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                break
            except OSError:
                continue

    def read(self):
        if self.fd is None:
            return None
        try:
            text = os.pread(self.fd, 4096, 0)
        except OSError:
            return None
        for line in text.split(b"\n"):
            if line.startswith(b"oom_kill "):
                return int(line.split()[1])
        return None


class SandboxMemory:
    """Memory the sandbox holds that cannot be reclaimed, in kB, read from its /proc/meminfo: everything
    in use except file cache, but counting shared memory (memfd, tmpfs), which lives in that cache.
    Under gVisor this is the sandbox's own accounting; its host cgroup would otherwise kill the whole
    sandbox when a candidate fills memory outside its address space."""

    def __init__(self):
        self.fd = os.open("/proc/meminfo", os.O_RDONLY | os.O_CLOEXEC)

    def held_kb(self):
        fields = {}
        for line in os.pread(self.fd, 8192, 0).split(b"\n"):
            name, _, rest = line.partition(b":")
            if name in (b"MemTotal", b"MemFree", b"Cached", b"Shmem"):
                fields[name] = int(rest.split()[0])
        return (fields[b"MemTotal"] - fields[b"MemFree"] - fields.get(b"Cached", 0) + fields.get(b"Shmem", 0))


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
    oom = OomCounter()
    ctl = socket.socket(fileno=3)
    scratch = bytearray(65536)
    scratch_view = memoryview(scratch)
    out, err = Ring(), Ring()
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
    memory = None
    capture = Capture()
    while True:
        got = recv_with_fds(ctl)
        if got is None:
            return
        fds, req = got
        if req["limits"].get("memory_watch_kb") and memory is None:
            memory = SandboxMemory()
        io = req.get("mode") == "io"
        if io:
            capture.ready(req["limits"]["output_bytes"])
        report = watch_candidate(ctl, fds[0] if fds else None, req, devnull, scratch_view, out, err, memory,
                                 oom, capture if io else None)
        send_msg(ctl, report)
        for ring in (out, err):
            for seg in ring.segments():
                ctl.sendall(seg)
        if io:
            ctl.sendall(capture.data())
            capture.clear()
        elif not report["stop_received"]:
            while recv_msg(ctl).get("op") != "stop":   # exactly one stop per job (after any extends)
                pass
        if out.total or err.total:  # the scratch buffer held some of this candidate's output
            scratch_view[:] = ZEROS[:len(scratch)]
        out.clear()
        err.clear()


def _pump(fd, sinks, scratch, drain):
    """Read what a non-blocking pipe holds into each of `sinks` through `scratch` (once, or until it is
    empty when `drain`). Returns True at end of file."""
    while True:
        try:
            n = os.readv(fd, [scratch])
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        if n == 0:
            return True
        for sink in sinks:
            sink.add(scratch, n)
        if not drain:
            return False


def _feed(fd, data, sent):
    """Write what the pipe takes of `data` from `sent` on. Returns the new offset, or None when done
    (everything written, or the program closed its stdin)."""
    try:
        sent += os.write(fd, data[sent:sent + 65536])
    except BlockingIOError:
        return sent
    except OSError:  # EPIPE: the program does not read its input
        return None
    return None if sent >= len(data) else sent


def _wait_ended(pid, seconds):
    """wait4 for up to `seconds`, without killing: (pid or 0, status, rusage)."""
    give_up = time.monotonic() + seconds
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got or time.monotonic() > give_up:
            return got, status, ru
        time.sleep(0.001)


def _reap_within(pid, seconds):
    """Wait for the killed candidate to end, killing its group again while waiting (a process forked
    while the first kill was delivered may have escaped it). Gives up after `seconds`: under gVisor a
    fork bomb's teardown can take a minute, and the container is then destroyed whole by the host."""
    give_up = time.monotonic() + seconds
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None  # not every gVisor has pidfd_open: poll instead
    pause = 0.0002
    try:
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
    finally:
        if pidfd is not None:
            os.close(pidfd)


GONE_WAIT_S = 1.0          # how long a candidate whose channel closed may take to end by itself
MEMORY_POLL_S = 0.005      # how often the sandbox's memory is read while a candidate runs (gVisor only)
MEMORY_LEAK_KB = 32 * 1024  # memory still held after a job beyond this: the container is replaced


# Whether this process is its candidates' subreaper: then every process a candidate leaves, however it
# detached, is a child of ours, and having no child at all proves none is left (no /proc scan needed).
SUBREAPER = False


def _has_children():
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def watch_candidate(ctl, chan_fd, req, devnull, scratch, out, err, memory, oom, capture=None):
    """Fork the candidate and watch it until the tests' stop (proxy, in_process), its own end (io: a
    program reading `req["stdin"]`, its whole stdout kept in `capture`), or a limit."""
    limits = req["limits"]
    io = capture is not None
    watch_kb = limits.get("memory_watch_kb")
    oom_before = oom.read()
    held_before = memory.held_kb() if watch_kb else None
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    if io:
        in_r, in_w = os.pipe()
        keep, closing = {0: in_r, 1: out_w, 2: err_w}, (in_r, out_w, err_w)
    else:
        keep, closing = {0: devnull, 1: out_w, 2: err_w, 3: chan_fd}, (out_w, err_w, chan_fd)
    start = time.monotonic()
    pid = _spawn_candidate(req["dir"], limits, keep, req.get("mode", "proxy"))
    for fd in closing:
        os.close(fd)
    deadline = start + limits["timeout_s"]
    next_poll = start + MEMORY_POLL_S if watch_kb else float("inf")
    sel = selectors.DefaultSelector()
    for fd, sinks in ((out_r, (out, capture) if io else (out,)), (err_r, (err,))):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, sinks)
    if io:
        stdin_data = req.get("stdin", "").encode("utf-8", "surrogatepass")
        os.set_blocking(in_w, False)
        sent = _feed(in_w, stdin_data, 0) if stdin_data else None
        if sent is None:
            os.close(in_w)
        else:
            sel.register(in_w, selectors.EVENT_WRITE, "stdin")
    else:
        sel.register(ctl, selectors.EVENT_READ, None)
    timed_out = output_exceeded = memory_exceeded = stopped = gone = False
    while not stopped:
        now = time.monotonic()
        remaining = deadline - now
        if remaining <= 0:
            timed_out = True
            break
        if now >= next_poll:
            if memory.held_kb() > watch_kb:
                memory_exceeded = True
                break
            next_poll = now + MEMORY_POLL_S
        wait = max(0.0, min(remaining, 1.0, next_poll - now))
        if io and len(sel.get_map()) == 0:
            wait = min(wait, 0.002)  # every pipe closed: only the program's own end is left to see
        for key, _ in sel.select(timeout=wait):
            if key.data is None:
                msg = recv_msg(ctl)
                if msg.get("op") == "extend" and isinstance(msg.get("by"), (int, float)):
                    deadline += min(max(float(msg["by"]), 0.0), limits["timeout_s"] * TRANSPORT_CAP)
                    continue
                stopped = msg.get("op") == "stop"
                gone = bool(msg.get("gone"))
                continue
            if key.data == "stdin":
                sent = _feed(in_w, stdin_data, sent)
                if sent is None:
                    sel.unregister(in_w)
                    os.close(in_w)
                continue
            if _pump(key.fd, key.data, scratch, drain=False):
                sel.unregister(key.fd)
        if out.total + err.total > limits["output_bytes"]:
            output_exceeded = True
            break
        if io and not any(k.data != "stdin" for k in sel.get_map().values()):
            got, status_, ru_ = os.wait4(pid, os.WNOHANG)  # its stdout and stderr are closed: did it end?
            if got:
                stopped = True
    if io and "stdin" in [k.data for k in sel.get_map().values()]:
        sel.unregister(in_w)
        os.close(in_w)
    end = time.monotonic()
    got, status, ru = os.wait4(pid, os.WNOHANG) if not (io and stopped) else (pid, status_, ru_)
    if not got and gone:
        # The tests saw the candidate's channel close: it is ending (a crash, an exit, the OOM killer) and
        # its status is what labels it. Its teardown can take a moment (freeing a large heap); wait for it.
        got, status, ru = _wait_ended(pid, GONE_WAIT_S)
    ended_by_itself = bool(got)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    reaped = ended_by_itself
    if not reaped:
        reaped, status, ru = _reap_within(pid, REAP_WAIT_S)
    if reaped and SUBREAPER and not _has_children():
        clean = True   # no process of the candidate's is left: nothing to count or kill
    else:
        # What is left (processes that left the group, or are still dying): a fork bomb's are still dying
        # after they were reaped (under gVisor for seconds), and would slow the next candidate into a timeout.
        strays = len(_uid_pids(CANDIDATE_UID))
        _reap_all()   # the zombies among them, ours since their parents died
        if strays > MAX_STRAYS or not reaped:
            # A fork bomb: do not spend the job's time killing it one process at a time (under gVisor that
            # takes up to a minute). The container is reported unclean and the host destroys it whole.
            clean = False
        else:
            clean = kill_uid(CANDIDATE_UID) if strays else True  # it reaps what it killed
    clean = clean and clean_ipc(CANDIDATE_UID)
    cleanup_s = time.monotonic() - end
    for key in list(sel.get_map().values()):
        if key.data is not None and key.data != "stdin":
            _pump(key.fd, key.data, scratch, drain=True)
    sel.close()
    os.close(out_r)
    os.close(err_r)
    # Every byte the candidate wrote before it was stopped counts, whenever it was read: the breach does
    # not depend on whether the verdict or the last chunk of output reached us first.
    output_exceeded = output_exceeded or out.total + err.total > limits["output_bytes"]
    if watch_kb and clean:
        # Memory a job leaves behind (shared memory segments, files in tmpfs under gVisor, where the kernel's
        # objects cannot all be listed) must not count against the next candidate: replace the container.
        clean = memory.held_kb() - held_before < MEMORY_LEAK_KB
    exit_code = sig = None
    if ended_by_itself:
        if os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = _signal_name(os.WTERMSIG(status))
    oom_after = oom.read()
    return {"start": start, "end": end, "timed_out": timed_out, "output_exceeded": output_exceeded,
            "memory_exceeded": memory_exceeded, "stop_received": stopped or io,
            "exit_code": exit_code, "signal": sig,
            "cpu_s": round(ru.ru_utime + ru.ru_stime, 6) if reaped else None,
            "peak_memory_kb": ru.ru_maxrss if reaped else None,
            "stdout_bytes": out.total, "stderr_bytes": err.total, "out_len": out.length(), "err_len": err.length(),
            "full_len": capture.n if io else 0,
            "memory_pressure": (oom_before is not None and oom_after is not None and oom_after > oom_before),
            "clean": clean, "cleanup_s": round(cleanup_s, 3)}
