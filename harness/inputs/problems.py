"""Loading problems, whatever file they came from: each file format is read by a module of
harness/inputs/formats/; load_problems picks it from the file's fields, or by name. What a problem is:
problem.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs import languages
from harness.inputs.formats import first_record, formats, load
from harness.inputs.problem import Problem


def load_problems(path: str | Path, fmt: str | None = None, channel: str | None = None,
                  ceilings=None) -> dict[str, Problem]:
    """Problems in file order, keyed by task id. `fmt` forces a format (else it is read from the fields);
    `ceilings` (untrusted.Ceilings, default its defaults): the most a package or a row may state;
    `channel` forces the verdict channel of every problem whose tests can run there (proxy or in_process:
    an io problem stays io, another language's stays in_process, an EvalPlus one proxy)."""
    problems = load(Path(path), fmt, ceilings)
    if channel and channel != "auto":
        if channel not in ("proxy", "in_process"):
            raise InputError(f"channel must be auto, proxy or in_process, got {channel!r}")
        # an io problem stays io, another language's in_process, EvalPlus's differential tests proxy (their
        # comparison must run where the candidate cannot reach it)
        problems = {t: (replace(p, channel=channel) if p.channel != "io" and p.language == "python"
                        and p.runner not in ("evalplus", "bigcodebench") else p)
                    for t, p in problems.items()}
    return problems


def problems_language(problems: dict) -> str:
    """The one language of a problem set's tests (MultiPL-E's: a run's image is its language; io programs
    choose their own): refused (exit 2) when they mix."""
    found = {p.language for p in problems.values() if p.channel != "project"}   # projects: each its own image
    if len(found) > 1:
        raise InputError("the problems are in several languages (" + ", ".join(sorted(found)) + "): one run "
                         "runs one language; split the file")
    return found.pop() if found else "python"


def _first_record(path: Path) -> dict | None:
    """A problem file's first record, read before the whole file is (a large JSON Lines file is read once,
    by the full load); None where it cannot be read (the full load says what is wrong with it)."""
    try:
        return first_record(path)
    except (InputError, OSError):
        return None


def peek_format(path, fmt: str | None = None) -> str | None:
    """The format of a problem file, from its first record (or as forced); None where it cannot be told
    (the full load says why)."""
    path = Path(path)
    if fmt is not None or path.is_dir():
        from harness.inputs.formats import dir_format
        return fmt or dir_format(path)
    first = _first_record(path)
    if first is None:
        return None
    return next((f.name for f in formats().values() if f.detect(first)), None)


def peek_language(path, fmt: str | None = None) -> str:
    """The language of a problem file's first record, read before the whole file is (so that the language's
    image can start while the inputs load); "python" when the file does not say."""
    path = Path(path)
    if path.is_dir() or fmt not in (None, "multipl-e"):
        return "python"
    first = _first_record(path)
    value = first.get("language") if first else None
    try:
        return languages.canonical(value) if isinstance(value, str) else "python"
    except InputError:
        return "python"
