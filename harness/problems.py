"""Load a problem set: HumanEval-format JSON Lines (task_id, prompt, test, entry_point;
canonical_solution optional). Problems are data; nothing here executes them (the test code is
compiled, not run, so that a test that cannot run is refused before any candidate is)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .jsonl import iter_jsonl, require_str


@dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str
    test: str
    entry_point: str
    canonical_solution: str | None = None


def load_problems(path: str | Path) -> dict[str, Problem]:
    """Problems in file order, keyed by task id."""
    path = Path(path)
    problems: dict[str, Problem] = {}
    for lineno, obj in iter_jsonl(path, "problem file"):
        task_id = require_str(path, lineno, obj, "task_id")
        if task_id in problems:
            raise InputError(f"{path}:{lineno}: duplicate task_id {task_id!r}")
        prompt = require_str(path, lineno, obj, "prompt", allow_empty=True)
        test = require_str(path, lineno, obj, "test")
        entry_point = require_str(path, lineno, obj, "entry_point")
        if not entry_point.isidentifier():
            raise InputError(f"{path}:{lineno}: entry_point {entry_point!r} is not a Python identifier")
        try:
            compile(test, f"{task_id} test", "exec")
        except (SyntaxError, ValueError) as e:
            where = f" (line {e.lineno})" if getattr(e, "lineno", None) else ""
            raise InputError(f"{path}:{lineno}: the test code of {task_id!r} does not compile{where}: "
                             f"{getattr(e, 'msg', e)}") from None
        canonical = obj.get("canonical_solution")
        if canonical is not None and not isinstance(canonical, str):
            raise InputError(f"{path}:{lineno}: field 'canonical_solution' must be a string")
        problems[task_id] = Problem(task_id, prompt, test, entry_point, canonical)
    return problems
