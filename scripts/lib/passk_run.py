"""Run passk as a child process, the way a user runs it, for the scripts that compare its rows with a peer's
or time a whole run."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A loopback port no one listens on now (for a `passk serve` the script starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def evaluate(problems: Path, samples: Path, out: Path, *extra: str, workers: int = 2,
             required: bool = True) -> list[dict]:
    """`passk evaluate --problems P --samples S --out OUT --k 1 --workers W --quiet EXTRA...`; the rows of
    OUT/results.jsonl. A run that wrote none: its last lines of stderr and exit 2 when `required`, else []."""
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples",
                           str(samples), "--out", str(out), "--k", "1", "--workers", str(workers), "--quiet", *extra],
                          cwd=ROOT, capture_output=True, text=True)
    results = out / "results.jsonl"
    if not results.exists():
        if not required:
            return []
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(2)
    return [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
