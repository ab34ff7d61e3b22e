"""The tests of MultiPL-E's other languages (Lua, Ruby, PHP, Perl, R, Bash, Racket, Scala, C#, D, Elixir,
Clojure, Haskell, OCaml, Ada), wrapped so that only their end writes the completion marker (the job's nonce,
on fd 3), as harness/inputs/languages.py does for C++, Rust, Go, Java, JavaScript and TypeScript. The
candidate's code is never changed; the tests' own checks are kept out of its reach where the language
allows it:

    scala   the tests' `main` is renamed with the nonce and called from passk's object PasskMain, which then
            writes the marker; `assert` is Predef's by its full path (a method the candidate defines in its
            object does not take it)
    csharp  the same with class PasskMain (compiled as the entry point); the tests' Debug.Assert(...) become
            explicit throws, which no trace listener of the candidate's can silence
    d       the tests' `unittest` block becomes a nonce-named function that passk's `main` calls, then writes
            the marker; its asserts become explicit throws (a candidate's core.exception.assertHandler
            cannot swallow them, nor can Runtime.moduleUnitTester skip them)
    php     a statement after the tests (\\file_put_contents by its global name, which no namespace of the
            candidate's can shadow); PHP cannot redefine a function
    perl    a block after the tests; the tests' `exit 1` is CORE::exit (CORE::GLOBAL::exit cannot take it)
    r       a statement after the tests; their stopifnot/isTRUE/all.equal are base::'s
    bash    each of the tests' `[[ ... ]]` checks also sets a nonce-named flag when it fails, and the marker is
            written only when none did (a function named `set` or `exit` cannot turn a failure into a pass)
    racket  the tests run with rackunit's check handler set to raise (the first failed check ends the run),
            through bindings imported under a nonce-named prefix that no definition of the candidate's can
            shadow, then the marker is written
    lua     luaunit's runner is given its arguments (the candidate's `arg` cannot select no tests); the
            marker only when no test failed and at least one ran
    ruby    Test::Unit's runner is called with no arguments (the candidate's ARGV cannot select no tests),
            not at exit; the marker only when it passed
    elixir  ExUnit.run() after the tests; the marker only with no failure, nothing excluded or skipped and at
            least one test
    clojure run-test's summary: the marker only with no failure or error and one test (MultiPL-E's own rule
            passes a failed `is`, which clojure.test reports on stdout)
    haskell the tests' `main` is renamed with the nonce; passk's `main` runs it, then writes the marker with
            the Prelude's writeFile (a candidate's `main` or `writeFile` makes the program not compile)
    ocaml   a statement after the tests
    ada     passk's Main writes the marker (C's write, imported under a nonce-named Ada name) after the
            tests' pragma Asserts, which -gnata keeps on in Main, a unit of its own after gnatchop

In the dynamic languages a candidate can still patch what the tests call (luaunit's table, Test::Unit's
classes, Test::Deep's eq_deeply, clojure.test's vars, OCaml's `=`); docs/languages.md lists it per language
and the hostile table (tests/language_attacks.py) counts each as documented."""

from __future__ import annotations

import re

from harness.core.constants import MARKER_PLACEHOLDER
from harness.core.errors import InputError

MARK = MARKER_PLACEHOLDER
NONCE_CHARS = 32


def _refuse(task_id, language, what):
    raise InputError(f"{task_id}: the {language} tests {what}")


def balanced(expr: str) -> bool:
    """Whether `expr` is one parenthesised Java expression: its first parenthesis closes at its last
    character, outside string and char literals, and no `:` (an assert's message) stands outside them."""
    depth, quote, escaped = 0, None, False
    for i, ch in enumerate(expr):
        if quote:
            escaped, quote = (not escaped and ch == "\\"), (None if ch == quote and not escaped else quote)
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(expr) - 1:
                return False
        elif ch == ":" and depth == 0:
            return False
    return depth == 0 and quote is None


def explicit_asserts(tests: str, call: str, throw: str) -> str:
    """Each line `<call>(EXPR);` of the tests as `if (!(EXPR)) <throw>;` (one parenthesised expression;
    another statement is left as it is). Java's, C#'s and D's tests."""
    pattern = re.compile(r"^([ \t]*)" + re.escape(call) + r"[ \t]*(\(.*\))[ \t]*;[ \t]*$", re.M)

    def one(m):
        if not balanced(m.group(2)):
            return m.group(0)
        return f"{m.group(1)}if (!{m.group(2)}) {throw};"
    return pattern.sub(one, tests)


_LUA_RUN = re.compile(r"^[ \t]*os\.exit\(\s*lu\.LuaUnit\.run\(\s*\)\s*\)[ \t]*$", re.M)


def lua(task_id, prompt, tests):
    if len(_LUA_RUN.findall(tests)) != 1:
        _refuse(task_id, "Lua", "do not end with `os.exit(lu.LuaUnit.run())`")
    run = (f"local passk_runner = lu.LuaUnit.new()\n"
           f"local passk_failures = passk_runner:runSuite('--output', 'text')\n"
           f"if passk_failures == 0 and passk_runner.result.runCount > 0 then\n"
           f"  local passk_marker = io.open('/proc/self/fd/3', 'w')\n"
           f"  passk_marker:write('{MARK}')\n  passk_marker:close()\nend\n"
           f"os.exit(passk_failures == 0 and passk_runner.result.runCount > 0 and 0 or 1)")
    return _LUA_RUN.sub(lambda m: run, tests), {}


_RUBY_CLASS = re.compile(r"^class\s+\w+\s*<\s*Test::Unit::TestCase\b", re.M)


def ruby(task_id, prompt, tests):
    if not _RUBY_CLASS.search(tests):
        _refuse(task_id, "Ruby", "define no Test::Unit::TestCase")
    return tests + ("\nTest::Unit::AutoRunner.need_auto_run = false\n"
                    "if Test::Unit::AutoRunner.run(false, nil, [])\n"
                    f"  File.open('/proc/self/fd/3', 'w') {{ |passk_marker| passk_marker.write('{MARK}') }}\n"
                    "else\n  exit(1)\nend\n"), {}


def php(task_id, prompt, tests):
    return tests + f"\n\\file_put_contents('php://fd/3', '{MARK}');\n", {}


_PERL_EXIT = re.compile(r"(?<![\w:&$@%])exit(\s*\(?\s*1\s*\)?\s*;)")


def perl(task_id, prompt, tests):
    return (_PERL_EXIT.sub(r"CORE::exit\1", tests)
            + f"\n{{\n    open(my $passk_marker, '>', '/proc/self/fd/3') or CORE::exit(1);\n"
            f"    print $passk_marker '{MARK}';\n    close($passk_marker);\n}}\n"), {}


_R_CHECKS = re.compile(r"(?<![\w.:])(stopifnot|isTRUE|all\.equal|identical)\(")


def r(task_id, prompt, tests):
    return _R_CHECKS.sub(r"base::\1(", tests) + f"\nbase::cat('{MARK}', file = '/proc/self/fd/3')\n", {}


_BASH_CHECK = re.compile(r"^([ \t]*\[\[.*\]\])[ \t]*$", re.M)
_BASH_RUN = re.compile(r"^[ \t]*run_test[ \t]*$", re.M)


def bash(task_id, prompt, tests):
    if not _BASH_RUN.search(tests):
        _refuse(task_id, "Bash", "do not call `run_test`")
    flag = f"passk_failed_{MARK}"
    checked = _BASH_CHECK.sub(lambda m: f"{m.group(1)} || {{ {flag}=1; exit 1; }}", tests)
    return checked + f"\n[[ -z \"${{{flag}:-}}\" ]] && printf '%s' '{MARK}' >&3\n", {}


_RACKET_RUN = re.compile(r"^\(test-humaneval\)[ \t]*$", re.M)


def racket(task_id, prompt, tests):
    if len(_RACKET_RUN.findall(tests)) != 1:
        _refuse(task_id, "Racket", "do not end with `(test-humaneval)`")
    p = f"passk_{MARK}:"
    run = (f"(require (prefix-in {p} racket/base) (prefix-in {p} rackunit))\n"
           f"({p}parameterize ([{p}current-check-handler {p}raise]) (test-humaneval))\n"
           f"({p}call-with-output-file \"/proc/self/fd/3\" ({p}lambda ({p}o) ({p}write-string \"{MARK}\" {p}o))"
           " #:exists 'append)")
    return _RACKET_RUN.sub(lambda m: run, tests), {}


_SCALA_MAIN = re.compile(r"\bdef\s+main\s*\(\s*args\s*:\s*Array\[String\]\s*\)")
_SCALA_OBJECT = re.compile(r"^\s*object\s+(\w+)", re.M)
_SCALA_ASSERT = re.compile(r"(?<![\w.])assert\s*\(")


def scala(task_id, prompt, tests):
    found = _SCALA_OBJECT.search(prompt) or _SCALA_OBJECT.search(tests)
    if not found or len(_SCALA_MAIN.findall(tests)) != 1:
        _refuse(task_id, "Scala", "define no object with one `def main(args: Array[String])` to wrap")
    tests = _SCALA_MAIN.sub(f"def passk_tests_{MARK}(args: Array[String])", tests)
    tests = _SCALA_ASSERT.sub("_root_.scala.Predef.assert(", tests)
    return tests + ("\nobject PasskMain {\n    def main(args: Array[String]): Unit = {\n"
                    f"        {found.group(1)}.passk_tests_{MARK}(args)\n"
                    "        val marker = new _root_.java.io.FileOutputStream(\"/proc/self/fd/3\")\n"
                    f"        marker.write(\"{MARK}\".getBytes)\n        marker.close()\n    }}\n}}\n"), {}


_CS_MAIN = re.compile(r"\bpublic\s+static\s+void\s+Main\s*\(\s*string\s*\[\]\s*args\s*\)")
_CS_CLASS = re.compile(r"^\s*(?:public\s+)?class\s+(\w+)", re.M)


def csharp(task_id, prompt, tests):
    found = _CS_CLASS.search(prompt) or _CS_CLASS.search(tests)
    if not found or len(_CS_MAIN.findall(tests)) != 1:
        _refuse(task_id, "C#", "define no class with one `public static void Main(string[] args)` to wrap")
    tests = _CS_MAIN.sub(f"public static void passk_tests_{MARK}(string[] args)", tests)
    tests = explicit_asserts(tests, "Debug.Assert", "throw new global::System.Exception(\"assertion failed\")")
    return tests + ("\nclass PasskMain {\n    public static void Main(string[] args) {\n"
                    f"        global::{found.group(1)}.passk_tests_{MARK}(args);\n"
                    "        using (var marker = new global::System.IO.FileStream(\"/proc/self/fd/3\", "
                    "global::System.IO.FileMode.Open, global::System.IO.FileAccess.Write)) {\n"
                    f"            var bytes = global::System.Text.Encoding.ASCII.GetBytes(\"{MARK}\");\n"
                    "            marker.Write(bytes, 0, bytes.Length);\n        }\n    }\n}\n"), {}


_D_UNITTEST = re.compile(r"^unittest\s*\{", re.M)
_D_MAIN = re.compile(r"^void\s+main\s*\(\s*\)\s*\{\s*\}[ \t]*$", re.M)


def d(task_id, prompt, tests):
    if len(_D_UNITTEST.findall(tests)) != 1 or len(_D_MAIN.findall(tests)) != 1:
        _refuse(task_id, "D", "are not one `unittest { ... }` block and an empty `void main(){}`")
    tests = _D_UNITTEST.sub(f"void passk_tests_{MARK}()\n{{\n    import core.exception : AssertError;", tests)
    tests = explicit_asserts(tests, "assert", "throw new AssertError(\"assertion failed\")")
    main = (f"void main()\n{{\n    passk_tests_{MARK}();\n    import core.sys.posix.unistd : passk_write = write;\n"
            f"    passk_write(3, \"{MARK}\".ptr, {NONCE_CHARS});\n}}")
    return _D_MAIN.sub(lambda m: main, tests), {}


_ELIXIR_START = re.compile(r"^ExUnit\.start\(\)", re.M)


def elixir(task_id, prompt, tests):
    if not _ELIXIR_START.search(tests):
        _refuse(task_id, "Elixir", "do not start ExUnit")
    # ExUnit starts without its run at exit: passk's own run below is the tests' one run (with autorun the
    # suite ran a second time as the program exited, finding no test left)
    tests = _ELIXIR_START.sub("ExUnit.start(autorun: false)", tests, count=1)
    return tests + ("\npasskResult = ExUnit.run()\n"
                    "if passkResult.failures == 0 and passkResult.total > 0 and Map.get(passkResult, :excluded, 0) == 0 "
                    "and Map.get(passkResult, :skipped, 0) == 0 do\n"
                    f"  File.write!(\"/proc/self/fd/3\", \"{MARK}\")\nelse\n  System.halt(1)\nend\n"), {}


_CLOJURE_RUN = re.compile(r"^\(run-test\s+test-humaneval\)[ \t]*$", re.M)


def clojure(task_id, prompt, tests):
    if len(_CLOJURE_RUN.findall(tests)) != 1:
        _refuse(task_id, "Clojure", "do not end with `(run-test test-humaneval)`")
    run = ("(clojure.core/let [passk-summary (clojure.test/run-test test-humaneval)]\n"
           "  (if (clojure.core/and (clojure.core/zero? (:fail passk-summary)) (clojure.core/zero? (:error passk-summary))\n"
           "                        (clojure.core/pos? (:test passk-summary)))\n"
           f"    (clojure.core/spit \"/proc/self/fd/3\" \"{MARK}\")\n"
           "    (java.lang.System/exit 1)))")
    return _CLOJURE_RUN.sub(lambda m: run, tests), {}


_HASKELL_MAIN = re.compile(r"^main(\s*(?:::|=))", re.M)


def haskell(task_id, prompt, tests):
    if not _HASKELL_MAIN.search(tests) or _HASKELL_MAIN.search(prompt):
        _refuse(task_id, "Haskell", "define no `main` to wrap")
    tests = _HASKELL_MAIN.sub(lambda m: f"passk_tests_{MARK}{m.group(1)}", tests)
    return tests + (f"\n\nmain :: IO ()\nmain = passk_tests_{MARK} >> writeFile \"/proc/self/fd/3\" \"{MARK}\"\n"), {}


def ocaml(task_id, prompt, tests):
    return tests + ("\nlet () =\n  let passk_marker = Stdlib.open_out_gen [Stdlib.Open_wronly; Stdlib.Open_append] 0 "
                    f"\"/proc/self/fd/3\" in\n  Stdlib.output_string passk_marker \"{MARK}\";\n"
                    "  Stdlib.close_out passk_marker\n"), {}


_ADA_MAIN = re.compile(r"^procedure\s+Main\s+is[ \t]*$", re.M | re.I)
_ADA_END = re.compile(r"^end\s+Main\s*;[ \t]*\Z", re.M | re.I)


def ada(task_id, prompt, tests):
    tests = tests.rstrip()
    if len(_ADA_MAIN.findall(tests)) != 1 or not _ADA_END.search(tests):
        _refuse(task_id, "Ada", "are not a `procedure Main is ... end Main;` to wrap")
    declare = (f"\n   function Passk_Write_{MARK} (Fd : Integer; Data : String; Count : Integer) return Integer;\n"
               f"   pragma Import (C, Passk_Write_{MARK}, \"write\");\n   Passk_Written_{MARK} : Integer;\n")
    tests = _ADA_MAIN.sub(lambda m: m.group(0) + declare, tests)
    end = f"   Passk_Written_{MARK} := Passk_Write_{MARK} (3, \"{MARK}\", {NONCE_CHARS});\nend Main;\n"
    return _ADA_END.sub(lambda m: end, tests), {}


GLUE = {"lua": lua, "ruby": ruby, "php": php, "perl": perl, "r": r, "bash": bash, "racket": racket,
        "scala": scala, "csharp": csharp, "d": d, "elixir": elixir, "clojure": clojure, "haskell": haskell,
        "ocaml": ocaml, "ada": ada}
