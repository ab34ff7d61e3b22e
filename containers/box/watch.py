"""Watching one run of a candidate, from the supervisor (root): its output (kept in buffers made once),
the wall-clock limit, the output limit and the sandbox's memory, while the forkserver, which forked it,
waits for its end without touching memory the candidate shares with it."""

import os
import selectors
import time

from .framing import HELLO, STOP_GONE, STOP_KILL, recv_exact, recv_msg, send_with_fds
from .layout import CANDIDATE_UID
from .procs import run_delay_s

TAIL_BYTES = 2048
MEMORY_POLL_S = 0.005      # how often the sandbox's memory is read while a candidate runs (gVisor only)
MEMORY_LEAK_KB = 32 * 1024  # memory still held after a job beyond this: the container is replaced
# How long past its deadline a job may take to be killed and reaped (a fork bomb under gVisor is slow).
CLEANUP_GRACE_S = 20.0
# After the candidate has ended, how long the tests may still take to give their verdict, beyond the
# wall-clock limit (the verdict of tests that finished in time is on its way).
VERDICT_GRACE_S = 1.0


class Capture:
    """A program's whole stdout, up to the output limit (the io channel compares it), in one buffer made
    once."""

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

    def take(self):
        data = bytes(self.buf[:self.n])
        self.n = 0
        return data


class Ring:
    """The last TAIL_BYTES of a stream, kept in place as it is read."""

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

    def tail(self) -> bytes:
        if self.total < TAIL_BYTES:
            return bytes(self.view[:self.pos])
        return bytes(self.view[self.pos:]) + bytes(self.view[:self.pos])

    def clear(self):
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


class CgroupMemory:
    """Memory the container's cgroup charges that cannot be reclaimed, in kB: anonymous memory and shared
    memory (tmpfs files, memfd), from its memory.stat (cgroup v1 or v2), read through a file kept open.
    Under runc this is how the memory of a compiled program or a runtime (JVM, Go, V8) is watched: they
    reserve address space far beyond what they use, so RLIMIT_AS cannot bound them."""

    PATHS = (("/sys/fs/cgroup/memory/memory.stat", (b"total_rss", b"total_shmem")),
             ("/sys/fs/cgroup/memory.stat", (b"anon", b"shmem")))

    def __init__(self):
        for path, names in self.PATHS:
            try:
                self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            self.names = names
            return
        raise OSError("no cgroup memory.stat in this container")

    def held_kb(self):
        total = 0
        for line in os.pread(self.fd, 16384, 0).split(b"\n"):
            name, _, value = line.partition(b" ")
            if name in self.names:
                total += int(value)
        return total // 1024


def job_memory():
    """The memory source that watches one job's own use: the cgroup where it is readable (runc), else
    the sandbox's own /proc/meminfo (gVisor, whose meminfo is the sandbox's)."""
    try:
        return CgroupMemory()
    except OSError:
        return SandboxMemory()


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


def _pump(fd, sinks, scratch, drain, bound=None):
    """Read what a non-blocking pipe holds into each of `sinks` through `scratch` (once, or until it is
    empty when `drain`, or `bound` bytes have gone into the first sink). Returns True at end of file."""
    while bound is None or sinks[0].total < bound:
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


class Watcher:
    """The supervisor's side of running candidates: the forkserver's control socket, and the buffers
    every run's output goes through (made once)."""

    def __init__(self, fs):
        self.fs = fs
        self.scratch = memoryview(bytearray(65536))
        self.out, self.err = Ring(), Ring()
        self.capture = Capture()
        self.memory = None
        self.job_memory = None
        self.oom = OomCounter()
        # One epoll for every run (a run registers its pipes and unregisters them at its end): an epoll
        # made and closed per run is a few syscalls and allocations on every candidate and every test.
        self.sel = selectors.DefaultSelector()

    def run(self, workdir, limits, mode, chan=None, stdin=None, tester=None, on_tester=None, program=None,
            marker_fd=None, uid=None, fds=None):
        """Start a candidate in `workdir` (through the forkserver; `chan`, its socket to the tests, is
        handed over and closed here) and watch it until it ends, a limit
        stops it, or the tests are done with it. `on_tester()` is called when `tester` is readable; it
        returns ("credit", seconds) to move the deadline, or ("done", gone) once the tests ended (gone:
        they saw the candidate's channel close). Returns (the run's report, see decide(), or None when
        the forkserver did not report within the grace; the transport credit given; whether the tests
        ended). A run the forkserver never reported on (still killing a fork bomb) is unreported().
        Mode "exec": `program` is (argv, environment) run in place of the interpreter, `marker_fd` (the
        write end of the completion marker's pipe, closed here) its fd 3; its memory is watched against
        limits["job_memory_kb"] above what the container held when it started. Mode "exec_io": `program`
        run with `stdin` on its stdin and its stdout captured, as mode "io" runs a Python program; `uid` (a
        problem's checker or interactor) runs it as another user than the candidate's. `fds` (an interactive
        problem's): (stdin, stdout) the run gets instead of pipes of the watcher's, closed here once handed
        over; nothing is fed and nothing captured."""
        io = mode in ("io", "exec_io")
        timeout = limits["timeout_s"]
        watch_kb = limits.get("memory_watch_kb")
        if watch_kb and self.memory is None:
            self.memory = SandboxMemory()
        oom_before = self.oom.read()
        held_before = self.memory.held_kb() if watch_kb else None
        job_kb = limits.get("job_memory_kb")
        if job_kb and self.job_memory is None:
            self.job_memory = job_memory()
        job_base = self.job_memory.held_kb() if job_kb else 0
        job_peak = 0
        out, err, capture = self.out, self.err, self.capture
        out.clear()
        err.clear()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if io and fds is not None:
            in_r, in_w = fds[0], None
            capture.ready(0)
            give = [in_r, fds[1], err_w]
        elif io:
            in_r, in_w = os.pipe()
            capture.ready(limits["output_bytes"])
            give = [in_r, out_w, err_w]
        elif mode == "exec":
            give = [out_w, err_w, marker_fd]
        else:
            give = [out_w, err_w, chan.fileno()]
        req = {"op": "run", "dir": workdir, "limits": limits, "mode": mode}
        if uid is not None:
            req["uid"] = uid
        if program is not None:
            req["argv"], req["env"] = program
        try:
            send_with_fds(self.fs, give, req)
        finally:
            # Only the candidate may hold its ends: the tests see its channel close when it ends.
            for fd in (in_r, out_w, err_w) if io else (out_w, err_w):
                os.close(fd)
            if fds is not None:
                os.close(fds[1])
            if chan is not None:
                chan.close()
            if marker_fd is not None:
                os.close(marker_fd)
        (start,) = HELLO.unpack(recv_exact(self.fs, HELLO.size))
        deadline = start + timeout
        credit = 0.0
        sel = self.sel
        for key in list(sel.get_map().values()):   # what a run that ended by an exception left registered
            sel.unregister(key.fileobj)
        for fd, sinks in ((out_r, (out, capture) if io else (out,)), (err_r, (err,))):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, sinks)
        stdin_data, sent = b"", None
        if io and in_w is not None:
            stdin_data = stdin if isinstance(stdin, bytes) else (stdin or "").encode("utf-8", "surrogatepass")
            os.set_blocking(in_w, False)
            sent = _feed(in_w, stdin_data, 0) if stdin_data else None
            if sent is None:
                os.close(in_w)
            else:
                sel.register(in_w, selectors.EVENT_WRITE, "stdin")
        sel.register(self.fs, selectors.EVENT_READ, "forkserver")
        if tester is not None:
            sel.register(tester, selectors.EVENT_READ, "tester")
        tests_done = tester is None
        timed_out = output_exceeded = memory_exceeded = False
        run_delay = None           # the candidate's wait for a CPU, read when the wall clock stops it
        stopped_at = None          # when the stop was sent
        report = None              # the forkserver's, once the candidate is gone
        end = None
        verdict_deadline = hard_deadline = None
        next_poll = start + MEMORY_POLL_S if watch_kb or job_kb else float("inf")

        def stop(code):
            nonlocal stopped_at, end, hard_deadline
            self.fs.sendall(code)
            stopped_at = time.monotonic()
            if end is None:
                end = stopped_at
            hard_deadline = max(stopped_at, deadline) + CLEANUP_GRACE_S

        while True:
            now = time.monotonic()
            if report is None and stopped_at is None:      # the candidate runs
                if now >= deadline:
                    timed_out = True
                    run_delay = run_delay_s(CANDIDATE_UID if uid is None else uid)   # before the stop: the machine's share of its time
                    stop(STOP_KILL)
                elif out.total + err.total > limits["output_bytes"]:
                    output_exceeded = True
                    stop(STOP_KILL)
                elif now >= next_poll:
                    if watch_kb and self.memory.held_kb() > watch_kb:
                        memory_exceeded = True
                        stop(STOP_KILL)
                    elif job_kb:
                        used = self.job_memory.held_kb() - job_base
                        job_peak = max(job_peak, used)
                        if used > job_kb:
                            memory_exceeded = True
                            stop(STOP_KILL)
                    next_poll = now + MEMORY_POLL_S
            if report is not None:
                if tests_done or now >= verdict_deadline:
                    break
                wait = verdict_deadline - now
            elif stopped_at is not None:
                if now >= hard_deadline:
                    break                                   # the forkserver is still killing (a fork bomb)
                wait = hard_deadline - now
            else:
                wait = min(deadline - now, next_poll - now, 1.0)
            for key, _ in sel.select(timeout=max(0.0, wait)):
                what = key.data
                if what == "forkserver":
                    report = recv_msg(self.fs)
                    sel.unregister(self.fs)
                    if end is None:                         # it ended by itself
                        end = report["t_exit"] or time.monotonic()
                    # The tests may go on after the candidate ended, within the wall-clock limit.
                    verdict_deadline = max(start + timeout + credit, time.monotonic()) + VERDICT_GRACE_S
                elif what == "tester":
                    action, value = on_tester()
                    if action == "credit":
                        if value > 0:
                            credit += value
                            deadline += value
                        continue
                    sel.unregister(tester)
                    tests_done = True
                    if stopped_at is None and report is None:
                        stop(STOP_GONE if value else STOP_KILL)
                elif what == "stdin":
                    sent = _feed(in_w, stdin_data, sent)
                    if sent is None:
                        sel.unregister(in_w)
                        os.close(in_w)
                elif _pump(key.fd, what, self.scratch, drain=False):
                    sel.unregister(key.fd)
        if stopped_at is None:
            stop(STOP_KILL)                                      # exactly one stop per job
        for key in list(sel.get_map().values()):
            sel.unregister(key.fileobj)
            if key.data == "stdin":
                os.close(key.fd)
            elif key.data not in ("forkserver", "tester"):
                _pump(key.fd, key.data, self.scratch, drain=True, bound=limits["output_bytes"] + 1)
        os.close(out_r)
        os.close(err_r)
        if report is None:
            return unreported(start, limits, time.monotonic()), credit, tests_done
        # Every byte the candidate wrote before it was stopped counts, whenever it was read: the breach
        # does not depend on whether the verdict or the last chunk of output reached us first.
        output_exceeded = output_exceeded or out.total + err.total > limits["output_bytes"]
        clean = bool(report.get("clean"))
        if watch_kb and clean:
            # Memory a job leaves behind (shared memory segments, files in tmpfs under gVisor, where the
            # kernel's objects cannot all be listed) must not count against the next candidate.
            clean = self.memory.held_kb() - held_before < MEMORY_LEAK_KB
        oom_after = self.oom.read()
        return ({"start": start, "end": end, "timed_out": timed_out, "output_exceeded": output_exceeded,
                 "memory_exceeded": memory_exceeded, "job_memory_peak_kb": job_peak if job_kb else None,
                 "exit_code": report.get("exit_code"), "signal": report.get("signal"),
                 "cpu_s": report.get("cpu_s"), "peak_memory_kb": report.get("peak_memory_kb"),
                 "stdout_bytes": out.total, "stderr_bytes": err.total,
                 "stdout_tail": out.tail(), "stderr_tail": err.tail(),
                 "stdout": capture.take() if io else None,
                 "memory_pressure": oom_before is not None and oom_after is not None and oom_after > oom_before,
                 "clean": clean, "alone": bool(report.get("alone")), "cleanup_s": report.get("cleanup_s") or 0.0, "run_delay_s": run_delay[0] if run_delay else None,
                 "run_cpu_s": run_delay[1] if run_delay else None},
                credit, tests_done)


def unreported(start, limits, now):
    """What is known of a run the forkserver never reported on: it started, and ran out of time."""
    return {"start": start, "end": start + limits["timeout_s"], "timed_out": True, "output_exceeded": False,
            "memory_exceeded": False, "exit_code": None, "signal": None, "cpu_s": None,
            "peak_memory_kb": None, "stdout_bytes": None, "stderr_bytes": None, "stdout_tail": b"",
            "stderr_tail": b"", "stdout": b"", "memory_pressure": False, "clean": False, "unreported": True,
            "cleanup_s": round(now - start - limits["timeout_s"], 3)}
