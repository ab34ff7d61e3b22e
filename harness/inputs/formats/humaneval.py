"""HumanEval's format: task_id, prompt, test (defining check(candidate)), entry_point, canonical_solution.
Proxy channel, runner `check`: check(entry_point) in the test worker."""

from __future__ import annotations

from harness.core.errors import InputError
from harness.inputs.problem import Problem, check_test_compiles
from harness.inputs.formats.base import Format, add, register, require
from harness.inputs.formats.evalplus import refuse_evalplus


def detect(obj: dict) -> bool:
    # task_id and HumanEval's fields, and none that marks another format (which then names what is missing)
    return "task_id" in obj and bool({"prompt", "test", "entry_point"} & set(obj)) and \
        not {"language", "test_list", "complete_prompt", "code_prompt", "instruct_prompt", "plus_input"} & set(obj)


def load(path, records, ceilings=None) -> dict:
    problems: dict = {}
    for where, obj in records:
        refuse_evalplus(where, obj, "humaneval")
        task_id = require(where, obj, "task_id")
        prompt = require(where, obj, "prompt", allow_empty=True)
        test = require(where, obj, "test")
        entry_point = require(where, obj, "entry_point")
        if not entry_point.isidentifier():
            raise InputError(f"{where}: entry_point {entry_point!r} is not a Python identifier")
        canonical = obj.get("canonical_solution")
        if canonical is not None and not isinstance(canonical, str):
            raise InputError(f"{where}: field 'canonical_solution' must be a string")
        check_test_compiles(path, where, task_id, test)
        add(problems, where, Problem(task_id, prompt, test, entry_point, canonical, format="humaneval"))
    return problems


register(Format("humaneval", "HumanEval (and HumanEval+-style files)", detect, load,
                "task_id, prompt, test, entry_point"))
