"""What a judge needs of a problem beyond its tests (the problem's own limits, its checker, its groups), and
how a judge compiles and runs a program in each language passk runs on stdin and stdout.

A judged problem is an io problem with a JudgeSpec (Problem.judge): every format that publishes limits or a
checker (Kattis/ICPC packages, Codeforces rows, Code-Contests-Plus) yields one, and nothing downstream
knows which format it came from. The container's side is containers/box/judge.py and checkers.py.

The commands are a judge's, not MultiPL-E's: compiled languages with optimisation, as Codeforces and
Kattis compile them (C and C++ also with ONLINE_JUDGE defined: contest solutions test it to skip their
local file redirection), and with the stack as large as the memory limit (RLIMIT_STACK; Java's -Xss).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field

from harness.core.errors import InputError
from harness.inputs.languages import CLOJURE_JAR, CLOJURE_JVM, ELIXIR_GVISOR_ENV, run_env

CHECKER_PROTOCOLS = ("rule", "default", "kattis", "testlib", "python")
DIALECTS = ("passk", "kattis")
SUPERVISOR_PROTOCOLS = ("rule", "default")   # judged in the supervisor itself: no program of the problem's
MAX_TESTS_KEPT = 2000   # per-test results a row keeps whole (as the container sends them; the rest: verdict, score)


@dataclass(frozen=True)
class JudgeTest:
    """One test: its input, the answer the checker gets, where it belongs."""

    input: str
    answer: str
    name: str = ""
    group: int = 0                 # index into JudgeSpec.groups
    flags: tuple = ()              # the output validator's flags for this test (Kattis)


@dataclass(frozen=True)
class Group:
    """A test group (Kattis's data/secret/<group>, an IOI subtask): how its result is computed."""

    name: str
    on_reject: str = "break"       # break: the group's other tests are skipped after a rejection
    aggregation: str = "pass-fail"  # pass-fail (all or nothing), sum or min of its tests' scores
    max_score: float | None = None  # what the group is worth (None: unbounded, the scores as given)
    accept_score: float = 1.0      # a test's score when accepted (legacy Kattis testdata.yaml)
    reject_score: float = 0.0
    require_pass: tuple = ()       # groups (by name) that must pass for this one to score
    sample: bool = False           # data/sample: judged, never scored


@dataclass(frozen=True)
class Checker:
    """How a test's output is judged (containers/box/checkers.py): a rule, Kattis's default validator with
    flags, or a program of the problem's (its files, the language it is written in)."""

    protocol: str = "default"
    flags: tuple = ()
    rule: str = "strict"
    language: str | None = None    # of a program: "cpp", "c", "python", or "buildrun" (a directory with build
                                   # and run scripts, built in the sandbox and run as ./run)
    files: tuple = ()              # ((name, text), ...): the main source first, then the files beside it
                                   # (headers it includes, testlib.h, other sources; names may hold "/")
    time_s: float = 30.0           # the checker's own limits (Kattis's validation_time, validation_memory)
    memory_mb: int = 1024

    def __post_init__(self):
        if self.protocol not in CHECKER_PROTOCOLS:
            raise InputError(f"checker protocol {self.protocol!r} is not one passk knows ({', '.join(CHECKER_PROTOCOLS)})")

    @property
    def sha256(self) -> str:
        h = hashlib.sha256(f"{self.protocol}\0{self.language}\0".encode())
        for name, text in self.files:
            h.update(name.encode() + b"\0" + text.encode("utf-8", "surrogateescape") + b"\0")
        return h.hexdigest()


@dataclass(frozen=True)
class JudgeSpec:
    """A problem's judge: its limits, tests, groups and checker."""

    tests: tuple                    # JudgeTest, in the order they are judged
    time_limit_s: float             # CPU time per test
    memory_mb: int = 256
    output_mb: int = 64
    checker: Checker = field(default_factory=Checker)
    groups: tuple = (Group("secret"),)
    scoring: bool = False           # a scoring problem: rows carry a score in [0, 1]
    file_io: tuple | None = None    # (input file, output file) instead of stdin and stdout
    time_source: str = "given"      # where the time limit came from (the format's rule)
    python: str = "cpython"         # the Python interpreter the format's limits expect (Kattis: pypy)
    emit: str | None = None         # a checker's build: the compiled file is returned, no test runs
    interactive: bool = False       # the checker is an interactor, run beside the candidate (box/interact.py)
    capture: int = 0                # > 0: no checker; each test's output (this many bytes) comes back in the row
    wall_s: float | None = None     # the wall-clock backstop per test, where a caller sets it (else wall_limit_s's rule)
    dialect: str = "passk"          # whose compile and run commands: passk's (IO_LANGUAGES) or "kattis"
                                    # (problemtools' languages.yaml, KATTIS_COMMANDS), as the package's judge runs them
    includes: tuple = ()            # Kattis include/: ((language directory, ((path, text), ...)), ...)

    def __post_init__(self):
        if not self.tests:
            raise InputError("a judged problem needs at least one test")
        if self.interactive and self.checker.protocol not in ("kattis", "testlib"):
            raise InputError("an interactive problem needs an interactor (a Kattis output validator or a testlib interactor)")
        if not (isinstance(self.time_limit_s, (int, float)) and math.isfinite(self.time_limit_s) and self.time_limit_s > 0):
            raise InputError(f"time limit must be a positive number of seconds, got {self.time_limit_s!r}")
        if self.dialect not in DIALECTS:
            raise InputError(f"commands dialect {self.dialect!r} is not one passk knows ({', '.join(DIALECTS)})")

    @property
    def wall_limit_s(self) -> float:
        """The wall-clock backstop for one test: twice the CPU limit and a second (a program that waits,
        sleeps or blocks still ends; its verdict is time_limit)."""
        if self.wall_s is not None:
            return float(self.wall_s)
        return 2 * float(self.time_limit_s) + 1.0

    def groups_of_tests(self) -> list:
        return [t.group for t in self.tests]


# --------------------------------------------------------------------------------------------------
# How a judge compiles and runs a program, per language.
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IoLanguage:
    name: str
    names: tuple                   # what samples and datasets call it
    extensions: tuple              # of a sample file
    image: str                     # passk's image that has its toolchain (containers/languages/<image>/; python: passk's)
    source: str                    # the program's file name ("{class}": Java's public class)
    compile: tuple | None
    run: tuple
    env: dict = field(default_factory=dict)
    gvisor_env: dict = field(default_factory=dict)   # added to `env` under gVisor (runtime runsc) only


_GO_ENV = {"GOCACHE": "{dir}/.gocache", "GOPATH": "{dir}/.gopath", "GOPROXY": "off", "GOFLAGS": "-mod=mod",
           "GO111MODULE": "auto", "CGO_ENABLED": "0"}

IO_LANGUAGES = {lang.name: lang for lang in (
    IoLanguage("python", ("python", "python3", "py", "py3", "cpython"), (".py", ".py3"), "python", "program.py", None, ()),
    IoLanguage("pypy", ("pypy", "pypy3"), (), "pypy", "main.py", None, ("pypy3", "main.py")),
    IoLanguage("c", ("c", "gnu c", "gnu c11"), (".c",), "cpp", "main.c",
               ("gcc", "-O2", "-std=gnu17", "-DONLINE_JUDGE", "-o", "main", "main.c", "-lm"), ("./main",)),
    IoLanguage("cpp", ("cpp", "c++", "cxx", "cc", "gnu c++", "c++17", "c++20"), (".cpp", ".cc", ".cxx"), "cpp", "main.cpp",
               ("g++", "-O2", "-std=gnu++20", "-DONLINE_JUDGE", "-o", "main", "main.cpp"), ("./main",)),
    IoLanguage("rust", ("rust", "rs"), (".rs",), "rust", "main.rs",
               ("rustc", "-O", "--edition", "2021", "-C", "link-arg=-fuse-ld=gold", "-o", "main", "main.rs"), ("./main",)),
    IoLanguage("go", ("go", "golang"), (".go",), "go", "main.go",
               ("/bin/sh", "-c", "cp -R /opt/passk/go-cache \"$GOCACHE\" && exec env GOMAXPROCS={cpus} go build "
                "-o main main.go"), ("./main",), _GO_ENV),
    IoLanguage("java", ("java",), (".java",), "java", "{class}.java",
               ("javac", "-encoding", "UTF-8", "-d", ".", "{class}.java"),
               ("java", "-XX:+UseSerialGC", "-Xss{stack_mb}m", "-Xmx{memory_mb}m", "-cp", ".", "{class}")),
    IoLanguage("javascript", ("javascript", "js", "node", "nodejs"), (".js",), "javascript", "main.js", None,
               ("node", "main.js")),
    IoLanguage("typescript", ("typescript", "ts"), (".ts",), "typescript", "main.ts",
               ("tsc", "--target", "es2020", "--module", "commonjs", "main.ts"), ("node", "main.js")),
    # MultiPL-E's other languages, each in its own image, run as a judge runs them (optimised where the
    # toolchain has a flag for it)
    IoLanguage("lua", ("lua", "lua 5.3"), (".lua",), "lua", "main.lua", None, ("lua", "main.lua")),
    IoLanguage("ruby", ("ruby", "rb", "ruby 3"), (".rb",), "ruby", "main.rb", None, ("ruby", "main.rb")),
    IoLanguage("php", ("php", "php 8"), (".php",), "php", "main.php", None, ("php", "main.php")),
    IoLanguage("perl", ("perl", "pl", "perl 5"), (".pl",), "perl", "main.pl", None, ("perl", "main.pl")),
    IoLanguage("r", ("r",), (".r", ".R"), "r", "main.r", None, ("Rscript", "main.r")),
    IoLanguage("bash", ("bash", "sh", "shell"), (".sh",), "bash", "main.sh", None, ("bash", "main.sh")),
    IoLanguage("racket", ("racket", "rkt"), (".rkt",), "racket", "main.rkt", None, ("racket", "main.rkt")),
    IoLanguage("scala", ("scala", "scala 2"), (".scala",), "scala", "main.scala", ("scalac", "-d", ".", "main.scala"),
               ("scala", "-J-Xss{stack_mb}m", "-J-Xmx{memory_mb}m", "-cp", ".", "{class}")),
    IoLanguage("csharp", ("csharp", "c#", "cs", "mono c#", "c# mono"), (".cs",), "csharp", "main.cs",
               ("mcs", "-optimize+", "-r:System.Numerics.dll", "main.cs", "-out:main.exe"), ("mono", "main.exe")),
    IoLanguage("d", ("d", "dlang", "d ldc", "d dmd"), (".d",), "d", "main.d", ("ldmd2", "-O", "-release", "-of=main", "main.d"),
               ("./main",)),
    IoLanguage("elixir", ("elixir", "ex", "exs"), (".exs", ".ex"), "elixir", "main.exs", None, ("elixir", "main.exs"),
               gvisor_env=ELIXIR_GVISOR_ENV),
    IoLanguage("clojure", ("clojure", "clj"), (".clj",), "clojure", "main.clj", None,
               ("java", *CLOJURE_JVM, "-cp", CLOJURE_JAR, "clojure.main", "main.clj")),
    IoLanguage("haskell", ("haskell", "hs", "haskell ghc"), (".hs",), "haskell", "main.hs",
               ("ghc", "-O", "-o", "main", "main.hs"), ("./main",)),
    IoLanguage("ocaml", ("ocaml", "ml"), (".ml",), "ocaml", "main.ml", None, ("ocaml", "main.ml")),
    IoLanguage("ada", ("ada", "gnat"), (".adb",), "ada", "main.adb", ("gnatmake", "-O2", "-gnatW8", "main.adb", "-o", "main"),
               ("./main",)),
)}
_IO_BY_NAME = {alias: lang for lang in IO_LANGUAGES.values() for alias in (lang.name, *lang.names)}
# CodeContests's per-solution language codes (its `solutions.language`): 1 Python 2 (refused: passk runs
# Python 3), 2 C++, 3 Python 3, 4 Java.
CODECONTESTS_LANGUAGES = {2: "cpp", 3: "python", 4: "java"}


def io_language(name) -> str:
    """passk's name of an io program's language; InputError naming the ones it runs."""
    lang = _IO_BY_NAME.get(str(name).strip().lower())
    if lang is None:
        raise InputError(f"language {name!r} is not one passk runs on stdin and stdout ("
                         + ", ".join(sorted(IO_LANGUAGES)) + ")")
    return lang.name


def image_of(language: str) -> str:
    """The image (containers/languages/<name>/, or python: passk's own) whose toolchain runs `language`:
    an io language's, or a MultiPL-E language's own."""
    lang = IO_LANGUAGES.get(language)
    return lang.image if lang is not None else language


def language_by_extension(suffix: str) -> str | None:
    for lang in IO_LANGUAGES.values():
        if suffix in lang.extensions:
            return lang.name
    return None


_JAVA_PUBLIC = re.compile(r"^\s*public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_$][\w$]*)", re.M)
_JAVA_CLASS = re.compile(r"^\s*(?:final\s+|abstract\s+)*class\s+([A-Za-z_$][\w$]*)", re.M)


def java_main_class(code: str) -> str:
    """The class a Java program runs: its public class, else the first class with a main method, else Main."""
    found = _JAVA_PUBLIC.search(code)
    if found:
        return found.group(1)
    found = list(_JAVA_CLASS.finditer(code))
    for m, after in zip(found, found[1:] + [None]):
        if "static void main" in code[m.end():after.start() if after else len(code)]:
            return m.group(1)
    return "Main"


_SCALA_OBJECT = re.compile(r"^\s*object\s+([A-Za-z_$][\w$]*)", re.M)


def scala_main_object(code: str) -> str:
    """The object a Scala program runs: the first object with a main method (or one extending App), else Main."""
    found = list(_SCALA_OBJECT.finditer(code))
    for m, after in zip(found, found[1:] + [None]):
        body = code[m.end():after.start() if after else len(code)]
        if "def main" in body or re.match(r"\s*extends\s+App\b", body):
            return m.group(1)
    return "Main"


def _filler(values: dict):
    def fill(argv, files=()):
        out = []
        for a in argv:
            if a == "{files}":
                out.extend(files)
                continue
            for k, v in values.items():
                a = a.replace(k, v)
            out.append(a)
        return out
    return fill


def io_build(language: str, code: str, compile_limits: dict, cpus: float, memory_mb: int,
             file_name: str | None = None, runtime: str = "runc", dialect: str = "passk",
             includes: tuple = ()) -> dict | None:
    """The build a supervisor runs for an io program (containers/box/judge.py): its source file, the
    compile step (with the compile limits) and the run step; None for CPython (the forkserver runs it).
    `file_name`: the file a program came in (a package's submission): a Java program keeps its name, as a
    judge compiles it (a public class that does not match it does not compile, as there). `dialect` "kattis":
    problemtools' commands (KATTIS_COMMANDS) and the package's include files, as its judge compiles it."""
    lang = IO_LANGUAGES[language]
    if dialect == "kattis" and language in KATTIS_COMMANDS and (language != "python" or _includes_for(language, includes)):
        return _kattis_build(language, code, compile_limits, cpus, memory_mb, file_name, runtime, includes)
    if lang.name == "python":
        return None
    cls = ""
    if lang.name == "java":
        named = file_name[:-len(".java")] if file_name and file_name.endswith(".java") else None
        cls = named if named and named.isidentifier() else java_main_class(code)
    elif lang.name == "scala":
        cls = scala_main_object(code)
    fill = _filler({"{class}": cls, "{cpus}": str(max(1, math.ceil(cpus))), "{memory_mb}": str(int(memory_mb)),
                    "{stack_mb}": str(int(memory_mb))})
    steps = []
    if lang.compile:
        steps.append({"step": "compile", "argv": fill(lang.compile), "limits": compile_limits})
    steps.append({"step": "run", "argv": fill(lang.run)})
    return {"language": lang.name, "source": fill([lang.source])[0], "env": run_env(lang, runtime), "steps": steps}


# problemtools' languages.yaml (its judge's commands; Kattis's own differ in paths only), for the languages
# passk runs: (compile argv or None, run argv, the globs that are the language's source files, problemtools'
# name of the language's include/ directory). {files}: every source file; {mainfile}: the include's main file,
# else the one source, else one named main.*, else the first; {mainclass}: its name without the extension;
# {memlim}: the memory limit in MiB. Where problemtools names a compiler passk's image does not have, passk's
# own command stays (Go: go build for gccgo), and Rust links with gold as passk's image needs.
KATTIS_COMMANDS = {
    "c": (("gcc", "-g", "-O2", "-std=gnu17", "-static", "-o", "main", "{files}", "-lm"), ("./main",), ("*.c",), "c"),
    "cpp": (("g++", "-g", "-O2", "-std=gnu++23", "-static", "-o", "main", "{files}", "-lrt", "-Wl,--whole-archive",
             "-lpthread", "-Wl,--no-whole-archive"), ("./main",), ("*.cc", "*.C", "*.cpp", "*.cxx", "*.c++"), "cpp"),
    "java": (("javac", "-encoding", "UTF-8", "-sourcepath", ".", "-d", ".", "{files}"),
             ("java", "-Dfile.encoding=UTF-8", "-XX:+UseSerialGC", "-Xss64m", "-Xms{memlim}m", "-Xmx{memlim}m", "-cp",
              ".", "{mainclass}"), ("*.java",), "java"),
    "pypy": (("pypy3", "-m", "py_compile", "{files}"), ("pypy3", "{mainfile}"), ("*.py", "*.py3"), "python3"),
    "python": (("python3", "-m", "py_compile", "{files}"), ("python3", "{mainfile}"), ("*.py", "*.py3"), "python3"),
    "javascript": (("node", "--check", "{mainfile}"), ("node", "{mainfile}"), ("*.js",), "javascript"),
    "csharp": (("mcs", "-out:main.exe", "-optimize+", "-r:System.Numerics", "{files}"), ("mono", "main.exe"),
               ("*.cs",), "csharp"),
    "haskell": (("ghc", "-O2", "-ferror-spans", "-threaded", "-rtsopts", "-tmpdir", ".", "-o", "main", "{files}"),
                ("./main", "+RTS", "-M{memlim}m", "-K8m", "-RTS"), ("*.hs",), "haskell"),
    "rust": (("rustc", "-C", "opt-level=3", "-C", "target-cpu=native", "-C", "link-arg=-fuse-ld=gold", "--crate-type",
              "bin", "--edition", "2021", "{mainfile}", "-o", "{mainfile}.out"), ("./{mainfile}.out",), ("*.rs",), "rust"),
    "ruby": (("ruby", "-c", "{mainfile}"), ("ruby", "{mainfile}"), ("*.rb",), "ruby"),
    "php": (("php", "-n", "-d", "display_errors=stderr", "-d", "html_errors=0", "-l", "{mainfile}"),
            ("php", "-n", "-d", "display_errors=stderr", "-d", "html_errors=0", "-d", "memory_limit={memlim}m", "-f",
             "{mainfile}"), ("*.php",), "php"),
    "scala": (("scalac", "-encoding", "UTF-8", "-sourcepath", ".", "-d", ".", "{files}"),
              ("scala", "-J-Xmx{memlim}m", "-classpath", ".", "{mainclass}"), ("*.sc", "*.scala"), "scala"),
}
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")


def _includes_for(language: str, includes: tuple) -> tuple:
    """The include files a program in `language` gets: include/default's, then its language's own."""
    spec = KATTIS_COMMANDS.get(language)
    if spec is None:
        return ()
    table = dict(includes)
    return tuple(table.get("default", ())) + tuple(table.get(spec[3], ()))


def _matches(name: str, globs: tuple) -> bool:
    import fnmatch
    return any(fnmatch.fnmatchcase(name.rsplit("/", 1)[-1], g) for g in globs)


def _kattis_build(language, code, compile_limits, cpus, memory_mb, file_name, runtime, includes) -> dict:
    compile_argv, run_argv, globs, ptid = KATTIS_COMMANDS[language]
    lang = IO_LANGUAGES[language]
    ext = {"pypy": ".py", "python": ".py", "java": ".java"}.get(language, lang.extensions[0] if lang.extensions else "")
    name = file_name if file_name and _SAFE_NAME.fullmatch(file_name) and _matches(file_name, globs) else None
    if name is None:
        name = (java_main_class(code) + ".java") if language == "java" else "main" + ext
    files = {name: code}
    included = _includes_for(language, includes)
    for path, text in included:
        files[path] = text
    sources = sorted(f for f in files if _matches(f, globs))
    mains = [f for f in sources if f.rsplit("/", 1)[-1].lower().startswith("main.")]
    own_mains = [p for p, _ in dict(includes).get(ptid, ()) if _matches(p, globs) and p.rsplit("/", 1)[-1].lower().startswith("main.")]
    mainfile = own_mains[0] if own_mains else (sources[0] if len(sources) == 1 else (mains or sources or [name])[0])
    mainclass = mainfile.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    fill = _filler({"{mainfile}": mainfile, "{mainclass}": mainclass, "{memlim}": str(int(memory_mb)),
                    "{cpus}": str(max(1, math.ceil(cpus)))})
    steps = []
    if compile_argv:
        steps.append({"step": "compile", "argv": fill(compile_argv, sources), "limits": compile_limits})
    steps.append({"step": "run", "argv": fill(run_argv, sources)})
    return {"language": language, "source": name, "files": {k: v for k, v in files.items() if k != name},
            "env": run_env(lang, runtime), "steps": steps, "dialect": "kattis"}


# A checker program in C or C++ is compiled once per run in the C++ image, statically linked, so that it runs
# in whichever image a candidate's language has (containers/box/judge.py writes it where only CHECKER_UID reads),
# with problemtools' flags for the language; a build/run directory runs its own build script there.
CHECKER_COMPILE = {"cpp": ("g++", "-g", "-O2", "-std=gnu++23", "-static", "-o", "checker", "{files}"),
                   "c": ("gcc", "-g", "-O2", "-std=gnu17", "-static", "-o", "checker", "{files}", "-lm"),
                   # a package's files arrive without their modes: build and run (the package's, or the one
                   # its build writes) are made executable, as an archive's modes would have them
                   "buildrun": ("/bin/sh", "-c", "chmod u+x build && ./build && { test ! -f run || chmod u+x run; } "
                                "&& test -x run || { echo 'the build script made no executable run' >&2; exit 1; }")}
CHECKER_GLOBS = {"cpp": ("*.cc", "*.C", "*.cpp", "*.cxx", "*.c++"), "c": ("*.c",), "buildrun": ()}


def checker_build(checker: Checker, compile_limits: dict) -> dict:
    """The build that compiles a checker program: its files as the package has them (the main source first),
    compiled together (problemtools compiles every source of the language), or its build script run."""
    (main, text), *rest = checker.files
    names = [n for n, _ in checker.files]
    sources = [n for n in names if _matches(n, CHECKER_GLOBS[checker.language])]
    argv = _filler({})(CHECKER_COMPILE[checker.language], sources)
    emit = "checker" if checker.language != "buildrun" else "*"
    return {"language": checker.language, "source": main, "env": {}, "files": {name: t for name, t in rest},
            "steps": [{"step": "compile", "argv": argv, "limits": compile_limits}, {"step": "run", "argv": ["./checker"]}],
            "emit": emit}


def checker_source(checker: Checker) -> str:
    return checker.files[0][1]


def io_commands(language: str, dialect: str = "passk") -> dict:
    """The commands a row records (limits.commands): as the table says, before a program fills them."""
    if dialect == "kattis" and language in KATTIS_COMMANDS:
        compile_argv, run_argv, _, _ = KATTIS_COMMANDS[language]
        return {"compile": list(compile_argv) if compile_argv else None, "run": list(run_argv), "dialect": "kattis"}
    lang = IO_LANGUAGES[language]
    return {"compile": list(lang.compile) if lang.compile else None, "run": list(lang.run) or ["(passk's forkserver: CPython)"]}
