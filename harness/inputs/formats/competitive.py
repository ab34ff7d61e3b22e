"""Competitive-programming formats: APPS, CodeContests, LiveCodeBench.

Programs that read stdin go to the io channel, compared by the benchmark's own rule
(box/channels/io.py). Call-based problems (APPS `fn_name`, LiveCodeBench `functional` with
metadata.func_name, usually a LeetCode-style `class Solution`) go to the proxy channel: passk writes
their test code (below), which calls the function, or the method of `Solution()`, through the proxy and
compares as the benchmark does. Each benchmark's import block is put before every program, as its own
evaluator does (APPS's without numpy, which passk's image lacks).

LiveCodeBench stores private tests as base64 of zlib of a pickle of a JSON string: the pickle is read by
an unpickler that refuses every global (so nothing can be built or called) and must yield a string."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib

from harness.core.errors import InputError
from harness.inputs.problem import Problem
from harness.inputs.formats.base import Format, add, register, require

APPS_HEADER = ("import sys\nimport time\nimport itertools\nfrom itertools import accumulate, product, permutations, "
               "combinations\nimport collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, "
               "ChainMap\nfrom functools import lru_cache\nimport math\nfrom math import sqrt, sin, cos, tan, ceil, "
               "fabs, floor, gcd, exp, log, log2\nimport fractions\nfrom typing import List, Tuple\nimport random\n"
               "import heapq\nfrom heapq import *\n")
LCB_HEADER = ("from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
              "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
              "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
              "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
              "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
              "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
              "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n")


# ------------------------------------------------------------------------------------------------
# Test code for call-based problems (runs in the test worker; `_target` reaches the candidate).
# ------------------------------------------------------------------------------------------------
_TARGET = '''
try:
    _target = getattr(Solution(), {name!r})
except NameError:
    _target = {name}
'''

_APPS_CALL = _TARGET + '''
import json as _json
for _i, (_args, _want) in enumerate(_json.loads({cases!r})):
    try:  # APPS: JSON makes dictionary keys strings; it turns them back into ints (a singleton list)
        if isinstance(_args[0], dict):
            _args = [{{int(k): v for k, v in _args[0].items()}}]
    except Exception:
        pass
    try:
        if isinstance(_want, dict):
            _want = [{{int(k): v for k, v in _want.items()}}]
    except Exception:
        pass
    try:
        if isinstance(_want[0], dict):
            _want = [{{int(k): v for k, v in _want[0].items()}}]
    except Exception:
        pass
    _got = _target(*_args)
    if isinstance(_got, tuple):
        _got = list(_got)
    _ok = _got == _want or (isinstance(_want, list) and bool(_want) and _got == _want[0])
    try:
        if isinstance(_got[0], tuple):
            _ok = _ok or [list(x) for x in _got] == _want[0]
    except Exception:
        pass
    assert _ok, f"test {{_i}}: wrong answer"
'''

_LCB_CALL = _TARGET + '''
import json as _json
for _i, (_lines, _want) in enumerate(_json.loads({cases!r})):
    _args = [_json.loads(line) for line in _lines.split("\\n")]
    _got = _target(*_args)
    if isinstance(_got, tuple):
        _got = list(_got)
    assert _got == _json.loads(_want), f"test {{_i}}: wrong answer"
'''


def _call_test(template: str, name: str, cases) -> str:
    if not name.isidentifier():
        raise ValueError(f"function name {name!r} is not an identifier")
    return template.format(name=name, cases=json.dumps(cases))


# ------------------------------------------------------------------------------------------------
# APPS
# ------------------------------------------------------------------------------------------------
def _json_field(where, obj, field):
    value = obj.get(field)
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else None
        except json.JSONDecodeError as e:
            raise InputError(f"{where}: field {field!r} is not valid JSON ({e.msg})") from None
    return value


def _text(x) -> str:
    return "\n".join(map(str, x)) if isinstance(x, list) else str(x)


def detect_apps(obj: dict) -> bool:
    return "input_output" in obj and ("question" in obj or "problem_id" in obj)


def load_apps(path, records, ceilings=None) -> dict:
    problems: dict = {}
    for where, obj in records:
        number = obj.get("problem_id", obj.get("id"))
        if not isinstance(number, (int, str)) or isinstance(number, bool):
            raise InputError(f"{where}: missing field 'problem_id'")
        io_ = _json_field(where, obj, "input_output")
        if not isinstance(io_, dict) or not isinstance(io_.get("inputs"), list) or \
                not isinstance(io_.get("outputs"), list) or len(io_["inputs"]) != len(io_["outputs"]):
            raise InputError(f"{where}: field 'input_output' needs lists 'inputs' and 'outputs' of one length")
        if not io_["inputs"]:
            raise InputError(f"{where}: problem {number} has no tests")
        task_id = f"APPS/{number}"
        solutions = _json_field(where, obj, "solutions")
        canonical = solutions[0] if isinstance(solutions, list) and solutions and isinstance(solutions[0], str) else None
        fn = io_.get("fn_name")
        common = dict(canonical_solution=canonical, header=APPS_HEADER, format="apps", solution_is="program",
                      aliases=(str(number),))
        if fn:
            test = _call_test(_APPS_CALL, fn, list(zip(io_["inputs"], io_["outputs"])))
            add(problems, where, Problem(task_id, "", test, None, runner="script", **common))
        else:
            tests = tuple((_text(i), _text(o)) for i, o in zip(io_["inputs"], io_["outputs"]))
            add(problems, where, Problem(task_id, "", "", None, channel="io", runner="apps_stdin", tests=tests,
                                         compare="apps", **common))
    return problems


# ------------------------------------------------------------------------------------------------
# CodeContests
# ------------------------------------------------------------------------------------------------
def detect_codecontests(obj: dict) -> bool:
    return "public_tests" in obj and "private_tests" in obj


def load_codecontests(path, records, ceilings=None) -> dict:
    problems: dict = {}
    for where, obj in records:
        name = require(where, obj, "name")
        tests = []
        for part in ("public_tests", "private_tests", "generated_tests"):
            block = obj.get(part) or {}
            ins, outs = block.get("input", []), block.get("output", [])
            if not isinstance(ins, list) or not isinstance(outs, list) or len(ins) != len(outs):
                raise InputError(f"{where}: field {part!r} needs lists 'input' and 'output' of one length")
            tests += [(str(i), str(o)) for i, o in zip(ins, outs)]
        if not tests:
            raise InputError(f"{where}: problem {name!r} has no tests")
        sols = obj.get("solutions") or {}
        canonical = None
        if isinstance(sols, dict):  # language 3 is Python 3 in CodeContests
            for lang, code in zip(sols.get("language", []), sols.get("solution", [])):
                if lang == 3 and isinstance(code, str):
                    canonical = code
                    break
        add(problems, where, Problem(name, "", "", None, canonical, channel="io", runner="script",
                                     tests=tuple(tests), compare="codecontests", format="codecontests",
                                     solution_is="program"))
    return problems


# ------------------------------------------------------------------------------------------------
# LiveCodeBench
# ------------------------------------------------------------------------------------------------
class _StringsOnly(pickle.Unpickler):
    """Unpickles plain data only: any global (a class, a function) is refused, so nothing runs."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused a global {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused a persistent id")


def decode_private_tests(where: str, value) -> list:
    """LiveCodeBench's private tests: a JSON string, or base64(zlib(pickle(JSON string)))."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise InputError(f"{where}: field 'private_test_cases' must be a string")
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    try:
        blob = zlib.decompress(base64.b64decode(value.encode("ascii"), validate=True))
        text = _StringsOnly(io.BytesIO(blob)).load()
    except Exception as e:  # noqa: BLE001 - anything that is not the expected shape is refused, named
        raise InputError(f"{where}: field 'private_test_cases' is neither JSON nor base64 of zlib of a pickled "
                         f"string ({type(e).__name__}: {str(e)[:100]})") from None
    if not isinstance(text, str):
        raise InputError(f"{where}: field 'private_test_cases' holds a pickled {type(text).__name__}, not a "
                         "string: refused")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: the private tests are not JSON ({e.msg})") from None


def detect_livecodebench(obj: dict) -> bool:
    return "question_id" in obj and "public_test_cases" in obj


def load_livecodebench(path, records, ceilings=None) -> dict:
    problems: dict = {}
    for where, obj in records:
        qid = require(where, obj, "question_id", (str, int))
        public = _json_field(where, obj, "public_test_cases") or []
        private = decode_private_tests(where, obj.get("private_test_cases", "[]"))
        cases = [*public, *private]
        if not isinstance(cases, list) or not cases or not all(isinstance(c, dict) for c in cases):
            raise InputError(f"{where}: problem {qid} has no tests")
        meta = _json_field(where, obj, "metadata") or {}
        kinds = {c.get("testtype") for c in cases}
        if kinds - {"stdin", "functional"} or len(kinds) != 1:
            raise InputError(f"{where}: testtype must be stdin or functional throughout, got {sorted(map(str, kinds))}")
        task_id = str(qid)
        common = dict(header=LCB_HEADER, format="livecodebench", solution_is="program")
        if kinds == {"functional"}:
            fn = meta.get("func_name") if isinstance(meta, dict) else None
            if not isinstance(fn, str) or not fn.isidentifier():
                raise InputError(f"{where}: a functional problem needs metadata.func_name")
            test = _call_test(_LCB_CALL, fn, [[c["input"], c["output"]] for c in cases])
            add(problems, where, Problem(task_id, "", test, None, runner="script", **common))
        else:
            add(problems, where, Problem(task_id, "", "", None, channel="io", runner="script",
                                         tests=tuple((str(c["input"]), str(c["output"])) for c in cases),
                                         compare="livecodebench", **common))
    return problems


register(Format("livecodebench", "LiveCodeBench code generation", detect_livecodebench, load_livecodebench,
                "question_id, public_test_cases, private_test_cases, metadata"))
register(Format("codecontests", "DeepMind CodeContests", detect_codecontests, load_codecontests,
                "name, public_tests, private_tests, generated_tests"))
register(Format("apps", "APPS", detect_apps, load_apps, "problem_id, question, input_output, solutions"))
