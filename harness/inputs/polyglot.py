"""Exercism exercises as aider's polyglot benchmark runs them (Aider-AI/polyglot-benchmark; aider's runner is
`benchmark/benchmark.py` in Aider-AI/aider), read unchanged, and what a candidate for one is.

An exercise is a directory with `.meta/config.json`, whose `files` say what is what:

    solution     the files a candidate writes (less what aider's runner never lets the model edit:
                 CMakeLists.txt, Cargo.toml, the tests, the example, anything under .meta/ or .docs/)
    test         the tests: restored from the exercise before every run, whatever a candidate sent
    example      the reference solution (under .meta/): each file stands for the solution file of the same
                 name, else of the same extension; a Rust reference's manifest is .meta/Cargo-example.toml
                 where the track has one (the crates its solution uses)
    editor, invalidator   files the run needs as they are (Go's cases_test.go, go.mod; Java's build.gradle)

The language is the one aider's runner picks, by the tests' extension (.py, .rs, .go, .js, .cpp, .java);
an exercise whose tests have none of them is refused by name. Its id is `<track>/<exercise>` where the
exercise sits in a track's `<track>/exercises/practice/<exercise>/` (polyglot-benchmark's layout, and
every Exercism track's), else `<language>/<exercise>`.

`--problems` may name a checkout of polyglot-benchmark (tracks of exercises), one track's
`exercises/practice/` (or the track itself), or one exercise. Every file is read through
harness/inputs/untrusted.py: regular files inside the exercise only, bounded in number and bytes; a path in
config.json that is absolute, climbs out with `..` or names nothing is refused with the file and the key.

What runs is the exercise without .meta/, .docs/, .approaches/ and .articles/ (the reference solution is
not in a candidate's reach; aider's run directory holds it), the candidate's solution files over it, and the
tests restored, with aider's two rewrites: Java's `@Disabled(...)` lines removed from the test files and
JavaScript's `xtest(` made `test(` in every `*.spec.js` (`tests_as_run`)."""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.untrusted import Ceilings, Package

# aider's runner: the test command by the tests' extension (benchmark.py run_unit_tests), as languages here
LANGUAGE_BY_TEST_SUFFIX = {".py": "python", ".rs": "rust", ".go": "go", ".js": "javascript", ".cpp": "cpp",
                           ".java": "java"}
NOT_EDITABLE = frozenset({"CMakeLists.txt", "Cargo.toml"})   # aider's ignore_files, beside tests and examples
HIDDEN_DIRS = (".meta", ".docs", ".approaches", ".articles")  # never in the tree a candidate runs in
EXERCISE_FILES = 400            # files of one exercise's tree, at most (real ones: under 20)
EXERCISE_BYTES = 16 << 20       # one exercise's tree, at most (Catch's header is the largest file: 0.6 MB)
CANDIDATE_FILE_BYTES = 1 << 20  # one file a candidate sends, at most
PATH_CHARS = 300
CONFIG_BYTES = 1 << 16


@dataclass(frozen=True)
class Exercise:
    """One exercise, read: what its candidates may write, what is restored, and the tree they run in."""
    task_id: str                   # <track>/<exercise>
    language: str                  # python, rust, go, javascript, cpp, java
    name: str                      # the exercise's directory name (aider's `testcase`)
    editable: tuple                # solution files a candidate may write (relative, posix)
    tests: tuple                   # test files, restored before every run
    tree: dict = field(repr=False, compare=False)       # relative path -> bytes: everything a run starts from
    example: dict = field(repr=False, compare=False)    # solution path -> the reference's bytes
    solution_extra: tuple = ()     # files.solution aider does not let the model edit (Cargo.toml, CMakeLists.txt)
    origin: str = ""               # the exercise's directory, for messages

    def stub(self) -> dict:
        """The editable files as the exercise gives them (the untouched stub a candidate starts from)."""
        return {p: self.tree[p] for p in self.editable if p in self.tree}


def _checked_path(where: str, key: str, value) -> str:
    """A relative path from config.json, normalized; refused if it is not one a tree can hold."""
    if not isinstance(value, str) or not value or len(value) > PATH_CHARS or "\0" in value or "\\" in value:
        raise InputError(f"{where}: files.{key}: {str(value)[:60]!r} is not a relative path")
    norm = posixpath.normpath(value)
    if norm.startswith("/") or norm == "." or norm.split("/")[0] == "..":
        raise InputError(f"{where}: files.{key}: {value[:60]!r} leads outside the exercise")
    return norm


def _files(where: str, config: dict, key: str) -> list[str]:
    got = (config.get("files") or {}).get(key, [])
    if not isinstance(got, list):
        raise InputError(f"{where}: files.{key} must be a list of paths")
    out = []
    for value in got:
        p = _checked_path(where, key, value)
        if p not in out:
            out.append(p)
    return out


def _hidden(rel: str) -> bool:
    return rel.split("/")[0] in HIDDEN_DIRS


def is_exercise(path: Path) -> bool:
    return (Path(path) / ".meta" / "config.json").is_file()


def _track_of(path: Path) -> str | None:
    """The track an exercise directory sits in (<track>/exercises/practice/<exercise>), or None."""
    parent = Path(path).resolve().parent
    if parent.name == "practice" and parent.parent.name == "exercises":
        return parent.parent.parent.name or None
    return None


def read_exercise(path: Path, ceilings: Ceilings | None = None, track: str | None = None) -> Exercise:
    """One exercise directory, read and checked (InputError naming the file on anything wrong)."""
    path = Path(path)
    pkg = Package(path, ceilings)
    config_path = path / ".meta" / "config.json"
    where = pkg.where(config_path)
    try:
        config = json.loads(pkg.read_bytes(config_path, CONFIG_BYTES))
    except (ValueError, RecursionError) as e:
        raise InputError(f"{where}: not JSON ({str(e)[:120]})") from None
    if not isinstance(config, dict) or not isinstance(config.get("files"), dict):
        raise InputError(f"{where}: no 'files' object (an Exercism exercise's .meta/config.json has one)")
    solution, tests, examples = _files(where, config, "solution"), _files(where, config, "test"), _files(where, config, "example")
    if not tests:
        raise InputError(f"{where}: files.test lists no test file")
    languages = {LANGUAGE_BY_TEST_SUFFIX.get(posixpath.splitext(t)[1]) for t in tests} - {None}
    if not languages:
        raise InputError(f"{where}: files.test {tests[0][:60]!r}: no test command for its extension (aider's "
                         f"runner knows {', '.join(sorted(LANGUAGE_BY_TEST_SUFFIX))})")
    # aider picks the first extension it knows among a set: with one language per exercise that is it
    language = sorted(languages)[0] if len(languages) == 1 else None
    if language is None:
        raise InputError(f"{where}: files.test mixes languages ({', '.join(sorted(languages))})")
    ignored = set(NOT_EDITABLE) | set(tests) | set(examples)
    editable = tuple(p for p in solution if p not in ignored and not _hidden(p)
                     and posixpath.basename(p) not in NOT_EDITABLE)
    extra = tuple(p for p in solution if p not in editable)
    if not editable:
        raise InputError(f"{where}: files.solution leaves no file a candidate may write")

    tree: dict[str, bytes] = {}
    total = 0
    for f in pkg.walk_files(path, max_depth=8):
        rel = Path(f).relative_to(path).as_posix()
        if _hidden(rel):
            continue
        data = pkg.read_bytes(f, EXERCISE_BYTES)
        total += len(data)
        if len(tree) >= EXERCISE_FILES or total > EXERCISE_BYTES:
            raise InputError(f"{pkg.where(path)}: more than {EXERCISE_FILES} files or {EXERCISE_BYTES >> 20} MB "
                             "outside .meta/ and .docs/")
        tree[rel] = data
    for key, names in (("test", tests), ("solution", editable)):
        for name in names:
            if name not in tree:
                raise InputError(f"{where}: files.{key}: {name[:60]!r} is not a file of the exercise")
    for name in _files(where, config, "editor") + _files(where, config, "invalidator"):
        if name not in tree and not _hidden(name):
            raise InputError(f"{where}: {name[:60]!r} (files.editor/invalidator) is not a file of the exercise")
    example = _examples(pkg, path, where, examples, editable)
    cargo_example = path / ".meta" / "Cargo-example.toml"
    if language == "rust" and pkg.is_file(cargo_example):   # Exercism's Rust track: the reference's own manifest
        example["Cargo.toml"] = pkg.read_bytes(cargo_example, CONFIG_BYTES)
    slug = path.resolve().name
    track = track or _track_of(path) or language
    return Exercise(f"{track}/{slug}", language, slug, editable, tuple(tests), tree, example, extra, str(path))


def _examples(pkg: Package, path: Path, where: str, examples: list, editable: tuple) -> dict:
    """The reference solution as the files it stands for: an example file is the solution file of its own
    name; else the first of its extension not taken yet; else a file of its own name beside the solution
    files of its extension (Java's reference has helper classes: .meta/src/reference/java/Frame.java is
    src/main/java/Frame.java)."""
    out: dict[str, bytes] = {}
    placed: dict[str, str] = {}
    for ex in examples:   # by name first, so an extension never takes a file another example names
        base = posixpath.basename(ex)
        hit = next((s for s in editable if posixpath.basename(s) == base and s not in placed.values()), None)
        if hit is not None:
            placed[ex] = hit
    for ex in examples:
        if ex in placed:
            continue
        base, ext = posixpath.basename(ex), posixpath.splitext(ex)[1]
        same = [s for s in editable if posixpath.splitext(s)[1] == ext]
        hit = next((s for s in same if s not in placed.values()), None)
        if hit is None and same:
            hit = posixpath.join(posixpath.dirname(same[0]), base)
        if hit is None or hit in placed.values():
            raise InputError(f"{where}: files.example: {ex[:60]!r} stands for no solution file")
        placed[ex] = hit
    for ex, target in placed.items():
        out[target] = pkg.read_bytes(path / ex, EXERCISE_BYTES)
    return out


def exercises(path: Path, ceilings: Ceilings | None = None) -> list[Exercise]:
    """The exercises `path` names: one exercise, a track's exercises/practice/ (or the track), or a
    directory of tracks (polyglot-benchmark's checkout). Sorted by id; none is an InputError."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path}: not a directory of exercises")
    if is_exercise(path):
        return [read_exercise(path, ceilings)]
    practice_dirs = []
    if path.name == "practice" and path.parent.name == "exercises":
        practice_dirs.append(path)
    elif (path / "exercises" / "practice").is_dir():
        practice_dirs.append(path / "exercises" / "practice")
    else:
        practice_dirs += sorted(p / "exercises" / "practice" for p in path.iterdir()
                                if (p / "exercises" / "practice").is_dir() and not p.is_symlink())
        if not practice_dirs and any(is_exercise(p) for p in path.iterdir() if p.is_dir()):
            practice_dirs.append(path)
    out = []
    for d in practice_dirs:
        track = d.parent.parent.name if d.name == "practice" else None
        for ex in sorted(d.iterdir()):
            if ex.is_dir() and not ex.is_symlink() and is_exercise(ex):
                out.append(read_exercise(ex, ceilings, track))
    if not out:
        raise InputError(f"{path}: no exercise (a directory with .meta/config.json), no track's "
                         "exercises/practice/ and no tracks of them")
    seen: dict[str, str] = {}
    for e in out:
        if e.task_id in seen:
            raise InputError(f"{e.origin}: the same id {e.task_id!r} as {seen[e.task_id]}")
        seen[e.task_id] = e.origin
    return sorted(out, key=lambda e: e.task_id)


# -- a candidate ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    """What a candidate sends for an exercise: its solution files, what was set aside, which try it is."""
    task_id: str
    files: dict          # editable path -> bytes
    set_aside: tuple     # paths it sent that it may not write (restored, or not the exercise's), for the row
    attempt: int = 1     # 2: a second try, made after reading the first's failing tests (repair)
    where: str = ""      # file:line or the run's directory, for messages
    extra: dict = field(default_factory=dict, compare=False)   # the row's other fields, kept


# What a candidate's new file may never be (a test, a build's or a runner's configuration, a hook that runs at
# build or collection time), whatever its directory
_TESTLIKE = re.compile(r"(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go|cpp|cc|rs)|[^/]*\.(spec|test)\.[cm]?[jt]sx?"
                       r"|[^/]*Tests?\.java)$")
CONFIG_NAMES = frozenset({
    "conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "setup.py", "pyproject.toml", "sitecustomize.py",
    "usercustomize.py", "package.json", "package-lock.json", "babel.config.js", "babel.config.json",
    "jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.json",
    "CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "Cargo.toml", "Cargo.lock", "build.rs", "go.mod",
    "go.sum", "go.work", "build.gradle", "settings.gradle", "gradlew"})
# Python: a new module must not take the place of one the tests or pytest import
_PY_TAKEN = frozenset(getattr(__import__("sys"), "stdlib_module_names", ())) | {"pytest", "_pytest", "pluggy", "py"}


def writable(exercise: Exercise, path: str) -> bool:
    """Whether a candidate may write `path`: one of the exercise's editable solution files, or a new source
    file beside one of them with its extension (aider's runner keeps a file the model adds: Java's
    references have helper classes) that is not a test, a configuration or a hook, and takes no exercise
    file's place."""
    if path in exercise.editable:
        return True
    if path in exercise.tree or _hidden(path) or path.startswith("/") or ".." in path.split("/"):
        return False
    base = posixpath.basename(path)
    stem, ext = posixpath.splitext(base)
    if not base or base.startswith(".") or base in CONFIG_NAMES or _TESTLIKE.search(path):
        return False
    if ext == ".py" and stem in _PY_TAKEN:
        return False
    folder = posixpath.dirname(path)
    return any(posixpath.dirname(e) == folder and posixpath.splitext(e)[1] == ext for e in exercise.editable)


def candidate(where: str, exercise: Exercise, files, attempt=1, extra=None) -> Candidate:
    """A candidate's `files` (path -> text) checked against its exercise: a file it may not write (a test,
    a build file, anything of the exercise's that is not a solution file, a configuration: `writable`) is
    set aside, as aider's runner restores the tests over it, and named."""
    if not isinstance(files, dict):
        raise InputError(f"{where}: field 'files' must be an object of path -> file content")
    if isinstance(attempt, bool) or attempt not in (1, 2):
        raise InputError(f"{where}: field 'attempt' must be 1 or 2, got {str(attempt)[:20]!r}")
    kept, aside = {}, []
    for name, content in files.items():
        if not isinstance(content, str):
            raise InputError(f"{where}: files[{str(name)[:60]!r}] must be a string")
        data = content.encode("utf-8", "surrogateescape")
        if len(data) > CANDIDATE_FILE_BYTES:
            raise InputError(f"{where}: files[{str(name)[:60]!r}]: {len(data)} bytes (at most {CANDIDATE_FILE_BYTES})")
        norm = posixpath.normpath(name) if isinstance(name, str) and name and "\0" not in name else None
        if norm is not None and norm == name and len(norm) <= PATH_CHARS and writable(exercise, norm):
            kept[norm] = data
        else:
            aside.append(str(name)[:PATH_CHARS])
    return Candidate(exercise.task_id, kept, tuple(sorted(aside)), int(attempt), where, dict(extra or {}))


def candidate_text(files: dict) -> str:
    """A candidate's solution files as its job's `code` (and its hash): JSON, keys sorted."""
    return json.dumps({k: v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else v
                       for k, v in sorted(files.items())}, ensure_ascii=False, sort_keys=True)


def reference_candidate(exercise: Exercise) -> Candidate:
    """The exercise's reference solution as a candidate sends it: its files a candidate may write (helper
    classes included), the rest (a Rust reference's own manifest) set aside."""
    return candidate("reference", exercise, {k: v.decode("utf-8", "surrogateescape") for k, v in exercise.example.items()})


def tree_for(exercise: Exercise, cand: Candidate | None) -> dict:
    """The files one run starts from: the exercise's tree, the candidate's solution files over it (None:
    the untouched stub), the tests restored from the exercise and rewritten as aider rewrites them."""
    tree = dict(exercise.tree)
    if cand is not None:
        tree.update(cand.files)
    for name in exercise.tests:
        tree[name] = exercise.tree[name]
    return tests_as_run(exercise, tree)


_DISABLED = re.compile(rb"@Disabled\([^)]*\)\s*\n")
_XTEST = re.compile(rb"\bxtest\(")


def tests_as_run(exercise: Exercise, tree: dict) -> dict:
    """aider's rewrites before the test command: Java's `@Disabled(...)` annotations removed from the
    exercise's test files (its runner's own rewrite); JavaScript's `xtest(` made `test(` in every *.spec.js
    of the exercise's top directory (npm-test.sh's `sed -i 's/\bxtest(/test(/g' *.spec.js`)."""
    out = dict(tree)
    for name, data in tree.items():
        if exercise.language == "java" and name.endswith(".java") and name in exercise.tests:
            out[name] = _DISABLED.sub(b"", data)
        elif exercise.language == "javascript" and "/" not in name and name.endswith(".spec.js"):
            out[name] = _XTEST.sub(b"test(", data)
    return out


_TIMING = re.compile(r"\bin \d+\.\d+s\b")


def cleaned_output(output: str, testdir: str, limit: int = 1 << 16) -> str:
    """A failing run's output as aider shows it to the model before its second try (cleanup_test_output:
    timing removed, the run's directory named by its last part), bounded to its last `limit` characters."""
    text = _TIMING.sub("", output)
    if testdir:
        text = text.replace(testdir, posixpath.basename(testdir.rstrip("/")) or testdir)
    return text if len(text) <= limit else text[-limit:]


def _attempt_of(where: str, obj: dict) -> int:
    """A row's try: `attempt` (1 or 2), else 2 where its generation's `kind` is "repair", else 1."""
    if "attempt" in obj:
        return obj["attempt"]
    generation = obj.get("generation")
    if isinstance(generation, dict) and generation.get("kind") == "repair":
        return 2
    return 1


def read_candidates(path: Path, exercises_by_id: dict) -> list[Candidate]:
    """Candidates from JSON Lines: {"task_id": "<track>/<exercise>", "files": {path: content}, "attempt": 1}
    (`attempt` 2, or `generation.kind` "repair", for a second try). Several rows of one exercise are
    n > 1. A bad row is an InputError naming the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot be read ({getattr(e, 'strerror', None) or e})") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as e:
            raise InputError(f"{where}: not a JSON object ({str(e)[:120]})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{where}: not a JSON object")
        task_id = obj.get("task_id")
        if not isinstance(task_id, str) or task_id not in exercises_by_id:
            raise InputError(f"{where}: task_id {str(task_id)[:80]!r} is not an exercise of the problems")
        if "files" not in obj:
            raise InputError(f"{where}: missing field 'files' (path -> content of the solution files)")
        extra = {k: v for k, v in obj.items() if k not in ("task_id", "files", "attempt")}
        out.append(candidate(where, exercises_by_id[task_id], obj["files"], _attempt_of(where, obj), extra))
    return out


# -- a benchmark run's directory, as aider's runner writes it -----------------------------------------------

RESULTS_FILE = ".aider.results.json"
MAX_TRIES = 10     # tests_outcomes kept (aider's --tries is 2 on the leaderboard)


@dataclass(frozen=True)
class Recorded:
    """What aider's runner recorded for an exercise (.aider.results.json)."""
    task_id: str
    outcomes: tuple          # tests_outcomes: one bool per try it ran (the last is the files' as they stand)
    timeouts: int = 0        # test_timeouts
    model: str = ""
    edit_format: str = ""


def aider_run(run: Path, exercises_by_id: dict) -> list[tuple[Candidate, Recorded]]:
    """A benchmark run's directory as aider writes it (<run>/<track>/exercises/practice/<exercise>/ with
    its .aider.results.json), as it stands: each exercise's solution files as the run left them (its last
    try's: the second where the first failed), the candidate of that try, beside what aider recorded. An
    exercise without a results file did not finish there and is left out; one passk does not have is an
    InputError naming it."""
    run = Path(run)
    pkg = Package(run)
    found = []
    for results in sorted(run.glob(f"*/exercises/practice/*/{RESULTS_FILE}")):
        testdir = results.parent
        task_id = f"{testdir.parent.parent.parent.name}/{testdir.name}"
        where = pkg.where(results)
        if task_id not in exercises_by_id:
            raise InputError(f"{where}: {task_id!r} is not an exercise of the problems")
        try:
            data = json.loads(pkg.read_bytes(results, 1 << 22))
        except (ValueError, RecursionError) as e:
            raise InputError(f"{where}: not JSON ({str(e)[:120]})") from None
        if not isinstance(data, dict):
            raise InputError(f"{where}: not a JSON object")
        outcomes = data.get("tests_outcomes") or []
        if not isinstance(outcomes, list) or not all(isinstance(o, bool) for o in outcomes):
            raise InputError(f"{where}: tests_outcomes must be a list of true/false")
        if not outcomes:
            continue   # no test ran (aider's --no-unit-tests): nothing to regrade
        ex = exercises_by_id[task_id]
        files = {}
        for name in ex.editable:
            f = testdir / name
            if pkg.is_file(f):
                files[name] = pkg.read_bytes(f, CANDIDATE_FILE_BYTES).decode("utf-8", "surrogateescape")
        # a file the model added beside the solution files (Java's helper classes), as the run left it
        for folder in sorted({posixpath.dirname(e) for e in ex.editable}):
            d = testdir / folder if folder else testdir
            if not d.is_dir() or d.is_symlink():
                continue
            for f in sorted(d.iterdir())[:EXERCISE_FILES]:
                rel = f"{folder}/{f.name}" if folder else f.name
                if rel not in files and rel not in ex.tree and writable(ex, rel) and pkg.is_file(f):
                    files[rel] = pkg.read_bytes(f, CANDIDATE_FILE_BYTES).decode("utf-8", "surrogateescape")
        timeouts = data.get("test_timeouts", 0)
        rec = Recorded(task_id, tuple(outcomes[:MAX_TRIES]),
                       timeouts if isinstance(timeouts, int) and not isinstance(timeouts, bool) else 0,
                       str(data.get("model", ""))[:200], str(data.get("edit_format", ""))[:100])
        found.append((candidate(where, ex, files, min(2, len(outcomes))), rec))
    if not found:
        raise InputError(f"{run}: no <track>/exercises/practice/<exercise>/{RESULTS_FILE} with tests run "
                         "(a benchmark run's directory, as aider's runner writes it)")
    return found
