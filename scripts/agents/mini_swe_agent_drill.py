#!/usr/bin/env python3
"""mini-swe-agent, unchanged, on passk's sandboxes: its own SWE-bench batch runner (`mini-extra swebench`,
its own swebench.yaml) with MSWEA_DOCKER_EXECUTABLE=passk-docker, on a repository written for the tests
(tests/repo_fixtures.py's tinycalc), its model a scripted one (mini-swe-agent's own DeterministicModel, which
replays the actions given). Two rollouts: one reads, fixes, checks and submits its `git diff`; the other
submits without changing anything. Then `passk evaluate` on the preds.json they wrote: the first resolved,
the second not. With --remote the same runs through a `passk serve` (PASSK_URL): the agent's side uses no
Docker engine. The proof that the seam holds end to end without a model or the internet.

    python3 -m venv /tmp/msa && /tmp/msa/bin/pip install mini-swe-agent      # from PyPI, once
    python3 scripts/agents/mini_swe_agent_drill.py --mini /tmp/msa/bin/mini-extra --out /tmp/msa-drill [--remote]

It prints each rollout's exit status and submission, the sandboxes left on the engine (none) and the
verdicts; exit 0 when they are what they should be."""

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
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
ROLLOUTS = {   # instance -> the scripted actions
    "passk-tests__tinycalc-1": ["cat tinycalc/__init__.py && id -u && command -v python", FIX,
                                "python -c 'import tinycalc; print(tinycalc.mean([]))'", "git status --short", SUBMIT],
    "passk-tests__tinycalc-2": ["ls", SUBMIT],
}
EXPECTED = {"passk-tests__tinycalc-1": ("passed", "resolved"), "passk-tests__tinycalc-2": ("failed", "empty_patch")}


def agent_sandboxes() -> list[str]:
    return subprocess.run(["docker", "ps", "-a", "--filter", "label=org.passk.agent", "-q"], capture_output=True,
                          text=True).stdout.split()


def drill(mini: str, out: Path, remote: bool = False, log=print) -> dict:
    """Run both rollouts on tinycalc and grade them: {"verdicts": {instance: (status, reason)}, "left": n,
    "ok": bool, "exits": {instance: mini-swe-agent's exit status}, "seconds": float}."""
    from tests.repo_fixtures import row, write_task
    out.mkdir(parents=True, exist_ok=True)
    t = write_task(out / "task", [None])
    t["rows"].write_text("".join(json.dumps(row(t["base"], iid)) + "\n" for iid in ROLLOUTS))
    got = rollouts(mini, out, t["rows"], str(t["repos"]), str(t["specs"]), ROLLOUTS, remote, log)
    got["ok"] = got["verdicts"] == EXPECTED and not got["left"] and all(v == "Submitted" for v in got["exits"].values())
    return got


def rollouts(mini: str, out: Path, rows_file: Path, repos: str, specs: str | None, actions: dict, remote: bool = False,
             log=print, extra: tuple = ()) -> dict:
    """mini-extra swebench on each instance of `actions` (instance -> its scripted commands), through
    passk-docker (locally, or through a passk serve with `remote`), then passk evaluate on what they
    submitted (`extra`: more of its options)."""
    rows = {r["instance_id"]: r for r in (json.loads(x) for x in rows_file.read_text().splitlines() if x.strip())}
    shim = out / "passk-docker"      # this checkout's passk-docker, whatever the PATH holds
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m harness.integrations.passk_docker \"$@\"\n")
    shim.chmod(0o755)
    env = {**os.environ, "MSWEA_DOCKER_EXECUTABLE": str(shim), "HF_DATASETS_OFFLINE": "1", "MSWEA_CONFIGURED": "true"}
    repo_args = ["--repos", repos, *(["--repo-specs", specs] if specs else [])]
    server = None
    if remote:
        from scripts.lib.passk_run import free_port
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", "--port", str(port), "--workers", "1",
                                   "--problems", str(rows_file), *repo_args, "--sessions", "4", "--token", "drill"],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # the agent's side has no engine: passk-docker reaches the sandboxes only through the service
        env.update(PASSK_URL=f"http://127.0.0.1:{port}", PASSK_TOKEN="drill", DOCKER_HOST="unix:///nonexistent.sock")
        _wait_healthy(port, server)
    else:
        env.update(PASSK_ROWS=str(rows_file), PASSK_REPOS=repos, **({"PASSK_REPO_SPECS": specs} if specs else {}))
    preds, exits = {}, {}
    t0 = time.monotonic()
    try:
        for iid, commands in actions.items():
            dataset = out / "dataset" / iid
            dataset.mkdir(parents=True, exist_ok=True)
            (dataset / "test.jsonl").write_text(json.dumps(rows[iid]) + "\n")
            model = {"model": {"outputs": [{"role": "assistant", "content": f"THOUGHT: step {i}",
                                            "extra": {"actions": [{"command": a}], "cost": 0.0}}
                                           for i, a in enumerate(commands)]}}
            (out / f"model-{iid}.yaml").write_text(json.dumps(model))
            runs = out / "runs" / iid
            s0 = time.monotonic()
            proc = subprocess.run([mini, "swebench", "--subset", str(dataset), "--split", "test", "-o", str(runs),
                                   "-c", "swebench.yaml", "-c", str(out / f"model-{iid}.yaml"), "--model-class",
                                   "deterministic"], env=env, capture_output=True, text=True, timeout=1800)
            trajs = list(runs.rglob("*.traj.json"))
            exits[iid] = json.loads(trajs[0].read_text()).get("info", {}).get("exit_status") if trajs else None
            log(f"{iid}: mini-extra swebench exit {proc.returncode} in {time.monotonic() - s0:.1f} s, "
                f"agent exit status {exits[iid]}")
            if proc.returncode != 0 or not trajs:
                log(proc.stdout[-2000:] + proc.stderr[-3000:])
            pred = json.loads((runs / "preds.json").read_text()).get(iid) if (runs / "preds.json").exists() else None
            pred = pred or {"instance_id": iid, "model_name_or_path": "scripted", "model_patch": ""}
            patch = pred.get("model_patch") or ""
            log(f"  submission: {len(patch)} characters" + (f", {patch.count('diff --git')} file(s)" if patch else " (empty)"))
            preds[iid] = pred
    finally:
        if server is not None:
            server.terminate()
            server.wait(120)
    seconds = time.monotonic() - t0
    for _ in range(50):   # mini-swe-agent stops its container in the background
        left = agent_sandboxes()
        if not left:
            break
        time.sleep(0.2)
    log(f"agent sandboxes left on the engine: {len(left)}")
    (out / "preds.json").write_text(json.dumps(preds))
    ev = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(rows_file), "--samples",
                         str(out / "preds.json"), *repo_args, "--out", str(out / "eval"), "--k", "1", "--quiet", *extra],
                        cwd=ROOT, capture_output=True, text=True)
    results = [json.loads(x) for x in (out / "eval" / "results.jsonl").read_text().splitlines()] \
        if (out / "eval" / "results.jsonl").exists() else []
    verdicts = {r["task_id"]: (r["status"], r["reason"]) for r in results}
    log(f"passk evaluate (exit {ev.returncode}): " + (", ".join(f"{k} {s} {w}" for k, (s, w) in sorted(verdicts.items()))
                                                     or ev.stderr[-1500:]))
    return {"verdicts": verdicts, "left": len(left), "exits": exits, "seconds": seconds, "preds": preds}


def _wait_healthy(port: int, server) -> None:
    import urllib.request
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("passk serve ended: " + server.stderr.read()[-2000:])
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).read()
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("passk serve did not answer in 600 s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mini", required=True, help="mini-swe-agent's mini-extra (in a venv of its own)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--remote", action="store_true", help="through a passk serve's sessions (PASSK_URL)")
    args = ap.parse_args()
    got = drill(args.mini, Path(args.out), args.remote)
    return 0 if got["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
