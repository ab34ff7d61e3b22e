"""The three verdict channels through the real engine: proxy (with handles, runners, prompt stubs),
in_process (check, script, unittest; an early exit is never a pass) and io (stdin programs, each
benchmark's comparison, runtime errors and limits)."""

import pytest

from harness import Evaluator, Limits, Problem

pytestmark = pytest.mark.docker

SOLUTION = ("class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n"
            "            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n")
CALL_TEST = "try:\n    _t = Solution().twoSum\nexcept NameError:\n    _t = twoSum\nassert _t([2, 7, 11], 9) == [0, 1]\n"
SUM_IO = (("3 4\n", "7\n"), ("1 1\n", "2\n"))
CASES = [
    ("a method of an object the candidate made, through a handle",
     Problem("s", "", CALL_TEST, None, runner="script"), SOLUTION, ("passed", "tests_completed", "proxy")),
    ("an object with a lying __eq__ is never compared by its own __eq__",
     Problem("eq", "", "assert f() == 3\n", None, runner="script"),
     "class Y:\n    def __eq__(self, o):\n        return True\ndef f():\n    return Y()\n", ("failed", "unencodable_return", "proxy")),
    ("the candidate's own function named like a builtin",
     Problem("m", "", "assert max([1, 2, 3]) == 'mine'\n", None, runner="script"), "def max(xs):\n    return 'mine'\n",
     ("passed", "tests_completed", "proxy")),
    ("a prompt's stub never shadows the candidate's function (MultiPL-E, no entry point)",
     Problem("st", "def inc(x):\n    \"\"\"Add one.\"\"\"\n", "def check(c):\n    assert c(1) == 2\ndef test_check():\n"
             "    check(inc)\ntest_check()\n", None, runner="script"), "def inc(x):\n    return x + 1\n",
     ("passed", "tests_completed", "proxy")),
    # regressions found by scripts/agreement/agreement_formats.py on MBPP (tasks 40, 88, 653, 902 and 533)
    ("a Counter / defaultdict the candidate returns crosses as itself and equals a dict, as in Python",
     Problem("ctr", "", "assert f('abca') == {'a': 2, 'b': 1, 'c': 1}\nassert type(f('x')).__name__ == 'Counter'\n"
             "assert g() == {1: [2]}\nassert g()[5] == []\n", None, runner="script"),
     "from collections import Counter, defaultdict\ndef f(s):\n    return Counter(s)\n"
     "def g():\n    d = defaultdict(list)\n    d[1].append(2)\n    return d\n", ("passed", "tests_completed", "proxy")),
    ("a Counter holding an object with a lying __eq__ is still refused",
     Problem("ctr2", "", "assert f() == {'a': 3}\n", None, runner="script"),
     "from collections import Counter\nclass Y:\n    def __eq__(self, o):\n        return True\n"
     "def f():\n    return Counter({'a': Y()})\n", ("failed", "unencodable_return", "proxy")),
    ("a test may pass a built-in type (MBPP 533) and the candidate may change a test's Counter in place",
     Problem("ty", "", "from collections import Counter\nassert drop((4, 5, 7.7), int) == [7.7]\n"
             "c = Counter('ab')\nbump(c)\nassert c == Counter('abb') and type(c) is Counter\n", None, runner="script"),
     "def drop(t, k):\n    return [x for x in t if not isinstance(x, k)]\ndef bump(c):\n    c['b'] += 1\n",
     ("passed", "tests_completed", "proxy")),
    ("in_process, check", Problem("ip", "", "def check(c):\n    assert c(1) == 2\n", "inc", channel="in_process"),
     "def inc(x):\n    return x + 1\n", ("passed", "tests_completed", "in_process")),
    ("in_process: sys.exit(0) before the tests is not a pass",
     Problem("ex", "", "assert inc(1) == 3\n", None, channel="in_process", runner="script"),
     "import sys\nsys.exit(0)\n", ("failed", "exited_early", "in_process")),
    ("in_process: a forged report without the job's nonce",
     Problem("fg", "", "assert inc(1) == 3\n", None, channel="in_process", runner="script"),
     "import os, struct\nd = b'{\"in_process\": {\"status\": \"passed\", \"reason\": \"tests_completed\"}}'\n"
     "os.write(3, struct.pack('>I', len(d)) + d)\nos._exit(0)\n", ("failed", "protocol_violation", "in_process")),
    ("in_process, unittest",
     Problem("ut", "", "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
             "        self.assertEqual(task_func(2), 4)\n", "task_func", channel="in_process", runner="unittest"),
     "def task_func(x):\n    return x * 2\n", ("passed", "tests_completed", "in_process")),
    ("in_process, unittest failing",
     Problem("ut2", "", "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
             "        self.assertEqual(task_func(2), 5)\n", "task_func", channel="in_process", runner="unittest"),
     "def task_func(x):\n    return x * 2\n", ("failed", "assertion", "in_process")),
    # regression (issue 24, item 7): the reason came from the traceback's last line, which the message writes
    ("in_process, unittest: the reason is the exception's class, not its message's last line",
     Problem("ut3", "", "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
             "        self.assertEqual(task_func(2), 5)\n", "task_func", channel="in_process", runner="unittest"),
     "def task_func(x):\n    raise ValueError('no\\nKeyboardInterrupt: chosen')\n",
     ("failed", "exception:ValueError", "in_process")),
    ("io, every test passes", Problem("io", "", "", None, channel="io", tests=SUM_IO),
     "a, b = map(int, input().split())\nprint(a + b)\n", ("passed", "tests_completed", "io")),
    ("io: a main guard runs, as in Python", Problem("io2", "", "", None, channel="io", tests=SUM_IO, compare="livecodebench"),
     "def main():\n    a, b = map(int, input().split())\n    print(a + b)\nif __name__ == '__main__':\n    main()\n",
     ("passed", "tests_completed", "io")),
    ("io: a wrong answer names the test", Problem("io3", "", "", None, channel="io", tests=SUM_IO, compare="codecontests"),
     "a, b = map(int, input().split())\nprint(a * b)\n", ("failed", "wrong_answer", "io")),
    ("io: an uncaught exception", Problem("io4", "", "", None, channel="io", tests=(("x\n", "7\n"),), compare="apps"),
     "print(int(input()))\n", ("failed", "runtime_error", "io")),
    ("io: a program that never ends", Problem("io5", "", "", None, channel="io", tests=(("1\n", "1\n"),)),
     "while True:\n    pass\n", ("timed_out", "wall_time_limit", "io")),
    ("io: printing past the output limit", Problem("io6", "", "", None, channel="io", tests=(("1\n", "1\n"),)),
     "while True:\n    print('x' * 1000)\n", ("failed", "output_limit", "io")),
    ("io: a program that does not read its (large) input", Problem("io7", "", "", None, channel="io",
                                                                   tests=(("9\n" * 200000, "ok\n"),)),
     "print('ok')\n", ("passed", "tests_completed", "io")),
]


@pytest.fixture(scope="module")
def rows():
    with Evaluator(Limits(timeout_s=2.0, memory_mb=256, output_bytes=100_000), workers=2) as ev:
        return ev.evaluate([(problem, program) for _, problem, program, _ in CASES])


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_each_channel_labels_as_its_rules_say(rows, index):
    _, _, _, (status, reason, channel) = CASES[index]
    row = rows[index]
    assert (row.status, row.reason, row.verdict_channel) == (status, reason, channel), row.detail


def test_io_rows_record_the_rule_and_the_tests(rows):
    row = rows[[c[0] for c in CASES].index("io: a wrong answer names the test")]
    assert row.channel_detail == {"compare": "codecontests", "runner": "script", "tests_passed": 0, "tests_total": 2,
                                  "failed_test": 0}
    assert "test 0" in row.detail and "expected '7\\n', got '12\\n'" in row.detail


def test_io_tests_together_have_a_total_limit():
    """Each io test has the wall-clock limit; all of them together ten times it (a problem with many
    slow tests cannot hold a worker for tests x limit)."""
    problem = Problem("many", "", "", None, channel="io", tests=(("1\n", "1\n"),) * 16)
    with Evaluator(Limits(timeout_s=0.5, memory_mb=256), workers=1) as ev:
        row, = ev.evaluate([(problem, "import time\ntime.sleep(0.4)\nprint(input())\n")])
    assert (row.status, row.reason) == ("timed_out", "wall_time_limit"), row.detail
    assert "together" in row.detail and 10 <= row.channel_detail["failed_test"] < 16


def test_an_io_problem_made_without_a_runner_runs_as_a_script():
    """Regression: the supervisor refused an io job whose runner was the Problem's default ("check"):
    every io problem built in code (and native io problems) was an infrastructure fault."""
    problem = Problem("io-default", "", "", None, channel="io", tests=(("3\n", "6\n"),))
    assert problem.runner == "check"
    with Evaluator(Limits(timeout_s=2, memory_mb=256), workers=1) as ev:
        row, = ev.evaluate([(problem, "if __name__ == '__main__':\n    print(2 * int(input()))\n")])
    assert (row.status, row.channel_detail["runner"]) == ("passed", "script")
