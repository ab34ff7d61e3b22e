"""How a test's output is judged, once the candidate's run is over: one table per checker protocol, each
turning what a checker did (its exit code, what it wrote) into a verdict, and the comparators that run
here in the supervisor (root) on bytes the candidate wrote and an answer it never held.

Protocols (a problem names one; checker programs run as CHECKER_UID, never in the candidate's process or
uid, after every process of the candidate's is gone):

    rule      one of the io comparison rules of today (channels/io.py: strict, apps, codecontests,
              livecodebench), for the formats that define them
    default   the ICPC/Kattis default output validator, with its flags: case_sensitive,
              space_change_sensitive, float_tolerance E, float_absolute_tolerance E, float_relative_tolerance E
    kattis    an output validator program: `validator input answer feedback_dir/ [flags] < output`;
              exit 42 accepted, 43 wrong answer, anything else a judge error; score.txt (scoring problems)
    testlib   a testlib checker: `checker input output answer`; exit 0 ok, 1 wrong answer, 2 presentation
              error, 3 judge failure, 4 ("dirt") wrong answer, 7 points (the score after "points" on its
              stderr or stdout), 8 unexpected end of output (wrong answer), anything else a judge error
    python    the open-r1 Codeforces rows' generated checkers: `checker.py input answer output`; its stdout's
              first token is a score in [0, 1] (1 accepted, 0 wrong answer, between: points); a non-zero
              exit or anything else printed is a judge error

A verdict here is (verdict, detail, score): verdict "ok", "wrong_answer", "presentation_error" or
"judge_error"; score in [0, 1] for points, None otherwise. Nothing here raises on what a candidate wrote.
"""

import math
import re

from .channels.io import compare

MAX_FEEDBACK = 4096   # bytes of each feedback file kept in a row
WHITESPACE = b" \t\n\r\x0b\x0c"
_TOKEN = re.compile(rb"[^ \t\n\r\x0b\x0c]+")
_FLAGS_WITH_VALUE = ("float_tolerance", "float_absolute_tolerance", "float_relative_tolerance")
DEFAULT_FLAGS = ("case_sensitive", "space_change_sensitive") + _FLAGS_WITH_VALUE


def parse_default_flags(flags):
    """The default validator's flags as a dict; ValueError naming what is wrong (a judge error: the
    problem's fault, never the candidate's)."""
    out = {"case_sensitive": False, "space_change_sensitive": False, "abs": None, "rel": None}
    items = list(flags or ())
    i = 0
    given = set()
    while i < len(items):
        flag = items[i]
        if flag in ("case_sensitive", "space_change_sensitive"):
            out[flag] = True
            i += 1
            continue
        if flag not in _FLAGS_WITH_VALUE:
            raise ValueError(f"unknown default validator flag {flag!r}")
        if i + 1 >= len(items):
            raise ValueError(f"flag {flag} needs a number")
        try:
            value = float(items[i + 1])
        except ValueError:
            raise ValueError(f"flag {flag} needs a number, got {items[i + 1]!r}") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"flag {flag} needs a non-negative number")
        if flag in given or ("float_tolerance" in given) or (flag == "float_tolerance" and given & set(_FLAGS_WITH_VALUE)):
            raise ValueError(f"float tolerance given more than once ({flag})")
        given.add(flag)
        if flag in ("float_tolerance", "float_absolute_tolerance"):
            out["abs"] = value
        if flag in ("float_tolerance", "float_relative_tolerance"):
            out["rel"] = value
        i += 2
    return out


def _float(token):
    """A token as a floating-point number (the answer's, or the output's), or None. Only the forms the
    package format allows: a decimal with an optional exponent, or inf/nan spelled out; never a hex float."""
    try:
        text = token.decode("ascii")
    except UnicodeDecodeError:
        return None
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", text, re.IGNORECASE):
        return None
    try:
        return float(text)
    except (ValueError, OverflowError):
        return None


def default_validator(output: bytes, answer: bytes, flags):
    """The ICPC/Kattis default output validator (problem package format, "Default output validator
    specification"). (verdict, detail, None)."""
    opts = parse_default_flags(flags)
    if opts["space_change_sensitive"]:
        # the whitespace between (and around) tokens must be the same, byte for byte
        got_ws, want_ws = re.split(_TOKEN, output), re.split(_TOKEN, answer)
        if len(got_ws) != len(want_ws):
            return "wrong_answer", "a different number of tokens", None
        for i, (a, b) in enumerate(zip(got_ws, want_ws)):
            if a != b:
                return "wrong_answer", f"the whitespace before token {i + 1} differs", None
    got, want = _TOKEN.findall(output), _TOKEN.findall(answer)
    tolerance = opts["abs"] is not None or opts["rel"] is not None
    for i, (a, b) in enumerate(zip(got, want)):
        if tolerance:
            expected = _float(b)
            if expected is not None:
                value = _float(a)
                if value is None:
                    return "wrong_answer", f"token {i + 1}: expected a number, got {_shown(a)}", None
                diff = abs(value - expected)
                ok = value == expected or (opts["abs"] is not None and diff <= opts["abs"]) or \
                    (opts["rel"] is not None and diff <= opts["rel"] * abs(expected))
                if not ok:   # NaN is never within a tolerance of anything
                    return "wrong_answer", f"token {i + 1}: {_shown(a)} is not within the tolerance of {_shown(b)}", None
                continue
        if a == b or (not opts["case_sensitive"] and a.lower() == b.lower()):
            continue
        return "wrong_answer", f"token {i + 1}: expected {_shown(b)}, got {_shown(a)}", None
    if len(got) != len(want):
        which = "more" if len(got) > len(want) else "fewer"
        return "wrong_answer", f"{which} tokens than the answer ({len(got)} against {len(want)})", None
    return "ok", "", None


def _shown(token: bytes, limit: int = 40) -> str:
    text = token[:limit].decode("utf-8", "backslashreplace")
    return repr(text + ("…" if len(token) > limit else ""))


def by_rule(rule, output: bytes, answer: bytes):
    """One of today's io comparison rules (channels/io.py), as a checker verdict."""
    ok, why = compare(rule, output.decode("utf-8", "replace"), answer.decode("utf-8", "replace"))
    return ("ok", "", None) if ok else ("wrong_answer", f"{why} under rule {rule}", None)


# A checker program's exit code, by protocol: the one table each protocol is read by.
KATTIS_EXITS = {42: "ok", 43: "wrong_answer"}
TESTLIB_EXITS = {0: "ok", 1: "wrong_answer", 2: "presentation_error", 3: "judge_error", 4: "wrong_answer",
                 7: "points", 8: "wrong_answer"}
_POINTS = re.compile(rb"points\s+([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)")


def program_verdict(protocol, exit_code, signal, stdout: bytes, stderr: bytes, feedback: dict):
    """What a checker program said, read by its protocol's table: (verdict, detail, score). `feedback`:
    the Kattis feedback directory's files (name -> bytes, bounded)."""
    message = (feedback.get("judgemessage.txt") or stderr or stdout or b"")[:300].decode("utf-8", "replace").strip()
    if signal is not None:
        return "judge_error", f"the checker was killed by {signal}", None
    if protocol == "kattis":
        verdict = KATTIS_EXITS.get(exit_code)
        if verdict is None:
            return "judge_error", f"the output validator exited with {exit_code} (42 or 43 expected)", None
        score = None
        if "score.txt" in feedback:
            if verdict != "ok":
                return "judge_error", "the output validator wrote score.txt on a wrong answer", None
            try:
                score = float(feedback["score.txt"].decode("ascii").strip())
            except (UnicodeDecodeError, ValueError):
                return "judge_error", "the output validator's score.txt is not a number", None
            if not math.isfinite(score):
                return "judge_error", "the output validator's score.txt is not finite", None
        return verdict, message, score
    if protocol == "testlib":
        verdict = TESTLIB_EXITS.get(exit_code)
        if verdict is None:
            return "judge_error", f"the testlib checker exited with {exit_code}", None
        if verdict == "judge_error":
            return verdict, "the checker reported a failure: " + message, None
        if verdict == "points":
            found = _POINTS.search(stderr) or _POINTS.search(stdout)
            if found is None:
                return "judge_error", "the checker gave points without saying how many", None
            score = float(found.group(1))
            if not math.isfinite(score):
                return "judge_error", "the checker's points are not finite", None
            return "points", message, score
        return verdict, message, None
    if protocol == "python":
        if exit_code != 0:
            return "judge_error", f"the checker exited with {exit_code}: {message}", None
        tokens = stdout.split()
        value = _float(tokens[0]) if tokens else None
        if value is None or not 0 <= value <= 1:
            return "judge_error", "the checker printed no score in [0, 1]", None
        if value == 1:
            return "ok", "", None
        if value == 0:
            return "wrong_answer", message, None
        return "points", message, value
    return "judge_error", f"unknown checker protocol {protocol!r}", None
