#!/usr/bin/env python3
"""passk serve's fault drills, against a real server and the real engine; each prints what every request
got back and checks that nothing was lost or scored `failed` for what was not the candidate's doing.

    python3 scripts/drills/serve_drills.py [--docker-restart]

- full queue: a request past --max-queue gets 429 with Retry-After at once;
- client gone: a client that hangs up has its queued candidates cancelled (the queue empties);
- hostile candidates (memory, fork bomb, output flood) beside honest ones: each affects its own row only;
- --docker-restart: dockerd is stopped and started again under the service while a batch runs (this machine's
  engine: every other container on it stops too). In-flight rows are `passed` or `error`, never `failed`;
  afterwards the service answers again with a new sandbox.
- SIGTERM: in-flight work finishes, the process ends 0, no container of the service is left;
- poison (a second server, --workers 2 --grace-s 5): hostile bodies on both routes (100,000 nested arrays,
  a lone surrogate in an inline record, limits of 1e9 s, 10^12 MB, a day's compile) are HTTP 400; two
  requests of 300 s sleepers with deadline_s 3 end `error deadline` by their deadline and an honest request
  behind them passes; then SIGTERM with sleepers in flight: exit 0 within the grace and the removal, no
  container left."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.lib.passk_run import free_port  # noqa: E402
ADD = {"task_id": "drill/add", "prompt": "def add(a, b):\n", "entry_point": "add", "canonical_solution": "    return a + b\n",
       "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"}
HONEST = "def add(a, b):\n    return a + b\n"
SLOW = "import time\ntime.sleep(1)\ndef add(a, b):\n    return a + b\n"
HOSTILE = {
    "memory": "x = bytearray(1 << 34)\ndef add(a, b):\n    return a + b\n",
    "fork_bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
    "flood": "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
}


def post(url, body, timeout=600):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as a:
            return a.status, json.loads(a.read()), a.headers
    except urllib.error.HTTPError as e:
        raw = e.read() or b"{}"
        try:
            return e.code, json.loads(raw), e.headers
        except ValueError:   # not the service's own answer (the HTTP server's, as it stops): kept as text
            return e.code, {"text": raw.decode("utf-8", "replace")[:200]}, e.headers


def post_raw(url, raw: bytes, timeout=120):
    req = urllib.request.Request(url, raw, {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as a:
            return a.status
    except urllib.error.HTTPError as e:
        return e.code


SLEEPER = "import time\ntime.sleep(300)\ndef add(a, b):\n    return a + b\n"
BOTH, OURS, FUSION = ("/v1/evaluate", "/run_code"), ("/v1/evaluate",), ("/run_code",)
POISON_BODIES = [   # (what, routes, body)
    ("100,000 nested arrays", BOTH, b"[" * 100000 + b"]" * 100000),
    ("a lone surrogate in an inline record", OURS, json.dumps({"problem": {"record": {**ADD, "prompt": "\ud800"}},
                                                               "candidates": [HONEST]}).encode()),
    ("a lone surrogate in the code", FUSION, json.dumps({"code": "print(1)  # \ud800", "language": "python"}).encode()),
    ("limits.timeout_s 1e9", OURS, json.dumps({"problem": {"record": ADD}, "candidates": [HONEST],
                                               "limits": {"timeout_s": 1e9}}).encode()),
    # /run_code holds SandboxFusion's contract: a finite run_timeout above passk's ceiling is cut to it (its clients
    # send their own), a non-finite or non-positive one is refused
    ("run_timeout Infinity", FUSION, b'{"code": "print(1)", "language": "python", "run_timeout": Infinity}'),
    ("limits.memory_mb 10^12", OURS, json.dumps({"problem": {"record": ADD}, "candidates": [HONEST],
                                                 "limits": {"memory_mb": 10 ** 12}}).encode()),
    ("limits.compile_timeout_s a day", OURS, json.dumps({"problem": {"record": ADD}, "candidates": [HONEST],
                                                         "limits": {"compile_timeout_s": 86400}}).encode()),
]


def poison(bad: list) -> None:
    """The poison drill on its own server (see the module's docstring)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc, health = start(port, "--workers", "2", "--grace-s", "5")
    try:
        for name, routes, raw in POISON_BODIES:
            codes = {route: post_raw(url + route, raw) for route in routes}
            print(f"poison: {name}: " + ", ".join(f"{r} HTTP {c}" for r, c in codes.items()))
            bad += [f"poison {name}: {r} HTTP {c}" for r, c in codes.items() if c != 400]
        held: dict = {}
        poisoned = [threading.Thread(target=lambda i=i: held.setdefault(i, post(url + "/v1/evaluate", {
            "problem": {"record": ADD}, "candidates": [SLEEPER, SLEEPER], "limits": {"timeout_s": 60}, "deadline_s": 3})))
            for i in range(2)]
        t0 = time.monotonic()
        for t in poisoned:
            t.start()
        time.sleep(0.5)
        code, body, _ = post(url + "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [HONEST]}, timeout=120)
        honest_s = time.monotonic() - t0
        for t in poisoned:
            t.join(120)
        got = [statuses(held[i][1].get("rows", [])) for i in range(2)]
        print(f"poison: two requests of 300 s sleepers with deadline_s 3: {got}; an honest request behind them: "
              f"HTTP {code} {statuses(body.get('rows', []))} after {honest_s:.1f} s")
        bad += [f"poison deadline: {g}" for g in got if g != {"error deadline": 2}]
        bad += [] if code == 200 and statuses(body["rows"]) == {"passed tests_completed": 1} else ["poison: honest not passed"]
        held = {}
        t = threading.Thread(target=lambda: held.setdefault("a", _quiet_post(url + "/v1/evaluate", {
            "problem": {"record": ADD}, "candidates": [SLEEPER] * 4, "limits": {"timeout_s": 60}})))
        t.start()
        time.sleep(3)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            pass
        took = time.monotonic() - t0
        t.join(60)
        left = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=org.passk.run={health['run_id']}-python"],
                              capture_output=True, text=True).stdout.split()
        print(f"poison: SIGTERM (--grace-s 5) with four 300 s sleepers in flight: exit {proc.poll()} in {took:.1f} s, "
              f"the request got {held.get('a')}, containers left: {len(left)}")
        bad += [] if proc.poll() == 0 and took < 30 and not left else ["poison SIGTERM: not clean"]
        bad += [] if str(held.get("a", "")).startswith("HTTP 200") else ["poison SIGTERM: the request got no rows"]
    finally:
        if proc.poll() is None:
            proc.kill()


def _quiet_post(url, body):
    try:
        code, answer, _ = post(url, body, timeout=120)
        return f"HTTP {code} {statuses(answer.get('rows', []))}" if code == 200 else f"HTTP {code}"
    except OSError as e:
        return f"no answer ({type(e).__name__})"


def get(url):
    with urllib.request.urlopen(url, timeout=30) as a:
        body = a.read()
        return json.loads(body) if a.headers.get("content-type", "").startswith("application/json") else body.decode()


def start(port, *args):
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", "--port", str(port), *args],
                            stderr=subprocess.PIPE, text=True)
    for _ in range(1200):
        try:
            return proc, get(f"http://127.0.0.1:{port}/health")
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the server did not start")


def statuses(rows):
    out = {}
    for r in rows:
        out[f"{r['status']} {r['reason']}"] = out.get(f"{r['status']} {r['reason']}", 0) + 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docker-restart", action="store_true", help="also stop and start dockerd under the service")
    args = ap.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc, health = start(port, "--workers", "2", "--max-queue", "8")
    bad = []
    try:
        # full queue
        held = {}
        t = threading.Thread(target=lambda: held.setdefault("a", post(url + "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [SLOW] * 8})))
        t.start()
        time.sleep(0.5)
        t0 = time.monotonic()
        code, body, headers = post(url + "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [HONEST]})
        print(f"full queue: HTTP {code} in {time.monotonic() - t0:.3f} s, Retry-After {headers.get('Retry-After')}: {body.get('error')}")
        t.join()
        print(f"  the batch that filled it: {statuses(held['a'][1]['rows'])}")
        bad += [] if code == 429 else ["full queue: not 429"]
        # client gone
        try:
            urllib.request.urlopen(urllib.request.Request(url + "/v1/evaluate", json.dumps(
                {"problem": {"record": ADD}, "candidates": [SLOW] * 8}).encode(), {"Content-Type": "application/json"}), timeout=0.5)
        except OSError as e:
            print(f"client gone: the client hung up ({type(e).__name__})")
        for _ in range(40):
            if get(url + "/health")["queued"] == 0:
                break
            time.sleep(0.25)
        m = [line for line in get(url + "/metrics").splitlines() if line.startswith("passk_candidates_cancelled_total")]
        print(f"  queue after: {get(url + '/health')['queued']}; {m[0]}")
        # hostile beside honest
        code, body, _ = post(url + "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [
            {"code": HONEST, "key": "honest-1"}, *({"code": c, "key": k} for k, c in HOSTILE.items()), {"code": HONEST, "key": "honest-2"}]})
        print("hostile beside honest: " + ", ".join(f"{r['key']}={r['status']} {r['reason']}" for r in body["rows"]))
        bad += [f"hostile: {r['key']} {r['status']}" for r in body["rows"] if r["key"].startswith("honest") and r["status"] != "passed"]
        bad += [f"hostile: {r['key']} passed" for r in body["rows"] if not r["key"].startswith("honest") and r["status"] == "passed"]
        if args.docker_restart:
            held = {}
            t = threading.Thread(target=lambda: held.setdefault("a", post(url + "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [SLOW] * 8, "deadline_s": 300})))
            t.start()
            time.sleep(1.5)
            pid = Path("/var/run/docker.pid").read_text().strip()
            subprocess.run(["kill", pid], check=True)
            print(f"docker restart: stopped dockerd (pid {pid}) with the batch in flight")
            for _ in range(120):
                if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
                    break
                time.sleep(0.5)
            time.sleep(2)
            try:
                during = get(url + "/health")
            except urllib.error.HTTPError as e:
                answer = json.loads(e.read())
                during = {"status": f"HTTP {e.code} {answer.get('status')} ({answer.get('sandbox')})"}
            print(f"  while the engine is down: /health {during['status']}; a request gets HTTP "
                  f"{post(url + '/v1/evaluate', {'problem': {'record': ADD}, 'candidates': [HONEST]}, timeout=120)[0]}")
            for _ in range(10):   # the old engine may still be ending
                if subprocess.run(["bash", str(ROOT / "scripts/ensure_docker.sh")], capture_output=True).returncode == 0:
                    break
                time.sleep(3)
            print("  dockerd started again")
            t.join(600)
            rows = held["a"][1].get("rows", [])
            print(f"  the batch in flight: HTTP {held['a'][0]}, {statuses(rows)}")
            bad += [f"docker restart: {r['status']}" for r in rows if r["status"] == "failed"]
            code, body, _ = post(url + "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [HONEST] * 4})
            print(f"  after the engine is back: HTTP {code}, {statuses(body.get('rows', []))}")
            bad += [] if code == 200 and all(r["status"] == "passed" for r in body["rows"]) else ["docker restart: no recovery"]
        # SIGTERM with work in flight
        held = {}
        t = threading.Thread(target=lambda: held.setdefault("a", post(url + "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [SLOW] * 4})))
        t.start()
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        t.join(60)
        left = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=org.passk.run={health['run_id']}-python"],
                              capture_output=True, text=True).stdout.split()
        print(f"SIGTERM: exit {proc.returncode}; the request in flight got {statuses(held['a'][1]['rows'])}; "
              f"containers left: {len(left)}")
        bad += [] if proc.returncode == 0 and not left else ["SIGTERM: not clean"]
    finally:
        if proc.poll() is None:
            proc.kill()
    poison(bad)
    print("drills: " + ("all held" if not bad else "FAILED: " + "; ".join(bad)))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
