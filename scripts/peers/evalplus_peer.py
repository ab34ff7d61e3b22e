#!/usr/bin/env python3
"""EvalPlus 0.3.1 itself as the peer: its own evaluator (`python -m evalplus.evaluate`) on a HumanEval+ or
MBPP+ file of ours (its loaders take a local file from HUMANEVAL_OVERRIDE_PATH / MBPP_OVERRIDE_PATH) and
the same samples, compared sample by sample with a passk run on them: base verdict against base_status,
plus verdict (EvalPlus's base and plus both "pass") against status. Every disagreement is printed with
its explanation where one is known (EvalPlus's find_zero check that never records a pass; a return value
whose __eq__ lies, which EvalPlus compares in the candidate's own process; a verdict a time limit decided,
which depends on the machine and the moment); anything else is UNEXPLAINED, and the exit code is 1.

    python3 scripts/peers/evalplus_peer.py --problems P --samples S --passk-run DIR [--dataset humaneval|mbpp]
        [--evalplus-python /opt/evalplus-venv/bin/python] [--parallel 2] [--cold]

EvalPlus needs its own Python environment (its full dependency list is heavy; the evaluator needs only
these): python3 -m venv V && V/bin/pip install evalplus==0.3.1 --no-deps && V/bin/pip install numpy psutil
tqdm termcolor fire appdirs wget tempdir multipledispatch tree-sitter tree-sitter-python rich datasets.
--cold gives EvalPlus an empty cache, so that it computes the ground truth as a first run does."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DEFAULT_PYTHON = os.environ.get("PASSK_EVALPLUS_PYTHON", "/opt/evalplus-venv/bin/python")

# EvalPlus's evaluate() starts a "stucking_checker" thread that sleeps 20 s between looks and is not a
# daemon, so its process cannot exit sooner than 20 s after the first sample was submitted, however fast
# the work was. `no_wait` runs the same evaluate() with that thread made a daemon: the time of its work.
_NO_WAIT = """import sys, threading
_init = threading.Thread.__init__
def _daemon(self, *args, **kwargs):
    kwargs.setdefault("daemon", True)
    _init(self, *args, **kwargs)
threading.Thread.__init__ = _daemon
import evalplus.evaluate
sys.argv = ["evalplus.evaluate"] + sys.argv[1:]
evalplus.evaluate.main()
"""


def run_evalplus(problems: Path, samples: Path, dataset: str, python: str, parallel: int, cold: bool,
                 min_time_limit: float | None = None, factor: float | None = None,
                 cache_home: Path | None = None, no_wait: bool = False) -> tuple[dict, float, str]:
    """({task: [(base_status, plus_status), ...] in sample order}, seconds, EvalPlus's output). Its cache
    (the ground truth): `cache_home` (XDG_CACHE_HOME) if given, an empty one when `cold`, else the user's."""
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        copy = d / "samples.jsonl"
        if samples.name.endswith(".gz"):
            import gzip
            copy.write_bytes(gzip.decompress(samples.read_bytes()))
        else:
            shutil.copy(samples, copy)
        env = dict(os.environ, HUMANEVAL_OVERRIDE_PATH=str(problems.resolve()), MBPP_OVERRIDE_PATH=str(problems.resolve()))
        if cache_home is not None:
            env["XDG_CACHE_HOME"] = str(cache_home)
        elif cold:
            env["XDG_CACHE_HOME"] = str(d / "cache")
        cmd = [python, *(["-c", _NO_WAIT] if no_wait else ["-m", "evalplus.evaluate"]), "--dataset", dataset,
               "--samples", str(copy), "--parallel", str(parallel), "--i-just-wanna-run"]
        if min_time_limit is not None:
            cmd += ["--min-time-limit", str(min_time_limit)]
        if factor is not None:
            cmd += ["--gt-time-limit-factor", str(factor)]
        t0 = time.monotonic()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=d)
        seconds = time.monotonic() - t0
        if proc.returncode != 0:
            raise SystemExit(f"EvalPlus failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        results = json.loads((d / "samples_eval_results.json").read_text())
    out = {t: [(r["base_status"], r["plus_status"]) for r in rs] for t, rs in results["eval"].items()}
    return out, seconds, proc.stdout


def passk_rows(run: Path) -> dict:
    from harness.records.results import latest_rows, read_rows
    rows = latest_rows(read_rows(run / "results.jsonl"))
    by_task = defaultdict(dict)
    for (t, i), r in rows.items():
        by_task[t][i] = r
    return by_task


def kinds_of(samples: Path) -> dict:
    """The `kind` field of each sample (our own sample files say what each candidate is), by (task, index)."""
    from harness.core.jsonl import iter_jsonl
    counts, out = Counter(), {}
    for _, obj in iter_jsonl(samples):
        t = str(obj["task_id"])
        out[(t, counts[t])] = obj.get("kind", "")
        counts[t] += 1
    return out


LIMIT_REASONS = ("input_time_limit", "wall_time_limit", "cpu_time_limit")


def explain(dataset, problem, row, ep_base, ep_plus, kind) -> str:
    if dataset == "humaneval" and problem.entry_point == "find_zero" and row.status == "passed":
        return "EvalPlus 0.3.1's find_zero check `continue`s past recording the pass: every sample fails there"
    if kind.startswith("lying") and "pass" in (ep_base, ep_plus):
        return "a return value whose __eq__ lies: EvalPlus compares it in the candidate's process, passk as data"
    if row.reason in LIMIT_REASONS or "timeout" in (ep_base, ep_plus):
        return "a time limit decided (machine-dependent; passk audit reruns these)"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", required=True, type=Path)
    ap.add_argument("--samples", required=True, type=Path)
    ap.add_argument("--passk-run", required=True, type=Path)
    ap.add_argument("--dataset", choices=("humaneval", "mbpp"), default=None)
    ap.add_argument("--evalplus-python", default=DEFAULT_PYTHON)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--cold", action="store_true", help="EvalPlus starts with an empty cache (computes its ground truth)")
    args = ap.parse_args()
    from harness.inputs.problems import load_problems
    problems = load_problems(args.problems)
    dataset = args.dataset or next(iter(problems.values())).differential.dataset
    ep, seconds, _ = run_evalplus(args.problems, args.samples, dataset, args.evalplus_python, args.parallel, args.cold)
    mine = passk_rows(args.passk_run)
    kinds = kinds_of(args.samples)
    agree = {"base": 0, "plus": 0}
    total = 0
    differences = []
    for task, results in sorted(ep.items()):
        for i, (b, p) in enumerate(results):
            row = mine.get(task, {}).get(i)
            if row is None:
                differences.append((task, i, "missing in the passk run", ""))
                continue
            total += 1
            ep_plus = "pass" if b == p == "pass" else "not"
            mine_base = "pass" if row.base_status == "passed" else "not"
            mine_plus = "pass" if row.status == "passed" else "not"
            base_ok = (b == "pass") == (mine_base == "pass")
            plus_ok = ep_plus == mine_plus
            agree["base"] += base_ok
            agree["plus"] += plus_ok
            if not (base_ok and plus_ok):
                why = explain(dataset, problems[task], row, b, p, kinds.get((task, i), ""))
                differences.append((task, i, f"EvalPlus base {b}, plus {p}; passk {row.status} ({row.reason}), "
                                    f"base {row.base_status} [{kinds.get((task, i), '')}]", why))
    print(f"EvalPlus 0.3.1 ({dataset}, --parallel {args.parallel}{', cold cache' if args.cold else ''}): {seconds:.1f} s")
    print(f"samples {total}: base verdicts agree {agree['base']}/{total}, plus verdicts agree {agree['plus']}/{total}")
    unexplained = 0
    for task, i, what, why in differences:
        unexplained += not why
        print(f"  {'explained' if why else 'UNEXPLAINED'}: {task} #{i}: {what}" + (f" — {why}" if why else ""))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
