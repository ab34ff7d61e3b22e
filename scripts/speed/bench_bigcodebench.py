"""Throughput on BigCodeBench tasks: passk against BigCodeBench 0.2.5's own evaluator, same environment.

The peer is BigCodeBench's evaluate loop as its users run it: the ground truth checked first
(gen.util.trusted_check per task, timed), then every sample through eval.untrusted_check in a
ProcessPoolExecutor of --workers processes, calibrated, in one container of the environment's image with
every CPU (its own image's setup); BIGCODEBENCH's 240 s floor is lowered to --timeout-s on both sides, so a
sample that never ends costs the same there and here. passk runs `passk evaluate` on the same files with
--workers containers of one CPU each. Both see the shipped set repeated --repeat times.

    python3 scripts/speed/bench_bigcodebench.py [--repeat 5] [--workers 2] [--timeout-s 3] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.lib import figures  # noqa: E402
from scripts.peers.bigcodebench_peer import bigcodebench_dir, env_image  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

DRIVER = r'''
import json, sys, time
from concurrent.futures import ProcessPoolExecutor, as_completed
import bigcodebench.eval as ev
import bigcodebench.gen.util as gu
problems_path, samples_path, timeout, workers = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
ev.TIMEOUT_LIMIT = gu.TIMEOUT_LIMIT = timeout
problems = {p["task_id"]: p for p in map(json.loads, open(problems_path))}
samples = [json.loads(line) for line in open(samples_path)]
t0 = time.monotonic()
with ProcessPoolExecutor(max_workers=workers) as pool:
    futures = {t: pool.submit(gu.trusted_check, p["complete_prompt"] + "\n" + p["canonical_solution"], p["test"],
                              t, 30 * 1024, 30 * 1024, 10, 1) for t, p in problems.items()}
    gt = {t: f.result()["time"] for t, f in futures.items()}
t1 = time.monotonic()
statuses = {}
with ProcessPoolExecutor(max_workers=workers) as pool:
    futures = []
    for s in samples:
        p = problems[s["task_id"]]
        code = p["code_prompt"] + "\n    pass\n" + (s["solution"] if "solution" in s else p["complete_prompt"] + s["completion"])
        futures.append(pool.submit(ev.untrusted_check, code, p["test"], p["entry_point"], 30 * 1024, 30 * 1024, 10, 1,
                                   gt[s["task_id"]] or 20))
    for f in as_completed(futures):
        stat = f.result()[0]
        statuses[stat] = statuses.get(stat, 0) + 1
t2 = time.monotonic()
print(json.dumps({"ground_truth_s": t1 - t0, "samples": len(samples), "seconds": t2 - t1, "statuses": statuses}))
'''


def repeated(samples: Path, repeat: int, out: Path) -> Path:
    lines = samples.read_text().splitlines()
    out.write_text("".join(line + "\n" for _ in range(repeat) for line in lines))
    return out


def peer(image: str, problems: Path, samples: Path, timeout: float, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        Path(d, "driver.py").write_text(DRIVER)
        cmd = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/usr/local/bin/passk-python",
               "-e", "PYTHONPATH=/peer", "-v", f"{bigcodebench_dir()}:/peer/bigcodebench:ro", "-v", f"{d}:/driver:ro",
               "-v", f"{problems.resolve()}:/in/p.jsonl:ro", "-v", f"{samples.resolve()}:/in/s.jsonl:ro", "-w", "/tmp",
               image, "/driver/driver.py", "/in/p.jsonl", "/in/s.jsonl", str(timeout), str(workers)]
        t0 = time.monotonic()
        out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
        wall = time.monotonic() - t0
    return {**json.loads(out.strip().splitlines()[-1]), "command_s": wall}


def ours(problems: Path, samples: Path, timeout: float, workers: int, out: Path) -> dict:
    cmd = [sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples", str(samples),
           "--out", str(out), "--k", "1", "--workers", str(workers), "--environment", "bigcodebench",
           "--bigcodebench-timeout-s", str(timeout), "--no-progress"]
    t0 = time.monotonic()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - t0
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    statuses = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    cpu = sum(r.get("cpu_s") or 0.0 for r in rows)
    return {"samples": len(rows), "seconds": wall, "statuses": statuses, "candidate_cpu_s": cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=Path, default=ROOT / "problems/bigcodebench-libs/problems.jsonl")
    ap.add_argument("--samples", type=Path, default=ROOT / "problems/bigcodebench-libs/samples.jsonl")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout-s", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--write-docs", action="store_true", help="also write docs/figures/bigcodebench.md")
    args = ap.parse_args()
    image = env_image()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        samples = repeated(args.samples, args.repeat, Path(d, "samples.jsonl"))
        print(f"image {image}; {args.samples.name} x{args.repeat}; {args.workers} workers; suite limit "
              f"max({args.timeout_s:g} s, gt) + 1")
        for r in range(args.rounds):
            p = peer(image, args.problems, samples, args.timeout_s, args.workers)
            o = ours(args.problems, samples, args.timeout_s, args.workers, Path(d, f"run{r}"))
            pr, orate = p["samples"] / p["seconds"], o["samples"] / o["seconds"]
            print(f"round {r + 1}: BigCodeBench {p['samples']} samples in {p['seconds']:.1f} s ({pr:.2f}/s; its ground "
                  f"truth first, {p['ground_truth_s']:.1f} s; whole command {p['command_s']:.1f} s) {p['statuses']}")
            print(f"         passk {o['samples']} in {o['seconds']:.1f} s, the whole command ({orate:.2f}/s; candidates' "
                  f"CPU {o['candidate_cpu_s'] / o['samples'] * 1000:.0f} ms each) {o['statuses']}: "
                  f"{orate / pr:.2f}x BigCodeBench's samples phase, {o['samples'] / o['seconds'] / (p['samples'] / p['command_s']):.2f}x its whole command")
            whole = o["samples"] / o["seconds"] / (p["samples"] / p["command_s"])
            rows.append([r + 1, p["samples"], f"{p['seconds']:.1f} ({pr:.2f}/s)", f"{p['ground_truth_s']:.1f}",
                         f"{p['command_s']:.1f}", f"{o['seconds']:.1f} ({orate:.2f}/s)",
                         f"{o['candidate_cpu_s'] / o['samples'] * 1000:.0f}", f"**{orate / pr:.2f}×**", f"{whole:.2f}×",
                         _statuses(p["statuses"]), _statuses(o["statuses"])])
    if args.write_docs:
        header = ["round", "samples", "BigCodeBench: samples s", "its ground truth s", "its whole command s",
                  "passk: the whole command s", "candidate CPU ms", "× its samples phase", "× its whole command",
                  "BigCodeBench statuses", "passk statuses"]
        figures.write("bigcodebench", figures.table(header, rows) + (
            f"\n\nThe shipped BigCodeBench set ({args.samples.name}) ×{args.repeat}, {args.workers} workers, a "
            f"{args.timeout_s:g} s limit on both sides (BigCodeBench's 240 s floor lowered to it). BigCodeBench "
            f"0.2.5's evaluate loop in one container of the environment's image ({image}) with every CPU; passk's "
            f"`passk evaluate` with {args.workers} containers of one CPU each."))
    return 0


def _statuses(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


if __name__ == "__main__":
    sys.exit(main())
