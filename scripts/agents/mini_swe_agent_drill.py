#!/usr/bin/env python3
"""mini-swe-agent, unchanged, on passk's sandboxes: its own SWE-bench batch runner (`mini-extra swebench`,
its own swebench.yaml) with MSWEA_DOCKER_EXECUTABLE=passk-docker, on a repository written for the tests
(tests/repo_fixtures.py's tinycalc), its model a scripted one (mini-swe-agent's own DeterministicModel, which
replays the actions given: read, fix, write the patch, submit); then `passk evaluate` on the preds.json it
wrote. The proof that the seam holds end to end without a model or the internet.

    python3 -m venv /tmp/msa && /tmp/msa/bin/pip install mini-swe-agent      # from PyPI, once
    python3 scripts/agents/mini_swe_agent_drill.py --mini /tmp/msa/bin/mini-extra --out /tmp/msa-drill

It prints each step's exit status, the submission, the sandboxes left on the engine (none) and the verdict."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

FIX = ("python - <<'EOF'\nimport re\np = 'tinycalc/__init__.py'\ns = open(p).read()\n"
       "s = s.replace('def mean(xs):\\n', 'def mean(xs):\\n    if not xs:\\n        return 0.0\\n')\n"
       "open(p, 'w').write(s)\nEOF")
ACTIONS = ["cat tinycalc/__init__.py && id -u && command -v python", FIX,
           "python -c 'import tinycalc; print(tinycalc.mean([]))'",
           "git diff -- tinycalc/__init__.py > patch.txt", "cat patch.txt",
           "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mini", required=True, help="mini-swe-agent's mini-extra (in a venv of its own)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    from tests.repo_fixtures import write_task
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t = write_task(out / "task", [None])
    dataset = out / "dataset"
    dataset.mkdir(exist_ok=True)
    (dataset / "test.jsonl").write_text(t["rows"].read_text())
    model = {"model": {"outputs": [{"role": "assistant", "content": f"THOUGHT: step {i}",
                                    "extra": {"actions": [{"command": a}], "cost": 0.0}}
                                   for i, a in enumerate(ACTIONS)]}}
    (out / "model.yaml").write_text(json.dumps(model))
    shim = out / "passk-docker"      # this checkout's passk-docker, whatever the PATH holds
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m harness.integrations.passk_docker \"$@\"\n")
    shim.chmod(0o755)
    env = {**os.environ, "MSWEA_DOCKER_EXECUTABLE": str(shim), "PASSK_ROWS": str(t["rows"]),
           "PASSK_REPOS": str(t["repos"]), "PASSK_REPO_SPECS": str(t["specs"]), "HF_DATASETS_OFFLINE": "1",
           "MSWEA_CONFIGURED": "true"}
    runs = out / "runs"
    t0 = time.monotonic()
    proc = subprocess.run([args.mini, "swebench", "--subset", str(dataset), "--split", "test", "-o", str(runs),
                           "-c", "swebench.yaml", "-c", str(out / "model.yaml"), "--model-class", "deterministic"],
                          env=env, capture_output=True, text=True, timeout=900)
    print(f"mini-extra swebench: exit {proc.returncode} in {time.monotonic() - t0:.1f} s")
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-3000:])
    preds = json.loads((runs / "preds.json").read_text())
    pred = preds.get("passk-tests__tinycalc-1") or {}
    print("submission:\n" + (pred.get("model_patch") or "(none)"))
    traj = json.loads(next(runs.rglob("*.traj.json")).read_text())
    print("exit status:", traj.get("info", {}).get("exit_status"))
    left = subprocess.run(["docker", "ps", "-a", "--filter", "label=org.passk.agent", "-q"], capture_output=True,
                          text=True).stdout.split()
    time.sleep(5)   # mini-swe-agent stops its container in the background
    left = subprocess.run(["docker", "ps", "-a", "--filter", "label=org.passk.agent", "-q"], capture_output=True,
                          text=True).stdout.split()
    print(f"agent sandboxes left on the engine: {len(left)}")
    ev = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(t["rows"]), "--samples",
                         str(runs / "preds.json"), "--repos", str(t["repos"]), "--repo-specs", str(t["specs"]),
                         "--out", str(out / "eval"), "--k", "1", "--quiet"], cwd=ROOT, capture_output=True, text=True)
    rows = [json.loads(line) for line in (out / "eval" / "results.jsonl").read_text().splitlines()] if ev.returncode == 0 else []
    print("passk evaluate:", ev.returncode, [f"{r['status']} {r['reason']}" for r in rows] or ev.stderr[-1500:])
    ok = proc.returncode == 0 and rows and rows[0]["status"] == "passed" and not left
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
