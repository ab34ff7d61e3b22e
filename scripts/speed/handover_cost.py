#!/usr/bin/env python3
"""What one call from the tests into a candidate costs, inside passk's image, with the container on one
CPU (how `--pin-cpus auto` runs it) and free to use every CPU (`--pin-cpus off`): a test process warmed as
the tester's zygote is forks a candidate serving a small program, then calls it N times through the proxy
(channels/proxy.py, candidate.py: the same code a job runs). Each call is two hand-overs, tests ->
candidate -> tests; on one CPU a hand-over is a switch between two processes, across CPUs a wake-up of
the other one.

  python3 scripts/speed/handover_cost.py [--image passk-sandbox:TAG] [--calls 3000] [--rounds 3]

Figures per call (medians over the rounds): wall time, and the CPU of each side (the candidate's includes
its fork and exit, spread over the calls)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.speed.child_cost import passk_image, run_in_image, warmed_heap  # noqa: E402

INSIDE = warmed_heap("from box.warmup import TESTER_WARM_UP_ROUNDS, warm_up_tests\n"
                     "for _ in range(TESTER_WARM_UP_ROUNDS):\n    warm_up_tests({})") + r'''
import os, resource, socket, time
from box.candidate import serve_program
from box.channels.base import Verdict
from box.channels.proxy import _compiled, run_test
CALLS, ROUNDS = int(sys.argv[1]), int(sys.argv[2])
SRC = b"def f(xs):\n    return sum(xs) > 3\n"
spec = {"prompt": "", "entry_point": "f",
        "test": f"def check(candidate):\n    for i in range({CALLS}):\n        assert candidate([1, 2, i]) == (i > 0)\n"}
cache = {}


def cpu(who):
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


for _ in range(ROUNDS):
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        gc.enable()
        serve_program(theirs, SRC)
        os._exit(0)
    theirs.close()
    t0, c0, k0 = time.perf_counter(), cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    try:
        run_test(ours, spec, _compiled(cache, spec), {})
    except Verdict as v:
        status = v.verdict["status"]
    wall, tests = time.perf_counter() - t0, cpu(resource.RUSAGE_SELF) - c0
    ours.close()
    os.waitpid(pid, 0)
    print(status, wall / CALLS * 1e6, tests / CALLS * 1e6, (cpu(resource.RUSAGE_CHILDREN) - k0) / CALLS * 1e6)
'''


def run(image, cpuset, calls, rounds):
    out = run_in_image(image, INSIDE, [calls, rounds], ["--cpuset-cpus", cpuset] if cpuset is not None else [],
                       capture_output=True, check=True).stdout
    rows = [line.split() for line in out.splitlines() if line.strip()]
    if any(r[0] != "passed" for r in rows):
        raise SystemExit(f"a round did not pass: {out}")
    return [statistics.median(float(r[i]) for r in rows) for i in (1, 2, 3)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", help="default: passk's image for this checkout (built if missing)")
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    image = passk_image(args.image)
    mine = sorted(os.sched_getaffinity(0))
    print(f"{len(mine)} CPUs; {args.calls} calls per round, {args.rounds} rounds; per call, µs:")
    print(f"{'container':<22} {'wall':>8} {'tests CPU':>10} {'candidate CPU':>14}")
    for label, cpuset in ((f"on CPU {mine[0]} (pinned)", str(mine[0])), ("on every CPU", None)):
        wall, tests, cand = run(image, cpuset, args.calls, args.rounds)
        print(f"{label:<22} {wall:8.1f} {tests:10.1f} {cand:14.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
