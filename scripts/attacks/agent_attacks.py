#!/usr/bin/env python3
"""The hostile table for agents: every command of tests/agent_attacks.py run in an agent's sandbox
(harness/sessions) beside a neighbour's, under each runtime asked for, with what must hold afterwards
written before it ran. Prints the table and the count of rows that did not hold; --write-docs writes
docs/figures/agent-attacks.md.

    python3 scripts/attacks/agent_attacks.py [--runtime runc --runtime runsc] [--write-docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import figures  # noqa: E402
from tests.agent_attacks import run_table  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime", action="append", default=[], help="runc, runsc (repeatable; default both)")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    runtimes = args.runtime or ["runc", "runsc"]
    got = {}
    for rt in runtimes:
        with tempfile.TemporaryDirectory(prefix=f"passk-agent-attacks-{rt}-") as tmp:
            got[rt] = run_table(Path(tmp), rt)
    names = [o.name for o in got[runtimes[0]]]
    whats = {o.name: o.what for o in got[runtimes[0]]}
    rows = []
    for name in names:
        row = [name, whats[name]]
        for rt in runtimes:
            o = next((x for x in got[rt] if x.name == name), None)
            row.append("-" if o is None else ("held" if o.ok else "**DID NOT HOLD**") + f": {o.detail}")
        rows.append(row)
    bad = sum(not o.ok for rt in runtimes for o in got[rt])
    body = figures.table(["attack", "what it tries", *[f"{rt}: what was seen" for rt in runtimes]], rows)
    body += (f"\n\n{len(names)} rows under {', '.join(runtimes)}: {bad} did not hold. Each attack runs in the "
             "attacker's sandbox beside a neighbour's holding a secret; after each, the neighbour's secret and "
             "its sandbox are checked.\n")
    return figures.finish("agent-attacks", body, args.write_docs, bad)


if __name__ == "__main__":
    sys.exit(main())
