"""MultiPL-E's format: name, language, prompt, tests (or test), stop_tokens (task_id, entry_point and
doctests where a redistribution adds them). A program is prompt + completion + "\n" + tests, and the
tests define check(candidate) and test_check(), and call test_check() themselves: runner `script`,
proxy channel (the tests run in the test worker, naming the candidate's function; the prompt's own
stub of it never shadows the candidate's).

In C++, Rust, Go, Java, JavaScript and TypeScript (harness/inputs/languages.py) the program is the same
concatenation, built and run as MultiPL-E's evaluator does, its tests compiled in: the in_process channel,
with a completion marker. One file holds one language; another language is refused, naming it."""

from __future__ import annotations

from harness.inputs import languages
from harness.core.errors import InputError
from harness.inputs.problem import Problem, check_test_compiles
from harness.inputs.formats.base import Format, add, register, require


def detect(obj: dict) -> bool:
    return "language" in obj and bool({"name", "tests", "stop_tokens"} & set(obj))


def load(path, records, ceilings=None) -> dict:
    problems: dict = {}
    first = None
    for where, obj in records:
        name = obj.get("name", obj.get("task_id"))
        try:
            language = languages.canonical(require(where, obj, "language"))
        except InputError as e:
            raise InputError(f"{where}: {name!r}: {e}") from None
        if first is None:
            first = language
        elif language != first:
            raise InputError(f"{where}: {name!r} is in {language}, the file's first problem in {first}: "
                             "one language per problem file (and per run)")
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
        aliases = tuple(a for a in (obj.get("task_id"),) if isinstance(a, str) and a != name)
        if language != "python":
            languages.glue(language, name, prompt, tests)   # tests passk cannot wrap are refused now
            add(problems, where, Problem(name, prompt, tests, entry if isinstance(entry, str) and entry else None,
                                         None, channel="in_process", runner="script", format="multipl-e",
                                         language=language, stop_tokens=tuple(stops), aliases=aliases))
            continue
        check_test_compiles(path, where, name, tests)
        add(problems, where, Problem(name, prompt, tests, entry if isinstance(entry, str) and entry else None,
                                     None, runner="script", main=True, format="multipl-e", language="python",
                                     stop_tokens=tuple(stops), aliases=aliases))
    return problems


register(Format("multipl-e", "MultiPL-E (Python, C++, Rust, Go, Java, JavaScript, TypeScript)", detect, load,
                "name, language, prompt, tests, stop_tokens"))
