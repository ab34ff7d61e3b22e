"""Candidates for MultiPL-E's HumanEval in C++, Rust, Go, Java, JavaScript and TypeScript (the problem files
in ../shared/data/multipl-e/, which hold no solutions), for comparing passk with MultiPL-E's evaluator:
per problem a completion that compiles and returns the return type's default value (mostly wrong, now
and then right), and on a share of the problems a completion that does not compile, one that loops
forever and one that exits with code 0 before the tests; on seven problems a correct completion written
here and a wrong variant of it. Completions follow MultiPL-E's convention (program = prompt + completion
+ "\\n" + tests), to be run without stop tokens.

    python3 scripts/inputs/language_samples.py OUTDIR [MORE]  writes OUTDIR/<language>.jsonl (rows: name,
                                                       completion, kind); MORE: a directory with
                                                       MultiPL-E's HumanEval files of its other languages
                                                       (humaneval-lua.jsonl, -rb, -php, -pl, -r, -sh, -rkt,
                                                       -scala, -cs, -d), for those too
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "multipl-e"
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


# MultiPL-E's other languages (issue 35): their HumanEval files are not in ../shared/data/multipl-e; give the
# directory that holds them (humaneval-<code>.jsonl, as MultiPL-E and its redistributions name them).
MORE_FILES = {"lua": "humaneval-lua", "ruby": "humaneval-rb", "php": "humaneval-php", "perl": "humaneval-pl",
              "r": "humaneval-r", "bash": "humaneval-sh", "racket": "humaneval-rkt", "scala": "humaneval-scala",
              "csharp": "humaneval-cs", "d": "humaneval-d"}
# what a completion adds around its body: (before, indent, after)
MORE_SHAPE = {"lua": ("", "    ", "end\n"), "ruby": ("", "  ", "end\n"), "php": ("", "    ", "}\n"),
              "perl": ("", "    ", "}\n"), "r": ("\n", "  ", "}\n"), "bash": ("", "    ", ""),
              "racket": ("", "  ", ")\n"), "scala": ("", "        ", ""), "csharp": ("", "        ", ""),
              "d": ("{\n", "    ", "}\n")}
MORE_DEFAULT = {"lua": "return nil", "ruby": "nil", "php": "return null;", "perl": "return undef;", "r": "NULL",
                "bash": "echo", "racket": "#f", "scala": "???", "csharp": "throw new NotImplementedException();",
                "d": "return typeof(return).init;"}
MORE_SYNTAX = {"lua": "return (", "ruby": "def (", "php": "return (;", "perl": "return (;", "r": "x <- (",
               "bash": "if then", "racket": "(+ 1", "scala": "return (;", "csharp": "return (;", "d": "return (;"}
MORE_LOOP = {"lua": "while true do end", "ruby": "loop { }", "php": "while (true) {}", "perl": "while (1) {}",
             "r": "repeat {}", "bash": "while true; do :; done", "racket": "(let loop () (loop))",
             "scala": "while (true) {}\n        ???", "csharp": "while (true) {}", "d": "while (true) {}"}
MORE_EXIT = {"ruby": "exit!(0)", "php": "exit(0);", "perl": "exit 0;", "r": "quit(save = 'no', status = 0)",
             "racket": "(exit 0)", "scala": "sys.exit(0)",
             "csharp": "System.Environment.Exit(0);\n        throw new System.Exception();",
             "d": "import core.stdc.stdlib : exit;\n    exit(0);\n    assert(0);"}
MORE_CORRECT = {
    "HumanEval_53_add": {"lua": "return x + y", "ruby": "x + y", "php": "return $x + $y;", "perl": "return $x + $y;",
                         "r": "x + y", "bash": "echo $(( $1 + $2 ))", "racket": "(+ x y)", "scala": "x + y",
                         "csharp": "return x + y;", "d": "return x + y;"},
    "HumanEval_23_strlen": {"lua": "return #string", "ruby": "string.length", "php": "return \\strlen($string);",
                            "perl": "return length($string);", "r": "nchar(string)", "bash": "echo ${#1}",
                            "racket": "(string-length string)", "scala": "string.length.toLong",
                            "csharp": "return str.Length;", "d": "return cast(long) string.length;"},
    "HumanEval_60_sum_to_n": {"lua": "return n * (n + 1) // 2", "ruby": "n * (n + 1) / 2", "php": "return intdiv($n * ($n + 1), 2);",
                              "perl": "return $n * ($n + 1) / 2;", "r": "n * (n + 1) / 2", "bash": "echo $(( $1 * ($1 + 1) / 2 ))",
                              "racket": "(quotient (* n (+ n 1)) 2)", "scala": "n * (n + 1) / 2",
                              "csharp": "return n * (n + 1) / 2;", "d": "return n * (n + 1) / 2;"},
}
MORE_WRONG = [("x + y", "x - y"), ("$x + $y", "$x - $y"), ("$1 + $2", "$1 - $2"), ("(+ x y)", "(- x y)"),
              ("#string", "#string + 1"), ("string.length", "string.length + 1"), ("strlen($string)", "strlen($string) - 1"),
              ("length($string)", "length($string) + 1"), ("nchar(string)", "nchar(string) + 1"), ("${#1}", "$(( ${#1} + 1 ))"),
              ("(string-length string)", "(+ 1 (string-length string))"), ("str.Length", "str.Length + 1"),
              ("string.length;", "string.length + 1;"), ("(n + 1)", "(n - 1)"), ("($n + 1)", "($n - 1)"), ("($1 + 1)", "($1 - 1)"),
              ("(+ n 1)", "(- n 1)")]


def more_completion(language: str, body: str) -> str:
    before, ind, after = MORE_SHAPE[language]
    return before + ind + body + "\n" + after


def more_rows(language: str, problems: list) -> list:
    rows = []
    for i, p in enumerate(problems):
        rows.append({"name": p["name"], "completion": more_completion(language, MORE_DEFAULT[language]), "kind": "default"})
        if i % 4 == 0:
            rows.append({"name": p["name"], "completion": more_completion(language, MORE_SYNTAX[language]),
                         "kind": "syntax_error"})
        if i % 8 == 1:
            rows.append({"name": p["name"], "completion": more_completion(language, MORE_LOOP[language]), "kind": "loop"})
        if i % 8 == 3 and language in MORE_EXIT:
            rows.append({"name": p["name"], "completion": more_completion(language, MORE_EXIT[language]),
                         "kind": "early_exit"})
        body = MORE_CORRECT.get(p["name"], {}).get(language)
        if body:
            rows.append({"name": p["name"], "completion": more_completion(language, body), "kind": "correct"})
            wrong = next((body.replace(a, b, 1) for a, b in MORE_WRONG if a in body), None)
            if wrong and wrong != body:
                rows.append({"name": p["name"], "completion": more_completion(language, wrong), "kind": "wrong"})
    return rows


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


def main(out: Path, more: Path | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for language, name in (MORE_FILES.items() if more else ()):
        path = more / f"{name}.jsonl"
        if not path.is_file():
            print(f"{language}: no {path}, skipped")
            continue
        problems = [json.loads(line) for line in path.read_text().splitlines()]
        write_set(out / f"{language}.jsonl", language, more_rows(language, problems), f"{len(problems)} problems")
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
    if len(sys.argv) not in (2, 3) or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) == 3 else None)
