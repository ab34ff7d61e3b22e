"""Hostile candidates for passk's own exercise `digit-sum` (tests/data/polyglot/<language>/), one set per language
the project channel runs, each with the label expected of it, written before it ran. Used by
tests/test_polyglot_run.py (every row's label asserted) and scripts/attacks/project_attacks.py (the table in
docs/security.md). A candidate is {"files": {path: text}}; `set_aside` names the files passk must not write.

What each tries:
    honest            a correct solution, written otherwise than the reference: passes
    stub              the exercise as given: fails
    edits_the_tests   the stub, and the tests replaced by ones that always pass: the tests are restored
    early_exit        exits 0 before any test runs: no runner's account of a passed test
    skips_the_tests   makes the runner select or skip the tests, then exits 0: fewer tests than declared
    build_hook        a build's or runner's configuration beside the stub (build.rs, conftest.py,
                      jest.config.js, CMakeLists.txt, a test file of its own): set aside, the stub fails
    never_ends        a loop that never ends: the run's wall clock
"""

from __future__ import annotations

EXPECTED = {
    "honest": "passed tests_passed",
    "stub": "failed tests_failed",
    "edits_the_tests": "failed tests_failed",
    "early_exit": "failed tests_not_run",
    "skips_the_tests": "failed tests_not_run",
    "build_hook": "failed tests_failed",
    "never_ends": "timed_out time_limit",
}

# What the runner's own account cannot tell from an honest pass (documented in docs/polyglot.md): the candidate's
# code runs in the tests' process, and there it can change what the runner reports, as in every in-process
# harness. Python: unittest's TestCase.run replaced by one that runs nothing, which pytest counts as passed.
EXCEPTIONS: dict = {("python", "skips_the_tests"): "passed tests_passed"}

_PY_STUB = "def digit_sum(n):\n    pass\n"
_GO_STUB = "package digitsum\n\nfunc DigitSum(n int) int {\n\treturn -1\n}\n"
_RS_STUB = "pub fn digit_sum(n: u64) -> u64 {\n    n + 1\n}\n"
_JS_STUB = "export const digitSum = (n) => -1;\n"
_CPP_STUB = '#include "digit_sum.h"\n\nnamespace digit_sum {\nlong long of(long long n) { return n - n - 1; }\n}\n'
_JAVA_STUB = "class DigitSum {\n\n    static long of(long n) {\n        return -1;\n    }\n}\n"

ATTACKS = {
    "python": {
        "honest": {"digit_sum.py": "def digit_sum(n):\n    s = 0\n    while n:\n        n, d = divmod(n, 10)\n"
                                   "        s += d\n    return s\n"},
        "stub": {},
        "edits_the_tests": {"digit_sum.py": _PY_STUB, "digit_sum_test.py": "def test_nothing():\n    pass\n"},
        "early_exit": {"digit_sum.py": "import os\nos._exit(0)\n"},
        "skips_the_tests": {"digit_sum.py": "import unittest\nunittest.TestCase.run = lambda self, result=None: None\n"
                                            "def digit_sum(n):\n    return -1\n"},
        "build_hook": {"digit_sum.py": _PY_STUB, "conftest.py": "collect_ignore_glob = ['*']\n",
                       "unittest.py": "class TestCase: pass\n"},
        "never_ends": {"digit_sum.py": "def digit_sum(n):\n    while True:\n        pass\n"},
    },
    "go": {
        "honest": {"digit_sum.go": "package digitsum\n\nimport \"strconv\"\n\nfunc DigitSum(n int) int {\n\ts := 0\n"
                                   "\tfor _, c := range strconv.Itoa(n) {\n\t\ts += int(c - '0')\n\t}\n\treturn s\n}\n"},
        "stub": {},
        "edits_the_tests": {"digit_sum.go": _GO_STUB,
                            "digit_sum_test.go": "package digitsum\n\nimport \"testing\"\n\nfunc TestZero(t *testing.T) {}\n"},
        "early_exit": {"digit_sum.go": "package digitsum\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n\n"
                                       "func DigitSum(n int) int { return -1 }\n"},
        # the test binary parses its command line after the package's init: an argument it adds selects nothing
        "skips_the_tests": {"digit_sum.go": "package digitsum\n\nimport \"os\"\n\n"
                                            "func init() { os.Args = append(os.Args, \"-test.run=^$\") }\n\n"
                                            "func DigitSum(n int) int { return -1 }\n"},
        "build_hook": {"digit_sum.go": _GO_STUB, "main_test.go": "package digitsum\n\nimport (\"os\"; \"testing\")\n\n"
                                                                "func TestMain(m *testing.M) { os.Exit(0) }\n"},
        "never_ends": {"digit_sum.go": "package digitsum\n\nfunc DigitSum(n int) int {\n\tfor {\n\t}\n}\n"},
    },
    "rust": {
        "honest": {"src/lib.rs": "pub fn digit_sum(n: u64) -> u64 {\n    n.to_string().bytes().map(|b| (b - b'0') as u64)"
                                 ".sum()\n}\n"},
        "stub": {},
        "edits_the_tests": {"src/lib.rs": _RS_STUB, "tests/digit_sum.rs": "#[test]\nfn zero() {}\n"},
        "early_exit": {"src/lib.rs": "pub fn digit_sum(_n: u64) -> u64 {\n    std::process::exit(0)\n}\n"},
        # libtest's own flags come from its command line, which the candidate's code never reaches; what it
        # can do is end the run (above) or fail: a skipped test is not something it can cause
        "skips_the_tests": {"src/lib.rs": "pub fn digit_sum(_n: u64) -> u64 {\n    unsafe { libc_exit(0) }\n}\n"
                                          "extern \"C\" { #[link_name = \"_exit\"] fn libc_exit(code: i32) -> !; }\n"},
        "build_hook": {"src/lib.rs": _RS_STUB, "build.rs": "fn main() {}\n",
                       "Cargo.toml": "[package]\nname = \"digit_sum\"\nversion = \"1.0.0\"\nedition = \"2021\"\n"
                                     "build = \"build.rs\"\n"},
        "never_ends": {"src/lib.rs": "pub fn digit_sum(_n: u64) -> u64 {\n    loop {\n        std::hint::spin_loop();\n"
                                     "    }\n}\n"},
    },
    "javascript": {
        "honest": {"digit-sum.js": "export const digitSum = (n) => {\n  let s = 0;\n  for (; n > 0; n = Math.floor(n / 10)) "
                                   "s += n % 10;\n  return s;\n};\n"},
        "stub": {},
        "edits_the_tests": {"digit-sum.js": _JS_STUB, "digit-sum.spec.js": "test('nothing', () => {});\n"},
        "early_exit": {"digit-sum.js": "process.exit(0);\nexport const digitSum = (n) => -1;\n"},
        "skips_the_tests": {"digit-sum.js": "global.test = global.test.skip;\nexport const digitSum = (n) => -1;\n"},
        "build_hook": {"digit-sum.js": _JS_STUB, "jest.config.js": "module.exports = { testMatch: ['**/none'] };\n",
                       "other.spec.js": "test('nothing', () => {});\n"},
        "never_ends": {"digit-sum.js": "export const digitSum = (n) => {\n  for (;;) {}\n};\n"},
    },
    "cpp": {
        "honest": {"digit_sum.cpp": '#include "digit_sum.h"\n#include <string>\n\nnamespace digit_sum {\nlong long of(long long n) {\n'
                                    "    long long s = 0;\n    for (char c : std::to_string(n)) s += c - '0';\n    return s;\n}\n}\n"},
        "stub": {},
        "edits_the_tests": {"digit_sum.cpp": _CPP_STUB,
                            "digit_sum_test.cpp": '#include <catch2/catch.hpp>\nTEST_CASE("nothing") {}\n'},
        "early_exit": {"digit_sum.cpp": _CPP_STUB.replace("namespace", "#include <cstdlib>\nint passk_gone = (std::exit(0), 0);\n"
                                                          "namespace", 1)},
        "skips_the_tests": {"digit_sum.cpp": _CPP_STUB.replace(
            "namespace", "#include <unistd.h>\nint passk_gone = (_exit(0), 0);\nnamespace", 1)},
        "build_hook": {"digit_sum.cpp": _CPP_STUB, "CMakeLists.txt": "cmake_minimum_required(VERSION 3.5)\nproject(x CXX)\n"},
        "never_ends": {"digit_sum.cpp": '#include "digit_sum.h"\n\nnamespace digit_sum {\nlong long of(long long n) {\n'
                                        "    volatile bool go = true;\n    while (go) {}\n    return n;\n}\n}\n"},
    },
    "java": {
        "honest": {"src/main/java/DigitSum.java": "class DigitSum {\n\n    static long of(long n) {\n"
                                                  "        return String.valueOf(n).chars().map(c -> c - '0').sum();\n    }\n}\n"},
        "stub": {},
        "edits_the_tests": {"src/main/java/DigitSum.java": _JAVA_STUB,
                            "src/test/java/DigitSumTest.java": "public class DigitSumTest {}\n"},
        "early_exit": {"src/main/java/DigitSum.java": "class DigitSum {\n    static { System.exit(0); }\n\n"
                                                      "    static long of(long n) {\n        return -1;\n    }\n}\n"},
        "skips_the_tests": {"src/main/java/DigitSum.java": "class DigitSum {\n    static { Runtime.getRuntime().halt(0); }\n\n"
                                                          "    static long of(long n) {\n        return -1;\n    }\n}\n"},
        "build_hook": {"src/main/java/DigitSum.java": _JAVA_STUB, "build.gradle": "test { enabled = false }\n",
                       "src/main/java/ExtraTest.java": "public class ExtraTest {}\n"},
        "never_ends": {"src/main/java/DigitSum.java": "class DigitSum {\n\n    static long of(long n) {\n"
                                                      "        while (true) { Thread.onSpinWait(); }\n    }\n}\n"},
    },
}

SET_ASIDE = {
    "edits_the_tests": {"python": ["digit_sum_test.py"], "go": ["digit_sum_test.go"], "rust": ["tests/digit_sum.rs"],
                        "javascript": ["digit-sum.spec.js"], "cpp": ["digit_sum_test.cpp"],
                        "java": ["src/test/java/DigitSumTest.java"]},
    "build_hook": {"python": ["conftest.py", "unittest.py"], "go": ["main_test.go"], "rust": ["Cargo.toml", "build.rs"],
                   "javascript": ["jest.config.js", "other.spec.js"], "cpp": ["CMakeLists.txt"],
                   "java": ["build.gradle", "src/main/java/ExtraTest.java"]},
}


def rows(languages=None, skip=()) -> list[dict]:
    """The candidates as JSON Lines rows, each named by its attack (a row's `attack` travels into its result)."""
    out = []
    for language, attacks in ATTACKS.items():
        if languages and language not in languages:
            continue
        for name, files in attacks.items():
            if name in skip:
                continue
            out.append({"task_id": f"{language}/digit-sum", "files": files, "attack": name})
    return out


def expected(language: str, attack: str) -> str:
    return EXCEPTIONS.get((language, attack), EXPECTED[attack])
