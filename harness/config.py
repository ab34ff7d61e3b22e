"""One run configuration, parsed and checked once at the edge. Precedence: CLI > YAML > defaults."""

from __future__ import annotations

import difflib
import math
import os
from dataclasses import asdict, dataclass, field, fields, replace

from .constants import DEFAULT_BASE_IMAGE, DEFAULT_K, ISOLATIONS, RUNTIMES
from .errors import InputError
from .scoring import ScoringOptions


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
        # The candidate and the test process each have RLIMIT_AS = memory_mb; the cgroup is a backstop.
        return 2 * int(self.memory_mb) + 128

    def for_supervisor(self) -> dict:
        return {"timeout_s": float(self.timeout_s), "cpu_time_s": self.effective_cpu_time_s,
                "memory_mb": int(self.memory_mb), "output_bytes": int(self.output_bytes),
                "file_size_bytes": int(self.file_size_bytes), "open_files": int(self.open_files)}


@dataclass(frozen=True)
class SandboxSettings:
    backend: str = "docker"
    runtime: str = "runc"
    isolation: str = "pooled"
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    base_image: str = DEFAULT_BASE_IMAGE
    image: str | None = None            # use this image as is instead of building passk's
    jobs_per_container: int = 500       # a pooled container is replaced after this many candidates
    max_attempts: int = 3               # attempts per candidate when the infrastructure fails

    def __post_init__(self):
        if self.runtime not in RUNTIMES:
            raise InputError(f"runtime must be one of {', '.join(RUNTIMES)}, got {self.runtime!r}")
        if self.isolation not in ISOLATIONS:
            raise InputError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {self.isolation!r}")
        for name in ("workers", "jobs_per_container", "max_attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a whole number ≥ 1, got {value!r}")


@dataclass(frozen=True)
class RunConfig:
    problems: str
    samples: str
    out: str
    k: tuple[int, ...] = DEFAULT_K
    limits: Limits = field(default_factory=Limits)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    scoring: ScoringOptions | None = None

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


def override(obj, origin: str, **values):
    """Replace fields of a frozen config object, rejecting unknown names with a suggestion."""
    names = {f.name for f in fields(obj)}
    for key in values:
        if key not in names:
            raise InputError(f"{origin}: unknown key '{key}'{suggest(key, names)}")
    return replace(obj, **values)
