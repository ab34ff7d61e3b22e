"""The io channel's comparison rules: does a program's stdout match a test's expected output? Each rule
follows its benchmark's own evaluator, so that numbers are comparable with published ones; `strict`
is exact text after trailing whitespace. They run in the supervisor (root), on output the candidate
wrote and expected output it never saw; everything here is bounded and cannot raise.

    strict          the two texts equal after removing trailing whitespace of every line and trailing
                    empty lines (line endings \\r\\n count as \\n)
    livecodebench   LiveCodeBench (lcb_runner/evaluation/testing_util.py, grade_stdio): both stripped and
                    split into stripped lines; as many lines; each line equal as text, or as a list of
                    decimals (whitespace-separated, compared exactly as Decimal)
    codecontests    CodeContests (execution/tester_sandboxer.cc, OutputsMatch): whitespace-separated
                    tokens, lower-cased; equal lists, or as many tokens each matching: text exactly when
                    either is not a number, within 1e-5 when either is not a 32-bit integer, else equal
    apps            APPS (eval/testing_util.py, standard input): a cascade, passing at the first check
                    that holds: stripped text; output lines (stripped) against the expected text or its
                    lines; with empty lines dropped; as floats (numpy.allclose's tolerances); as sets of
                    whitespace tokens per line; the same rounded to 3 decimals
"""

import math
import re
from decimal import Decimal, InvalidOperation

RULES = ("strict", "apps", "codecontests", "livecodebench")


def compare(rule, output, expected):
    """(matches, why not) for one test. `output` and `expected` are text."""
    try:
        ok = _RULES[rule](output, expected)
    except (ValueError, TypeError, ArithmeticError, RecursionError, MemoryError, KeyError) as e:
        return False, f"the comparison failed ({type(e).__name__})"
    return ok, ("" if ok else "the output differs")


def _strict(output, expected):
    def norm(text):
        lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return lines
    return norm(output) == norm(expected)


def _decimals(line):
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _livecodebench(output, expected):
    out_lines = [line.strip() for line in output.strip().split("\n")]
    exp_lines = [line.strip() for line in expected.strip().split("\n")]
    if len(out_lines) != len(exp_lines):
        return False
    for got, want in zip(out_lines, exp_lines):
        if got == want:
            continue
        got_d, want_d = _decimals(got), _decimals(want)
        if got_d is None or want_d is None or got_d != want_d:
            return False
    return True


_INT = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf(inity)?|nan)", re.IGNORECASE)


def _cc_value(token):
    """('int', v) for a 32-bit integer, ('float', v) for another number, ('text', token) otherwise."""
    if _INT.fullmatch(token):
        v = int(token)
        if -(2 ** 31) <= v < 2 ** 31:
            return "int", v
        return "float", float(token)
    if _NUMBER.fullmatch(token):
        return "float", float(token)
    return "text", token


def _codecontests(output, expected):
    got = output.lower().split()
    want = expected.lower().split()
    if got == want:
        return True
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        ka, va = _cc_value(a)
        kb, vb = _cc_value(b)
        if ka == "text" or kb == "text":
            if a != b:
                return False
        elif ka == "float" or kb == "float":
            if not abs(va - vb) < 1e-5:
                return False
        elif va != vb:
            return False
    return True


def _allclose(a, b):
    """numpy.allclose with its default tolerances: |a - b| <= 1e-8 + 1e-5 * |b|, NaN never close."""
    return all(abs(x - y) <= 1e-8 + 1e-5 * abs(y) if not (math.isinf(x) or math.isinf(y)) else x == y
               for x, y in zip(a, b))


def _apps(output, expected):
    lines = output.splitlines()                      # APPS captures stdout as a list of lines
    if "\n".join(lines).strip() == expected.strip():
        return True
    if "\n".join(line.strip() for line in lines).strip() == expected.strip():
        return True
    if lines == [expected]:
        return True
    want_lines = [x.strip() for x in expected.split("\n") if x]
    if lines == [want_lines] or lines == want_lines:
        return True
    kept = [line for line in lines if line]
    if kept == want_lines:
        return True
    try:
        got_f = [float(e) for e in kept]
        want_f = [float(e) for e in want_lines]
        if len(got_f) == len(want_f) and _allclose(got_f, want_f):
            return True
    except (ValueError, OverflowError):
        pass
    # as sets of whitespace tokens, line by line, and the lines as a set
    want_sets = set(frozenset(line.split()) for line in want_lines)
    got_token_lines = [line.split() for line in kept]
    got_sets = set(frozenset(tokens) for tokens in got_token_lines if tokens)
    if got_sets == want_sets:
        return True
    try:
        return (set(frozenset(round(float(t), 3) for t in s) for s in got_sets)
                == set(frozenset(round(float(t), 3) for t in s) for s in want_sets))
    except (ValueError, OverflowError):
        return False


_RULES = {"strict": _strict, "apps": _apps, "codecontests": _codecontests, "livecodebench": _livecodebench}
