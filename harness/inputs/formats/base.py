"""What every problem format module uses: the Format record, the registry it goes into, and the checks
of a record's fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from harness.core.errors import InputError
from harness.inputs.problem import Problem


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    detect: Callable[[dict], bool]            # on the first record
    load: Callable[..., dict]                  # (path, [(where, record)], ceilings) -> {task_id: Problem}
    fields: str = ""                           # what docs/inputs.md says it reads


_FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    _FORMATS[fmt.name] = fmt
    return fmt


def require(where: str, obj: dict, field: str, kind=str, allow_empty: bool = False):
    if field not in obj:
        raise InputError(f"{where}: missing field {field!r}")
    value = obj[field]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = {"str": "a string", "int": "an integer", "list": "a list", "dict": "an object"}
        kinds = [kind] if isinstance(kind, type) else list(kind)
        wanted = " or ".join(names.get(k.__name__, k.__name__) for k in kinds)
        raise InputError(f"{where}: field {field!r} must be {wanted}, got {type(value).__name__}")
    if isinstance(value, str) and not allow_empty and not value.strip():
        raise InputError(f"{where}: field {field!r} is empty")
    return value


def add(problems: dict, where: str, problem: Problem) -> None:
    if problem.task_id in problems:
        raise InputError(f"{where}: duplicate task_id {problem.task_id!r}")
    problems[problem.task_id] = problem
