"""Hostile candidates (and hostile checkers) of judged problems, each with the exact label and reason it must
get. Used by test_judge.py and by scripts/attacks/judge_attacks.py (which prints the table for the docs).

The problem, unless an attack says otherwise: read `a b`, print a + b; two tests; the default validator;
a 1 s time limit, 256 MB. Unless an attack says otherwise its program is WRONG or forges nothing, so any
pass would be forged."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.inputs.judge import Checker, JudgeSpec, JudgeTest

TESTS = (("1 2\n", "3\n"), ("20 22\n", "42\n"))
FLOAT_TESTS = (("1 3\n", "0.333333333\n"), ("2 3\n", "0.666666667\n"))

GUESS_INTERACTOR = '''import sys
secret = int(open(sys.argv[1]).read())
print(100, flush=True)
for _ in range(20):
    line = sys.stdin.readline()
    if not line:
        sys.exit(43)
    parts = line.split()
    if len(parts) != 2 or parts[0] not in ("?", "!") or not parts[1].isdigit():
        sys.exit(43)
    x = int(parts[1])
    if parts[0] == "!":
        sys.exit(42 if x == secret else 43)
    print("<" if secret < x else ">" if secret > x else "=", flush=True)
sys.exit(43)
'''
GUESS_TESTS = (("37\n", "37\n"), ("64\n", "64\n"))


@dataclass(frozen=True)
class JudgeAttack:
    name: str
    program: str
    status: str
    reason: str
    language: str = "python"
    tests: tuple = TESTS
    checker: Checker = field(default_factory=Checker)
    interactive: bool = False
    file_io: tuple | None = None
    runsc: tuple | None = None     # the label under gVisor, where it differs for a stated reason

    def problem(self):
        from harness.inputs.problem import Problem
        spec = JudgeSpec(tuple(JudgeTest(i, o, f"t{n}") for n, (i, o) in enumerate(self.tests)), 1.0, memory_mb=256,
                         output_mb=64, checker=self.checker, interactive=self.interactive, file_io=self.file_io)
        return Problem("attack/" + self.name, "", "", None, channel="io", format="attack", judge=spec)

    def expected(self, runtime: str) -> tuple:
        return self.runsc if runtime == "runsc" and self.runsc else (self.status, self.reason)


BINARY_SEARCH = ("lo, hi = 1, int(input())\nwhile lo < hi:\n    mid = (lo + hi) // 2\n"
                 "    print('?', mid, flush=True)\n    r = input()\n    if r == '=':\n        lo = hi = mid\n"
                 "    elif r == '<':\n        hi = mid - 1\n    else:\n        lo = mid + 1\nprint('!', lo, flush=True)\n")
# the guessing interactor, saying "correct" a moment after the candidate's answer, when the candidate has gone
GUESS_CHATTY = Checker("kattis", language="python", files=(("chatty.py", """import sys, time
secret = int(open(sys.argv[1]).read())
print(100, flush=True)
for line in sys.stdin:
    kind, x = line.split()
    if kind == "!":
        time.sleep(0.3)
        print("correct" if int(x) == secret else "wrong", flush=True)
        sys.exit(42 if int(x) == secret else 43)
    print("<" if secret < int(x) else ">" if secret > int(x) else "=", flush=True)
sys.exit(43)
"""),))
FLOAT = Checker("default", ("float_tolerance", "1e-6"))
GUESS = Checker("kattis", language="python", files=(("guess.py", GUESS_INTERACTOR),))
FILES = ("input.txt", "output.txt")

JUDGE_ATTACKS = [
    # output a naive checker would choke on; passk's own comparators take any bytes
    JudgeAttack("binary output", "import os\nos.write(1, bytes(range(256)) * 64)\n", "failed", "wrong_answer"),
    JudgeAttack("100 MB of output", "import os\nchunk = b'3 ' * (1 << 20)\nfor _ in range(50):\n    os.write(1, chunk)\n",
                "failed", "output_limit"),
    JudgeAttack("the right answer without a trailing newline (honest)",
                "import sys\na, b = map(int, input().split())\nsys.stdout.write(str(a + b))\n", "passed", "tests_completed"),
    JudgeAttack("NaN against a float tolerance", "print('nan')\n", "failed", "wrong_answer", tests=FLOAT_TESTS, checker=FLOAT),
    JudgeAttack("inf against a float tolerance", "print('inf')\n", "failed", "wrong_answer", tests=FLOAT_TESTS, checker=FLOAT),
    JudgeAttack("a hex float against a float tolerance", "print(float.hex(1 / 3))\n", "failed", "wrong_answer",
                tests=FLOAT_TESTS, checker=FLOAT),
    # the answer, the checker's files and its feedback directory are out of reach
    JudgeAttack("reading the answer file",
                "import glob\nfound = [open(p).read() for p in glob.glob('/tmp/passk/*/c/answer')]\n"
                "print(found[0] if found else 'none')\n", "failed", "wrong_answer"),
    JudgeAttack("writing score.txt and the answer into the checker's directory",
                "import glob, os\nfor d in glob.glob('/tmp/passk/*/c') + glob.glob('/tmp/passk/*/c/feedback'):\n"
                "    for name in ('score.txt', 'answer', 'judgemessage.txt'):\n        try:\n"
                "            open(os.path.join(d, name), 'w').write('0')\n        except OSError:\n            pass\n"
                "print(0)\n", "failed", "wrong_answer"),
    JudgeAttack("planting a checker in the checkers' directory",
                "import os\ntry:\n    os.makedirs('/tmp/passk/checkers/x', exist_ok=True)\n"
                "    open('/tmp/passk/checkers/x/checker', 'w').write('#!/bin/sh\\nexit 0\\n')\nexcept OSError:\n    pass\nprint(0)\n",
                "failed", "wrong_answer"),
    # file mode: nothing of one test reaches the next
    JudgeAttack("reading what an earlier test left in file mode (passes only if nothing is left)",
                "import os\nseen = os.listdir('.')\na, b = map(int, open('input.txt').read().split())\n"
                "open('keep.txt', 'w').write('x')\n"
                "open('output.txt', 'w').write(f'{a + b}\\n' if 'keep.txt' not in seen and 'output.txt' not in seen else 'leak\\n')\n",
                "passed", "tests_completed", file_io=FILES),
    JudgeAttack("output.txt a link to the answer",
                "import glob, os\nfor p in glob.glob('/tmp/passk/*/c/answer'):\n    os.symlink(p, 'output.txt')\n    break\n"
                "else:\n    os.symlink('/etc/hostname', 'output.txt')\n", "failed", "wrong_answer", file_io=FILES),
    # processes that outlive the test
    JudgeAttack("a child that prints the answer after the program exits",
                "import os, time\na, b = map(int, input().split())\nif os.fork() == 0:\n    time.sleep(0.3)\n"
                "    print(a + b, flush=True)\n    os._exit(0)\nos._exit(0)\n", "failed", "wrong_answer"),
    JudgeAttack("a daemon that answers the next test in file mode",
                # it writes only when input.txt changes under it (a later test's): a pass would mean it outlived
                # its test; the program itself always answers 3, right for the first test only
                "import os, time\nmine = open('input.txt').read()\nif os.fork() == 0:\n    os.setsid()\n"
                "    for _ in range(100):\n        time.sleep(0.02)\n        try:\n            now = open('input.txt').read()\n"
                "            if now != mine:\n                a, b = map(int, now.split())\n"
                "                open('output.txt', 'w').write(f'{a + b}\\n')\n        except (OSError, ValueError):\n"
                "            pass\n    os._exit(0)\nopen('output.txt', 'w').write('3\\n')\n", "failed", "wrong_answer",
                file_io=FILES),
    JudgeAttack("killing every process it may", "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n"
                "    pass\nprint(0)\n", "failed", "wrong_answer"),
    # interactive: stall, flood, close the input, leave early, guess by killing the interactor
    JudgeAttack("interactive: stalls without reading or writing", "import time\ntime.sleep(60)\n", "timed_out",
                "idleness_limit", tests=GUESS_TESTS, checker=GUESS, interactive=True),
    JudgeAttack("interactive: floods the interactor", "import os\nwhile True:\n    os.write(1, b'? 1\\n' * 4096)\n",
                "failed", "wrong_answer", tests=GUESS_TESTS, checker=GUESS, interactive=True),
    JudgeAttack("interactive: closes its input, then answers", "import os, time\nos.close(0)\ntime.sleep(0.2)\n"
                "print('! 37', flush=True)\n", "failed", "wrong_answer", tests=GUESS_TESTS, checker=GUESS, interactive=True),
    JudgeAttack("interactive: exits 0 before the interactor has its answer", "import os\nos._exit(0)\n", "failed",
                "wrong_answer", tests=GUESS_TESTS, checker=GUESS, interactive=True),
    JudgeAttack("interactive: kills the interactor and answers", "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\n"
                "except OSError:\n    pass\nprint('! 1', flush=True)\n", "failed", "wrong_answer", tests=GUESS_TESTS,
                checker=GUESS, interactive=True),
    JudgeAttack("interactive: binary search (honest)", "lo, hi = 1, int(input())\nwhile lo < hi:\n    mid = (lo + hi) // 2\n"
                "    print('?', mid, flush=True)\n    r = input()\n    if r == '=':\n        lo = hi = mid\n"
                "    elif r == '<':\n        hi = mid - 1\n    else:\n        lo = mid + 1\nprint('!', lo, flush=True)\n",
                "passed", "tests_completed", tests=GUESS_TESTS, checker=GUESS, interactive=True),
    # issue 43: the interactor's faults are the judge's; its last words after the candidate's end count
    JudgeAttack("interactive: an interactor that reads one question and sleeps (honest candidate)",
                BINARY_SEARCH, "error", "judge_error", tests=GUESS_TESTS, interactive=True,
                checker=Checker("kattis", language="python", files=(("sleepy.py",
                    "import sys, time\nprint(100, flush=True)\nsys.stdin.readline()\ntime.sleep(600)\n"),))),
    JudgeAttack("interactive: an interactor that writes its last line after the candidate ended (honest)",
                BINARY_SEARCH, "passed", "tests_completed", tests=GUESS_TESTS, checker=GUESS_CHATTY, interactive=True),
    JudgeAttack("interactive: crashes on its first answer",
                "n = int(input())\nprint('? 1', flush=True)\ninput()\nimport ctypes\nctypes.string_at(0)\n",
                "failed", "runtime_error", tests=GUESS_TESTS, checker=GUESS, interactive=True),
    # a hostile problem: its checker runs in the sandbox, as its own user, with its own limits
    JudgeAttack("a checker that never ends", "a, b = map(int, input().split())\nprint(a + b)\n", "error", "judge_error",
                checker=Checker("kattis", language="python", files=(("c.py", "while True:\n    pass\n"),), time_s=1.0)),
    JudgeAttack("a checker that fork-bombs", "a, b = map(int, input().split())\nprint(a + b)\n", "error", "judge_error",
                checker=Checker("kattis", language="python",
                                files=(("c.py", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"),),
                                time_s=1.0)),
    JudgeAttack("a checker that floods its output", "a, b = map(int, input().split())\nprint(a + b)\n", "error", "judge_error",
                checker=Checker("kattis", language="python", files=(("c.py", "import os\nwhile True:\n    os.write(1, b'x' * 65536)\n"),),
                                time_s=5.0)),
    JudgeAttack("a checker that reaches for the candidate's files and the supervisor",
                "a, b = map(int, input().split())\nprint(a + b)\n", "failed", "wrong_answer",
                checker=Checker("kattis", language="python", files=(("c.py",
                    "import glob, os, sys\nreach = glob.glob('/tmp/passk/*/p/*') + glob.glob('/run/passk/*')\n"
                    "try:\n    os.kill(1, 9)\nexcept OSError:\n    pass\nsys.exit(43 if not reach else 42)\n"),))),
]
