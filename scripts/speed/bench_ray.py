#!/usr/bin/env python3
"""The Ray executor, measured on this machine (prints figures; nothing here is a test):

  python3 scripts/speed/bench_ray.py overhead [--repeat 20] [--rounds 2]
      the same candidates (HumanEval's canonical solutions x repeat: 3,280 by default) local and through
      Ray on one machine (a local Ray cluster of one node, started before the clock), interleaved rounds:
      candidates/s of each,
      the ratio, and the driver's own CPU per row (the basis of the 100-node plan in docs/ray.md)
  python3 scripts/speed/bench_ray.py node-kill [--copies 5] [--after 200]
      HumanEval mutants (164 x copies: 820 by default) on a local two-node cluster (head + a second node,
      each its own raylet); the second node is killed after `after` rows; then: every candidate labelled
      exactly once, errors left, labels against a local run of the same candidates, rows sent again
  python3 scripts/speed/bench_ray.py compare
      the demo set and the HumanEval mutants (820) through --executor ray on the two-node cluster and
      locally: labels row for row
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.inputs.config import Limits, RunConfig, SandboxSettings  # noqa: E402
from harness.run.runner import evaluate  # noqa: E402
from scripts.lib import figures  # noqa: E402

HUMANEVAL = ROOT.parent / "shared" / "data" / "HumanEval.jsonl.gz"
NODE_ARGS = {"num_cpus": 1, "object_store_memory": 80 << 20}


def humaneval_sets(tmp: Path, repeat: int, copies: int) -> dict:
    subprocess.run([sys.executable, str(ROOT / "scripts" / "inputs" / "humaneval_samples.py"), str(tmp), "--repeat", str(repeat)],
                   check=True, capture_output=True)
    mutants = (tmp / "mutants.jsonl").read_text().splitlines()
    tasks = {}
    for line in mutants:
        tasks.setdefault(json.loads(line)["task_id"], []).append(line)
    # `copies` candidates per task, cycling through the task's mutants
    picked = [lines[i % len(lines)] for lines in tasks.values() for i in range(copies)]
    (tmp / "mutants_n.jsonl").write_text("\n".join(picked) + "\n")
    return {"canonical": tmp / "canonical.jsonl", "mutants": tmp / "mutants_n.jsonl"}


def config(out: Path, samples: Path, problems: Path = HUMANEVAL, workers: int = 2, **sandbox) -> RunConfig:
    return RunConfig(problems=str(problems), samples=str(samples), out=str(out), k=(1,),
                     limits=Limits(timeout_s=3.0), sandbox=SandboxSettings(workers=workers, **sandbox))


def rows(out: Path) -> dict:
    return {(r["task_id"], r["sample_index"]): r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


def labels(out: Path) -> dict:
    return {k: (r["status"], r["reason"]) for k, r in rows(out).items()}


def two_node_cluster():
    from ray.cluster_utils import Cluster
    c = Cluster(initialize_head=True, head_node_args={**NODE_ARGS, "include_dashboard": False})
    second = c.add_node(**NODE_ARGS)
    c.wait_for_nodes()
    return c, second


def timed_run(cfg: RunConfig) -> tuple[float, float, int]:
    """(wall seconds, the driver's CPU seconds, rows) for one run in this process."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    outcome = evaluate(cfg, progress=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, outcome.ran


def overhead(args, tmp: Path) -> None:
    sets = humaneval_sets(tmp, args.repeat, 1)
    n = len(sets["canonical"].read_text().splitlines())
    print(f"{n} candidates (HumanEval canonical x{args.repeat}), 2 workers, runc pooled; {args.rounds} rounds")
    # The cluster is up before the clock starts, as a user's would be (a new local one takes ~3 s to start);
    # connecting to it, starting the node's actor and its warm containers are timed, as a local run's start is.
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "object_store_memory": 200 << 20,
                                                            "include_dashboard": False})
    results = {"local": [], "ray": []}
    for r in range(args.rounds):
        for mode in ("local", "ray"):
            extra = {"executor": "ray", "ray_address": cluster.address} if mode == "ray" else {}
            wall, cpu, ran = timed_run(config(tmp / f"{mode}-{r}", sets["canonical"], **extra))
            results[mode].append((wall, cpu, ran))
            print(f"round {r + 1} {mode:5s}: {ran / wall:7.1f} cand/s ({wall:.1f} s); driver CPU {cpu:.1f} s = "
                  f"{1000 * cpu / ran:.2f} ms per row", flush=True)
    cluster.shutdown()
    best = {m: min(w for w, _, _ in v) for m, v in results.items()}
    ratios = [lw / rw for (lw, _, _), (rw, _, _) in zip(results["local"], results["ray"])]
    print(f"best local {n / best['local']:.1f} cand/s, best ray {n / best['ray']:.1f} cand/s; ray/local per round: "
          f"{', '.join(f'{x:.2f}' for x in ratios)} (median {figures.median(ratios):.2f})")
    if args.write_docs:
        rows = [[r + 1, mode, f"{ran / wall:.1f}", f"{wall:.1f}", f"{1000 * cpu / ran:.2f}"]
                for r in range(args.rounds) for mode in ("local", "ray")
                for wall, cpu, ran in [results[mode][r]]]
        figures.write("ray", figures.table(["round", "executor", "cand/s", "seconds", "driver CPU ms per row"], rows)
                      + f"\n\n{n} candidates (HumanEval's canonical solutions ×{args.repeat}), 2 workers, runc pooled; "
                      "Ray: a local cluster of one node, started before the clock (connecting, the node's actor and "
                      "its warm containers are timed, as a local run's start is). Throughput through Ray / local, "
                      f"per round: {', '.join(f'{x:.2f}' for x in ratios)} (median "
                      f"**{figures.median(ratios):.2f}**).")


def node_kill(args, tmp: Path) -> None:
    sets = humaneval_sets(tmp, 1, args.copies)
    n = len(sets["mutants"].read_text().splitlines())
    print(f"{n} candidates (HumanEval mutants, {args.copies} per task)")
    wall, _, _ = timed_run(config(tmp / "local", sets["mutants"]))
    print(f"local run: {wall:.1f} s")
    c, second = two_node_cluster()
    try:
        cfg = config(tmp / "ray", sets["mutants"], workers=1, executor="ray", ray_address=c.address)
        results = tmp / "ray" / "results.jsonl"
        done, failure = [], []
        t = threading.Thread(target=lambda: _run_into(cfg, done, failure))
        start = time.monotonic()
        t.start()
        while t.is_alive():
            if results.exists() and len(results.read_text().splitlines()) >= args.after:
                break
            time.sleep(0.05)
        at = len(results.read_text().splitlines()) if results.exists() else 0
        c.remove_node(second, allow_graceful=False)
        print(f"killed the second node after {at} rows, {time.monotonic() - start:.1f} s into the run", flush=True)
        t.join()
        if failure:
            raise failure[0]
        print(f"ray run: {time.monotonic() - start:.1f} s")
    finally:
        c.shutdown()
    lines = (tmp / "ray" / "results.jsonl").read_text().splitlines()
    keys = [(r["task_id"], r["sample_index"]) for r in map(json.loads, lines)]
    mine, theirs = labels(tmp / "ray"), labels(tmp / "local")
    got = rows(tmp / "ray")
    differ = [k for k in theirs if mine.get(k) != theirs[k]]
    manifest = json.loads((tmp / "ray" / "manifest.json").read_text())
    print(f"rows {len(lines)}, distinct candidates {len(set(keys))} of {n}; error rows "
          f"{sum(1 for r in got.values() if r['status'] == 'error')}; labels differing from the local run: {len(differ)}")
    for k in differ[:20]:
        print(f"  differs: {k}: ray {mine.get(k)}, local {theirs[k]}")
    print(f"rows with attempt > 1 (sent again after the node was lost): {sum(1 for r in got.values() if r['attempt'] > 1)}; "
          f"rows per node: {_count(r['node'] for r in got.values())}")
    print(f"manifest lost_nodes: {manifest['sandbox'].get('lost_nodes')}")


def _run_into(cfg, done, failure):
    try:
        done.append(evaluate(cfg, progress=False))
    except BaseException as e:  # noqa: BLE001 - reported by the caller
        failure.append(e)


def _count(values) -> dict:
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def compare(args, tmp: Path) -> None:
    sets = humaneval_sets(tmp, 1, 5)
    demo = ROOT / "problems" / "demo"
    c, _ = two_node_cluster()
    try:
        for name, problems, samples in (("demo", demo / "problems.jsonl", demo / "samples.jsonl"),
                                        ("humaneval-mutants", HUMANEVAL, sets["mutants"])):
            evaluate(config(tmp / f"{name}-local", samples, problems), progress=False)
            evaluate(config(tmp / f"{name}-ray", samples, problems, workers=1, executor="ray", ray_address=c.address),
                     progress=False)
            mine, theirs = labels(tmp / f"{name}-ray"), labels(tmp / f"{name}-local")
            same = sum(1 for k in theirs if mine.get(k) == theirs[k])
            nodes = _count(r["node"] for r in rows(tmp / f"{name}-ray").values())
            print(f"{name}: {same} of {len(theirs)} candidates with the same label and reason, ray rows "
                  f"{len(mine)}; rows per node {nodes}")
            for k in [k for k in theirs if mine.get(k) != theirs[k]][:20]:
                print(f"  differs: {k}: ray {mine.get(k)}, local {theirs[k]}")
    finally:
        c.shutdown()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("overhead", "node-kill", "compare"))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--after", type=int, default=200)
    ap.add_argument("--write-docs", action="store_true", help="overhead: also write docs/figures/ray.md")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="passk-bench-ray-"))
    {"overhead": overhead, "node-kill": node_kill, "compare": compare}[args.what](args, tmp)
    print(f"runs kept in {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
