"""An interactive test: the candidate and the problem's interactor run at once, each one's stdout the other's
stdin (two pipes the supervisor makes and then lets go of, so that either side's end is seen as the other's
end of file). The interactor runs as CHECKER_UID in a directory only it can enter, with its own limits; the
candidate as ever, through the forkserver and the watcher, with its own. The verdict comes from the
interactor's exit code, read by its protocol's table (checkers.py):

    kattis   `validator input answer feedback_dir/ [flags]`: 42 accepted, 43 wrong answer
    testlib  `interactor input output answer`: testlib's exit codes (0 ok, 1 wrong answer, ...)

Who ended first matters, as problemtools reads it: a wrong answer the interactor gave before the candidate
ended stands whatever the candidate did after; otherwise the candidate's own limits and crashes come first,
then the interactor's verdict. An interactor that fails (a crash, an exit code outside its protocol, its
time) is a judge error, unless the candidate had already gone or closed its input: a write to a closed
pipe (SIGPIPE, Python's BrokenPipeError) or an interactor left without its partner is the candidate's
doing, judged wrong_answer. A candidate that neither reads nor writes is ended by the wall-clock backstop
(idleness_limit when it used less CPU than its limit)."""

import os
import resource
import select
import signal
import threading
import time

from .checkers import program_verdict
from .layout import CANDIDATE_ENV, CANDIDATE_UID, CHECKER_UID
from .procs import _uid_pids, kill_uid

INTERACTOR_GRACE_S = 2.0    # how long the interactor may take to finish once the candidate has ended
STDERR_LIMIT = 1 << 20       # the interactor's stderr file
BROKEN_PIPE = (b"BrokenPipeError", b"Broken pipe", b"EPIPE")   # how a runtime says its output's reader is gone


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

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.status, self.ru, self.ended_at = pid, None, None, None
        self.interactor_first = False
        self.done = threading.Event()
        self.start()

    def run(self):
        try:
            self.interactor_first = self._first()
        except OSError:   # no pidfd here (an older gVisor): whether a process of the candidate's still runs
            self.interactor_first = None
        _, self.status, self.ru = os.wait4(self.pid, 0)
        self.ended_at = time.monotonic()
        if self.interactor_first is None:
            self.interactor_first = _alive(CANDIDATE_UID)
        self.done.set()

    def _first(self):
        inter = os.pidfd_open(self.pid)
        cand = None
        try:
            while cand is None:   # the candidate's process, once the forkserver has started it
                if select.select([inter], [], [], 0.001)[0]:
                    return _alive(CANDIDATE_UID)
                cand = _leader(CANDIDATE_UID)
            ready = select.select([inter, cand], [], [])[0]
            if cand in ready:
                return False
            return not select.select([cand], [], [], 0)[0]
        finally:
            os.close(inter)
            if cand is not None:
                os.close(cand)


def _leader(uid):
    """A pidfd of the running session leader of `uid` (the candidate: the forkserver starts it in a session
    of its own), or None while there is none."""
    for pid in _uid_pids(uid):
        try:
            if os.getsid(pid) == pid:
                return os.pidfd_open(pid)
        except OSError:
            continue
    return None


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
    """(ended by itself, wait status, rusage, when it ended) of the interactor, killed at `deadline`."""
    if reaper.done.wait(max(0.0, deadline - time.monotonic())):
        return True, reaper.status, reaper.ru, reaper.ended_at
    try:
        os.killpg(reaper.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    reaper.done.wait()
    return False, reaper.status, reaper.ru, reaper.ended_at


def interact(io_job, case, checker, paths, feedback):
    """Run one interactive test. (the candidate's report, verdict, detail, score, feedback files, facts of
    the interactor). `paths`: the test's input and answer files in the checker's directory."""
    from .judge import _feedback_files, judged_label
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
    err_fd = os.open(os.path.join(c_dir, "stderr"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchown(err_fd, CHECKER_UID, CHECKER_UID)
    try:
        pid = _spawn(argv + args, env, c_dir, limits, from_cand_r, to_cand_w, err_fd)
    finally:
        for fd in (from_cand_r, to_cand_w, err_fd):
            os.close(fd)
    started = time.monotonic()
    reaper = Reaper(pid)
    mode = "io" if io_job.program is None else "exec_io"
    try:
        report = io_job.sup.watcher.run(io_job.p_dir, io_job.limits, mode, program=io_job.program,
                                        fds=(to_cand_r, from_cand_w))[0]
    except BaseException:
        os.killpg(pid, signal.SIGKILL)
        reaper.done.wait()
        raise
    report["python"] = io_job.program is None
    deadline = max(time.monotonic() + INTERACTOR_GRACE_S, started + float(limits["timeout_s"]))
    ended, status, ru, _ = _await(reaper, deadline)
    inter_first = ended and bool(reaper.interactor_first)
    leftover = kill_uid(CHECKER_UID)
    io_job.clean = io_job.clean and leftover and bool(report["clean"])
    io_job._no_leftovers()
    files = _feedback_files(feedback)
    stderr = _read_bounded(os.path.join(c_dir, "stderr"), 4096)
    code = os.WEXITSTATUS(status) if ended and os.WIFEXITED(status) else None
    sig = signal.Signals(os.WTERMSIG(status)).name if ended and os.WIFSIGNALED(status) else None
    facts = {"interactor_cpu_s": round(ru.ru_utime + ru.ru_stime, 6) if ru else None,
             "interactor_exit": code, "interactor_signal": sig, "interactor_first": inter_first}
    time_limit = float(io_job.judge.get("time_limit_s") or io_job.limits["timeout_s"])
    own, own_detail = judged_label(report, io_job.limits, time_limit)
    if own == "time_limit" and report["timed_out"] and (report.get("cpu_s") or 0.0) < time_limit:
        own, own_detail = "idleness_limit", (f"neither ended nor used its CPU time in {io_job.limits['timeout_s']:g} s "
                                             "(waiting for the interactor, or the interactor for it)")
    if not ended:
        if own != "ok":
            return report, own, own_detail, None, files, facts
        return report, "judge_error", "the interactor did not finish in time", None, files, facts
    verdict, detail, score = program_verdict(checker["protocol"], code, sig, b"", stderr, files)
    if verdict == "judge_error":
        broken_pipe = sig == "SIGPIPE" or b"BrokenPipeError" in stderr
        if inter_first and not broken_pipe:   # it failed on its own while the candidate still ran
            return report, verdict, detail, None, files, facts
        if not inter_first and own != "ok":    # the candidate crashed or ran out of a limit first
            return report, own, own_detail, None, files, facts
        # the candidate left, or closed its input: the interactor could not go on (what the candidate did
        # after, its write to a pipe nobody reads, follows from that)
        return report, "wrong_answer", "the candidate ended or closed its input before the interaction " \
            "finished", None, files, facts
    # the candidate's own end may follow from the interactor's (a write to the pipe it closed): then the
    # interactor was first, whatever the order two exits a moment apart were seen in
    broken = report["signal"] == "SIGPIPE" or any(sign in report["stderr_tail"] for sign in BROKEN_PIPE)
    if verdict == "wrong_answer" and (inter_first or broken):
        return report, verdict, detail, None, files, facts     # the interactor rejected it first
    if own != "ok":
        return report, own, own_detail, None, files, facts
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
