"""A job (one candidate's program and its problem, with the limits that apply) and what the host derives
from it for the sandbox: the limits record every row carries, and how long the host waits for it."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from harness.containers.box.protocol import IO_TOTAL_FACTOR, TRANSPORT_CAP
from harness.inputs.config import Limits
from harness.inputs.problem import Problem
from harness.inputs.samples import Sample


@dataclass(frozen=True)
class Job:
    problem: Problem
    sample: Sample
    limits: Limits | None = None                                # None: the run's limits
    note: dict = field(default_factory=dict, compare=False)     # recorded in the row's limits (e.g. calibration)
    differential: dict | None = field(default=None, compare=False)  # EvalPlus: inputs, expected, limits (groundtruth.py)
    checker: dict | None = field(default=None, compare=False)   # a judged problem's checker program, as sent
    # A caller with a deadline (passk serve): the job must start by `start_by` (time.monotonic()) or it
    # fails with Late, never starting; from `overflow_at` on it may take one of the executor's overflow
    # lanes when every worker slot is busy (SandboxSettings.overflow). None: it waits its turn.
    start_by: float | None = field(default=None, compare=False)
    overflow_at: float | None = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.sample.task_id, self.sample.sample_index)

    def stamp(self, row, attempt: int, run_id: str):
        """What every row of this job carries whoever made it (the pool from the supervisor's result, an
        executor for a candidate that never ran): its candidate, the attempt, the run and when it finished."""
        from harness.records.manifest import now
        row.candidate_sha256 = self.sample.sha256
        row.sample = self.sample.row_fields()
        row.attempt = attempt
        row.run_id = run_id
        row.finished_at = now()
        return row

    def language(self, python: str = "python") -> str:
        """The language the program runs in (its image): an io program's own (its sample says it; Python,
        run by `python`, when it says nothing), else its problem's. `python` "auto": the Python the problem's
        judge assumes (PyPy for a Kattis package), else CPython."""
        if self.problem.channel == "io":
            language = self.sample.language or "python"
            if language != "python":
                return language
            if python == "auto":
                spec = self.problem.judge
                return "pypy" if spec is not None and spec.python == "pypy" else "python"
            return python
        return self.problem.language


def judge_limits(base: Limits, spec) -> Limits:
    """A judged problem's limits (inputs/judge.py JudgeSpec), on the run's others (CPU quota, processes,
    files): its CPU time per test (the verdict compares the CPU used with the exact limit; RLIMIT_CPU is
    whole seconds, a backstop), the wall-clock backstop, its memory and output limits."""
    # RLIMIT_CPU one second past the limit (as problemtools sets it): a program it stops has used more
    return replace(base, timeout_s=spec.wall_limit_s, cpu_time_s=math.ceil(spec.time_limit_s) + 1, memory_mb=int(spec.memory_mb),
                   output_bytes=int(spec.output_mb) << 20)


def run_limits(base: Limits, problems) -> Limits:
    """The limits that size a run's containers: the run's, raised to what its judged problems set (each
    job then carries its own, within these): memory, output, and /tmp room for a test's files."""
    specs = [p.judge for p in problems if getattr(p, "judge", None) is not None]
    if not specs:
        return base
    biggest = max(len(t.input) + len(t.answer) for spec in specs for t in spec.tests) >> 20
    return replace(base, memory_mb=max(base.memory_mb, *(s.memory_mb for s in specs)),
                   output_bytes=max(base.output_bytes, *(s.output_mb << 20 for s in specs)),
                   tmpfs_mb=max(base.tmpfs_mb, 2 * biggest + max(s.output_mb for s in specs) * 2 + 64))


def limits_record(limits: Limits, facts: dict) -> dict:
    """Everything that applied to a candidate, as its row records it."""
    native = facts.get("language") not in (None, "python")
    own = {k: v for k, v in asdict(limits).items() if native or not k.startswith("compile_")}
    return {**own, "cpu_time_s": limits.effective_cpu_time_s,
            "container_memory_mb": facts.get("container_memory_mb", limits.container_memory_mb),
            "network": "none", "container_pids": facts.get("container_pids"),
            "runtime": facts["runtime"], **({"runtime_detail": facts["runtime_detail"]} if facts.get("runtime_detail") else {}),
            "isolation": facts["isolation"],
            "image": facts["image"], "image_id": facts["image_id"], "hash_seed": 0,
            **({"language": facts["language"], "toolchain": facts.get("toolchain"),
                "memory_enforced": facts.get("memory_enforced"), "commands": facts.get("commands")}
               if native else {}),
            **({"environment": {"name": facts["environment"]["name"], "sha256": facts["environment"]["sha256"]}}
               if facts.get("environment") else {})}


def host_wait_s(part: dict) -> float:
    """How long the supervisor may spend on a job inside the job's own limits: another language's steps
    one after the other (the compile step's own wall clock, then the run's), an io job's tests together
    (IO_TOTAL_FACTOR x the limit, and the one test that may start just before that), a proxy job's
    transport credit (TRANSPORT_CAP x the limit). The host waits this, plus its grace, before it calls the
    container lost: a job inside its limits never becomes `error`."""
    limits = part["limits"]
    timeout = float(limits["timeout_s"])
    if part.get("build"):
        return sum(float((step.get("limits") or limits)["timeout_s"]) for step in part["build"]["steps"])
    if part.get("channel") == "io":
        judge = part.get("judge")
        if judge is not None:   # every test may run to its backstop, and its checker to its own
            checker = (judge.get("checker") or {}).get("limits") or {}
            per_test = timeout + float(checker.get("timeout_s", 0.0))
            return 120.0 + per_test * max(1, len(part.get("tests") or ()))
        return (IO_TOTAL_FACTOR + 1) * timeout
    if part.get("channel") == "proxy":
        return (TRANSPORT_CAP + 1) * timeout
    return timeout
