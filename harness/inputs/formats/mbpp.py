"""MBPP, both releases. The original (mbpp.jsonl): task_id (an integer), text, code, test_list,
test_setup_code, challenge_test_list; the sanitized one (sanitized-mbpp.json, a JSON array): task_id,
prompt, code, test_imports, test_list. The tests are bare `assert f(x) == y` statements naming the
candidate's functions: runner `script`. Channel: proxy, unless test_setup_code defines something for
the tests (classes whose instances the candidate gets): then in_process, as MBPP's own evaluation runs
it. Task ids are Mbpp/<n> (evalplus's); samples may also use the plain number."""

from __future__ import annotations

from harness.core.errors import InputError
from harness.inputs.problem import Problem, check_test_compiles
from harness.inputs.formats.base import Format, add, register, require
from harness.inputs.formats.evalplus import refuse_evalplus


def detect(obj: dict) -> bool:
    if "plus_input" in obj:
        return False
    return "test_list" in obj or ("task_id" in obj and bool({"test_setup_code", "challenge_test_list",
                                                             "test_imports"} & set(obj)))


def load(path, records, ceilings=None) -> dict:
    problems: dict = {}
    for where, obj in records:
        refuse_evalplus(where, obj, "mbpp")
        number = require(where, obj, "task_id", (int, str))
        code = require(where, obj, "code")
        tests = require(where, obj, "test_list", list)
        if not tests or not all(isinstance(t, str) for t in tests):
            raise InputError(f"{where}: field 'test_list' must be a non-empty list of strings")
        setup = obj.get("test_setup_code", "") or ""
        imports = obj.get("test_imports", []) or []
        if not isinstance(setup, str) or not isinstance(imports, list):
            raise InputError(f"{where}: fields 'test_setup_code' / 'test_imports' have the wrong type")
        test = "\n".join([*imports, setup, *tests]).strip("\n") + "\n"
        task_id = f"Mbpp/{number}"
        check_test_compiles(path, where, task_id, test)
        channel = "in_process" if setup.strip() else "proxy"
        text = obj.get("text", obj.get("prompt", ""))
        add(problems, where, Problem(task_id, "", test, None, code, channel=channel, runner="script",
                                     format="mbpp", solution_is="program", aliases=(str(number),),
                                     notes={"text": text} if isinstance(text, str) else {}))
    return problems


register(Format("mbpp", "MBPP, original or sanitized", detect, load,
                "task_id, text or prompt, code, test_list (+ test_setup_code or test_imports)"))
