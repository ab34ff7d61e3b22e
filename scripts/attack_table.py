#!/usr/bin/env python3
"""Run every hostile candidate of tests/attacks.py through the real Docker engine, in both isolation
modes and under each registered runtime, and print a Markdown table of the label and reason each
received (with whether that is the expected one). Usage: python3 scripts/attack_table.py"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.config import Limits, SandboxSettings  # noqa: E402
from harness.sandbox.docker import DockerBackend  # noqa: E402
from tests.attacks import ATTACKS, PROBE, make_job as job, matches  # noqa: E402


def main() -> int:
    runtimes = ["runc"]
    info = subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"], capture_output=True, text=True)
    if "runsc" in info.stdout:
        runtimes.append("runsc")
    cols = [(rt, iso) for rt in runtimes for iso in ("pooled", "fresh")]
    results = {}
    bad = 0
    for rt in runtimes:
        settings = SandboxSettings(workers=1, runtime=rt)
        backend = DockerBackend("attacks-" + uuid.uuid4().hex, Limits(memory_mb=256), settings)
        backend.prepare()
        pooled = None
        try:
            for a in ATTACKS:
                for iso in ("pooled", "fresh"):
                    if rt == "runsc" and a.known_runsc:
                        results[(a.name, rt, iso)] = "not run (known gVisor limitation)"
                        continue
                    if iso == "fresh":
                        s = backend.open_session()
                        s.start()
                        r = s.run(job(settings, a.code, a.timeout_s))
                        s.stop()
                        clean = ""
                    else:
                        if pooled is None:
                            pooled = backend.open_session()
                            pooled.start()
                        r = pooled.run(job(settings, a.code, a.timeout_s))
                        if not r["healthy"]:
                            pooled.stop()
                            pooled = None
                            clean = ", container replaced"
                        else:
                            clean = ""
                        if pooled is None:
                            pooled = backend.open_session()
                            pooled.start()
                        probe = pooled.run(job(settings, PROBE, 2.0))
                        clean += ", next clean" if probe["status"] == "passed" else ", NEXT CANDIDATE SAW LEFTOVERS"
                    ok = matches(a, r)
                    bad += not ok
                    results[(a.name, rt, iso)] = f"{r['status']} `{r['reason']}`{clean}{'' if ok else ' **UNEXPECTED**'}"
        finally:
            if pooled is not None:
                pooled.stop()
            backend.close()
    print("| attack | expected | " + " | ".join(f"{rt} {iso}" for rt, iso in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for a in ATTACKS:
        print(f"| {a.name} | {a.status} `{a.reason}` | " + " | ".join(results[(a.name, rt, iso)] for rt, iso in cols) + " |")
    print(f"\n{len(ATTACKS)} attacks, {len(cols)} configurations, {bad} unexpected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
