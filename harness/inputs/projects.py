"""How an exercise's project is tested, per language, and how its run is judged (the project channel:
containers/box/project.py runs the command; the verdict is decided here, on the host).

Each language's command is aider's runner's (benchmark.py run_unit_tests, npm-test.sh, cpp-test.sh), with
what this machine needs in place of what aider's image downloads, and a report the runner writes beside its
output where it has one:

    python      python3 -m pytest                                    (--junitxml: pytest's own XML)
    rust        cargo test -- --include-ignored                      (Debian's crates as an offline source)
    go          go test ./...                                        (-json: go's own test events)
    javascript  npm run test (jest ./*, babel)                        (--json: jest's own results)
    cpp         cmake -DEXERCISM_RUN_ALL_TESTS=1 .. && make          (the build runs Catch's tests)
    java        javac, then JUnit 5's console launcher                 (in place of Gradle; its XML report)

A run passes as aider's runner passes it, when the command exits 0 within its limit, **and** when the
runner's own account shows every test the exercise's test files declare run and passed (`tests_not_run`
otherwise, with aider's own verdict beside it in the row): an early exit(0) from the candidate's code, a
flag that makes the runner select nothing, a test binary that never ran its tests all exit 0 without it.
The count is the runner's; the declared number is read from the test files (Go's `func TestX(t
*testing.T)`, Rust's `#[test]`, Catch's `TEST_CASE(`, JUnit's `@Test`, jest's `test(`, pytest's `def test_`);
a runner counts at least as many where tests are generated (parameters, macros)."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

from harness.inputs import polyglot
from harness.inputs.config import Limits

TIMEOUT_S = 180.0            # aider's runner: the test command's timeout
JUNIT = "/usr/share/java/junit-platform-console-standalone.jar"
ASSERTJ = "/usr/share/java/assertj-core.jar"
FEEDBACK_CHARS = 1 << 14     # the cleaned output a failed row carries for a second try


@dataclass(frozen=True)
class ProjectLanguage:
    name: str
    aider: str                 # aider's command, as its runner runs it (the plain loop's)
    command: str               # passk's: the same, with the runner's report under $PASSK_REPORTS
    reports: tuple = ()        # the report files the command writes there
    env: tuple = ()            # (name, value): "{x}" is the job's own directory outside the tree
    declared: str = ""         # a regex: one match per test the test files declare
    prebuilt: dict | None = None   # a part of the build the supervisor makes once per container (box/project.py)


_CARGO = "mkdir -p .cargo && cp /opt/passk/cargo/config.toml .cargo/ && "
_GO_ENV = (("GOFLAGS", "-mod=mod"), ("GOPROXY", "off"), ("GOTOOLCHAIN", "local"), ("GOCACHE", "{x}/gocache"),
           ("GOPATH", "{x}/gopath"), ("GOTELEMETRY", "off"))
_JS_LINKS = ("ln -s /opt/passk/npm-install/node_modules . && ln -s /opt/passk/npm-install/package-lock.json . && ")
_CMAKE = 'mkdir -p build && cd build && cmake -DEXERCISM_RUN_ALL_TESTS=1 -G "Unix Makefiles" .. && make'
_JAVAC = (f"mkdir -p build/classes && javac -encoding UTF-8 -nowarn -d build/classes -cp {JUNIT}:{ASSERTJ} "
          "$(find src -name '*.java') && ")
_JUNIT_RUN = (f"java -jar {JUNIT} -cp build/classes:{ASSERTJ} --scan-class-path --fail-if-no-tests "
              "--disable-banner --details=summary")
# passk's: warm JVMs (the project image's class-data-sharing archives, one compiler tier, the serial collector)
_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# (an image whose JDK cannot dump them, bullseye's 11, has none: the runs start without)
_CDS = ('C=; J=; if [ -s /opt/passk/javac.jsa ] && [ -s /opt/passk/junit.jsa ]; then '
        'C=-J-XX:SharedArchiveFile=/opt/passk/javac.jsa; J=-XX:SharedArchiveFile=/opt/passk/junit.jsa; fi; ')
_JAVAC_WARM = _CDS + _JAVAC.replace("javac ", "javac $C " + " ".join("-J" + f for f in _JVM.split()) + " ", 1)
_JUNIT_WARM = _JUNIT_RUN.replace("java ", f"java $J {_JVM} ", 1)

LANGUAGES = {
    "python": ProjectLanguage(
        "python", "python3 -m pytest", 'python3 -m pytest -p no:cacheprovider --junitxml="$PASSK_REPORTS/junit.xml"',
        ("junit.xml",), (("PYTHONDONTWRITEBYTECODE", "1"),), r"(?m)^\s*(?:async\s+)?def\s+test\w*\s*\("),
    "rust": ProjectLanguage(
        "rust", _CARGO + "cargo test -- --include-ignored", _CARGO + "cargo test -- --include-ignored", (),
        (("CARGO_HOME", "{x}/cargo"), ("CARGO_TERM_COLOR", "never")), ""),
    "go": ProjectLanguage(
        "go", "GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local go test ./...", 'cp -r /opt/passk/gocache "$GOCACHE" 2>/dev/null; '
        'go test -json ./... > "$PASSK_REPORTS/go.json"; code=$?; '
        'passk-python -c \'import json,sys\nfor l in open(sys.argv[1],errors="replace"):\n'
        ' try: e=json.loads(l)\n except ValueError: print(l,end=""); continue\n'
        ' o=e.get("Output")\n if isinstance(o,str): print(o,end="")\' "$PASSK_REPORTS/go.json"; exit $code',
        ("go.json",), _GO_ENV, r"(?m)^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)"),
    "javascript": ProjectLanguage(
        "javascript", _JS_LINKS + "npm run test",
        _JS_LINKS + 'npm run test -- --json --outputFile="$PASSK_REPORTS/jest.json"', ("jest.json",),
        (("npm_config_cache", "{x}/npm"), ("npm_config_update_notifier", "false")),
        r"(?m)^\s*test\s*\("),
    "cpp": ProjectLanguage(
        "cpp", _CMAKE, _CMAKE.replace("cmake ", "cmake -DCMAKE_CXX_COMPILER_LAUNCHER=/opt/passk/project/cxx-launch ", 1),
        (), (), r"(?m)^\s*TEST_CASE\s*\(",
        # Catch's main as the exercises' CMakeLists.txt compiles it (Debug, C++17, their warnings, the -D)
        {"inputs": ["test/tests-main.cpp", "test/catch.hpp"], "compiler": "/usr/bin/c++",
         "flags": ["-DEXERCISM_RUN_ALL_TESTS", "-g", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-std=c++17"]}),
    "java": ProjectLanguage(
        "java", _JAVAC + _JUNIT_RUN, _JAVAC_WARM + _JUNIT_WARM + ' --reports-dir="$PASSK_REPORTS"', ("TEST-junit-jupiter.xml",),
        (), r"(?m)^\s*@Test\b"),
}


@dataclass(frozen=True)
class ProjectTask:
    """A problem of the project channel: the exercise, and the limits one candidate's whole run has."""
    exercise: polyglot.Exercise
    limits: Limits
    reference: bool = False     # the exercise's own reference solution runs (its files, Cargo.toml included)

    @property
    def language(self) -> str:
        return self.exercise.language


# One candidate's run: aider's 180 s for the whole test command (build and tests); room for a build (cargo's
# target directory, Go's build cache, the JVM and javac, jest's workers) in memory, processes and files.
PROJECT_MEMORY_MB = 3072
PROJECT_SPACE_MB = 1536
PROJECT_PIDS = 2048       # Java's bank-account starts 1,000 threads at once


PROJECT_CPUS = 2.0       # aider's image runs unconstrained; Go's paasio asks for two cores (runtime.NumCPU)


def project_limits(base: Limits, timeout_s: float = TIMEOUT_S) -> Limits:
    cpus = max(float(base.cpus), min(PROJECT_CPUS, float(os.cpu_count() or 1)))
    # RLIMIT_CPU is per process: above what its threads can use on the container's cores in the wall clock
    return replace(base, timeout_s=float(timeout_s), cpu_time_s=float(timeout_s) * cpus * 2 + 10, cpus=cpus,
                   memory_mb=PROJECT_MEMORY_MB,
                   pids=max(int(base.pids), PROJECT_PIDS), output_bytes=max(int(base.output_bytes), 8 << 20),
                   file_size_bytes=PROJECT_SPACE_MB << 20, open_files=max(int(base.open_files), 4096),
                   tmpfs_mb=PROJECT_SPACE_MB)


def with_limits(problems: dict, base: Limits, timeout_s: float = TIMEOUT_S) -> dict:
    """The problems, every project's limits set on the run's (`base`) with its test command's wall clock."""
    limits = project_limits(base, timeout_s)
    return {t: replace(p, project=replace(p.project, limits=limits)) if p.channel == "project" else p
            for t, p in problems.items()}


def job_part(exercise: polyglot.Exercise, reference: bool = False) -> dict:
    """What the supervisor takes (box/project.py): the exercise's tree as every run starts from it (the tests
    as aider's runner rewrites them), the files a candidate may write over it (the job's `code`: a JSON
    object of path -> text), the tests read-only, the command. `reference`: the tree is the reference
    solution's (its files over the stub, a Rust reference's own manifest) and nothing is written over it."""
    lang = LANGUAGES[exercise.language]
    tree = (polyglot.tree_for(exercise, polyglot.Candidate(exercise.task_id, exercise.example, ())) if reference
            else polyglot.tests_as_run(exercise, exercise.tree))
    command = lang.command
    if exercise.language == "javascript":
        command = _npm_test(tree) or command
    return {"language": exercise.language, "name": exercise.name, "command": command, "env": dict(lang.env),
            "files_b64": {k: base64.b64encode(v).decode() for k, v in sorted(tree.items())},
            "editable": [] if reference else list(exercise.editable), "readonly": sorted(exercise.tests),
            "reports": list(lang.reports),
            # the first input must be there, the others where they are; none a candidate may write
            **({"prebuilt": lang.prebuilt} if lang.prebuilt and lang.prebuilt["inputs"][0] in tree and not any(
                n in exercise.editable for n in lang.prebuilt["inputs"]) else {})}


def tree_of(exercise: polyglot.Exercise, code: str | None, reference: bool = False) -> dict:
    """The tree a candidate ran in (as the supervisor builds it), from its job's `code`."""
    if reference:
        return polyglot.tree_for(exercise, polyglot.Candidate(exercise.task_id, exercise.example, ()))
    try:
        files = json.loads(code) if code else {}
    except ValueError:
        files = {}
    cand = polyglot.Candidate(exercise.task_id, {k: v.encode("utf-8", "surrogateescape") for k, v in
                                                 (files if isinstance(files, dict) else {}).items()
                                                 if polyglot.writable(exercise, k) and isinstance(v, str)}, ())
    return polyglot.tree_for(exercise, cand)


def _npm_test(tree: dict) -> str | None:
    """JavaScript: the exercise's own `scripts.test` (package.json) run as `npm run test` runs it (the
    package's node_modules/.bin first on PATH, the arguments after it), without npm's own start (a third of a
    run); None where the package has no such script (npm then runs it)."""
    try:
        scripts = json.loads(tree.get("package.json", b"")).get("scripts")
    except (ValueError, AttributeError, RecursionError):
        return None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str) or not script.strip() or len(script) > 1000 or "\0" in script:
        return None
    return (_JS_LINKS + 'PATH="$PWD/node_modules/.bin:$PATH" sh -c ' + shlex.quote(script + ' "$@"')
            + ' test --json --outputFile="$PASSK_REPORTS/jest.json"')


def declared(exercise: polyglot.Exercise, tree: dict) -> int:
    """How many tests the exercise's test files declare (as run: Java's @Disabled and jest's xtest gone; C++'s
    outside `#if defined(...)` blocks the build leaves out). Rust: 0 (no floor beyond one test): its tests are
    generated by macros and left out by features the manifest does not enable, which no pattern reads."""
    pattern = LANGUAGES[exercise.language].declared
    if not pattern:
        return 0
    total = 0
    for t in exercise.tests:
        if t in tree:
            text = tree[t].decode("utf-8", "replace")
            if exercise.language == "cpp":
                text = _built_lines(text, CPP_DEFINED)
            found = len(re.findall(pattern, text))
            if exercise.language == "java":   # a bare @Disabled (aider's rewrite takes only @Disabled(...)) stays
                found -= len(re.findall(r"(?m)^\s*@Disabled\b", text))
            total += max(0, found)
    return total


CPP_DEFINED = frozenset({"EXERCISM_RUN_ALL_TESTS"})   # what the build defines (aider's cmake -D...)
_CPP_IF = re.compile(r"^\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b\s*(.*)$")
_CPP_DEFINED = re.compile(r"^(!)?\s*defined\s*\(?\s*(\w+)\s*\)?\s*$")


def _built_lines(text: str, defined: frozenset) -> str:
    """The lines of a C++ file the preprocessor keeps where only `defined` macros are set: `#ifdef X`,
    `#ifndef X`, `#if defined(X)`, `#if !defined(X)` and `#else` are followed; any other condition is
    taken as true (a test inside it is counted)."""
    out, stack = [], []   # stack: (this branch kept, some branch was taken)
    for line in text.splitlines():
        m = _CPP_IF.match(line)
        if not m:
            if all(k for k, _ in stack):
                out.append(line)
            continue
        kind, cond = m.group(1), m.group(2).split("//")[0].strip()
        if kind in ("if", "ifdef", "ifndef"):
            if kind == "ifdef":
                keep = cond in defined
            elif kind == "ifndef":
                keep = cond not in defined
            else:
                d = _CPP_DEFINED.match(cond)
                keep = ((d.group(2) in defined) != bool(d.group(1))) if d else True
            stack.append((keep, keep))
        elif kind == "elif" and stack:
            taken = stack[-1][1]
            d = _CPP_DEFINED.match(cond)
            keep = not taken and (((d.group(2) in defined) != bool(d.group(1))) if d else True)
            stack[-1] = (keep, taken or keep)
        elif kind == "else" and stack:
            stack[-1] = (not stack[-1][1], True)
        elif kind == "endif" and stack:
            stack.pop()
    return "\n".join(out)


@dataclass(frozen=True)
class Account:
    """What the runner says ran: tests passed, failed (errors included), skipped; None where it said nothing."""
    passed: int | None
    failed: int | None = None
    skipped: int | None = None
    source: str = ""


_RUST = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M)
_CATCH_OK = re.compile(r"^All tests passed \((\d+) assertions? in (\d+) test cases?\)", re.M)
_CATCH_BAD = re.compile(r"^test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed", re.M)


def account(language: str, output: str, reports: dict) -> Account:
    """The runner's own count, from its report where it writes one, else from its summary lines."""
    try:
        if language == "python":
            return _junit(reports.get("junit.xml"), "pytest's JUnit XML")
        if language == "java":
            return _junit(reports.get("TEST-junit-jupiter.xml"), "JUnit's XML report")
        if language == "javascript":
            data = json.loads(reports["jest.json"]) if "jest.json" in reports else None
            if not isinstance(data, dict):
                return Account(None, source="jest's JSON (none)")
            return Account(_int(data.get("numPassedTests")), _int(data.get("numFailedTests")),
                           _int(data.get("numPendingTests")) + _int(data.get("numTodoTests")), "jest's JSON")
        if language == "go":
            return _go(reports.get("go.json"))
    except (ValueError, ET.ParseError, RecursionError, TypeError):
        return Account(None, source="the runner's report (unreadable)")
    if language == "rust":
        found = _RUST.findall(output)
        if not found:
            return Account(None, source="cargo's summary lines (none)")
        return Account(sum(int(p) for p, _, _ in found), sum(int(f) for _, f, _ in found),
                       sum(int(i) for _, _, i in found), "cargo's summary lines")
    if language == "cpp":
        ok, bad = _CATCH_OK.findall(output), _CATCH_BAD.findall(output)
        if bad:
            return Account(sum(int(p) for _, p, _ in bad), sum(int(f) for _, _, f in bad), 0, "Catch's summary")
        if ok:
            return Account(sum(int(c) for _, c in ok), 0, 0, "Catch's summary")
        return Account(None, source="Catch's summary (none)")
    return Account(None, source="no account")


def _int(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def _junit(data: bytes | None, source: str) -> Account:
    if not data:
        return Account(None, source=f"{source} (none)")
    root = ET.fromstring(data)
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = failed = skipped = 0
    for s in suites:
        for case in s.iter("testcase"):
            tests += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
    return Account(tests - failed - skipped, failed, skipped, source)


def _go(data: bytes | None) -> Account:
    if not data:
        return Account(None, source="go's test events (none)")
    passed, failed, skipped = set(), set(), set()
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if not isinstance(e, dict) or not isinstance(e.get("Test"), str) or "/" in e["Test"]:
            continue
        key = (str(e.get("Package")), e["Test"])
        {"pass": passed, "fail": failed, "skip": skipped}.get(e.get("Action"), set()).add(key)
    return Account(len(passed - failed), len(failed), len(skipped - passed - failed), "go's test events")


def judge(exercise: polyglot.Exercise, tree: dict, result: dict) -> dict:
    """The row's verdict from the box's result: (status, reason, detail) and the facts for channel_detail.
    The box said passed only where the command exited 0; that stands only with the runner's account."""
    output = _b64(result.get("project_output_b64")).decode("utf-8", "replace")
    reports = {str(k): _b64(v) for k, v in (result.get("project_reports_b64") or {}).items()
               if isinstance(v, str)} if isinstance(result.get("project_reports_b64"), dict) else {}
    want = declared(exercise, tree)
    acc = account(exercise.language, output, reports)
    facts = {"tests_declared": want, "tests_passed": acc.passed, "tests_failed": acc.failed,
             "tests_skipped": acc.skipped, "account": acc.source}
    status, reason, detail = result.get("status"), result.get("reason"), result.get("detail")
    if status == "passed":
        facts["aider_rule"] = "passed"
        if acc.passed is None:
            status, reason = "failed", "tests_not_run"
            detail = f"the command exited 0, but {acc.source} shows no test run"
        elif (acc.failed or 0) > 0:
            status, reason = "failed", "tests_failed"
            detail = f"the command exited 0, but {acc.source} shows {acc.failed} failed"
        elif acc.passed < max(1, want):
            status, reason = "failed", "tests_not_run"
            detail = (f"the command exited 0, but {acc.source} shows {acc.passed} passed of the "
                      f"{want} the test files declare")
        else:
            reason, detail = "tests_passed", f"{acc.passed} tests passed ({acc.source}), exit 0"
    elif status in ("failed", "timed_out"):
        facts["aider_rule"] = "failed"
    return {"status": status, "reason": reason, "detail": detail, "facts": facts, "output": output}


def _b64(v) -> bytes:
    try:
        return base64.b64decode(v or "", validate=True)
    except (ValueError, TypeError):
        return b""


def feedback(output: str, testdir: str) -> str:
    """A failed run's output as aider shows it to the model before a second try (cleaned, bounded)."""
    return polyglot.cleaned_output(output, testdir, FEEDBACK_CHARS)


MAX_LOG_BYTES = 8 << 20


def apply(row, task: ProjectTask, sample, result: dict) -> None:
    """Judge a project channel's result into `row`: the verdict (judge), the runner's account in its
    channel_detail, the command's output as its log (written beside the rows) and, for a failed run, the
    output cleaned as aider shows it to the model before a second try (`feedback`)."""
    from harness.core import text
    if not isinstance(result.get("project_output_b64"), str):
        return   # nothing ran (the job's space, the sandbox): as sent
    tree = tree_of(task.exercise, sample.program, task.reference)
    got = judge(task.exercise, tree, result)
    row.status, row.reason, row.detail = got["status"], text.clean_reason(got["reason"]), text.clean(got["detail"])
    row.channel_detail.update({k: v for k, v in got["facts"].items() if v is not None})
    row.log = got["output"].encode("utf-8", "replace")[-MAX_LOG_BYTES:]
    if row.status != "passed":
        where, x_dir = result.get("project_dir"), result.get("project_x_dir")
        output = got["output"]
        if isinstance(x_dir, str) and len(x_dir) > 4:   # passk's own additions (its report's path) are not shown
            output = "".join(line for line in output.splitlines(keepends=True) if x_dir not in line)
        if isinstance(where, str) and len(where) > 4:
            output = output.replace(where, task.exercise.name)
        row.feedback = text.clean(feedback(output, ""), FEEDBACK_CHARS)
