#!/usr/bin/env python3
"""Host-side scale: how long scoring, the report and compare take on large runs, from results.jsonl
alone (no Docker). Writes synthetic rows (tasks × candidates per task, a seeded mix of labels, a
per-sample log-probability) and times each step.

Usage: python3 scripts/speed/bench_scoring.py [--shapes 164x200,1000x100] [--root DIR]
  --root runs another checkout's harness (e.g. an older commit in a git worktree), for before/after.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path


def write_run(directory: Path, tasks: int, per_task: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "results.jsonl"
    with open(path, "w") as f:
        for t in range(tasks):
            rate = rng.random()
            for i in range(per_task):
                status = "passed" if rng.random() < rate else rng.choice(("failed", "failed", "timed_out"))
                reason = {"passed": "tests_completed", "failed": rng.choice(("assertion", "exception:ValueError")),
                          "timed_out": "wall_time_limit"}[status]
                f.write(json.dumps({"schema_version": 1, "task_id": f"Task/{t}", "sample_index": i, "status": status,
                                    "reason": reason, "detail": "x", "limits": {"timeout_s": 3.0},
                                    "wall_s": rng.random(), "candidate_sha256": f"{rng.randrange(per_task // 2 + 1):064x}",
                                    "sample": {"logprob": -rng.random()}}) + "\n")
    (directory / "score.json").write_text(json.dumps({"scoring": {"ks": [1, 10, 100]}}))
    return path


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="164x200,1000x100")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    args = ap.parse_args()
    sys.path.insert(0, args.root)
    from harness.scoring.compare import compare_runs
    from harness.scoring.report import build_report
    from harness.records.results import read_rows
    from harness.inputs.config import ScoringOptions
    from harness.scoring.score import score_rows

    print(f"harness from {args.root}")
    print(f"{'tasks x n':>12} {'rows':>8} {'read s':>7} {'score s':>8} {'score max:logprob s':>20} "
          f"{'report s':>9} {'compare s':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            tasks, per_task = map(int, shape.split("x"))
            a = write_run(Path(tmp) / f"{shape}-a", tasks, per_task, seed=1)
            b = write_run(Path(tmp) / f"{shape}-b", tasks, per_task, seed=2)
            t_read, rows = timed(lambda a=a: read_rows(a))
            ids = [f"Task/{t}" for t in range(tasks)]
            t_score, _ = timed(lambda rows=rows, ids=ids: score_rows(rows, problem_ids=ids, options=ScoringOptions(ks=(1, 10, 100))))
            t_sel, _ = timed(lambda rows=rows: score_rows(rows, options=ScoringOptions(ks=(1, 10), selection="max:logprob")))
            t_report, _ = timed(lambda a=a: build_report(a.parent))
            rows_b = read_rows(b)
            t_cmp, _ = timed(lambda rows=rows, rows_b=rows_b: compare_runs({"a": rows, "b": rows_b}, ks=(1, 10)))
            print(f"{shape:>12} {len(rows):>8} {t_read:>7.2f} {t_score:>8.2f} {t_sel:>20.2f} {t_report:>9.2f} {t_cmp:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
