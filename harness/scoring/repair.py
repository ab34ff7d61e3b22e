"""Repair, reported apart from pass@k: a second try made after reading the first try's failing tests is not an
independent sample, so it never enters pass@k's n or c. Pure: outcomes in, rates out.

Each candidate is one try of one sample of a task: try 1, and maybe a try 2 that repairs it. Per task the
rates are means over its samples, then means over tasks (as pass@k is per task, then averaged):

    try-1 rate        the first tries that passed (aider's pass_rate_1 where n = 1)
    within two        a first try that passed, or its second try that did (aider's pass_rate_2)
    repair rate       of the first tries that failed and have a second try, the share the second fixed:
                      counted over those pairs, not per task (a task with no failed first try has none)

A first try that failed with no second try counts as not passed within two. aider's runner makes the
second try for every failed first try, and divides by the exercises that finished (`completed_tests`);
here every task with a first try counts."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Repair:
    tasks: int
    samples: int
    try1_rate: float
    within_two_rate: float
    failed_first: int          # first tries that failed
    with_second: int           # of them, with a second try
    repaired: int              # of those, second tries that passed
    repair_rate: float | None  # repaired / with_second (None: no second try to judge)

    def as_dict(self) -> dict:
        return {"tasks": self.tasks, "samples": self.samples, "try1_rate": self.try1_rate,
                "within_two_rate": self.within_two_rate, "failed_first_tries": self.failed_first,
                "second_tries": self.with_second, "repaired": self.repaired, "repair_rate": self.repair_rate}


def repair_rates(pairs: dict[str, list[tuple[bool, bool | None]]]) -> Repair:
    """`pairs`: task id -> [(first try passed, second try passed or None where there is none), ...], one
    per sample. A task with no sample is an error (it has no rate to average)."""
    if not pairs:
        raise ValueError("no task to report")
    try1, within, samples = Fraction(0), Fraction(0), 0
    failed = second = fixed = 0
    for task, tries in pairs.items():
        if not tries:
            raise ValueError(f"{task}: no first try")
        n = len(tries)
        samples += n
        try1 += Fraction(sum(1 for first, _ in tries if first), n)
        within += Fraction(sum(1 for first, then in tries if first or then), n)
        for first, then in tries:
            if not first:
                failed += 1
                if then is not None:
                    second += 1
                    fixed += bool(then)
    tasks = len(pairs)
    return Repair(tasks, samples, float(try1 / tasks), float(within / tasks), failed, second, fixed,
                  float(Fraction(fixed, second)) if second else None)


def pair_tries(candidates: list[tuple[str, int, bool]]) -> dict[str, list[tuple[bool, bool | None]]]:
    """Candidates in input order as (task id, try, passed) -> pairs: the k-th second try of a task repairs
    its k-th first try. A second try with no first try to repair is a ValueError naming the task."""
    firsts: dict[str, list[bool]] = {}
    seconds: dict[str, list[bool]] = {}
    for task, attempt, passed in candidates:
        (firsts if attempt == 1 else seconds).setdefault(task, []).append(bool(passed))
    out: dict[str, list[tuple[bool, bool | None]]] = {}
    for task, ones in firsts.items():
        twos = seconds.get(task, [])
        if len(twos) > len(ones):
            raise ValueError(f"{task}: {len(twos)} second tries for {len(ones)} first tries")
        out[task] = [(one, twos[i] if i < len(twos) else None) for i, one in enumerate(ones)]
    stray = sorted(set(seconds) - set(firsts))
    if stray:
        raise ValueError(f"{stray[0]}: a second try with no first try")
    return out


def try_of(row) -> int | None:
    """A row's try as its sample said it (`attempt`, set for every project candidate), else None."""
    value = (row.sample or {}).get("attempt")
    return value if value in (1, 2) and not isinstance(value, bool) else None


def _recorded(row) -> list:
    aider = (row.sample or {}).get("aider")
    outcomes = aider.get("outcomes") if isinstance(aider, dict) else None
    return [o for o in outcomes if isinstance(o, bool)] if isinstance(outcomes, list) else []


def split_tries(latest: dict, make_failed) -> tuple[dict, dict | None]:
    """(the first tries, by key: what pass@k counts; the repair report, or None where no row says its try).

    A second try's first is the task's first try of the same rank (in sample order). A second try without
    one is a benchmark run's directory as aider leaves it: the files of the last try only, the first try's
    outcome recorded by aider (failed: its runner makes a second try only then); that first try counts as
    failed, as recorded (`make_failed(row)`: its stand-in row, reason recorded_by_aider), and is named."""
    if not any(try_of(r) is not None for r in latest.values()):
        return latest, None
    firsts = {k: r for k, r in latest.items() if try_of(r) != 2}
    seconds = sorted((r for r in latest.values() if try_of(r) == 2), key=lambda r: (r.task_id, r.sample_index))
    have = {}
    for r in sorted(firsts.values(), key=lambda r: (r.task_id, r.sample_index)):
        have.setdefault(r.task_id, []).append(r)
    pairs: dict[str, list] = {t: [[r.status == "passed", None] for r in rs] for t, rs in have.items()}
    recorded_firsts = []
    for r in seconds:
        slots = [p for p in pairs.get(r.task_id, []) if p[1] is None and not p[0]]
        if slots:
            slots[0][1] = r.status == "passed"
            continue
        outcomes = _recorded(r)
        if outcomes and outcomes[0] is False:
            stand_in = make_failed(r)
            firsts[(stand_in.task_id, stand_in.sample_index)] = stand_in
            pairs.setdefault(r.task_id, []).append([False, r.status == "passed"])
            recorded_firsts.append(r.task_id)
            continue
        raise ValueError(f"{r.task_id}: a second try (sample {r.sample_index}) with no failed first try to repair")
    rates = repair_rates({t: [tuple(p) for p in ps] for t, ps in pairs.items()})
    report = {**rates.as_dict(), "pass_at_k_counts": "first tries only",
              "note": ("a second try, made after reading the first's failing tests, is a repair: not an independent "
                       "sample, so it is reported here and never counted in pass@k"),
              "aider_names": {"pass_rate_1": "try1_rate", "pass_rate_2": "within_two_rate"}}
    if recorded_firsts:
        report["first_tries_as_recorded"] = {"count": len(recorded_firsts), "tasks": sorted(recorded_firsts)[:50],
                                             "note": "aider's record: the first try failed; its files are gone"}
    aider = _aider_beside(latest)
    if aider:
        report["aider"] = aider
    return firsts, report


def _aider_beside(latest: dict) -> dict | None:
    """A regraded benchmark run: aider's own rates from its records, and where passk's verdict on the files
    as they stand differs from what aider recorded for that try."""
    rows = [r for r in latest.values() if _recorded(r)]
    if not rows:
        return None
    one = sum(1 for r in rows if _recorded(r)[0]) / len(rows)
    two = sum(1 for r in rows if any(_recorded(r)[:2])) / len(rows)
    differ = sorted(f"{r.task_id}: aider {'passed' if _recorded(r)[-1] else 'failed'}, passk {r.status}"
                    f"{' ' + r.reason if r.reason else ''}" for r in rows
                    if _recorded(r)[-1] != (r.status == "passed"))
    return {"exercises": len(rows), "pass_rate_1": one, "pass_rate_2": two,
            "agree": len(rows) - len(differ), "differ": len(differ), "differences": differ[:200]}
