"""A run's label from what was measured (the watcher's report) and the limits: the io channel's per test,
another language's per step. Pure functions of the record, so that an audit can replay them."""

from .channels.io import compare
from .protocol import SYNTAX_ERROR_EXIT
from .text import clean_text
from .verdicts import stall_detail, stalled


IO_STDIN_CHARS = 300   # of a failing test's input, in a result's detail


def _excerpt(text, limit=120):
    return clean_text(text if len(text) <= limit else text[:limit] + "…", limit + 40)




def _io_label(report, limits, stdout, case, rule, index):
    """(status, reason, detail) of one test of the io channel: limits first, then how the program ended,
    then the comparison."""
    where = f"test {index}"
    if report["output_exceeded"]:
        return "failed", "output_limit", f"{where}: printed more than {limits['output_bytes']} bytes"
    if report.get("memory_exceeded") or report["memory_pressure"]:
        return "failed", "memory_limit", f"{where}: the memory limit"
    if report["timed_out"]:
        if stalled(report):
            return "error", "machine_stall", f"{where}: " + stall_detail(report)
        return "timed_out", "wall_time_limit", f"{where}: still running after {limits['timeout_s']} s"
    sig, code = report["signal"], report["exit_code"]
    if sig == "SIGXCPU":
        return "timed_out", "cpu_time_limit", f"{where}: used more than {limits['cpu_time_s']} s of CPU"
    if sig == "SIGXFSZ":
        return "failed", "file_size_limit", f"{where}: wrote a file larger than the limit"
    if sig is not None:
        return "failed", f"signal:{sig}", f"{where}: killed by {sig}"
    if code == SYNTAX_ERROR_EXIT and report.get("python", True):   # a Python program that does not compile
        tail = report["stderr_tail"].decode("utf-8", "replace").strip().splitlines()
        return "failed", "syntax_error", f"{where}: " + (tail[-1] if tail else "the program does not compile")
    if code != 0:
        tail = report["stderr_tail"].decode("utf-8", "replace").strip().splitlines()
        return "failed", "runtime_error", f"{where}: exit code {code}" + (f": {tail[-1]}" if tail else "")
    ok, why = compare(rule, stdout.decode("utf-8", "replace"), case.get("output", ""))
    if not ok:
        return ("failed", "wrong_answer", f"{where}: {why} under rule {rule}: expected "
                f"{_excerpt(case.get('output', ''))!r}, got {_excerpt(stdout.decode('utf-8', 'replace'))!r}")
    return "passed", "tests_completed", ""


_ASSERTION_SIGNS = (b"Assertion `", b"AssertionError", b"ERR_ASSERTION", b"assertion failed", b"assertion `left",
                    b"--- FAIL", b"is not TRUE", b"Test failed!", b"Failure: test_", b"expected: ", b"\nFAILURE\n",
                    b"AssertError", b"/rackunit/private/check.rkt", b"Assertion with == failed", b"Assert_failure")


_RUNTIME_OOM_SIGNS = (b"java.lang.OutOfMemoryError", b"JavaScript heap out of memory",
                      b"runtime: out of memory", b"memory allocation of", b"std::bad_alloc",
                      b"System.OutOfMemoryException", b"core.exception.OutOfMemoryError", b"cannot allocate vector",
                      b"failed to allocate memory (NoMemoryError)", b"Out of memory!", b"not enough memory",
                      b"Out_of_memory", b"STORAGE_ERROR", b"heap overflow", b"out of memory",
                      b"Cannot allocate memory", b"eheap_alloc: Cannot allocate")


SYNTAX_ERROR_MARK = "syntax_error"


def _marked(data: bytes, nonce: str):
    """What the completion marker says: False (not written), True (the tests ended), the text after
    `:no_tests:` (the tests ended, but fewer of them ran than the file has: "ran/total"), or
    SYNTAX_ERROR_MARK (`:syntax_error`: passk's preload found that the program does not parse)."""
    at = data.find(nonce.encode())
    if at < 0:
        return False
    rest = data[at + len(nonce):]
    if rest.startswith(b":no_tests:"):
        ran = rest[len(b":no_tests:"):][:24]
        return "".join(chr(c) for c in ran if 48 <= c <= 57 or c == 47) or "?"
    if rest.startswith(b":syntax_error"):
        return SYNTAX_ERROR_MARK
    return True


def _output_rule(report, rule):
    """Why MultiPL-E's rule for the language fails a run that exited 0 (its evaluator reads the output as
    well as the exit code): None when it does not. `rule` (harness/inputs/languages.py, Language.rule):
    stderr_empty, signs (in stdout or stderr), stdout_signs, stderr_signs; the signs are looked for in the
    last 2 KB of each stream."""
    if not rule:
        return None
    if rule.get("stderr_empty") and report.get("stderr_bytes"):
        return f"wrote {report['stderr_bytes']} bytes to stderr (MultiPL-E's rule for the language: a run that writes to stderr failed)"
    out, err = report.get("stdout_tail") or b"", report.get("stderr_tail") or b""
    for key, streams in (("signs", (out, err)), ("stdout_signs", (out,)), ("stderr_signs", (err,))):
        for sign in rule.get(key) or ():
            if any(sign.encode() in s for s in streams):
                return f"the output holds {sign!r} (MultiPL-E's rule for the language)"
    return None


def _native_label(report, limits, step, last, marked, language=None, rule=None):
    """(status, reason, detail) of one step of a compiled or interpreted program: limits first, then how it
    ended; a compile step that fails is the candidate's compile error; the last step passes only with the
    completion marker."""
    compile_step = not last
    err = report["stderr_tail"].decode("utf-8", "replace")
    out = report["stdout_tail"].decode("utf-8", "replace")
    lines = [line for line in (err.strip() or out.strip()).splitlines() if line.strip()]
    if report["output_exceeded"]:
        if compile_step:
            return "failed", "compile_error", f"{step}: the compiler printed more than {limits['output_bytes']} bytes"
        return "failed", "output_limit", f"printed more than {limits['output_bytes']} bytes"
    if report.get("memory_exceeded") or report["memory_pressure"]:
        return "failed", ("compile_memory_limit" if compile_step else "memory_limit"), \
            f"{step}: used more than {limits.get('job_memory_kb', 0) // 1024} MB"
    if report["timed_out"]:
        if stalled(report):
            return "error", "machine_stall", f"{step}: " + stall_detail(report)
        return "timed_out", ("compile_time_limit" if compile_step else "wall_time_limit"), \
            f"{step}: still running after {limits['timeout_s']} s"
    sig, code = report["signal"], report["exit_code"]
    if sig == "SIGXCPU":
        return "timed_out", ("compile_time_limit" if compile_step else "cpu_time_limit"), \
            f"{step}: used more than {limits['cpu_time_s']} s of CPU"
    if compile_step:
        if sig is None and code == 0:
            return "passed", "compiled", ""
        if sig == "SIGXFSZ":
            return "failed", "compile_error", f"{step}: wrote a file larger than the limit" + \
                (f": {lines[-1]}" if lines else "")
        why = f"killed by {sig}" if sig else f"exit code {code}"
        errors = [line for line in lines if "error" in line.lower()] or lines
        return "failed", "compile_error", f"{step} failed ({why})" + (": " + " | ".join(errors[:3]) if errors else "")
    if sig == "SIGXFSZ":
        return "failed", "file_size_limit", "wrote a file larger than the limit"
    tail = report["stderr_tail"] + report["stdout_tail"]
    # a test that failed (not one that crashed: Go prints "--- FAIL" for a test that panicked too)
    assertion = any(sign in tail for sign in _ASSERTION_SIGNS) and b"panic: " not in tail
    if language == "go":   # a Go test binary says it by its exit code: 1 a failed test, 2 a panic
        assertion = code == 1 and b"--- FAIL" in tail
    if any(sign in tail for sign in _RUNTIME_OOM_SIGNS) and (code or sig):
        # the runtime's own heap limit (the JVM's default is a quarter of the container's memory; V8's
        # its own), or an allocation that failed. The text alone is the program's to print: it is the
        # memory limit's only when the program held at least half of its limit; otherwise (an allocation
        # too large for any machine, or the words printed) it is the program's own error.
        oom = [line for line in lines if any(sign.decode() in line for sign in _RUNTIME_OOM_SIGNS)]
        peak = max(report.get("job_memory_peak_kb") or 0, report.get("peak_memory_kb") or 0)
        if peak * 2 >= (limits.get("job_memory_kb") or 0):
            return "failed", "memory_limit", "the runtime ran out of memory: " + (oom or lines or [""])[-1]
        return "failed", "runtime_error", (f"exit code {code}" if sig is None else f"killed by {sig}") + \
            f": an allocation failed at {peak // 1024} MB, under half the limit: " + (oom or lines or [""])[-1]
    if sig is not None:
        if sig == "SIGABRT" and assertion:
            return "failed", "assertion", "a test's assertion failed" + (f": {lines[-1]}" if lines else "")
        return "failed", f"signal:{sig}", f"killed by {sig}" + (f": {lines[-1]}" if lines else "")
    if code != 0 and marked == SYNTAX_ERROR_MARK:
        # a language without a compile step (JavaScript) reports its syntax errors when it runs; passk's
        # preload, which parses the program before it runs, says so (never the program's own text)
        return "failed", "syntax_error", "the program does not parse" + (f": {lines[-1]}" if lines else "")
    if code != 0:
        return ("failed", "assertion" if assertion else "runtime_error",
                f"exit code {code}" + (": " + " | ".join(lines[-2:]) if lines else ""))
    if not marked or marked == SYNTAX_ERROR_MARK:
        return "failed", "exited_early", "exited with code 0 before the tests finished (no completion marker)"
    if marked is not True:
        return "failed", "no_tests", f"the tests passed, but {marked} of the file's tests ran"
    why = _output_rule(report, rule)
    if why:
        return "failed", "output_rule", why + (f": {lines[-1]}" if lines else "")
    return "passed", "tests_completed", ""
