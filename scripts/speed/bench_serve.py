#!/usr/bin/env python3
"""passk serve under load: candidates per second and p50/p99 latency at 1, 16, 64 and 256 concurrent
clients, for /v1/evaluate and /run_code, with a trivial and a real program, against the in-process Evaluator
on the same candidates (the service's overhead per candidate).

    python3 scripts/speed/bench_serve.py [--workers 2] [--requests 400] [--clients 1,16,64,256] [--write-docs]

A server is started on a loopback port (the real `passk serve`), driven by threads of HTTP clients
(http.client, keep-alive), each sending one candidate per request, as verl's reward does. The service's
overhead is said two ways: in wall time (1 / the best rate - 1 / the in-process rate), and in CPU per
candidate: the machine's busy CPU during a cell, less the load generator's own CPU (this process's, read
from getrusage: on 2 cores the generator cannot have a CPU of its own without taking one from the
service), against the in-process Evaluator's busy CPU per candidate on the same programs."""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from scripts.lib import figures  # noqa: E402
from scripts.lib.measure import busy_cpu_s  # noqa: E402
from scripts.lib.passk_run import free_port  # noqa: E402

ADD = {"task_id": "bench/add", "prompt": "def add(a, b):\n", "entry_point": "add", "canonical_solution": "    return a + b\n",
       "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"}
TRIVIAL = "def add(a, b):\n    return a + b\n"
# a real program: a few milliseconds of work, as a typical HumanEval solution with its tests
REAL = ("def add(a, b):\n    s = 0\n    for i in range(20000):\n        s += i % 7\n    return a + b + (s - s)\n")
# /run_code's programs read no stdin: SandboxFusion's server, run here, never feeds a program its stdin
# (its runner's `p.stdin.flush()` raises on asyncio's StreamWriter), and the peer must run the same requests
RUN_TRIVIAL = "print(1 + 2)"
RUN_REAL = "print(sum(i * i % 7 for i in range(20000)))"


def percentile(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


def drive(port: int, path: str, bodies: list, clients: int, host: str = "127.0.0.1") -> dict:
    """Send every body once, `clients` at a time over keep-alive connections; latency per request."""
    lock = threading.Lock()
    queue = list(enumerate(bodies))
    latencies, statuses = [], {}

    def client():
        conn = http.client.HTTPConnection(host, port, timeout=600)
        while True:
            with lock:
                if not queue:
                    break
                _, body = queue.pop()
            data = json.dumps(body).encode()
            started = time.perf_counter()
            conn.request("POST", path, data, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            payload = json.loads(answer.read())
            elapsed = time.perf_counter() - started
            status = answer.status if answer.status != 200 else (
                payload["rows"][0]["status"] if "rows" in payload else payload["status"])
            with lock:
                latencies.append(elapsed)
                statuses[status] = statuses.get(status, 0) + 1
        conn.close()

    busy, mine = busy_cpu_s()[0], own_cpu_s()
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for f in [pool.submit(client) for _ in range(clients)]:
            f.result()
    wall = time.perf_counter() - started
    busy, mine = busy_cpu_s()[0] - busy, own_cpu_s() - mine
    return {"rate": len(bodies) / wall, "p50": percentile(latencies, 0.5), "p99": percentile(latencies, 0.99),
            "statuses": statuses, "cpu": (busy - mine) / len(bodies), "client_cpu": mine / len(bodies)}


def own_cpu_s() -> float:
    """CPU seconds of this process (every thread: the load generator), user and system."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def in_process(workers: int, programs: list) -> tuple[float, float]:
    """(candidates per second, busy CPU seconds per candidate) through the in-process Evaluator."""
    from harness import Evaluator
    from harness.serve.bodies import load_inline
    problem = next(iter(load_inline(ADD, "humaneval").values()))
    with Evaluator(workers=workers, timeout_s=3.0, memory_mb=1024) as ev:
        ev.evaluate([(problem, p) for p in programs[:20]])   # warm
        busy = busy_cpu_s()[0]
        started = time.perf_counter()
        rows = ev.evaluate([(problem, p) for p in programs])
        wall = time.perf_counter() - started
        busy = busy_cpu_s()[0] - busy
    assert all(r.status == "passed" for r in rows), {r.status for r in rows}
    return len(programs) / wall, busy / len(programs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--requests", type=int, default=400, help="requests per cell of the table")
    ap.add_argument("--clients", default="1,16,64,256")
    ap.add_argument("--peer", default=None, metavar="URL",
                    help="a running SandboxFusion server (its own source, started as its README says): its /run_code "
                         "gets the same /run_code requests")
    ap.add_argument("--peer-requests", type=int, default=100, help="requests per cell against the peer")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    port = free_port()
    log = open(Path(tempfile.mkdtemp(prefix="passk-bench-serve-")) / "server.log", "w")   # never a pipe nobody reads
    server = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", "--port", str(port), "--workers",
                               str(args.workers), "--max-queue", "100000"], stdout=log, stderr=subprocess.STDOUT)
    print(f"server log: {log.name}", flush=True)
    try:
        for _ in range(1200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        n = args.requests
        cases = {
            ("/v1/evaluate", "trivial"): [{"problem": {"record": ADD}, "candidates": [{"code": TRIVIAL}]}] * n,
            ("/v1/evaluate", "real"): [{"problem": {"record": ADD}, "candidates": [{"code": REAL}]}] * n,
            ("/run_code", "trivial"): [{"code": RUN_TRIVIAL, "language": "python"}] * n,
            ("/run_code", "real"): [{"code": RUN_REAL, "language": "python"}] * n,
        }
        drive(port, "/v1/evaluate", cases[("/v1/evaluate", "trivial")][:50], 8)   # warm
        results = {}
        for (path, kind), bodies in cases.items():
            for c in clients:
                r = results[(path, kind, c)] = drive(port, path, bodies, c)
                print(f"{path:13} {kind:8} clients {c:4}: {r['rate']:7.1f} cand/s  p50 {r['p50'] * 1000:7.1f} ms  "
                      f"p99 {r['p99'] * 1000:8.1f} ms  CPU {r['cpu'] * 1000:.2f} ms (+ client "
                      f"{r['client_cpu'] * 1000:.2f})  {r['statuses']}", flush=True)
    finally:
        server.terminate()
        server.wait(120)
    peer = {}
    if args.peer:
        host, _, peer_port = args.peer.replace("http://", "").rstrip("/").partition(":")
        for kind in ("trivial", "real"):
            for c in clients:
                bodies = cases[("/run_code", kind)][:args.peer_requests]
                r = peer[(kind, c)] = drive(int(peer_port or 80), "/run_code", bodies, c, host=host)
                print(f"SandboxFusion /run_code {kind:8} clients {c:4}: {r['rate']:7.1f} cand/s  p50 {r['p50'] * 1000:7.1f} ms  "
                      f"p99 {r['p99'] * 1000:8.1f} ms  {r['statuses']}", flush=True)
    measured = {kind: in_process(args.workers, [TRIVIAL if kind == "trivial" else REAL] * n) for kind in ("trivial", "real")}
    base = {kind: rate for kind, (rate, _) in measured.items()}
    base_cpu = {kind: cpu for kind, (_, cpu) in measured.items()}
    for kind, (rate, cpu) in measured.items():
        print(f"in-process Evaluator {kind:8}: {rate:7.1f} cand/s  CPU {cpu * 1000:.2f} ms", flush=True)
    rows, over = [], {}
    for (path, kind, c), r in results.items():
        wall_over = cpu_over = ""
        if path == "/v1/evaluate":
            cpu_over = f"{(r['cpu'] - base_cpu[kind]) * 1000:+.2f}"
            over.setdefault(kind, []).append(r["cpu"] - base_cpu[kind])
            if c == clients[-1]:
                best = max(results[(path, kind, cc)]["rate"] for cc in clients)
                wall_over = f"{(1 / best - 1 / base[kind]) * 1000:+.2f}"
        rows.append([path, kind, c, f"{r['rate']:.1f}", f"{r['p50'] * 1000:.1f}", f"{r['p99'] * 1000:.1f}",
                     f"{base[kind]:.1f}" if path == "/v1/evaluate" else "", wall_over, f"{r['cpu'] * 1000:.2f}",
                     f"{r['client_cpu'] * 1000:.2f}", cpu_over])
    for (kind, c), r in peer.items():
        rows.append(["SandboxFusion /run_code", kind, c, f"{r['rate']:.1f}", f"{r['p50'] * 1000:.1f}",
                     f"{r['p99'] * 1000:.1f}", "", "", "", "", ""])
    body = figures.table(["route", "program", "clients", "candidates/s", "p50 ms", "p99 ms", "in-process cand/s",
                          "wall ms a candidate over in-process (best concurrency)",
                          "CPU ms a candidate, load generator taken out", "the load generator's CPU ms",
                          "CPU ms a candidate over in-process"], rows)
    body += ("\nIn process, the Evaluator's busy CPU per candidate: " + ", ".join(
        f"{kind} {cpu * 1000:.2f} ms" for kind, cpu in base_cpu.items()) + "; the service's least CPU over it: " +
        ", ".join(f"{kind} {min(v) * 1000:+.2f} ms" for kind, v in over.items()) + ".\n")
    if peer:
        body += ("\nSandboxFusion: its server from its own source (bytedance/SandboxFusion, its `local` configuration: "
                 "each program a subprocess of the server, `isolation: none`, as its server image runs), on the same "
                 f"machine, {args.peer_requests} requests per cell; passk's /run_code runs each program in its sandbox.\n")
    print(body)
    if args.write_docs:
        best = max(results[("/v1/evaluate", "trivial", c)]["rate"] for c in clients)
        figures.write("serve", body, f"passk serve, {args.workers} workers: {best:.0f} candidates/s through /v1/evaluate "
                                     f"against {base['trivial']:.0f} in process (trivial programs); "
                                     f"{min(over['trivial']) * 1000:+.2f} ms of CPU a candidate over in-process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
