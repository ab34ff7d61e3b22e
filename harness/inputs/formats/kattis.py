"""ICPC/Kattis problem packages, read unchanged: one package directory, or a contest directory of them.

    <package>/problem.yaml          legacy (no problem_format_version, or legacy/legacy-icpc) or 2023-07,
                                    2025-09 and their drafts: type, limits, validation, validator_flags
    <package>/.timelimit            the time limit a judge installed the package with (seconds)
    <package>/data/sample/*.in,.ans judged, never scored
    <package>/data/secret/...       tests, in directories nested as deep as the package likes (up to the
                                    depth ceiling); every directory that holds tests is a group, configured by
                                    the testdata.yaml (legacy) or test_group.yaml (2023-07 on) of it and its parents
    <package>/output_validators/X/  (legacy) or output_validator/ (2023-07 on): a custom output validator in
                                    C, C++ or Python (a file, or a directory of sources and headers), or a
                                    directory with `build` and `run` scripts (built in the sandbox)
    <package>/include/<language>/   files added to every submission in that language (include/default: to
                                    every language), as problemtools adds them
    <package>/submissions/<verdict>/ the package's own submissions: a samples source (submissions()), each
                                    sample's expected verdict recorded

A package is hostile input: every file is read through harness/inputs/untrusted.py (regular files inside
the package only; links out of it, devices, FIFOs and /proc refused by name), every number checked against
the run's ceilings, every YAML document read safely with its aliases bounded.

The time limit, in order: .timelimit; problem.yaml's limits.time_limit (2023-07 on); else it is inferred as
problemtools infers it, from the package's own accepted submissions (run/time_limits.py). Memory and output
limits are problem.yaml's (MiB), else the system defaults problemtools uses (1024 MiB, 8 MiB). Programs are
compiled and run with problemtools' commands (JudgeSpec.dialect "kattis": inputs/judge.py KATTIS_COMMANDS),
Python 3 with PyPy, as Kattis judges them.

Interactive problems (legacy `validation: custom interactive`, 2023-07 `type: interactive`) run their output
validator as the interactor (containers/box/interact.py). Refused, by name: multi-pass and submit-answer
problems, custom graders (graders/, `grading: custom`), a validator in a language other than C, C++, Python
or build/run scripts.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.formats.base import Format, add, register
from harness.inputs.judge import Checker, Group, JudgeSpec, JudgeTest
from harness.inputs.problem import Problem
from harness.inputs.untrusted import DEFAULT_CEILINGS, Ceilings, Package, mapping, number, shown, text_of

DEFAULT_MEMORY_MB = 1024   # problemtools' system defaults (config/problem.yaml)
DEFAULT_OUTPUT_MB = 8
DEFAULT_VALIDATION_S = 60
LEGACY_MULTIPLIER, LEGACY_MARGIN = 5.0, 2.0       # legacy time_multiplier, time_safety_margin
NEW_MULTIPLIER, NEW_MARGIN = 2.0, 1.5             # 2023-07 on: ac_to_time_limit, time_limit_to_tle
VERDICT_DIRS = {"accepted": "AC", "partially_accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE",
                "run_time_error": "RTE", "rejected": "rejected", "brute_force": "brute_force"}
# A validator's language from its files, as problemtools tells it (the most files, then the priority)
CHECKER_EXTENSIONS = {".py": "python", ".py3": "python", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".C": "cpp",
                      ".c++": "cpp", ".c": "c"}
CHECKER_PRIORITY = {"cpp": 1000, "c": 950, "python": 850}
KINDS = ("pass-fail", "scoring", "interactive", "multi-pass", "submit-answer")
LEGACY_VALIDATION = ("default", "custom", "interactive", "scoring")
MAX_PROGRAM_FILES = 200            # files of one validator or include directory
MAX_PROGRAM_BYTES = 16 << 20       # bytes of them together


def is_package(path: Path) -> bool:
    """A Kattis package: a problem.yaml beside a data/ directory (passk's own layout has neither data/ nor a
    package's other directories; its tasks are subdirectories with a problem.yaml each)."""
    path = Path(path)
    return (path / "problem.yaml").exists() and (path / "data").is_dir()


def packages(path: Path) -> list:
    """The packages a path names: itself, or the packages directly inside a contest directory."""
    path = Path(path)
    if is_package(path):
        return [path]
    if not path.is_dir():
        return []
    return sorted(d for d in path.iterdir() if d.is_dir() and not d.is_symlink() and is_package(d))


def _boundary(given: Path, package: Path) -> Path | None:
    """The contest directory a package was found in (what its links may reach), or None for a package given
    alone (its own directory bounds it)."""
    return given if Path(package) != given else None


def _legacy(meta: dict) -> bool:
    return str(meta.get("problem_format_version", "legacy")).startswith("legacy")


def _flags(where: str, key: str, value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return tuple(text_of(where, key, value, limit=4096).split())
    if isinstance(value, list) and len(value) <= 64 and all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                                           for v in value):
        return tuple(text_of(where, key, v, limit=4096) for v in value)
    raise InputError(f"{where}: {key}: {shown(value)} (must be a string or a list of strings)")


def _kinds(where: str, meta: dict, legacy: bool) -> set:
    raw = meta.get("type", "pass-fail")
    items = raw if isinstance(raw, list) else [raw]
    kinds = set()
    for item in items:
        kind = text_of(where, "type", item, limit=100)
        for k in ([kind] if not legacy else kind.split()):
            if k not in KINDS:
                raise InputError(f"{where}: type: {shown(k)} (not a problem type passk knows: {', '.join(KINDS)})")
            kinds.add(k)
    if legacy:
        validation = text_of(where, "validation", meta.get("validation", "default"), limit=200).split()
        for token in validation:
            if token not in LEGACY_VALIDATION:
                raise InputError(f"{where}: validation: {shown(token)} (one of default, custom, custom interactive, "
                                 "custom scoring)")
        kinds |= {k for k in ("interactive", "scoring") if k in validation}
        if "custom" in validation:
            kinds.add("custom")
    return kinds


def read_package(path: Path, ceilings: Ceilings | None = None, boundary: Path | None = None) -> Problem:
    """A package as a Problem; `boundary`: the contest directory it was found in, which its links may reach."""
    ceilings = ceilings or DEFAULT_CEILINGS
    pkg = Package(path, ceilings, boundary)
    try:
        return _read(pkg, Path(path), ceilings)
    except InputError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, RecursionError) as e:
        # a shape the checks above did not foresee: still the package's fault, named, never a traceback
        raise InputError(f"{Path(path) / 'problem.yaml'}: malformed package ({type(e).__name__}: {shown(str(e))})") from None


def _read(pkg: Package, path: Path, ceilings: Ceilings) -> Problem:
    yaml_path = path / "problem.yaml"
    where = pkg.where(yaml_path)
    meta = pkg.yaml(yaml_path)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InputError(f"{where}: expected a mapping, got {shown(meta)}")
    version = text_of(where, "problem_format_version", meta.get("problem_format_version", "legacy"), limit=100)
    legacy = version.startswith("legacy")
    limits = mapping(where, "limits", meta.get("limits"))
    kinds = _kinds(where, meta, legacy)
    if "multi-pass" in kinds:
        raise InputError(f"{where}: type: multi-pass (multi-pass problems are not judged by passk yet)")
    if "submit-answer" in kinds:
        raise InputError(f"{where}: type: submit-answer (a submit-answer problem has no program to run)")
    interactive = "interactive" in kinds
    scoring = "scoring" in kinds
    _refuse_graders(pkg, path, meta, where)

    def limit(key, default, ceiling, integer=False, unit="", at_least=None):
        value = limits.get(key, default)
        return number(where, f"limits.{key}", value, ceiling, integer=integer, unit=unit, at_least=at_least)

    memory = int(limit("memory", DEFAULT_MEMORY_MB, ceilings.memory_mb, integer=True, unit=" MiB"))
    output = int(limit("output", DEFAULT_OUTPUT_MB, ceilings.output_mb, integer=True, unit=" MiB"))
    time_limit, source = None, None
    timelimit_file = path / ".timelimit"
    if pkg.is_file(timelimit_file):
        raw = pkg.read_text(timelimit_file, 256).split()
        if not raw:
            raise InputError(f"{pkg.where(timelimit_file)}: empty (a number of seconds expected)")
        time_limit = number(pkg.where(timelimit_file), "time limit", raw[0], ceilings.time_limit_s, unit=" s")
        source = ".timelimit"
    elif not legacy and limits.get("time_limit") is not None:
        time_limit, source = limit("time_limit", None, ceilings.time_limit_s, unit=" s"), "problem.yaml time_limit"
    if legacy:
        multiplier = limit("time_multiplier", LEGACY_MULTIPLIER, ceilings.time_multiplier, at_least=1)
        margin = limit("time_safety_margin", LEGACY_MARGIN, ceilings.time_multiplier, at_least=1)
        resolution = 1.0
    else:
        tm = mapping(where, "limits.time_multipliers", limits.get("time_multipliers"))
        multiplier = number(where, "limits.time_multipliers.ac_to_time_limit", tm.get("ac_to_time_limit", NEW_MULTIPLIER),
                            ceilings.time_multiplier, at_least=1)
        margin = number(where, "limits.time_multipliers.time_limit_to_tle", tm.get("time_limit_to_tle", NEW_MARGIN),
                        ceilings.time_multiplier, at_least=1)
        resolution = limit("time_resolution", 1.0, ceilings.time_limit_s, unit=" s")
    checker = _checker(pkg, path, meta, legacy, where, limits, kinds, ceilings)
    if interactive and checker.protocol != "kattis":
        raise InputError(f"{where}: an interactive problem needs its output validator (the interactor)")
    tests, groups = _testdata(pkg, path, legacy, scoring, ceilings)
    includes = _includes(pkg, path)
    spec = JudgeSpec(tuple(tests), time_limit if time_limit is not None else 1.0, memory_mb=memory, output_mb=output,
                     checker=checker, groups=tuple(groups), scoring=scoring,
                     time_source=source or "inferred", python="pypy", interactive=interactive,
                     dialect="kattis", includes=includes)
    notes = {"kattis": {"format_version": version, "time_multiplier": multiplier, "time_safety_margin": margin,
                        "time_resolution": resolution, "time_limit_known": time_limit is not None},
             "path": str(path), **({"contest": str(pkg.root)} if pkg.what != "the package" else {})}
    name = meta.get("name")
    if isinstance(name, dict):
        name = name.get("en") or next(iter(name.values()), None)
    name = name if isinstance(name, str) else ""
    return Problem(path.name, name[:200], "", None, None, channel="io", format="kattis", solution_is="program",
                   notes=notes, judge=spec)


def _refuse_graders(pkg: Package, path: Path, meta: dict, where: str) -> None:
    """Custom graders are not run by passk: a package that has one is refused by name, never judged with
    the default grader in its place."""
    graders = path / "graders"
    if pkg.is_dir(graders) and pkg.entries(graders):
        raise InputError(f"{pkg.where(graders)}: custom graders are not run by passk yet")
    grading = meta.get("grading")
    if isinstance(grading, dict) and str(grading.get("objective", "max")) not in ("max",):
        raise InputError(f"{where}: grading.objective: {shown(grading.get('objective'))} (passk grades objective max)")


def _program_files(pkg: Package, root: Path) -> list:
    """[(relative path, text)] of a validator's or include directory's files, bounded in number and size."""
    files = pkg.walk_files(root, max_depth=4) if pkg.is_dir(root) else [root]
    if len(files) > MAX_PROGRAM_FILES:
        raise InputError(f"{pkg.where(root)}: {len(files)} files (at most {MAX_PROGRAM_FILES})")
    out, total = [], 0
    for f in files:
        text = pkg.read_text(f, MAX_PROGRAM_BYTES)
        total += len(text)
        if total > MAX_PROGRAM_BYTES:
            raise InputError(f"{pkg.where(root)}: more than {MAX_PROGRAM_BYTES} bytes of files")
        rel = f.name if f == root else Path(f).relative_to(root).as_posix()
        out.append((rel, text))
    return out


def _checker(pkg: Package, path: Path, meta: dict, legacy: bool, where: str, limits: dict, kinds: set,
             ceilings: Ceilings) -> Checker:
    time_s = number(where, "limits.validation_time", limits.get("validation_time", DEFAULT_VALIDATION_S),
                    ceilings.validation_time_s, unit=" s")
    memory = int(number(where, "limits.validation_memory", limits.get("validation_memory", DEFAULT_MEMORY_MB),
                        ceilings.validation_memory_mb, integer=True, unit=" MiB"))
    flags = _flags(where, "validator_flags", meta.get("validator_flags")) if legacy else ()
    new_dir, old_dir = path / "output_validator", path / "output_validators"
    custom = "custom" in kinds if legacy else (pkg.is_dir(new_dir) or pkg.is_dir(old_dir))
    if not custom and "interactive" in kinds and not legacy:
        custom = True
    if not custom:
        return Checker("default", flags)
    folder = new_dir if not legacy and pkg.is_dir(new_dir) else old_dir if pkg.is_dir(old_dir) else new_dir
    if not pkg.is_dir(folder):
        raise InputError(f"{where}: custom validation, but no {old_dir.name if legacy else new_dir.name}/ directory")
    # output_validators/<name>/ (legacy) holds programs; output_validator/ (2023-07 on) is the program, or
    # (as in problemtools' own examples) holds one
    entries = pkg.entries(folder)
    direct = [e for e in entries if not pkg.is_dir(e) and (e.suffix in CHECKER_EXTENSIONS or e.name == "build")]
    if folder.name == "output_validator" and direct:
        programs = [folder]
    else:
        programs = [e for e in entries if pkg.is_dir(e) or e.suffix in CHECKER_EXTENSIONS]
    if len(programs) != 1:
        raise InputError(f"{pkg.where(folder)}: expected one output validator, found {len(programs)}")
    program = programs[0]
    files = _program_files(pkg, program)
    names = [name for name, _ in files]
    common = dict(flags=flags, time_s=time_s, memory_mb=memory)
    if "build" in names:   # a directory with build and run scripts: built in the sandbox, run as ./run
        return Checker("kattis", language="buildrun", files=tuple(files), **common)
    if "run" in names:
        raise InputError(f"{pkg.where(program)}: a run script without a build script (both are needed)")
    counts: dict = {}
    for name in names:
        lang = CHECKER_EXTENSIONS.get(Path(name).suffix)
        if lang is not None:
            counts[lang] = counts.get(lang, 0) + 1
    if not counts:
        raise InputError(f"{pkg.where(program)}: no source file in a language passk runs validators in "
                         "(C, C++, Python, or build/run scripts)")
    language = max(counts, key=lambda lang: (counts[lang], CHECKER_PRIORITY[lang]))
    sources = sorted(name for name in names if CHECKER_EXTENSIONS.get(Path(name).suffix) == language)
    main = _mainfile(sources)
    ordered = [(n, t) for n, t in files if n == main] + [(n, t) for n, t in files if n != main]
    return Checker("kattis", language=language, files=tuple(ordered), **common)


def _mainfile(sources: list) -> str:
    """problemtools' mainfile: the one source, else one named main.*, else the first."""
    mains = [s for s in sources if Path(s).name.lower().startswith("main.")]
    return (mains or sources)[0]


def _includes(pkg: Package, path: Path) -> tuple:
    """include/<language>/ and include/default/: ((language directory, ((relative path, text), ...)), ...)."""
    root = path / "include"
    if not pkg.is_dir(root):
        return ()
    out = []
    for lang_dir in pkg.entries(root):
        if pkg.is_dir(lang_dir):
            out.append((lang_dir.name, tuple(_program_files(pkg, lang_dir))))
    return tuple(out)


def _testdata(pkg: Package, path: Path, legacy: bool, scoring: bool, ceilings: Ceilings):
    """The package's tests in judging order and its groups: every directory under data/sample and
    data/secret that holds tests is a group, with the configuration of its own and its parents' files."""
    data = path / "data"
    tests, groups = [], []

    def config_of(directory: Path, inherited: dict) -> tuple:
        own = {}
        for name in ("testdata.yaml", "test_group.yaml"):
            file = directory / name
            if pkg.is_file(file):
                loaded = pkg.yaml(file)
                loaded = {} if loaded is None else loaded
                if not isinstance(loaded, dict):
                    raise InputError(f"{pkg.where(file)}: expected a mapping, got {shown(loaded)}")
                own.update({k: (v, pkg.where(file)) for k, v in loaded.items()})
        return {**inherited, **own}, own

    def walk(directory: Path, inherited: dict, top: str, depth: int):
        if depth > ceilings.depth:
            raise InputError(f"{pkg.where(directory)}: test data nested {depth} directories deep "
                             f"(ceiling depth {ceilings.depth})")
        config, own = config_of(directory, inherited)
        entries = pkg.entries(directory)
        cases = [p for p in entries if p.suffix == ".in" and not pkg.is_dir(p)]
        subdirs = [p for p in entries if pkg.is_dir(p)]
        name = directory.relative_to(data).as_posix()
        if cases:
            if len(tests) + len(cases) > ceilings.tests:
                raise InputError(f"{pkg.where(directory)}: more than {ceilings.tests} tests in the package "
                                 "(ceiling tests)")
            # legacy: the sample group is scored like any other (problemtools adds its accept_score to the
            # total unless a testdata.yaml says otherwise); 2023-07 on: the submission's score is secret's
            groups.append(_group(name, config, own, legacy, top == "sample" and not legacy, pkg.where(directory)))
            # legacy says output_validator_flags, 2023-07 on output_validator_args; problemtools reads the
            # former in testdata.yaml whatever the version, so either is taken in either file
            key = "output_validator_args" if "output_validator_args" in config else "output_validator_flags"
            value, at = config.get(key, (None, ""))
            flags = _flags(at, key, value)
            for case in cases:
                answer = case.with_suffix(".ans")
                if not pkg.is_file(answer):
                    raise InputError(f"{pkg.where(case)}: no {answer.name} beside it")
                tests.append(JudgeTest(pkg.read_text(case, data=True), pkg.read_text(answer, data=True),
                                       case.relative_to(data).with_suffix("").as_posix(), len(groups) - 1, flags))
        for sub in subdirs:
            walk(sub, config, top, depth + 1)

    for top in ("sample", "secret"):
        if pkg.is_dir(data / top):
            walk(data / top, {}, top, 1)
    if not tests:
        raise InputError(f"{pkg.where(data)}: no tests (.in and .ans files under data/sample or data/secret)")
    if not scoring:   # pass-fail: every group all or nothing, the first rejection decides
        groups = [Group(g.name, "break", "pass-fail", sample=g.sample) for g in groups]
    return tests, groups


def _score(value, at: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{at}: {key}: {shown(value)} (must be a finite number)")
    return float(value)


def _group(name: str, config: dict, own: dict, legacy: bool, sample: bool, where: str) -> Group:
    def get(key, default=None):
        value, at = config.get(key, (default, where))
        return value, at
    if legacy:
        value, at = get("grader_flags")
        flags = _flags(at, "grader_flags", value)
        aggregation = "min" if "min" in flags else "sum"
        if "avg" in flags or "max" in flags:
            raise InputError(f"{at}: grader_flags: {shown(' '.join(flags))} (passk aggregates sum and min)")
        value, at = get("accept_score", 1.0)
        accept = _score(value, at, "accept_score")
        value, at = get("reject_score", 0.0)
        reject = _score(value, at, "reject_score")
        upper = None
        if "range" in own:
            value, at = own["range"]
            parts = text_of(at, "range", value, limit=200).split()
            try:
                upper = float(parts[1])
                float(parts[0])
            except (ValueError, IndexError):
                raise InputError(f"{at}: range: {shown(value)} (must be two numbers)") from None
            upper = upper if math.isfinite(upper) else None
        value, at = get("on_reject", "break")
        on_reject = text_of(at, "on_reject", value, limit=20)
        if on_reject not in ("break", "continue"):
            raise InputError(f"{at}: on_reject: {shown(on_reject)} (must be break or continue)")
        return Group(name, on_reject, aggregation, upper, accept, reject, sample=sample)
    value, at = get("score_aggregation", "sum" if name == "secret" else "pass-fail")
    aggregation = text_of(at, "score_aggregation", value, limit=20)
    if aggregation not in ("pass-fail", "sum", "min"):
        raise InputError(f"{at}: score_aggregation: {shown(aggregation)} (must be pass-fail, sum or min)")
    value, at = get("max_score", 100 if name == "secret" else None)
    max_score = None if value in (None, "unbounded") else _score(value, at, "max_score")
    if max_score is not None and max_score < 0:
        raise InputError(f"{at}: max_score: {shown(value)} (must not be negative)")
    value, at = get("require_pass")
    require = () if value is None else (value,) if isinstance(value, str) else value
    if not isinstance(require, (list, tuple)) or not all(isinstance(r, str) for r in require):
        raise InputError(f"{at}: require_pass: {shown(value)} (must be a group's name or a list of them)")
    return Group(name, "continue" if aggregation != "pass-fail" else "break", aggregation, max_score,
                 require_pass=tuple(require), sample=sample)


def load(path, records, ceilings: Ceilings | None = None) -> dict:
    problems: dict = {}
    found = packages(Path(path))
    if not found:
        raise InputError(f"{path}: no Kattis problem package here (a problem.yaml beside a data/ directory, "
                         "or a directory of such packages)")
    for pkg in found:
        add(problems, str(pkg / "problem.yaml"), read_package(pkg, ceilings, _boundary(Path(path), pkg)))
    return problems


def submissions(path: Path, ceilings: Ceilings | None = None) -> list:
    """[(task_id, expected directory, file, text or None)] of the packages' own submissions, in a stable
    order, each read through the package's checks (a link out of the package is refused by name); a
    directory (a submission of several files) has no text."""
    out = []
    for root in packages(Path(path)):
        pkg = Package(root, ceilings, _boundary(Path(path), root))
        subs = root / "submissions"
        if not pkg.is_dir(subs):
            continue
        for verdict_dir in (d for d in pkg.entries(subs) if pkg.is_dir(d)):
            for f in pkg.entries(verdict_dir):
                if pkg.is_dir(f):
                    out.append((root.name, verdict_dir.name, f, None))
                else:
                    out.append((root.name, verdict_dir.name, f, pkg.read_text(f, MAX_PROGRAM_BYTES)))
    return out


register(Format("kattis", "ICPC/Kattis problem package", lambda obj: False, load,
                "a directory with problem.yaml, data/sample, data/secret, output_validators/, submissions/"))
