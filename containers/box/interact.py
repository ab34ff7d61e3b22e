"""An interactive test: the candidate and the problem's interactor run at once, each one's stdout the other's
stdin (two pipes the supervisor makes and then lets go of, so that either side's end is seen as the other's
end of file). The interactor runs as CHECKER_UID in a directory only it can enter, with its own limits; the
candidate as ever, through the forkserver and the watcher, with its own. The verdict comes from the
interactor's exit code, read by its protocol's table (checkers.py):

    kattis   `validator input answer feedback_dir/ [flags]`: 42 accepted, 43 wrong answer
    testlib  `interactor input output answer`: testlib's exit codes (0 ok, 1 wrong answer, ...)

The supervisor keeps a read end of both pipes, as problemtools' runner does: an interactor that writes its
last line after the candidate has gone is not killed by SIGPIPE, and a candidate that writes after an
accepting interactor has gone is not either (after a rejecting one, its output is closed).

The verdict is verdicts.interactive_verdict's: an interactor that crashes, hangs, sleeps or ends outside
its protocol is a judge error whatever the candidate did; a wrong answer it gave first stands; otherwise
the candidate's own limits and crashes come first, then the interactor's verdict. A candidate that neither
reads nor writes is ended by the wall-clock backstop (idleness_limit when it used less CPU than its limit).
The interactor gets max(2 s, the time limit + 1 s) after the candidate's end to finish."""

import os
import resource
import select
import signal
import threading
import time

from .checkers import program_verdict
from .layout import CANDIDATE_ENV, CANDIDATE_UID, CHECKER_UID
from .procs import _uid_pids, kill_uid, run_delay_s
from .verdicts import feedback_files, interactive_verdict, waited_on_machine

INTERACTOR_GRACE_S = 2.0    # how long the interactor may take to finish once the candidate has ended
STDERR_LIMIT = 1 << 20       # the interactor's stderr file


def _spawn(argv, env, cwd, limits, stdin_fd, stdout_fd, stderr_fd):
    """fork + exec the interactor as CHECKER_UID, its own session, with its CPU, file and memory limits."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            for target, fd in ((0, stdin_fd), (1, stdout_fd), (2, stderr_fd)):
                os.dup2(fd, target)
            os.closerange(3, 4096)
            cpu = int(limits["cpu_time_s"])
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (STDERR_LIMIT, STDERR_LIMIT))
            memory = int(limits.get("memory_mb") or 1024) << 20
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            try:   # problemtools runs its validators with the stack unbounded: here, their memory
                resource.setrlimit(resource.RLIMIT_STACK, (memory, memory))
            except (ValueError, OSError):
                pass
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.setgroups([])
            os.setgid(CHECKER_UID)
            os.setuid(CHECKER_UID)
            os.chdir(cwd)
            os.execvpe(argv[0], argv, {**CANDIDATE_ENV, "HOME": cwd, **env})
        finally:
            os._exit(127)
    return pid


class Reaper(threading.Thread):
    """Waits for the interactor while the candidate runs, and tells which of the two ended first: one thread
    watches both (the interactor's pidfd, and the candidate's, found by its uid once it has started), so the
    order is the kernel's, not that of two clocks read by two processes. When one end causes the other (the
    candidate exits, the interactor reads end of file and exits), the cause is seen first, or both at once:
    a tie goes to the candidate."""

    def __init__(self, pid, on_end=None):
        super().__init__(daemon=True)
        self.pid, self.status, self.ru, self.ended_at = pid, None, None, None
        self.on_end = on_end
        self.interactor_first = False
        self.seen_at = None       # when its end was seen (monotonic, the watcher's clock)
        self.done = threading.Event()
        self.start()

    def run(self):
        try:
            self.interactor_first = self._first()
        except OSError:   # no pidfd here (an older gVisor): whether a process of the candidate's still runs
            self.interactor_first = None
        _, self.status, self.ru = os.wait4(self.pid, 0)
        self.ended_at = time.monotonic()
        if self.seen_at is None:
            self.seen_at = self.ended_at
        if self.interactor_first is None:
            self.interactor_first = _alive(CANDIDATE_UID)
        if self.on_end is not None:
            self.on_end(self.status)
        self.done.set()

    def _first(self):
        inter = os.pidfd_open(self.pid)
        cand = None
        try:
            while cand is None:   # the candidate's process, once the forkserver has started it
                if select.select([inter], [], [], 0.001)[0]:
                    self.seen_at = time.monotonic()
                    return _alive(CANDIDATE_UID)
                cand = _leader(CANDIDATE_UID)
            ready = select.select([inter, cand[1]], [], [])[0]
            self.seen_at = time.monotonic()
            if cand[1] in ready or select.select([cand[1]], [], [], 0)[0]:
                return False
            # A process closes its files before it is seen to end: an interactor that read the end of a
            # candidate already on its way out (killed at a limit, or crashing) can end first. The candidate
            # that is exiting ended first.
            return not _exiting(cand[0])
        finally:
            os.close(inter)
            if cand is not None:
                os.close(cand[1])


def _leader(uid):
    """(pid, pidfd) of the running session leader of `uid` (the candidate: the forkserver starts it in a
    session of its own), or None while there is none."""
    for pid in _uid_pids(uid):
        try:
            if os.getsid(pid) == pid:
                return pid, os.pidfd_open(pid)
        except OSError:
            continue
    return None


PF_EXITING = 0x4   # the kernel's task flag: the task is in its exit


def _exiting(pid):
    """Whether process `pid` has begun its exit, or is gone (the flags field of /proc/pid/stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0] in (b"Z", b"X") or bool(int(fields[6]) & PF_EXITING)
    except (OSError, IndexError, ValueError):
        return True


def _alive(uid):
    """Whether a process of `uid` is running (a zombie has ended)."""
    for pid in _uid_pids(uid):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            return True
    return False


def _await(reaper, deadline):
    """(ended by itself, wait status, rusage, its wait for a CPU when killed) of the interactor, killed at
    `deadline`."""
    if reaper.done.wait(max(0.0, deadline - time.monotonic())):
        return True, reaper.status, reaper.ru, None
    delay = run_delay_s(CHECKER_UID)
    try:
        os.killpg(reaper.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    reaper.done.wait()
    return False, reaper.status, reaper.ru, delay


class Drain(threading.Thread):
    """Reads and drops what is written to a pipe's read end the supervisor kept, once the side that read it
    has gone: the other side never meets a pipe without a reader (SIGPIPE, as problemtools' runner keeps
    its ends open too). Ends at end of file or when stopped."""

    def __init__(self, fd):
        super().__init__(daemon=True)
        self.fd, self.halt = fd, threading.Event()
        self.start()

    def run(self):
        while not self.halt.is_set():
            try:
                if select.select([self.fd], [], [], 0.05)[0] and not os.read(self.fd, 1 << 16):
                    return
            except OSError:
                return

    def close(self):
        self.halt.set()
        self.join(1.0)
        os.close(self.fd)


def interact(io_job, case, checker, paths, feedback):
    """Run one interactive test. (the candidate's report, verdict, detail, score, feedback files, facts of
    the interactor). `paths`: the test's input and answer files in the checker's directory."""
    program = io_job._checker_program(checker)
    if isinstance(program, str):
        return None, "judge_error", program, None, {}, {}
    argv, env = program
    c_dir = os.path.dirname(paths["input"])
    flags = [str(f) for f in (checker.get("flags") or ())] + [str(f) for f in (case.get("flags") or ())]
    if checker["protocol"] == "testlib":
        args = [paths["input"], os.path.join(c_dir, "tout"), paths["answer"]]
    else:
        args = [paths["input"], paths["answer"], feedback + "/", *flags]
    limits = checker.get("limits") or io_job.limits
    to_cand_r, to_cand_w = os.pipe()      # the interactor writes, the candidate reads
    from_cand_r, from_cand_w = os.pipe()  # the candidate writes, the interactor reads
    # The supervisor keeps a read end of each: the interactor's last words ("correct", a newline) after the
    # candidate has gone must not kill it by SIGPIPE, nor the candidate's after an accepting interactor.
    keep_to, keep_from = os.dup(to_cand_r), os.dup(from_cand_r)
    err_fd = os.open(os.path.join(c_dir, "stderr"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchown(err_fd, CHECKER_UID, CHECKER_UID)
    try:
        pid = _spawn(argv + args, env, c_dir, limits, from_cand_r, to_cand_w, err_fd)
    except BaseException:
        os.close(keep_to)
        os.close(keep_from)
        raise
    finally:
        for fd in (from_cand_r, to_cand_w, err_fd):
            os.close(fd)
    started = time.monotonic()
    accept = 42 if checker["protocol"] != "testlib" else 0
    from_cand = {"drain": None}

    def interactor_ended(status):
        # as problemtools: an interactor that accepted lets the candidate finish writing; one that did not
        # closes the candidate's output, which then ends on a broken pipe
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == accept:
            from_cand["drain"] = Drain(keep_from)
        else:
            os.close(keep_from)
    reaper = Reaper(pid, interactor_ended)
    mode = "io" if io_job.program is None else "exec_io"
    try:
        report = io_job.sup.watcher.run(io_job.p_dir, io_job.limits, mode, program=io_job.program,
                                        fds=(to_cand_r, from_cand_w))[0]
    except BaseException:
        os.killpg(pid, signal.SIGKILL)
        reaper.done.wait()
        os.close(keep_to)
        raise
    drain_to = Drain(keep_to)      # the candidate has gone: what the interactor still says is read and dropped
    report["python"] = io_job.program is None
    time_limit = float(io_job.judge.get("time_limit_s") or io_job.limits["timeout_s"])
    grace = max(INTERACTOR_GRACE_S, time_limit + 1.0)
    deadline = max(time.monotonic() + grace, started + float(limits["timeout_s"]))
    ended, status, ru, delay = _await(reaper, deadline)
    inter_first = ended and bool(reaper.interactor_first)
    if report["timed_out"] or report["memory_exceeded"] or report["output_exceeded"]:
        # stopped at a limit: an interactor seen to end after the stop ended because the candidate did
        inter_first = inter_first and reaper.seen_at is not None and reaper.seen_at < report["end"]
    leftover = kill_uid(CHECKER_UID)
    drain_to.close()
    if from_cand["drain"] is not None:
        from_cand["drain"].close()
    io_job.clean = io_job.clean and leftover and bool(report["clean"])
    io_job._no_leftovers(report)
    files = feedback_files(feedback)
    stderr = _read_bounded(os.path.join(c_dir, "stderr"), 4096)
    code = os.WEXITSTATUS(status) if ended and os.WIFEXITED(status) else None
    sig = signal.Signals(os.WTERMSIG(status)).name if ended and os.WIFSIGNALED(status) else None
    facts = {"interactor_cpu_s": round(ru.ru_utime + ru.ru_stime, 6) if ru else None,
             "interactor_exit": code, "interactor_signal": sig, "interactor_first": inter_first}
    interactor = {"ended": ended, "first": inter_first, "verdict": None, "detail": "", "score": None,
                  "stalled": not ended and bool(waited_on_machine(*(delay or (None, None)),
                                                                   time.monotonic() - started))}
    if ended:
        interactor["verdict"], interactor["detail"], interactor["score"] = program_verdict(
            checker["protocol"], code, sig, b"", stderr, files)
    verdict, detail, score = interactive_verdict(interactor, report, io_job.limits, time_limit)
    return report, verdict, detail, score, files, facts


def _read_bounded(path, limit):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return b""
    try:
        return os.read(fd, limit)
    finally:
        os.close(fd)
