#!/usr/bin/env python3
"""What a candidate process costs before and while it serves the tests, inside passk's image: page
faults and CPU of a child forked from a forkserver-like warmed heap (the same preload and warm-up),
doing (1) nothing, (2) compile and exec of a small program, (3) that and serving 8 calls.

  python3 scripts/speed/child_cost.py [--image passk-sandbox:TAG] [--runs 50]

Run under runc: gVisor counts CPU in 10 ms ticks. Figures are per child (means over the runs)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def warmed_heap(warm_up: str) -> str:
    """The start of a program run inside passk's image (run_in_image): box/ importable, the preloaded
    modules imported, `warm_up` (lines of box code) run and the heap frozen, as the forkserver (box.warmup's
    warm_up) or the tester's zygote (warm_up_tests) has it before it forks."""
    return ('import gc, importlib, sys\nsys.path.insert(0, "/opt/passk")\nfrom box.layout import PRELOAD\n'
            "for name in PRELOAD:\n    importlib.import_module(name)\n" + warm_up.strip() + "\n"
            "gc.collect()\ngc.freeze()\n")


def passk_image(image: str | None = None) -> str:
    """`image`, or passk's image for this checkout (built if missing)."""
    if image is not None:
        return image
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import ensure_image
    from harness.inputs.config import default_base_image
    return ensure_image(connect(), default_base_image())["image"]


def run_in_image(image: str, program: str, args=(), docker_args=(), **run) -> subprocess.CompletedProcess:
    """`program` run by passk's Python inside `image`, without network, with `args` as its sys.argv[1:]."""
    return subprocess.run(["docker", "run", "--rm", "-i", "--network", "none", *docker_args, "--entrypoint",
                           "/usr/local/bin/passk-python", image, "-s", "-B", "-", *map(str, args)],
                          input=program, text=True, **run)


INSIDE = warmed_heap("from box.warmup import WARM_UP_ROUNDS, warm_up\nfor _ in range(WARM_UP_ROUNDS):\n    warm_up()") + r'''
import os, socket
from box.candidate import serve_program
from box.framing import send_msg
RUNS = int(sys.argv[1])
SRC = "def f(xs):\n    return sorted(xs)\n" * 10


def measure(label, work):
    faults = cpu = 0
    for _ in range(RUNS):
        pid = os.fork()
        if pid == 0:
            work()
            os._exit(0)
        _, _, ru = os.wait4(pid, 0)
        faults += ru.ru_minflt
        cpu += ru.ru_utime + ru.ru_stime
    print(f"{label:<40} {faults / RUNS:7.0f} faults {1000 * cpu / RUNS:7.2f} ms")


def serve():
    ours, theirs = socket.socketpair()
    for _ in range(8):
        send_msg(ours, {"op": "call", "name": "f", "args": [[3, 1, 2]], "kwargs": {}})
    ours.shutdown(socket.SHUT_WR)
    serve_program(theirs, SRC.encode())


measure("fork + _exit", lambda: None)
measure("+ compile and exec a small program", lambda: exec(compile(SRC, "c", "exec"), {"__name__": "c"}))
measure("+ serve 8 calls", serve)
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", help="default: passk's image for this checkout (built if missing)")
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    return run_in_image(passk_image(args.image), INSIDE, [args.runs]).returncode


if __name__ == "__main__":
    sys.exit(main())
