"""Unit-test files: BigCodeBench's format (task_id, complete_prompt, instruct_prompt, code_prompt,
canonical_solution, test, entry_point, libs). The test is a unittest module that uses the candidate's
code in the same process: in_process channel, runner `unittest`. A completion follows complete_prompt;
a solution is the whole program. Libraries the image lacks fail the candidates that import them (named
in the row); `libs` is kept in the problem's notes."""

from __future__ import annotations

from ..errors import InputError
from ..problems import Problem, check_test_compiles
from . import Format, add, register, require


def detect(obj: dict) -> bool:
    return bool({"complete_prompt", "code_prompt", "instruct_prompt"} & set(obj))


def load(path, records) -> dict:
    problems: dict = {}
    for where, obj in records:
        task_id = require(where, obj, "task_id")
        test = require(where, obj, "test")
        prompt = obj.get("complete_prompt", obj.get("code_prompt", ""))
        if not isinstance(prompt, str):
            raise InputError(f"{where}: field 'complete_prompt' must be a string")
        entry = require(where, obj, "entry_point")
        check_test_compiles(path, where, task_id, test)
        canonical = obj.get("canonical_solution")
        libs = obj.get("libs")
        add(problems, where, Problem(task_id, prompt, test, entry, canonical if isinstance(canonical, str) else None,
                                     channel="in_process", runner="unittest", format="bigcodebench",
                                     notes={"libs": libs} if libs else {}))
    return problems


register(Format("bigcodebench", "unit-test files (BigCodeBench)", detect, load,
                "task_id, complete_prompt or code_prompt, test, entry_point"))
