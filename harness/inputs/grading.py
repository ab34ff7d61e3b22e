"""A judged problem's groups and score, from its row's per-test results: a fact of the problem's judge spec (its
groups, their aggregation and points), not of pass@k, so the pool (which records a judged row's score) and a
report or an audit (which recompute it) import it from here. A pure function of what was recorded
(inputs/judge.py JudgeSpec, containers/box/judge.py).

A test's value: accepted, the score its checker gave (Kattis's score.txt, as written) or its share of the
group's points (the group's max_score over its tests for `sum`, all of it for `min`; the legacy
accept_score otherwise); points (testlib, the Codeforces rows' checkers) that share times the fraction;
rejected or skipped, the group's reject_score (0). A group's score: `pass-fail` all of its points when every
test was accepted, else nothing; `sum` or `min` of its tests' values; 0 when a group it requires did not
pass. The row's score is the sum over the secret groups divided by the most they can give, in [0, 1];
None where that is unbounded (a validator's raw scores without a maximum) or the problem is pass-fail."""

from __future__ import annotations

ACCEPTED = ("ok",)


def _share(group, n: int) -> float:
    if group.max_score is not None:
        return float(group.max_score) / n if group.aggregation == "sum" and n else float(group.max_score)
    return float(group.accept_score)


def grade(spec, tests: list) -> tuple:
    """(score in [0, 1] or None, [per-group summary]) of one row."""
    counts: dict = {}
    for t in spec.tests:
        counts[t.group] = counts.get(t.group, 0) + 1
    by_group: dict = {}
    for r in tests or ():
        if isinstance(r, dict) and isinstance(r.get("group"), int):
            by_group.setdefault(r["group"], []).append(r)
    summary, total, most, bounded, passed = [], 0.0, 0.0, True, set()
    for gi, group in enumerate(spec.groups):
        n = counts.get(gi, 0)
        if n == 0:
            continue
        results = by_group.get(gi, [])
        share = _share(group, n)
        values, verdict, accepted, raw = [], "ok", 0, False
        for r in results:
            v = r.get("verdict")
            if v == "ok":
                accepted += 1
                if isinstance(r.get("score"), (int, float)):
                    values.append(float(r["score"]))
                    raw = True
                else:
                    values.append(share)
            elif v == "points" and isinstance(r.get("score"), (int, float)):
                values.append(share * float(r["score"]))
                if r["score"] >= 1:
                    accepted += 1
                elif verdict == "ok":
                    verdict = "partial_score"
            else:
                values.append(float(group.reject_score))
                if verdict == "ok":
                    verdict = v or "skipped"
        values += [float(group.reject_score)] * (n - len(results))   # tests never run
        if len(results) < n and verdict == "ok":
            verdict = "skipped"
        all_ok = accepted == n
        if all_ok:
            passed.add(group.name)
        if any(name not in passed for name in group.require_pass):
            score = 0.0
        elif group.aggregation == "pass-fail":
            score = share if all_ok and group.max_score is None else (float(group.max_score) if all_ok else 0.0)
        elif group.aggregation == "min":
            score = min(values)
        else:
            score = sum(values)
        if group.aggregation == "pass-fail":
            top = float(group.max_score) if group.max_score is not None else share
        elif raw and group.max_score is None:
            top = None
        else:
            top = share * (n if group.aggregation == "sum" else 1)
        entry = {"name": group.name, "verdict": "ok" if all_ok else verdict, "tests": n, "accepted": accepted}
        if spec.scoring and not group.sample:
            entry["score"] = round(score, 6)
            entry["max"] = None if top is None else round(top, 6)
            total += score
            if top is None:
                bounded = False
            else:
                most += top
        summary.append(entry)
    if not spec.scoring or not bounded or most <= 0:
        return None, summary
    return round(min(1.0, max(0.0, total / most)), 6), summary
