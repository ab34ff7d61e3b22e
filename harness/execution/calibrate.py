"""Calibrated time limits: per task, max(minimum, factor × the canonical solution's wall time),
measured in the same sandbox on this machine. Recorded in the manifest and in every row."""

from __future__ import annotations

import statistics
import uuid
from dataclasses import replace

from harness.inputs.config import CalibrationSettings, Limits, SandboxSettings
from harness.core.constants import PASSED
from harness.execution.jobs import Job
from harness.execution.dispatch import execute
from harness.inputs.formats.unittests import ground_truth_problem
from harness.inputs.problem import Problem
from harness.inputs.samples import Sample


def canonical_jobs(problems: dict[str, Problem], repeats: int, limits: Limits | None = None) -> list[Job]:
    jobs = []
    for p in problems.values():
        p = ground_truth_problem(p)   # a BigCodeBench task's ground truth is not calibrated
        if p.channel == "project":   # an exercise's reference runs as its own tree (inputs/projects.py)
            p = replace(p, project=replace(p.project, reference=True))
        program = p.canonical_program
        if program is None or p.runner == "evalplus":   # EvalPlus tasks have limits of their own
            continue
        for r in range(repeats):
            jobs.append(Job(p, Sample(p.task_id, r, program, "solution", "canonical"), limits))
    return jobs


def measure_canonical(problems: dict[str, Problem], base: Limits, settings: SandboxSettings, repeats: int,
                      evaluator=None) -> dict:
    """Per task: the canonical solution's median wall time and whether it passed every time. With an
    `evaluator` (started), in its warm containers."""
    rows = []
    execute(canonical_jobs(problems, repeats), base, settings, "canonical-" + uuid.uuid4().hex, rows.append,
            evaluator=evaluator)
    by_task: dict[str, list] = {}
    for r in rows:
        by_task.setdefault(r.task_id, []).append(r)
    out = {}
    for task_id, rs in by_task.items():
        out[task_id] = {"wall_s": statistics.median(r.wall_s or 0.0 for r in rs),
                        "max_wall_s": max(r.wall_s or 0.0 for r in rs),
                        "passed": all(r.status == PASSED for r in rs),
                        "labels": sorted({f"{r.status}:{r.reason}" for r in rs}),
                        **next(({"detail": r.detail} for r in rs if r.status != PASSED), {})}
    return out


def ground_truth_rate(measured: dict) -> float:
    return sum(m["passed"] for m in measured.values()) / len(measured) if measured else 0.0


def ground_truth_lines(measured: dict) -> list[str]:
    """The ground truth's pass rate and each failing task with its label and why (BigCodeBench's
    --check-gt-only): an environment problem shows here before a score is trusted."""
    if not measured:
        return ["ground truth: no task carries a canonical solution"]
    passed = sum(m["passed"] for m in measured.values())
    out = [f"ground truth: {passed}/{len(measured)} pass ({passed / len(measured):.1%})"
           + ("" if passed == len(measured) else "; be cautious: a score is only as good as its ground truth")]
    for t, m in measured.items():
        if not m["passed"]:
            out.append(f"  GROUND TRUTH FAILS {t}: {', '.join(m['labels'])}: {m.get('detail', '')[:300]}")
    return out


def calibrate(problems: dict[str, Problem], base: Limits, settings: SandboxSettings,
              cal: CalibrationSettings, evaluator=None) -> dict:
    measured = measure_canonical(problems, base, settings, cal.repeats, evaluator)
    table = {}
    for task_id in problems:
        m = measured.get(task_id)
        if m is None:
            table[task_id] = {"timeout_s": base.timeout_s, "canonical_wall_s": None,
                              "note": "no canonical solution: the configured timeout applies"}
            continue
        table[task_id] = {"timeout_s": round(max(cal.minimum_s, cal.factor * m["wall_s"]), 3),
                          "canonical_wall_s": m["wall_s"], "canonical_passed": m["passed"]}
    return table


def calibrated_limits(base: Limits, entry: dict) -> Limits:
    return replace(base, timeout_s=entry["timeout_s"], cpu_time_s=None)
