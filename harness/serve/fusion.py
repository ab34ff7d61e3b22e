"""SandboxFusion's /run_code, served by passk: the request and response fields of SandboxFusion's API
(sandbox/server/sandbox_api.py in bytedance/SandboxFusion; the `sandbox-fusion` client package's models), so
that its client and verl's `sandbox_fusion` reward work against passk unchanged.

/run_code runs a program on a stdin and returns what it printed; it gives no verdict (the caller compares,
and an exit code 0 is SandboxFusion's `Success`). Where passk differs from SandboxFusion, docs/serve.md says
so: the program runs in passk's sandbox (its limits, its user, no network), `run_timeout` is both the CPU
limit and the wall-clock backstop, stdout is returned up to the output limit and stderr as its last 2 KB,
`files` and `fetch_files` are refused when not empty, and a language passk does not run is a 400."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

from harness.core.errors import InputError
from harness.inputs.config import Limits
from harness.inputs.judge import IO_LANGUAGES, Checker, JudgeSpec, JudgeTest, io_language
from harness.inputs.problem import Problem
from harness.serve.bodies import BadRequest, program_body

FIELDS = {"code", "stdin", "language", "compile_timeout", "run_timeout", "memory_limit_MB", "files", "fetch_files"}
CAPTURE_BYTES = 8 << 20           # stdout returned per run (SandboxFusion returns it whole)
DEFAULT_MEMORY_MB = 1024          # memory_limit_MB -1 (SandboxFusion: none): the service's own default
_ids = itertools.count()

# The caller's deadline. SandboxFusion's callers wait compile_timeout + run_timeout + a margin of their own
# (verl's reward: 10 s, API_TIMEOUT in verl/utils/reward_score/sandbox_fusion/utils.py), then give up; they
# retry a 504. A caller may say its own with this header (seconds from sending the request).
DEADLINE_HEADER = "X-Passk-Deadline-S"
CLIENT_MARGIN_S = 10.0    # added to compile_timeout + run_timeout when the request names no deadline
ANSWER_MARGIN_S = 1.0     # the answer leaves this long before the caller's deadline
START_MARGIN_S = 1.0      # a container's own time around the program's (the job's hand-over, the reap)
OVERFLOW_AFTER_S = 1.0    # waiting this long for a worker, a program may run on an overflow lane


@dataclass(frozen=True)
class Deadline:
    """When a /run_code request must be answered and its program started, in seconds from its arrival."""
    deadline_s: float        # how long its caller waits
    source: str              # where that figure came from (said in a 504)
    start_by_s: float        # the program fails with Late (a 504) if it has not started by then
    overflow_after_s: float  # from then on it may take an overflow lane
    answer_by_s: float       # a program still running then is ended, and the answer is a 504


def deadline(header: str | None, language: str, limits: Limits, ceiling_s: float) -> Deadline:
    """The deadline of a /run_code request: its header's, or the one SandboxFusion's clients imply."""
    run_s, compile_s = float(limits.timeout_s), float(limits.compile_timeout_s)
    compiled = IO_LANGUAGES[language].compile is not None
    if header is not None:
        try:
            value = float(header)
        except ValueError:
            value = float("nan")
        if not math.isfinite(value) or value <= 0:
            raise BadRequest(f"{DEADLINE_HEADER} must be a positive number of seconds, got {header[:40]!r}")
        wait_s, source = min(value, ceiling_s), f"its {DEADLINE_HEADER} header"
    else:
        wait_s = min(compile_s + run_s + CLIENT_MARGIN_S, ceiling_s)
        source = f"compile_timeout + run_timeout + {CLIENT_MARGIN_S:g} s, as SandboxFusion's clients wait"
    answer = answer_by(wait_s)
    start = start_by(answer, run_s + (compile_s if compiled else 0.0))
    return Deadline(wait_s, source, start, min(OVERFLOW_AFTER_S, start / 2), answer)


def answer_by(wait_s: float) -> float:
    """When an answer leaves, in seconds from the request's arrival, for a caller that waits `wait_s`."""
    return max(0.5, wait_s - ANSWER_MARGIN_S)


def start_by(answer_by_s: float, work_s: float) -> float:
    """The latest start of work that may take `work_s` (its own limits) and must end by `answer_by_s`."""
    return max(0.05, answer_by_s - work_s - START_MARGIN_S)


def seconds_field(body: dict, name: str, default: float, ceiling: float) -> float:
    """A field of seconds: positive and finite (400 otherwise), at most `ceiling`."""
    value = body.get(name, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise BadRequest(f"{name} must be a positive number of seconds, got {value!r}")
    return min(float(value), ceiling)


def parse_run_code(body, base: Limits, max_code_bytes: int, max_memory_mb: int) -> tuple:
    """(problem, program, language, limits) of a /run_code request."""
    code = program_body(body, FIELDS, "code", max_code_bytes)
    stdin = body.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        raise BadRequest("stdin must be a string or null")
    for name in ("files", "fetch_files"):
        if body.get(name):
            raise BadRequest(f"{name}: passk's /run_code takes no files (a program reads stdin and writes stdout)")
    language = body.get("language")
    if not isinstance(language, str):
        raise BadRequest("language must be a string")
    try:
        language = io_language(language)
    except InputError as e:
        raise BadRequest(str(e)) from None
    run_s = seconds_field(body, "run_timeout", 10.0, 300.0)
    compile_s = seconds_field(body, "compile_timeout", 10.0, 300.0)
    memory = body.get("memory_limit_MB", -1)
    if isinstance(memory, bool) or not isinstance(memory, (int, float)) or not math.isfinite(memory):
        raise BadRequest(f"memory_limit_MB must be a number, got {memory!r}")
    memory_mb = DEFAULT_MEMORY_MB if memory <= 0 else int(memory)
    memory_mb = max(16, min(memory_mb, max_memory_mb))
    problem, limits = captured_run("run_code", stdin, base, run_s, run_s, memory_mb, compile_s, memory_mb)
    return problem, code, language, limits


def captured_run(route: str, stdin: str | None, base: Limits, cpu_s: float, wall_s: float, memory_mb: int,
                 compile_s: float, compile_mb: int) -> tuple:
    """(problem, limits) of one run on a stdin whose output comes back (no checker): the job every route of
    another service's API that runs a program makes. CPU time is the limit, `wall_s` the backstop."""
    spec = JudgeSpec((JudgeTest(stdin or "", ""),), cpu_s, memory_mb=memory_mb, output_mb=max(1, CAPTURE_BYTES >> 20),
                     checker=Checker("rule"), capture=CAPTURE_BYTES, wall_s=wall_s, time_source="request")
    problem = Problem(f"{route}/{next(_ids)}", "", "", None, channel="io", format=route, judge=spec)
    limits = replace(base, timeout_s=wall_s, cpu_time_s=math.ceil(cpu_s) + 1, memory_mb=memory_mb,
                     output_bytes=CAPTURE_BYTES, compile_timeout_s=compile_s,
                     compile_memory_mb=max(base.compile_memory_mb, compile_mb))
    return problem, limits


def _signal_number(name) -> int | None:
    import signal
    try:
        return int(getattr(signal, str(name)))
    except (AttributeError, TypeError, ValueError):
        return None


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def response(row, language: str) -> dict:
    """SandboxFusion's RunCodeResponse of a passk row."""
    compiled = IO_LANGUAGES[language].compile is not None
    detail = row.channel_detail or {}
    compile_result = None
    if row.status == "error":
        return {"status": "SandboxError", "message": f"{row.reason}: {row.detail}"[:2000], "compile_result": None,
                "run_result": None, "executor_pod_name": None, "files": {}}
    if row.reason == "compile_error" and not row.captured:
        timed = "time" in row.detail or "timeout" in row.detail
        compile_result = {"status": "TimeLimitExceeded" if timed else "Finished",
                          "execution_time": detail.get("compile_s"), "return_code": row.exit_code if row.exit_code is not None else 1,
                          "stdout": row.stdout_tail, "stderr": row.stderr_tail or row.detail}
        return {"status": "Failed", "message": "", "compile_result": compile_result, "run_result": None,
                "executor_pod_name": None, "files": {}}
    if compiled:
        compile_result = {"status": "Finished", "execution_time": detail.get("compile_s"), "return_code": 0,
                          "stdout": "", "stderr": ""}
    captured = (row.captured or [{}])[0]
    timed_out = row.status == "timed_out"
    code = captured.get("exit_code")
    if row.reason == "compile_error" and code is not None:   # Python's syntax error: the interpreter's exit 1
        code = 1
    if code is None and captured.get("signal"):
        number = _signal_number(captured["signal"])
        code = -number if number else None
    run = {"status": "TimeLimitExceeded" if timed_out else "Finished",
           "execution_time": captured.get("wall_s", row.wall_s), "cpu_time": captured.get("cpu_s"),
           "return_code": None if timed_out else code,
           "stdout": _text(captured.get("stdout", b"")), "stderr": _text(captured.get("stderr", b""))}
    ok = not timed_out and code == 0
    return {"status": "Success" if ok else "Failed", "message": "", "compile_result": compile_result,
            "run_result": run, "executor_pod_name": None, "files": {}}
