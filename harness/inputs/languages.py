"""Languages other than Python: how a program is built and run, the way MultiPL-E's evaluator does it by
default (so that numbers are comparable with published ones), and how the end of its tests is seen.

A program is the candidate's code (prompt + completion, or a whole program) + "\\n" + the problem's tests,
as MultiPL-E assembles it. The tests' `main` is compiled into the candidate's program, so this is the
in_process verdict channel: a pass needs exit code 0 *and* a completion marker that only the end of the
tests writes (the job's nonce, on fd 3, a pipe only the supervisor reads). To that end the tests are
wrapped, never the candidate's code:

    cpp         the tests' `main` is renamed `passk_tests_<nonce>` (and given the `return 0;` only main may
                go without) and called from a `main` of passk's that writes the marker when it returns
    rust        the tests' `fn main()` is renamed; passk's `fn main()` calls it, then writes the marker
    java        a class of passk's calls the tests' class's `main` (MultiPL-E's `Problem`), then writes
                the marker; the JVM runs that class
    go          a second file of the tests' package has a TestMain that writes the marker when every
                test passed and every test of the file ran
    javascript  a statement after the tests (they run synchronously at top level)
    typescript

and the tests' own checks are kept out of the candidate's reach where the language allows: C++'s `assert`
is the standard one again before the tests, Rust's assertion macros are called by their path in std, Java's
asserts become explicit throws, node's `assert` comes from passk's preload (box/node_guard.js) under a
nonce-named global, Go's tests are counted under nonce-named wrappers. C++'s macros still apply to the
tests (they share its translation unit): the README's security model lists it.

So an early exit(0) / process.exit(0) / std::process::exit(0) / System.exit(0) / os.Exit(0) is
`failed exited_early`. A candidate that deliberately reads the nonce out of its own program can forge
it, as in every in-process harness; the row says the channel (`verdict_channel: in_process`)."""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field

from harness.core.constants import MARKER_PLACEHOLDER
from harness.core.errors import InputError
from harness.inputs.glue_more import GLUE, explicit_asserts

MARK = MARKER_PLACEHOLDER


@dataclass(frozen=True)
class Language:
    name: str                 # passk's name, and the image's (containers/languages/<name>/)
    names: tuple              # what MultiPL-E's `language` field says for it
    extension: str            # of a sample file in a samples directory
    source: str               # the program's file name in the job's directory
    compile: tuple | None     # argv of the compile step (None: none), MultiPL-E's flags by default
    run: tuple                # argv of the run step
    env: dict = field(default_factory=dict)   # "{dir}": the job's directory
    notes: str = ""
    gvisor_env: dict = field(default_factory=dict)   # added to `env` under gVisor (runtime runsc) only
    # A compile server that does what `compile` does (the same compiler, one long-lived process per
    # container: see box/compile_server.py): its argv ("{memory_mb}": the compile step's memory limit);
    # used unless a run config changes the command. It gets the compile command's options (between the
    # compiler and the file) and `server_args`, which stand for what the command takes from `env`.
    server: tuple | None = None
    server_args: tuple = ()
    server_bytes: bool = False   # it takes the program's bytes (base64), not its text
    # What the server may hold between jobs (its resident memory after a compile); a compile that leaves it
    # holding more ends it, and the next job starts another. The container has room for it beside the
    # program's own limit (Limits.native_container_memory_mb). Set above what each server holds after
    # compiling each of MultiPL-E's HumanEval programs in turn (scripts/speed/server_memory.py measures it: at
    # most 262 MB for tsc's, 144 MB for javac's, 382 MB for scalac's, 156 MB for mcs's).
    server_keep_mb: int = 0
    # A precompiled header, used unless a run config changes the command: (the header a program must
    # include among its leading #include lines, the compile arguments that pre-include its precompiled
    # form). See box/build.py: applied only where it cannot change what the program means.
    pch: tuple | None = None
    # MultiPL-E's verdict rule beyond the exit code, where its evaluator reads the output (eval_*.py):
    # {"stderr_empty": True} (a run that wrote to stderr failed), {"signs": [text]} (a run whose stdout or
    # stderr holds one of them failed), {"stderr_signs": [...]} (the same, stderr only). passk applies it on
    # top of its own (exit 0 and the completion marker); the run's stderr count and its last 2 KB are read.
    rule: dict = field(default_factory=dict)


# What Debian's scalac command runs: Scala 2.11's jars, on the JVM's class path
SCALA_HOME = "/usr/share/scala-2.11"
SCALA_JARS = ":".join(f"{SCALA_HOME}/lib/{jar}.jar" for jar in (
    "hawtjni-runtime", "jansi", "jline", "scala-actors", "scala-compiler", "scala-library",
    "scala-parser-combinators", "scala-reflect", "scala-xml", "scalap"))

# The JVM under Clojure (MultiPL-E's channel and the io channel): the class-data-sharing archive its image
# makes (containers/languages/clojure/Dockerfile), the collector the JVM picks anyway in a container this
# size, and no hsperfdata file in /tmp.
CLOJURE_JAR = "/usr/share/java/clojure-1.11.jar"
CLOJURE_JVM = ("-XX:SharedArchiveFile=/opt/passk/clojure/classes.jsa", "-XX:+UseSerialGC", "-XX:-UsePerfData")

# Under gVisor, the BEAM's idle schedulers sleep instead of spinning: there each spin is a trapped syscall,
# and a test program spent 5 s of CPU in 2 s (over its CPU limit) where it spends ~2 s with this. It changes
# when an idle scheduler sleeps, not what a program computes. Under runc, where it makes no difference
# measured (six test programs in a row, either way: 3.5-3.9 s of CPU), passk runs MultiPL-E's command as is.
ELIXIR_GVISOR_ENV = {"ELIXIR_ERL_OPTIONS": "+sbwt none +sbwtdcpu none +sbwtdio none"}

# What node gets besides MultiPL-E's command: passk's preload, which keeps the tests' `assert` out of the
# candidate's reach (containers/box/node_guard.js).
NODE_ENV = {"NODE_OPTIONS": "--require=/opt/passk/box/node_guard.js"}
# node FILE, started from the image's snapshot of node's bootstrapped state (containers/languages/
# javascript/Dockerfile): Debian's node has none of its own and bootstraps from scratch every time.
NODE_RUN = ("node", "--snapshot-blob", "/opt/passk/node-startup.blob", "main.js")
NODE_NOTES = ("MultiPL-E runs `node FILE`; passk starts node from a snapshot of its bootstrapped state "
              "(--snapshot-blob; the program sees the same but for process.execArgv)")

# MultiPL-E's evaluator (evaluation/src/eval_*.py): g++ FILE -o BIN -std=c++17; rustc FILE -o BIN (the
# default edition); go test FILE; javac -encoding UTF8 -d DIR FILE then java -ea -cp DIR:javatuples Problem;
# node FILE; tsc --target esnext FILE then node FILE.js. What passk's commands add to them, none of which
# changes the program: each Language's notes.
LANGUAGES = {lang.name: lang for lang in (
    Language("cpp", ("cpp", "c++", "cxx"), ".cpp", "main.cpp",
             ("g++", "main.cpp", "-o", "main", "-std=c++17"), ("./main",),
             pch=("bits/stdc++.h", ("-include", "/opt/passk/pch/stdc++.h"))),
    Language("rust", ("rs", "rust"), ".rs", "main.rs",
             ("rustc", "-C", "strip=debuginfo", "-C", "link-arg=-fuse-ld=gold", "main.rs", "-o", "main"), ("./main",),
             notes="MultiPL-E runs `rustc FILE -o BIN`; passk adds -C strip=debuginfo, which leaves the debug "
                   "information of Rust's standard library out of the binary (11.6 MB -> 0.4 MB written per "
                   "candidate), and links with gold instead of ld.bfd: the same code, linked in less time"),
    Language("go", ("go", "go_test.go"), ".go", "main_test.go",
             ("/bin/sh", "-c", "cp -R /opt/passk/go-cache \"$GOCACHE\" && exec env GOMAXPROCS={cpus} go test -c "
              "-ldflags='-s -w' -o main.test main_test.go passk_main_test.go"),
             ("./main.test",),
             env={"GOCACHE": "{dir}/.gocache", "GOPATH": "{dir}/.gopath", "GOPROXY": "off", "GOFLAGS": "-mod=mod",
                  "GO111MODULE": "auto", "CGO_ENABLED": "0"},
             notes="MultiPL-E runs `go test FILE` in one step; passk compiles the test binary (go test -c), "
                   "linked as go test links its own (-ldflags='-s -w': no symbol table, no DWARF), with the go "
                   "command's GOMAXPROCS the container's CPU quota (Go 1.19 does not read it; 1.25 does), then runs "
                   "the binary with the environment unchanged"),
    Language("java", ("java",), ".java", "Main.java",
             ("javac", "-encoding", "UTF8", "-d", ".", "Main.java"),
             ("java", "-ea", "-cp", ".:/usr/share/java/javatuples.jar", "PasskMain"),
             env={"CLASSPATH": "/usr/share/java/javatuples.jar"},
             server=("java", "-Xmx{memory_mb}m", "-XX:+UseSerialGC", "-XX:MinHeapFreeRatio=10",
                     "-XX:MaxHeapFreeRatio=20", "-cp", "/opt/passk/javac",
                     "PasskJavac", "{workdir}"),
             server_args=("-classpath", "/usr/share/java/javatuples.jar"), server_bytes=True,
             server_keep_mb=192),
    Language("javascript", ("js", "javascript", "node"), ".js", "main.js", None, NODE_RUN, env=NODE_ENV,
             notes=NODE_NOTES),
    Language("typescript", ("ts", "typescript"), ".ts", "main.ts",
             ("tsc", "--target", "esnext", "main.ts"), NODE_RUN, env=NODE_ENV, notes=NODE_NOTES,
             server=("node", "--max-old-space-size={memory_mb}", "/opt/passk/tsc_server.js"),
             server_keep_mb=320),
    # The languages MultiPL-E runs that Debian packages (eval_*.py of MultiPL-E's evaluation, and the
    # bigcode harness's copies of them): MultiPL-E's command, with Debian's equivalent where it calls one
    # Debian does not ship (csc: mono's mcs; rdmd: ldc's ldmd2, compile then run).
    Language("lua", ("lua",), ".lua", "main.lua", None, ("lua", "main.lua"),
             notes="MultiPL-E runs `lua FILE` (lua5.3 and Debian's lua-unit in its container, as here)"),
    Language("ruby", ("rb", "ruby"), ".rb", "main.rb", None, ("ruby", "main.rb")),
    Language("php", ("php",), ".php", "main.php", None, ("php", "main.php"),
             rule={"stdout_signs": ["PHP Parse error"]}),
    Language("perl", ("pl", "perl"), ".pl", "main.pl", None, ("perl", "main.pl"), rule={"signs": ["ERROR"]}),
    Language("r", ("r", "R"), ".r", "main.r", None, ("Rscript", "main.r")),
    Language("bash", ("sh", "bash"), ".sh", "main.sh", None, ("bash", "main.sh")),
    Language("racket", ("rkt", "racket"), ".rkt", "main.rkt", None, ("racket", "main.rkt"),
             rule={"stderr_empty": True}),
    Language("scala", ("scala",), ".scala", "main.scala", ("scalac", "-d", ".", "main.scala"),
             ("scala", "-cp", ".", "PasskMain"), rule={"stderr_empty": True},
             notes="MultiPL-E runs `scalac -d DIR FILE` then `scala -cp DIR Problem`; passk runs its class "
                   "PasskMain, which calls Problem's tests and then writes the completion marker. scalac's "
                   "driver runs in passk's compile server (one JVM per container, the command's heap and "
                   "class path)",
             # the scalac command's JVM: its heap (the script's JAVA_OPTS) and its class path, which is also
             # the program's (-Dscala.usejavacp), given here as -classpath
             server=("java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:MinHeapFreeRatio=10", "-XX:MaxHeapFreeRatio=20",
                     "-XX:-UsePerfData", f"-Dscala.home={SCALA_HOME}", "-cp", f"{SCALA_JARS}:/opt/passk/scalac",
                     "PasskScalac", "{workdir}"),
             server_args=("-classpath", SCALA_JARS), server_bytes=True, server_keep_mb=448),
    Language("csharp", ("cs", "csharp", "c#"), ".cs", "main.cs",
             ("mcs", "-d:DEBUG", "-r:System.Numerics.dll", "-main:PasskMain", "-out:main.exe", "main.cs"), ("mono", "main.exe"),
             env={"MONO_TRACE_LISTENER": "Console.Error"},
             server=("mono", "/opt/passk/mcs/PasskMcs.exe", "{workdir}"), server_bytes=True, server_keep_mb=224,
             rule={"stderr_signs": ["System.Diagnostics.DefaultTraceListener.Fail", "Unhandled Exception"]},
             notes="MultiPL-E compiles with Roslyn's `csc /d:DEBUG -r:System.Numerics.dll FILE`, which Debian "
                   "does not ship; passk compiles with mono's mcs and the same options (mcs knows C# up to 7, so a "
                   "program using later syntax does not compile here), then runs `mono BIN`. What mcs's Main "
                   "does runs in passk's compile server (one mono per container)"),
    Language("d", ("d",), ".d", "main.d", ("ldmd2", "-unittest", "-of=main", "main.d"), ("./main",),
             notes="MultiPL-E runs `rdmd -unittest FILE` (dmd, compile and run in one command), which Debian "
                   "does not ship; passk compiles with ldmd2, LDC's dmd-compatible driver, with the same "
                   "flag, then runs the binary"),
    Language("elixir", ("elixir", "ex", "exs"), ".exs", "main.exs", None, ("elixir", "main.exs"),
             gvisor_env=ELIXIR_GVISOR_ENV,
             notes="MultiPL-E runs `elixir FILE`, as here; under gVisor the BEAM's schedulers do not spin waiting "
                   "for work (+sbwt none: CPU the program never asked for, 2.5x its own there)"),
    Language("clojure", ("clj", "clojure"), ".clj", "main.clj", None,
             ("java", *CLOJURE_JVM, "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1",
              "-Dclojure.main.report=stderr", "-cp", CLOJURE_JAR, "clojure.main", "main.clj"),
             rule={"stderr_empty": True},
             notes="MultiPL-E runs `clojure -M -Dclojure.main.report=stderr FILE` (the Clojure CLI); Debian's "
                   "`clojure` is a wrapper that runs clojure.main on the JVM, which passk calls directly with the "
                   "same property. The JVM maps a class-data-sharing archive of clojure.core made when the image "
                   "is built, and compiles with its first tier only (C1, one thread): a test program's start is "
                   "most of its time (0.6 s instead of 1.7 s on runc, 1.8 s instead of 4.6 s on gVisor, for a "
                   "one-line program); a long computation runs slower than under C2"),
    Language("haskell", ("hs", "haskell"), ".hs", "main.hs", None, ("runghc", "main.hs")),
    Language("ocaml", ("ml", "ocaml"), ".ml", "main.ml", None, ("ocaml", "main.ml")),
    Language("ada", ("ada", "adb"), ".adb", "program.ada",
             ("/bin/sh", "-c", "gnatchop -w program.ada . && gnatmake -gnatW8 main.adb -o main -g -j0 -gnata "
              "-gnateE -bargs -Es"), ("./main",),
             notes="MultiPL-E splits the file with `gnatchop -w` and builds with `gnatmake -gnatW8 main.adb -o main "
                   "-g -j0 -gnata -gnateE -bargs -Es`; passk runs the same two commands as one compile step"),
)}

_BY_NAME = {alias: lang for lang in LANGUAGES.values() for alias in (lang.name, *lang.names)}
PYTHON_NAMES = ("py", "python", "python3")


def find(name: str) -> Language | None:
    """The language MultiPL-E's (or passk's) name stands for; None for Python."""
    if name in PYTHON_NAMES:
        return None
    lang = _BY_NAME.get(name)
    if lang is None:
        raise InputError(f"language {name!r} is not one passk runs (Python, "
                         + ", ".join(sorted(LANGUAGES)) + ")")
    return lang


def canonical(name: str) -> str:
    """passk's name of a language: MultiPL-E's (or passk's) name, or one of the io languages' images that are
    not MultiPL-E languages (pypy: Debian's PyPy for io programs)."""
    if name in IMAGE_ONLY:
        return name
    lang = find(name)
    return "python" if lang is None else lang.name


IMAGE_ONLY = ("pypy",)   # images of io languages with no MultiPL-E tests (C runs in the C++ image)


_CPP_MAIN = re.compile(r"\bint\s+main\s*\(\s*(void)?\s*\)")
_RUST_MAIN = re.compile(r"\bfn\s+main\s*\(\s*\)")
_JAVA_CLASS = re.compile(r"^\s*(?:public\s+|final\s+)*class\s+(\w+)", re.MULTILINE)
_GO_PACKAGE = re.compile(r"^\s*package\s+(\w+)", re.MULTILINE)
_RUST_ASSERT = re.compile(r"(?<![\w:])((?:debug_)?assert(?:_eq|_ne)?!)")
_NODE_ASSERT = re.compile(r"\brequire\(\s*(['\"])(?:node:)?assert\1\s*\)")
def glue(language: str, task_id: str, prompt: str, tests: str) -> tuple[str, dict]:
    """(the tests as they follow the candidate's code, other files of the program) for one problem: the
    tests, wrapped so that their end writes the completion marker. Refuses (exit 2) tests it cannot wrap."""
    lang = LANGUAGES[language]
    if language == "cpp":
        found = _CPP_MAIN.search(tests)
        body = tests[found.end():].rstrip() if found else ""
        # the tests' main, renamed, must be the last thing in them (it is in MultiPL-E's): it gets a `return 0;`
        # before its closing brace, since only main may end without one (for another function that is
        # undefined behaviour, which an optimising compiler uses to drop what follows the call)
        if not body.endswith("}") or any(line and line[0] not in " \t}" for line in body.splitlines()[1:]):
            raise InputError(f"{task_id}: the C++ tests do not end with an `int main()` passk can wrap")
        last = body.rindex("}")
        # The entry's name carries the job's nonce: no macro of the candidate's can name it (and so turn passk's
        # call into something else); `assert` is the standard one again for the tests, whatever the
        # candidate's code defined (NDEBUG, or an `assert` of its own).
        wrapped = (tests[:found.start()] + "\n#undef NDEBUG\n#undef assert\n#include <cassert>\n"
                   + f"int passk_tests_{MARK}()" + body[:last] + "    return 0;\n" + body[last:])
        return (wrapped + "\n#include <unistd.h>\nint main() {\n"
                f"    passk_tests_{MARK}();\n"
                f"    return ::write(3, \"{MARK}\", {NONCE_CHARS}) < 0;\n}}\n"), {}
    if language == "rust":
        if len(_RUST_MAIN.findall(tests)) != 1:
            raise InputError(f"{task_id}: the Rust tests do not define exactly one `fn main()` to wrap")
        # the tests' assertions by their path in std (`::std::assert_eq!`), which a `macro_rules!` of the
        # candidate's cannot shadow as it shadows a bare `assert_eq!`
        tests = _RUST_ASSERT.sub(lambda m: "::std::" + m.group(1), tests)
        return (_RUST_MAIN.sub(f"fn passk_tests_{MARK}()", tests) + "\nfn main() {\n"
                f"    passk_tests_{MARK}();\n"
                "    use std::io::Write;\n    let mut marker = std::fs::OpenOptions::new().write(true)"
                f".open(\"/proc/self/fd/3\").unwrap();\n    marker.write_all(b\"{MARK}\").unwrap();\n}}\n"), {}
    if language == "java":
        classes = _JAVA_CLASS.findall(prompt) or _JAVA_CLASS.findall(tests)
        main_class = "Problem" if "Problem" in classes else (classes[0] if classes else None)
        if main_class is None or "static void main" not in tests:
            raise InputError(f"{task_id}: the Java tests define no class with a `main` to wrap")
        # the tests' `assert(...);` as explicit throws of what `java -ea` throws, which no candidate can switch off
        # (its class's `$assertionsDisabled` flipped with sun.misc.Unsafe, a class loader's assertion status)
        tests = explicit_asserts(tests, "assert", "throw new java.lang.AssertionError()")
        return (tests + f"\nclass PasskMain {{\n    public static void main(String[] args) throws Exception {{\n"
                f"        {main_class}.main(args);\n"
                "        try (java.io.FileOutputStream marker = new java.io.FileOutputStream(\"/proc/self/fd/3\")) {\n"
                f"            marker.write(\"{MARK}\".getBytes());\n        }}\n    }}\n}}\n"), {}
    if language == "go":
        found = _GO_PACKAGE.search(prompt) or _GO_PACKAGE.search(tests)
        if not found:
            raise InputError(f"{task_id}: the Go program declares no package")
        return _go_glue(found.group(1), tests)
    if language in ("javascript", "typescript"):
        # the tests' `assert` is node's, taken by passk's preload (box/node_guard.js) before the candidate's
        # code ran, under a name with the job's nonce: a candidate that patches `require('node:assert')`,
        # or `require` itself, changes neither (without the preload, as under a changed run command, the
        # tests get node's module as before)
        name = f"passk$assert${MARK}"
        tests = _NODE_ASSERT.sub(f"(typeof {name} === 'undefined' ? require('node:assert') : {name})", tests)
        head = f"declare var {name}: any;\n" if language == "typescript" else ""
        tail = "declare var require: any;\n" if language == "typescript" else ""
        return head + tests + f"\n{tail};require('fs').writeSync(3, '{MARK}');\n", {}
    if language in GLUE:
        return GLUE[language](task_id, prompt, tests)
    raise InputError(f"no glue for {lang.name}")


NONCE_CHARS = 32   # the nonce that replaces MARK: 16 random bytes as hex

_GO_TEST = re.compile(r"^func (Test\w*)\(\s*(\w+)\s+\*testing\.T\s*\)", re.M)
# What `go test`'s flags may say that makes a test binary run fewer tests than its file has, reset to their
# defaults before the tests run (a candidate's init() can append to os.Args or call flag.Set).
_GO_TEST_FLAGS = {"test.run": "", "test.skip": "", "test.list": "", "test.count": "1", "test.shuffle": "off",
                  "test.failfast": "false", "test.bench": ""}


def _go_glue(package: str, tests: str) -> tuple[str, dict]:
    """Go: the tests' Test functions are renamed with the job's nonce (a name the candidate's code cannot
    know, so cannot call or count), and passk's file in the package runs each through a wrapper that counts
    it. Its TestMain resets the test flags a candidate may have set, runs the tests, and writes the marker
    only when they passed and every one of them ran; when they passed but fewer ran, it writes the marker
    with `:no_tests` (failed no_tests)."""
    names = _GO_TEST.findall(tests)
    if not names:   # nothing to count: the marker after m.Run() alone, as before
        renamed, wrappers = tests, ""
    else:
        renamed = _GO_TEST.sub(lambda m: f"func passkTest_{MARK}_{m.group(1)}({m.group(2)} *testing.T)", tests)
        wrappers = "".join(f"func {name}(t *testing.T) {{\n\tpasskRan_{MARK}++\n\tpasskTest_{MARK}_{name}(t)\n}}\n\n"
                           for name, _ in names)
    flags = "".join(f"\t\t\"{k}\": \"{v}\",\n" for k, v in _GO_TEST_FLAGS.items())
    main = (f"package {package}\n\nimport (\n\t\"flag\"\n\t\"os\"\n\t\"strconv\"\n\t\"testing\"\n)\n\n"
            f"var passkRan_{MARK} int\n\n{wrappers}"
            "func TestMain(m *testing.M) {\n\tif !flag.Parsed() {\n\t\tflag.Parse()\n\t}\n"
            f"\tfor name, value := range map[string]string{{\n{flags}\t}} {{\n"
            "\t\tif f := flag.Lookup(name); f != nil {\n\t\t\tf.Value.Set(value)\n\t\t}\n\t}\n"
            "\tcode := m.Run()\n\tif code == 0 {\n"
            f"\t\tmark := \"{MARK}\"\n"
            f"\t\tif {len(names)} > 0 && passkRan_{MARK} != {len(names)} {{\n"
            f"\t\t\tmark += \":no_tests:\" + strconv.Itoa(passkRan_{MARK}) + \"/{len(names)}\"\n\t\t}}\n"
            "\t\tif marker, err := os.OpenFile(\"/proc/self/fd/3\", os.O_WRONLY, 0); err == nil {\n"
            "\t\t\tmarker.WriteString(mark)\n\t\t\tmarker.Close()\n\t\t}\n\t}\n\tos.Exit(code)\n}\n")
    return renamed, {"passk_main_test.go": main}


def check_commands(commands) -> None:
    """A run config's `sandbox.commands`: {language: {compile: [argv] or null, run: [argv]}}; exit 2 otherwise."""
    if not isinstance(commands, dict):
        raise InputError("sandbox.commands must be a mapping of language to {compile: [...], run: [...]}")
    for name, spec in commands.items():
        if _BY_NAME.get(str(name)) is None:
            raise InputError(f"sandbox.commands: {name!r} is not a language with commands "
                             f"({', '.join(sorted(LANGUAGES))})")
        if not isinstance(spec, dict) or set(spec) - {"compile", "run"}:
            raise InputError(f"sandbox.commands.{name}: expected keys compile and/or run")
        for key, argv in spec.items():
            if argv is None and key == "compile":
                continue
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) and a for a in argv)):
                raise InputError(f"sandbox.commands.{name}.{key}: expected a list of strings (an argv)")


def commands(language: str, overrides: dict | None = None) -> dict:
    """{compile: argv or None, run: argv}: MultiPL-E's, or a run config's instead."""
    lang = LANGUAGES[language]
    out = {"compile": list(lang.compile) if lang.compile else None, "run": list(lang.run)}
    for name, spec in (overrides or {}).items():
        if canonical(str(name)) == language:
            out.update({k: (list(v) if v else None) for k, v in spec.items()})
    return out


# What a compile server compiles once when it starts, so that its first compile's cost (parsing, JIT) is
# not a candidate's.
WARM_UP = {"typescript": "const passk: number = 1;\n",
           "java": "import java.util.*;\nclass Problem {\n    public static void main(String[] args) {\n"
                   "        List<Integer> xs = new ArrayList<>(Arrays.asList(3, 1, 2));\n"
                   "        Collections.sort(xs);\n        assert xs.get(0) == 1;\n    }\n}\n",
           "csharp": "using System;\nusing System.Collections.Generic;\nusing System.Linq;\nusing System.Numerics;\n"
                     "class Problem {\n    public static long Add(long a, long b) { return a + b; }\n}\n"
                     "class PasskMain {\n    static void Main(string[] args) {\n"
                     "        var xs = new List<long>(new long[] {3, 1, 2}).OrderBy(x => x).ToList();\n"
                     "        if (xs[0] != Problem.Add(0, 1) || new BigInteger(2) * 2 != 4) throw new Exception();\n"
                     "    }\n}\n",
           "scala": "import scala.math._\nimport scala.collection.mutable._\nobject Problem {\n"
                    "    def main(args: Array[String]) = {\n        val xs = List(3L, 1L, 2L).sorted\n"
                    "        assert(xs.head == 1L)\n    }\n}\n"}


def uses_server(language: str, overrides: dict | None = None) -> bool:
    """Whether the compile step goes to the language's compile server: it has one, and the compile command
    is passk's default (a changed command runs as given)."""
    return LANGUAGES[language].server is not None and _default_compile(language, overrides)


def uses_pch(language: str, overrides: dict | None = None) -> bool:
    """Whether the compile step may use the language's precompiled header: it has one and the compile
    command is passk's default."""
    return LANGUAGES[language].pch is not None and _default_compile(language, overrides)


def _default_compile(language: str, overrides: dict | None) -> bool:
    """Whether the run compiles with passk's default command (a changed one runs exactly as given)."""
    lang = LANGUAGES[language]
    return lang.compile is not None and commands(language, overrides)["compile"] == list(lang.compile)


def run_env(lang, runtime: str) -> dict:
    """A language's environment for a program's steps under `runtime` (runc, or gVisor: runsc, runsc-<variant>)."""
    return {**lang.env, **(lang.gvisor_env if runtime != "runc" else {})}


def steps(language: str, compile_limits: dict | None, run_limits: dict, overrides: dict | None = None,
          cpus: float = 1.0) -> list[dict]:
    """The job's steps. "{cpus}" in a command: the container's CPU quota, rounded up (at least 1)."""
    argv = commands(language, overrides)
    quota = str(max(1, math.ceil(cpus)))
    argv = {k: (None if v is None else [a.replace("{cpus}", quota) for a in v]) for k, v in argv.items()}
    out = []
    if uses_server(language, overrides):
        lang = LANGUAGES[language]
        memory = int((compile_limits or {}).get("job_memory_kb", 1024 * 1024) // 1024)
        args = list(lang.compile[1:-1]) + list(lang.server_args)   # the command's options, without the file
        warm_up = {"args": args, "file": lang.source}
        if lang.server_bytes:
            warm_up["source_b64"] = base64.b64encode(WARM_UP[language].encode()).decode()
        else:
            warm_up["source"] = WARM_UP[language]
        out.append({"step": "compile", "limits": compile_limits, "argv": argv["compile"], "server": {
            "argv": [a.replace("{memory_mb}", str(memory)) for a in lang.server], "request": {"args": args},
            "bytes": lang.server_bytes, "warm_up": warm_up, "keep_kb": lang.server_keep_mb * 1024}})
    elif argv["compile"] is not None:
        step = {"step": "compile", "argv": argv["compile"], "limits": compile_limits}
        if uses_pch(language, overrides):
            header, args = LANGUAGES[language].pch
            step["pch"] = {"header": header, "args": list(args)}
        out.append(step)
    run = {"step": "run", "argv": argv["run"], "limits": run_limits}
    if LANGUAGES[language].rule:
        run["rule"] = dict(LANGUAGES[language].rule)
    out.append(run)
    return out


# How the docs and tables name each language
SHOWN = {"cpp": "C++", "rust": "Rust", "go": "Go", "java": "Java", "javascript": "JavaScript", "typescript": "TypeScript",
         "lua": "Lua", "ruby": "Ruby", "php": "PHP", "perl": "Perl", "r": "R", "bash": "Bash", "racket": "Racket",
         "scala": "Scala", "csharp": "C#", "d": "D", "elixir": "Elixir", "clojure": "Clojure", "haskell": "Haskell",
         "ocaml": "OCaml", "ada": "Ada"}
