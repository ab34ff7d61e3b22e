"""Hostile commands an agent runs in its sandbox (harness/sessions), each with what must hold afterwards,
written before it ran. Used by test_sessions.py (runc) and by scripts/agents/agent_attacks.py (runc and
gVisor; the table in the docs).

Two sandboxes of tinycalc are started: the attacker's and a neighbour holding a secret. Every attack runs in
the attacker's with a time limit; its check reads the command's exit status and output and, where it
matters, probes afterwards (the attacker's sandbox still answers, the neighbour's secret is untouched, the
host has nothing left). `contained` is the expected outcome of every row: the label says what contained it."""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable

from tests.repo_fixtures import write_task


@dataclass
class Outcome:
    name: str
    what: str            # what the attack tries
    ok: bool             # what must hold, held
    detail: str          # what was seen (one line)
    seconds: float


class Lab:
    """The attacker's and the neighbour's sandboxes, and what the checks need."""

    def __init__(self, tmp_path, runtime: str = "runc"):
        from harness.sessions import sandbox
        from harness.sessions.local import LocalSessions
        self.sandbox = sandbox
        self.t = write_task(tmp_path, [None])
        self.row = json.loads(self.t["rows"].read_text())
        self.sessions = LocalSessions([self.row], lambda r: sandbox.prepare(
            r, str(self.t["repos"]), specs=str(self.t["specs"]), runtime=runtime))
        self.runtime = runtime
        self.secret = secrets.token_hex(16)
        self.neighbour = self.new()
        self.sessions.write_file(self.neighbour, "/testbed/secret.txt", self.secret.encode())
        self.sessions.write_file(self.neighbour, "/tmp/secret.txt", self.secret.encode())
        self.attacker = self.new()

    def new(self) -> str:
        return self.sessions.create(self.row["instance_id"], 1800)

    def sh(self, cmd: str, sid: str | None = None, timeout_s: float = 60, limit: int = 1 << 20) -> tuple[int, str]:
        code, out = self.sessions.exec(sid or self.attacker, ["bash", "-c", cmd], timeout_s=timeout_s, limit=limit)
        return code, out.decode("utf-8", "replace")

    def alive(self, sid: str | None = None) -> bool:
        try:
            return self.sh("echo alive", sid, timeout_s=60)[1].strip() == "alive"
        except Exception:  # noqa: BLE001 - a sandbox that is gone is not alive
            return False

    def neighbour_intact(self) -> bool:
        code, out = self.sh("cat /testbed/secret.txt /tmp/secret.txt", self.neighbour)
        return code == 0 and out == self.secret * 2

    def close(self) -> None:
        for sid in (self.attacker, self.neighbour):
            self.sessions.remove(sid)


@contextlib.contextmanager
def _host_listener():
    """A TCP service on the host's loopback while the block runs: (its port, whether anyone connected). Its
    thread ends with the block (a thread left running for minutes was seen by a later test of the same
    process: the test worker's state probe counts threads)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    hit, done = threading.Event(), threading.Event()

    def accept():
        end = time.monotonic() + 300
        while time.monotonic() < end and not done.is_set():
            try:
                conn, _ = srv.accept()
                hit.set()
                conn.close()
            except OSError:
                continue
        srv.close()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1], hit.is_set
    finally:
        done.set()
        thread.join(5)


def _host_processes(marker: str) -> int:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    return len(out)


def attacks(lab: Lab) -> list[tuple[str, str, Callable[[], tuple[bool, str]]]]:
    """(name, what it tries, the run and its check: (held, what was seen))."""
    s = lab.sh

    def fork_bomb():
        code, out = s("bomb() { bomb | bomb & }; bomb; sleep 5", timeout_s=30)
        time.sleep(2)
        full = not lab.alive()                         # the bomb outlives its command, as under docker exec
        if lab.sessions.find(lab.attacker) is None:    # gVisor: the process backstop ended the sandbox itself
            return lab.neighbour_intact(), f"exit {code}; the attacker's sandbox ended at its process limit"
        patch = lab.sessions.diff(lab.attacker)        # passk still reads the sandbox (it resets it first)
        back = lab.alive()
        return lab.neighbour_intact() and back and patch == "", \
            f"exit {code}; the sandbox at its process limit: {full}; diff read and sandbox reset: {back}"

    def fill(where):
        def run():
            code, out = s(f"head -c 20000000000 /dev/zero > {where}/fill; echo status $?; rm -f {where}/fill",
                          timeout_s=300)
            full = "No space left" in out or "File too large" in out or "status 1" in out or code == 137
            return full and lab.alive() and lab.neighbour_intact(), out.strip().splitlines()[0][:120] if out.strip() else f"exit {code}"
        return run

    def outlives_rm():
        marker = "passk-daemon-" + secrets.token_hex(4)
        victim = lab.new()
        lab.sh(f"setsid nohup bash -c 'exec -a {marker} sleep 100000' >/dev/null 2>&1 & disown; echo started", victim)
        lab.sessions.remove(victim)
        time.sleep(1)
        gone = lab.sessions.find(victim) is None
        left = _host_processes(marker)
        return gone and left == 0, f"sandbox gone: {gone}; processes on the host named so: {left}"

    def ignores_term():
        t0 = time.monotonic()
        code, _ = s("trap '' TERM HUP INT; while :; do sleep 1; done", timeout_s=3)
        took = time.monotonic() - t0
        code2, out2 = s("ps -eo cmd 2>/dev/null | grep -c 'while' || true")
        return code == 137 and took < 30, f"exit {code} after {took:.1f} s"

    def neighbours_files():
        code, out = s("cat /proc/*/root/testbed/secret.txt /proc/*/root/tmp/secret.txt 2>/dev/null; "
                      "find / -xdev -name secret.txt 2>/dev/null; ls /opt/passk 2>&1; "
                      "grep -rs " + lab.secret[:8] + " /opt /proc/[0-9]*/environ /tmp 2>/dev/null | head -3",
                      timeout_s=120)
        return lab.secret not in out, f"exit {code}; the neighbour's secret not in the output"

    def passks_files():
        code, out = s("ls /opt/passk/instances /var/lib/docker 2>&1; cat /etc/shadow 2>&1 | head -1; "
                      "ls /opt/passk/agent/testbed >/dev/null && touch /opt/passk/agent/testbed/x 2>&1")
        refused = ("No such file" in out or "Permission denied" in out) and "Read-only" in out
        return refused, " / ".join(line[:60] for line in out.strip().splitlines()[:4])

    def docker_socket():
        code, out = s("ls -la /var/run/docker.sock /run/docker.sock /run/containerd 2>&1; python -c \"import socket; "
                      "s = socket.socket(socket.AF_UNIX); s.connect('/var/run/docker.sock')\" 2>&1 | tail -1")
        return "No such file" in out and "srw" not in out, out.strip().splitlines()[-1][:120]

    def network():
        with _host_listener() as (port, hit):
            return _network(port, hit)

    def _network(port, hit):
        code, out = s("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; echo ---; "
                      "tail -n +2 /proc/net/route | wc -l; "
                      "python - <<'EOF'\nimport socket\nfor host, port in [('127.0.0.1', %d), ('172.17.0.1', %d), "
                      "('10.0.2.2', 80), ('1.1.1.1', 53), ('pypi.org', 443)]:\n    try:\n"
                      "        socket.create_connection((host, port), timeout=3).close(); print('REACHED', host)\n"
                      "    except OSError as e:\n        print('no', host, type(e).__name__)\nEOF" % (port, port),
                      timeout_s=120)
        ifaces = out.split("---")[0].split()
        return ifaces == ["lo"] and "REACHED" not in out and not hit(), \
            f"interfaces {ifaces}; " + "; ".join(x for x in out.split("---")[1].split("\n") if x.startswith("no"))[:150]

    def privilege():
        code, out = s("sudo -n id -u 2>&1; su -c 'id -u' root </dev/null 2>&1; "
                      "for b in $(find / -xdev -perm -4000 -type f 2>/dev/null); do echo setuid $b; done; "
                      "python -c 'import os; os.setuid(0)' 2>&1 | tail -1; id -u")
        last = out.strip().splitlines()[-1]
        return last == "10001" and "\n0\n" not in f"\n{out}\n", out.strip().replace("\n", " / ")[:150]

    def kill_init():
        code, out = s("kill -9 1 2>&1; kill -TERM -1 2>/dev/null; echo still")
        time.sleep(1)
        return lab.alive(), f"exit {code}; {out.strip()[:80]}; the sandbox answers afterwards"

    def big_output():
        t0 = time.monotonic()
        code, out = s("head -c 1000000000 /dev/zero", timeout_s=120, limit=16 << 20)
        return code == 137 and len(out) <= 16 << 20 and lab.alive(), \
            f"exit {code}, {len(out) >> 20} MiB kept, {time.monotonic() - t0:.1f} s"

    def never_ends():
        t0 = time.monotonic()
        code, _ = s("sleep infinity", timeout_s=3)
        s("ps -e -o cmd 2>/dev/null | grep -c '^sleep infinity' || "
                     "grep -l infinity /proc/[0-9]*/cmdline 2>/dev/null | wc -l")[1].strip()
        return code == 137, f"exit {code} after {time.monotonic() - t0:.1f} s"

    def forge_history():
        s("printf '\\n# the agent was here\\n' >> tinycalc/__init__.py && "
          "git -c user.name=x -c user.email=x@y commit -qam 'forged base' && "
          "git update-ref -d refs/heads/main 2>/dev/null; rm -rf .git/logs; echo forged")
        patch = lab.sessions.diff(lab.attacker)
        return "+# the agent was here" in patch, "the diff still shows the change: " + str("+# the agent" in patch)

    def planted_conftest():
        body = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                "    out = yield\n    out.get_result().outcome = 'passed'\n")
        lab.sessions.write_file(lab.attacker, "/testbed/conftest.py", body.encode())
        patch = lab.sessions.diff(lab.attacker)
        verdict = _evaluate(lab, patch, strict=True)
        return verdict == ("failed", "test_tampering"), f"--strict-tests: {verdict[0]} {verdict[1]}"

    return [
        ("fork bomb", "bash's fork bomb", fork_bomb),
        ("fill /testbed", "20 GB into the tree", fill("/testbed")),
        ("fill /tmp", "20 GB into /tmp", fill("/tmp")),
        ("daemon past rm -f", "a setsid daemon, then the sandbox removed", outlives_rm),
        ("ignores SIGTERM", "a loop that traps TERM, past its time", ignores_term),
        ("neighbour's files", "another sandbox's tree and /tmp", neighbours_files),
        ("passk's files", "snapshots, the engine's data, /etc/shadow, the snapshot mount", passks_files),
        ("Docker socket", "the engine's socket", docker_socket),
        ("network", "interfaces, routes, the host's loopback, the bridge, DNS, the internet", network),
        ("sudo, su, setuid", "root by any door", privilege),
        ("kill PID 1", "the sandbox's init", kill_init),
        ("1 GB of output", "a gigabyte to the caller", big_output),
        ("never ends", "sleep infinity", never_ends),
        ("forged .git", "commit the change and rewrite history so git diff is empty", forge_history),
        ("planted conftest.py", "a hook that passes every test, for the grader", planted_conftest),
    ]


def _evaluate(lab: Lab, patch: str, strict: bool) -> tuple[str, str]:
    import tempfile
    from pathlib import Path

    from harness.cli import main
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "preds.jsonl"
        preds.write_text(json.dumps({"instance_id": lab.row["instance_id"], "model_patch": patch}) + "\n")
        args = ["evaluate", "--problems", str(lab.t["rows"]), "--samples", str(preds), "--repos", str(lab.t["repos"]),
                "--repo-specs", str(lab.t["specs"]), "--out", str(Path(tmp) / "out"), "--quiet", "--runtime", lab.runtime]
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            main(args + (["--strict-tests"] if strict else []))
        rows = [json.loads(x) for x in (Path(tmp) / "out" / "results.jsonl").read_text().splitlines()]
        return rows[0]["status"], rows[0]["reason"]


def run_table(tmp_path, runtime: str = "runc") -> list[Outcome]:
    lab = Lab(tmp_path, runtime)
    out = []
    try:
        for name, what, run in attacks(lab):
            if lab.sessions.find(lab.attacker) is None:   # an attack that ended its own sandbox: a fresh one
                lab.attacker = lab.new()
            t0 = time.monotonic()
            try:
                ok, detail = run()
            except Exception as e:  # noqa: BLE001 - a harness error is a row that did not hold, said
                ok, detail = False, f"{type(e).__name__}: {str(e)[:200]}"
            out.append(Outcome(name, what, ok, detail.replace("\n", " ")[:200], time.monotonic() - t0))
            if not lab.alive(lab.neighbour):
                out.append(Outcome("neighbour alive", "after " + name, False, "the neighbour's sandbox stopped", 0))
    finally:
        lab.close()
    left = [c for c in lab.sandbox.listing() if c["id"] in (lab.attacker, lab.neighbour)]
    out.append(Outcome("nothing left", "both sandboxes removed", not left, f"{len(left)} left", 0))
    return out
