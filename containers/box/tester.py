"""The tester (uid 10002): a warm zygote that forks test workers; a worker runs jobs until one may have left state."""

import builtins
import os
import resource
import signal
import socket
import sys
import time

from .channels import differential   # loaded in the zygote: its workers judge EvalPlus's inputs with it
from .channels.base import Verdict, _describe
from .channels.proxy import CLOCK, TestNamespace, _compiled, run_test
from .framing import recv_with_fds, send_msg, send_with_fds
from .protocol import TEST_TRANSPORT_MB
from .layout import PRELOAD, TESTER_UID
from .procs import _signal_name
from .text import clean_text
from .warmup import TESTER_WARM_UP_ROUNDS, warm_up_tests


class StateProbe:
    """What a job could leave behind in the test process that a later job would see. Taken when a test
    worker starts (a fresh fork of the zygote) and compared after every job; anything changed, the worker
    answers and ends, and the next job gets a fresh fork. The candidate's only way into the test's
    objects, copy-back, retires the worker unless every object it changed was made in this worker
    (TestNamespace.copied_back, made_in_this_worker). What the test code itself
    does is checked as far as it is cheap to see: imports, the recursion limit, cwd, umask, environment,
    sys.path, the standard streams, builtins, rebinding in modules it imported, threads, child processes,
    alarms and signal handlers. The global random generator is put back as it was after every job (reset),
    so each job's tests draw the same numbers whatever ran before them."""

    SIGNALS = (signal.SIGALRM, signal.SIGTERM, signal.SIGINT)

    def __init__(self, modules):
        import random
        self.modules = modules  # {name: (module, {attribute: id(value)})} as the zygote had them
        self.random = random
        self.random_state = random.getstate()
        self.builtins = dict(vars(builtins))
        self.state = self.take()

    def take(self):
        umask = os.umask(0o022)
        os.umask(umask)
        return (len(sys.modules), sys.getrecursionlimit(), os.getcwd(), umask, dict(os.environ._data),
                list(sys.path), id(sys.stdin), id(sys.stdout), id(sys.stderr),
                tuple(signal.getsignal(s) for s in self.SIGNALS), signal.getitimer(signal.ITIMER_REAL))

    def changed(self, namespace) -> str:
        """Why this worker should not run another job ('' when nothing it can see changed)."""
        if self.take() != self.state or vars(builtins) != self.builtins:
            return "interpreter state"
        if _thread_count():
            return "threads"
        try:
            os.waitpid(-1, os.WNOHANG)
            return "child processes"
        except ChildProcessError:
            pass
        for value in list(namespace.values()):
            if type(value) is type(os):  # a module the test imported: rebound attributes?
                known = self.modules.get(value.__name__)
                if known is None or known[0] is not value:
                    return "module"
                attrs = vars(value)
                if len(attrs) != len(known[1]) or any(known[1].get(k) != id(v) for k, v in attrs.items()):
                    return "module attributes"
        return ""

    def reset(self):
        self.random.setstate(self.random_state)


def _thread_count():
    import _thread
    return _thread._count()


def _module_fingerprints():
    return {name: (module, {k: id(v) for k, v in vars(module).items()})
            for name, module in list(sys.modules.items()) if module is not None}


WORKER_JOBS = 2000  # a test worker is replaced after this many jobs even when nothing changed


def test_worker(sock, modules, cache):
    """Run jobs from the supervisor one at a time, each in a fresh namespace, until one may have left
    something behind (StateProbe) or WORKER_JOBS have run; then end, with everything the tests started."""
    os.setpgid(0, 0)
    probe = StateProbe(modules)
    retire = ""
    jobs = 0
    try:
        while not retire:
            got = recv_with_fds(sock)
            if got is None:
                return
            fds, spec = got
            jobs += 1
            chan = socket.socket(fileno=fds[0])
            chan.settimeout(None)
            cpu0 = time.process_time()
            CLOCK.reset(sock)   # transport credit goes to the supervisor as it grows
            job = {}
            try:
                run_test(chan, spec, _compiled(cache, spec), job, differential.verdict)
                verdict = {"status": "error", "reason": "tester_fault", "detail": "run_test returned"}
            except Verdict as v:
                verdict = v.verdict
            except BaseException as e:  # a fault of the tester itself, not of the candidate
                verdict = {"status": "error", "reason": "tester_fault", "detail": clean_text(_describe(e), 500)}
            finally:
                chan.close()
            verdict["test_cpu_s"] = round(time.process_time() - cpu0, 6)
            verdict["transport_s"] = round(CLOCK.total, 6)
            CLOCK.reset(None)
            namespace = job.get("namespace") or TestNamespace(None)
            if verdict["status"] == "error" or verdict["reason"] == "memory_limit":
                retire = "fault"
            elif namespace.copied_back:
                retire = "copy-back"
            elif jobs >= WORKER_JOBS:
                retire = "age"
            else:
                retire = probe.changed(namespace)
            probe.reset()
            namespace.clear()
            verdict["retire"] = retire
            send_msg(sock, verdict)
    finally:
        try:
            if os.getpgid(0) == os.getpid():  # only ever its own group, never the zygote's
                os.killpg(0, signal.SIGKILL)
        finally:
            os._exit(0)


def tester_main(memory_mb):
    """The tester zygote (uid 10002): a warm interpreter that never runs a job itself. On request it forks
    a test worker (a socket to it goes to the supervisor with its pid), and reaps it, killing it first if
    asked, saying how it ended."""
    import gc
    import importlib
    mem = (memory_mb + TEST_TRANSPORT_MB) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setgroups([])
    os.setgid(TESTER_UID)
    os.setuid(TESTER_UID)
    os.chdir("/")
    for name in PRELOAD:  # so that a test's usual imports are no change of state (StateProbe)
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    ctl = socket.socket(fileno=3)
    for _ in range(TESTER_WARM_UP_ROUNDS):
        warm_up_tests({})
    gc.collect()
    gc.freeze()
    modules = _module_fingerprints()
    cache = {}  # what the supervisor taught (op "learn"): inherited by every worker forked afterwards
    while True:
        got = recv_with_fds(ctl)
        if got is None:
            return
        _, msg = got
        if msg.get("op") == "fork":
            ours, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                ctl.close()
                theirs.close()
                test_worker(ours, modules, cache)
            ours.close()
            try:
                os.setpgid(pid, pid)  # as the worker does: either order, the group exists before we may kill it
            except OSError:
                pass
            send_with_fds(ctl, [theirs.fileno()], {"pid": pid})
            theirs.close()
        elif msg.get("op") == "learn":  # compile a problem's code once, for every worker forked after
            _compiled(cache, msg)
        elif msg.get("op") == "reap":
            send_with_fds(ctl, [], {"exited": _end_worker(msg["pid"], bool(msg.get("kill")))})


def _end_worker(pid, kill):
    """Reap a test worker (killing it first when asked) and whatever its tests started, and say how it
    ended: `running` when it was still running when it was killed."""
    running = False
    if kill:
        got, status = os.waitpid(pid, os.WNOHANG)
        running = got == 0
        if running:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    else:
        _, status = os.waitpid(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)  # its group: whatever the tests started and left
    except OSError:
        pass
    if os.WIFSIGNALED(status):
        return {"running": running, "signal": _signal_name(os.WTERMSIG(status))}
    return {"running": running, "exit_code": os.WEXITSTATUS(status)}
