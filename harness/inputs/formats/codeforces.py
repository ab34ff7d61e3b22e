"""Judged rows of competitive-programming datasets, one problem per JSON line, read unchanged:

Codeforces rows as open-r1 publishes them (open-r1/codeforces)
    id (or contest_id + index), time_limit (seconds), memory_limit (MB), official_tests [{input, output}]
    (the examples when there are none), input_mode ("stdio", or "file": input.txt and output.txt, or the
    row's input_file/output_file), generated_checker (a Python checker, run as open-r1 runs it:
    `checker.py input answer output`, its printed score in [0, 1]); interaction_format (interactive: judged
    when the row carries an `interactor`, a testlib interactor in C++, refused otherwise). Without a checker a row is judged as Codeforces judges most
    problems: tokens compared exactly (Kattis's default validator with case_sensitive).

Code-Contests-Plus rows (ByteDance-Seed/Code-Contests-Plus)
    id, time_limit (milliseconds), memory_limit (MB), test_cases [{input, output}], checker (a testlib
    checker in C++: `checker input output answer`, testlib's exit codes), compiled once per run in the C++
    image; the testlib.h it includes is the row's own (`testlib` field) or the file PASSK_TESTLIB names:
    passk ships none.

Samples name their language (samples.py: `language`, a dataset's name or CodeContests's code).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.formats.base import Format, add, register, require
from harness.inputs.judge import Checker, Group, JudgeSpec, JudgeTest
from harness.inputs.problem import Problem
from harness.inputs.untrusted import DEFAULT_CEILINGS, Ceilings, number, shown

TESTLIB_ENV = "PASSK_TESTLIB"
INCLUDES_TESTLIB = re.compile(r'^\s*#\s*include\s*[<"]testlib\.h[>"]', re.M)


def _tests(where: str, value, name: str, ceilings: Ceilings, budget: list) -> list:
    """A row's tests, each {input, output} of strings; their number and bytes within the ceilings (`budget`:
    the bytes the row's tests may still hold, shared by its lists)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, dict) and "input" in t and "output" in t for t in value):
        raise InputError(f"{where}: field {name!r} must be a list of {{input, output}}")
    if len(value) > ceilings.tests:
        raise InputError(f"{where}: {name}: {len(value)} tests (over the ceiling of {ceilings.tests}: ceiling tests)")
    out = []
    for i, t in enumerate(value):
        for key in ("input", "output"):
            if not isinstance(t[key], str):
                raise InputError(f"{where}: {name}[{i}].{key}: {shown(t[key])} (must be a string)")
            budget[0] -= len(t[key])
        if budget[0] < 0:
            raise InputError(f"{where}: {name}: the tests pass the ceiling of {ceilings.data_mb} MB (ceiling data_mb)")
        out.append(JudgeTest(t["input"], t["output"], f"{name}/{i}"))
    return out


def _limit(where: str, obj: dict, field: str, ceiling: float, unit: str, integer: bool = False) -> float:
    if field not in obj:
        raise InputError(f"{where}: missing field {field!r}")
    return number(where, field, obj[field], ceiling, integer=integer, unit=unit)


def detect_codeforces(obj: dict) -> bool:
    return "official_tests" in obj and "time_limit" in obj and "memory_limit" in obj


def load_codeforces(path, records, ceilings=None) -> dict:
    ceilings = ceilings or DEFAULT_CEILINGS
    problems: dict = {}
    for where, obj in records:
        task_id = obj.get("id") or (f"{obj['contest_id']}/{obj['index']}" if "contest_id" in obj and "index" in obj else None)
        if not isinstance(task_id, str) or not task_id:
            raise InputError(f"{where}: missing field 'id' (or contest_id and index)")
        interactor = obj.get("interactor")
        if obj.get("interaction_format") and not (isinstance(interactor, str) and interactor.strip()):
            raise InputError(f"{where}: {task_id} is interactive and the row ships no interactor; passk cannot judge it")
        budget = [ceilings.data_mb << 20]
        tests = _tests(where, obj.get("official_tests"), "official_tests", ceilings, budget) or \
            _tests(where, obj.get("examples"), "examples", ceilings, budget)
        if not tests:
            raise InputError(f"{where}: {task_id} has no tests (official_tests or examples)")
        mode = obj.get("input_mode") or "stdio"
        if mode not in ("stdio", "file"):
            raise InputError(f"{where}: input_mode must be stdio or file, got {mode!r}")
        file_io = (obj.get("input_file") or "input.txt", obj.get("output_file") or "output.txt") if mode == "file" else None
        if file_io and any(not isinstance(f, str) or not f or len(f) > 100 or "/" in f or "\0" in f or f.startswith(".")
                           for f in file_io):
            raise InputError(f"{where}: input_file and output_file must be plain file names, got {shown(file_io)}")
        checker_code = obj.get("generated_checker")
        if isinstance(interactor, str) and interactor.strip():   # a testlib interactor in C++
            checker = Checker("testlib", language="cpp",
                              files=(("interactor.cpp", interactor), *testlib_header(where, obj, interactor)))
        elif isinstance(checker_code, str) and checker_code.strip():
            checker = Checker("python", language="python", files=(("checker.py", checker_code),))
        else:
            checker = Checker("default", ("case_sensitive",))
        spec = JudgeSpec(tuple(tests), _limit(where, obj, "time_limit", ceilings.time_limit_s, " s"),
                         memory_mb=int(_limit(where, obj, "memory_limit", ceilings.memory_mb, " MB", integer=True)),
                         checker=checker, groups=(Group("official"),), file_io=file_io, time_source="the row's time_limit",
                         interactive=isinstance(interactor, str) and bool(interactor.strip()))
        add(problems, where, Problem(task_id, str(obj.get("title") or ""), "", None, None, channel="io",
                                     format="codeforces", solution_is="program", judge=spec,
                                     notes={"tests_complete": obj.get("official_tests_complete")}))
    return problems


def detect_ccplus(obj: dict) -> bool:
    return "checker" in obj and "test_cases" in obj and "time_limit" in obj


def testlib_header(where: str, obj: dict, code: str) -> tuple:
    """The testlib.h a checker includes: the row's own, or the file PASSK_TESTLIB names."""
    if not INCLUDES_TESTLIB.search(code):
        return ()
    if isinstance(obj.get("testlib"), str):
        return (("testlib.h", obj["testlib"]),)
    path = os.environ.get(TESTLIB_ENV)
    if not path:
        raise InputError(f"{where}: its checker includes testlib.h, which the row does not carry; set {TESTLIB_ENV} "
                         "to a testlib.h file (passk ships none)")
    try:
        return (("testlib.h", Path(path).read_text(encoding="utf-8", errors="surrogateescape")),)
    except OSError as e:
        raise InputError(f"{TESTLIB_ENV}={path}: {e.strerror or e}") from None


def load_ccplus(path, records, ceilings=None) -> dict:
    ceilings = ceilings or DEFAULT_CEILINGS
    problems: dict = {}
    for where, obj in records:
        task_id = require(where, obj, "id", (str, int))
        tests = _tests(where, obj.get("test_cases"), "test_cases", ceilings, [ceilings.data_mb << 20])
        if not tests:
            raise InputError(f"{where}: {task_id} has no test_cases")
        raw = _limit(where, obj, "time_limit", None, "")
        if raw >= 100:   # milliseconds, as the rows give it
            limit = number(where, "time_limit", raw, ceilings.time_limit_s * 1000, unit=" ms") / 1000.0
        else:
            limit = number(where, "time_limit", raw, ceilings.time_limit_s, unit=" s")
        code = obj.get("checker")
        if isinstance(code, str) and code.strip():
            checker = Checker("testlib", language="cpp", files=(("checker.cpp", code), *testlib_header(where, obj, code)))
        else:
            checker = Checker("default", ("case_sensitive",))
        spec = JudgeSpec(tuple(tests), limit, memory_mb=int(_limit(where, obj, "memory_limit", ceilings.memory_mb, " MB",
                                                                  integer=True)), checker=checker,
                         groups=(Group("tests"),), time_source="the row's time_limit")
        add(problems, where, Problem(str(task_id), str(obj.get("title") or ""), "", None, None, channel="io",
                                     format="code-contests-plus", solution_is="program", judge=spec))
    return problems


register(Format("codeforces", "Codeforces rows (open-r1)", detect_codeforces, load_codeforces,
                "id, time_limit, memory_limit, official_tests, input_mode, generated_checker"))
register(Format("code-contests-plus", "Code-Contests-Plus rows", detect_ccplus, load_ccplus,
                "id, time_limit, memory_limit, test_cases, checker"))
