"""Hostile candidates, each with the exact label and reason it must get. Used by test_security.py and
by scripts/attack_table.py (which prints the table for the closing note and the README).

Every candidate implements `add(a, b)`; the test is `check(candidate): assert candidate(1, 2) == 3`.
Unless an attack says otherwise, its `add` is WRONG (returns a - b), so any pass would be forged."""

from dataclasses import dataclass

PROMPT = "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n"
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(5, 5) == 10\n"
WRONG = "    return a - b\n"
RIGHT = "    return a + b\n"


@dataclass(frozen=True)
class Attack:
    name: str
    code: str              # appended to PROMPT
    status: str
    reason: str            # exact reason, or a prefix ending in ':' (e.g. "signal:")
    timeout_s: float = 2.0
    known_runsc: str = ""  # a known gVisor limitation, reported instead of asserted


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
    Attack("int subclass whose __eq__ is always true",
           "    class I(int):\n        def __eq__(self, other):\n            return True\n    return I(0)\n",
           "failed", "unencodable_return"),
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
           "    for p in ('/etc/passwd', '/opt/passk/supervisor.py', '/usr/lib/x', '/tmp/passk/x', '/root/x'):\n"
           "        try:\n            open(p, 'a').write('pwned')\n            return 'wrote ' + p\n"
           "        except OSError:\n            pass\n    return a - b\n", "failed", "assertion"),
    Attack("kill(-1) from the candidate (reaches only its own uid)",
           "    import os, signal\n    try:\n        os.kill(-1, signal.SIGKILL)\n    except OSError:\n        pass\n"
           "    return a - b\n", "failed", "assertion"),
    Attack("killing its parent", "    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n    return a - b\n",
           "failed", "exception:PermissionError"),
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
           "    return repr(x)\n", "failed", "signal:SIGSEGV"),
    Attack("segfault with ctypes", "    import ctypes\n    ctypes.string_at(0)\n", "failed", "signal:SIGSEGV"),
    Attack("symlinks where the supervisor cleans up",
           WRONG + "import os\nfor name, target in (('/tmp/evil', '/opt/passk'), ('/tmp/etc', '/etc'),"
           " ('/dev/shm/x', '/opt/passk/supervisor.py'), ('result.json', '/etc/passwd')):\n    try:\n"
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


def make_job(settings, code: str, timeout_s: float) -> dict:
    """A supervisor job for `add` with PROMPT + code, under the limits the suite uses."""
    import uuid

    from harness.config import Limits
    from harness.sandbox.docker import supervisor_limits
    return {"id": uuid.uuid4().hex, "code": PROMPT + code, "prompt": PROMPT, "test": TEST, "entry_point": "add",
            "limits": supervisor_limits(Limits(timeout_s=timeout_s, memory_mb=256), settings)}


def matches(attack: Attack, result: dict) -> bool:
    if result["status"] != attack.status:
        return False
    if attack.reason.endswith(":") and ":" not in attack.reason[:-1]:
        return result["reason"].startswith(attack.reason)
    return result["reason"] == attack.reason
