"""Audit a finished run: did the limits, rather than the code, decide labels?

- relaxed: rerun every candidate a limit ended, with the limits multiplied by each factor;
- margins: how close passing candidates came to their time limit;
- canonical: whether each problem's own solution passes under the limits, and how fast;
- flaky: rerun timed-out candidates and a seeded sample of the rest N times; report label changes.
"""

from __future__ import annotations

import random
import statistics
import uuid
from harness.core import text
from dataclasses import replace
from pathlib import Path

from harness.execution.calibrate import calibrated_limits, ground_truth_lines, ground_truth_rate, measure_canonical
from harness.inputs.config import Limits, config_from_dict
from harness.execution import groundtruth
from harness.core.constants import GROUND_TRUTH_FILE, RESULTS_FILE, TIMED_OUT
from harness.core.errors import InputError
from harness.execution.jobs import Job
from harness.execution.dispatch import execute
from harness.records.manifest import now, write_json
from harness.inputs.formats.unittests import apply_rule
from harness.inputs.problems import load_problems
from harness.records.manifest import load_manifest
from harness.records.results import latest_rows, read_rows
from harness.inputs.samples import load_samples
from harness.scoring.score import score_rows, time_shares
from harness.run.time_limits import infer as infer_time_limits, needs_inference

AUDIT_FILE = "audit.json"
LIMIT_REASONS = {"wall_time_limit", "cpu_time_limit", "memory_limit", "output_limit", "file_size_limit",
                 "input_time_limit",   # an EvalPlus input past its ground-truth-relative limit
                 "time_limit", "idleness_limit"}   # a judged problem's own limits


def limit_decided(row) -> bool:
    return row.status == TIMED_OUT or row.reason in LIMIT_REASONS


def relax(limits: Limits, factor: float) -> Limits:
    return replace(limits, timeout_s=limits.timeout_s * factor, cpu_time_s=limits.effective_cpu_time_s * factor,
                   memory_mb=int(limits.memory_mb * factor), output_bytes=int(limits.output_bytes * factor),
                   file_size_bytes=int(limits.file_size_bytes * factor))


def relax_judged(problem, factor: float):
    """A judged problem with its time, memory and output limits multiplied by `factor`."""
    spec = problem.judge
    if factor == 1.0:
        return problem
    return replace(problem, judge=replace(spec, time_limit_s=spec.time_limit_s * factor,
                                          memory_mb=int(spec.memory_mb * factor), output_mb=int(spec.output_mb * factor)))


def audit(run_dir, factors=(2.0, 4.0), repeat: int = 0, seed: int = 0, sample: int = 50,
          progress: bool = False, workers: int | None = None) -> dict:
    run_dir = Path(run_dir)
    manifest = load_manifest(run_dir)
    cfg = config_from_dict(manifest["config"])
    if workers:
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, workers=workers))
    problems = apply_rule(load_problems(cfg.problems, cfg.problems_format, cfg.channel), cfg.bigcodebench)
    if any(p.channel == "repo" for p in problems.values()):   # repository tasks: their trees and environments
        from harness.inputs.repos.tasks import prepare
        problems = prepare(problems, cfg.repos, cfg.limits)
    samples = {(s.task_id, s.sample_index): s
               for s in load_samples(cfg.samples, problems, cfg.generation, cfg.sample_options)}
    if needs_inference(problems):   # the time limits the run inferred (a Kattis package's), as it used them
        if not all(t in (manifest.get("time_limits") or {}) for t in needs_inference(problems)):
            raise InputError(f"{run_dir}: its manifest does not record the time limits it inferred; resume the run first")
        problems, _ = infer_time_limits(problems, [], None, manifest["time_limits"])
    rows = latest_rows(read_rows(run_dir / RESULTS_FILE))
    if any(r.status == "error" for r in rows.values()):
        raise InputError(f"{run_dir}: has candidates with status error; resume the run before auditing it")
    missing = [k for k in rows if k not in samples]
    if missing:
        raise InputError(f"{run_dir}: results name candidates the samples file no longer has, e.g. {missing[0]}")
    calibration = manifest.get("calibration")
    truth = _ground_truth(run_dir, manifest)

    def limits_for(task_id: str) -> Limits:
        return calibrated_limits(cfg.limits, calibration[task_id]) if calibration and task_id in calibration else cfg.limits

    def job(t: str, i: int, factor: float = 1.0) -> Job:
        """The candidate's job with every limit x factor (an EvalPlus task's per-input limits and caps too)."""
        problem = problems[t]
        if problem.runner == "evalplus":
            return groundtruth.judge_job(problem, samples[(t, i)], truth, cfg.limits, cfg.evalplus, factor=factor,
                                         limits=relax(cfg.limits, factor))
        if problem.judge is not None:   # a judged problem's own limits, each x factor (the CPU limit's backstop too)
            return Job(relax_judged(problem, factor), samples[(t, i)])
        if problem.channel == "repo":   # a repository task's whole evaluation, each limit x factor
            return Job(problem, samples[(t, i)], relax(problem.repo.limits, factor))
        return Job(problem, samples[(t, i)], relax(limits_for(t), factor))

    result = {"run": str(run_dir), "created_at": now(), "factors": list(factors)}
    original = score_rows(list(rows.values()), options=replace(cfg.scoring_options(), ks=tuple(cfg.k)))
    result["original_pass_at_k"] = original["pass_at_k"]
    targets = [k for k, r in rows.items() if limit_decided(r)]
    result["limit_decided"] = len(targets)
    result["relaxed"] = []
    for f in factors:
        reran = _run(cfg, [job(t, i, f) for t, i in targets], relax(cfg.limits, f), progress)
        flips = [{"task_id": t, "sample_index": i, "from": rows[(t, i)].status, "to": reran[(t, i)].status,
                  "from_reason": rows[(t, i)].reason, "to_reason": reran[(t, i)].reason,
                  **({"from_base": rows[(t, i)].base_status, "to_base": reran[(t, i)].base_status}
                     if rows[(t, i)].base_status is not None else {})}
                 for (t, i) in targets if reran[(t, i)].status != rows[(t, i)].status
                 or reran[(t, i)].base_status != rows[(t, i)].base_status]
        merged = {**rows, **reran}
        relaxed_score = score_rows(list(merged.values()), options=replace(cfg.scoring_options(), ks=tuple(cfg.k)))
        entry = {"factor": f, "rerun": len(targets), "flips": flips,
                 "pass_at_k": relaxed_score["pass_at_k"], "pass_at_k_exact": relaxed_score["pass_at_k_exact"]}
        if truth is not None:   # EvalPlus: how many of its plus (status) and base verdicts the limits decided
            entry["plus_flips"] = sum(1 for x in flips if x["from"] != x["to"])
            entry["base_flips"] = sum(1 for x in flips if x.get("from_base") != x.get("to_base"))
            entry["base_pass_at_k"] = relaxed_score.get("base", {}).get("pass_at_k", {})
        result["relaxed"].append(entry)
    result["margins"] = margins(rows)
    result["canonical"] = canonical(problems, cfg, limits_for)
    result["flaky"] = flaky(cfg, rows, job, repeat, seed, sample, progress) if repeat else {}
    write_json(run_dir / AUDIT_FILE, result)
    from harness.scoring.report import write_report
    write_report(run_dir)
    return result


def _ground_truth(run_dir: Path, manifest: dict):
    """The run's own ground truth (EvalPlus tasks): its limits are the ones relaxed."""
    pinned = (manifest.get("ground_truth") or {}).get("sha256")
    if not pinned:
        return None
    truth = groundtruth.read(run_dir / GROUND_TRUTH_FILE)
    if truth is None or truth.sha256 != pinned:
        raise InputError(f"{run_dir / GROUND_TRUTH_FILE}: missing or not the ground truth this run was judged by")
    return truth


def _run(cfg, jobs: list[Job], base: Limits, progress: bool) -> dict:
    rows = {}
    if jobs:
        execute(jobs, base, cfg.sandbox, "audit-" + uuid.uuid4().hex, lambda r: rows.__setitem__(r.key, r),
                progress=progress)
    return rows


def margins(rows: dict) -> dict:
    ratios = time_shares(rows.values())
    if not ratios:
        return {"passed": 0}
    values = [x for x, _, _ in ratios]
    return {"passed": len(values), "median": statistics.median(values),
            "p90": values[min(len(values) - 1, int(0.9 * len(values)))], "max": values[-1],
            "within_20pct": [{"task_id": t, "sample_index": i, "share_of_limit": round(x, 4)}
                             for x, t, i in ratios if x >= 0.8]}


def canonical(problems, cfg, limits_for) -> dict:
    if not any(p.canonical_solution for p in problems.values()):
        return {"checked": 0, "note": "the problems carry no canonical solutions"}
    measured = measure_canonical(problems, cfg.limits, cfg.sandbox, repeats=1)
    per_task = {t: {**m, "timeout_s": limits_for(t).timeout_s, "share_of_limit": m["wall_s"] / limits_for(t).timeout_s}
                for t, m in measured.items()}
    return {"checked": len(per_task), "per_task": per_task, "pass_rate": ground_truth_rate(measured),
            "cannot_pass": sorted(t for t, m in per_task.items() if not m["passed"]),
            "slowest": sorted(per_task, key=lambda t: -per_task[t]["share_of_limit"])[:10]}


def flaky(cfg, rows, job, repeat, seed, sample, progress) -> dict:
    timed_out = sorted(k for k, r in rows.items() if r.status == TIMED_OUT)
    others = sorted(k for k in rows if k not in set(timed_out))
    rng = random.Random(seed)
    chosen = timed_out + rng.sample(others, min(sample, len(others)))
    changed: dict[tuple, list] = {}
    for _ in range(repeat):
        reran = _run(cfg, [job(t, i) for t, i in chosen], cfg.limits, progress)
        for key in chosen:
            if reran[key].status != rows[key].status:
                changed.setdefault(key, []).append(reran[key].status)
    return {"repeat": repeat, "seed": seed, "checked": len(chosen), "timed_out_checked": len(timed_out),
            "changed": [{"task_id": t, "sample_index": i, "original": rows[(t, i)].status, "reruns": v}
                        for (t, i), v in sorted(changed.items())]}


def format_audit(result: dict) -> str:
    lines = [f"candidates a limit decided: {result['limit_decided']}",
             "original pass@k: " + ", ".join(f"@{k}={v:.4f}" for k, v in result["original_pass_at_k"].items())]
    for rel in result["relaxed"]:
        lines.append(f"limits x{rel['factor']:g}: {len(rel['flips'])} of {rel['rerun']} labels change; pass@k "
                     + ", ".join(f"@{k}={v:.4f}" for k, v in rel["pass_at_k"].items()))
        if "plus_flips" in rel:
            lines.append(f"  EvalPlus: {rel['plus_flips']} plus and {rel['base_flips']} base verdicts flip; base pass@k "
                         + ", ".join(f"@{k}={v:.4f}" for k, v in rel["base_pass_at_k"].items()))
        for f in rel["flips"]:
            lines.append(f"  FLIP {f['task_id']} #{f['sample_index']}: {f['from']} ({f['from_reason']}) -> "
                         f"{f['to']} ({f['to_reason']})")
    m = result["margins"]
    if m.get("passed"):
        lines.append(f"margins: {m['passed']} passing candidates used a median {m['median']:.1%} of their time limit "
                     f"(p90 {m['p90']:.1%}, max {m['max']:.1%}); {len(m['within_20pct'])} passed within 20% of it")
    c = result["canonical"]
    if c.get("checked"):
        lines.append(f"canonical solutions: {c['checked']} checked; cannot pass under the limits: "
                     f"{', '.join(c['cannot_pass']) or 'none'}; slowest: "
                     + ", ".join(f"{t} ({c['per_task'][t]['share_of_limit']:.1%})" for t in c["slowest"][:3]))
        lines += ground_truth_lines(c["per_task"])
    fl = result["flaky"]
    if fl:
        lines.append(f"flakiness: {len(fl['changed'])} of {fl['checked']} candidates changed label over "
                     f"{fl['repeat']} reruns")
        for ch in fl["changed"]:
            lines.append(f"  FLAKY {ch['task_id']} #{ch['sample_index']}: {ch['original']} then {ch['reruns']}")
    return text.terminal_lines(lines)
