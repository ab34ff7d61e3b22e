"""The supervisor's pure parts (its value encoding), imported from containers/ without Docker.
Its behaviour in a container is tested in test_sandbox.py against the real engine."""

import json
import math
import sys

import pytest


@pytest.mark.parametrize("value", [
    None, True, False, 0, -7, 2**80, -(2**64), 1.5, -0.0, float("inf"), "tëxt", "",
    [1, [2, (3, 4)]], (1,), {"a": 1, 2: [3]}, {1, 2}, frozenset({3}), b"\x00\xff", 1 + 2j, {(1, 2): {3}},
])
def test_plain_values_round_trip_exactly(box, value):
    back = box.codec.decode(box.codec.encode(value))
    assert back == value and type(back) is type(value)


def test_nan_round_trips(box):
    assert math.isnan(box.codec.decode(box.codec.encode(float("nan"))))


def test_bool_and_int_stay_distinct(box):
    assert box.codec.decode(box.codec.encode([True, 1])) == [True, 1]
    assert [type(v) for v in box.codec.decode(box.codec.encode([True, 1]))] == [bool, int]


def test_objects_with_custom_equality_cannot_cross(box):
    class AlwaysEqual:
        def __eq__(self, other):
            return True

    class IntSub(int):
        pass

    for value in (AlwaysEqual(), [1, AlwaysEqual()], iter([AlwaysEqual()])):
        with pytest.raises(box.codec.Unencodable):
            box.codec.encode(value)
    # a subclass of a built-in scalar crosses as its base value: its own methods never run on the far side
    assert type(box.codec.decode(box.codec.encode(IntSub(3)))) is int


def test_standard_library_values_cross_with_their_type(box):
    import collections
    import datetime
    import decimal
    import fractions
    point = collections.namedtuple("Point", "x y")
    values = [collections.deque([1, 2], maxlen=3), point(1, 2), range(2, 9, 3), fractions.Fraction(1, 3),
              decimal.Decimal("0.30"), datetime.date(2020, 2, 29), datetime.timedelta(1, 2, 3),
              datetime.datetime(2020, 1, 1, 12, tzinfo=datetime.timezone.utc), collections.Counter("aab"),
              collections.OrderedDict([(2, 1), (1, 2)]), int, {1: 2}.keys()]
    out = box.codec.decode(box.codec.encode(values))
    assert out == values and [type(v).__name__ for v in out] == [type(v).__name__ for v in values]
    assert out[1].y == 2 and out[0].maxlen == 3
    assert list(box.codec.decode(box.codec.encode(x * x for x in range(3)))) == [0, 1, 4]


def test_deep_values_cross_within_the_cap(box):
    deep = []
    for _ in range(box.codec.MAX_DEPTH - 1):
        deep = [deep]
    with box.codec.deep():
        assert box.codec.decode(box.codec.encode(deep)) == deep
        too_deep = []
        for _ in range(box.codec.MAX_DEPTH + 5):
            too_deep = [too_deep]
        with pytest.raises(box.codec.Unencodable):
            box.codec.encode(too_deep)


def test_malformed_data_is_refused(box):
    for data in ({"Q": 1}, {"F": "1", "T": []}, 1.5):
        with pytest.raises(box.codec.Unencodable):
            box.codec.decode(data)


def test_supervisor_refuses_to_run_outside_its_image(tmp_path):
    """Regression: run by hand on a host, the supervisor's scrub emptied the host's /tmp."""
    import os
    import subprocess
    import sys

    from .conftest import ROOT
    marker = tmp_path / "keep-me"
    marker.write_text("x")
    env = {k: v for k, v in os.environ.items() if k != "PASSK_SANDBOX"}
    proc = subprocess.run([sys.executable, str(ROOT / "containers" / "start.py"), "serve"], input="",
                          capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode != 0 and "refusing to run outside" in proc.stderr
    assert marker.exists()


LIMITS = {"timeout_s": 1.0, "output_bytes": 1000, "cpu_time_s": 2}


def _report(**facts):
    report = {"start": 100.0, "end": 100.4, "timed_out": False, "output_exceeded": False, "memory_exceeded": False,
              "exit_code": None, "signal": None, "memory_pressure": False, "cpu_s": 0.1, "peak_memory_kb": 10,
              "stdout_tail": b"", "stderr_tail": b"", "stdout_bytes": 0, "stderr_bytes": 0}
    report.update(facts)
    return report


def _verdict(status, reason, t_end):
    return {"status": status, "reason": reason, "detail": "", "t_end": t_end, "test_cpu_s": 0.01}


PASS_IN_TIME = _verdict("passed", "tests_completed", 100.5)
GONE = _verdict("failed", "candidate_exited", 100.2)

# Every rule of the supervisor's label composition (decide), including the combinations whose outcome
# used to depend on which message reached the supervisor first. Each row: verdict, forkserver report,
# test process status (when no verdict came), expected (status, reason).
DECISIONS = {
    "1 the forkserver never reported": (None, "unreported", None, ("timed_out", "wall_time_limit")),
    "2 output over the limit beats a pass that came in time": (
        PASS_IN_TIME, _report(output_exceeded=True, stdout_bytes=5000), None, ("failed", "output_limit")),
    "2 output over the limit beats a timeout": (
        None, _report(output_exceeded=True, timed_out=True), None, ("failed", "output_limit")),
    "3 the memory watch beats a pass that came in time": (
        PASS_IN_TIME, _report(memory_exceeded=True), None, ("failed", "memory_limit")),
    "4 a pass in time": (PASS_IN_TIME, _report(), None, ("passed", "tests_completed")),
    "4 a pass in time, though the forkserver's deadline fired before it heard": (
        _verdict("passed", "tests_completed", 100.99), _report(timed_out=True), None, ("passed", "tests_completed")),
    "4 a failed assertion in time": (_verdict("failed", "assertion", 100.3), _report(), None, ("failed", "assertion")),
    "4 an error verdict in time": (_verdict("error", "unsupported_test_argument", 100.3), _report(), None,
                                   ("error", "unsupported_test_argument")),
    "5 still running at the limit": (None, _report(timed_out=True), {"running": True}, ("timed_out", "wall_time_limit")),
    "5 the candidate went away only when killed at the limit": (
        _verdict("failed", "candidate_exited", 101.01), _report(timed_out=True), None, ("timed_out", "wall_time_limit")),
    "6 SIGXCPU": (GONE, _report(signal="SIGXCPU"), None, ("timed_out", "cpu_time_limit")),
    "6 SIGXFSZ": (GONE, _report(signal="SIGXFSZ"), None, ("failed", "file_size_limit")),
    "6 SIGKILL while the OOM killer killed": (GONE, _report(signal="SIGKILL", memory_pressure=True), None,
                                              ("failed", "memory_limit")),
    "6 the OOM killer killed, the candidate not yet reaped when the tests saw it go": (
        GONE, _report(memory_pressure=True), None, ("failed", "memory_limit")),
    "6 SIGKILL without the OOM killer": (GONE, _report(signal="SIGKILL"), None, ("failed", "signal:SIGKILL")),
    "6 SIGSEGV": (GONE, _report(signal="SIGSEGV"), None, ("failed", "signal:SIGSEGV")),
    "6 an exit code": (GONE, _report(exit_code=0), None, ("failed", "exited_early")),
    "6 the channel closed, the process did not end": (GONE, _report(), None, ("failed", "candidate_exited")),
    "6 no verdict, but the candidate's exit is known": (None, _report(exit_code=3), {"signal": "SIGSEGV"},
                                                        ("failed", "exited_early")),
    "7 the tests were still running at the limit": (None, _report(), {"running": True},
                                                     ("timed_out", "wall_time_limit")),
    "8 the test process crashed": (None, _report(), {"running": False, "signal": "SIGSEGV"},
                                   ("failed", "test_crashed")),
    "9 a verdict after the limit": (_verdict("passed", "tests_completed", 101.5), _report(), None,
                                    ("timed_out", "wall_time_limit")),
    "10 the test process was killed from outside": (None, _report(), {"running": False, "signal": "SIGKILL"},
                                                    ("error", "tester_died")),
    "10 nothing known": (None, _report(), None, ("error", "tester_died")),
}


@pytest.mark.parametrize("case", DECISIONS, ids=list(DECISIONS))
def test_every_rule_of_the_label_composition(box, case):
    verdict, report, test_status, expected = DECISIONS[case]
    if report == "unreported":
        report = box.watch.unreported(100.0, LIMITS, now=125.0)
    status, reason, _ = box.supervisor.decide(verdict, report, LIMITS, test_status)
    assert (status, reason) == expected


def test_a_job_whose_forkserver_never_reported_is_timed_out_and_unclean(box):
    """A fork bomb under gVisor can keep the forkserver killing past the supervisor's patience; the
    candidate gave no verdict within its time, so it is timed out, and nothing unknown is made up."""
    report = box.watch.unreported(100.0, LIMITS, now=125.0)
    result = box.supervisor.compose(None, report, LIMITS)
    assert (result["status"], result["reason"]) == ("timed_out", "wall_time_limit")
    assert result["wall_s"] == 1.0
    assert result["cpu_s"] is None and result["peak_memory_kb"] is None and result["stdout_bytes"] is None
    assert report["clean"] is False and report["cleanup_s"] == 24.0


def test_wall_time_ends_at_the_tests_verdict(box):
    result = box.supervisor.compose(PASS_IN_TIME, _report(), LIMITS)
    assert result["wall_s"] == 0.5


def test_the_forkservers_warm_up_goes_through_every_serving_path(box):
    """The warm-up must exercise what candidates do (load, lookup, call, copy-back, each error path);
    if a change to the protocol broke it, candidates would silently pay for cold paths again."""
    replies = box.warmup.warm_up()
    assert replies[0]["ready"] is True and {"pairs", "words", "shape", "Box"} <= set(replies[0]["names"])
    assert replies[1:3] == [{"kind": "callable"}, {"kind": "missing"}]
    assert replies[3] == {"ok": True}
    assert replies[4]["ok"]["D"][0] == ["the", 2]
    assert replies[5]["mut"] == [[0, [1, 2, 3, 5]]]
    assert replies[6]["ok"] == {"H": [0, "Box", False]}  # not plain data: the tests get a handle
    assert replies[7] == {"ok": 1} and replies[8] == {"ok": "Box(1)"}  # its attribute, a method of it
    assert replies[9]["exc"]["type"] == "TypeError"
    assert len(replies) == len(box.warmup.WARM_UP_CALLS) + 1


def _call(box, fn, *args, **kwargs):
    """One proxied call as the tester and the candidate make it, both sides in this process, through JSON."""
    enc = box.codec.Encoder()
    payload = {"op": "call", "name": "f", "args": [enc.enc(a) for a in args],
               "kwargs": {k: enc.enc(v) for k, v in kwargs.items()}}
    reply = json.loads(json.dumps(box.candidate.serve_call({"f": fn}, json.loads(json.dumps(payload)))))
    dec = box.codec.Decoder(enc.objects)
    updates = [(enc.objects[i], dec.fill(enc.objects[i], body)) for i, body in reply.get("mut", ())]
    result = dec.dec(reply["ok"]) if "ok" in reply else None
    for target, new in updates:
        box.codec.apply_content(target, new)
    return result, reply.get("exc")


def test_changes_reach_the_tests_objects_in_place_even_when_the_call_raises(box):
    """Regression: a candidate that mutated its argument and then raised passed a test expecting the
    argument unchanged (nothing was copied back); keyword arguments and lists inside tuples were never
    copied back, and inner lists the test held went stale."""
    inner = [1, 2]
    outer = [inner, [0]]

    def f(t, d, *, kw):
        t[0].append(3)            # a list inside a tuple
        d["lists"][0].append(4)   # an inner list the test still holds
        kw["new"] = t[0]          # a keyword argument, aliased to another argument's object
        raise ValueError("after mutating")

    held = {"lists": outer}
    kw = {}
    _, exc = _call(box, f, (inner,), held, kw=kw)
    assert exc["type"] == "ValueError"
    assert inner == [1, 2, 3, 4] and held["lists"][0] is inner and outer[0] is inner
    assert kw["new"] is inner


def test_a_returned_argument_is_the_tests_own_object(box):
    data = [3, 1]
    same, _ = _call(box, lambda x: (x.sort(), x)[1], data)
    copy, _ = _call(box, lambda x: list(x), data)
    assert same is data and data == [1, 3]
    assert copy == data and copy is not data


def test_aliasing_and_cycles_cross_intact(box):
    a = [1]
    a.append(a)
    d = {"k": a}
    d["self"] = d
    back = box.codec.decode(json.loads(json.dumps(box.codec.encode([a, d, a]))))
    assert back[0] is back[2] and back[0][1] is back[0] and back[1]["self"] is back[1] and back[1]["k"] is back[0]


def test_references_to_nothing_are_refused(box):
    with pytest.raises(box.codec.Unencodable):
        box.codec.decode({"R": 0})
    with pytest.raises(box.codec.Unencodable):
        box.codec.Decoder([[]]).fill([], {"D": []})


def test_class_names_in_reasons_are_one_line_and_bounded(box):
    assert box.text.clean_name("Bad\ud800\nName|#`") == "Bad__Name___"
    assert box.text.clean_name("E" * 10_000) == "E" * 64 + "~"
    assert box.text.clean_name(None) == "_"
    assert box.text.safe_str(KeyError(10 ** 5000)).startswith("<not printable")
    assert len(box.text.clean_text("\ud800" * 5000, 100)) < 130


def test_removing_a_tree_deeper_than_the_stack_and_path_max(box, tmp_path):
    """Regression: a candidate's directory chain ~1,200 deep made the clean-up raise RecursionError, the
    job an infrastructure error, and two such candidates stopped the run."""
    import os
    import time
    top = tmp_path / "top"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(3000):  # 3000 × 10 characters: deeper than PATH_MAX allows a path to name
        os.mkdir("dddddddddd", dir_fd=fd)
        os.symlink(str(tmp_path), "out", dir_fd=fd)  # never followed
        child = os.open("dddddddddd", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    (tmp_path / "keep").write_text("x")
    assert box.cleanup.remove_tree(str(top), time.monotonic() + 60)
    assert not top.exists() and (tmp_path / "keep").exists()
    assert box.cleanup.remove_tree(str(tmp_path / "absent"), time.monotonic() + 1)


def test_a_test_worker_sees_what_a_job_left_in_its_state(box, monkeypatch):
    """Regression for state carried between jobs in a pooled container: whatever a job changes that the
    probe can see retires the worker; the global random generator is put back instead."""
    import gc
    import importlib
    import math
    import random
    import threading
    for name in box.layout.PRELOAD:
        importlib.import_module(name)
    probe = box.tester.StateProbe(box.tester._module_fingerprints())
    ns = {"math": math}
    assert probe.changed(ns) == ""
    monkeypatch.setenv("PASSK_PROBE_TEST", "1")
    assert probe.changed(ns) == "interpreter state"
    monkeypatch.delenv("PASSK_PROBE_TEST")
    monkeypatch.setattr(math, "tau", 6)
    assert probe.changed(ns) == "module attributes"
    monkeypatch.undo()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert probe.changed({}) == "threads"
    finally:
        stop.set()
        thread.join()
    first = random.random()
    probe.reset()
    assert random.random() == first and probe.changed({}) == ""
    gc.collect()
    gc.freeze()  # as the zygote does before it forks: what exists now is inherited, not the job's own
    try:
        assert box.channels.proxy.made_in_this_worker([[1, 2]])           # a literal the test made in this job
        assert not box.channels.proxy.made_in_this_worker([sys.path])     # an object that outlives every job
        assert not box.channels.proxy.made_in_this_worker([{"k": 1}])     # untracked by the collector: cannot tell
    finally:
        gc.unfreeze()


_FAKE_SERVER = r'''
import json, sys, os
sys.stdout.write(json.dumps({"ready": True, "version": "fake"}) + "\n"); sys.stdout.flush()
keep = []
for line in sys.stdin:
    req = json.loads(line)
    if req.get("hold_mb"):
        keep.append(b"\x01" * (req["hold_mb"] << 20))   # touched: resident
    reply = (json.dumps({"exit_code": 0, "output": "x" * req.get("size", 0)}) + "\n").encode()
    if req.get("twice"):   # two replies in one write: the second must wait for its own request
        reply = reply * 2
    for i in range(0, len(reply), 4093):   # in small, odd pieces
        os.write(1, reply[i:i + 4093])
'''


@pytest.mark.skipif(__import__("os").geteuid() != 0 or not __import__("os").path.exists("/usr/bin/python3"),
                    reason="the server drops to its own uid: root, and a Python that uid can run")
def test_a_compile_servers_replies_are_read_whole_and_a_server_that_holds_too_much_is_replaced(box):
    """Regression (issue 24, items 3 and 7): replies were gathered by concatenating the buffer and
    searching all of it for the newline at every read (quadratic: a 61 MiB reply took over 30 s), and a
    server kept whatever a compile left it holding. Replies are now joined once, in order, whatever
    their pieces; a server above what it may keep is ended after its reply, and the next request starts
    another."""
    from harness.containers.box.compile_server import CompileServer
    server = CompileServer(["/usr/bin/python3", "-c", _FAKE_SERVER], keep_kb=200 * 1024)
    try:
        assert server.compile({"size": 3 << 20}, 30)["output"] == "x" * (3 << 20)
        first = server.pid
        assert server.compile({"size": 1, "hold_mb": 300}, 30)["exit_code"] == 0
        assert server.pid is None and server.replaced == 1   # it held 300 MB: ended after its reply
        assert server.compile({"size": 2}, 30)["output"] == "xx" and server.pid not in (None, first)
        assert server.compile({"size": 5, "twice": True}, 30)["output"] == "xxxxx"
        assert server.compile({"size": 7}, 30)["output"] == "xxxxx"   # the second reply, kept in order
    finally:
        server.stop()


def test_a_machine_stall_is_told_from_a_programs_own_wait():
    # regressions (issue 43): a wall-clock kill of an accepted program that waited for a CPU most of its
    # 15 s (2.8 s of CPU) was its timed_out; a checker's fork bomb, whose tasks keep each other waiting,
    # must stay its own fault, not the machine's
    import importlib
    v = importlib.import_module("harness.containers.box.verdicts")
    assert v.waited_on_machine(10.0, 2.8, 15.0, 2.8) is True                  # others ran while it waited
    assert v.waited_on_machine(40.0, 14.5, 15.0, 0.1) is False                # its own tasks filled the CPU
    assert v.waited_on_machine(0.5, 0.1, 15.0, 0.1) is False                  # a short wait is never a stall
    assert v.waited_on_machine(None, None, 15.0) is None                     # not measured (gVisor)
    report = {"timed_out": True, "start": 0.0, "end": 15.0, "cpu_s": 2.8, "run_delay_s": 10.0, "run_cpu_s": 2.8,
              "output_exceeded": False, "memory_exceeded": False, "memory_pressure": False, "exit_code": None,
              "signal": "SIGKILL"}
    assert v.stalled(report) and not v.stalled({**report, "timed_out": False})
    label, _ = v.judged_label(report, {"timeout_s": 15.0, "cpu_time_s": 8, "memory_mb": 256}, 7.0)
    assert label == "machine_stall" and v.REJECTIONS["machine_stall"] == "error"


def test_a_fork_bombs_many_short_waits_are_not_one_long_one():
    # regression: Bash's fork bomb was `error machine_stall` in the suite ("waited 1.03 s for a CPU in its
    # 2.00 s, 0.00 s of CPU"): the waits of its hundreds of tasks were summed into one, which looked like
    # the machine's; the longest wait of one task is what a stall is
    import importlib
    p = importlib.import_module("harness.containers.box.procs")
    v = importlib.import_module("harness.containers.box.verdicts")
    bomb = [(1_000_000, 4_000_000)] * 300            # 300 tasks: ran 1 ms, waited 4 ms each
    delay, ran = p.wait_figures(bomb)
    assert (delay, ran) == (0.004, 0.3)
    assert v.waited_on_machine(delay, ran, 2.0, 0.0) is False
    starved = [(200_000_000, 1_600_000_000), (1_000_000, 2_000_000)]   # one task kept off the CPU 1.6 s
    assert v.waited_on_machine(*p.wait_figures(starved), 2.0, 0.2) is True
    assert p.wait_figures([]) is None


def test_an_interactive_verdict_blames_the_judge_for_the_judges_fault():
    import importlib
    v = importlib.import_module("harness.containers.box.verdicts")
    limits = {"timeout_s": 3.0, "cpu_time_s": 2, "output_bytes": 1 << 20, "memory_mb": 256}
    ok_run = {"timed_out": False, "start": 0.0, "end": 0.1, "cpu_s": 0.05, "exit_code": 0, "signal": None,
              "stderr_tail": b"", "stdout_tail": b"", "output_exceeded": False, "memory_exceeded": False,
              "memory_pressure": False}
    ended = {"ended": True, "first": False, "verdict": "accepted", "detail": "", "score": None, "stalled": False}
    assert v.interactive_verdict(ended, ok_run, limits, 1.0)[0] == "accepted"
    # an interactor that reads one question and sleeps: a judge error, not the honest candidate's idleness
    assert v.interactive_verdict({**ended, "ended": False}, ok_run, limits, 1.0)[0] == "judge_error"
    assert v.interactive_verdict({**ended, "ended": False, "stalled": True}, ok_run, limits, 1.0)[0] == "machine_stall"
    killed = {**ok_run, "timed_out": True, "end": 3.0, "cpu_s": 0.01, "exit_code": None, "signal": "SIGKILL"}
    wrong = {**ended, "verdict": "wrong_answer", "detail": "the submission ended without an answer"}
    # the interactor read the end of a candidate killed at its limit: the limit decides
    assert v.interactive_verdict(wrong, killed, limits, 1.0)[0] == "idleness_limit"
    # a wrong answer given before the candidate ended stands
    assert v.interactive_verdict({**wrong, "first": True}, killed, limits, 1.0)[0] == "wrong_answer"
    crashed = {**ok_run, "exit_code": 139, "signal": "SIGSEGV"}
    assert v.interactive_verdict(wrong, crashed, limits, 1.0)[0] == "runtime_error"


def test_cpu_time_over_the_limit_is_the_time_limit_whatever_followed():
    # regression (issue 43): KARWa 2024's bombe, time_limit_exceeded/christophe_dict.py (PyPy), used 2.28 s of
    # CPU under a 1.5 s limit and then 1068 MB of its 1024: passk said memory_limit, problemtools TLE (its
    # runner, as DOMjudge's, looks at the time first); a memory kill within the time stays memory_limit
    import importlib
    v = importlib.import_module("harness.containers.box.verdicts")
    limits = {"timeout_s": 4.0, "cpu_time_s": 3, "memory_mb": 1024, "output_bytes": 1 << 20}
    oom = {"timed_out": False, "start": 0.0, "end": 2.3, "cpu_s": 2.28, "exit_code": None, "signal": "SIGKILL",
           "stderr_tail": b"", "stdout_tail": b"", "output_exceeded": False, "memory_exceeded": True,
           "memory_pressure": False, "peak_memory_kb": 1094320}
    assert v.judged_label(oom, limits, 1.5)[0] == "time_limit"
    assert v.judged_label({**oom, "cpu_s": 0.9}, limits, 1.5)[0] == "memory_limit"


def test_the_container_package_runs_on_the_oldest_python_it_names():
    # regression (issue 44): a repository environment's image is passk's on Debian bullseye (Python 3.9), and
    # box/build.py's `dict | None` annotation, evaluated when the module loads, stopped every container there
    import ast
    from .conftest import ROOT
    for path in sorted((ROOT / "containers").rglob("*.py")):
        tree = ast.parse(path.read_text())
        lazy = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
                   for n in tree.body)
        for node in ast.walk(tree):
            assert not isinstance(node, ast.Match), f"{path}:{node.lineno}: match needs Python 3.10"
            if lazy:
                continue
            annotations = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                annotations += [a.annotation for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs]
                annotations.append(node.returns)
            elif isinstance(node, ast.AnnAssign):
                annotations.append(node.annotation)
            for ann in filter(None, annotations):
                bad = [n for n in ast.walk(ann) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr)]
                assert not bad, f"{path}:{ann.lineno}: `X | Y` in an annotation needs Python 3.10 (or the __future__ import)"
