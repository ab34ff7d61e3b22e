"""AllenAI open-instruct's code API, served by passk: `POST /test_program` (a Python program and assert
statements) and `POST /test_program_stdio` (a program and stdin/stdout pairs), with the fields its server
takes and answers (open_instruct/code_utils/api.py: program, tests, max_execution_time -> results,
runtimes), so that its CodeVerifier reward works against passk unchanged.

Each test is its own candidate run, as open-instruct runs each in its own process: an assert test is
judged as passk judges MBPP's (the candidate's functions cross a socket to the test, so an exit before
the asserts or an object that claims to equal anything is not a pass); a stdin/stdout pair is compared by
LiveCodeBench's rule, which open-instruct's grader copies. Where they differ (docs/serve.md): open-instruct
refuses programs that name `os`, `threading` or `shutil` without running them (passk runs them in its
sandbox), and a result that passk's sandbox failed to produce is an HTTP 503 to retry, never a 0."""

from __future__ import annotations

import base64
import io
import itertools
import json
import math
import pickle
import zlib
from dataclasses import replace

from harness.inputs.config import Limits
from harness.inputs.formats.competitive import LCB_HEADER
from harness.inputs.problem import Problem
from harness.serve.bodies import BadRequest, program_body
from harness.serve.fusion import seconds_field

FIELDS = {"program", "tests", "max_execution_time"}
MAX_TESTS = 1024            # tests in one request
_ids = itertools.count()


class _NoObjects(pickle.Unpickler):
    """open-instruct's tests may come pickled (base64 of zlib of a pickle of a list): read as data only, never
    an object of any class (a pickle names classes to build; a hostile one would name os.system)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"a pickled test names {module}.{name}: only plain data is read")


def decode_tests(tests):
    """The tests as open-instruct's decode_tests reads them: a list, a JSON list, or base64(zlib(pickle))."""
    if isinstance(tests, list):
        return tests
    if not isinstance(tests, str):
        raise BadRequest("tests must be a list, or a string holding one (JSON, or base64 of zlib of a pickle)")
    try:
        value = json.loads(tests)
    except ValueError:
        try:
            value = _NoObjects(io.BytesIO(zlib.decompress(base64.b64decode(tests, validate=True)))).load()
        except (ValueError, zlib.error, pickle.UnpicklingError, EOFError, TypeError) as e:
            raise BadRequest(f"tests: not JSON, nor base64 of zlib of a pickle of plain data ({e})"[:300]) from None
    if not isinstance(value, list):
        raise BadRequest("tests must hold a list")
    return value


def parse(body, base: Limits, max_code_bytes: int, stdio: bool) -> tuple:
    """(problems, program, limits) of a request: one problem per test, in the tests' order; a test that
    cannot be a problem (an assert that does not compile) is None, and its result is 0."""
    program = program_body(body, FIELDS, "program", max_code_bytes)
    seconds = seconds_field(body, "max_execution_time", 1.0, 300.0)
    tests = decode_tests(body.get("tests"))
    if len(tests) > MAX_TESTS:
        raise BadRequest(f"{len(tests)} tests: at most {MAX_TESTS} a request")
    n = next(_ids)
    problems = []
    for i, test in enumerate(tests):
        task_id = f"{'test_program_stdio' if stdio else 'test_program'}/{n}/{i}"
        if stdio:
            if not isinstance(test, dict) or not isinstance(test.get("input"), str) or not isinstance(test.get("output"), str):
                raise BadRequest(f"tests[{i}] must be an object with input and output strings")
            problems.append(Problem(task_id, "", "", None, channel="io", runner="script", header=LCB_HEADER,
                                    tests=((test["input"], test["output"]),), compare="livecodebench",
                                    format="test_program_stdio", solution_is="program"))
            continue
        if not isinstance(test, str):
            raise BadRequest(f"tests[{i}] must be a string (an assert statement)")
        try:
            compile(test, f"tests[{i}]", "exec")
        except (SyntaxError, ValueError):
            problems.append(None)   # open-instruct's exec(test) raises: a 0, nothing to run
            continue
        problems.append(Problem(task_id, "", test.rstrip("\n") + "\n", None, runner="script",
                                format="test_program", solution_is="program"))
    # open-instruct stops a test's process after max_execution_time of wall clock; passk's limit is CPU time
    # with the wall-clock backstop at the same value (stdio: its grader's whole seconds, math.ceil)
    limit = float(math.ceil(seconds)) if stdio else seconds
    limits = replace(base, timeout_s=limit, cpu_time_s=math.ceil(limit) + 1)
    return problems, program, limits


def answer(rows) -> dict:
    """open-instruct's response: 1/0 per test and each passing test's seconds (-1.0 where it did not pass)."""
    results, runtimes = [], []
    for row in rows:
        passed = row is not None and row.status == "passed"
        results.append(1 if passed else 0)
        runtimes.append(round(float(row.wall_s or 0.0), 6) if passed else -1.0)
    return {"results": results, "runtimes": runtimes}


def client_wait_s(body) -> float:
    """How long open-instruct's CodeVerifier waits for an answer: max(30, min(300, 10 x max_execution_time))."""
    seconds = body.get("max_execution_time", 1.0) if isinstance(body, dict) else 1.0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        seconds = 1.0
    return max(30.0, min(300.0, 10.0 * float(seconds)))
