"""BigCodeBench's own evaluator beside passk, on the same problems, samples and environment image.

BigCodeBench 0.2.5's evaluation functions (bigcodebench.eval.untrusted_check for a sample,
bigcodebench.gen.util.trusted_check for a task's ground truth) run inside the environment's image
(passk-env-bigcodebench, which holds the libraries its tasks import), the package mounted read-only from
the host (pip install --no-deps bigcodebench==0.2.5), one sample at a time, as its evaluate command
composes them: the sample's solution (or complete_prompt + completion), after code_prompt + "\\n    pass\\n"
when calibrated; limits max_as 30 GB, max_data 30 GB, stack 10 MB, the suite max(timeout, gt time) + 1.
passk evaluates the same files with the same environment and timeout; the script prints the per-sample
agreement of pass / not pass, every disagreement, and both ground-truth pass rates.

    python3 scripts/peers/bigcodebench_peer.py [--problems F] [--samples F] [--timeout-s 10] [--original]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DRIVER = r'''
import json, sys
import bigcodebench.eval as ev
import bigcodebench.gen.util as gu
timeout, calibrated = float(sys.argv[3]), sys.argv[4] == "calibrated"
ev.TIMEOUT_LIMIT = gu.TIMEOUT_LIMIT = timeout       # BIGCODEBENCH_TIMEOUT_PER_TASK (the environment variable
                                                    # is read as text and cannot be compared with a number)
problems = {p["task_id"]: p for p in map(json.loads, open(sys.argv[1]))}
gt = {}
for t, p in problems.items():
    r = gu.trusted_check(p["complete_prompt"] + "\n" + p["canonical_solution"], p["test"], t,
                         30 * 1024, 30 * 1024, 10, 1)
    gt[t] = r["time"]
    print(json.dumps({"ground_truth": t, "time": r["time"]}), flush=True)
counts = {}
for s in map(json.loads, open(sys.argv[2])):
    p = problems[s["task_id"]]
    solution = s["solution"] if "solution" in s else p["complete_prompt"] + s["completion"]
    if calibrated:
        solution = p["code_prompt"] + "\n    pass\n" + solution
    index = counts.get(s["task_id"], 0)
    counts[s["task_id"]] = index + 1
    stat, details = ev.untrusted_check(solution, p["test"], p["entry_point"], 30 * 1024, 30 * 1024, 10, 1,
                                       gt[s["task_id"]] or 20)
    print(json.dumps({"task_id": s["task_id"], "index": index, "status": stat,
                      "details": {k: str(v)[-300:] for k, v in details.items()}}), flush=True)
'''


def bigcodebench_dir() -> Path:
    try:
        import bigcodebench
    except ImportError:
        sys.exit("pip install --no-deps bigcodebench==0.2.5 first")
    return Path(bigcodebench.__file__).resolve().parent


def env_image() -> str:
    from harness.inputs.config import SandboxSettings
    from harness.execution.sandbox.docker import connect, resolve_image
    return resolve_image(connect(), SandboxSettings(environment="bigcodebench"))["image"]


def run_peer(image: str, problems: Path, samples: Path, timeout: float, calibrated: bool) -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        Path(d, "driver.py").write_text(DRIVER)
        cmd = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/usr/local/bin/passk-python",
               "-e", "PYTHONPATH=/peer", "-v", f"{bigcodebench_dir()}:/peer/bigcodebench:ro",
               "-v", f"{d}:/driver:ro", "-v", f"{problems.resolve()}:/in/problems.jsonl:ro",
               "-v", f"{samples.resolve()}:/in/samples.jsonl:ro", "-w", "/tmp", image,
               "/driver/driver.py", "/in/problems.jsonl", "/in/samples.jsonl", str(timeout),
               "calibrated" if calibrated else "original"]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def run_passk(problems: Path, samples: Path, timeout: float, calibrated: bool, out: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "harness.cli", "run", str(out / "config.yaml"), "--quiet"]
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(json.dumps({
        "problems": str(problems.resolve()), "samples": str(samples.resolve()), "out": str(out / "run"), "k": [1],
        "sandbox": {"environment": "bigcodebench"},
        "bigcodebench": {"timeout_s": timeout, "calibrated": calibrated}}))
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
    return [json.loads(line) for line in (out / "run" / "results.jsonl").read_text().splitlines()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=Path, default=ROOT / "problems/bigcodebench-libs/problems.jsonl")
    ap.add_argument("--samples", type=Path, default=ROOT / "problems/bigcodebench-libs/samples.jsonl")
    ap.add_argument("--timeout-s", type=float, default=10.0,
                    help="BigCodeBench's per-task floor (240 in its release; lower here so that loops end sooner)")
    ap.add_argument("--original", action="store_true", help="not calibrated (BigCodeBench's --no-calibrated)")
    ap.add_argument("--out", type=Path, default=None, help="where passk's run goes (default: a temporary directory)")
    args = ap.parse_args()
    calibrated = not args.original
    image = env_image()
    peer = run_peer(image, args.problems, args.samples, args.timeout_s, calibrated)
    out = args.out or Path(tempfile.mkdtemp(prefix="passk-bcb-peer-"))
    ours = {(r["task_id"], r["sample_index"]): r for r in run_passk(args.problems, args.samples, args.timeout_s,
                                                                    calibrated, out)}
    gts = [p for p in peer if "ground_truth" in p]
    samples = [p for p in peer if "task_id" in p]
    notes = {}
    for line in args.samples.read_text().splitlines():
        s = json.loads(line)
        notes.setdefault(s["task_id"], []).append(s.get("note", ""))
    agree, rows = 0, []
    for p in samples:
        r = ours[(p["task_id"], p["index"])]
        same = (p["status"] == "pass") == (r["status"] == "passed")
        agree += same
        if not same:
            rows.append(f"  {p['task_id']}#{p['index']}: BigCodeBench {p['status']}, passk {r['status']} {r['reason']} "
                        f"({notes[p['task_id']][p['index']]}); BigCodeBench's details: {json.dumps(p['details'])[:300]}")
    print(f"image {image}; {'calibrated' if calibrated else 'original'}; suite limit max({args.timeout_s:g} s, gt) + 1")
    print(f"ground truth (BigCodeBench): {sum(g['time'] is not None for g in gts)}/{len(gts)} pass; failing: "
          + (", ".join(g["ground_truth"] for g in gts if g["time"] is None) or "none"))
    labels = {}
    for p in samples:
        r = ours[(p["task_id"], p["index"])]
        key = f"{p['status']} / {r['status']}"
        labels[key] = labels.get(key, 0) + 1
    print(f"per-sample agreement (pass vs not pass): {agree}/{len(samples)}")
    print("BigCodeBench / passk labels: " + ", ".join(f"{k}: {v}" for k, v in sorted(labels.items())))
    for line in rows:
        print(line)
    print(f"passk's run: {out / 'run'}")
    return 0 if agree == len(samples) else 1


if __name__ == "__main__":
    sys.exit(main())
