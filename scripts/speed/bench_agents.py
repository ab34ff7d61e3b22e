#!/usr/bin/env python3
"""Agents' sandboxes, speed and memory (harness/sessions), on tinycalc (tests/repo_fixtures.py) or a real
instance (--rows, --repos, --instance):

- start: a sandbox made and set up, ready for its first command (p50, p99 over --starts);
- exec round trip of a trivial command (`true`), p50 and p99 over --execs: passk's session exec in-process,
  `passk-docker exec` (the command line mini-swe-agent runs, a process each) and through `passk serve`'s
  sessions over HTTP, beside plain `docker exec` on the same container and Docker's API in-process;
- rollouts at each --concurrency: N agents at once, each a sandbox started, 10 commands (a read, an edit,
  an import, the tests), the diff, the sandbox removed; the wall time and each rollout's p50 and p99;
- the memory of an idle sandbox (its cgroup's usage after set-up), under each --runtime.

    python3 scripts/speed/bench_agents.py [--starts 20 --execs 100 --concurrency 8 16 32] [--write-docs]

The disk an agent's sandboxes take is the environments' and snapshots' that `passk evaluate` uses (no image
per instance): scripts/speed/bench_repos.py measures it (docs/figures/repos-speed.md)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import figures  # noqa: E402


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def ms(values: list[float]) -> str:
    return f"{pct(values, 0.5) * 1000:.0f} / {pct(values, 0.99) * 1000:.0f}"


ROLLOUT = ["cat tinycalc/__init__.py", "ls -la", "git status --short", "grep -rn mean tinycalc | head",
           "sed -i 's/return sum(xs) \\/ len(xs)/return sum(xs) \\/ len(xs) if xs else 0.0/' tinycalc/__init__.py",
           "python -c 'import tinycalc; print(tinycalc.mean([]))'", "git diff --stat", "python -m pytest -q 2>&1 | tail -2",
           "cat tinycalc/__init__.py | wc -l", "echo done"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--execs", type=int, default=100)
    ap.add_argument("--concurrency", type=int, nargs="*", default=[8, 16, 32])
    ap.add_argument("--runtime", action="append", default=[], help="runc, runsc (memory; default both)")
    ap.add_argument("--rows", action="append", default=[], help="SWE-bench rows: --instance's start and memory too")
    ap.add_argument("--repos", default=None, help="DIR/<owner>/<name>, with --rows")
    ap.add_argument("--instance", action="append", default=[], help="a real instance (repeatable), with --rows")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    real = []
    if args.instance:   # read first: a name no row has is said now, not after minutes of measuring
        from harness.core.errors import InputError
        from harness.sessions.rows import pick
        if not args.rows or not args.repos:
            ap.error("--instance needs --rows and --repos")
        try:
            real = list(pick(args.rows, args.instance).values())
        except InputError as e:
            print(f"bench_agents: {e}", file=sys.stderr)
            return 2
    from harness.sessions import sandbox
    from harness.sessions.local import LocalSessions
    from tests.repo_fixtures import write_task
    tmp = Path(tempfile.mkdtemp(prefix="passk-bench-agents-"))
    t = write_task(tmp, [None])
    row = json.loads(t["rows"].read_text())
    iid = row["instance_id"]
    prepared = {}

    def sessions_for(runtime: str) -> LocalSessions:
        return LocalSessions([row], lambda r: prepared.setdefault(runtime, sandbox.prepare(
            r, str(t["repos"]), specs=str(t["specs"]), runtime=runtime)))
    local = sessions_for("runc")
    local.prepared(row)    # the environment image and snapshot, before anything is timed
    load = os.getloadavg()[0]
    out = [f"Machine: {os.cpu_count()} cores; load average {load:.1f} when the run began.", ""]

    # -- start
    starts = []
    for _ in range(args.starts):
        t0 = time.monotonic()
        sid = local.create(iid, 600)
        starts.append(time.monotonic() - t0)
        local.remove(sid)
    # -- exec round trips
    sid = local.create(iid, 3600)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shim = [sys.executable, "-m", "harness.integrations.passk_docker"]

    def timed(fn, n):
        got = []
        for _ in range(n):
            t0 = time.monotonic()
            fn()
            got.append(time.monotonic() - t0)
        return got
    api = sandbox._client().api

    def docker_api():
        e = api.exec_create(sid, ["true"], user="10001:10001")
        api.exec_start(e["Id"])
    plain = timed(lambda: subprocess.run(["docker", "exec", "-u", "10001", sid, "true"], check=True), args.execs)
    in_api = timed(docker_api, args.execs)
    in_process = timed(lambda: local.exec(sid, ["true"]), args.execs)
    cli = timed(lambda: subprocess.run([*shim, "exec", sid, "true"], env=env, check=True), args.execs)
    local.remove(sid)
    http = _through_serve(t, iid, args.execs)
    rows = [["a sandbox started and set up", ms(starts), "-"],
            ["exec `true`: Docker's API in-process", ms(in_api), "1.00"],
            ["exec `true`: passk's session in-process", ms(in_process), f"{pct(in_process, .5) / pct(in_api, .5):.2f}"],
            ["exec `true`: plain `docker exec` (CLI)", ms(plain), "-"],
            ["exec `true`: `passk-docker exec` (CLI)", ms(cli), f"{pct(cli, .5) / pct(plain, .5):.2f} of docker exec's"],
            ["exec `true`: passk serve's session over HTTP", ms(http), f"{pct(http, .5) / pct(in_api, .5):.2f}"]]
    out.append(figures.table(["what", "p50 / p99 (ms)", "p50 ratio"], rows))

    # -- rollouts at concurrency
    crow = []
    for n in args.concurrency:
        each, failed = _rollouts(local, iid, n)
        wall = each.pop()
        crow.append([str(n), f"{wall:.1f}", f"{pct(each, .5):.1f} / {pct(each, .99):.1f}" if each else "-",
                     f"{len(each)}/{n}" + (f" ({failed[0]})" if failed else "")])
    out += ["", f"Rollouts: each a sandbox started, {len(ROLLOUT)} commands (a read, an edit, an import, the tests), "
                "the diff, the sandbox removed; N at once.", "",
            figures.table(["N at once", "wall (s)", "a rollout p50 / p99 (s)", "finished"], crow)]

    # -- idle memory (and a real instance's start)
    mrow = []
    for rt in args.runtime or ["runc", "runsc"]:
        targets = [(iid, sessions_for(rt))] + [(r["instance_id"], LocalSessions([r], lambda r, rt=rt: sandbox.prepare(
            r, args.repos, runtime=rt))) for r in real]
        for name, s in targets:
            s.prepared(s.row(name))
            t0 = time.monotonic()
            sid = s.create(name, 600)
            took = time.monotonic() - t0
            time.sleep(3)
            stats = api.stats(sid, stream=False)
            used = (stats.get("memory_stats") or {}).get("usage", 0)
            cache = ((stats.get("memory_stats") or {}).get("stats") or {}).get("inactive_file", 0)
            s.remove(sid)
            mrow.append([name, rt, f"{took:.2f}", f"{used / 2**20:.0f}", f"{(used - cache) / 2**20:.0f}"])
    out += ["", "An idle sandbox: its start, and its cgroup's memory 3 s after (the tree and the venv are copied "
                "into tmpfs, which the memory counts).", "",
            figures.table(["instance", "runtime", "start (s)", "memory (MiB)", "less inactive file cache (MiB)"], mrow)]
    body = "\n".join(out) + "\n"
    return figures.finish("agents-speed", body, args.write_docs)


def _rollouts(local, iid: str, n: int) -> tuple[list[float], list[str]]:
    """n rollouts at once: (each one's seconds, then the wall time last; why the failed ones failed)."""
    lock = threading.Lock()
    each, failed = [], []

    def rollout(_):
        t0 = time.monotonic()
        try:
            s = local.create(iid, 1800)
            try:
                for cmd in ROLLOUT:
                    local.exec(s, ["bash", "-c", cmd], timeout_s=600)
                if "if xs else 0.0" not in local.diff(s):
                    raise RuntimeError("the rollout's diff lacks its edit")
            finally:
                local.remove(s)
        except Exception as e:  # noqa: BLE001 - counted and said
            with lock:
                failed.append(f"{type(e).__name__}: {str(e)[:120]}")
            return
        with lock:
            each.append(time.monotonic() - t0)
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=n) as pool:
        list(pool.map(rollout, range(n)))
    return each + [time.monotonic() - t0], failed


def _through_serve(t, iid: str, n: int) -> list[float]:
    from harness.sessions.remote import RemoteSessions
    from scripts.lib.passk_run import free_port
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", "--port", str(port), "--workers", "1",
                               "--problems", str(t["rows"]), "--repos", str(t["repos"]), "--repo-specs", str(t["specs"]),
                               "--sessions", "2"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        remote = RemoteSessions(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 300
        while True:
            try:
                remote.running()
                break
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.3)
        sid = remote.create(iid, 600)
        got = []
        for _ in range(n):
            t0 = time.monotonic()
            remote.exec(sid, ["true"])
            got.append(time.monotonic() - t0)
        remote.remove(sid)
        return got
    finally:
        server.terminate()
        server.wait(120)


if __name__ == "__main__":
    sys.exit(main())
