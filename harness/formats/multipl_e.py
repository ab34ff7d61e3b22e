"""MultiPL-E's format: name, language, prompt, tests (or test), stop_tokens (task_id, entry_point and
doctests where a redistribution adds them). A program is prompt + completion + "\n" + tests, and the
tests define check(candidate) and test_check(), and call test_check() themselves: runner `script`,
proxy channel (the tests run in the test worker, naming the candidate's function; the prompt's own
stub of it never shadows the candidate's). Only Python: a problem in another language is refused,
naming it."""

from __future__ import annotations

from ..errors import InputError
from ..problems import Problem, check_test_compiles
from . import Format, add, register, require

PYTHON = ("py", "python")


def detect(obj: dict) -> bool:
    return "language" in obj and bool({"name", "tests", "stop_tokens"} & set(obj))


def load(path, records) -> dict:
    problems: dict = {}
    for where, obj in records:
        language = require(where, obj, "language")
        name = obj.get("name", obj.get("task_id"))
        if language not in PYTHON:
            raise InputError(f"{where}: {name!r} is a MultiPL-E problem in language {language!r}; passk runs "
                             "Python candidates only, so far: refused rather than scored as Python")
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: missing field 'name'")
        prompt = require(where, obj, "prompt")
        tests = obj.get("tests", obj.get("test"))
        if not isinstance(tests, str) or not tests.strip():
            raise InputError(f"{where}: field 'tests' must be a non-empty string")
        stops = obj.get("stop_tokens") or []
        if not isinstance(stops, list) or not all(isinstance(t, str) for t in stops):
            raise InputError(f"{where}: field 'stop_tokens' must be a list of strings")
        entry = obj.get("entry_point")
        check_test_compiles(path, where, name, tests)
        aliases = tuple(a for a in (obj.get("task_id"),) if isinstance(a, str) and a != name)
        add(problems, where, Problem(name, prompt, tests, entry if isinstance(entry, str) and entry else None,
                                     None, runner="script", main=True, format="multipl-e", language="python",
                                     stop_tokens=tuple(stops), aliases=aliases))
    return problems


register(Format("multipl-e", "MultiPL-E (Python)", detect, load, "name, language, prompt, tests, stop_tokens"))
