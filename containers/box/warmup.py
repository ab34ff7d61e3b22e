"""Fixed programs and tests of passk's own, run once in the forkserver and in the tester's zygote before
they fork anything, so that the code every candidate and every test worker runs is compiled and
specialised once, in memory they share, instead of in each of them. They never see a candidate's code."""

import socket

from .candidate import serve_program
from .channels.base import Verdict
from .channels.proxy import _compiled, run_test
from .codec import Encoder
from .framing import recv_msg, send_msg


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
    {"op": "attr", "target": 0, "name": "v"},                                   # on the handle just made
    {"op": "call", "target": 0, "method": "__repr__", "args": [], "kwargs": {}},
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
