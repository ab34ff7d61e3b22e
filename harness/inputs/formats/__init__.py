"""Problem file formats: one module each, registered here by name. A format says whether it recognises a
file's first record (`detect`) and turns the records into Problems (`load`). The file's fields choose
the format unless it is forced (`--format NAME`, `problems_format:` in YAML); a file no format
recognises exits 2 naming the fields it has and the formats passk knows."""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.formats import codeforces, competitive, evalplus, humaneval, kattis, mbpp, multipl_e, native, polyglot, swebench, unittests  # noqa: F401 (they register)
from harness.inputs.formats.base import _FORMATS, Format
from harness.core.jsonl import iter_jsonl, read_json
from harness.inputs.problem import Problem


def formats() -> dict[str, Format]:
    """Every format passk knows, by name (each module imported above registered its own)."""
    return dict(_FORMATS)


_READ: dict = {}   # the last file read whole: (path, size, mtime) -> its records (one entry)


def _key(path: Path):
    st = path.stat()
    return (str(path.resolve()), st.st_size, st.st_mtime_ns)


def read_records(path: Path) -> list[tuple[str, dict]]:
    """[(where, record)] of a JSON Lines file (.jsonl, .jsonl.gz) or a JSON array (.json, .json.gz). The
    last file read is kept (one file, until it changes): the run's format and language are read from its
    first record before the whole load, which then parses nothing again."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    key = _key(path)
    if key in _READ:
        return _READ[key]
    records = _read_records(path)
    _READ.clear()
    _READ[key] = records
    return records


def first_record(path: Path) -> dict | None:
    """A problem file's first record: the cached whole file's, else a JSON Lines file's first line alone (a
    large file is read whole once, by the load)."""
    key = _key(path)
    if key in _READ:
        records = _READ[key]
        return records[0][1] if records else None
    if key in _FIRST:
        return _FIRST[key]
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(".json"):
        records = read_records(path)
        return records[0][1] if records else None
    first = next(iter_jsonl(path, "problem file"), None)
    _FIRST.clear()
    _FIRST[key] = first[1] if first else None
    return _FIRST[key]


_FIRST: dict = {}   # a JSON Lines file's first record, read alone (one entry)


def _read_records(path: Path) -> list[tuple[str, dict]]:
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


def dir_format(path: Path) -> str:
    """The format of a problems directory, by its shape."""
    if kattis.packages(path):
        return "kattis"
    return "polyglot" if polyglot.is_polyglot_dir(path) else "native"


def load(path: Path, name: str | None = None, ceilings=None) -> dict[str, Problem]:
    """The problems of a file or directory, in its format (or `name`'s); `ceilings` (untrusted.Ceilings): the
    most a judged format's rows or packages may state."""
    known = formats()
    if path.is_dir():
        # a Kattis package (or a contest directory of them) holds data/ beside its problem.yaml; Exercism's
        # exercises have .meta/config.json (polyglot); passk's own layout is a directory of task directories,
        # each with its own problem.yaml and no data/
        fmt = known[dir_format(path)]
        if name not in (None, fmt.name):
            raise InputError(f"{path}: a directory of this shape is read as format {fmt.name}, not {name!r}")
        return fmt.load(path, [], ceilings)
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
    problems = fmt.load(path, records, ceilings)
    if not problems:
        raise InputError(f"{path}: no problems")
    return problems


