"""A second mix for the language benchmarks: programs that compile and pass, as most of a good model's
output does, written from MultiPL-E's HumanEval tests (../shared/data/multipl-e/, which hold no solutions).
For each problem whose every test is one call of the candidate compared with one expected value, the
completion counts its calls and returns, in turn, each test's expected value, as the tests spell it
(not model output: a program that does what the tests ask of it, and compiles and runs every test as a
solution would). On every third problem the program is near-correct instead: its last answer is the
first test's, so it runs every test and fails the last one (where the first and last answers differ).
The seven correct completions of scripts/inputs/language_samples.py and their wrong variants are added.

    python3 scripts/inputs/language_passing.py OUTDIR        writes OUTDIR/<language>-passing.jsonl (rows:
                                                       name, completion, kind)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from scripts.inputs import language_samples  # noqa: E402

OPEN = {"(": ")", "[": "]", "{": "}"}


def _close(text: str, at: int) -> int:
    """The index just past the bracket that closes the one at `at`, outside string and char literals."""
    depth, quote, i = 0, None, at
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif ch in OPEN:
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced")


# per language: how a test line starts (before the candidate's call's open parenthesis), what separates
# the call from the expected value, and how the line ends
SHAPES = {
    "cpp": [("assert(candidate", " == ", ");")],
    "rust": [("assert_eq!(candidate", ", ", ");")],
    "go": [("{ actual: candidate", ", expected: ", " },")],
    "java": [("assert({fn}", ".equals(", "));"), ("assert({fn}", " == ", ");")],
    "javascript": [("assert.deepEqual(candidate", ",", ");")],
    "typescript": [("assert.deepEqual(candidate", ",", ");")],
}


def expected_values(language: str, problem: dict) -> list[str] | None:
    """Each test's expected value in the tests' order, or None when a test is not one call and one value."""
    tests = problem.get("tests") or problem["test"]
    fn = None
    if language == "java":
        last = problem["prompt"].rstrip().splitlines()[-1]
        fn = last.split("(", 1)[0].split()[-1]
    values = []
    for line in tests.splitlines():
        s = line.strip()
        shapes = [(a.replace("{fn}", fn or ""), b, c) for a, b, c in SHAPES[language]]
        if not any(s.startswith(a + "(") for a, _, _ in shapes):
            if "candidate(" in s or (fn and f"{fn}(" in s):
                return None
            continue
        for start, sep, end in shapes:
            if not s.startswith(start + "(") or not s.endswith(end):
                continue
            try:
                call_end = _close(s, len(start))
            except ValueError:
                return None
            rest = s[call_end:]
            if rest.startswith(sep):
                values.append(rest[len(sep):len(rest) - len(end)].strip())
                break
        else:
            return None
    return values or None


def _cases(values, ret):
    return "".join(f"{ret(i, v)}" for i, v in enumerate(values[:-1]))


def body(language: str, values: list[str]) -> str:
    """A completion (closing the function where the tests do not) returning values[i] at the i-th call."""
    last = values[-1]
    if language == "cpp":
        cases = _cases(values, lambda i, v: f"        case {i}: return {v};\n")
        return (f"    static int passk_calls = 0;\n    switch (passk_calls++) {{\n{cases}        default: break;\n"
                f"    }}\n    return {last};\n")
    if language == "rust":
        cases = _cases(values, lambda i, v: f"    if passk_call == {i} {{ return {v}; }}\n")
        return ("    static PASSK_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);\n"
                "    let passk_call = PASSK_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);\n"
                f"{cases}    {last}\n}}\n")
    if language == "go":
        cases = _cases(values, lambda i, v: f"    case {i}:\n        return {v}\n")
        return (f"    passkCalls++\n    switch passkCalls - 1 {{\n{cases}    }}\n    return {last}\n}}\n\n"
                "var passkCalls = 0\n")
    if language == "java":
        cases = _cases(values, lambda i, v: f"            case {i}: return {v};\n")
        return (f"        switch (passkCalls++) {{\n{cases}            default: break;\n        }}\n"
                f"        return {last};\n    }}\n    static int passkCalls = 0;\n    static void passkNothing() {{\n")
    cases = _cases(values, lambda i, v: f"        case {i}: return {v};\n")
    return (f"    switch (passk_calls++) {{\n{cases}    }}\n    return {last};\n}}\n\nvar passk_calls = 0;\n")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for language, name in language_samples.FILES.items():
        problems = [json.loads(line) for line in (language_samples.SHARED / f"{name}.jsonl").read_text().splitlines()]
        rows, skipped = [], 0
        for i, p in enumerate(problems):
            values = expected_values(language, p)
            if not values:
                skipped += 1
                continue
            kind = "passing"
            if i % 3 == 2 and len(values) > 1 and values[0] != values[-1]:
                values, kind = values[:-1] + [values[0]], "near_miss"
            rows.append({"name": p["name"], "completion": body(language, values), "kind": kind})
            correct = language_samples.CORRECT.get(p["name"], {}).get(language)
            if correct:
                rows.append({"name": p["name"], "completion": language_samples.completion(language, correct),
                             "kind": "correct"})
                wrong = next((correct.replace(a, b, 1) for a, b in language_samples.WRONG if a in correct), None)
                if wrong and wrong != correct:
                    rows.append({"name": p["name"], "completion": language_samples.completion(language, wrong),
                                 "kind": "wrong"})
        programs = [p["name"] + r["completion"] for p in problems for r in rows if r["name"] == p["name"]]
        assert len(set(programs)) == len(programs), "a program repeated"   # MultiPL-E would run it once
        language_samples.write_set(out / f"{language}-passing.jsonl", language, rows,
                                   f"{len(problems) - skipped} of {len(problems)} problems")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
