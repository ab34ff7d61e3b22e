"""From recorded labels to pass@k. Pure functions of result rows: no Docker, no files.

pass@k of one task with n candidates of which c passed is 1 − C(n−c, k)/C(n, k) (Chen et al.
2021, unbiased): the chance that a set of k candidates drawn without replacement contains a pass.
It is estimated per task and then averaged over tasks, never pooled across tasks; a k is reported
only when every task has n ≥ k.
"""

from __future__ import annotations

import array
import gc
import json
import math
import random
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from harness.core.constants import ERROR, FAILED, LABELS, PASSED, PERMANENT_ERRORS, TIMED_OUT
from harness.core.errors import InputError
from harness.inputs.config import ScoringOptions
from harness.records.results import ResultRow, latest_rows
from harness.scoring.repair import split_tries

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


def count_tasks(rows: list[ResultRow], exclude_errors: bool = False, verdict: str = "status") -> dict[str, TaskCounts]:
    return count_latest(latest_rows(rows), exclude_errors, verdict)


def has_base(latest) -> bool:
    """Whether the rows carry a base verdict as well (EvalPlus: `status` is the plus verdict)."""
    return any(row.base_status is not None for row in latest.values())


def count_latest(latest: dict, exclude_errors: bool = False, verdict: str = "status") -> dict[str, TaskCounts]:
    """Per task (n, c, ...). `verdict` "base": c counts the rows whose base verdict passed (EvalPlus's
    base score; `status` is its plus verdict)."""
    counts: dict[str, TaskCounts] = {}
    for row in latest.values():
        t = counts.setdefault(row.task_id, TaskCounts())
        if row.status == ERROR:
            t.errors += 1
            if exclude_errors:
                continue
        t.n += 1
        passed = row.status == PASSED if verdict == "status" else row.status != ERROR and row.base_status == PASSED
        if passed:
            t.c += 1
        elif row.status == FAILED:
            t.failed += 1
        elif row.status == TIMED_OUT:
            t.timed_out += 1
    return counts


def _names(tasks: list[str], limit: int = 5) -> str:
    shown = ", ".join(tasks[:limit])
    return shown + (f" and {len(tasks) - limit} more" if len(tasks) > limit else "")


def per_task_pass_at_k(counts, k: int) -> list[Fraction]:
    """Exact pass@k of each task, from its TaskCounts."""
    return [pass_at_k_exact(c.n, c.c, k) for c in counts]


def mean_of(values: list[Fraction]) -> Fraction:
    """The per-task mean: every task weighs the same."""
    return sum(values, Fraction(0)) / len(values)


def bootstrap_ci(values: list[float], seed: int, resamples: int) -> list[float] | None:
    """Seeded percentile-bootstrap 95% interval of the mean of `values` (resampled with replacement).
    Each resample's m indices are one draw of 32·m random bits, each 32-bit word modulo m (a bias of
    at most m/2³² per index); summed by C-level maps, so 1,000 resamples of 1,000 tasks take ~0.15 s."""
    m = len(values)
    if not resamples or m < 2:
        return None
    rng = random.Random(seed)
    pick, wrap = values.__getitem__, m.__rmod__
    means = []
    for _ in range(resamples):
        words = array.array("I", rng.getrandbits(32 * m).to_bytes(4 * m, "little"))
        means.append(sum(map(pick, map(wrap, words))) / m)
    means.sort()
    return [means[int(0.025 * (resamples - 1))], means[int(math.ceil(0.975 * (resamples - 1)))]]


def uncertainty(values: list[float], seed: int, resamples: int) -> dict:
    """Standard error of the mean over tasks, and a seeded percentile bootstrap 95% interval."""
    m = len(values)
    mean = sum(values) / m
    se = math.sqrt(sum((v - mean) ** 2 for v in values) / (m - 1) / m) if m > 1 else 0.0
    out = {"se": se}
    ci = bootstrap_ci(values, seed, resamples)
    if ci is not None:
        out["ci95"] = ci
        out["bootstrap"] = {"resamples": resamples, "seed": seed, "over": "tasks"}
    return out


def time_share(row) -> float | None:
    """How much of its time limit a passing candidate used: wall time / timeout; for EvalPlus's per-input
    limits, the largest share of an input's limit any of its inputs took (an upper bound, as the test
    process measured them)."""
    if row.status != PASSED:
        return None
    if isinstance(row.limits.get("evalplus"), dict):
        shares = [v for k, v in row.channel_detail.items() if k.endswith("_max_share") and isinstance(v, (int, float))]
        return max(shares) if shares else None
    if row.wall_s is None or not row.limits.get("timeout_s"):
        return None
    return row.wall_s / row.limits["timeout_s"]


def time_shares(rows) -> list[tuple[float, str, int]]:
    """(share of its time limit, task_id, sample_index) of every passing candidate, smallest first."""
    return sorted((share, r.task_id, r.sample_index) for r in rows if (share := time_share(r)) is not None)


def tasks_text(mean: Fraction, tasks: int) -> str:
    """pass@k as the sum of its per-task values over the number of tasks: 140/164, not 35/41."""
    total = mean * tasks
    return f"{total.numerator}/{tasks}" if total.denominator == 1 else f"{float(total):.2f}/{tasks}"


def errors_text(error_count: int, permanent: int) -> str:
    """Why pass@k is not reported while errors remain, and what would change that."""
    if permanent == error_count:
        return (f"{error_count} candidates have a permanent error (the problem cannot be run as given: "
                f"{', '.join(PERMANENT_ERRORS)}); a rerun will not change them: fix the problems, or score "
                "with --exclude-errors")
    text = (f"{error_count} candidates have status 'error' (harness faults, not verdicts); rerun to retry "
            "them, or score with --exclude-errors")
    return text + (f" ({permanent} of them permanent: a rerun will not change those)" if permanent else "")


def _pass_at_k_block(scored, task_ids, ks, opts, error_count, permanent=0):
    block = {"pass_at_k": {}, "pass_at_k_exact": {}, "pass_at_k_tasks": {}, "pass_at_k_uncertainty": {},
             "omitted_k": {}, "pass_at_k_subset": {}}
    for k in sorted(set(ks)):
        if error_count and not opts.exclude_errors:
            block["omitted_k"][str(k)] = errors_text(error_count, permanent)
            continue
        if not task_ids:
            block["omitted_k"][str(k)] = "no task has candidates"
            continue
        short = [t for t in task_ids if scored[t].n < k]
        covered = [t for t in task_ids if scored[t].n >= k]
        if short:
            min_n = min(scored[t].n for t in short)
            block["omitted_k"][str(k)] = (f"needs n ≥ {k} for every task; {len(short)} of {len(task_ids)} tasks "
                                          f"have fewer (smallest n = {min_n}): {_names(short)}")
            if opts.k_policy == "subset" and covered:
                mean = mean_of(per_task_pass_at_k((scored[t] for t in covered), k))
                block["pass_at_k_subset"][str(k)] = {
                    "value": float(mean), "exact": fraction_text(mean), "tasks": len(covered),
                    "of": len(task_ids), "note": f"only the {len(covered)} of {len(task_ids)} tasks with n ≥ {k}"}
            continue
        values = per_task_pass_at_k((scored[t] for t in task_ids), k)
        mean = mean_of(values)
        block["pass_at_k_exact"][str(k)] = fraction_text(mean)
        block["pass_at_k_tasks"][str(k)] = tasks_text(mean, len(task_ids))
        block["pass_at_k"][str(k)] = float(mean)
        block["pass_at_k_uncertainty"][str(k)] = uncertainty([float(v) for v in values], opts.seed, opts.bootstrap)
    if not block["pass_at_k_subset"]:
        del block["pass_at_k_subset"]
    return block


def _by_task(latest) -> dict[str, list[ResultRow]]:
    """Each task's rows in sample order, in one pass."""
    out: dict[str, list[ResultRow]] = {}
    for (task, _), row in latest.items():
        out.setdefault(task, []).append(row)
    for rows in out.values():
        rows.sort(key=lambda r: r.sample_index)
    return out


def _selected(latest, task_ids, opts) -> dict | None:
    """Success of the one candidate a selection rule picks per task: what a user receives."""
    rng = random.Random(opts.seed)
    picked = []
    by_task = _by_task(latest)
    for t in task_ids:
        cands = [r for r in by_task.get(t, ()) if r.status != ERROR]
        if not cands:
            continue
        if opts.selection == "first":
            choice = next((r for r in cands if r.sample_index == 0), None)
        elif opts.selection == "random":
            choice = cands[rng.randrange(len(cands))]
        else:
            field_name = opts.selection[4:]
            valued = []
            for r in cands:
                v = (r.sample or {}).get(field_name)
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise InputError(f"selection rule {opts.selection}: {t!r} sample {r.sample_index} has no "
                                     f"numeric field {field_name!r}")
                valued.append((-v, r.sample_index, r))
            choice = min(valued)[2]
        if choice is not None:
            picked.append(choice)
    if not picked:
        return None
    ok = sum(1 for r in picked if r.status == PASSED)
    return {"rule": opts.selection, "tasks": len(picked), "success_rate": ok / len(picked),
            "success_rate_exact": f"{ok}/{len(picked)}",
            "note": "success of the one candidate the rule picks per task; pass@k is coverage of a set, not this"}


def generation_key(row: ResultRow) -> str:
    gen = (row.sample or {}).get("generation")
    return json.dumps(gen, sort_keys=True) if gen is not None else "unspecified"


def _is_repair(key: str) -> bool:
    if key == "unspecified":
        return False
    gen = json.loads(key)
    return isinstance(gen, dict) and str(gen.get("kind", gen.get("mode", ""))).lower() == "repair"


def diversity(latest) -> dict[str, dict]:
    """Per task: how many candidates there are and how many distinct texts (by hash). Information only;
    candidates are never merged."""
    by_task: dict[str, list[str]] = {}
    for (t, _), r in latest.items():
        by_task.setdefault(t, []).append(r.candidate_sha256)
    out = {}
    for t, hashes in sorted(by_task.items()):
        known = Counter(h for h in hashes if h)
        if known:
            out[t] = {"candidates": len(hashes), "distinct": len(known),
                      "largest_identical_group": max(known.values())}
    return out


def score_rows(rows: list[ResultRow], ks=(1, 10, 100), problem_ids=None, exclude_errors: bool = False,
               options: ScoringOptions | None = None) -> dict:
    """Everything score.json holds, computed from rows alone. Linear in rows."""
    collecting = gc.isenabled()
    gc.disable()  # many short-lived objects, no cycles: the collector would only walk them again and again
    try:
        return _score_rows(rows, problem_ids, options or ScoringOptions(ks=tuple(ks), exclude_errors=exclude_errors))
    finally:
        if collecting:
            gc.enable()


def _recorded_failure(row: ResultRow) -> ResultRow:
    """The stand-in of a first try aider recorded as failed whose files are gone (scoring/repair.py)."""
    return ResultRow(task_id=row.task_id, sample_index=-1 - row.sample_index, status=FAILED,
                     reason="recorded_by_aider", detail="aider's record: the first try failed (its files are gone)",
                     verdict_channel="aider_record", language=row.language, sample={"attempt": 1})


def _score_rows(rows: list[ResultRow], problem_ids, opts: ScoringOptions) -> dict:
    latest = latest_rows(rows)
    try:
        latest, repair = split_tries(latest, _recorded_failure)
    except ValueError as e:
        raise InputError(f"the rows' tries do not pair: {e}") from None
    groups = sorted({generation_key(r) for r in latest.values()})
    mixed = len(groups) > 1 or any(_is_repair(g) for g in groups)
    result = _score_latest(latest, opts)
    result["scoring"] = {"estimator": ESTIMATOR, "ks": sorted(set(opts.ks)), "k_policy": opts.k_policy, "selection": opts.selection,
                         "seed": opts.seed, "bootstrap_resamples": opts.bootstrap,
                         "exclude_errors": opts.exclude_errors}
    if mixed:
        why = ("samples mix generation settings" if len(groups) > 1 else "samples are repair attempts")
        why += ("; pass@k is unbiased only for independent samples drawn under one setting, so each group is "
                "scored on its own")
        result["generation_groups"] = {}
        by_group: dict[str, dict] = {}
        for key, r in latest.items():
            by_group.setdefault(generation_key(r), {})[key] = r
        for g in groups:
            sub = by_group[g]
            scored = _score_latest(sub, opts)
            result["generation_groups"][g] = {k: scored[k] for k in (
                "num_tasks", "num_candidates", "n_min", "n_max", "pass_at_k", "pass_at_k_exact", "pass_at_k_tasks",
                "omitted_k", "base") if k in scored}
        for k in list(result["pass_at_k"]):
            result["omitted_k"][k] = why
        for key in ("pass_at_k", "pass_at_k_exact", "pass_at_k_tasks", "pass_at_k_uncertainty"):
            result[key] = {}
        if "base" in result:
            for k in list(result["base"]["pass_at_k"]):
                result["base"]["omitted_k"][k] = why
            for key in ("pass_at_k", "pass_at_k_exact", "pass_at_k_tasks", "pass_at_k_uncertainty"):
                result["base"][key] = {}
        result["mixed_generation"] = why
    if repair is not None:
        result["repair"] = repair
    if problem_ids is not None:
        sampled = {r.task_id for r in latest.values()}
        result["tasks_without_samples"] = [t for t in problem_ids if t not in sampled]
    return result


def _score_latest(latest: dict, opts: ScoringOptions) -> dict:
    counts = count_latest(latest, opts.exclude_errors)
    labels = {label: 0 for label in LABELS}
    reasons: dict[str, int] = {}
    channels: dict[str, dict[str, int]] = {}
    for row in latest.values():
        labels[row.status] += 1
        per = channels.setdefault(row.verdict_channel or "unrecorded", {})
        per[row.status] = per.get(row.status, 0) + 1
        key = f"{row.status}:{row.reason or '-'}"
        reasons[key] = reasons.get(key, 0) + 1
    error_count = labels[ERROR]
    permanent = sum(1 for row in latest.values() if row.status == ERROR and row.reason in PERMANENT_ERRORS)
    scored = {t: c for t, c in counts.items() if c.n > 0}
    task_ids = sorted(scored)
    ns = [scored[t].n for t in task_ids]
    result = {
        "estimator": ESTIMATOR,
        "num_tasks": len(task_ids),
        "num_candidates": sum(ns),
        "n_min": min(ns) if ns else 0,
        "n_max": max(ns) if ns else 0,
        **_pass_at_k_block(scored, task_ids, opts.ks, opts, error_count, permanent),
        "labels": labels,
        "verdict_channels": dict(sorted(channels.items())),
        "reasons": dict(sorted(reasons.items())),
        "errors_remaining": 0 if opts.exclude_errors else error_count,
        "errors_permanent": 0 if opts.exclude_errors else permanent,
        "excluded_errors": error_count if opts.exclude_errors else 0,
        "per_task": {t: counts[t].as_dict() for t in sorted(counts)},
        "diversity": diversity(latest),
    }
    if has_base(latest):
        base_counts = count_latest(latest, opts.exclude_errors, verdict="base")
        base_scored = {t: c for t, c in base_counts.items() if c.n > 0}
        result["verdict"] = "plus: the base and the plus inputs passed (EvalPlus's plus score); base in 'base'"
        result["base"] = {"verdict": "base: the base inputs passed (EvalPlus's base score)",
                          **_pass_at_k_block(base_scored, task_ids, opts.ks, opts, error_count, permanent)}
        result["base"].pop("pass_at_k_subset", None)
        result["base"]["labels"] = {label: sum(1 for r in latest.values() if r.status != ERROR and
                                               (r.base_status or FAILED) == label) for label in (PASSED, FAILED, TIMED_OUT)}
    scored_tasks = mean_scores(latest)
    if scored_tasks:
        result["score"] = scored_tasks
    selected = _selected(latest, task_ids, opts)
    if selected:
        result["selected_answer"] = selected
    if ns and len(set(ns)) > 1:
        total_c = sum(scored[t].c for t in task_ids)
        result["pooled_pass_rate"] = {"value": total_c / sum(ns), "exact": f"{total_c}/{sum(ns)}",
                                      "note": "all candidates pooled; not pass@1, which weights each task equally"}
    return result


def mean_scores(latest: dict) -> dict | None:
    """Scoring problems (a judged problem's groups, rows.score in [0, 1]): the mean score of each task's
    candidates, and the mean of those over the tasks (each task weighs the same, as for pass@k), beside
    pass@k, which counts full passes only. None when no row has a score."""
    per_task: dict[str, list] = {}
    for row in latest.values():
        if row.score is not None and row.status != ERROR:
            per_task.setdefault(row.task_id, []).append(float(row.score))
    if not per_task:
        return None
    means = {t: sum(v) / len(v) for t, v in sorted(per_task.items())}
    return {"mean": sum(means.values()) / len(means), "tasks": len(means),
            "candidates": sum(len(v) for v in per_task.values()),
            "per_task": {t: {"mean": round(m, 6), "n": len(per_task[t]), "full": sum(1 for x in per_task[t] if x >= 1)}
                         for t, m in means.items()},
            "note": "each task's mean score over its candidates, then the mean over tasks; pass@k counts full "
                    "passes only"}


def score_counts(counts, ks=(1, 10, 100), seed: int = 0, bootstrap: int = 1000) -> dict:
    """pass@k from plain per-task counts, for callers that keep their own labels (a training loop):
    `counts` is {task: (n, c)} or a sequence of (n, c). The same rules as score.json: per task, then the
    mean; a k only when every task has n ≥ k (else in omitted_k, with why). Returns pass_at_k,
    pass_at_k_exact, pass_at_k_tasks, pass_at_k_uncertainty and omitted_k."""
    items = counts.items() if isinstance(counts, dict) else enumerate(counts)
    scored = {}
    for task, pair in items:
        n, c = pair
        if n or c:
            _check(n, c, 1)
        scored[str(task)] = TaskCounts(n=n, c=c)
    task_ids = [t for t in scored if scored[t].n > 0]
    block = _pass_at_k_block(scored, task_ids, ks, ScoringOptions(ks=tuple(ks), seed=seed, bootstrap=bootstrap), 0)
    block.pop("pass_at_k_subset", None)
    return block
