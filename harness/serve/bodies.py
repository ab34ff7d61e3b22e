"""What a request to `passk serve` asks for, read and checked before anything runs: a bad request is one
clear message (HTTP 400) naming the field, never a half-run batch.

Two shapes (docs/serve.md has examples):
- passk's own, POST /v1/evaluate: a problem (a preloaded id, or a record in any format passk reads from a
  file of rows) and candidates; each candidate's row is a ResultRow, with a reward.
- SandboxFusion's, POST /run_code (fusion.py): a program, its stdin and limits; what it printed comes back,
  and the caller compares."""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass, fields, replace
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.config import Limits
from harness.inputs.problem import Problem
from harness.inputs.problems import load_problems
from harness.inputs.untrusted import DEFAULT_CEILINGS, Ceilings

REWARDS = ("binary", "fraction", "score")
# Formats read from a directory, not a row: a request cannot name a path on the service's machine.
DIRECTORY_FORMATS = ("kattis", "native")
INLINE_CACHE = 1024   # inline problems kept read, by the content of their record (least recently used goes)
_inline: OrderedDict = OrderedDict()
_inline_lock = threading.Lock()
REQUEST_LIMITS = ("timeout_s", "memory_mb", "cpu_time_s", "output_bytes", "compile_timeout_s", "compile_memory_mb")


class BadRequest(InputError):
    """HTTP 400: the request itself is wrong; its message names the field."""


@dataclass(frozen=True)
class Candidate:
    program: str
    language: str | None
    key: object
    fields: dict


@dataclass(frozen=True)
class EvaluateRequest:
    problem: Problem
    candidates: tuple
    limits: Limits | None
    reward: str
    stream: bool
    deadline_s: float


def program_body(body, fields: set, name: str, max_code_bytes: int) -> str:
    """A request of another service's API: a JSON object with only `fields`, whose `name` is a program within
    the byte limit. The program."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(body) - fields)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}")
    program = body.get(name)
    if not isinstance(program, str):
        raise BadRequest(f"{name} must be a string")
    if len(program.encode("utf-8", "surrogatepass")) > max_code_bytes:
        raise BadRequest(f"{name} is over the {max_code_bytes} byte limit")
    return program


def _number(where: str, value, *, whole: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise BadRequest(f"{where} must be a positive number, got {value!r}")
    if whole and int(value) != value:
        raise BadRequest(f"{where} must be a whole number, got {value!r}")
    return value


def _ceiling_of(key: str, ceilings: Ceilings) -> float:
    """The most a request may ask for of one limit (--ceiling; untrusted.Ceilings)."""
    return {"timeout_s": ceilings.time_limit_s, "cpu_time_s": ceilings.time_limit_s,
            "memory_mb": ceilings.memory_mb, "compile_memory_mb": ceilings.memory_mb,
            "output_bytes": ceilings.output_mb << 20, "compile_timeout_s": ceilings.compile_time_s}[key]


def parse_limits(body: dict, base: Limits, ceilings: Ceilings = DEFAULT_CEILINGS) -> Limits | None:
    """A request's own limits (a subset of Limits' fields), on the service's, each at most its ceiling
    (over it: 400, never clipped); None when it sets none."""
    given = body.get("limits")
    if given is None:
        return None
    if not isinstance(given, dict):
        raise BadRequest("limits must be an object")
    unknown = sorted(set(given) - set(REQUEST_LIMITS))
    if unknown:
        raise BadRequest(f"limits: unknown field(s) {', '.join(unknown)}; a request may set {', '.join(REQUEST_LIMITS)}")
    whole = {f.name for f in fields(Limits) if f.type in ("int", int)}
    values = {k: _number(f"limits.{k}", v, whole=k in whole) for k, v in given.items()}
    for k, v in values.items():
        if v > _ceiling_of(k, ceilings):
            raise BadRequest(f"limits.{k}: {v!r} is over the service's ceiling of {_ceiling_of(k, ceilings):g} "
                             "(passk serve --ceiling raises it)")
    values = {k: int(v) if k in whole else float(v) for k, v in values.items()}
    try:
        return replace(base, **values)
    except InputError as e:
        raise BadRequest(f"limits: {e}") from None


def load_inline(record, fmt, ceilings: Ceilings = DEFAULT_CEILINGS) -> dict[str, Problem]:
    """Problems from one record (or a list of records) in a format passk reads from a file of rows, read
    by that format's own reader from a private temporary file: a record cannot name a file to read."""
    if fmt is not None and not isinstance(fmt, str):
        raise BadRequest("problem.format must be a format's name")
    if fmt in DIRECTORY_FORMATS:
        raise BadRequest(f"problem.format {fmt!r} is read from a directory: preload it (passk serve --problems DIR) "
                         "and name the problem by id")
    records = record if isinstance(record, list) else [record]
    if not records or not all(isinstance(r, dict) for r in records):
        raise BadRequest("problem.record must be an object (a row of a problem file) or a list of them")
    with tempfile.TemporaryDirectory(prefix="passk-serve-") as tmp:
        path = Path(tmp) / "problem.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        try:
            problems = load_problems(path, fmt, ceilings=ceilings)
        except InputError as e:
            raise BadRequest("problem: " + str(e).replace(str(path), "record")) from None
    bad = [p.task_id for p in problems.values() if p.format in DIRECTORY_FORMATS]
    if bad:
        raise BadRequest("problem: a record of passk's directory layout cannot be sent inline")
    return problems


def parse_problem(body: dict, preloaded: dict[str, Problem], ceilings: Ceilings = DEFAULT_CEILINGS) -> Problem:
    spec = body.get("problem")
    if not isinstance(spec, dict):
        raise BadRequest("problem must be an object: {\"id\": ...} or {\"record\": {...}, \"format\": ...}")
    if "id" in spec:
        pid = spec["id"]
        if not isinstance(pid, str) or pid not in preloaded:
            raise BadRequest(f"problem.id {str(pid)[:200]!r} is not a preloaded problem "
                             f"({len(preloaded)} are; GET /v1/problems lists them)")
        return preloaded[pid]
    if "record" not in spec:
        raise BadRequest("problem needs an id (preloaded) or a record")
    key = hashlib.sha256(json.dumps([spec.get("format"), spec["record"]], sort_keys=True, ensure_ascii=False,
                                    default=repr).encode("utf-8", "surrogatepass")).hexdigest()
    with _inline_lock:
        held = _inline.get(key)
        if held is not None:
            _inline.move_to_end(key)
            return held
    problems = load_inline(spec["record"], spec.get("format"), ceilings)
    if len(problems) != 1:
        raise BadRequest(f"problem.record holds {len(problems)} problems; send one per request")
    problem = next(iter(problems.values()))
    with _inline_lock:   # the same record again (a trainer sends each problem's n candidates) is read once
        _inline[key] = problem
        while len(_inline) > INLINE_CACHE:
            _inline.popitem(last=False)
    return problem


def parse_candidates(body: dict, max_candidates: int, max_code_bytes: int, problem: Problem) -> tuple:
    given = body.get("candidates")
    if not isinstance(given, list) or not given:
        raise BadRequest("candidates must be a non-empty list")
    if len(given) > max_candidates:
        raise BadRequest(f"candidates: {len(given)} in one request; the limit is {max_candidates}")
    out = []
    for i, c in enumerate(given):
        where = f"candidates[{i}]"
        if isinstance(c, str):
            c = {"code": c}
        if not isinstance(c, dict):
            raise BadRequest(f"{where} must be an object with code (a whole program) or completion")
        if "patch" in c and problem.channel == "repo":   # a repository task's candidate is a patch
            c = {**{k: v for k, v in c.items() if k != "patch"}, "code": c["patch"]}
        if problem.channel == "project":   # an exercise's candidate is its solution files
            out.append(_project_candidate(where, c, i, problem, max_code_bytes))
            continue
        code, completion = c.get("code"), c.get("completion")
        if (code is None) == (completion is None):
            raise BadRequest(f"{where} needs exactly one of code (a whole program; a repository task's: patch) or "
                             "completion (after the prompt)")
        text = code if code is not None else completion
        if not isinstance(text, str):
            raise BadRequest(f"{where}: code must be a string")
        if len(text.encode("utf-8", "surrogatepass")) > max_code_bytes:
            raise BadRequest(f"{where}: the program is over the {max_code_bytes} byte limit")
        program = text if code is not None else problem.prompt + text
        language = c.get("language")
        if language is not None and not isinstance(language, str):
            raise BadRequest(f"{where}: language must be a string")
        key = c.get("key", i)
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise BadRequest(f"{where}: key must be a string or an integer")
        out.append(Candidate(program, language, key, {"key": key}))
    return tuple(out)


def _project_candidate(where: str, c: dict, i: int, problem: Problem, max_code_bytes: int) -> Candidate:
    """{"files": {path: content}, "attempt": 1 or 2}: checked as a candidate file's row is (inputs/polyglot.py);
    a file it may not write is set aside and named in its row."""
    from harness.core.errors import InputError
    from harness.inputs import polyglot
    unknown = sorted(set(c) - {"files", "attempt", "key"})
    if unknown or "files" not in c:
        raise BadRequest(f"{where}: an exercise's candidate is {{\"files\": {{path: content}}, \"attempt\": 1 or 2}}"
                         + (f"; unknown field(s) {', '.join(str(u)[:40] for u in unknown[:5])}" if unknown else ""))
    try:
        cand = polyglot.candidate(where, problem.project.exercise, c["files"], c.get("attempt", 1))
    except InputError as e:
        raise BadRequest(str(e)) from None
    program = polyglot.candidate_text(cand.files)
    if len(program.encode("utf-8", "surrogatepass")) > max_code_bytes:
        raise BadRequest(f"{where}: the files are over the {max_code_bytes} byte limit")
    key = c.get("key", i)
    if not isinstance(key, (str, int)) or isinstance(key, bool):
        raise BadRequest(f"{where}: key must be a string or an integer")
    fields = {"key": key, "attempt": cand.attempt, **({"set_aside": list(cand.set_aside[:50])} if cand.set_aside else {})}
    return Candidate(program, None, key, fields)


def parse_evaluate(body, preloaded: dict[str, Problem], base: Limits, options) -> EvaluateRequest:
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(body) - {"problem", "candidates", "limits", "reward", "stream", "deadline_s"})
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}")
    ceilings = getattr(options, "ceilings", DEFAULT_CEILINGS)
    problem = parse_problem(body, preloaded, ceilings)
    candidates = parse_candidates(body, options.max_candidates, options.max_code_bytes, problem)
    reward = body.get("reward", "binary")
    if reward not in REWARDS:
        raise BadRequest(f"reward must be one of {', '.join(REWARDS)}, got {str(reward)[:50]!r}")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("stream must be true or false")
    deadline = min(float(_number("deadline_s", body.get("deadline_s", options.deadline_s))), options.deadline_s)
    return EvaluateRequest(problem, candidates, parse_limits(body, base, ceilings), reward, stream, deadline)


def reward_of(row, mode: str) -> float | None:
    """A row's reward: None for `error` (the harness's fault, never the candidate's: a trainer should drop
    it or retry, not learn from it); binary 1/0 on the label; fraction of tests passed where the channel
    counts them (io problems), else binary; score: a scoring problem's score, else binary."""
    if row.status == "error":
        return None
    binary = 1.0 if row.status == "passed" else 0.0
    if mode == "fraction" and row.verdict_channel == "repo":   # FAIL_TO_PASS passing, PASS_TO_PASS held
        total, passed = row.channel_detail.get("fail_to_pass_total"), row.channel_detail.get("fail_to_pass_passed")
        if isinstance(total, int) and total > 0 and isinstance(passed, int):
            return passed / total if row.channel_detail.get("pass_to_pass_held") == 1 else 0.0
        return binary
    if mode == "fraction":
        total, passed = row.channel_detail.get("tests_total"), row.channel_detail.get("tests_passed")
        if isinstance(total, int) and total > 0 and isinstance(passed, int):
            return passed / total
        return binary
    if mode == "score" and row.score is not None:
        return float(row.score)
    return binary
