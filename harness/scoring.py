"""From recorded labels to pass@k. Pure functions of result rows: no Docker, no files.

pass@k of one task with n candidates of which c passed is 1 − C(n−c, k)/C(n, k) (Chen et al.
2021, unbiased): the chance that a set of k candidates drawn without replacement contains a pass.
It is estimated per task and then averaged over tasks, never pooled across tasks; a k is reported
only when every task has n ≥ k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from .constants import ERROR, FAILED, LABELS, PASSED, TIMED_OUT
from .results import ResultRow, latest_rows

ESTIMATOR = "unbiased pass@k = 1 - C(n-c,k)/C(n,k) per task, exact rational arithmetic, mean over tasks"


def _check(n: int, c: int, k: int) -> None:
    for name, v in (("n", n), ("c", c), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{name} must be an int, got {v!r}")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 ≤ c ≤ n, got n={n}, c={c}")
    if k < 1:
        raise ValueError(f"need k ≥ 1, got k={k}")
    if k > n:
        raise ValueError(f"pass@{k} is undefined for n={n} < k")


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Exact pass@k as a fraction."""
    _check(n, c, k)
    if c == 0:
        return Fraction(0)
    if n - c < k:
        return Fraction(1)
    if k == 1:
        return Fraction(c, n)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k as a float without forming binomials: 1 − ∏_{i=n−c+1}^{n} (1 − k/i)."""
    _check(n, c, k)
    if c == 0:
        return 0.0
    if n - c < k:
        return 1.0
    if k == 1:
        return c / n
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def fraction_text(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


@dataclass
class TaskCounts:
    n: int = 0
    c: int = 0
    failed: int = 0
    timed_out: int = 0
    errors: int = 0

    def as_dict(self) -> dict:
        return {"n": self.n, "c": self.c, "failed": self.failed, "timed_out": self.timed_out, "errors": self.errors}


def count_tasks(rows: list[ResultRow], exclude_errors: bool = False) -> dict[str, TaskCounts]:
    counts: dict[str, TaskCounts] = {}
    for row in latest_rows(rows).values():
        t = counts.setdefault(row.task_id, TaskCounts())
        if row.status == ERROR:
            t.errors += 1
            if exclude_errors:
                continue
        t.n += 1
        if row.status == PASSED:
            t.c += 1
        elif row.status == FAILED:
            t.failed += 1
        elif row.status == TIMED_OUT:
            t.timed_out += 1
    return counts


def _names(tasks: list[str], limit: int = 5) -> str:
    shown = ", ".join(tasks[:limit])
    return shown + (f" and {len(tasks) - limit} more" if len(tasks) > limit else "")


def score_rows(rows: list[ResultRow], ks=(1, 10, 100), problem_ids=None, exclude_errors: bool = False) -> dict:
    """Everything score.json holds, computed from rows alone."""
    latest = latest_rows(rows)
    counts = count_tasks(rows, exclude_errors)
    labels = {label: 0 for label in LABELS}
    reasons: dict[str, int] = {}
    for row in latest.values():
        labels[row.status] += 1
        reasons[f"{row.status}:{row.reason or '-'}"] = reasons.get(f"{row.status}:{row.reason or '-'}", 0) + 1
    error_count = labels[ERROR]
    scored = {t: c for t, c in counts.items() if c.n > 0}
    task_ids = sorted(scored)
    pass_exact: dict[str, str] = {}
    pass_float: dict[str, float] = {}
    omitted: dict[str, str] = {}
    for k in sorted(set(ks)):
        if error_count and not exclude_errors:
            omitted[str(k)] = (f"{error_count} candidates have status 'error' (harness faults, not verdicts); "
                               "rerun to retry them, or score with --exclude-errors")
            continue
        if not task_ids:
            omitted[str(k)] = "no task has candidates"
            continue
        short = [t for t in task_ids if scored[t].n < k]
        if short:
            min_n = min(scored[t].n for t in short)
            omitted[str(k)] = (f"needs n ≥ {k} for every task; {len(short)} of {len(task_ids)} tasks have fewer "
                               f"(smallest n = {min_n}): {_names(short)}")
            continue
        mean = sum((pass_at_k_exact(scored[t].n, scored[t].c, k) for t in task_ids), Fraction(0)) / len(task_ids)
        pass_exact[str(k)] = fraction_text(mean)
        pass_float[str(k)] = float(mean)
    ns = [scored[t].n for t in task_ids]
    result = {
        "estimator": ESTIMATOR,
        "num_tasks": len(task_ids),
        "num_candidates": sum(ns),
        "n_min": min(ns) if ns else 0,
        "n_max": max(ns) if ns else 0,
        "pass_at_k": pass_float,
        "pass_at_k_exact": pass_exact,
        "omitted_k": omitted,
        "labels": labels,
        "reasons": dict(sorted(reasons.items())),
        "errors_remaining": 0 if exclude_errors else error_count,
        "excluded_errors": error_count if exclude_errors else 0,
        "per_task": {t: counts[t].as_dict() for t in sorted(counts)},
    }
    # The one answer a user would receive (sample 0), apart from pass@k, which measures coverage.
    firsts = [latest[(t, 0)] for t in task_ids if (t, 0) in latest and latest[(t, 0)].status != ERROR]
    if firsts:
        ok = sum(1 for r in firsts if r.status == PASSED)
        result["selected_answer"] = {"rule": "first", "tasks": len(firsts),
                                     "success_rate": ok / len(firsts),
                                     "success_rate_exact": fraction_text(Fraction(ok, len(firsts)))}
    if ns and len(set(ns)) > 1:
        total_c = sum(scored[t].c for t in task_ids)
        result["pooled_pass_rate"] = {"value": total_c / sum(ns), "exact": fraction_text(Fraction(total_c, sum(ns))),
                                      "note": "all candidates pooled; not pass@1, which weights each task equally"}
    if problem_ids is not None:
        missing = [t for t in problem_ids if t not in counts]
        result["tasks_without_samples"] = missing
    return result
