"""The hostile programs of tests/language_attacks.py for MultiPL-E's other languages (issue 35): each a whole
program for problems/lang-<language>/'s demo_add, built from the language's function head, its return of
a + b, and a snippet. What the sandbox must contain (network, files and a process left for the next
candidate) is tried through the language's own way of running a shell command, with commands that need no
quoting; the fork bomb, the memory bomb and the output flood are the language's own loops. TAMPERING: a
wrong `add` (a - b) that tries to pass anyway, per language; DOCUMENTED: what passk cannot keep out."""

from __future__ import annotations

X64 = "x" * 64
# the shell commands (no quotes, no backslashes, no $: they sit inside any language's string literal)
_NET_B64 = "aW1wb3J0IHNvY2tldDsgc29ja2V0LmNyZWF0ZV9jb25uZWN0aW9uKCgiMS4xLjEuMSIsIDgwKSwgMyk="
NET = f"echo {_NET_B64} | base64 -d | passk-python 2>/dev/null"          # exits 0 only if it connected
LEAVE = "touch /tmp/passk-left /dev/shm/passk-left; setsid sleep 100 </dev/null >/dev/null 2>&1 &"
FIND = "test -e /tmp/passk-left -o -e /dev/shm/passk-left || grep -qx sleep /proc/[0-9]*/comm"   # 0: found
SPAWN = "sleep 100 &"


def _nonce(source):   # writes the first 32-hex-digit word of the program's own file on the marker's descriptor
    return f"grep -oE [0-9a-f]{{32}} {source} | head -n 1 | head -c 32 > /proc/self/fd/3"


# language: (head, the function's end returning a + b, sh(cmd) -> a condition true when cmd exits 0,
#            fail -> the statement that returns a wrong value, loops {fork, memory, flood}, exit0, source,
#            the function's end returning a - b)
L = {}
L["lua"] = dict(
    head="local function add(a, b)\n", tail="    return a + b\nend\n", wrong="    return a - b\nend\n",
    sh=lambda c: f"os.execute(\"{c}\")", fail="return -1", iff=lambda c, s: f"    if {c} then {s} end\n",
    fork=f"    while true do os.execute(\"{SPAWN}\") end\n",
    memory="    local t = {}\n    local i = 0\n    while true do i = i + 1; t[i] = string.rep('x', 16777208) .. i end\n",
    flood=f"    while true do io.write('{X64}\\n') end\n", exit0="    os.exit(0)\n", source="main.lua")
L["ruby"] = dict(
    head="def add(a, b)\n", tail="  a + b\nend\n", wrong="  a - b\nend\n",
    sh=lambda c: f"system(\"{c}\")", fail="return -1", iff=lambda c, s: f"  if {c} then {s} end\n",
    fork=f"  loop {{ system(\"{SPAWN}\") }}\n",
    memory="  keep = []\n  loop { keep << ('x' * 1048576) }\n", flood=f"  loop {{ $stdout.write(\"{X64}\\n\") }}\n",
    exit0="  exit!(0)\n", source="main.rb")
L["php"] = dict(
    head="<?php\nfunction add($a, $b) {\n", tail="    return $a + $b;\n}\n", wrong="    return $a - $b;\n}\n",
    sh=lambda c: f"(exec(\"{c}\", $passk_out, $passk_rc) !== false && $passk_rc === 0)", fail="return -1;",
    iff=lambda c, s: f"    if ({c}) {{ {s} }}\n",
    fork=f"    while (true) {{ exec(\"{SPAWN}\"); }}\n",
    memory="    $keep = [];\n    while (true) { $keep[] = str_repeat('x', 1048576) . count($keep); }\n",
    flood=f"    while (true) {{ echo \"{X64}\\n\"; }}\n", exit0="    exit(0);\n", source="main.php")
L["perl"] = dict(
    head="sub add {\n    my($a, $b) = @_;\n", tail="    return $a + $b;\n}\n", wrong="    return $a - $b;\n}\n",
    sh=lambda c: f"system(\"{c}\") == 0", fail="return -1;", iff=lambda c, s: f"    if ({c}) {{ {s} }}\n",
    fork="    while (1) { fork(); }\n",
    memory="    my @keep;\n    while (1) { push @keep, 'x' x 1048576; }\n", flood=f"    while (1) {{ print \"{X64}\\n\"; }}\n",
    exit0="    exit 0;\n", source="main.pl")
L["r"] = dict(
    head="add <- function(a, b) {\n", tail="  a + b\n}\n", wrong="  a - b\n}\n",
    sh=lambda c: f"system(\"{c}\") == 0", fail="return(-1)", iff=lambda c, s: f"  if ({c}) {{ {s} }}\n",
    fork=f"  repeat {{ system(\"{SPAWN}\", wait = FALSE) }}\n",
    memory="  keep <- list()\n  repeat { keep[[length(keep) + 1]] <- rep(1.5, 131072) }\n",
    flood=f"  repeat {{ cat(\"{X64}\\n\") }}\n", exit0="  quit(save = 'no', status = 0)\n", source="main.r")
L["bash"] = dict(
    head="#!/bin/bash\nadd() {\n", tail="    echo $(( $1 + $2 ))\n", wrong="    echo $(( $1 - $2 ))\n",
    sh=lambda c: f"{c}", fail="echo -1; return", iff=lambda c, s: f"    if {c}; then {s}; fi\n",
    fork="    while true; do sleep 100 & done\n",
    memory="    dd if=/dev/zero of=/dev/null bs=700M count=1 2> /dev/null\n",
    flood="    yes >&2\n", exit0="    exit 0\n", source="main.sh")
L["racket"] = dict(
    head="#lang racket\n\n(define (add a b)\n", tail="  (+ a b))\n", wrong="  (- a b))\n",
    sh=lambda c: f"(system \"{c}\")", fail="-1", iff=None,
    fork=f"  (let loop () (system \"{SPAWN}\") (loop)))\n",
    memory="  (let loop ([keep '()]) (loop (cons (make-bytes 1048576 1) keep))))\n",
    flood=f"  (let loop () (display \"{X64}\\n\") (loop)))\n", exit0="  (exit 0))\n", source="main.rkt")
L["scala"] = dict(
    head="import scala.sys.process._\nobject Problem {\n    def add(a : Long, b : Long) : Long = {\n",
    tail="        a + b\n", wrong="        a - b\n",
    sh=lambda c: f"(Seq(\"/bin/sh\", \"-c\", \"{c}\").! == 0)", fail="return -1", iff=lambda c, s: f"        if ({c}) {{ {s} }}\n",
    fork=f"        while (true) {{ Seq(\"/bin/sh\", \"-c\", \"{SPAWN}\").run() }}\n        0\n",
    memory="        val keep = new scala.collection.mutable.ArrayBuffer[Array[Byte]]()\n"
           "        while (true) { keep += Array.fill[Byte](1 << 20)(1) }\n        0\n",
    flood=f"        while (true) {{ println(\"{X64}\") }}\n        0\n", exit0="        sys.exit(0)\n", source="main.scala")
L["csharp"] = dict(
    head="using System;\nusing System.Diagnostics;\nusing System.Collections.Generic;\nclass Problem {\n"
         "    static bool Sh(string c) {\n        var p = Process.Start(new ProcessStartInfo(\"/bin/sh\", \"-c \\\"\" + c + \"\\\"\") "
         "{ UseShellExecute = false });\n        p.WaitForExit();\n        return p.ExitCode == 0;\n    }\n"
         "    public static long Add(long a, long b) {\n",
    tail="        return a + b;\n", wrong="        return a - b;\n",
    sh=lambda c: f"Sh(\"{c}\")", fail="return -1;", iff=lambda c, s: f"        if ({c}) {{ {s} }}\n",
    fork=f"        while (true) {{ try {{ Process.Start(\"/bin/sh\", \"-c \\\"{SPAWN}\\\"\"); }} catch (Exception) {{ }} }}\n",
    memory="        var keep = new List<byte[]>();\n        while (true) { var blk = new byte[1 << 20]; for (int i = 0; i < blk.Length; i += 4096) blk[i] = 1; keep.Add(blk); }\n",
    flood=f"        while (true) {{ Console.WriteLine(\"{X64}\"); }}\n", exit0="        Environment.Exit(0);\n", source="main.cs")
L["d"] = dict(
    head="import std.process;\nimport core.stdc.stdlib : exit;\nlong add(long a, long b)\n{\n",
    tail="    return a + b;\n}\n", wrong="    return a - b;\n}\n",
    sh=lambda c: f"(executeShell(\"{c}\").status == 0)", fail="return -1;", iff=lambda c, s: f"    if ({c}) {{ {s} }}\n",
    fork="    import core.sys.posix.unistd : fork;\n    while (true) fork();\n",
    memory="    import core.stdc.stdlib : malloc;\n    import core.stdc.string : memset;\n"
           "    while (true) { auto p = malloc(1 << 20); if (p) memset(p, 1, 1 << 20); }\n",
    flood=f"    import std.stdio : writeln;\n    while (true) writeln(\"{X64}\");\n", exit0="    exit(0);\n", source="main.d")
L["elixir"] = dict(
    head="defmodule HumanEval do\n  def add(a, b) do\n", tail="    a + b\n  end\nend\n", wrong="    a - b\n  end\nend\n",
    sh=lambda c: f"(elem(System.cmd(\"/bin/sh\", [\"-c\", \"{c}\"]), 1) == 0)", fail="-1", iff=None,
    fork=f"    Stream.repeatedly(fn -> spawn(fn -> System.cmd(\"/bin/sh\", [\"-c\", \"{SPAWN}\"]) end) end) |> Stream.run()\n  end\nend\n",
    memory="    byte_size(:binary.copy(:binary.copy(<<1>>, 1_048_576), 700)) + a + b\n  end\nend\n",
    flood=f"    Stream.repeatedly(fn -> IO.puts(\"{X64}\") end) |> Stream.run()\n  end\nend\n",
    exit0="    System.halt(0)\n", source="main.exs")
L["clojure"] = dict(
    head="(defn add\n  [a b]\n", tail="  (+ a b))\n", wrong="  (- a b))\n",
    sh=lambda c: f"(zero? (.waitFor (.start (ProcessBuilder. (into-array String [\"/bin/sh\" \"-c\" \"{c}\"])))))",
    fail="-1", iff=None,
    fork=f"  (loop [] (.exec (Runtime/getRuntime) (into-array String [\"/bin/sh\" \"-c\" \"{SPAWN}\"])) (recur)))\n",
    memory="  (loop [keep ()] (recur (cons (byte-array 67108864 (byte 1)) keep))))\n",
    flood=f"  (loop [] (println \"{X64}\") (recur)))\n", exit0="  (System/exit 0))\n", source="main.clj")
L["haskell"] = dict(
    head="import System.Process\nimport System.Exit\nimport System.IO.Unsafe\nimport Control.Monad\n"
         "sh :: String -> Bool\nsh c = unsafePerformIO $ do { e <- system c; return (e == ExitSuccess) }\n"
         "{-# NOINLINE sh #-}\nadd :: Int -> Int -> Int\nadd a b =\n",
    tail="  a + b\n", wrong="  a - b\n",
    sh=lambda c: f"sh \"{c}\"", fail="-1", iff=lambda c, s: f"  if {c} then {s} else\n",
    fork=f"  unsafePerformIO (forever (void (spawnCommand \"{SPAWN}\"))) +\n",
    memory="  length (reverse [1 :: Int ..]) +\n",
    flood="  unsafePerformIO (forever (B.putStr (B.replicate 1048576 'x'))) +\n",
    exit0="  (unsafePerformIO (exitWith ExitSuccess) :: Int) `seq`\n", source="main.hs")
L["ocaml"] = dict(
    head="let add (a : int) (b : int) : int =\n", tail="  a + b\n", wrong="  a - b\n",
    sh=lambda c: f"Sys.command \"{c}\" = 0", fail="-1", iff=lambda c, s: f"  if {c} then {s} else\n",
    fork=f"  while true do ignore (Sys.command \"{SPAWN}\") done;\n",
    memory="  let keep = ref [] in while true do keep := Bytes.make 1048576 'x' :: !keep done;\n",
    flood=f"  while true do print_endline \"{X64}\" done;\n", exit0="  exit 0;\n", source="main.ml")
_ADA = ("pragma Ada_2022;\nwith Interfaces.C;\n\npackage Placeholder is\n   function Add (A : Integer; B : Integer) return Integer;\n"
        "end Placeholder;\n\npragma Ada_2022;\nwith Interfaces.C; use Interfaces.C;\nwith Ada.Text_IO;\nwith GNAT.OS_Lib;\n\n"
        "package body Placeholder is\n   function Sys (C : char_array) return int;\n   pragma Import (C, Sys, \"system\");\n"
        "   function Sh (C : String) return Boolean is (Sys (To_C (C)) = 0);\n"
        "   function Add (A : Integer; B : Integer) return Integer is\n   begin\n")
L["ada"] = dict(
    head=_ADA, tail="      return A + B;\n", wrong="      return A - B;\n",
    sh=lambda c: f"Sh (\"{c}\")", fail="return -1;", iff=lambda c, s: f"      if {c} then {s} end if;\n",
    fork=f"      loop\n         if Sh (\"{SPAWN}\") then null; end if;\n      end loop;\n",
    memory="      loop\n         declare\n            type Block is array (1 .. 1048576) of Character;\n"
           "            type Ref is access Block;\n            R : constant Ref := new Block'(others => 'x');\n"
           "         begin\n            null;\n         end;\n      end loop;\n",
    flood=f"      loop\n         Ada.Text_IO.Put_Line (\"{X64}\");\n      end loop;\n", exit0="      GNAT.OS_Lib.OS_Exit (0);\n",
    source="program.ada")


def _program(lang, snippet, end="tail"):
    spec = L[lang]
    return spec["head"] + snippet + spec[end]


def _checks(lang, *cmds):
    """A snippet returning a wrong value when any of the commands exits 0."""
    spec = L[lang]
    if spec["iff"] is None:   # an expression language: (if cond -1 (if cond -1 <rest>)) around the tail
        return None
    return "".join(spec["iff"](spec["sh"](c), spec["fail"]) for c in cmds)


def _lisp(lang, cmds, run_first=()):
    """Racket, Clojure and Elixir: the checks as nested ifs around the function's value."""
    spec = L[lang]
    head = spec["head"]
    if lang == "elixir":
        body = "".join(f"    {spec['sh'](c)}\n" for c in run_first)
        for c in cmds:
            body += f"    if {spec['sh'](c)} do\n      -1\n    else\n"
        body += "    a + b\n" + "    end\n" * len(cmds)
        return head + body + "  end\nend\n"
    first = "".join(f"  {spec['sh'](c)}\n" for c in run_first)
    value = "(+ a b)"
    for c in reversed(cmds):
        value = f"(if {spec['sh'](c)} -1 {value})"
    return head + first + f"  {value})\n"


def _runner(lang):
    """A statement that runs a shell command and goes on, whatever it exited with."""
    sh = L[lang]["sh"]
    return {"haskell": lambda c: f"  (if sh \"{c}\" then 0 else 0) `seq`\n",
            "ocaml": lambda c: f"  ignore (Sys.command \"{c}\");\n",
            "bash": lambda c: f"    {c}\n",
            "ada": lambda c: f"      if Sh (\"{c}\") then null; end if;\n",
            "d": lambda c: f"    executeShell(\"{c}\");\n",
            "scala": lambda c: f"        {sh(c)};\n",
            "csharp": lambda c: f"        {sh(c)};\n"}.get(lang, lambda c: f"    {sh(c)};\n")


ATTACKS = {}
_HASKELL_FLOOD_HEAD = L["haskell"]["head"].replace("import System.Exit\n", "import System.Exit\nimport qualified Data.ByteString.Char8 as B\n")
for _lang, _spec in L.items():
    if _spec["iff"] is None:
        network = _lisp(_lang, [NET])
        leave = _lisp(_lang, [], run_first=[LEAVE])
        find = _lisp(_lang, [FIND])
        control = _lisp(_lang, [FIND], run_first=[LEAVE])
        nonce = _lisp(_lang, [], run_first=[_nonce(_spec["source"])]).replace(
            _spec["tail"] if _lang != "elixir" else "    a + b\n", _spec["exit0"] if _lang != "elixir" else "    System.halt(0)\n")
    else:
        run = _runner(_lang)
        network = _program(_lang, _checks(_lang, NET))
        leave = _program(_lang, run(LEAVE))
        find = _program(_lang, _checks(_lang, FIND))
        control = _program(_lang, run(LEAVE) + _checks(_lang, FIND))
        nonce = _spec["head"] + run(_nonce(_spec["source"])) + _spec["exit0"] + _spec["tail"]
    ATTACKS[_lang] = {
        "fork_bomb": _spec["head"] + _spec["fork"] + ("" if _lang in ("racket", "clojure", "elixir") else _spec["tail"]),
        "memory_bomb": _spec["head"] + _spec["memory"] + ("" if _lang in ("racket", "clojure", "elixir") else _spec["tail"]),
        "output_flood": (_HASKELL_FLOOD_HEAD if _lang == "haskell" else _spec["head"]) + _spec["flood"]
                        + ("" if _lang in ("racket", "clojure", "elixir") else _spec["tail"]),
        "network": network,
        "leave_files_and_a_process": leave,
        "find_what_was_left": find,
        "control_finds_what_it_left_itself": control,
        "reads_the_nonce": nonce,
    }


# A wrong `add` (a - b) that tries to make its tests pass anyway: each must fail, but for DOCUMENTED.
_W = {lang: (spec["head"], spec["wrong"]) for lang, spec in L.items()}
TAMPERING = {
    "lua": {
        "selects_no_tests": "arg = {'--pattern', 'nothing_matches_this'}\n" + _W["lua"][0] + _W["lua"][1],
        "replaces_luaunit": "package.loaded.luaunit = {assertEquals = function() end, LuaUnit = {run = function() return 0 end,\n"
                            "  new = function() return {runSuite = function() return 0 end, result = {runCount = 1}} end}}\n"
                            + _W["lua"][0] + _W["lua"][1],
    },
    "ruby": {
        "selects_no_tests": "ARGV.replace(['--name=nothing_matches_this'])\n" + _W["ruby"][0] + _W["ruby"][1],
        "patches_assert_equal": "require 'test/unit'\nmodule Test::Unit::Assertions\n  def assert_equal(*args)\n  end\nend\n"
                                + _W["ruby"][0] + _W["ruby"][1],
        # MultiPL-E's rule (exit code 0) passes both: a top-level exit ends the program before the tests'
        # `require` (none of them runs), an at_exit exit!(0) replaces the failed tests' status
        "exits_at_top_level": _W["ruby"][0] + _W["ruby"][1] + "exit(0)\n",
        "forges_its_status_at_exit": _W["ruby"][0] + _W["ruby"][1] + "at_exit { exit!(0) }\n",
    },
    "php": {
        "defines_the_tests_function": _W["php"][0] + _W["php"][1] + "function test(): void {}\n",
    },
    "perl": {
        "overrides_exit": "BEGIN { *CORE::GLOBAL::exit = sub { }; }\n" + _W["perl"][0] + _W["perl"][1],
        "patches_eq_deeply": "BEGIN { require Test::Deep; no warnings; *Test::Deep::eq_deeply = sub { 1 }; }\n"
                             + _W["perl"][0] + _W["perl"][1],
    },
    "r": {
        "redefines_stopifnot": "stopifnot <- function(...) invisible(TRUE)\n" + _W["r"][0] + _W["r"][1],
    },
    "bash": {
        "shadows_set_and_exit": "set() { :; }\nexit() { :; }\n" + _W["bash"][0] + _W["bash"][1],
    },
    "racket": {
        "silences_checks": "#lang racket\n(require rackunit)\n(current-check-handler void)\n(define (add a b)\n" + _W["racket"][1],
        "hides_stderr": "#lang racket\n(current-error-port (open-output-nowhere))\n(define (add a b)\n" + _W["racket"][1],
    },
    "scala": {
        "shadows_assert": _W["scala"][0].replace("object Problem {\n", "object Problem {\n    def assert(b: Boolean): Unit = ()\n")
                          + _W["scala"][1],
    },
    "csharp": {
        "shadows_debug": _W["csharp"][0].replace("class Problem {\n", "class Problem {\n    class Debug { public static void "
                                                 "Assert(bool b) { } }\n") + _W["csharp"][1],
        "clears_trace_listeners": _W["csharp"][0].replace("class Problem {\n", "class Problem {\n    static Problem() { "
                                                          "System.Diagnostics.Trace.Listeners.Clear(); }\n") + _W["csharp"][1],
    },
    "d": {
        "swallows_asserts": "import core.exception;\nshared static this() { assertHandler = (file, line, msg) nothrow {}; }\n"
                            + _W["d"][0] + _W["d"][1],
        "skips_the_unittests": "import core.runtime;\nshared static this() { Runtime.moduleUnitTester = () => true; }\n"
                               + _W["d"][0] + _W["d"][1],
    },
    "elixir": {
        "excludes_every_test": "ExUnit.configure(exclude: [:test])\n" + _W["elixir"][0] + _W["elixir"][1],
    },
    "clojure": {
        "silences_clojure_test": "(require 'clojure.test)\n(alter-var-root #'clojure.test/report (constantly (fn [m] nil)))\n"
                                 + _W["clojure"][0] + _W["clojure"][1],
    },
    "haskell": {
        "defines_main": _W["haskell"][0] + _W["haskell"][1] + "main :: IO ()\nmain = return ()\n",
    },
    "ocaml": {
        "shadows_equality": "let (=) _ _ = true\n" + _W["ocaml"][0] + _W["ocaml"][1],
    },
    "ada": {
        "ignores_assertions": _W["ada"][0].replace("package body Placeholder is\n",
                                                   "package body Placeholder is\n   pragma Assertion_Policy (Ignore);\n")
                              + _W["ada"][1],
    },
}
DOCUMENTED = {
    "reads_the_nonce": "every in_process language: the nonce is in the program's own text (its source, or the "
                       "binary compiled from it), which the program can read and write to the marker's descriptor "
                       "before it exits 0 (Bash's tests call the candidate in a subshell, so the tests still run)",
    "replaces_luaunit": "Lua: a program can put its own table in package.loaded before the tests require luaunit",
    "patches_assert_equal": "Ruby: a program can reopen Test::Unit's classes before the tests run",
    "patches_eq_deeply": "Perl: a program can replace Test::Deep's subs before the tests import them",
    "silences_clojure_test": "Clojure: a program can rebind clojure.test's vars (alter-var-root)",
    "shadows_equality": "OCaml: the tests' `=` is whatever the program last bound to it (a module Stdlib of its "
                        "own shadows the standard one too)",
}
