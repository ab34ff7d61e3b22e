#!/usr/bin/env python3
"""Every hostile candidate of tests/attacks.py in one run, in a shuffled order, through `passk evaluate`
with 1 worker and with 2: prints, per run, the exit code, the time, the label counts and whatever is
wrong (an `error` row, a candidate with no label or two, an unexpected label, a container left
running, a report with other than one pass@k section). Exit 0 when nothing is.

Usage: python3 scripts/attacks/hostile_run.py [--workers 1,2] [--runtime runc|runsc] [--seed 0]"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.attacks import check_attack_run, write_attack_run  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--runtime", default="runc")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="passk-hostile-") as tmp:
        problems, samples, expected = write_attack_run(Path(tmp) / "inputs", args.seed)
        print(f"{len(expected)} candidates from {len({k[0] for k in expected})} attacks, seed {args.seed}, "
              f"runtime {args.runtime}")
        for workers in args.workers.split(","):
            out = Path(tmp) / f"run-{workers}"
            t0 = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems),
                                   "--samples", str(samples), "--out", str(out), "--k", "1", "--timeout-s", "5",
                                   "--memory-mb", "256", "--workers", workers, "--runtime", args.runtime,
                                   "--no-progress"], cwd=ROOT, capture_output=True, text=True)
            took = time.monotonic() - t0
            problems_found = check_attack_run(out, expected, args.runtime)
            run_id = json.loads((out / "manifest.json").read_text())["run_id"]
            left = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=org.passk.run={run_id}"],
                                  capture_output=True, text=True).stdout.split()
            if left:
                problems_found.append(f"{len(left)} containers left")
            if proc.returncode != 0:
                problems_found.append(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
            rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
            labels = collections.Counter(r["status"] for r in rows)
            print(f"workers {workers}: exit {proc.returncode} in {took:.1f} s; {len(rows)} rows; "
                  + ", ".join(f"{k} {v}" for k, v in sorted(labels.items()))
                  + f"; containers left {len(left)}; report pass@k sections ok: "
                  + str(not any('pass@k section' in p for p in problems_found)))
            for p in problems_found:
                print("  PROBLEM:", p)
            failures += bool(problems_found)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
