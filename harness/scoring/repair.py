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
