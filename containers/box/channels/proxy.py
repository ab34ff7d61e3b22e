"""The proxy channel, test side (uid 10002): the problem's tests run in the test worker, where `candidate`
is a proxy whose calls cross a socket to the candidate process as plain data. The verdict is given here,
after check() returned, in a process the candidate cannot reach."""

import builtins
import collections
import sys
import time
import traceback

from ..codec import Decoder, Encoder, Handles, Unencodable, apply_content, deep
from ..framing import encode_msg, recv_measured, recv_msg, send_frame, send_msg
from ..text import clean_name, clean_text, safe_str
from .base import Verdict, _describe


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


def _raise_from_candidate(exc, ns=None):
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
        err = _rebuild_exception(exc, name, msg, ns)
    err.passk_from_candidate = name
    raise err


_derived = {}


def _exception_class(module, qualname, ns):
    """The test side's class for (module, qualname) of a candidate's exception class, or None: a built-in
    one, one the prompt or test defined (in the test's namespace), or a standard-library one already
    imported here. Nothing is imported and no code of the candidate's runs."""
    if type(module) is not str or type(qualname) is not str:
        return None
    if module == "builtins":
        obj = getattr(builtins, qualname, None)
    elif module == "candidate":
        obj = dict.get(ns, qualname) if ns is not None and "." not in qualname else None
    else:
        obj = sys.modules.get(module)
        for part in qualname.split("."):
            obj = getattr(obj, part, None) if obj is not None and not part.startswith("__") else None
    if isinstance(obj, type) and issubclass(obj, Exception):
        return obj
    return None


def _rebuild_exception(exc, name, msg, ns):
    """The exception as the test would see it in Python: the candidate's class when the test side has it
    (built-in, standard library, the prompt's or test's), else a class of the same name derived from the
    nearest such base, so `except ValueError` catches what it would; its args as values."""
    cls = None
    mro = exc.get("mro") if type(exc.get("mro")) is list else []
    for i, entry in enumerate(mro):
        base = _exception_class(entry[0], entry[1], ns) if type(entry) is list and len(entry) == 2 else None
        if base is not None:
            if i == 0:
                cls = base
            else:
                key = (name, base)
                if key not in _derived and len(_derived) < 1000:
                    _derived[key] = type(name if name.isidentifier() else "CandidateError", (base,),
                                         {"__module__": "candidate"})
                cls = _derived.get(key, base)
            break
    if cls is None:
        cls = _SAFE_EXCEPTIONS.get(name, RuntimeError)
    args = None
    if "args" in exc:
        try:
            args = Decoder().dec(exc["args"])
        except (Unencodable, TypeError, ValueError, RecursionError):
            args = None
    if type(args) is not list:
        args = [msg]
    try:
        err = cls(*args)
    except Exception:
        try:
            err = cls.__new__(cls)
            err.args = tuple(args)
        except Exception:
            err = RuntimeError(f"{name}: {msg}")
    return err


class TransportClock:
    """What passk's own transport costs, so that the wall-clock limit charges only the candidate's and
    the tests' own work. Nothing the candidate reports is used, so it cannot buy itself time; the
    credit is sent to the supervisor as it grows (at least every CREDIT_STEP), which moves the deadline.

    The proxy's calls (`window`): the test side measures the CPU its own share takes (encoding and
    decoding values, JSON, the system calls that move the bytes; blocked while the candidate works, it
    takes none, and a candidate computing beside it adds none), counts the candidate's share as equal
    (it does the mirror image of the same work), and adds up to WAKE a call for waking the other side.
    What is credited is never more than the calls' elapsed time, summed over the job (one call that the
    scheduler delays is paid for by those it did not). CPU, not a fixed allowance per call: system
    calls and wake-ups cost several times more on a slow or busy machine (wake-ups of 10-70 µs on this
    VM; 0.3 ms a system call under gVisor's ptrace platform).

    The differential channel's batches (`add`): the test side's elapsed encoding and decoding, twice,
    plus ROUND_TRIP per exchange and PER_BYTE for moving each byte (few, large exchanges)."""

    ROUND_TRIP = 40e-6
    PER_BYTE = 2e-9
    WAKE = 50e-6
    CREDIT_STEP = 0.02

    def __init__(self):
        self.reset(None)

    def reset(self, report):
        self.total = self.reported = 0.0
        self.elapsed = self.bound = self.windows = 0.0   # the calls' elapsed time; what their CPU allows
        self.report = report

    def add(self, own_s, nbytes):
        self._credit(2 * own_s + self.ROUND_TRIP + 2 * nbytes * self.PER_BYTE)

    def window(self, elapsed_s, cpu_s, nbytes):
        """One call: `elapsed_s` from its start to its answer decoded, `cpu_s` the test side's CPU in
        it (the test's own code in callbacks left out of both), `nbytes` moved."""
        self.elapsed += max(elapsed_s, 0.0)
        self.bound += 2 * max(cpu_s, 0.0) + self.WAKE + 2 * nbytes * self.PER_BYTE
        credit = min(self.elapsed, self.bound)
        self._credit(credit - self.windows)
        self.windows = credit

    def _credit(self, seconds):
        self.total += seconds
        if self.report is not None and self.total - self.reported >= self.CREDIT_STEP:
            self.reported = self.total
            send_msg(self.report, {"credit": round(self.total, 6)})


class _Call:
    """The clock of one call into the candidate: started when the test side begins it, ended when the
    answer is decoded; the test's own code in callbacks (`own`) is not part of it."""

    __slots__ = ("w0", "c0", "nbytes")

    def __init__(self):
        self.c0, self.w0, self.nbytes = time.thread_time(), time.perf_counter(), 0

    def own(self, cpu_s, elapsed_s):
        self.c0 += cpu_s
        self.w0 += elapsed_s

    def end(self):
        CLOCK.window(time.perf_counter() - self.w0, time.thread_time() - self.c0, self.nbytes)


CLOCK = TransportClock()


class CandidateObjectCompared(Exception):
    """The test compared an object the candidate made (held by handle) with something else."""


def _call_remote(ns, what: dict, args, kwargs):
    """One call into the candidate process: `what` names it (a function, or a handle and a method)."""
    call = _Call()
    enc = Encoder(handles=ns.exports, tag="X")   # what is not data: the test's own object, called back
    try:
        with deep():
            payload = {"op": "call", **what, "args": [enc.enc(a) for a in args],
                       "kwargs": {str(k): enc.enc(v) for k, v in kwargs.items()}}
    except (Unencodable, RecursionError) as e:
        raise HarnessLimit(f"test passed {safe_str(e)} to the candidate") from None
    reply = _exchange(ns.chan, payload, ns, call)
    for key, stream in (("out", sys.stdout), ("err", sys.stderr)):
        text = reply.get(key)
        if type(text) is str and stream is not None:   # what the candidate printed, on the test's stream
            stream.write(text)
    try:
        dec = Decoder(enc.objects, make_handle=ns.handle, env=ns)   # the test's own containers first, as sent
        updates = []
        for entry in reply.get("mut", ()):
            if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not int \
                    or not 0 <= entry[0] < len(enc.objects):
                raise Unencodable("malformed change")
            target = enc.objects[entry[0]]
            updates.append((target, dec.fill(target, entry[1])))
        with deep():
            result = dec.dec(reply["ok"]) if "exc" not in reply else None
        for target, new in updates:   # in place: inner objects the test still holds stay live
            apply_content(target, new)
        if updates and not ns.copied_back and not made_in_this_worker([t for t, _ in updates]):
            ns.copied_back = True  # the candidate wrote into an object that outlives the job
    except (Unencodable, KeyError, IndexError, TypeError, ValueError, RecursionError) as e:
        raise ProtocolViolation(f"malformed reply: {type(e).__name__}") from None
    call.end()
    if "exc" in reply:
        _raise_from_candidate(reply["exc"], ns)
    return result


class RemoteIterator:
    """An iterator the candidate returned: the items it yielded on its side (up to values.ITER_PREFIX),
    then, if it had more, the rest fetched one by one from the candidate; then the exception it raised,
    if it raised one. Like any iterator it is not equal to a list: `list(it) == [...]` is the test."""

    __slots__ = ("_items", "_rest", "_exc", "_ns")

    def __init__(self, ns, items, rest, exc):
        self._ns, self._items, self._rest, self._exc = ns, collections.deque(items), rest, exc

    def __iter__(self):
        return self

    def __next__(self):
        if self._items:
            return self._items.popleft()
        if self._exc is not None:
            exc, self._exc = self._exc, None
            _raise_from_candidate(exc, self._ns)
        if self._rest is None:
            raise StopIteration
        try:
            return _call_remote(self._ns, {"target": self._rest._passk_handle, "method": "__next__"}, (), {})
        except StopIteration:
            self._rest = None
            raise

    def __repr__(self):
        return "<candidate iterator>"


class Remote:
    """A function of the candidate's, as the test sees it: calling it calls it in the candidate process."""

    def __init__(self, namespace, name):
        self._ns, self.__name__ = namespace, name

    def __call__(self, *args, **kwargs):
        return _call_remote(self._ns, {"name": self.__name__}, args, kwargs)

    def __repr__(self):
        return f"<candidate function {self.__name__}>"


class Handle:
    """An object the candidate made that is not plain data (a Solution instance, a returned function):
    the test holds this stand-in. Its methods and attributes are the object's, reached through the
    proxy; it is equal only to itself, because the object's own __eq__ never runs in the tests."""

    __slots__ = ("_ns", "_passk_handle", "_type", "_callable")

    def __init__(self, ns, number, type_name, is_callable):
        self._ns, self._passk_handle, self._type, self._callable = ns, number, type_name, is_callable

    def __call__(self, *args, **kwargs):
        if not self._callable:
            raise TypeError(f"'{self._type}' object is not callable")
        return _call_remote(self._ns, {"target": self._passk_handle}, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        reply = _exchange(self._ns.chan, {"op": "attr", "target": self._passk_handle, "name": name}, self._ns)
        if "exc" in reply:
            _raise_from_candidate(reply["exc"], self._ns)
        try:
            with deep():
                value = Decoder(make_handle=self._ns.handle, env=self._ns).dec(reply["ok"])
        except (Unencodable, KeyError, TypeError, ValueError, RecursionError) as e:
            raise ProtocolViolation(f"malformed reply: {type(e).__name__}") from None
        if isinstance(value, Handle) and value._callable:  # a method: calls go to the object itself
            return BoundRemote(self, name)
        return value

    def __eq__(self, other):
        if isinstance(other, Handle):
            return self._passk_handle == other._passk_handle
        raise CandidateObjectCompared(f"the test compared a {self._type} object the candidate made with "
                                      f"{clean_name(type(other).__name__)}: its own __eq__ is never run in the tests")

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("passk-handle", self._passk_handle))

    def __repr__(self):
        return f"<candidate {self._type} object>"


class BoundRemote:
    """A method of an object the candidate made."""

    __slots__ = ("_handle", "__name__")

    def __init__(self, handle, name):
        self._handle, self.__name__ = handle, name

    def __call__(self, *args, **kwargs):
        h = self._handle
        return _call_remote(h._ns, {"target": h._passk_handle, "method": self.__name__}, args, kwargs)


def _exchange(chan, payload, ns=None, call=None):
    """Send a request; answer the candidate's calls back into the tests' own objects (`cb`) until its
    reply comes. Its time is a _Call's (the caller's, which ends it; or its own)."""
    whole = call is None
    call = _Call() if whole else call
    try:
        data = encode_msg(payload)
        send_frame(chan, data)
        while True:
            reply, size, _ = recv_measured(chan)
            call.nbytes += len(data) + size
            if not isinstance(reply, dict):
                raise ProtocolViolation("reply is not an object")
            if "cb" not in reply or ns is None:
                if whole:
                    call.end()
                return reply
            answer = _serve_callback(ns, reply)
            call.own(answer.pop("_own_s", 0.0), answer.pop("_own_w", 0.0))   # the test's own code: charged
            data = encode_msg(answer)
            send_frame(chan, data)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        raise CandidateGone("the candidate process ended during the tests") from None
    except (Unencodable, ValueError, RecursionError) as e:
        raise ProtocolViolation(f"unreadable reply: {clean_text(safe_str(e), 300)}") from None


def _serve_callback(ns, req):
    """The candidate called one of the tests' own objects it was given (a key= function, a test's
    instance): run it here, on the test's side, and answer with data (objects by reference again)."""
    try:
        target = ns.exports.get(req.get("target") if type(req.get("target")) is int else -1)
        dec = Decoder(make_handle=ns.handle, env=ns, exports=ns.exports)
        with deep():
            args = [dec.dec(a) for a in req.get("args", [])]
            kwargs = {str(k): dec.dec(v) for k, v in dict(req.get("kwargs", {})).items()}
    except (Unencodable, TypeError, ValueError, RecursionError) as e:
        raise ProtocolViolation(f"malformed call back: {type(e).__name__}") from None
    kind = req.get("cb")
    t0, w0 = time.thread_time(), time.perf_counter()
    try:
        if kind == "call":
            result = target(*args, **kwargs)
        elif kind == "next":
            result = next(target)
        elif kind == "attr" and type(req.get("name")) is str and not req["name"].startswith("__"):
            result = getattr(target, req["name"])
        else:
            raise ProtocolViolation("malformed call back")
    except (ProtocolViolation, CandidateGone):
        raise
    except Exception as e:   # the test's own object raised: the candidate sees it, as in Python
        return {"cb_reply": True, "exc": {"type": type(e).__name__, "msg": safe_str(e)},
                "_own_s": time.thread_time() - t0, "_own_w": time.perf_counter() - w0}
    own, own_w = time.thread_time() - t0, time.perf_counter() - w0   # the test's own code: charged, not transport
    try:
        with deep():
            return {"cb_reply": True, "ok": Encoder(handles=ns.exports, tag="X").enc(result), "_own_s": own,
                    "_own_w": own_w}
    except (Unencodable, RecursionError) as e:
        return {"cb_reply": True, "exc": {"type": "TypeError", "msg": f"the tests' object returned {safe_str(e)}"}}


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

    def __init__(self, chan, names=None):
        super().__init__()
        self.chan = chan
        self.exports = Handles()   # the test's objects the candidate was given (called back through `cb`)
        self.copied_back = False
        self.names = names  # what the candidate's program defines (None: unknown, ask about every name)

    def handle(self, number, type_name, is_callable):
        return Handle(self, number, type_name, is_callable)

    def resolve(self, name):
        """A name the prompt or test defined (never asks the candidate)."""
        return dict.get(self, name)

    def iterator(self, items, rest, exc):
        if rest is not None and not isinstance(rest, Handle):
            raise ValueError("malformed iterator")
        return RemoteIterator(self, items, rest, exc)

    def __missing__(self, name):
        if name.startswith("__") or (self.names is not None and name not in self.names) or \
                (self.names is None and hasattr(builtins, name)):
            raise KeyError(name)  # then a builtin, or a NameError, as in Python
        reply = _exchange(self.chan, {"op": "lookup", "name": name}, self)
        if "exc" in reply:
            _raise_from_candidate(reply["exc"], self)
        if reply.get("kind") == "callable":
            value = Remote(self, name)
        elif reply.get("kind") == "value":
            try:
                with deep():
                    value = Decoder(make_handle=self.handle, env=self).dec(reply["value"])
            except (Unencodable, TypeError, ValueError, RecursionError) as e:
                raise ProtocolViolation(f"malformed value: {type(e).__name__}") from None
        else:
            raise KeyError(name)
        self[name] = value
        return value


_LOAD_REASONS = {"SyntaxError": "syntax_error", "IndentationError": "syntax_error", "TabError": "syntax_error",
                 "MemoryError": "memory_limit", "SystemExit": "exited_early", "KeyboardInterrupt": "exited_early"}


def compile_prompt(prompt):
    """(code, stubs): the prompt as code, for the helpers it defines (HumanEval's `poly`), and the names
    of the functions it only declares (a body of a docstring, `pass` or `...`: the candidate's to write),
    which are removed after it runs so that the tests reach the candidate's own. (None, ()) when the
    prompt is text rather than a program: the test's names are then its own and the candidate's. A
    prompt that ends in a bare signature compiles with a `pass` body."""
    import ast
    for suffix in ("", "\n    pass\n", "\n        pass\n"):
        try:
            tree = ast.parse(prompt + suffix, "prompt.py")
            code = compile(tree, "prompt.py", "exec")
        except (SyntaxError, ValueError):
            continue
        stubs = tuple(node.name for node in tree.body
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_stub(node.body))
        return code, stubs
    return None, ()


def _is_stub(body) -> bool:
    import ast
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and \
                (isinstance(stmt.value.value, str) or stmt.value.value is Ellipsis):
            continue
        return False
    return True


def _compiled(cache, spec):
    """(prompt code or None, the prompt's stubs, test code or the error compiling it), made once per problem."""
    key = (spec["prompt"], spec["test"])
    if key not in cache:
        if len(cache) > 512:
            cache.clear()
        try:
            test = compile(spec["test"], "test.py", "exec")
        except (SyntaxError, ValueError) as e:
            test = f"the problem's test code does not compile: {safe_str(e)}"
        cache[key] = (*compile_prompt(spec["prompt"]), test)
    return cache[key]


def run_test(chan, spec, compiled, job, differential=None):
    """Run one problem's tests against the candidate behind `chan`. Raises Verdict, always. The test's
    namespace is left in job["namespace"], for the worker to see what the job changed. `differential`
    judges EvalPlus's inputs (channels/differential.py verdict, which imports this module: passed in by
    the tester, so that the two modules import in one direction)."""
    try:
        first = recv_msg(chan)
    except EOFError:
        raise Verdict("failed", "candidate_exited", "the candidate process ended while loading") from None
    except (Unencodable, ValueError, RecursionError) as e:
        raise Verdict("failed", "protocol_violation", f"unreadable first message: {safe_str(e)}") from None
    if spec.get("channel") == "in_process":
        raise _in_process_verdict(first, spec)
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
    names = first.get("names")
    names = frozenset(n for n in names if type(n) is str) if type(names) is list else None
    namespace = job["namespace"] = TestNamespace(chan, names)
    if spec.get("runner") == "evalplus":   # no test code: the inputs, judged against the ground truth
        if differential is None:
            raise Verdict("error", "tester_fault", "no differential judge for EvalPlus's inputs")
        raise differential(chan, spec, namespace)
    prompt_code, stubs, test_code = compiled
    if isinstance(test_code, str):
        raise Verdict("error", "problem_error", test_code)
    namespace["__builtins__"] = builtins
    namespace["__name__"] = "__test__"
    if prompt_code is not None:
        try:
            exec(prompt_code, namespace)
        except BaseException as e:  # never a silent fallback to the candidate's names
            raise Verdict("failed", "prompt_error",
                          f"the problem's prompt raised in the test process: {_describe(e)}") from None
        for name in stubs:  # declared by the prompt, written by the candidate: theirs, never the stub
            namespace.pop(name, None)
    entry = spec.get("entry_point")
    if entry:
        namespace[entry] = Remote(namespace, entry)
    runner = spec.get("runner", "check")
    try:
        exec(test_code, namespace)
        if runner == "check":
            namespace["check"](namespace[entry])
    except BaseException as e:
        raise _verdict_for(e, spec) from None
    raise Verdict("passed", "tests_completed", "check() returned" if runner == "check" else "the tests ran to the end")


def _in_process_verdict(first, spec) -> Verdict:
    """The candidate process's own report of its tests (the in_process channel). Taken only as the report
    of a job's own run: it must carry the job's nonce, which was never on disk once the run started."""
    if not isinstance(first, dict) or not isinstance(first.get("in_process"), dict):
        return Verdict("failed", "protocol_violation", "the candidate process did not report its tests")
    if first.get("nonce") != spec.get("nonce") or not spec.get("nonce"):
        return Verdict("failed", "protocol_violation", "a report without this job's nonce")
    report = first["in_process"]
    status, reason = report.get("status"), report.get("reason")
    if status == "passed" and reason == "tests_completed":
        return Verdict("passed", "tests_completed", clean_text(report.get("detail", "")))
    if reason == "exception" and isinstance(report.get("exception"), dict):
        kind = clean_name(report["exception"].get("type"))
        msg = report["exception"].get("msg", "")
        if kind == "MemoryError":
            return Verdict("failed", "memory_limit", "MemoryError")
        if _is_file_too_large(kind, msg if type(msg) is str else ""):
            return Verdict("failed", "file_size_limit", msg)
        return Verdict("failed", f"exception:{kind}", f"{kind}: {clean_text(msg, 600)} ({clean_text(report.get('where', ''), 300)})")
    if reason in ("assertion", "exited_early", "syntax_error", "no_tests"):
        detail = report.get("detail") or report.get("where") or ""
        if reason == "assertion" and isinstance(report.get("exception"), dict):
            detail = f"{clean_text(report.get('where', ''), 300)} {clean_text(report['exception'].get('msg', ''), 300)}"
        return Verdict("failed", reason, detail)
    return Verdict("failed", "protocol_violation", "an unreadable report of the tests")


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
    if isinstance(e, CandidateObjectCompared):
        return Verdict("failed", "unencodable_return", safe_str(e))
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
