"""A judged problem's time limit where its format infers it from its own submissions (Kattis packages with
neither a .timelimit file nor limits.time_limit): as problemtools computes it (checks/submissions.py,
_compute_time_limit), the slowest accepted submission's slowest test T (CPU seconds), times the package's
multiplier (legacy time_multiplier, default 5; 2023-07 on ac_to_time_limit, default 2), rounded up to a
whole multiple of time_resolution (default 1 s) and at least one of it. The accepted submissions are run
first under a generous limit (the format's cap); the limit found is recorded in the manifest (a resumed or
reproduced run uses it, never measures again) and in every row (limits.time_limit_s, limits.time_source)."""

from __future__ import annotations

import math
from dataclasses import replace

from harness.core.errors import InputError
from harness.execution.jobs import Job

PROBE_LIMIT_S = 10.0   # the accepted submissions' limit while the time limit is found


def needs_inference(problems: dict) -> list:
    return [t for t, p in problems.items() if p.judge is not None and p.judge.time_source == "inferred"]


def rule_limit(slowest_s: float, multiplier: float, resolution: float) -> float:
    """problemtools' rule: max(1, ceil(slowest x multiplier / resolution)) x resolution."""
    return max(1, math.ceil(slowest_s * multiplier / resolution)) * resolution


def infer(problems: dict, samples: list, executor, known: dict | None = None) -> tuple[dict, dict]:
    """(problems with their inferred limits, {task: how it was found}). `known`: a manifest's earlier
    findings, used as they are."""
    known = dict(known or {})
    found, out = {}, dict(problems)
    tasks = needs_inference(problems)
    todo = [t for t in tasks if t not in known]
    futures = {}
    for t in todo:
        accepted = [s for s in samples if s.task_id == t and s.extra.get("expected") == "accepted"]
        if not accepted:
            raise InputError(f"{problems[t].notes.get('path', t)}: no time limit (.timelimit or limits.time_limit) "
                             "and no accepted submission to infer it from")
        probe = replace(problems[t], judge=replace(problems[t].judge, time_limit_s=PROBE_LIMIT_S))
        futures[t] = [executor.submit_job(Job(probe, s)) for s in accepted]
    for t in todo:
        rows = [f.result() for f in futures[t]]
        passing = [r for r in rows if r.status == "passed"]
        if not passing:
            bad = rows[0]
            raise InputError(f"{t}: no accepted submission passes under the {PROBE_LIMIT_S:g} s probe limit "
                             f"({bad.sample.get('file', bad.sample_index)}: {bad.reason}); the time limit cannot "
                             "be inferred")
        slowest = max((x.get("time_s") or 0.0) for r in passing for x in (r.tests or ()))
        k = problems[t].notes["kattis"]
        limit = rule_limit(slowest, k["time_multiplier"], k["time_resolution"])
        known[t] = {"time_limit_s": limit, "slowest_accepted_s": slowest, "accepted": len(passing),
                    "multiplier": k["time_multiplier"], "resolution": k["time_resolution"],
                    # as problemtools leaves out a submission that does not compile: named, not used
                    "not_passing": [f"{r.sample.get('file', r.sample_index)}: {r.status} {r.reason}"
                                    for r in rows if r.status != "passed"]}
    for t in tasks:
        entry = known[t]
        found[t] = entry
        out[t] = replace(problems[t], judge=replace(problems[t].judge, time_limit_s=float(entry["time_limit_s"]),
                                                    time_source="inferred from the accepted submissions"))
    return out, found
