#!/usr/bin/env python3
"""Run every hostile candidate of tests/attacks.py through the real Docker engine, in both isolation
modes and under each registered runtime, and print a Markdown table of the label and reason each
received (with whether that is the expected one). A sandbox fault is shown as such, not raised, so the
table can also be made for an older image: `--image passk-sandbox:<tag>` runs that image as it is.

Usage: python3 scripts/attacks/attack_table.py [--image IMAGE] [--runtimes runc,runsc] [--only SUBSTRING] [--write-docs]

--write-docs: also write the table into docs/figures/attacks.md, which docs/security.md includes
(scripts/lib/figures.py); only for the whole table of passk's own image."""

from __future__ import annotations

import argparse
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.core import text  # noqa: E402
from harness.inputs.config import Limits, SandboxSettings  # noqa: E402
from harness.core.errors import SandboxUnavailableError  # noqa: E402
from harness.execution.sandbox.docker import DockerBackend  # noqa: E402
from scripts.lib import figures  # noqa: E402
from tests.attacks import ATTACKS, LIBRARY_ATTACKS, PROBE, REASON_SHAPE, attack_job, make_job, matches, well_formed  # noqa: E402


class Pool:
    """One warm session, replaced when a job leaves it unhealthy or it faults."""

    def __init__(self, backend):
        self.backend, self.session = backend, None

    def run(self, job):
        if self.session is None:
            self.session = self.backend.open_session()
            self.session.start()
        try:
            result = self.session.run(job)
        except SandboxUnavailableError:
            self.replace()
            raise
        if not result["healthy"]:
            self.replace()
        return result

    def replace(self):
        if self.session is not None:
            self.session.stop()
            self.session = None


def one(backend, settings, attack, isolation, pool):
    """The cell for one attack in one configuration, and whether it is what was expected."""
    runtime = settings.runtime
    try:
        if isolation == "fresh":
            session = backend.open_session()
            session.start()
            try:
                results = [session.run(attack_job(settings, attack))]
            finally:
                session.stop()
            note = ""
        else:
            replaced = False
            results = []
            for _ in range(2 if attack.twice else 1):
                results.append(pool.run(attack_job(settings, attack)))
                replaced = replaced or not results[-1]["healthy"]
            probe = pool.run(make_job(settings, PROBE, 2.0))
            note = (", container replaced" if replaced else "") + (
                ", next clean" if probe["status"] == "passed" else ", NEXT CANDIDATE SAW LEFTOVERS")
            if attack.twice:
                note += ", twice: " + " / ".join(f"{r['status']} `{r['reason']}`" for r in results)
    except SandboxUnavailableError as e:
        return f"HARNESS FAULT ({str(e)[:60]}) **UNEXPECTED**", False
    ok = all(matches(attack, r, runtime) and well_formed(r) for r in results) and "LEFTOVERS" not in note
    r = results[-1]
    if REASON_SHAPE.match(r["reason"]):
        reason = f"`{r['reason']}`"
    else:  # what an older supervisor let through: shown escaped, cut, with its length
        reason = f"{text.markdown_inline(r['reason'], 40)} ({len(r['reason'])} chars)"
    return f"{r['status']} {reason}{note}{'' if ok else ' **UNEXPECTED**'}", ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", help="run this image as it is (e.g. an older passk-sandbox tag)")
    ap.add_argument("--runtimes", help="comma-separated (default: runc, and runsc when registered)")
    ap.add_argument("--only", help="attacks whose name contains this text")
    ap.add_argument("--environment", help="run in this environment's image, with the attacks its libraries bring "
                                          "(e.g. bigcodebench)")
    ap.add_argument("--write-docs", action="store_true", help="also write docs/figures/attacks.md (the whole table "
                                                                  "of passk's own image: not with --image, --only, "
                                                                  "--runtimes or --environment)")
    args = ap.parse_args()
    if args.write_docs and (args.image or args.only or args.runtimes or args.environment):
        ap.error("--write-docs writes the whole table of passk's own image: leave out --image, --only, --runtimes "
                 "and --environment")
    if args.runtimes:
        runtimes = args.runtimes.split(",")
    else:
        info = subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"], capture_output=True, text=True)
        runtimes = ["runc"] + (["runsc"] if "runsc" in info.stdout else [])
    pool_of = ATTACKS + ([a for a in LIBRARY_ATTACKS if a.environment == args.environment] if args.environment else [])
    attacks = [a for a in pool_of if not args.only or args.only in a.name]
    cols = [(rt, iso) for rt in runtimes for iso in ("pooled", "fresh")]
    results = {}
    bad = 0
    for rt, memory_mb in [(rt, m) for rt in runtimes for m in sorted({a.memory_mb for a in attacks})]:
        settings = SandboxSettings(workers=1, runtime=rt, image=args.image, environment=args.environment)
        # one container size per candidate size: an attack that asks for more memory gets its own containers
        backend = DockerBackend("attacks-" + uuid.uuid4().hex, Limits(memory_mb=memory_mb), settings)
        backend.prepare()
        pool = Pool(backend)
        try:
            for a in (a for a in attacks if a.memory_mb == memory_mb):
                for iso in ("pooled", "fresh"):
                    if rt == "runsc" and a.known_runsc:
                        results[(a.name, rt, iso)] = "not run (known gVisor limitation)"
                        continue
                    cell, ok = one(backend, settings, a, iso, pool)
                    bad += not ok
                    results[(a.name, rt, iso)] = cell
        finally:
            pool.replace()
            backend.close()
    rows = []
    for a in attacks:
        expected = f"{a.status} `{a.reason}`" + (f" (runsc: {a.runsc[0]} `{a.runsc[1]}`)" if a.runsc else "")
        rows.append([a.name, expected, *(results[(a.name, rt, iso)] for rt, iso in cols)])
    body = (figures.table(["attack", "expected", *(f"{rt} {iso}" for rt, iso in cols)], rows)
            + f"\n\n{len(attacks)} attacks, {len(cols)} configurations, {bad} unexpected")
    return figures.finish("attacks", body, args.write_docs, bad)


if __name__ == "__main__":
    sys.exit(main())
