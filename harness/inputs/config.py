"""One run configuration, parsed and checked once at the edge. Precedence: CLI > YAML > defaults."""

from __future__ import annotations

import difflib
import math
import os
from dataclasses import asdict, dataclass, field, fields, replace

from harness.core.constants import (DEFAULT_BASE_IMAGE, DEFAULT_K, EXECUTORS, ISOLATIONS, PIN_CPUS, RUNTIMES, runtime_ok,
                                    TEST_TRANSPORT_MB, TRANSPORTS)
from harness.core.errors import InputError
from harness.inputs.samples import SampleOptions
from harness.inputs.untrusted import Ceilings, load_yaml


@dataclass(frozen=True)
class ScoringOptions:
    """How rows become a score. Recorded in score.json so a reader can rebuild the figure."""

    ks: tuple[int, ...] = (1, 10, 100)
    k_policy: str = "all"          # "all": k only when every task has n ≥ k; "subset": also report
    #                                 k on the tasks that have n ≥ k, labelled with their count
    selection: str = "first"       # "first", "random" (seeded), or "max:FIELD" of a per-sample field
    seed: int = 0                  # for the bootstrap and the random selection rule
    bootstrap: int = 1000          # bootstrap resamples over tasks
    exclude_errors: bool = False

    def __post_init__(self):
        if self.k_policy not in K_POLICIES:
            raise InputError(f"k policy must be one of {', '.join(K_POLICIES)}, got {self.k_policy!r}")
        if not (self.selection in ("first", "random") or
                (self.selection.startswith("max:") and len(self.selection) > 4)):
            raise InputError(f"selection rule must be first, random or max:FIELD, got {self.selection!r}")
        if self.bootstrap < 0:
            raise InputError("bootstrap resamples must be ≥ 0")


K_POLICIES = ("all", "subset")


@dataclass(frozen=True)
class Limits:
    """What applies to one candidate. Every row records these values."""

    timeout_s: float = 3.0            # wall clock from start of the candidate to the tests' end
    cpu_time_s: float | None = None   # RLIMIT_CPU of the candidate; default: ceil(timeout) + 1
    memory_mb: int = 512              # RLIMIT_AS of the candidate (and of the test process)
    cpus: float = 1.0                 # CPU quota of the container
    pids: int = 64                    # processes the candidate may have (container pids limit minus overhead)
    output_bytes: int = 1 << 20       # stdout + stderr of the candidate
    file_size_bytes: int = 16 << 20   # RLIMIT_FSIZE
    open_files: int = 256             # RLIMIT_NOFILE
    tmpfs_mb: int = 64                # the writable /tmp of the container
    # Languages with a compile step (C++, Rust, Go, Java, TypeScript): the compiler's own limits. Its
    # output limit is output_bytes, its file size limit file_size_bytes, as for the program.
    compile_timeout_s: float = 30.0   # wall clock of the compile step (its CPU limit: ceil(this) + 1)
    compile_memory_mb: int = 1024     # memory of the compile step (watched in the container's cgroup)

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name == "cpu_time_s":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise InputError(f"limit {f.name} must be a positive number, got {value!r}")

    @property
    def effective_cpu_time_s(self) -> int:
        if self.cpu_time_s is not None:
            return max(1, math.ceil(self.cpu_time_s))
        return math.ceil(self.timeout_s) + 1

    @property
    def container_memory_mb(self) -> int:
        # The candidate has RLIMIT_AS = memory_mb and the test process that + TEST_TRANSPORT_MB (room for
        # a large value while it crosses), the supervisor's processes need about 128 MB, and files in the
        # /tmp tmpfs are memory too. Memory a candidate holds outside its address space (memfd, shared
        # memory) is bounded by this limit: the candidate is the kernel's OOM victim (oom_score_adj 1000)
        # and is then failed with memory_limit.
        return 2 * int(self.memory_mb) + TEST_TRANSPORT_MB + 128 + int(self.tmpfs_mb)

    def native_container_memory_mb(self, server_keep_mb: int = 0) -> int:
        # A program in another language has no test process: the compile step or the program (the larger
        # of the two limits; each is watched against its own) beside what a compile server may keep
        # between jobs, the supervisor's processes and /tmp.
        return max(int(self.memory_mb) + int(server_keep_mb), int(self.compile_memory_mb)) + 128 + int(self.tmpfs_mb)

    def for_supervisor(self) -> dict:
        return {"timeout_s": float(self.timeout_s), "cpu_time_s": self.effective_cpu_time_s,
                "memory_mb": int(self.memory_mb), "output_bytes": int(self.output_bytes),
                "file_size_bytes": int(self.file_size_bytes), "open_files": int(self.open_files)}


def default_base_image() -> str:
    """The base image passk's image is built on: PASSK_BASE_IMAGE (e.g. python:3.11-slim where a
    registry is reachable), else the one scripts/bootstrap_base_image.sh builds offline."""
    return os.environ.get("PASSK_BASE_IMAGE", DEFAULT_BASE_IMAGE)


PYTHONS = ("auto", "cpython", "pypy")


@dataclass(frozen=True)
class SandboxSettings:
    backend: str = "docker"
    runtime: str = "runc"
    isolation: str = "pooled"
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    base_image: str = field(default_factory=default_base_image)
    image: str | None = None            # use this image as is instead of building passk's
    jobs_per_container: int = 2000      # a pooled container is replaced after this many candidates (~0.28 s of CPU to replace)
    max_attempts: int = 3               # attempts per candidate when the infrastructure fails
    # How jobs and results travel between passk and a container: "socket" (a unix socket bind-mounted from
    # the host, per container), "attach" (Docker's attach stream, through the engine) or "auto" (socket
    # where it can be used: a local engine and runc; gVisor refuses host sockets without --host-uds=open).
    transport: str = "auto"
    # Whether each worker's containers are kept to CPUs of their own (docs/performance.md): "auto" (when the
    # engine is on this machine and the workers, each with the CPUs its quota needs, fit in the CPUs this
    # process may use) or "off". A hand-off between a candidate and its tests on one CPU costs a fraction of
    # one between two CPUs; the choice, and why, is in the manifest (facts: cpu_pinning).
    pin_cpus: str = "auto"
    # The candidates' language: its image (containers/languages/<language>/ on passk's). None: taken from
    # the problem file; "python" runs passk's own image.
    language: str | None = None
    # Another language's commands instead of MultiPL-E's: {language: {compile: [argv], run: [argv]}} (either
    # may be left out; compile null: no compile step). Recorded in every row (limits.commands).
    commands: dict | None = None
    # Where candidates run: "local" (this machine's Docker engine, `workers` at once) or "ray" (every node
    # of a Ray cluster, each with its own Docker engine and `workers` warm containers; harness/execution/ray_executor.py).
    executor: str = "local"
    ray_address: str | None = None      # with "ray": the cluster's address (None: RAY_ADDRESS, else a new local one)
    # The Python libraries the candidates get (harness/inputs/libraries.py): a shipped environment's name
    # (bigcodebench, tabular), a requirements file of exact pins, "none", or None: BigCodeBench's for
    # BigCodeBench tasks whose `libs` go beyond the standard library, else none.
    environment: str | None = None
    # The Python that runs io programs in Python (judged problems, CodeContests, ...): "auto" (the one the
    # problem's format assumes: PyPy for a Kattis package, whose limits are set for it; CPython otherwise),
    # "cpython" (passk's image, forked warm) or "pypy" (Debian's pypy3). Recorded in every row.
    python: str = "auto"
    # Set by passk (never by a user) on the executor of one repository environment's candidates: the
    # environment (inputs/repos/recipes.py RepoEnvironment, to_settings), whose image its containers run.
    repo_environment: dict | None = None
    # Set by passk (never by a user) on the executor of one language's projects (Exercism exercises: the
    # project channel): the language whose project image (containers/projects/<language>/) its containers run.
    project: str | None = None
    # Lanes beyond `workers` (containers of their own, sharing the workers' CPUs) that a job with a deadline
    # (Job.overflow_at; passk serve's /run_code) may take once it has waited long enough for a worker:
    # a program that sleeps or loops until its wall-clock limit then does not hold back the requests
    # behind it. 0: none (evaluate, run: every job waits for a worker).
    overflow: int = 0

    @property
    def io_python(self) -> str:
        """The language an io program in Python runs as (its image): python (CPython), pypy, or auto (the
        problem's judge says which: jobs.Job.language)."""
        return {"pypy": "pypy", "cpython": "python"}.get(self.python, "auto")

    def __post_init__(self):
        if self.python not in PYTHONS:
            raise InputError(f"python must be one of {', '.join(PYTHONS)}, got {self.python!r}")
        if not runtime_ok(self.runtime):
            raise InputError(f"runtime must be one of {', '.join(RUNTIMES)} or runsc-<variant>, got {self.runtime!r}")
        if self.isolation not in ISOLATIONS:
            raise InputError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {self.isolation!r}")
        if self.pin_cpus not in PIN_CPUS:
            raise InputError(f"pin_cpus must be one of {', '.join(PIN_CPUS)}, got {self.pin_cpus!r}")
        if self.transport not in TRANSPORTS:
            raise InputError(f"transport must be one of {', '.join(TRANSPORTS)}, got {self.transport!r}")
        if self.language is not None:
            from harness.inputs.languages import canonical
            if not isinstance(self.language, str):
                raise InputError(f"language must be a string, got {self.language!r}")
            object.__setattr__(self, "language", canonical(self.language))
        if self.executor not in EXECUTORS:
            raise InputError(f"executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r}")
        if self.ray_address is not None and (not isinstance(self.ray_address, str) or not self.ray_address):
            raise InputError(f"ray_address must be an address (host:port, or ray://host:port), got {self.ray_address!r}")
        if self.environment is not None:
            from harness.inputs.libraries import check_spec
            check_spec(self.environment)
        if self.commands is not None:
            from harness.inputs.languages import check_commands
            check_commands(self.commands)
        for name in ("workers", "jobs_per_container", "max_attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a whole number ≥ 1, got {value!r}")


@dataclass(frozen=True)
class CalibrationSettings:
    """Per-task timeout = max(minimum_s, factor × median wall time of the canonical solution)."""

    factor: float = 3.0
    minimum_s: float = 1.0
    repeats: int = 3

    def __post_init__(self):
        for name in ("factor", "minimum_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InputError(f"calibration {name} must be a positive number, got {v!r}")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or self.repeats < 1:
            raise InputError(f"calibration repeats must be a whole number ≥ 1, got {self.repeats!r}")


@dataclass(frozen=True)
class EvalPlusSettings:
    """The limits EvalPlus derives from the ground truth (HumanEval+ and MBPP+ problems only; see
    groundtruth.py): per input max(min_time_limit_s, gt_time_limit_factor x the ground truth's time on it),
    per check min(task_timeout_s, the sum of those) + 2 s. EvalPlus 0.3.1's defaults: --min-time-limit 1,
    --gt-time-limit-factor 4, EVALPLUS_TIMEOUT_PER_TASK 60."""

    min_time_limit_s: float = 1.0
    gt_time_limit_factor: float = 4.0
    task_timeout_s: float = 60.0

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InputError(f"evalplus {f.name} must be a positive number, got {v!r}")


@dataclass(frozen=True)
class BigCodeBenchSettings:
    """BigCodeBench 0.2.5's rule for its tasks (formats/unittests.py): calibrated programs (the task's
    code_prompt and `pass` first), and its limits in place of passk's: the suite's wall clock max(timeout_s,
    the ground truth's time) + 1 (BIGCODEBENCH_TIMEOUT_PER_TASK, 240), memory_mb of address space
    (max_as_limit, 30 x 1024 MB)."""

    calibrated: bool = True
    timeout_s: float = 240.0
    memory_mb: int = 30 * 1024

    def __post_init__(self):
        if not isinstance(self.calibrated, bool):
            raise InputError(f"bigcodebench calibrated must be true or false, got {self.calibrated!r}")
        for name in ("timeout_s", "memory_mb"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InputError(f"bigcodebench {name} must be a positive number, got {v!r}")


REPO_PINS = ("official", "spec")    # where a repository environment's packages come from


@dataclass(frozen=True)
class RepoSettings:
    """Repository tasks (SWE-bench rows): where the repositories are (`dir`: DIR/<owner>/<name>, bare or with
    a work tree; nothing is fetched), more environment specifications than SWE-bench's (`specs`: a JSON
    file of specs.json's shape), and the limits of one candidate's whole evaluation (the harness's default
    of 1,800 s; memory; processes; `space_mb` of tmpfs for the tree, the environment's copy and /tmp).
    `strict_tests` refuses a patch that touches the tests or their runner (failed test_tampering) and grades
    on the runner's own report where it has one; the default grades as SWE-bench's harness does. `pins`:
    `official` installs SWE-bench's exported environment where it published one for the instance (else the
    spec's packages, resolved), `spec` always resolves the spec's packages. `snapshots`: each instance is set
    up and installed once and copied for each candidate (environments/instances.py), rather than set up in
    every candidate's container. `known_differences`: the PASS_TO_PASS tests that cannot pass in the sandbox
    (inputs/repos/known.json: they need the network) are set aside, each named on the row; false counts
    them as the harness does."""

    dir: str | None = None
    specs: str | None = None
    timeout_s: float = 1800.0
    memory_mb: int = 8192
    pids: int = 1024
    space_mb: int = 4096
    strict_tests: bool = False
    pins: str = "official"
    snapshots: bool = True
    known_differences: bool = True

    def __post_init__(self):
        for name in ("dir", "specs"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                raise InputError(f"repos {name} must be a path, got {v!r}")
        for name in ("timeout_s", "memory_mb", "pids", "space_mb"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InputError(f"repos {name} must be a positive number, got {v!r}")
        if not isinstance(self.strict_tests, bool):
            raise InputError(f"repos strict_tests must be true or false, got {self.strict_tests!r}")
        for name in ("snapshots", "known_differences"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"repos {name} must be true or false, got {getattr(self, name)!r}")
        if self.pins not in REPO_PINS:
            raise InputError(f"repos pins must be one of {', '.join(REPO_PINS)}, got {self.pins!r}")

    def limits(self, base: "Limits") -> "Limits":
        """One candidate's limits: the whole evaluation's wall clock and CPU, memory, processes, output (the
        log) and files; open files and CPUs as the run's."""
        return replace(base, timeout_s=float(self.timeout_s), cpu_time_s=float(self.timeout_s),
                       memory_mb=int(self.memory_mb), pids=int(self.pids), output_bytes=128 << 20,
                       file_size_bytes=int(self.space_mb) << 20, open_files=max(int(base.open_files), 4096),
                       tmpfs_mb=int(self.space_mb))


@dataclass(frozen=True)
class RunConfig:
    problems: str
    samples: str
    out: str
    k: tuple[int, ...] = DEFAULT_K
    limits: Limits = field(default_factory=Limits)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    scoring: ScoringOptions | None = None
    calibration: CalibrationSettings | None = None   # per-task timeouts from the canonical solutions
    generation: dict | None = None                    # how the samples were made; kept verbatim
    problems_format: str | None = None                # force a problem format (None: read it from the fields)
    channel: str = "auto"                             # force proxy or in_process where a problem's tests can run there
    sample_options: SampleOptions = field(default_factory=SampleOptions)  # stop tokens, code extraction
    evalplus: EvalPlusSettings = field(default_factory=EvalPlusSettings)  # HumanEval+ / MBPP+ time limits
    bigcodebench: BigCodeBenchSettings = field(default_factory=BigCodeBenchSettings)  # BigCodeBench's rule
    check_ground_truth: bool = False                  # run each task's canonical solution first and report
    ceilings: Ceilings = field(default_factory=Ceilings)  # the most a package or a row may state (untrusted.py)
    repos: RepoSettings = field(default_factory=RepoSettings)  # repository tasks: repositories, specs, limits
    project_timeout_s: float = 180.0                  # projects (Exercism exercises): one test command's wall clock (aider's)

    def __post_init__(self):
        if (isinstance(self.project_timeout_s, bool) or not isinstance(self.project_timeout_s, (int, float))
                or not math.isfinite(self.project_timeout_s) or self.project_timeout_s <= 0):
            raise InputError(f"project_timeout_s must be a positive number, got {self.project_timeout_s!r}")
        if not isinstance(self.check_ground_truth, bool):
            raise InputError(f"check_ground_truth must be true or false, got {self.check_ground_truth!r}")
        if self.channel not in ("auto", "proxy", "in_process"):
            raise InputError(f"channel must be auto, proxy or in_process, got {self.channel!r}")

    def scoring_options(self) -> ScoringOptions:
        return self.scoring or ScoringOptions(ks=tuple(self.k))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["k"] = list(self.k)
        d["scoring"] = asdict(self.scoring_options())
        d["scoring"]["ks"] = list(self.k)
        return d


def parse_k_list(text: str, origin: str = "--k") -> tuple[int, ...]:
    """'1,10,100' -> (1, 10, 100). Every k must be a whole number ≥ 1."""
    parts = [p.strip() for p in str(text).split(",")]
    ks = []
    for p in parts:
        if not p.isdigit() or int(p) < 1:
            raise InputError(f"{origin}: k must be whole numbers ≥ 1 separated by commas, got {text!r}")
        ks.append(int(p))
    return tuple(sorted(set(ks)))


def suggest(name: str, valid) -> str:
    close = difflib.get_close_matches(name, list(valid), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


# ------------------------------------------------------------------------------------------------
# YAML run configs (`passk run CONFIG.yaml`). Paths in the file are relative to the file itself.
# ------------------------------------------------------------------------------------------------
TOP_KEYS = ("problems", "samples", "out", "k", "limits", "sandbox", "scoring", "calibration", "generation",
            "problems_format", "channel", "sample_options", "evalplus", "bigcodebench",
            "check_ground_truth", "ceilings", "repos", "project_timeout_s")
SCORING_KEYS = ("k_policy", "selection", "seed", "bootstrap")


def _check_keys(section: dict, valid, where: str) -> None:
    if not isinstance(section, dict):
        raise InputError(f"{where}: expected a mapping, got {type(section).__name__}")
    for key in section:
        if key not in valid:
            raise InputError(f"{where}: unknown key '{key}'{suggest(str(key), valid)}")


def _section(cls, data: dict, where: str, valid=None, **fixed):
    """cls(**data, **fixed), with unknown keys and invalid values named as being in `where`."""
    _check_keys(data, valid if valid is not None else [f.name for f in fields(cls)], where)
    try:
        return cls(**data, **fixed)
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def _set_dotted(data: dict, dotted: str, value, origin: str) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise InputError(f"{origin}: '{part}' is not a section")
    node[parts[-1]] = value


def load_config(path: str, sets=(), overrides: dict | None = None) -> RunConfig:
    """YAML file < --set key=value < explicit overrides (the command line's own flags)."""
    import yaml
    from pathlib import Path

    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    data = load_yaml(p, p.read_bytes())   # bounded: size, depth, aliases
    if data is None:
        raise InputError(f"{p}: empty config")
    if not isinstance(data, dict):
        raise InputError(f"{p}: expected a mapping at the top level")
    for item in sets:
        if "=" not in item:
            raise InputError(f"--set {item!r}: expected key=value")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        top = key.split(".")[0]
        if top not in TOP_KEYS:
            raise InputError(f"--set {key}: unknown key '{top}'{suggest(top, TOP_KEYS)}")
        _set_dotted(data, key, value, f"--set {key}")
    overrides = dict(overrides or {})
    cli_out = overrides.pop("out", None)
    for key, value in overrides.items():
        if value is not None:
            _set_dotted(data, key, value, key)
    _check_keys(data, TOP_KEYS, str(p))
    base = p.resolve().parent

    def path_of(key):
        if key not in data or not isinstance(data[key], str):
            raise InputError(f"{p}: '{key}' must be a path (a string)")
        q = Path(data[key])
        return str(q if q.is_absolute() else (base / q).resolve())

    k = data.get("k", list(DEFAULT_K))
    if isinstance(k, int):
        k = [k]
    if not isinstance(k, list):
        k = str(k).split(",")
    ks = parse_k_list(",".join(str(x) for x in k), f"{p}: k")
    scoring_opts = _section(ScoringOptions, data.get("scoring") or {}, f"{p}: scoring", SCORING_KEYS, ks=ks)
    calibration = data.get("calibration")
    generation = data.get("generation")
    if generation is not None and not isinstance(generation, dict):
        raise InputError(f"{p}: generation must be a mapping (free-form metadata)")
    if cli_out is not None:
        out = str(Path(cli_out))  # relative to the working directory, like any command-line path
    elif isinstance(data.get("out"), str):
        out = path_of("out")
    else:
        raise InputError(f"{p}: no output directory: set 'out' in the file or pass --out")
    return RunConfig(
        problems=path_of("problems"), samples=path_of("samples"),
        out=out,
        k=ks,
        limits=_section(Limits, data.get("limits") or {}, f"{p}: limits"),
        sandbox=_section(SandboxSettings, data.get("sandbox") or {}, f"{p}: sandbox"),
        scoring=scoring_opts,
        calibration=_section(CalibrationSettings, calibration, f"{p}: calibration") if calibration else None,
        generation=generation,
        problems_format=_optional_str(data, "problems_format", p),
        channel=_optional_str(data, "channel", p) or "auto",
        sample_options=_section(SampleOptions, data.get("sample_options") or {}, f"{p}: sample_options"),
        evalplus=_section(EvalPlusSettings, data.get("evalplus") or {}, f"{p}: evalplus"),
        bigcodebench=_section(BigCodeBenchSettings, data.get("bigcodebench") or {}, f"{p}: bigcodebench"),
        check_ground_truth=data.get("check_ground_truth", False),
        project_timeout_s=data.get("project_timeout_s", 180.0),
        ceilings=_section(Ceilings, data.get("ceilings") or {}, f"{p}: ceilings"),
        repos=_repo_section(data.get("repos") or {}, base, p),
    )


def _repo_section(section: dict, base, p) -> RepoSettings:
    """The repos section, its paths relative to the config file."""
    from pathlib import Path
    _check_keys(section, [f.name for f in fields(RepoSettings)], f"{p}: repos")
    section = dict(section)
    for key in ("dir", "specs"):
        if isinstance(section.get(key), str):
            q = Path(section[key])
            section[key] = str(q if q.is_absolute() else (base / q).resolve())
    return _section(RepoSettings, section, f"{p}: repos")


def _optional_str(data: dict, key: str, p) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(f"{p}: '{key}' must be a string")
    return value


def config_from_dict(config: dict) -> RunConfig:
    """Rebuild a RunConfig from a manifest's resolved config (for reproduce and audit)."""
    scoring = dict(config.get("scoring") or {})
    ks = tuple(config.get("k") or DEFAULT_K)
    scoring.pop("ks", None)
    scoring.pop("exclude_errors", None)
    cal = config.get("calibration")
    return RunConfig(problems=config["problems"], samples=config["samples"], out=config["out"], k=ks,
                     limits=Limits(**config.get("limits", {})), sandbox=SandboxSettings(**config.get("sandbox", {})),
                     scoring=ScoringOptions(ks=ks, **scoring),
                     calibration=CalibrationSettings(**cal) if cal else None,
                     generation=config.get("generation"), problems_format=config.get("problems_format"),
                     channel=config.get("channel") or "auto",
                     sample_options=SampleOptions(**(config.get("sample_options") or {})),
                     evalplus=EvalPlusSettings(**(config.get("evalplus") or {})),
                     bigcodebench=BigCodeBenchSettings(**(config.get("bigcodebench") or {})),
                     check_ground_truth=bool(config.get("check_ground_truth", False)),
                     ceilings=Ceilings(**(config.get("ceilings") or {})),
                     repos=RepoSettings(**(config.get("repos") or {})),
                     project_timeout_s=config.get("project_timeout_s", 180.0))
