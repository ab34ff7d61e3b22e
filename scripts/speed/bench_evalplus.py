#!/usr/bin/env python3
"""Whole-file throughput against EvalPlus's own evaluator: the same HumanEval+-format file (made by
scripts/inputs/humanevalplus_derived.py from HumanEval: 164 tasks, ~1,000 plus inputs each) and the same samples,
one per task, each tool timed as a user runs it, from the command to its exit:

    passk evaluate --problems F --samples S --out DIR --workers W          (passk's default W: the CPU count)
    python -m evalplus.evaluate --dataset humaneval --samples S --parallel P   (EvalPlus's default P: CPUs // 2)

"cold": each with an empty cache, so each runs the ground truth first (EvalPlus in its own process,
passk in the sandbox); "warm": the second run, each reusing its cached ground truth. EvalPlus is timed as
users run it, and also without the 20 s its evaluate() always waits at the end (a non-daemon thread that
sleeps 20 s: scripts/peers/evalplus_peer.py `no_wait`), which is the time of its work. Sample sets: `canonical`
(every task's canonical solution: all inputs run), `mixed` (per task, the canonical solution or a
mechanical mutant of it, seeded: failing candidates stop at their first failing input in both). Also
prints the per-sample agreement of base and plus verdicts.

Usage: python3 scripts/speed/bench_evalplus.py [--work DIR] [--rounds 1] [--sets canonical,mixed]
                                         [--evalplus-python /opt/evalplus-venv/bin/python]
Needs EvalPlus 0.3.1 in its own environment (see scripts/peers/evalplus_peer.py) and passk's image built."""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.inputs.humaneval_samples import mutate  # noqa: E402
from scripts.lib import figures  # noqa: E402
from scripts.peers.evalplus_peer import DEFAULT_PYTHON, passk_rows, run_evalplus  # noqa: E402


def samples_for(problems_file: Path, kind: str, out: Path, seed: int = 7) -> Path:
    import gzip
    rng = random.Random(seed)
    rows = []
    for line in gzip.open(problems_file, "rt"):
        p = json.loads(line)
        body = p["canonical_solution"]
        if kind == "mixed" and rng.random() < 0.5:
            body = mutate(body, rng) or "    return None\n"
        rows.append({"task_id": p["task_id"], "completion": body})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def run_passk(problems: Path, samples: Path, out: Path, cache: Path, workers: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PASSK_CACHE_DIR=str(cache))
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples",
                    str(samples), "--out", str(out), "--workers", str(workers), "--k", "1", "--quiet"],
                   env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.monotonic() - t0


def agreement(ep: dict, run: Path) -> str:
    mine = passk_rows(run)
    base = plus = total = 0
    for task, results in ep.items():
        for i, (b, p) in enumerate(results):
            row = mine[task][i]
            total += 1
            base += (b == "pass") == (row.base_status == "passed")
            plus += (b == p == "pass") == (row.status == "passed")
    return f"base {base}/{total}, plus {plus}/{total}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "passk-bench-evalplus")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--sets", default="canonical,mixed")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="passk's workers (its default)")
    ap.add_argument("--evalplus-python", default=DEFAULT_PYTHON)
    ap.add_argument("--write-docs", action="store_true", help="also write docs/figures/evalplus.md")
    args = ap.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    problems = work / "HumanEvalPlus-derived.jsonl.gz"
    if not problems.exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "inputs" / "humanevalplus_derived.py"), str(problems)], check=True)
    ep_default = max(1, (os.cpu_count() or 1) // 2)
    print(f"file: {problems} (scripts/inputs/humanevalplus_derived.py); machine: {os.cpu_count()} CPUs; passk --workers "
          f"{args.workers}; EvalPlus --parallel {ep_default} (its default) and {args.workers}")
    columns = [(ep_default, False), (args.workers, False), (args.workers, True)]
    print(f"{'set':>9} {'cache':>5} {'round':>5}  {'passk s':>8}  " + "  ".join(
        f"{'EvalPlus P=' + str(p) + (' no wait' if w else ''):>20} {'ratio':>6}" for p, w in columns))
    table, agreements = [], []
    for kind in args.sets.split(","):
        samples = samples_for(problems, kind, work / f"samples-{kind}.jsonl")
        for r in range(args.rounds):
            for cache in ("cold", "warm"):
                passk_cache = work / f"passk-cache-{kind}-{r}"
                if cache == "cold":
                    shutil.rmtree(passk_cache, ignore_errors=True)
                run = work / f"passk-run-{kind}"
                t_passk = run_passk(problems, samples, run, passk_cache, args.workers)
                times = []
                for parallel, no_wait in columns:
                    ep_cache = work / f"evalplus-cache-{kind}-{r}-{parallel}-{no_wait}"
                    if cache == "cold":
                        shutil.rmtree(ep_cache, ignore_errors=True)
                    ep, seconds, _ = run_evalplus(problems, samples, "humaneval", args.evalplus_python, parallel,
                                                  cold=False, cache_home=ep_cache, no_wait=no_wait)
                    times.append(seconds)
                print(f"{kind:>9} {cache:>5} {r + 1:>5}  {t_passk:>8.1f}  " + "  ".join(
                    f"{t:>20.1f} {t / t_passk:>5.2f}x" for t in times))
                table.append([kind, cache, r + 1, f"{t_passk:.1f}", *(f"{t:.1f} ({t / t_passk:.2f}×)" for t in times)])
        agreements.append(f"{kind}: {agreement(ep, run)}")
        print(f"{'':>9} agreement with EvalPlus on {kind}: {agreement(ep, run)}")
    if args.write_docs:
        header = ["set", "cache", "round", "passk s", *(f"EvalPlus --parallel {p}" + (", without its 20 s wait" if w else "")
                                                      + " s (× passk's time)" for p, w in columns)]
        figures.write("evalplus", figures.table(header, table) + (
            f"\n\nThe whole command, timed from start to exit, on a HumanEval+-format file made from HumanEval by "
            f"scripts/inputs/humanevalplus_derived.py (164 tasks, ~1,000 plus inputs each), one sample per task; passk "
            f"--workers {args.workers} (its default, the CPU count). cold: empty caches, so each runs the ground truth "
            "first; warm: the second run, each reusing its cached ground truth. canonical: every task's canonical "
            "solution (all inputs run); mixed: per task the canonical solution or a mutant of it. Verdicts the same as "
            "EvalPlus's, per sample: " + "; ".join(agreements) + "."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
