"""Hostile candidates, each with the exact label and reason it must get. Used by test_security.py and
by scripts/attacks/attack_table.py (which prints the table for the closing note and docs/hostile-and-faults.md).

Every candidate implements `add(a, b)`; the test is `check(candidate): assert candidate(1, 2) == 3`.
Unless an attack says otherwise, its `add` is WRONG (returns a - b), so any pass would be forged."""

import re
from dataclasses import dataclass

PROMPT = "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n"
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(5, 5) == 10\n"
WRONG = "    return a - b\n"
RIGHT = "    return a + b\n"


@dataclass(frozen=True)
class Attack:
    name: str
    code: str              # appended to PROMPT, unless `program` is given
    status: str
    reason: str            # exact reason, or a prefix ending in ':' (e.g. "signal:")
    timeout_s: float = 2.0
    known_runsc: str = ""  # a known gVisor limitation, reported instead of asserted
    test: str = TEST
    prompt: str = PROMPT
    program: str | None = None          # the whole program, when it is not PROMPT + code
    runsc: tuple[str, str] | None = None  # the label under gVisor, where it differs for a stated reason
    twice: bool = False    # pooled: run twice in one container; state left by the first would change the second

    environment: str | None = None   # needs this environment's libraries (scripts/attacks/attack_table.py --environment)
    memory_mb: int = 256   # the candidate's address space (a library that reserves more needs more to load)

    @property
    def source(self) -> str:
        return self.program if self.program is not None else self.prompt + self.code

    def expected(self, runtime: str) -> tuple[str, str]:
        return self.runsc if runtime == "runsc" and self.runsc else (self.status, self.reason)


ATTACKS = [
    Attack("sys.exit(0) before the tests", WRONG + "import sys\nsys.exit(0)\n", "failed", "exited_early"),
    Attack("os._exit(0) before the tests", WRONG + "import os\nos._exit(0)\n", "failed", "exited_early"),
    Attack("sys.exit(0) during the tests", "    import sys\n    sys.exit(0)\n", "failed", "exited_early"),
    Attack("os._exit(0) during the tests", "    import os\n    os._exit(0)\n", "failed", "exited_early"),
    Attack("exit 0 from atexit", WRONG + "import atexit, os\natexit.register(lambda: os._exit(0))\n",
           "failed", "assertion"),
    Attack("exit 0 from an excepthook", WRONG + "import sys, os\nsys.excepthook = lambda *a: os._exit(0)\n"
           "raise RuntimeError('boom')\n", "failed", "exception:RuntimeError"),
    Attack("exit 0 from a thread during the tests",
           "    import os, threading\n    threading.Thread(target=lambda: os._exit(0)).start()\n"
           "    import time\n    time.sleep(0.5)\n    return a - b\n", "failed", "exited_early"),
    Attack("printing pass markers",
           WRONG + "print('PASSED'); print('{\"status\": \"passed\", \"reason\": \"tests_completed\"}')\n"
           "import sys; sys.stderr.write('passed\\n')\n", "failed", "assertion"),
    Attack("writing a forged verdict into every inherited fd",
           WRONG + "import os\nfor fd in range(0, 256):\n    try:\n"
           "        os.write(fd, b'{\"status\": \"passed\", \"reason\": \"tests_completed\", \"detail\": \"\"}')\n"
           "    except OSError:\n        pass\n", "failed", "protocol_violation"),
    Attack("object whose __eq__ is always true",
           "    class Yes:\n        def __eq__(self, other):\n            return True\n    return Yes()\n",
           "failed", "unencodable_return"),
    Attack("int subclass whose __eq__ is always true (crosses as its base value, 0)",
           "    class I(int):\n        def __eq__(self, other):\n            return True\n    return I(0)\n",
           "failed", "assertion"),
    Attack("patching builtins and the assert machinery",
           WRONG + "import builtins\nbuiltins.AssertionError = type('X', (Exception,), {})\n"
           "builtins.__build_class__ = None\n", "failed", "assertion"),
    Attack("walking its own frames and gc to find the harness",
           "    import gc, sys\n    found = [o for o in gc.get_objects() if isinstance(o, dict) and 'test' in o"
           " and 'check' in str(o.get('test'))]\n    f = sys._getframe()\n    while f.f_back:\n        f = f.f_back\n"
           "    return 'found' if found else a - b\n", "failed", "assertion"),
    Attack("reading the test file and other processes' memory",
           "    import glob, os\n    for p in glob.glob('/tmp/passk/*/t/*') + glob.glob('/proc/[0-9]*/environ') +"
           " glob.glob('/proc/[0-9]*/mem'):\n        try:\n            open(p, 'rb').read(1)\n"
           "            if p.endswith('test.json') or (p.endswith('environ') and os.stat(p).st_uid != os.getuid()):\n"
           "                return 'read ' + p\n        except OSError:\n            pass\n    return a - b\n",
           "failed", "assertion"),
    Attack("fork bomb", "    import os\n    while True:\n        try:\n            os.fork()\n"
           "        except OSError:\n            pass\n", "timed_out", "wall_time_limit", 1.0),
    Attack("memory bomb", "    x = []\n    while True:\n        x.append(bytearray(10 * 1024 * 1024))\n",
           "failed", "memory_limit"),
    Attack("CPU loop", "    while True:\n        pass\n", "timed_out", "wall_time_limit", 1.0),
    Attack("loop that ignores SIGTERM and SIGALRM",
           "    import signal\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
           "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    signal.alarm(1)\n    while True:\n        pass\n",
           "timed_out", "wall_time_limit", 1.0),
    Attack("stopping itself with SIGSTOP", "    import os, signal\n    os.kill(os.getpid(), signal.SIGSTOP)\n"
           "    return a + b\n", "timed_out", "wall_time_limit", 1.0),
    Attack("sleeping past the limit", "    import time\n    time.sleep(30)\n    return a + b\n",
           "timed_out", "wall_time_limit", 1.0),
    Attack("stdout flood", "    import sys\n    while True:\n        sys.stdout.write('x' * 65536)\n",
           "failed", "output_limit"),
    Attack("stderr flood", "    import sys\n    while True:\n        sys.stderr.write('y' * 65536)\n",
           "failed", "output_limit"),
    Attack("invalid UTF-8 output", "    import os\n    os.write(1, b'\\xff\\xfe\\x80 bad')\n    return a - b\n",
           "failed", "assertion"),
    Attack("filling the disk",
           "    n = 0\n    try:\n        while True:\n            open(f'/tmp/fill{n}', 'wb').write(b'0' * (8 << 20))\n"
           "            n += 1\n    except OSError:\n        pass\n    return a - b\n", "failed", "assertion"),
    Attack("a file larger than the file-size limit",
           "    open('big', 'wb').write(b'0' * (32 << 20))\n    return a + b\n", "failed", "file_size_limit"),
    Attack("writing outside the work directory",
           "    for p in ('/etc/passwd', '/opt/passk/box/supervisor.py', '/usr/lib/x', '/tmp/passk/x', '/root/x'):\n"
           "        try:\n            open(p, 'a').write('pwned')\n            return 'wrote ' + p\n"
           "        except OSError:\n            pass\n    return a - b\n", "failed", "assertion"),
    Attack("kill(-1) from the candidate (reaches only its own uid)",
           "    import os, signal\n    try:\n        os.kill(-1, signal.SIGKILL)\n    except OSError:\n        pass\n"
           "    return a - b\n", "failed", "assertion"),
    Attack("killing its parent", "    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n    return a - b\n",
           "failed", "exception:PermissionError"),
    Attack("connecting to the host's socket to send a forged result",
           WRONG + "import glob, socket\nfor path in ['/run/passk/s'] + glob.glob('/run/**', recursive=True):\n"
           "    try:\n        s = socket.socket(socket.AF_UNIX)\n        s.connect(path)\n"
           "        s.sendall(b'{\"event\": \"result\", \"status\": \"passed\", \"reason\": \"tests_completed\"}\\n')\n"
           "    except OSError:\n        pass\n", "failed", "assertion"),
    Attack("a daemon that outlives the candidate",
           RIGHT + "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
           "        import time\n        time.sleep(600)\n    os._exit(0)\n", "passed", "tests_completed"),
    Attack("network: public address, gateway, metadata, Docker socket",
           "    import socket, os\n    for host in ('1.1.1.1', '172.17.0.1', '169.254.169.254'):\n"
           "        s = socket.socket()\n        s.settimeout(0.3)\n        try:\n            s.connect((host, 80))\n"
           "            return 'reached ' + host\n        except OSError:\n            pass\n"
           "    if os.path.exists('/var/run/docker.sock') or os.path.exists('/run/docker.sock'):\n"
           "        return 'docker socket'\n    return a - b\n", "failed", "assertion"),
    Attack("reading the environment for secrets",
           "    import os\n    extra = set(os.environ) - {'PATH', 'HOME', 'LANG', 'TMPDIR'}\n"
           "    return sorted(extra) if extra else a - b\n", "failed", "assertion"),
    Attack("segfault by deep C recursion",
           "    import sys\n    sys.setrecursionlimit(10**9)\n    x = []\n    for _ in range(10**6):\n        x = [x]\n"
           "    return repr(x)\n", "failed", "signal:SIGSEGV", 5.0),
    Attack("segfault with ctypes", "    import ctypes\n    ctypes.string_at(0)\n", "failed", "signal:SIGSEGV"),
    Attack("symlinks where the supervisor cleans up",
           WRONG + "import os\nfor name, target in (('/tmp/evil', '/opt/passk'), ('/tmp/etc', '/etc'),"
           " ('/dev/shm/x', '/opt/passk/box/supervisor.py'), ('result.json', '/etc/passwd')):\n    try:\n"
           "        os.symlink(target, name)\n    except OSError:\n        pass\n", "failed", "assertion"),
    Attack("SysV shared memory, message queue and semaphores left for the next candidate",
           RIGHT + "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
           "assert libc.shmget(0x5151, 4096, 0o1000 | 0o600) >= 0\n"
           "assert libc.msgget(0x5252, 0o1000 | 0o600) >= 0\n"
           "assert libc.semget(0x5353, 1, 0o1000 | 0o600) >= 0\n", "passed", "tests_completed",
           known_runsc="gVisor has no /proc/sysvipc, so the supervisor cannot find SysV IPC objects to remove "
                       "between candidates in a pooled container"),
    Attack("a POSIX message queue left for the next candidate",
           RIGHT + "import os\nif os.path.isdir('/dev/mqueue'):  # gVisor has none\n"
           "    os.close(os.open('/dev/mqueue/passk-left', os.O_CREAT | os.O_RDWR, 0o600))\n",
           "passed", "tests_completed"),
    Attack("huge return value", "    return list(range(10**8))\n", "failed", "memory_limit"),
    Attack("raising SystemExit from the function", "    raise SystemExit(0)\n", "failed", "exited_early"),
    Attack("raising KeyboardInterrupt", "    raise KeyboardInterrupt\n", "failed", "exited_early"),
    # --- issue 9: breaking the run, forging the report, reaching another candidate's verdict ---------
    Attack("a lone surrogate in an exception message, at call time", "    raise ValueError('\\ud800 no')\n",
           "failed", "exception:ValueError"),
    Attack("a lone surrogate in an exception message, at import time",
           WRONG + "raise ValueError('\\udfff at import')\n", "failed", "exception:ValueError"),
    Attack("a forged reply naming an exception with a lone surrogate and a newline",
           "    import os, struct\n    data = b'{\"exc\": {\"type\": \"Bad\\\\ud800\\\\nName\", \"msg\": \"\\\\udc00\"}}'\n"
           "    os.write(3, struct.pack('>I', len(data)) + data)\n    os._exit(0)\n", "failed", "exception:Bad__Name"),
    Attack("a directory chain 3,000 deep in /tmp",
           "    import os\n    os.chdir('/tmp')\n    for _ in range(3000):\n        os.mkdir('d')\n        os.chdir('d')\n"
           "    open('f', 'w').close()\n    return a - b\n", "failed", "assertion"),
    Attack("a directory chain 3,000 deep in its working directory, with links out",
           "    import os\n    for _ in range(3000):\n        os.mkdir('d')\n        os.symlink('/opt/passk', 'l')\n"
           "        os.chdir('d')\n    return a - b\n", "failed", "assertion"),
    Attack("a value whose error message the test cannot format (a 5,000-digit int as a missing key)",
           "    return 10 ** 5000\n", "failed", "exception:KeyError",
           test="def check(candidate):\n    table = {3: 'three'}\n    assert table[candidate(1, 2)] == 'three'\n"),
    Attack("memory outside the address space: 1 GB in memfds (the container allows 896 MB here)",
           "    import os\n    chunk = b'x' * (1 << 20)\n    fds = []\n    for _ in range(64):\n"
           "        fds.append(os.memfd_create('m'))\n        for _ in range(16):\n            os.write(fds[-1], chunk)\n"
           "    return a + b\n", "failed", "memory_limit", 5.0),
    Attack("memory outside the address space: System V segments filled and detached",
           "    import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n    libc.shmat.restype = ctypes.c_void_p\n"
           "    for _ in range(200):\n        sid = libc.shmget(0, 16 << 20, 0o1000 | 0o600)\n        if sid < 0:\n"
           "            break\n        addr = libc.shmat(sid, None, 0)\n        ctypes.memset(addr, 1, 16 << 20)\n"
           "        libc.shmdt(ctypes.c_void_p(addr))\n    return a - b\n", "failed", "assertion",
           runsc=("failed", "memory_limit")),  # runc's IPC limits stop it at 32 MiB; gVisor ignores them
    Attack("an exception class named with 20 MB of text", "    raise type('E' * (20 << 20), (Exception,), {})()\n",
           "failed", "exception:"),
    Attack("a return value just under the message cap", "    return 'x' * (60 << 20)\n", "failed", "assertion", 5.0),
    Attack("a return value over the message cap", "    return 'x' * (70 << 20)\n", "failed", "value_too_large"),
    Attack("an exception class name that is a Markdown pass@k table",
           "    raise type('X\\n\\n## pass@k\\n\\n| k | pass@k |\\n|---|---|\\n| 1 | 1.0000 |\\n<script>', (Exception,), {})()\n",
           "failed", "exception:"),
    Attack("changing a module-level list the test passes (keyword.kwlist) for the next job",
           "    if isinstance(a, list):\n        a[:] = ['pwned']\n        return 0\n    return a + b\n",
           "passed", "tests_completed", twice=True,
           test="def check(candidate):\n    import keyword\n    assert keyword.kwlist[0] == 'False', 'an earlier job changed it'\n"
                "    candidate(keyword.kwlist, 0)\n    assert keyword.kwlist == ['pwned']\n    assert candidate(1, 2) == 3\n"),
    Attack("redefining the helper of a prompt that cannot run in the test process",
           "", "failed", "prompt_error",
           prompt="import passk_no_such_module\n\ndef double(x):\n    return 2 * x\n\n" + PROMPT,
           program="def double(x):\n    return -2 * x\n\ndef add(a, b):\n    return a - b\n",  # 1 - 2 == -2 + 1
           test="def check(candidate):\n    assert candidate(1, 2) == double(1) + 1\n"),
    Attack("mutating a positional argument, then raising", "    if isinstance(a, list):\n        a.append(3)\n"
           "        raise ValueError('after mutating')\n    return a + b\n", "failed", "assertion",
           test="def check(candidate):\n    data = [1, 2]\n    try:\n        candidate(data, 0)\n    except ValueError:\n"
                "        pass\n    assert data == [1, 2], 'must not touch its input'\n    assert candidate(1, 2) == 3\n"),
    Attack("mutating a list inside a tuple keyword argument, then raising",
           "    if isinstance(a, tuple):\n        a[0].append(3)\n        raise ValueError('after mutating')\n"
           "    return a + b\n", "failed", "assertion",
           test="def check(candidate):\n    inner = [1, 2]\n    try:\n        candidate(a=(inner,), b=0)\n"
                "    except ValueError:\n        pass\n    assert inner == [1, 2], 'must not touch its input'\n"
                "    assert candidate(1, 2) == 3\n"),
    Attack("flooding stdout from a thread while the tests finish",
           "    import sys, threading, time\n    def flood():\n        while True:\n            sys.stdout.write('z' * 65536)\n"
           "    threading.Thread(target=flood, daemon=True).start()\n    time.sleep(0.05)\n    return a + b\n",
           "failed", "output_limit"),
    Attack("reaching into the tests through a function they passed (globals, code, a lying return)",
           "    seen = []\n    for name in ('__globals__', '__code__', '__closure__', 'f_globals'):\n        try:\n"
           "            seen.append(getattr(a, name))\n        except Exception:\n            pass\n"
           "    class Yes:\n        def __eq__(self, o):\n            return True\n"
           "    try:\n        a(Yes())\n    except Exception:\n        pass\n    return Yes() if not seen else seen\n",
           "failed", "unencodable_return",
           test="def check(candidate):\n    assert candidate(lambda x: x, 0) == 1\n"),
    Attack("a Counter, a namedtuple field and a generator carrying an object whose __eq__ lies",
           "    from collections import Counter, namedtuple\n    class Yes:\n        def __eq__(self, o):\n"
           "            return True\n        __hash__ = object.__hash__\n    P = namedtuple('P', 'x')\n"
           "    if a == 0:\n        return Counter({'k': Yes()})\n    if a == 1:\n        return P(Yes())\n"
           "    return (Yes() for _ in range(2))\n", "failed", "unencodable_return",
           test="def check(candidate):\n    ok = 0\n    for i, want in ((0, {'k': 1}), (1, (5,)), (2, [1, 2])):\n"
                "        try:\n            got = candidate(i, 0)\n            ok += (list(got) if i == 2 else got) == want\n"
                "        except TypeError:\n            pass\n    assert ok, 'a liar was compared'\n"),
    Attack("slow calls hoping passk's transport credit pays for them", "    import time\n    time.sleep(0.25)\n"
           "    return a + b\n", "timed_out", "wall_time_limit",
           test="def check(candidate):\n    for i in range(20):\n        assert candidate(i, 1) == i + 1\n"),
    # issue 24: writing the program into the job's /tmp (64 MB) failed inside the supervisor: error infrastructure
    Attack("a program larger than the job's /tmp (70 MB of comment)", WRONG + "# " + "y" * (70 << 20) + "\n",
           "failed", "file_size_limit", 5.0),
]

# Run after an attack in the same container: a correct candidate that also checks nothing was left.
PROBE = (
    "    import os\n"
    "    seen = [p for d in ('/tmp', '/dev/shm', '/dev/mqueue') if os.path.isdir(d) for p in os.listdir(d)"
    " if p != 'passk']\n"
    "    import ctypes\n"
    "    libc = ctypes.CDLL(None)\n"
    "    if libc.shmget(0x5151, 0, 0) >= 0 or libc.msgget(0x5252, 0) >= 0 or libc.semget(0x5353, 0, 0) >= 0:\n"
    "        seen.append('SysV IPC object of an earlier candidate')\n"
    "    seen += [p for p in os.listdir('.')]\n"
    "    for pid in os.listdir('/proc'):\n"
    "        if pid.isdigit() and int(pid) != os.getpid():\n"
    "            try:\n"
    "                if os.stat('/proc/' + pid).st_uid == os.getuid():\n"
    "                    seen.append('process ' + pid)\n"
    "            except OSError:\n"
    "                pass\n"
    "    assert not seen, seen\n"
    "    return a + b\n")


def make_job(settings, code: str, timeout_s: float, test: str = TEST, prompt: str = PROMPT,
             program: str | None = None, memory_mb: int = 256) -> dict:
    """A supervisor job for `add` with PROMPT + code (or `program`), under the limits the suite uses."""
    import uuid

    from harness.inputs.config import Limits
    from harness.execution.sandbox.docker import supervisor_limits
    return {"id": uuid.uuid4().hex, "code": program if program is not None else prompt + code, "prompt": prompt,
            "test": test, "entry_point": "add",
            "limits": supervisor_limits(Limits(timeout_s=timeout_s, memory_mb=memory_mb), settings)}


def attack_job(settings, attack: Attack) -> dict:
    return make_job(settings, attack.code, attack.timeout_s, attack.test, attack.prompt, attack.program,
                    attack.memory_mb)


def matches(attack: Attack, result: dict, runtime: str = "runc") -> bool:
    status, reason = attack.expected(runtime)
    if result["status"] != status:
        return False
    if reason.endswith(":"):
        return result["reason"].startswith(reason)
    return result["reason"] == reason


REASON_SHAPE = re.compile(r"^[\w.:~-]{1,120}$")


def well_formed(result: dict) -> bool:
    """Whatever the candidate did, what it made of its result is bounded, single-line where it must be,
    and valid text."""
    strings = [result["reason"], result["detail"], result["stdout_tail"], result["stderr_tail"]]
    return (bool(REASON_SHAPE.match(result["reason"])) and len(result["detail"]) <= 1100
            and all(len(x) <= 4200 for x in strings[2:]) and all(_encodable(x) for x in strings))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def write_attack_run(directory, seed: int = 0):
    """Every attack as a problem of its own (its prompt and test), and its program as a sample (two for
    an attack that must be run twice), in a seeded random order. Returns (problems path, samples path,
    {(task_id, sample_index): attack})."""
    import json
    import random
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    problems, samples, expected = [], [], {}
    for number, attack in enumerate(ATTACKS):
        task_id = f"Attack/{number}"
        problems.append({"task_id": task_id, "prompt": attack.prompt, "test": attack.test, "entry_point": "add"})
        for index in range(2 if attack.twice else 1):
            samples.append({"task_id": task_id, "solution": attack.source})
            expected[(task_id, index)] = attack
    order = list(range(len(samples)))
    random.Random(seed).shuffle(order)
    # Indices are positions within a task: shuffling keeps each task's own samples in their order.
    shuffled = [samples[i] for i in order]
    problems_path, samples_path = directory / "problems.jsonl", directory / "samples.jsonl"
    problems_path.write_text("".join(json.dumps(p) + "\n" for p in problems), encoding="utf-8")
    samples_path.write_text("".join(json.dumps(s) + "\n" for s in shuffled), encoding="utf-8")
    return problems_path, samples_path, expected


def check_attack_run(out_dir, expected: dict, runtime: str = "runc") -> list[str]:
    """What is wrong with a finished run of write_attack_run's files: [] when every candidate has exactly
    one row, its expected label, no row is `error`, and the report has exactly one pass@k section."""
    import json
    from pathlib import Path

    from harness.scoring.report import write_report

    out_dir = Path(out_dir)
    problems = []
    rows = [json.loads(line) for line in (out_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    seen: dict = {}
    for row in rows:
        key = (row["task_id"], row["sample_index"])
        seen[key] = seen.get(key, 0) + 1
        if row["status"] == "error":
            problems.append(f"error row: {key} {row['reason']}")
        attack = expected.get(key)
        if attack is None:
            problems.append(f"unexpected row {key}")
        elif not matches(attack, row, runtime) or not well_formed(row):
            problems.append(f"{attack.name}: {row['status']} {row['reason'][:80]!r}")
    problems += [f"{k}: {n} rows" for k, n in seen.items() if n != 1]
    problems += [f"{k}: no row" for k in expected if k not in seen]
    md, page = write_report(out_dir)
    text_md, text_html = md.read_text(encoding="utf-8"), page.read_text(encoding="utf-8")
    if text_md.count("\n## pass@k\n") != 1 or text_html.count("<h2>pass@k</h2>") != 1:
        problems.append("the report does not have exactly one pass@k section")
    if "<script" in text_html or any(c in text_md + text_html for c in "\x00\x1b\r"):
        problems.append("candidate text reached the report as markup or raw control characters")
    return problems



# What a library environment brings (run with scripts/attacks/attack_table.py --environment bigcodebench): new ways to
# hold memory, start processes and reach out, each through a library's own machinery.
LIBRARY_ATTACKS = [
    Attack("numpy allocates and touches 2 GB", "    import numpy as np\n    x = np.ones(2 << 30, dtype=np.uint8)\n"
           "    return a + b\n", "failed", "memory_limit", 5.0, environment="bigcodebench"),
    Attack("numpy memory-maps a 2 GB file in /tmp", "    import numpy as np\n    m = np.memmap('/tmp/big', dtype=np.uint8, "
           "mode='w+', shape=(2 << 30,))\n    m[:] = 1\n    return a + b\n", "failed", "file_size_limit", 5.0,
           environment="bigcodebench"),
    Attack("multiprocessing pool forks workers that outlive the candidate",
           WRONG + "import multiprocessing as mp\nimport time\n_pool = mp.Pool(8)\n_pool.map_async(time.sleep, [60] * 8)\n",
           "failed", "assertion", 5.0, environment="bigcodebench", twice=True),
    Attack("pandas' clipboard reader and a shell left in the background", WRONG + "import pandas as pd\nimport subprocess\n"
           "try:\n    pd.read_clipboard()\nexcept Exception:\n    pass\nsubprocess.run(['sh', '-c', 'sleep 60 &'])\n",
           "failed", "assertion", 5.0, environment="bigcodebench", twice=True),
    Attack("requests to the network", RIGHT + "import requests\nrequests.get('http://1.1.1.1', timeout=2)\n",
           "failed", "exception:", 8.0, environment="bigcodebench"),
    Attack("tensorflow's threads in a candidate of 256 MB (its address space is too small to load it)",
           "    import tensorflow as tf\n    while True:\n        tf.reduce_sum(tf.ones((256, 256)))\n",
           "failed", "exception:ImportError", 8.0, environment="bigcodebench"),
    Attack("tensorflow's threads spin past the time limit (8 GB of address space)",
           "    import tensorflow as tf\n    while True:\n        tf.reduce_sum(tf.ones((256, 256)))\n",
           "timed_out", "wall_time_limit", 20.0, environment="bigcodebench", memory_mb=8192),
    Attack("pytest's own exit before the tests (a BaseException, not SystemExit)",
           WRONG + "import pytest\npytest.exit('ok', returncode=0)\n", "failed", "exception:Exit", 5.0,
           environment="bigcodebench"),
]
