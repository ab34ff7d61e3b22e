"""Piston's API (engineer-man/piston, api/src/api/v2.js and job.js), served by passk: `GET /api/v2/runtimes`
and `POST /api/v2/execute` with Piston's field names and statuses, so that a Piston client (open-r1's
PistonClient among them) runs a program in passk's sandbox unchanged. Piston's custom packages with graders
(open-r1's cms_ioi) are not part of this.

What passk runs is one file on a stdin: `files` must hold one file (a 400 otherwise) and `args` must be
empty. A runtime's `version` is passk's own version (the runtime is passk's image of the language, whose
toolchain comes from Debian's packages); a request may ask for `*`, that version, or a prefix of it.
Piston's limits are milliseconds and bytes: `run_cpu_time` is the CPU time limit and `run_timeout` the
wall-clock backstop, as passk enforces them."""

from __future__ import annotations

import base64
import binascii
import itertools
import math

from harness.core.version import __version__
from harness.inputs.config import Limits
from harness.inputs.judge import IO_LANGUAGES
from harness.serve.bodies import BadRequest
from harness.serve.fusion import CAPTURE_BYTES, DEFAULT_MEMORY_MB, captured_run

FIELDS = {"language", "version", "files", "stdin", "args", "compile_timeout", "run_timeout", "compile_cpu_time",
          "run_cpu_time", "compile_memory_limit", "run_memory_limit"}
# Piston's names where they differ from passk's (its packages: c++, csharp.net, rscript, ...), and its aliases
PISTON_NAMES = {"cpp": ("c++", ("cpp", "g++")), "c": ("c", ("gcc",)), "python": ("python", ("py", "py3", "python3")),
                "javascript": ("javascript", ("node-javascript", "node-js", "js", "node")),
                "typescript": ("typescript", ("ts", "node-ts", "tsc")), "bash": ("bash", ("sh",)),
                "r": ("rscript", ("r",)), "csharp": ("csharp", ("mono", "mono-csharp", "c#", "cs")),
                "haskell": ("haskell", ("hs",)), "rust": ("rust", ("rs",)), "go": ("go", ("golang",)),
                "ruby": ("ruby", ("rb",)), "ocaml": ("ocaml", ("ml",)), "elixir": ("elixir", ("exs",)),
                "clojure": ("clojure", ("clj",)), "d": ("d", ("dmd", "ldc")), "perl": ("perl", ("pl",)),
                "pypy": ("pypy", ("pypy3",)), "ada": ("ada", ("gnat",))}
_ids = itertools.count()


def runtimes() -> list:
    """GET /api/v2/runtimes: every language passk runs on a stdin."""
    out = []
    for name in IO_LANGUAGES:
        piston, aliases = PISTON_NAMES.get(name, (name, ()))
        out.append({"language": piston, "version": __version__, "aliases": list(aliases), "runtime": f"passk-{name}"})
    return out


_BY_NAME = {alias: passk for passk in IO_LANGUAGES
            for alias in (passk, PISTON_NAMES.get(passk, (passk, ()))[0], *PISTON_NAMES.get(passk, (passk, ()))[1])}


def _version_matches(asked: str) -> bool:
    asked = asked.strip()
    return asked in ("*", "x", "latest", "") or __version__ == asked or __version__.startswith(asked.rstrip(".*x") + ".")


def _ms(body: dict, name: str, default_ms: float, ceiling_s: float) -> float:
    value = body.get(name, default_ms)
    if value is None:
        value = default_ms
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadRequest(f"If specified, {name} must be a number")
    if value < 0:
        raise BadRequest(f"{name} must be non-negative")
    return min(max(float(value), 1.0) / 1000.0, ceiling_s)


def _memory_mb(body: dict, name: str, max_memory_mb: int) -> int:
    value = body.get(name, -1)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadRequest(f"If specified, {name} must be a number")
    mb = DEFAULT_MEMORY_MB if value < 0 else int(value) >> 20
    return max(16, min(mb, max_memory_mb))


def _content(i: int, f) -> str:
    if not isinstance(f, dict) or not isinstance(f.get("content"), str):
        raise BadRequest(f"files[{i}].content is required as a string")
    encoding = f.get("encoding") or "utf8"
    try:
        if encoding == "utf8":
            return f["content"]
        if encoding == "base64":
            return base64.b64decode(f["content"], validate=True).decode("utf-8")
        if encoding == "hex":
            return bytes.fromhex(f["content"]).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise BadRequest(f"files[{i}].content is not {encoding} of UTF-8 text") from None
    raise BadRequest(f"files[{i}].encoding must be base64, hex or utf8")


def parse(body, base: Limits, max_code_bytes: int, max_memory_mb: int) -> tuple:
    """(problem, program, passk language, limits, piston language name) of an /api/v2/execute request."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}")
    language, version = body.get("language"), body.get("version")
    if not isinstance(language, str):
        raise BadRequest("language is required as a string")
    if not isinstance(version, str):
        raise BadRequest("version is required as a string")
    passk_language = _BY_NAME.get(language.strip().lower())
    if passk_language is None or not _version_matches(version):
        raise BadRequest(f"{language[:40]}-{version[:20]} runtime is unknown")
    files = body.get("files")
    if not isinstance(files, list) or not files:
        raise BadRequest("files is required as an array")
    if len(files) > 1:
        raise BadRequest("passk runs one file: files must hold exactly one")
    program = _content(0, files[0])
    if len(program.encode("utf-8", "surrogatepass")) > max_code_bytes:
        raise BadRequest(f"files[0] is over the {max_code_bytes} byte limit")
    if body.get("args"):
        raise BadRequest("passk passes no arguments: args must be empty")
    stdin = body.get("stdin", "")
    if stdin is not None and not isinstance(stdin, str):
        raise BadRequest("stdin must be a string")
    run_cpu_s = _ms(body, "run_cpu_time", 3000, 300.0)
    run_wall_s = max(run_cpu_s, _ms(body, "run_timeout", 3000, 300.0))
    compile_s = max(_ms(body, "compile_timeout", 10000, 300.0), _ms(body, "compile_cpu_time", 10000, 300.0))
    memory_mb = _memory_mb(body, "run_memory_limit", max_memory_mb)
    compile_mb = _memory_mb(body, "compile_memory_limit", max_memory_mb)
    problem, limits = captured_run("piston", stdin, base, run_cpu_s, run_wall_s, memory_mb, compile_s, compile_mb)
    return problem, program, passk_language, limits, language


def _stage(stdout: str, stderr: str, code, signal, status, message, cpu_s, wall_s, memory_kb) -> dict:
    return {"stdout": stdout, "stderr": stderr, "output": stdout + stderr, "code": code, "signal": signal,
            "message": message, "status": status,
            "cpu_time": None if cpu_s is None else round(cpu_s * 1000), "wall_time": None if wall_s is None else round(wall_s * 1000),
            "memory": None if memory_kb is None else int(memory_kb) * 1024}


def response(row, passk_language: str) -> dict:
    """Piston's answer for a row that ran (an `error` row is the route's 503 or 504)."""
    compiled = IO_LANGUAGES[passk_language].compile is not None
    piston = PISTON_NAMES.get(passk_language, (passk_language, ()))[0]
    out = {"language": piston, "version": __version__}
    detail = row.channel_detail or {}
    if row.reason == "compile_error" and not row.captured:   # the compile failed: no run stage, as Piston
        timed = "time" in (row.detail or "") or "timeout" in (row.detail or "")
        stage = _stage(row.stdout_tail or "", row.stderr_tail or row.detail or "", None if timed else 1,
                       "SIGKILL" if timed else None, "TO" if timed else "RE",
                       "Time limit exceeded" if timed else "Exited with error status 1", None, detail.get("compile_s"), None)
        out["compile"] = stage
        out["run"] = stage   # Piston's v2: "backward compatibility when the run stage is not started"
        return out
    if compiled:
        out["compile"] = _stage("", "", 0, None, None, None, None, detail.get("compile_s"), None)
    c = (row.captured or [{}])[0]
    stdout = c.get("stdout", b"").decode("utf-8", "replace")
    stderr = c.get("stderr", b"").decode("utf-8", "replace")
    code, signal = c.get("exit_code"), c.get("signal")
    if row.reason == "compile_error" and code is not None:   # Python's syntax error: the interpreter's exit 1
        code = 1
    status = message = None
    if row.status == "timed_out":
        status, message, signal, code = "TO", "Time limit exceeded", "SIGKILL", None
    elif (c.get("stdout_bytes") or 0) > CAPTURE_BYTES:
        status, message, signal = "OL", "stdout length exceeded", "SIGKILL"
    elif signal:
        status, message, code = "SG", f"Caught fatal signal {signal}", None
    elif code not in (0, None):
        status, message = "RE", f"Exited with error status {code}"
    out["run"] = _stage(stdout, stderr, code, signal, status, message, c.get("cpu_s"), c.get("wall_s", row.wall_s),
                        row.peak_memory_kb)
    return out
