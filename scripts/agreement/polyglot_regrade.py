#!/usr/bin/env python3
"""A benchmark run's directory as aider's runner writes it, regraded by passk beside what was recorded.

No model runs here: the run directory is made from aider's own procedure run as a plain loop
(scripts/agreement/polyglot_plain.py --only reference --as-candidate --out PLAIN): each exercise's directory holds the
reference solution's files (as a candidate sends them) and a `.aider.results.json` whose `tests_outcomes`
is [false, what the plain loop's exit status said of that reference] (a failed first try, then the second),
so the regrade compares passk's verdict with aider's procedure's on every exercise, and the repair report is
made as for a real run. A real run's directory (`tmp.benchmarks/<run>/`) is regraded the same way:
`passk evaluate --problems polyglot-benchmark/ --samples tmp.benchmarks/<run>/ --out OUT`.

    python3 scripts/agreement/polyglot_regrade.py --problems polyglot-benchmark/ --plain /tmp/polyglot-plain \\
        [--run /tmp/polyglot-run] [--out /tmp/polyglot-regraded]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", required=True)
    ap.add_argument("--plain", required=True, help="polyglot_plain.py's --out (its <language>.json files)")
    ap.add_argument("--run", default="/tmp/polyglot-run")
    ap.add_argument("--out", default="/tmp/polyglot-regraded")
    args = ap.parse_args()
    from harness.core.errors import InputError
    from harness.inputs import polyglot
    try:
        every = polyglot.exercises(Path(args.problems))
    except InputError as e:
        print(f"polyglot_regrade: {e}", file=sys.stderr)
        return 2
    run = Path(args.run)
    shutil.rmtree(run, ignore_errors=True)
    made = 0
    for e in every:
        plain = Path(args.plain) / f"{e.language}.json"
        if not plain.is_file():
            continue
        failed = set(json.loads(plain.read_text()).get("reference_not") or [])
        cand = polyglot.reference_candidate(e)
        track, name = e.task_id.split("/", 1)
        d = run / track / "exercises" / "practice" / name
        for rel, data in polyglot.tree_for(e, cand).items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_bytes(data)
        (d / polyglot.RESULTS_FILE).write_text(json.dumps({
            "testcase": name, "model": "aider's procedure as a plain loop (no model)", "edit_format": "reference",
            "tests_outcomes": [False, e.name not in failed], "test_timeouts": 0}))
        made += 1
    print(f"{made} exercises written to {run}", file=sys.stderr)
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", args.problems, "--samples",
                           str(run), "--out", str(out), "--workers", "2"], cwd=ROOT, capture_output=True, text=True)
    print("\n".join(line for line in proc.stderr.splitlines() if not line.startswith("passk: ")))
    if proc.returncode != 0:
        return proc.returncode
    rep = json.loads((out / "score.json").read_text())["repair"]
    print(json.dumps({k: rep[k] for k in ("tasks", "try1_rate", "within_two_rate", "second_tries", "repaired",
                                          "repair_rate")}, indent=1))
    print(json.dumps(rep.get("aider"), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
