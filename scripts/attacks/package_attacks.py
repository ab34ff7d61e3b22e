#!/usr/bin/env python3
"""The package attack table: every hostile package and row of tests/package_attacks.py given to `passk
evaluate` as a user would give it, with the outcome written before it ran (refused with one line naming
the file and the key, or loaded); prints the table and the count of unexpected outcomes, and with
--write-docs writes docs/figures/package-attacks.md. Nothing here starts a container: a refusal comes
before anything runs.

    python3 scripts/attacks/package_attacks.py [--write-docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import figures  # noqa: E402
from tests.package_attacks import HOST_MARKERS, PACKAGE_ATTACKS, outcome_of, remove_tree  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    rows, unexpected = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, attack in enumerate(PACKAGE_ATTACKS):
            root = Path(tmp) / str(n)
            try:
                outcome, line = outcome_of(attack, root)
            finally:
                remove_tree(root)
            shown = line.replace(str(root) + "/", "").removeprefix("passk: ")
            ok = (outcome == attack.outcome and all(f in line for f in attack.says)
                  and not any(m in line for m in HOST_MARKERS))
            unexpected += not ok
            rows.append([attack.name, attack.outcome, outcome + ("" if ok else " **UNEXPECTED**"),
                         f"`{shown}`" if shown else "-"])
    body = figures.table(["hostile input", "expected", "passk", "what passk said (exit 2, one line)"], rows)
    body += f"\n\n{len(PACKAGE_ATTACKS)} hostile packages and rows: {unexpected} unexpected outcomes.\n"
    return figures.finish("package-attacks", body, args.write_docs, unexpected)


if __name__ == "__main__":
    sys.exit(main())
