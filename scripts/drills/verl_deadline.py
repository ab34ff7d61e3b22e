"""verl's own SandboxFusion client against `passk serve`, with programs that loop to their limit among
honest ones: does every call get its answer within the client's own deadline, and is every verdict the one a
plain run gives?

verl's `check_correctness` (verl/utils/reward_score/sandbox_fusion/utils.py) sends one /run_code request
per test case, 32 at once, waits compile_timeout + run_timeout + 10 s for each, and retries only a 504 (3
attempts, 1 s and 2 s apart). Its module is read from a verl snapshot given with --verl (a checkout, or the
bare repository `fetch` brings: /work/.mirror/volcengine+verl/repo) and imported unchanged; nothing of it is
kept in passk.

The problems: CodeContests-style stdin/stdout cases. The candidate doubles its input, and loops forever on
the cases whose input is negative (--loops of --cases). Concurrency 32 is one check_correctness call;
64 is two at once (verl's reward workers score several generations side by side). A plain run is the
same program under `python3` on the host, alone, with the same run_timeout.

    python3 scripts/drills/verl_deadline.py --verl /work/.mirror/volcengine+verl/repo --clients 32,64
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import logging
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.lib.passk_run import peer_file, start_serve  # noqa: E402
MODULE = "verl/utils/reward_score/sandbox_fusion/utils.py"
PROGRAM = ("n = int(input())\n"
           "while n < 0:\n"
           "    pass\n"
           "print(n * 2)\n")


def load_verl(where: str):
    """verl's sandbox_fusion utils module, unchanged, from a checkout or a bare repository."""
    source = peer_file(where, MODULE)
    tmp = Path(tempfile.mkdtemp(prefix="passk-verl-")) / "verl_sandbox_fusion_utils.py"
    tmp.write_text(source)
    spec = importlib.util.spec_from_file_location("verl_sandbox_fusion_utils", tmp)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(n: int, loops: int) -> dict:
    every = max(1, n // max(1, loops))
    inputs, outputs = [], []
    for i in range(n):
        looping = loops and i % every == 0 and sum(1 for x in inputs if x.startswith("-")) < loops
        value = -(i + 1) if looping else i + 1
        inputs.append(f"{value}\n")
        outputs.append(f"{value * 2}\n")
    return {"inputs": inputs, "outputs": outputs}


def plain_verdict(stdin: str, expected: str, run_timeout: float):
    """What a plain run gives, in verl's codes: True, False, -2 runtime error, -3 timeout."""
    try:
        done = subprocess.run([sys.executable, "-c", PROGRAM], input=stdin, capture_output=True, text=True,
                              timeout=run_timeout)
    except subprocess.TimeoutExpired:
        return -3
    if done.returncode != 0:
        return -2
    return done.stdout.rstrip("\n") == expected.rstrip("\n")


def statuses(runs) -> dict:
    out: dict = {}
    for _, metadata in runs:
        for meta in metadata:
            key = (meta or {}).get("status", "?")
            out[key] = out.get(key, 0) + 1
    return out


def metric(url: str, pattern: str) -> float:
    text = urllib.request.urlopen(url + "/metrics", timeout=30).read().decode()
    return sum(float(m.group(1)) for m in re.finditer(pattern + r"\s+([0-9.e+]+)", text))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verl", required=True, help="a verl checkout, or its bare repository")
    ap.add_argument("--clients", default="32,64", help="concurrencies: 32 per check_correctness call")
    ap.add_argument("--cases", type=int, default=114)
    ap.add_argument("--loops", type=int, default=16, help="cases whose program loops until its limit")
    ap.add_argument("--timeout", type=int, default=10, help="verl's compile and run timeout")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--serve-args", default="", help="more arguments for passk serve (e.g. --overflow 0)")
    ap.add_argument("--url", default=None, help="a running server instead of starting passk serve")
    args = ap.parse_args()
    verl = load_verl(args.verl)
    logging.getLogger(verl.__name__).setLevel(logging.CRITICAL)   # its per-call error lines: counted below
    in_outs = cases(args.cases, args.loops)
    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:   # plain runs, the loops side by side
        plain = list(pool.map(lambda io: plain_verdict(io[0], io[1], args.timeout),
                              zip(in_outs["inputs"], in_outs["outputs"])))
    print(f"plain runs: {sum(p is True for p in plain)} pass, {sum(p == -3 for p in plain)} time out "
          f"(of {len(plain)})")
    server, url = (None, args.url) if args.url else start_serve("--workers", str(args.workers),
                                                                 *args.serve_args.split(), log_name="passk-verl")
    failures = 0
    try:
        for clients in [int(c) for c in args.clients.split(",")]:
            calls = max(1, clients // 32)
            retried0 = metric(url, r'passk_requests_total\{route="/run_code",code="504"\}')
            t0 = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(max_workers=calls) as pool:
                runs = list(pool.map(lambda _: verl.check_correctness(url + "/run_code", in_outs, PROGRAM,
                                                                      timeout=args.timeout), range(calls)))
            took = time.monotonic() - t0
            retried = metric(url, r'passk_requests_total\{route="/run_code",code="504"\}') - retried0
            total = timeouts = api_errors = differ = 0
            for results, metadata in runs:
                for got, want, meta in zip(results, plain, metadata):
                    total += 1
                    error = (meta or {}).get("api_request_error") or ""
                    timeouts += "timed out" in error.lower()       # requests' ReadTimeout: the client gave up
                    api_errors += bool(error)                       # also: 504 on every attempt
                    differ += got != want
            failures += timeouts + differ
            print(f"clients {clients:>3}: {total} calls in {took:.1f} s; verdicts unlike a plain run {differ}; "
                  f"client timeouts {timeouts}; calls that failed (504 on all 3 attempts, or timed out) {api_errors}; "
                  f"504s sent {retried:.0f}; {statuses(runs)}")
    finally:
        if server is not None:
            server.terminate()
            server.wait(120)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
