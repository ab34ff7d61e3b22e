"""A judged run's verdict rules, in one home that the judge (judge.py) and the interactor's runner
(interact.py) both import: what one run of a program under a judge's limits is (judged_label), what an
interactive test is once both sides have ended (interactive_verdict), and what the machine, not the
program, decided (stalled). Pure functions of what was measured, so that they can be tested on records.

The machine's load never decides a label: a wall-clock backstop that ends a program which spent most of
its time off the CPU *waiting for one* (its tasks' run-queue delay, /proc/<pid>/task/*/schedstat, read as it
is stopped) is `machine_stall`, an error the host reruns, not the program's time limit. A program that
sleeps, blocks or waits on its input is off the CPU without waiting for one, and its backstop stays its
verdict. Where the sandbox's kernel does not say (gVisor has no schedstat) the backstop is the verdict, as
before."""

import os
import stat

from .checkers import MAX_FEEDBACK
from .protocol import SYNTAX_ERROR_EXIT

STALL_MIN_S = 1.0            # run-queue delay below this never counts as a stall
STALL_SHARE = 0.5            # ... nor one under this share of the time the program was off the CPU
STALL_BUSY = 0.5             # ... nor one of a program whose own tasks ran this share of its wall clock
OOM_SIGNS = (b"MemoryError", b"java.lang.OutOfMemoryError", b"JavaScript heap out of memory",
             b"runtime: out of memory", b"memory allocation of", b"std::bad_alloc", b"out of memory")
# A judged test's verdicts, as judges name them; the first that is not "ok" labels the candidate.
REJECTIONS = {"wrong_answer": "failed", "presentation_error": "failed", "time_limit": "timed_out",
              "idleness_limit": "timed_out", "memory_limit": "failed", "runtime_error": "failed",
              "output_limit": "failed", "compile_error": "failed", "judge_error": "error", "partial_score": "failed",
              "machine_stall": "error"}
# verdicts that end a job at once: nothing after them can change what the row says
FINAL = ("judge_error", "machine_stall")


def stalled(report):
    """Whether the wall clock ended a run that the machine kept off the CPU: it was stopped by its backstop,
    one of its tasks waited at least STALL_MIN_S, and at least STALL_SHARE of the time they were not running,
    in a run queue, while together they ran less than STALL_BUSY of the wall clock (tasks that fill their
    CPUs keep each other waiting, and a fork bomb's hundreds wait a little each: its wait is its own). None
    where the run's delay was not measured."""
    if not report.get("timed_out"):
        return False
    return waited_on_machine(report.get("run_delay_s"), report.get("run_cpu_s"),
                             max(0.0, (report.get("end") or 0.0) - (report.get("start") or 0.0)),
                             report.get("cpu_s") or 0.0)


def waited_on_machine(delay, ran, wall, cpu_s=0.0):
    """The rule of stalled(), on measured figures: `delay` the longest run-queue wait of one live task and
    `ran` the live tasks' run time (procs.run_delay_s), `wall` the run's wall clock, `cpu_s` its reaped CPU
    time."""
    if delay is None:
        return None
    off_cpu = max(0.0, wall - cpu_s)
    busy = ran is not None and ran >= STALL_BUSY * wall
    return delay >= STALL_MIN_S and delay >= STALL_SHARE * off_cpu and not busy


def stall_detail(report, what="the program"):
    wall = max(0.0, (report.get("end") or 0.0) - (report.get("start") or 0.0))
    return (f"{what} waited {report.get('run_delay_s', 0):.2f} s for a CPU in its {wall:.2f} s of wall clock "
            f"({report.get('cpu_s') or 0:.2f} s of CPU): the machine's load, not the program, stopped it; rerun")


def judged_label(report, limits, time_limit_s):
    """(verdict, detail) of one judged run before its output is checked: "ok" when it ended by itself
    within every limit with exit code 0. CPU time decides the time limit, as judges measure it; the wall
    clock (timeout_s) is a backstop for a program that waits."""
    cpu = report.get("cpu_s")
    if report["output_exceeded"]:
        return "output_limit", f"wrote more than {limits['output_bytes']} bytes"
    # CPU time over the limit is the time limit, whatever the program did after it (ran out of memory,
    # crashed): judges look at the time first (problemtools' and DOMjudge's runners: TLE before RTE)
    if report["signal"] == "SIGXCPU":
        return "time_limit", f"stopped by the CPU backstop after {cpu if cpu is not None else '?'} s of CPU " \
            f"(the limit is {time_limit_s:g} s)"
    if cpu is not None and cpu > time_limit_s:
        return "time_limit", f"used {cpu:g} s of CPU, over the {time_limit_s:g} s limit"
    peak = max(report.get("job_memory_peak_kb") or 0, report.get("peak_memory_kb") or 0)
    if report.get("memory_exceeded") or report["memory_pressure"] or peak > limits["memory_mb"] * 1024:
        # the watch (every 5 ms), the container's OOM killer, or the peak the kernel kept (ru_maxrss): a
        # program that touched more than its limit between two looks still used it, as judges count peaks
        return "memory_limit", f"used more than {limits['memory_mb']} MB (peak {peak // 1024} MB)"
    if report["timed_out"]:
        if stalled(report):
            return "machine_stall", stall_detail(report)
        return "time_limit", (f"still running after {limits['timeout_s']:g} s of wall clock (the backstop; "
                              f"{cpu if cpu is not None else '?'} s of CPU)")
    sig, code = report["signal"], report["exit_code"]
    tail = report["stderr_tail"] + report["stdout_tail"]
    lines = [line for line in tail.decode("utf-8", "replace").splitlines() if line.strip()]
    if (sig or code) and any(sign in tail for sign in OOM_SIGNS) and peak * 2 >= limits["memory_mb"] * 1024:
        return "memory_limit", "the runtime ran out of memory: " + (lines[-1] if lines else "")
    if sig == "SIGXFSZ":
        return "output_limit", "wrote a file larger than the limit"
    if sig is not None:
        return "runtime_error", f"killed by {sig}" + (f": {lines[-1]}" if lines else "")
    if code == SYNTAX_ERROR_EXIT and report.get("python"):
        return "compile_error", "the program does not compile: " + (lines[-1] if lines else "")
    if code != 0:
        return "runtime_error", f"exit code {code}" + (f": {lines[-1]}" if lines else "")
    return "ok", ""


def interactive_verdict(interactor, candidate, limits, time_limit_s):
    """The verdict of one interactive test, as problemtools reads its runner's report, with passk's rule for
    a judge's fault. `interactor`: {ended, verdict, detail, score, first, stalled}: `ended` False when it
    did not finish by itself within its time after the candidate ended (it hung, slept or waited), `verdict`
    its exit read by its protocol (checkers.program_verdict), `first` whether it ended before the candidate,
    `stalled` whether the machine kept it off the CPU. `candidate`: its run's report (the watcher's), under
    `limits` (the candidate's).
    (verdict, detail, score).

    - The interactor's fault is a judge error whatever the candidate did: it crashed, it exited outside its
      protocol, it did not finish (a hang or a sleep: a healthy interactor ends once the candidate has, on
      the end of its input).
    - A wrong answer the interactor gave before the candidate ended stands (the candidate's own end may
      follow from it: a write to the pipe the interactor left).
    - Otherwise the candidate's own limits and crashes come first, then the interactor's verdict."""
    own, own_detail = judged_label(candidate, limits, time_limit_s)
    if own == "time_limit" and candidate["timed_out"] and (candidate.get("cpu_s") or 0.0) < time_limit_s:
        own, own_detail = "idleness_limit", (f"neither ended nor used its CPU time in {limits['timeout_s']:g} s "
                                             "(waiting for the interactor, or the interactor for it)")
    if own == "machine_stall":
        return own, own_detail, None
    if not interactor["ended"]:
        if interactor.get("stalled"):
            return "machine_stall", "the interactor was kept off the CPU by the machine's load; rerun", None
        return "judge_error", ("the interactor did not finish: it neither ended nor answered after the candidate "
                               "ended (a hang, a sleep, or it waited for more than the candidate wrote)"), None
    verdict, detail, score = interactor["verdict"], interactor["detail"], interactor.get("score")
    if verdict == "judge_error":
        return verdict, "the interactor failed: " + detail, None
    broken = candidate["signal"] == "SIGPIPE" or any(sign in candidate["stderr_tail"] for sign in BROKEN_PIPE)
    if verdict == "wrong_answer" and (interactor["first"] or broken):
        return verdict, detail, None     # the interactor rejected it first
    if own != "ok":
        return own, own_detail, None
    return verdict, detail, score


BROKEN_PIPE = (b"BrokenPipeError", b"Broken pipe", b"EPIPE")   # how a runtime says its output's reader is gone


def feedback_files(feedback_dir):
    """The feedback directory's regular files (never a link), each bounded, at most 16 of them."""
    out = {}
    try:
        names = sorted(os.listdir(feedback_dir))[:16]
    except OSError:
        return out
    for name in names:
        try:
            fd = os.open(os.path.join(feedback_dir, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                out[name] = os.read(fd, MAX_FEEDBACK)
        finally:
            os.close(fd)
    return out
