"""passk's optional parts (pyproject's extras): what each needs, whether it is installed, and the one line a
command prints when the part it needs is missing (exit 2, never a traceback)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from harness.core.errors import InputError


@dataclass(frozen=True)
class Extra:
    name: str              # pip install 'passk[<name>]'
    modules: tuple         # what it installs, as importable modules
    used_by: str           # what in passk needs it


EXTRAS = {e.name: e for e in (
    Extra("serve", ("starlette", "uvicorn"), "passk serve (the HTTP service)"),
    Extra("ray", ("ray",), "--executor ray (a Ray cluster's nodes run the candidates)"),
    Extra("inspect", ("inspect_ai",), 'sandbox="passk" in inspect_ai tasks (docs/inspect.md)'),
)}


def missing(name: str) -> list[str]:
    """The modules of extra `name` that cannot be imported here."""
    return [m for m in EXTRAS[name].modules if importlib.util.find_spec(m) is None]


def present(name: str) -> bool:
    return not missing(name)


def require(name: str, what: str | None = None) -> None:
    """Raise InputError (exit 2, one line) when extra `name` is not installed."""
    absent = missing(name)
    if absent:
        extra = EXTRAS[name]
        raise InputError(f"{what or extra.used_by} needs passk's `{name}` extra ({', '.join(absent)} not "
                         f"installed): pip install 'passk[{name}]'")
