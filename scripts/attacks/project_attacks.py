#!/usr/bin/env python3
"""The hostile table for projects (aider's polyglot benchmark, the project channel): every candidate of
tests/project_attacks.py for passk's own exercise in the six languages, under each runtime asked for, beside
the label written for it before it ran; the references run as their own trees first. Prints the table and
the count of unexpected rows; --write-docs writes docs/figures/project-attacks.md.

    python3 scripts/attacks/project_attacks.py [--runtime runc --runtime runsc] [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import figures  # noqa: E402
from tests import project_attacks  # noqa: E402

DATA = ROOT / "tests" / "data" / "polyglot"


def run(tmp: Path, runtime: str) -> tuple[dict, dict]:
    samples = tmp / "attacks.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in project_attacks.rows()))
    out = tmp / f"out-{runtime}"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(DATA), "--samples",
                           str(samples), "--out", str(out), "--workers", "2", "--runtime", runtime,
                           "--project-timeout-s", "20", "--check-ground-truth"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"project_attacks: passk evaluate failed under {runtime}: {proc.stderr[-800:]}")
    rows = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        rows[(r["task_id"].split("/")[0], r["sample"]["attack"])] = r
    truth = json.loads((out / "manifest.json").read_text())["ground_truth_check"]["per_task"]
    return rows, {t.split("/")[0]: v["passed"] for t, v in truth.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime", action="append", default=[], help="runc, runsc (repeatable; default both)")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    runtimes = args.runtime or ["runc", "runsc"]
    got, refs = {}, {}
    for rt in runtimes:
        with tempfile.TemporaryDirectory(prefix=f"passk-project-attacks-{rt}-") as tmp:
            got[rt], refs[rt] = run(Path(tmp), rt)
    rows, bad = [], 0
    for language, attacks in project_attacks.ATTACKS.items():
        for attack in attacks:
            want = project_attacks.expected(language, attack)
            cells = []
            for rt in runtimes:
                r = got[rt].get((language, attack))
                seen = "-" if r is None else f"{r['status']} {r['reason']}"
                aside = ", ".join(r["sample"].get("set_aside") or []) if r else ""
                ok = seen == want
                bad += not ok
                cells.append(("" if ok else "**UNEXPECTED** ") + f"`{seen}`" + (f" (set aside: {aside})" if aside else ""))
            note = " (documented exception)" if (language, attack) in project_attacks.EXCEPTIONS else ""
            rows.append([language, attack, f"`{want}`{note}", *cells])
    for rt in runtimes:
        bad += sum(1 for ok in refs[rt].values() if not ok)
    body = figures.table(["language", "candidate", "expected (written first)", *[f"{rt}: seen" for rt in runtimes]], rows)
    body += (f"\n\n{len(rows)} candidates under {', '.join(runtimes)}: {bad} unexpected. The references: "
             + "; ".join(f"{rt} {sum(refs[rt].values())}/{len(refs[rt])} passed" for rt in runtimes)
             + ". What each candidate tries is in tests/project_attacks.py.\n")
    return figures.finish("project-attacks", body, args.write_docs, bad)


if __name__ == "__main__":
    sys.exit(main())
