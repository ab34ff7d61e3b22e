"""Problem file formats: one module each, registered here by name. A format says whether it recognises a
file's first record (`detect`) and turns the records into Problems (`load`). The file's fields choose
the format unless it is forced (`--format NAME`, `problems_format:` in YAML); a file no format
recognises exits 2 naming the fields it has and the formats passk knows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import InputError
from ..jsonl import iter_jsonl, read_json
from ..problems import Problem


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    detect: Callable[[dict], bool]            # on the first record
    load: Callable[[Path, list], dict]         # (path, [(where, record)]) -> {task_id: Problem}
    fields: str = ""                           # what docs/inputs.md says it reads


_FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    _FORMATS[fmt.name] = fmt
    return fmt


def formats() -> dict[str, Format]:
    # every module, every time (imports are cached): importing one format module alone must not leave
    # the registry holding only that module's formats
    from . import competitive, evalplus, humaneval, mbpp, multipl_e, native, unittests  # noqa: F401 (they register)
    return dict(_FORMATS)


def read_records(path: Path) -> list[tuple[str, dict]]:
    """[(where, record)] of a JSON Lines file (.jsonl, .jsonl.gz) or a JSON array (.json, .json.gz)."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(".json"):
        data = read_json(path)
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list) or not data:
            raise InputError(f"{path}: expected a JSON array of problems")
        out = []
        for i, obj in enumerate(data):
            if not isinstance(obj, dict):
                raise InputError(f"{path}: item {i}: expected a JSON object, got {type(obj).__name__}")
            out.append((f"{path}: item {i}", obj))
        return out
    return [(f"{path}:{lineno}", obj) for lineno, obj in iter_jsonl(path, "problem file")]


def load(path: Path, name: str | None = None) -> dict[str, Problem]:
    known = formats()
    if path.is_dir():
        fmt = known["native"]
        if name not in (None, "native"):
            raise InputError(f"{path}: a directory is a problem set in passk's own layout (format native), not {name!r}")
        return fmt.load(path, [])
    records = read_records(path)
    if name is not None:
        if name not in known:
            raise InputError(f"unknown problem format {name!r}; known: {', '.join(sorted(known))}")
        fmt = known[name]
    else:
        first = records[0][1]
        fmt = next((f for f in known.values() if f.detect(first)), None)
        if fmt is None:
            raise InputError(f"{records[0][0]}: no problem format has these fields ({', '.join(sorted(first))}); "
                             f"known formats: " + "; ".join(f"{f.name} ({f.fields})" for f in known.values())
                             + "; force one with --format")
    problems = fmt.load(path, records)
    if not problems:
        raise InputError(f"{path}: no problems")
    return problems


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


def refuse_evalplus(where: str, obj: dict, name: str) -> None:
    """An EvalPlus record (HumanEval+, MBPP+) is never read as another format: its tests are its inputs,
    judged against the ground truth, and read as plain HumanEval or MBPP its plus inputs would be lost."""
    if "plus_input" in obj:
        from .evalplus import dataset_of
        plus = dataset_of(obj) + "+"
        raise InputError(f"{where}: an EvalPlus record (it has 'plus_input'), not {name}: read it as {plus} "
                         f"(leave --format out, or --format {plus})")


def add(problems: dict, where: str, problem: Problem) -> None:
    if problem.task_id in problems:
        raise InputError(f"{where}: duplicate task_id {problem.task_id!r}")
    problems[problem.task_id] = problem
