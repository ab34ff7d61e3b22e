"""passk's own layout, for people writing problems: a directory of tasks, one directory each:

    <set>/<task>/problem.yaml   channel (proxy, in_process or io; default proxy), runner (check, script or
                                unittest; default check), entry_point, compare (io), task_id (default: the
                                directory's name)
    <set>/<task>/prompt.py      the code a completion follows (optional)
    <set>/<task>/test.py        the tests (proxy, in_process)
    <set>/<task>/tests/NAME.in, NAME.out   io tests, in natural order of NAME
    <set>/<task>/solution.py    a reference solution, a whole program (optional)
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from harness.core.errors import InputError
from harness.inputs.problem import Problem, check_test_compiles
from harness.inputs.formats.base import Format, add, register

KEYS = {"task_id", "channel", "runner", "entry_point", "compare", "description"}


def _natural(name: str):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid UTF-8 (byte {e.start})") from None


def load(path, records, ceilings=None) -> dict:
    problems: dict = {}
    tasks = sorted((d for d in Path(path).iterdir() if (d / "problem.yaml").is_file()), key=lambda d: _natural(d.name))
    if not tasks:
        raise InputError(f"{path}: no task directories with a problem.yaml")
    for d in tasks:
        where = str(d / "problem.yaml")
        try:
            spec = yaml.safe_load(_read(d / "problem.yaml")) or {}
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise InputError(f"{where}:{mark.line + 1 if mark else '?'}: malformed YAML") from None
        if not isinstance(spec, dict):
            raise InputError(f"{where}: expected a mapping")
        unknown = set(spec) - KEYS
        if unknown:
            raise InputError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(KEYS))}")
        task_id = str(spec.get("task_id", d.name))
        channel = spec.get("channel", "proxy")
        prompt = _read(d / "prompt.py") if (d / "prompt.py").is_file() else ""
        solution = _read(d / "solution.py") if (d / "solution.py").is_file() else None
        if channel == "io":
            ins = sorted((d / "tests").glob("*.in"), key=lambda p: _natural(p.name))
            tests = []
            for i in ins:
                out = i.with_suffix(".out")
                if not out.is_file():
                    raise InputError(f"{i}: no {out.name} beside it")
                tests.append((_read(i), _read(out)))
            if not tests:
                raise InputError(f"{where}: an io problem needs tests/NAME.in and tests/NAME.out")
            problem = Problem(task_id, prompt, "", None, solution, channel="io", tests=tuple(tests),
                              compare=spec.get("compare", "strict"), format="native", solution_is="program")
        else:
            if not (d / "test.py").is_file():
                raise InputError(f"{where}: a {channel} problem needs a test.py")
            test = _read(d / "test.py")
            check_test_compiles(path, where, task_id, test)
            problem = Problem(task_id, prompt, test, spec.get("entry_point"), solution, channel=channel,
                              runner=spec.get("runner", "check"), format="native", solution_is="program")
        add(problems, where, problem)
    return problems


register(Format("native", "passk's directory layout", lambda obj: False, load,
                "a directory of <task>/problem.yaml, prompt.py, test.py or tests/, solution.py"))
