"""Unit-test files: BigCodeBench's format (task_id, complete_prompt, instruct_prompt, code_prompt,
canonical_solution, test, entry_point, libs). The test is a unittest module that uses the candidate's
code in the same process: in_process channel, runner `bigcodebench` (BigCodeBench 0.2.5's own rule:
candidate.run_bigcodebench). A completion follows complete_prompt; a solution is the whole program.
Calibrated (BigCodeBench's default, and passk's): the task's code_prompt and `pass` come before every
program, so its imports and constants are there. The suite's limit is BigCodeBench's, not passk's
default: max(240 s, the ground truth's time) + 1, and 30 GB of address space. The libraries come from
the run's environment (harness/inputs/libraries.py); `libs` is kept in the problem's notes."""

from __future__ import annotations

from dataclasses import replace

from harness.core.errors import InputError
from harness.inputs.problem import Problem, check_test_compiles
from harness.inputs.formats.base import Format, add, register, require


def detect(obj: dict) -> bool:
    return bool({"complete_prompt", "code_prompt", "instruct_prompt"} & set(obj))


def load(path, records, ceilings=None) -> dict:
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
        code_prompt = obj.get("code_prompt")
        notes = {**({"libs": libs} if libs else {}), **({"code_prompt": code_prompt} if isinstance(code_prompt, str) else {})}
        add(problems, where, Problem(task_id, prompt, test, entry, canonical if isinstance(canonical, str) else None,
                                     channel="in_process", runner="bigcodebench", format="bigcodebench",
                                     notes=notes))
    return problems


RULE = "bigcodebench-0.2.5"
CALIBRATION = "\n    pass\n"   # what BigCodeBench puts between the code_prompt and a calibrated program


def is_bigcodebench(problems: dict) -> bool:
    return any(p.runner == "bigcodebench" for p in problems.values())


def apply_rule(problems: dict, settings) -> dict:
    """The problems as BigCodeBench runs them: calibrated, each program follows its task's code_prompt and
    `pass` (a task without a code_prompt runs the program alone, as it is)."""
    if not settings.calibrated:
        return problems
    return {t: (replace(p, header=p.notes["code_prompt"] + CALIBRATION)
                if p.runner == "bigcodebench" and "code_prompt" in p.notes else p) for t, p in problems.items()}


def ground_truth_problem(problem):
    """The task as BigCodeBench checks its ground truth: complete_prompt + "\n" + canonical_solution, not
    calibrated."""
    return replace(problem, header="", prompt=problem.prompt + "\n") if problem.runner == "bigcodebench" else problem


def rule_limits(limits, settings, ground_truth_s: float | None = None):
    """BigCodeBench's limits in place of passk's: the suite gets max(timeout_s, the ground truth's time) + 1
    (its untrusted_check), the candidate RLIMIT_AS memory_mb (its max_as_limit)."""
    timeout = max(settings.timeout_s, ground_truth_s or 0.0) + 1
    return replace(limits, timeout_s=timeout, cpu_time_s=None, memory_mb=int(settings.memory_mb))


def rule_record(settings) -> dict:
    """What a row records of the rule that judged it."""
    return {"name": RULE, "calibrated": settings.calibrated, "timeout_s": settings.timeout_s,
            "memory_mb": settings.memory_mb}


register(Format("bigcodebench", "unit-test files (BigCodeBench)", detect, load,
                "task_id, complete_prompt or code_prompt, test, entry_point"))
