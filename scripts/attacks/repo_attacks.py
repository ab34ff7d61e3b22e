#!/usr/bin/env python3
"""The hostile table for patches: every attack of tests/repo_attacks.py on tinycalc (a repository written
for the tests), graded as the harness grades and with --strict-tests, each beside the label written for it
before it ran; then honest candidates in the same workers, which must pass (nothing a patch did reaches
them). Prints the table and the count of unexpected labels; --write-docs writes docs/figures/repo-attacks.md.

    python3 scripts/attacks/repo_attacks.py [--write-docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import figures  # noqa: E402
from tests.repo_attacks import run_table  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="passk-repo-attacks-") as tmp:
        table, unexpected, honest = run_table(Path(tmp))
    rows = [[a.name, f"{a.default[0]} {a.default[1]}", f"{got[0][0]} {got[0][1]}" + ("" if got[0] == a.default else " **UNEXPECTED**"),
             f"{a.strict[0]} {a.strict[1]}", f"{got[1][0]} {got[1][1]}" + ("" if got[1] == a.strict else " **UNEXPECTED**"),
             a.documented or "-"] for a, got in table]
    body = figures.table(["patch", "expected", "passk", "expected (--strict-tests)", "passk (--strict-tests)",
                          "documented"], rows)
    body += (f"\n\n{len(table)} patches, 2 gradings: {unexpected} unexpected labels; the honest candidates that ran "
             f"after them in the same workers: {honest}.\n")
    return figures.finish("repo-attacks", body, args.write_docs, unexpected)


if __name__ == "__main__":
    sys.exit(main())
