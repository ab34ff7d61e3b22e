"""NVIDIA NeMo-Skills' sandbox API, served by passk: `POST /execute` with the fields of its local sandbox
server (nemo_skills/code_execution/local_sandbox/local_sandbox_server.py: generated_code, std_input,
timeout, language, max_output_characters -> process_status, stdout, stderr), so that its LocalSandbox
client works against passk unchanged.

passk's /execute is stateless: `python3`, `pypy3` and `shell` run a program on a stdin in passk's sandbox
(as /run_code does); `ipython` (a session kept between calls) and `lean4` are refused with a 400 naming the
languages passk runs. Each answer keeps NeMo-Skills' statuses: `completed` (Python: whatever the exit code,
as its server says; shell: exit 0), `error` (shell: another exit code), `timeout`."""

from __future__ import annotations

from harness.inputs.config import Limits
from harness.serve import fusion
from harness.serve.bodies import BadRequest, program_body

FIELDS = {"generated_code", "std_input", "timeout", "language", "max_output_characters", "traceback_verbosity"}
LANGUAGES = {"python3": "python", "python": "python", "pypy3": "pypy", "shell": "bash"}
CLIENT_MARGIN_S = 5.0   # NeMo-Skills' client waits its timeout + 5 s (sandbox.py _send_request)


def parse(body, base: Limits, max_code_bytes: int, max_memory_mb: int) -> tuple:
    """(problem, program, language, limits, nemo_language, max_output_characters) of an /execute request."""
    code = program_body(body, FIELDS, "generated_code", max_code_bytes)
    language = body.get("language", "ipython")
    if language not in LANGUAGES:
        raise BadRequest(f"language {str(language)[:40]!r}: passk's /execute is stateless and runs "
                         f"{', '.join(LANGUAGES)} (no ipython session, no lean4)")
    if "timeout" not in body:
        raise BadRequest("timeout is required (seconds)")
    timeout = fusion.seconds_field(body, "timeout", 10.0, 300.0)
    cap = body.get("max_output_characters", 1000)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
        raise BadRequest(f"max_output_characters must be a whole number >= 0, got {cap!r}")
    stdin = body.get("std_input", "")
    problem, program, passk_language, limits = fusion.parse_run_code(
        {"code": code, "stdin": stdin if stdin is not None else "",
         "language": LANGUAGES[language], "run_timeout": timeout}, base, max_code_bytes, max_memory_mb)
    return problem, program, passk_language, limits, language, cap


def _cut(text: str, cap: int) -> str:
    return text[:cap] + "<output cut>" if len(text) > cap else text


def response(row, language: str, timeout: float, cap: int) -> dict:
    """NeMo-Skills' answer for a row that ran (an `error` row is the route's 503 or 504, never an answer)."""
    captured = (row.captured or [{}])[0]
    if row.status == "timed_out":
        return {"process_status": "timeout", "stdout": "",
                "stderr": f"Execution timed out after {timeout:g} seconds\n"}
    stdout = captured.get("stdout", b"").decode("utf-8", "replace")
    stderr = captured.get("stderr", b"").decode("utf-8", "replace")
    if row.reason == "compile_error" and not stderr:
        stderr = row.stderr_tail or row.detail
    status = "completed"
    if language == "shell" and captured.get("exit_code") != 0:
        status = "error"
    return {"process_status": status, "stdout": _cut(stdout, cap), "stderr": _cut(stderr, cap)}
