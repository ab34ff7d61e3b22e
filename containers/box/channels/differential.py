"""EvalPlus's differential tests, test side (uid 10002): the candidate's entry point is called on each of
one phase's inputs (base or plus) and each return value is compared, here, with the ground truth's, by
EvalPlus 0.3.1's rule (evalplus/eval/__init__.py unsafe_execute, read there, written again here). The
candidate never holds an expected output, and what it returns reaches the comparison as plain data: an
object whose __eq__ lies crosses as a handle, equal only to itself.

Time: each input has its own limit (EvalPlus's: max(floor, factor x the ground truth's time on it),
computed by the host). Inputs go to the candidate in batches; the candidate answers each call as soon
as it returns, and every reply is timed here, from before the batch was sent to when the reply was
read, less passk's own transport (TransportClock's rule). That span bounds the time of every call of
the batch up to that reply, whatever the candidate does (it cannot start an input before receiving
it), so a batch proves every one of its inputs in time while that span stays within the smallest
limit among them. When it does not, the verdict could depend on which input was slow: the phase is run
again in a new candidate process, one input per call (Rerun), where a reply later than its own input's
limit fails the candidate, as EvalPlus's SIGALRM does. A batch of one is that already.

The ground truth runs through the same path (mode "truth"): its outputs come back as data, and each
call's own time as the serving code measured it around the call, as EvalPlus's trusted_exec does."""

import collections
import json
import math
import os
import socket
import time

from ..codec import Decoder, Encoder, Unencodable, apply_content, deep
from ..framing import recv_measured, send_frame
from ..text import clean_name, clean_text, safe_str
from .base import Verdict
from .proxy import CLOCK, CandidateObjectCompared, TransportClock, _raise_from_candidate, _verdict_for

RTOL = 1e-07          # np.allclose's rtol as EvalPlus sets it
FLOAT_ATOL = 1e-6     # the tolerance EvalPlus enforces from the first float (or list of floats) expected on
BATCH_TARGET_S = 0.02  # a batch is sized to take about this long
MAX_BATCH = 512
ARG_ORACLES = ("surface_area", "digit_distance", "find_zero")   # they read the input after the call


class Unsolicited(Exception):
    """The candidate sent something before it was asked (an answer to a call not yet made)."""


class Rerun(Exception):
    """A batch's span passed the smallest limit among its inputs: rerun the phase one input per call."""


# ----------------------------------------------------------------------------------------------------
# EvalPlus's comparison (pure: host tests compare it with EvalPlus's own on many values)
# ----------------------------------------------------------------------------------------------------
def is_floats(x) -> bool:
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, float) for i in x)
    return False


def _array(value):
    """(shape, flat items) of `value` as numpy.asarray would lay it out, or ValueError for ragged nesting."""
    if isinstance(value, (list, tuple)):
        parts = [_array(v) for v in value]
        shapes = {shape for shape, _ in parts}
        if len(shapes) > 1:
            raise ValueError("inhomogeneous shape")
        inner = shapes.pop() if parts else ()
        return (len(value),) + inner, [x for _, flat in parts for x in flat]
    return (), [value]


def _is_number(x):
    return isinstance(x, (bool, int, float, complex))


def _broadcast(a, b):
    """numpy's broadcast shape of two shapes, or ValueError."""
    out = []
    for x, y in zip(((1,) * (len(b) - len(a)) + a)[::-1], ((1,) * (len(a) - len(b)) + b)[::-1]):
        if x != y and x != 1 and y != 1:
            raise ValueError("shapes do not broadcast")
        out.append(max(x, y) if x != 0 and y != 0 else 0)
    return tuple(out[::-1])


def _index(flat_index, shape, full):
    """The item of an array of `shape` (broadcast to `full`) at flat position `flat_index` of `full`."""
    shape = (1,) * (len(full) - len(shape)) + shape
    pos, stride_own, own = flat_index, 1, 0
    for dim_full, dim_own in zip(full[::-1], shape[::-1]):
        coord = pos % dim_full
        pos //= dim_full
        own += (coord if dim_own != 1 else 0) * stride_own
        stride_own *= dim_own
    return own


def allclose(a, b, rtol=RTOL, atol=0.0) -> bool:
    """numpy.allclose(a, b, rtol, atol) (numpy 2) for plain data: every pair of the broadcast arrays close
    (|x - y| <= atol + rtol |y|, b made floating first) or equal (infinities of one sign); it raises where
    numpy raises: ragged nesting, text anywhere, b an object array (anything but numbers, or an int outside
    64 bits in an array: numpy tests b's finiteness), a holding anything but numbers when any pair is
    compared (an object array of a is compared item by item there)."""
    (sa, fa), (sb, fb) = _array(a), _array(b)
    if any(isinstance(x, (str, bytes, bytearray)) for x in fa + fb):
        raise TypeError("text is not a number")
    if not all(_is_number(y) for y in fb) or (sb and any(type(y) is int and not -2**63 <= y < 2**64 for y in fb)):
        raise TypeError("isfinite is not defined on an object array")
    full = _broadcast(sa, sb)
    count = math.prod(full)
    if count and not all(_is_number(x) for x in fa):
        raise TypeError("not a number")
    xb = [y if type(y) is complex else float(y) for y in fb]
    for i in range(count):
        x, y = fa[_index(i, sa, full)], xb[_index(i, sb, full)]
        if not ((_finite(y) and abs(x - y) <= atol + rtol * abs(y)) or x == y):
            return False
    return True


def _finite(x):
    if type(x) is complex:
        return math.isfinite(x.real) and math.isfinite(x.imag)
    return math.isfinite(x)


def _poly(xs, x):
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])


def _surface_area(base_edge, height):
    slant = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 4 * (base_edge * slant) / 2)


def _digit_distance(num1, num2):
    a, b = str(num1), str(num2)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width)))


def matches(oracle, dataset, out, exp, atol, args):
    """(passed, atol for the next input): one input judged as EvalPlus judges it, in its order. Raises
    nothing: every exception of the comparison is a failure, as EvalPlus's `except BaseException`."""
    try:
        try:
            exact = out == exp
        except CandidateObjectCompared:   # an object of the candidate's, held by handle: equal only to itself
            exact = False
        if dataset == "mbpp":
            if oracle == "always":
                exact = exact or True
            elif oracle == "or_zero":
                exact = exact or out == 0
            elif oracle == "surface_area":
                exact = exact or abs(out - _surface_area(*args)) <= atol
            elif oracle == "digit_distance":
                exact = exact or out == _digit_distance(*args)
            elif oracle == "set_equal":
                exact = set(out) == set(exp)
            elif oracle == "not_none":
                exact = out == exp if isinstance(out, bool) else exp == (out is not None)
        if dataset == "humaneval" and oracle == "find_zero":
            # EvalPlus 0.3.1 checks this and then `continue`s past recording the pass, so every
            # HumanEval/32 sample fails there; passk follows the check's intent (docs/evalplus.md).
            return bool(abs(_poly(*args, out)) <= atol), atol
        if atol == 0 and is_floats(exp):
            atol = FLOAT_ATOL
        if not exact and atol != 0:
            if type(out) is not type(exp):
                return False, atol
            if isinstance(exp, (list, tuple)) and len(out) != len(exp):
                return False, atol
            return bool(allclose(out, exp, rtol=RTOL, atol=atol)), atol
        return bool(exact), atol
    except BaseException:   # noqa: B036 - EvalPlus fails the input on any exception of its check
        return False, atol


# ----------------------------------------------------------------------------------------------------
# Running one phase
# ----------------------------------------------------------------------------------------------------
def _short(value, limit=300) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: B036 - a value the test side cannot print
        text = "<unprintable>"
    return clean_text(text if len(text) <= limit else text[:limit] + "…", limit + 20)


class _Replies:
    """The replies of one request, each read with a deadline and timed from before it was sent; passk's
    own share (encoding, decoding, moving bytes, as TransportClock counts it) left out of each span."""

    def __init__(self, chan, request):
        self.chan = chan
        try:   # nothing may wait on the channel before the request: a reply sent ahead is not an answer
            waiting = chan.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            waiting = None
        if waiting == b"":
            raise EOFError
        if waiting:
            raise Unsolicited()
        self.seq = request["seq"] = os.urandom(8).hex()   # a frame of answers must carry it
        self.t0 = time.perf_counter()
        calls = request.pop("calls")
        head = json.dumps(request, separators=(",", ":"))
        data = (head[:-1] + ',"calls":[' + ",".join(calls) + "]}").encode()
        self.own = time.perf_counter() - self.t0
        self.nbytes = len(data)
        self.queued, self.span = collections.deque(), 0.0
        CLOCK.add(self.own, len(data))
        send_frame(chan, data)

    def next(self, limit):
        """(reply, span) where span is the candidate's share of the time since the request (to when the
        frame carrying the reply was read); (None, span) when none came within `limit` of it."""
        if self.queued:
            return self.queued.popleft(), self.span
        allowance = 2 * self.own + TransportClock.ROUND_TRIP + 2 * self.nbytes * TransportClock.PER_BYTE
        wait = self.t0 + limit + allowance + 0.005 - time.perf_counter()
        self.chan.settimeout(max(wait, 0.0) if math.isfinite(wait) else None)
        try:
            frame, size, parse_s = recv_measured(self.chan)
        except (socket.timeout, TimeoutError):
            return None, time.perf_counter() - self.t0 - allowance
        finally:
            self.chan.settimeout(None)
        self.own += parse_s
        self.nbytes += size
        CLOCK.add(parse_s, size)
        allowance = 2 * self.own + TransportClock.ROUND_TRIP + 2 * self.nbytes * TransportClock.PER_BYTE
        self.span = max(0.0, time.perf_counter() - self.t0 - allowance)
        if isinstance(frame, dict) and type(frame.get("replies")) is list and frame["replies"]:
            if frame.get("seq") != self.seq:
                raise Unsolicited()   # written before this request was: not an answer to it
            self.queued.extend(frame["replies"])
            return self.queued.popleft(), self.span
        if isinstance(frame, dict) and set(frame) == {"exc"}:
            return frame, self.span   # (an answer over the message cap, replaced by one saying so)
        raise Unsolicited()


def _call(texts, entry, timed, track) -> dict:
    """The batch request; its calls are the host's texts of the inputs (the codec's JSON), spliced in as
    they are (`_Replies` writes the request)."""
    return {"op": "batch", "name": entry, "timed": timed, "mut": track, "calls": texts}


def run_phase(chan, spec, ns):
    """Judge one phase (or, in mode truth, record the ground truth's outputs). Raises Verdict, or Rerun."""
    ep = spec["evalplus"]
    entry, phase = spec["entry_point"], ep["phase"]
    inputs = ep["inputs"]   # each the JSON text of the codec's data of one input's arguments
    if ns.names is not None and entry not in ns.names:
        raise Verdict("failed", "exception:NameError", f"the program defines no {entry}()")
    if ep.get("mode") == "truth":
        raise _truth(chan, entry, ep, ns)
    expected, limits = ep["expected"], ep["limits"]
    oracle, dataset, atol = ep["oracle"], ep["dataset"], float(ep["atol"])
    batched = ep.get("batch", True)
    track = oracle in ARG_ORACLES
    size, i, n = 1, 0, len(inputs)
    worst = 0.0   # the largest share of an input's limit any reply's span took (an upper bound per input)
    while i < n:
        j = min(n, i + (size if batched else 1))
        args_of = []
        if track:   # the test's own copies, which the candidate's changes are copied into (the oracle reads them)
            args_of = [_args(inputs[k]) for k in range(i, j)]
        try:
            replies = _Replies(chan, _call(inputs[i:j], entry, False, track))
        except Unsolicited:
            raise Verdict("failed", "protocol_violation", f"the candidate sent a reply before {phase} input {i} was "
                          "sent to it") from None
        bound = math.inf
        for k in range(i, j):
            bound = min(bound, float(limits[k]))
            try:
                reply, span = replies.next(bound)
            except EOFError:
                raise _gone(phase, k) from None
            except Unsolicited:
                raise Verdict("failed", "protocol_violation", f"an answer to {phase} input {k} that is not an answer "
                              "to the tests' request (it does not carry the request's nonce)") from None
            except (Unencodable, ValueError, RecursionError) as e:
                raise Verdict("failed", "protocol_violation", f"unreadable reply: {clean_text(safe_str(e), 300)}") from None
            if span > bound or reply is None:
                if j - i > 1:
                    raise Rerun()
                raise _slow(phase, k, inputs[k], float(limits[k]), span, reply is None)
            worst = max(worst, span / bound if bound > 0 else 0.0)
            if not isinstance(reply, dict) or ("ok" not in reply and "exc" not in reply):
                raise Verdict("failed", "protocol_violation", "a reply that is not an answer to the call")
            if "exc" in reply:
                raise _raised(phase, k, inputs[k], reply["exc"], ns, spec)
            try:
                with deep():
                    out = Decoder(make_handle=ns.handle, env=ns).dec(reply["ok"])
                    if track:
                        _copy_back(args_of[k - i], reply.get("mut", ()), ns)
                    exp = Decoder().dec(json.loads(expected[k]))
            except (Unencodable, KeyError, IndexError, TypeError, ValueError, RecursionError) as e:
                raise Verdict("failed", "protocol_violation", f"malformed reply: {type(e).__name__}") from None
            ok, atol = matches(oracle, dataset, out, exp, atol, args_of[k - i] if track else ())
            if not ok:
                raise Verdict("failed", "wrong_answer",
                              f"{phase} input {k}: {_short(_args(inputs[k]), 200)}: expected {_short(exp)}, "
                              f"got {_short(out)}", extra={"failed_phase": phase, "failed_input": k})
        if replies.queued:
            raise Verdict("failed", "protocol_violation", f"more answers than the {j - i} calls of a batch")
        size = max(1, min(MAX_BATCH, int(BATCH_TARGET_S / max(span / (j - i), 1e-6))))
        i = j
    raise Verdict("passed", "tests_completed", f"{n} {phase} inputs",
                  extra={f"{phase}_inputs": n, f"{phase}_max_share": round(worst, 4)})


def _args(data):
    """One input's arguments, decoded as the candidate decodes them (one decoder, argument by argument)."""
    try:
        dec = Decoder()
        with deep():
            return tuple(dec.dec(a) for a in json.loads(data))
    except (Unencodable, ValueError, TypeError, RecursionError):
        return "<input>"


def _copy_back(args, mut, ns):
    objects = Decoder(make_handle=ns.handle, env=ns)
    enc = Encoder()
    with deep():
        for a in args:
            enc.enc(a)
    for entry in mut:
        if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not int \
                or not 0 <= entry[0] < len(enc.objects):
            raise Unencodable("malformed change")
        target = enc.objects[entry[0]]
        apply_content(target, objects.fill(target, entry[1]))


def _gone(phase, k):
    return Verdict("failed", "candidate_exited", f"the candidate process ended during {phase} input {k}",
                   extra={"failed_phase": phase, "failed_input": k})


def _slow(phase, k, text, limit, span, never):
    what = f"no answer within {span:.3f} s" if never else f"answered after {span:.3f} s"
    return Verdict("failed", "input_time_limit",
                   f"{phase} input {k}: {_short(_args(text), 200)}: {what}; its limit is {limit:.3f} s",
                   extra={"failed_phase": phase, "failed_input": k, "input_limit_s": round(limit, 6),
                          "input_s": round(span, 6)})


def _raised(phase, k, text, exc, ns, spec):
    """The candidate raised on input k: labelled as the proxy labels what a candidate raises (an exit,
    the file-size limit, a value over the cap or not data, memory, else exception:<its class>)."""
    try:
        _raise_from_candidate(exc, ns)
    except BaseException as e:  # noqa: B036 - it always raises: the candidate's exception, rebuilt as data
        verdict = _verdict_for(e, spec)
    verdict.verdict["detail"] = clean_text(f"{phase} input {k}: {_short(_args(text), 200)}: {verdict.verdict['detail']}")
    verdict.verdict["extra"] = {"failed_phase": phase, "failed_input": k}
    return verdict


def _truth(chan, entry, ep, ns):
    """The ground truth on every input of the phase: each output as data (for tasks EvalPlus checks for
    not being None, whether it is not None), and each call's own time."""
    inputs, oracle, phase = ep["inputs"], ep["oracle"], ep["phase"]
    outputs, times = [], []
    i, n, size = 0, len(inputs), 1
    while i < n:
        j = min(n, i + size)
        replies = _Replies(chan, _call(inputs[i:j], entry, True, False))
        took = 0.0
        for k in range(i, j):
            try:
                reply, _ = replies.next(math.inf)
            except (EOFError, Unsolicited):
                return Verdict("failed", "ground_truth_failed", f"the ground truth's process ended on {phase} input {k}")
            if not isinstance(reply, dict) or "exc" in reply or "ok" not in reply:
                exc = reply.get("exc") if isinstance(reply, dict) and isinstance(reply.get("exc"), dict) else {}
                return Verdict("failed", "ground_truth_failed",
                               f"{phase} input {k} {_short(_args(inputs[k]), 200)}: the ground truth raised "
                               f"{clean_name(exc.get('type'))}: {clean_text(str(exc.get('msg', '')), 300)}")
            t = reply.get("t")
            t = float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) and t >= 0 else 0.0
            try:
                with deep():   # an object that is not data is refused, but where MBPP+ asks only "not None?"
                    out = Decoder(make_handle=ns.handle if oracle == "not_none" else None, env=ns).dec(reply["ok"])
                    # the candidate side's encoding is the codec's data already (checked by decoding it)
                    outputs.append(("true" if out is not None else "false") if oracle == "not_none"
                                   else json.dumps(reply["ok"], separators=(",", ":")))
            except (Unencodable, RecursionError) as e:
                return Verdict("failed", "ground_truth_failed",
                               f"{phase} input {k}: the ground truth returned a value that is not plain data ({safe_str(e)})")
            times.append(t)
            took += t
        size = max(1, min(MAX_BATCH, int(BATCH_TARGET_S / max(took / (j - i), 1e-6))))
        i = j
    return Verdict("passed", "ground_truth", f"{n} inputs", truth={"outputs": outputs, "times": times})


def verdict(chan, spec, namespace) -> Verdict:
    """The verdict of one phase of EvalPlus's inputs (proxy.run_test calls it for runner evalplus)."""
    try:
        run_phase(chan, spec, namespace)
    except Verdict as v:
        return v
    except Unsolicited:
        return Verdict("failed", "protocol_violation", "the candidate sent what the tests had not asked for")
    except Rerun:
        return Verdict("error", "rerun_unbatched", "a batch took longer than the smallest limit among its inputs")
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return Verdict("failed", "candidate_exited", "the candidate process ended during the tests")
    except MemoryError:
        return Verdict("failed", "memory_limit", "MemoryError in the test process")
    return Verdict("error", "tester_fault", "the differential tests returned no verdict")
