#!/usr/bin/env python3
"""The Python API's cost per candidate against the CLI's, on the same candidates (HumanEval's canonical
solutions × N, default 5 = 820), in one run: the CLI (`passk evaluate`, a process of its own), the API
in a fresh process (Evaluator start included), and a second batch in the same warm Evaluator. Prints
wall seconds, ms per candidate and the harness process's own CPU per candidate.

Usage: python3 scripts/speed/bench_api.py [--repeat 5] [--workers 2] [--rounds 3]"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HUMANEVAL = ROOT.parent / "shared" / "data" / "HumanEval.jsonl.gz"

API = r"""
import json, resource, sys, time
t0 = time.monotonic()
import harness
problems = harness.load_problems(sys.argv[1])
items = [(problems[json.loads(l)["task_id"]], json.loads(l)["program"]) for l in open(sys.argv[2])]
with harness.Evaluator(timeout_s=3, workers=int(sys.argv[3])) as ev:
    first = ev.evaluate(items)
    t1 = time.monotonic()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    second = ev.evaluate(items)
    t2 = time.monotonic()
    cpu2 = resource.getrusage(resource.RUSAGE_SELF)
assert all(r.status == "passed" for r in first + second), "canonical solutions must pass"
print(json.dumps({"cold_s": t1 - t0, "warm_s": t2 - t1, "cold_cpu": cpu1.ru_utime + cpu1.ru_stime,
                  "warm_cpu": (cpu2.ru_utime + cpu2.ru_stime) - (cpu1.ru_utime + cpu1.ru_stime)}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from harness.inputs.problems import load_problems
    problems = load_problems(HUMANEVAL)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        samples, programs = tmp / "samples.jsonl", tmp / "programs.jsonl"
        with open(samples, "w") as s, open(programs, "w") as p:
            for _ in range(args.repeat):
                for prob in problems.values():
                    s.write(json.dumps({"task_id": prob.task_id, "completion": prob.canonical_solution}) + "\n")
                    p.write(json.dumps({"task_id": prob.task_id, "program": prob.prompt + prob.canonical_solution}) + "\n")
        n = args.repeat * len(problems)
        print(f"{n} candidates, {args.workers} workers, {args.rounds} rounds (interleaved)")
        print(f"{'round':>5} {'path':<22} {'seconds':>8} {'ms/cand':>8} {'harness CPU ms/cand':>20}")
        for r in range(1, args.rounds + 1):
            out = tmp / f"cli-{r}"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(HUMANEVAL), "--samples",
                            str(samples), "--out", str(out), "--k", "1", "--workers", str(args.workers), "--quiet"],
                           cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            took = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            print(f"{r:>5} {'CLI (process)':<22} {took:>8.2f} {1000 * took / n:>8.2f} {1000 * cpu / n:>20.3f}")
            got = json.loads(subprocess.run([sys.executable, "-c", API, str(HUMANEVAL), str(programs), str(args.workers)],
                                            cwd=tmp, check=True, capture_output=True, text=True,
                                            env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout)
            print(f"{r:>5} {'API, cold (process)':<22} {got['cold_s']:>8.2f} {1000 * got['cold_s'] / n:>8.2f} "
                  f"{1000 * got['cold_cpu'] / n:>20.3f}")
            print(f"{r:>5} {'API, warm batch':<22} {got['warm_s']:>8.2f} {1000 * got['warm_s'] / n:>8.2f} "
                  f"{1000 * got['warm_cpu'] / n:>20.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
