#!/usr/bin/env python3
"""A stop always stops: `passk evaluate` on poisoned candidates (sleepers through a 60 s limit, a fork bomb,
an output flood, a memory hog) among honest ones, stopped with SIGTERM once the poison runs. Prints, for a
single SIGTERM (the bounded grace) and for two (no grace): the exit status, the seconds from the first
signal to the exit, the run's containers left, and the rows kept; then resumes the stopped run and prints
that every candidate ends with one row and no row was lost or written twice.

    python3 scripts/drills/stop_drill.py [--grace-s 10]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = {"task_id": "drill/add", "prompt": "def add(a, b):\n", "entry_point": "add",
           "canonical_solution": "    return a + b\n", "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"}
POISON = ["    import time\n    time.sleep(300)\n",
          "    import os\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n",
          "    import sys\n    while True:\n        sys.stdout.write('x' * 65536)\n",
          "    x = bytearray(1 << 34)\n"]
HONEST = "    return a + b\n"


def rows_of(out: Path) -> list:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def drill(tmp: Path, signals: int, grace: str) -> bool:
    import docker
    problems = tmp / "p.jsonl"
    problems.write_text(json.dumps(PROBLEM) + "\n")
    samples = tmp / f"s{signals}.jsonl"
    completions = (POISON + [HONEST] * 2) * 3
    samples.write_text("".join(json.dumps({"task_id": PROBLEM["task_id"], "completion": c}) + "\n" for c in completions))
    out = tmp / f"run{signals}"
    cmd = [sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples", str(samples),
           "--out", str(out), "--timeout-s", "60", "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PASSK_STOP_GRACE_S": grace})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out / "manifest.json").exists():
        time.sleep(0.2)
    time.sleep(5)   # the first candidates run: a sleeper holds a worker
    kept_before = len(rows_of(out))
    t0 = time.monotonic()
    for _ in range(signals):
        proc.send_signal(signal.SIGTERM)
        time.sleep(1)
    _, err = proc.communicate(timeout=300)
    took = time.monotonic() - t0
    run_id = json.loads((out / "manifest.json").read_text())["run_id"]
    left = docker.from_env().containers.list(all=True, filters={"label": f"org.passk.run={run_id}"})
    kept = rows_of(out)
    print(f"{signals} SIGTERM (grace {grace} s): exit {proc.returncode} {took:.1f} s after the first signal; "
          f"containers of the run left: {len(left)}; rows kept: {len(kept)} of {len(completions)} "
          f"({kept_before} when stopped); traceback: {'Traceback' in err}")
    t1 = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    rows = rows_of(out)
    indices = [r["sample_index"] for r in rows]
    labels: dict = {}
    for r in rows:
        labels[f"{r['status']} {r['reason']}"] = labels.get(f"{r['status']} {r['reason']}", 0) + 1
    print(f"  resumed: exit {done.returncode} in {time.monotonic() - t1:.0f} s; {len(rows)} rows, "
          f"{len(set(indices))} candidates, each once: {sorted(indices) == list(range(len(completions)))}; "
          f"labels {labels}")
    return (proc.returncode == 130 and not left and "Traceback" not in err and done.returncode == 0
            and sorted(indices) == list(range(len(completions))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grace-s", default="10")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="passk-stop-") as tmp:
        ok = drill(Path(tmp), 1, args.grace_s)
        ok = drill(Path(tmp), 2, "600") and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
