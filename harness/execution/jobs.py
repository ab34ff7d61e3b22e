"""A job (one candidate's program and its problem, with the limits that apply) and what the host derives
from it for the sandbox: the limits record every row carries, and how long the host waits for it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

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

    @property
    def key(self) -> tuple[str, int]:
        return (self.sample.task_id, self.sample.sample_index)


def limits_record(limits: Limits, facts: dict) -> dict:
    """Everything that applied to a candidate, as its row records it."""
    native = facts.get("language") not in (None, "python")
    own = {k: v for k, v in asdict(limits).items() if native or not k.startswith("compile_")}
    return {**own, "cpu_time_s": limits.effective_cpu_time_s,
            "container_memory_mb": facts.get("container_memory_mb", limits.container_memory_mb),
            "network": "none", "container_pids": facts.get("container_pids"),
            "runtime": facts["runtime"], "isolation": facts["isolation"],
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
        return (IO_TOTAL_FACTOR + 1) * timeout
    if part.get("channel") == "proxy":
        return (TRANSPORT_CAP + 1) * timeout
    return timeout
