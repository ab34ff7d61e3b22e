"""Candidates for MultiPL-E's HumanEval in C++, Rust, Go, Java, JavaScript and TypeScript (the problem files
in ../shared/data/multipl-e/, which hold no solutions), for comparing passk with MultiPL-E's evaluator:
per problem a completion that compiles and returns the return type's default value (mostly wrong, now
and then right), and on a share of the problems a completion that does not compile, one that loops
forever and one that exits with code 0 before the tests; on seven problems a correct completion written
here and a wrong variant of it. Completions follow MultiPL-E's convention (program = prompt + completion
+ "\\n" + tests), to be run without stop tokens.

    python3 scripts/language_samples.py OUTDIR        writes OUTDIR/<language>.jsonl (rows: name,
                                                       completion, kind)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "multipl-e"
FILES = {"cpp": "humaneval-cpp", "rust": "humaneval-rs", "go": "humaneval-go", "java": "humaneval-java",
         "javascript": "humaneval-js", "typescript": "humaneval-ts"}

# Whether the tests close the function (the completion must not): C++ and Java tests start with the
# closing brace; Rust's HumanEval tests, Go's, JavaScript's and TypeScript's do not.
CLOSE = {"cpp": "", "java": "", "rust": "}\n", "go": "}\n", "javascript": "}\n", "typescript": "}\n"}
IND = {"java": "        "}

CORRECT = {   # problem -> language -> body (without the closing brace)
    "HumanEval_53_add": {"cpp": "return x + y;", "rust": "x + y", "go": "return x + y", "java": "return x + y;",
                         "javascript": "return x + y;", "typescript": "return x + y;"},
    "HumanEval_23_strlen": {"cpp": "return string.size();", "rust": "string.len() as isize", "go": "return len(myString)",
                            "java": "return string.length();", "javascript": "return string.length;",
                            "typescript": "return string.length;"},
    "HumanEval_24_largest_divisor": {
        "cpp": "for (long i = n - 1; i > 0; i--) if (n % i == 0) return i;\n    return 1;",
        "rust": "let mut i = n - 1;\n    while i > 1 && n % i != 0 { i -= 1; }\n    i",
        "go": "for i := n - 1; i > 0; i-- {\n        if n%i == 0 {\n            return i\n        }\n    }\n    return 1",
        "java": "for (long i = n - 1; i > 0; i--) if (n % i == 0) return i;\n        return 1;",
        "javascript": "for (let i = n - 1; i > 0; i--) if (n % i === 0) return i;\n    return 1;",
        "typescript": "for (let i = n - 1; i > 0; i--) if (n % i === 0) return i;\n    return 1;"},
    "HumanEval_55_fib": {
        "cpp": "long a = 0, b = 1;\n    for (long i = 0; i < n; i++) { long t = a + b; a = b; b = t; }\n    return a;",
        "rust": "let (mut a, mut b) = (0, 1);\n    for _ in 0..n { let t = a + b; a = b; b = t; }\n    a",
        "go": "a, b := 0, 1\n    for i := 0; i < n; i++ {\n        a, b = b, a+b\n    }\n    return a",
        "java": "long a = 0, b = 1;\n        for (long i = 0; i < n; i++) { long t = a + b; a = b; b = t; }\n        return a;",
        "javascript": "let a = 0, b = 1;\n    for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n    return a;",
        "typescript": "let a = 0, b = 1;\n    for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n    return a;"},
    "HumanEval_48_is_palindrome": {
        "cpp": "return std::string(text.rbegin(), text.rend()) == text;",
        "rust": "text.chars().rev().collect::<String>() == text",
        "go": "for i := 0; i < len(text)/2; i++ {\n        if text[i] != text[len(text)-1-i] {\n            return false\n        }\n    }\n    return true",
        "java": "return new StringBuilder(text).reverse().toString().equals(text);",
        "javascript": "return text.split('').reverse().join('') === text;",
        "typescript": "return text.split('').reverse().join('') === text;"},
    "HumanEval_13_greatest_common_divisor": {
        "cpp": "while (b) { long t = a % b; a = b; b = t; }\n    return a;",
        "rust": "let (mut a, mut b) = (a, b);\n    while b != 0 { let t = a % b; a = b; b = t; }\n    a",
        "go": "for b != 0 {\n        a, b = b, a%b\n    }\n    return a",
        "java": "while (b != 0) { long t = a % b; a = b; b = t; }\n        return a;",
        "javascript": "while (b) [a, b] = [b, a % b];\n    return a;",
        "typescript": "while (b) [a, b] = [b, a % b];\n    return a;"},
    "HumanEval_60_sum_to_n": {"cpp": "return n * (n + 1) / 2;", "rust": "n * (n + 1) / 2", "go": "return n * (n + 1) / 2",
                              "java": "return n * (n + 1) / 2;", "javascript": "return n * (n + 1) / 2;",
                              "typescript": "return n * (n + 1) / 2;"},
}
# a plausible wrong variant of each correct body: the first matching replacement
WRONG = [("x + y", "x - y"), ("string.size()", "string.size() + 1"), ("string.len() as isize", "string.len() as isize + 1"),
         ("len(myString)", "len(myString) - 1"), ("string.length()", "string.length() - 1"), ("string.length", "string.length - 1"),
         ("i > 0; i--", "i > 1; i--"), ("i > 1 &&", "i > 2 &&"), ("n - 1", "n - 2"), ("return a;", "return b;"), ("\n    a\n", "\n    b\n"),
         ("    return a\n", "    return b\n"), ("    a", "    b"), ("== text", "!= text"), ("=== text", "!== text"),
         ("equals(text)", "equals(text + \" \")"), ("return true", "return false"),
         ("n * (n + 1) / 2", "n * (n - 1) / 2")]

SYNTAX_ERROR = {"cpp": "return (;", "rust": "let x = ;", "go": "return +", "java": "return (;",
                "javascript": "return (;", "typescript": "return (;"}
LOOP = {"cpp": "while (true) {}", "rust": "loop {}", "go": "for {\n    }", "java": "while (true) {}",
        "javascript": "while (true) {}", "typescript": "while (true) {}"}
EXIT = {"cpp": "exit(0);", "rust": "std::process::exit(0)", "java": "System.exit(0);\n        return {default};",
        "javascript": "process.exit(0);", "typescript": "(globalThis as any).process.exit(0);\n    return undefined as any;"}

_JAVA_DEFAULTS = [(r"^(long|int|short|byte)$", "0"), (r"^(double|float)$", "0.0"), (r"^boolean$", "false"),
                  (r"^char$", "'a'"), (r"^String$", "\"\""), (r"^Optional<", "Optional.empty()"),
                  (r"^ArrayList<", "new ArrayList<>()"), (r"^HashMap<", "new HashMap<>()")]


def default_body(language: str, prompt: str) -> str:
    last = prompt.rstrip().splitlines()[-1]
    if language == "cpp":
        return "return {};"
    if language == "rust":
        return "Default::default()"
    if language == "go":
        ret = re.search(r"\)\s*([^{]*?)\s*\{\s*$", last)
        ret = ret.group(1) if ret else ""
        if ret and "(" not in ret:
            return f"var zero {ret}\n    return zero"
        return "panic(\"no answer\")"
    if language == "java":
        ret = re.search(r"static\s+(.+?)\s+\w+\s*\(", last).group(1)
        value = next((v for pattern, v in _JAVA_DEFAULTS if re.search(pattern, ret)), "null")
        return f"return {value};"
    if language == "javascript":
        return "return 0;"
    return "return undefined as any;"


def completion(language: str, body: str) -> str:
    ind = IND.get(language, "    ")
    return ind + body + "\n" + CLOSE[language]


def write_set(path: Path, language: str, rows: list, of: str) -> None:
    """A mix's candidates for one language as JSON Lines, and a line saying how many of each kind."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kinds = {}
    for r in rows:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    print(f"{language}: {len(rows)} candidates for {of} {kinds}")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for language, name in FILES.items():
        problems = [json.loads(line) for line in (SHARED / f"{name}.jsonl").read_text().splitlines()]
        rows = []
        for i, p in enumerate(problems):
            default = default_body(language, p["prompt"])
            rows.append({"name": p["name"], "completion": completion(language, default), "kind": "default"})
            if i % 4 == 0:
                rows.append({"name": p["name"], "completion": completion(language, SYNTAX_ERROR[language]),
                             "kind": "syntax_error"})
            if i % 8 == 1:
                rows.append({"name": p["name"], "completion": completion(language, LOOP[language]), "kind": "loop"})
            if i % 8 == 3 and language in EXIT:
                value = default.split("return ", 1)[-1].rstrip(";")
                rows.append({"name": p["name"], "completion": completion(language, EXIT[language].replace("{default}", value)),
                             "kind": "early_exit"})
            body = CORRECT.get(p["name"], {}).get(language)
            if body:
                rows.append({"name": p["name"], "completion": completion(language, body), "kind": "correct"})
                wrong = next((body.replace(a, b, 1) for a, b in WRONG if a in body), None)
                if wrong and wrong != body:
                    rows.append({"name": p["name"], "completion": completion(language, wrong), "kind": "wrong"})
        write_set(out / f"{language}.jsonl", language, rows, f"{len(problems)} problems")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
