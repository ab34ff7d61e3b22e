#!/usr/bin/env python3
"""The judge's hostile table: every attack of tests/judge_attacks.py (hostile candidates of judged problems,
and hostile checkers) under each runtime and isolation, with the label it must get; prints the table and the
count of unexpected labels, and with --write-docs writes docs/figures/judge-attacks.md.

    python3 scripts/attacks/judge_attacks.py [--runtimes runc,runsc] [--isolations pooled,fresh] [--write-docs]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import figures  # noqa: E402
from tests.judge_attacks import JUDGE_ATTACKS  # noqa: E402


def run(runtime: str, isolation: str) -> list:
    """[(attack, status, reason, detail)] of every attack in one Evaluator of these settings."""
    import harness
    from harness.execution.jobs import Job
    from harness.inputs.samples import Sample
    with harness.Evaluator(workers=2, runtime=runtime, isolation=isolation, run_id=f"judge-attacks-{runtime}") as ev:
        futures = [(a, ev.submit_job(Job(a.problem(), Sample("attack/" + a.name, 0, a.program, "solution", "attack",
                                                                  language=a.language))))
                   for a in JUDGE_ATTACKS]
        return [(a, f.result()) for a, f in futures]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtimes", default="runc,runsc")
    ap.add_argument("--isolations", default="pooled,fresh")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    configs = [(r, i) for r in args.runtimes.split(",") for i in args.isolations.split(",")]
    results = {c: run(*c) for c in configs}
    unexpected = 0
    rows = []
    for n, attack in enumerate(JUDGE_ATTACKS):
        cells = []
        for c in configs:
            _, row = results[c][n]
            ok = (row.status, row.reason) == attack.expected(c[0])
            unexpected += not ok
            cells.append(f"{row.status} {row.reason}" + ("" if ok else " **UNEXPECTED**"))
        rows.append([attack.name, f"{attack.status} {attack.reason}", *cells])
    body = figures.table(["attack", "expected", *[f"{r}, {i}" for r, i in configs]], rows)
    body += f"\n\n{len(JUDGE_ATTACKS)} attacks, {len(configs)} configurations: {unexpected} unexpected labels.\n"
    print(body)
    if args.write_docs:
        if args.runtimes != "runc,runsc" or args.isolations != "pooled,fresh":
            raise SystemExit("--write-docs writes the whole table only: every runtime and isolation")
        figures.write("judge-attacks", body)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
