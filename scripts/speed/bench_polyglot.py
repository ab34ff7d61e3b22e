#!/usr/bin/env python3
"""Speed on aider's polyglot benchmark: every exercise's reference solution, as a candidate sends it (its
solution files and helper classes; a Rust reference's own manifest set aside, as a candidate's would be), run
two ways on the same trees and the same toolchains (passk's project images):

  plain   aider's procedure: its test command over the exercises one after another in one container per
          language, as root, no limits (scripts/agreement/polyglot_plain.py)
  passk   `passk evaluate` with --workers (default 2): the project channel, sandboxed, limited, each
          language's containers warm (Catch's main prebuilt, Go's standard library cached)

    python3 scripts/speed/bench_polyglot.py --problems /path/to/polyglot-benchmark [--language go ...] [--workers 2]

Prints per language and in all: exercises, the plain loop's wall time, passk's, the ratio, and how many
references passed each way. The images are built before either clock starts.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "agreement"))

from scripts.lib import figures  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", required=True)
    ap.add_argument("--language", action="append", default=[])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--write-docs", action="store_true", help="write docs/figures/polyglot-speed.md")
    args = ap.parse_args()
    from polyglot_plain import plain_loop, project_image

    from harness.core.errors import InputError
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import ensure_image
    from harness.inputs import polyglot
    try:
        every = polyglot.exercises(Path(args.problems))
    except InputError as e:
        print(f"bench_polyglot: {e}", file=sys.stderr)
        return 2
    client = connect()
    sandbox = ensure_image(client)
    languages = args.language or sorted({e.language for e in every})
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for language in languages:
            mine = [e for e in every if e.language == language]
            if not mine:
                continue
            project_image(client, sandbox, language)   # built before any clock starts
            cands = [polyglot.reference_candidate(e) for e in mine]
            trees = {f"reference/{e.name}": polyglot.tree_for(e, c) for e, c in zip(mine, cands)}
            results, plain_s, _ = plain_loop(client, sandbox, language, trees)
            plain_ok = sum(1 for code, _ in results.values() if code == 0)
            samples = Path(tmp) / f"{language}.jsonl"
            samples.write_text("".join(json.dumps({"task_id": c.task_id, "files": {
                k: v.decode("utf-8", "surrogateescape") for k, v in c.files.items()}}) + "\n" for c in cands))
            problems = Path(args.problems)
            track = [problems / language] if (problems / language).is_dir() else [problems]
            out = Path(tmp) / f"out-{language}"
            t0 = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(track[0]),
                                   "--samples", str(samples), "--out", str(out), "--workers", str(args.workers)],
                                  cwd=ROOT, capture_output=True, text=True)
            passk_s = time.monotonic() - t0
            if proc.returncode != 0:
                print(f"bench_polyglot: passk evaluate failed for {language}: {proc.stderr[-500:]}", file=sys.stderr)
                return 1
            got = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
            passk_ok = sum(1 for r in got if r["status"] == "passed")
            rows.append((language, len(mine), plain_s, passk_s, plain_ok, passk_ok))
            print(f"{language}: {len(mine)} exercises; plain loop {plain_s:.0f} s ({plain_ok} exit 0); "
                  f"passk {passk_s:.0f} s ({passk_ok} passed); {plain_s / passk_s:.2f}x", flush=True)
    plain_total, passk_total = sum(r[2] for r in rows), sum(r[3] for r in rows)
    table = [[lang, n, f"{p:.0f}", f"{q:.0f}", f"{p / q:.2f}x", po, qo] for lang, n, p, q, po, qo in rows]
    table.append(["all", sum(r[1] for r in rows), f"{plain_total:.0f}", f"{passk_total:.0f}",
                  f"{plain_total / passk_total:.2f}x", sum(r[4] for r in rows), sum(r[5] for r in rows)])
    body = figures.table(["language", "exercises", "plain loop s", "passk s", "ratio", "plain: exit 0", "passk: passed"],
                         table)
    body += (f"\n\npassk `--workers {args.workers}`, its time from the command's start to its end (containers, "
             "inputs, the report); the plain loop: aider's command over the exercises one after another in one "
             "container of the same image, as root, no limits. The references as a candidate sends them (a Rust "
             "reference's own manifest set aside): the plain loop's exit 0 and passk's passes differ where passk "
             "asks for the runner's account (Go's counter declares no test).\n")
    return figures.finish("polyglot-speed", body, args.write_docs)


if __name__ == "__main__":
    sys.exit(main())
