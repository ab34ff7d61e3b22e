#!/usr/bin/env python3
"""Every hostile candidate of tests/attacks.py through each verdict channel, through the real engine:

    proxy       as the attack is written: `check(candidate)` in the test worker, values cross as data
    in_process  the same problem with the test run in the candidate's own process (channel forced)
    io          the attack's program with a driver that reads "a b" on stdin and prints add(a, b);
                two tests (1 2 -> 3, 5 5 -> 10), compared by the strict rule, outside the candidate

Prints a Markdown table (label and reason per channel) and, per channel, how many attacks that must not
pass did pass (for io, only attacks whose wrongness does not lie in a test of their own: io runs its
two add tests, not the attack's test). For in_process that number is not zero, by design: the test shares the candidate's
process, so a candidate can change what the test sees; the table names which attacks do it.

Usage: python3 scripts/attacks/attack_channels.py [--workers 2] [--only SUBSTRING]"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness import Evaluator, Limits, Problem  # noqa: E402
from harness.core import text  # noqa: E402
from tests.attacks import ATTACKS, TEST  # noqa: E402

DRIVER = "\nimport sys as _sys\n_a, _b = map(int, _sys.stdin.read().split())\nprint(add(_a, _b))\n"
IO_TESTS = (("1 2\n", "3\n"), ("5 5\n", "10\n"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    attacks = [a for a in ATTACKS if args.only in a.name]
    jobs, where = [], []
    for n, attack in enumerate(attacks):
        proxy = Problem(f"Attack/{n}", attack.prompt, attack.test, "add")
        limits_note = attack.timeout_s
        for channel, problem, program in (
                ("proxy", proxy, attack.source),
                ("in_process", replace(proxy, channel="in_process"), attack.source),
                ("io", Problem(f"Attack/{n}/io", "", "", None, channel="io", runner="script", tests=IO_TESTS,
                               solution_is="program"), attack.source + DRIVER)):
            jobs.append((problem, program))
            where.append((n, channel, limits_note))
    start = time.monotonic()
    # one timeout for all (the attacks' own are 2 s, a few longer): the longest any attack asks for
    with Evaluator(Limits(timeout_s=max(a.timeout_s for a in attacks), memory_mb=256), workers=args.workers) as ev:
        rows = ev.evaluate(jobs)
    elapsed = time.monotonic() - start
    cells = {}
    for (n, channel, _), row in zip(where, rows):
        cells[(n, channel)] = row
    channels = ("proxy", "in_process", "io")
    print("| attack | must not pass | " + " | ".join(channels) + " |")
    print("|---|---|" + "---|" * len(channels))
    forged = {c: [] for c in channels}
    errors = {c: 0 for c in channels}
    for n, attack in enumerate(attacks):
        must_not_pass = attack.status != "passed"
        line = []
        for c in channels:
            row = cells[(n, c)]
            mark = ""
            # io runs the io tests (add), not an attack's own test: an attack whose wrongness is what its
            # own test checks (it mutates its input, say) is a correct program there
            judged = must_not_pass and (c != "io" or attack.test == TEST)
            if c == "io" and must_not_pass and not judged:
                mark = " (not judged: its own test is not run by io)"
            if row.status == "passed" and judged:
                forged[c].append(attack.name)
                mark = " **PASSED**"
            if row.status == "error":
                errors[c] += 1
            line.append(f"{row.status} / {text.markdown_inline(row.reason, 60)}{mark}")
        print(f"| {text.markdown_inline(attack.name, 90)} | {'yes' if must_not_pass else 'no'} | " + " | ".join(line) + " |")
    print(f"\n{len(attacks)} attacks x {len(channels)} channels in {elapsed:.1f} s ({args.workers} workers)")
    for c in channels:
        print(f"{c}: {len(forged[c])} attacks that must not pass passed; {errors[c]} rows error"
              + (": " + "; ".join(forged[c]) if forged[c] else ""))
    return 1 if forged["proxy"] or forged["io"] or any(errors.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
