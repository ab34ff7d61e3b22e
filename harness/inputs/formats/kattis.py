"""ICPC/Kattis problem packages, read unchanged: one package directory, or a contest directory of them.

    <package>/problem.yaml          legacy (no problem_format_version, or legacy/legacy-icpc) or 2023-07,
                                    2025-09 and their drafts: type, limits, validation, validator_flags
    <package>/.timelimit            the time limit a judge installed the package with (seconds)
    <package>/data/sample/*.in,.ans judged, never scored
    <package>/data/secret/...       tests, in directories nested as deep as the package likes; every directory
                                    that holds tests is a group, configured by the testdata.yaml (legacy) or
                                    test_group.yaml (2023-07 on) of it and its parents
    <package>/output_validators/X/  (legacy) or output_validator/ (2023-07 on): a custom output validator in
                                    C, C++ or Python (a file, or a directory with one source and its headers)
    <package>/submissions/<verdict>/ the package's own submissions: a samples source (load_submissions), each
                                    sample's expected verdict recorded

The time limit, in order: .timelimit; problem.yaml's limits.time_limit (2023-07 on); else it is inferred as
problemtools infers it, from the accepted submissions' slowest run (time_multiplier, or ac_to_time_limit,
times that run, rounded up to time_resolution: run/kattis_time.py), and the row records which
(limits.time_source). Memory and output limits are problem.yaml's (MiB), else the system defaults
problemtools uses (1024 MiB, 8 MiB).

Interactive problems (legacy `validation: custom interactive`, 2023-07 `type: interactive`) run their output
validator as the interactor (containers/box/interact.py); their .interaction samples are for statements and
are not read. Not read yet: multi-pass problems (refused, naming the package), submit-answer problems,
included code (include/), a validator with build/run scripts, custom graders.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from harness.core.errors import InputError
from harness.inputs.formats.base import Format, add, register
from harness.inputs.judge import Checker, Group, JudgeSpec, JudgeTest
from harness.inputs.problem import Problem

DEFAULT_MEMORY_MB = 1024   # problemtools' system defaults (config/problem.yaml)
DEFAULT_OUTPUT_MB = 8
DEFAULT_VALIDATION_S = 60
LEGACY_MULTIPLIER, LEGACY_MARGIN = 5.0, 2.0       # legacy time_multiplier, time_safety_margin
NEW_MULTIPLIER, NEW_MARGIN = 2.0, 1.5             # 2023-07 on: ac_to_time_limit, time_limit_to_tle
VERDICT_DIRS = {"accepted": "AC", "partially_accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE",
                "run_time_error": "RTE", "rejected": "rejected", "brute_force": "brute_force"}
CHECKER_EXTENSIONS = {".py": "python", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c": "c"}


def is_package(path: Path) -> bool:
    """A Kattis package: a problem.yaml beside a data/ directory (passk's own layout has neither data/ nor a
    package's other directories; its tasks are subdirectories with a problem.yaml each)."""
    return (path / "problem.yaml").is_file() and (path / "data").is_dir()


def packages(path: Path) -> list:
    """The packages a path names: itself, or the packages directly inside a contest directory."""
    if is_package(path):
        return [path]
    return sorted(d for d in path.iterdir() if d.is_dir() and is_package(d))


def _yaml(path: Path):
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"{path}:{mark.line + 1 if mark else '?'}: malformed YAML") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    return {} if data is None else data


def _text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")   # bytes a test holds, carried as they are


def _number(where, value, what, integer=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: {what} must be a positive number, got {value!r}")
    return int(value) if integer else float(value)


def _flags(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return tuple(str(v) for v in value)
    raise InputError(f"validator flags must be a string or a list, got {value!r}")


def _legacy(meta: dict) -> bool:
    return str(meta.get("problem_format_version", "legacy")).startswith("legacy")


def read_package(pkg: Path) -> Problem:
    where = str(pkg / "problem.yaml")
    meta = _yaml(pkg / "problem.yaml")
    if not isinstance(meta, dict):
        raise InputError(f"{where}: expected a mapping")
    legacy = _legacy(meta)
    limits = meta.get("limits") or {}
    if not isinstance(limits, dict):
        raise InputError(f"{where}: limits must be a mapping")
    kinds = meta.get("type", "pass-fail")
    kinds = set(kinds if isinstance(kinds, list) else [kinds])
    validation = str(meta.get("validation", "default")).split() if legacy else []
    if "multi-pass" in kinds:
        raise InputError(f"{where}: multi-pass problems are not judged by passk yet")
    interactive = "interactive" in validation or "interactive" in kinds
    if "submit-answer" in kinds:
        raise InputError(f"{where}: submit-answer problems have no program to run")
    scoring = "scoring" in kinds
    memory = _number(where, limits.get("memory", DEFAULT_MEMORY_MB), "limits.memory", integer=True)
    output = _number(where, limits.get("output", DEFAULT_OUTPUT_MB), "limits.output", integer=True)
    time_limit, source = None, None
    if (pkg / ".timelimit").is_file():
        try:
            time_limit, source = float((pkg / ".timelimit").read_text().split()[0]), ".timelimit"
        except (ValueError, IndexError):
            raise InputError(f"{pkg / '.timelimit'}: not a number of seconds") from None
    elif not legacy and limits.get("time_limit") is not None:
        time_limit, source = _number(where, limits["time_limit"], "limits.time_limit"), "problem.yaml time_limit"
    if legacy:
        multiplier = _number(where, limits.get("time_multiplier", LEGACY_MULTIPLIER), "limits.time_multiplier")
        margin = _number(where, limits.get("time_safety_margin", LEGACY_MARGIN), "limits.time_safety_margin")
        resolution = 1.0
    else:
        tm = limits.get("time_multipliers") or {}
        multiplier = _number(where, tm.get("ac_to_time_limit", NEW_MULTIPLIER), "ac_to_time_limit")
        margin = _number(where, tm.get("time_limit_to_tle", NEW_MARGIN), "time_limit_to_tle")
        resolution = _number(where, limits.get("time_resolution", 1.0), "time_resolution")
    checker = _checker(pkg, meta, legacy, where, limits)
    if interactive and checker.protocol != "kattis":
        raise InputError(f"{where}: an interactive problem needs its output validator (the interactor)")
    tests, groups = _testdata(pkg, legacy, scoring, meta)
    spec = JudgeSpec(tuple(tests), time_limit if time_limit is not None else 1.0, memory_mb=memory, output_mb=output,
                     checker=checker, groups=tuple(groups), scoring=scoring,
                     time_source=source or "inferred", python="pypy", interactive=interactive)
    notes = {"kattis": {"format_version": str(meta.get("problem_format_version", "legacy")),
                        "time_multiplier": multiplier, "time_safety_margin": margin, "time_resolution": resolution,
                        "time_limit_known": time_limit is not None},
             "path": str(pkg)}
    name = meta.get("name")
    if isinstance(name, dict):
        name = name.get("en") or next(iter(name.values()), None)
    return Problem(pkg.name, str(name or ""), "", None, None, channel="io", format="kattis", solution_is="program",
                   notes=notes, judge=spec)


def _checker(pkg: Path, meta: dict, legacy: bool, where: str, limits: dict) -> Checker:
    time_s = float(limits.get("validation_time", DEFAULT_VALIDATION_S))
    memory = int(limits.get("validation_memory", DEFAULT_MEMORY_MB))
    flags = _flags(meta.get("validator_flags")) if legacy else ()
    custom = "custom" in str(meta.get("validation", "default")).split() if legacy else \
        ((pkg / "output_validator").is_dir() or (pkg / "output_validators").is_dir())
    if not custom:
        return Checker("default", flags)
    folder = pkg / ("output_validators" if legacy or not (pkg / "output_validator").is_dir() else "output_validator")
    if not folder.is_dir():
        raise InputError(f"{where}: custom validation, but no {folder.name}/ directory")
    # output_validators/<name>/ (legacy) holds programs; output_validator/ (2023-07 on) is the program, or
    # (as in problemtools' own examples) holds one
    direct = [e for e in folder.iterdir() if e.is_file() and e.suffix in CHECKER_EXTENSIONS]
    entries = [folder] if folder.name == "output_validator" and direct else sorted(folder.iterdir())
    programs = [e for e in entries if e.is_dir() or e.suffix in CHECKER_EXTENSIONS]
    if len(programs) != 1:
        raise InputError(f"{folder}: expected one output validator, found {len(programs)}")
    program = programs[0]
    files = [program] if program.is_file() else sorted(p for p in program.iterdir() if p.is_file())
    if any(p.name in ("build", "run") for p in files):
        raise InputError(f"{program}: a validator with build/run scripts is not run by passk yet")
    sources = [p for p in files if p.suffix in CHECKER_EXTENSIONS]
    if len(sources) != 1:
        raise InputError(f"{program}: expected one source file (C, C++ or Python), found {len(sources)}")
    main = sources[0]
    language = CHECKER_EXTENSIONS[main.suffix]
    extra = [p for p in files if p is not main and p.suffix in (".h", ".hpp", ".hh")]
    return Checker("kattis", flags, language=language,
                   files=((main.name, _text(main)), *((p.name, _text(p)) for p in extra)),
                   time_s=time_s, memory_mb=memory)


def _testdata(pkg: Path, legacy: bool, scoring: bool, meta: dict):
    """The package's tests in judging order and its groups: every directory under data/sample and
    data/secret that holds tests is a group, with the configuration of its own and its parents' files."""
    data = pkg / "data"
    tests, groups = [], []

    def config_of(directory: Path, inherited: dict) -> dict:
        own = {}
        for name in ("testdata.yaml", "test_group.yaml"):
            if (directory / name).is_file():
                loaded = _yaml(directory / name)
                if not isinstance(loaded, dict):
                    raise InputError(f"{directory / name}: expected a mapping")
                own.update(loaded)
        return {**inherited, **own}, own

    def walk(directory: Path, inherited: dict, top: str):
        config, own = config_of(directory, inherited)
        cases = sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == ".in")
        subdirs = sorted(p for p in directory.iterdir() if p.is_dir())
        name = directory.relative_to(data).as_posix()
        if cases:
            # legacy: the sample group is scored like any other (problemtools adds its accept_score to the
            # total unless a testdata.yaml says otherwise); 2023-07 on: the submission's score is secret's
            groups.append(_group(name, config, own, legacy, top == "sample" and not legacy, directory))
            # legacy says output_validator_flags, 2023-07 on output_validator_args; problemtools reads the
            # former in testdata.yaml whatever the version, so either is taken in either file
            flags = _flags(config.get("output_validator_args", config.get("output_validator_flags")))
            for case in cases:
                answer = case.with_suffix(".ans")
                if not answer.is_file():
                    raise InputError(f"{case}: no {answer.name} beside it")
                tests.append(JudgeTest(_text(case), _text(answer), case.relative_to(data).with_suffix("").as_posix(),
                                       len(groups) - 1, flags))
        for sub in subdirs:
            walk(sub, config, top)

    for top in ("sample", "secret"):
        if (data / top).is_dir():
            walk(data / top, {}, top)
    if not tests:
        raise InputError(f"{data}: no tests (.in and .ans files under data/sample or data/secret)")
    if not scoring:   # pass-fail: every group all or nothing, the first rejection decides
        groups = [Group(g.name, "break", "pass-fail", sample=g.sample) for g in groups]
    return tests, groups


def _group(name: str, config: dict, own: dict, legacy: bool, sample: bool, directory: Path) -> Group:
    where = str(directory)
    if legacy:
        flags = _flags(config.get("grader_flags"))
        aggregation = "min" if "min" in flags else "sum"
        if "avg" in flags or "max" in flags:
            raise InputError(f"{where}: grader flags {' '.join(flags)}: passk aggregates sum and min")
        accept = float(config.get("accept_score", 1.0))
        reject = float(config.get("reject_score", 0.0))
        upper = None
        if "range" in own:
            try:
                upper = float(str(own["range"]).split()[1])
            except (ValueError, IndexError):
                raise InputError(f"{where}: range must be two numbers") from None
            upper = upper if math.isfinite(upper) else None
        on_reject = str(config.get("on_reject", "break"))
        if on_reject not in ("break", "continue"):
            raise InputError(f"{where}: on_reject must be break or continue")
        return Group(name, on_reject, aggregation, upper, accept, reject, sample=sample)
    aggregation = str(config.get("score_aggregation", "sum" if name == "secret" else "pass-fail"))
    if aggregation not in ("pass-fail", "sum", "min"):
        raise InputError(f"{where}: score_aggregation must be pass-fail, sum or min")
    top = config.get("max_score", 100 if name == "secret" else None)
    max_score = None if top in (None, "unbounded") else float(top)
    require = config.get("require_pass") or ()
    require = (require,) if isinstance(require, str) else tuple(str(r) for r in require)
    return Group(name, "continue" if aggregation != "pass-fail" else "break", aggregation, max_score,
                 require_pass=require, sample=sample)


def load(path, records) -> dict:
    problems: dict = {}
    found = packages(Path(path))
    if not found:
        raise InputError(f"{path}: no Kattis problem package here (a problem.yaml beside a data/ directory, "
                         "or a directory of such packages)")
    for pkg in found:
        add(problems, str(pkg / "problem.yaml"), read_package(pkg))
    return problems


def submissions(path: Path) -> list:
    """[(task_id, expected directory, file)] of the packages' own submissions, in a stable order."""
    out = []
    for pkg in packages(Path(path)):
        root = pkg / "submissions"
        if not root.is_dir():
            continue
        for verdict_dir in sorted(d for d in root.iterdir() if d.is_dir()):
            for f in sorted(verdict_dir.iterdir()):
                out.append((pkg.name, verdict_dir.name, f))
    return out


register(Format("kattis", "ICPC/Kattis problem package", lambda obj: False, load,
                "a directory with problem.yaml, data/sample, data/secret, output_validators/, submissions/"))
