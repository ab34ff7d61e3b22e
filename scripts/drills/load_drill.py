#!/usr/bin/env python3
"""A loaded machine must not decide a label. Runs `passk verify` on a Kattis package directory (default:
the project's own, problems/kattis) twice: on a quiet machine, and with --hogs busy processes on the host
beside it (pure CPU loops, started before the run, killed after). Prints, per run, the time, how many of
the submissions got the verdict their directory promises, the accepted ones that did not, the jobs passk
reran because the machine kept them off the CPU (manifest sandbox.machine_stall_reruns) and the rows left
`error machine_stall`. Exit 0 when every accepted submission kept its verdict under load.

    python3 scripts/drills/load_drill.py [--problems DIR] [--hogs 8] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _spin():
    os.nice(0)
    while True:
        pass


def verify(problems: str, out: Path, workers: int) -> dict:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "verify", problems, "--out", str(out), "--quiet",
                           "--k", "1", "--json", "--workers", str(workers)], cwd=ROOT, capture_output=True, text=True)
    took = time.monotonic() - t0
    try:
        entries = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(f"passk verify exit {proc.returncode}: {proc.stderr.strip()[-500:]}") from None
    manifest = json.loads((out / "manifest.json").read_text())
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {"exit": proc.returncode, "took": took, "entries": entries,
            "reruns": int((manifest.get("sandbox") or {}).get("machine_stall_reruns") or 0),
            "stalls": sum(r.get("reason") == "machine_stall" for r in rows)}


def report(name: str, r: dict) -> list:
    entries = r["entries"]
    agree = sum(bool(e["agrees"]) for e in entries)
    accepted = [e for e in entries if e["expected"] == "accepted"]
    lost = [e for e in accepted if not e["agrees"]]
    print(f"{name}: exit {r['exit']} in {r['took']:.0f} s; {agree}/{len(entries)} agree; accepted kept "
          f"{len(accepted) - len(lost)}/{len(accepted)}; machine-stall reruns {r['reruns']}; rows left "
          f"error machine_stall {r['stalls']}")
    for e in entries:
        if not e["agrees"]:
            print(f"  differs: {e['file']} ({e['language']}): expected {e['expected']}, got {e['status']} {e['reason']}")
    return lost


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default=str(ROOT / "problems" / "kattis"))
    ap.add_argument("--hogs", type=int, default=4 * (os.cpu_count() or 1))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="passk-load-") as tmp:
        quiet = verify(args.problems, Path(tmp) / "quiet", args.workers)
        report("quiet machine", quiet)
        hogs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.hogs)]
        for h in hogs:
            h.start()
        try:
            loaded = verify(args.problems, Path(tmp) / "loaded", args.workers)
        finally:
            for h in hogs:
                h.kill()
        lost = report(f"beside {args.hogs} CPU hogs on {os.cpu_count()} cores", loaded)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
