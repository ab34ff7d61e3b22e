"""Compare runs: pass@k side by side on their common tasks, paired per-task differences with a
bootstrap interval, and an explicit line wherever the order of two systems changes between k values.
Pure: reads rows, never Docker."""

from __future__ import annotations

from fractions import Fraction

from harness.core import text
from harness.core.errors import InputError
from harness.records.results import ResultRow, latest_rows
from harness.scoring.score import bootstrap_ci, count_tasks, fraction_text, has_base, mean_of, per_task_pass_at_k

STANDARD_K = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)


def default_ks(min_n: int) -> tuple[int, ...]:
    if min_n <= 20:
        return tuple(range(1, min_n + 1))
    return tuple(k for k in STANDARD_K if k <= min_n)


def compare_runs(runs: dict[str, list[ResultRow]], ks=None, seed: int = 0, resamples: int = 1000) -> dict:
    """Runs whose rows carry EvalPlus's base verdict count twice: NAME (plus: the status) and NAME [base]."""
    if len(runs) < 2:
        raise InputError("compare needs at least two runs")
    counts = {}
    for name, rows in runs.items():
        tasks = count_tasks(rows)
        if any(c.errors for c in tasks.values()):
            raise InputError(f"{name}: has candidates with status error; rerun it before comparing")
        counts[name] = {t: c for t, c in tasks.items() if c.n > 0}
        if has_base(latest_rows(rows)):   # EvalPlus: its base score too, beside its plus score (the status)
            counts[f"{name} [base]"] = {t: c for t, c in count_tasks(rows, verdict="base").items() if c.n > 0}
    names = list(counts)
    common = sorted(set.intersection(*(set(c) for c in counts.values())))
    if not common:
        raise InputError("the runs have no task in common")
    only = {name: sorted(set(c) - set(common)) for name, c in counts.items() if set(c) - set(common)}
    min_n = min(counts[name][t].n for name in names for t in common)
    ks = tuple(sorted(set(ks))) if ks else default_ks(min_n)
    omitted = {str(k): f"needs n ≥ {k} on every common task in every run (smallest n = {min_n})"
               for k in ks if k > min_n}
    table = {}
    for k in (k for k in ks if k <= min_n):
        per_run = {name: per_task_pass_at_k((counts[name][t] for t in common), k) for name in names}
        means = {name: mean_of(v) for name, v in per_run.items()}
        entry = {"values": {name: float(m) for name, m in means.items()},
                 "exact": {name: fraction_text(m) for name, m in means.items()}, "differences": {}}
        base = names[0]
        for other in names[1:]:
            diffs = [float(a - b) for a, b in zip(per_run[other], per_run[base])]
            entry["differences"][f"{other} - {base}"] = {
                "mean": float(means[other] - means[base]), "ci95": bootstrap_ci(diffs, seed, resamples)}
        table[str(k)] = entry
    reversals = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            last = None  # (k, leader, "value of a vs value of b")
            for k, entry in table.items():
                fa, fb = Fraction(entry["exact"][a]), Fraction(entry["exact"][b])
                if fa == fb:
                    continue
                leader = a if fa > fb else b
                text = f"{entry['exact'][a]} vs {entry['exact'][b]}"
                if last is not None and leader != last[1]:
                    reversals.append(f"the order of {a} and {b} changes between k={last[0]} and k={k}: "
                                     f"{last[1]} leads at k={last[0]} ({last[2]}), {leader} leads at k={k} ({text})")
                last = (k, leader, text)
    return {"runs": names, "common_tasks": len(common), "tasks_not_in_every_run": only, "ks": list(table),
            "omitted_k": omitted, "pass_at_k": table, "order_changes": reversals,
            "bootstrap": {"resamples": resamples, "seed": seed, "over": "common tasks, paired"}}


def format_comparison(result: dict) -> str:
    names = result["runs"]
    lines = [f"common tasks: {result['common_tasks']}"]
    for name, tasks in result["tasks_not_in_every_run"].items():
        lines.append(f"not in every run: {name}: {len(tasks)} tasks ({', '.join(tasks[:5])}{' …' if len(tasks) > 5 else ''})")
    header = f"{'k':>5}  " + "  ".join(f"{n[:24]:>24}" for n in names) + "  difference (95% CI)"
    lines.append(header)
    for k, entry in result["pass_at_k"].items():
        cells = "  ".join(f"{entry['values'][n]:>10.4f} {entry['exact'][n]:>13}" for n in names)
        diffs = "; ".join(
            f"{d['mean']:+.4f}" + (f" [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}]" if d["ci95"] else "")
            for d in entry["differences"].values())
        lines.append(f"{k:>5}  {cells}  {diffs}")
    for k, why in result["omitted_k"].items():
        lines.append(f"omitted k={k}: {why}")
    for line in result["order_changes"]:
        lines.append("ORDER CHANGES: " + line)
    if not result["order_changes"]:
        lines.append("the order of the runs is the same at every k compared")
    return text.terminal_lines(lines)
