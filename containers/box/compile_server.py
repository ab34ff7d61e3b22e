"""A language's compile server (TypeScript's tsc, containers/languages/typescript/tsc_server.js): one
long-lived process per container that compiles one program per request, so that what every compile
would read and parse again (a standard library's declarations) is read once. It runs as its own user
(COMPILER_UID: no candidate can signal, trace or write to it), talks only to the supervisor over
pipes (no socket or file a candidate can reach), and never runs what it compiles. A request that runs
out of its time kills it; the next request starts another.

Protocol: a JSON line {"ready": true, ...} when it is up; then per request one JSON line in and one out
(the server's own fields: exit_code, output, files)."""

import json
import os
import select
import signal
import time

from .layout import CANDIDATE_ENV, COMPILER_UID, WORK_ROOT

MAX_REPLY = 64 << 20
WARM_UP_S = 120.0


class ServerGone(Exception):
    """The server ended (or sent garbage) while compiling: what it printed last is in `tail`."""

    def __init__(self, why, tail=b""):
        super().__init__(why)
        self.tail = tail


def resident_kb(pid):
    """A process's resident memory (VmRSS), in KB; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def cpu_s(pid):
    """A process's CPU time so far (user + system, its own and its reaped children's), in seconds; None
    when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class CompileServer:
    """`keep_kb`: what the server may hold between jobs. A compile that leaves it holding more (a huge
    program's syntax tree, a heap the runtime does not give back) ends it, and the next job starts
    another: nothing of one candidate's compile stays in the container's memory for the next."""

    def __init__(self, argv, warm_up=None, keep_kb=None):
        self.argv = list(argv)
        self.pid = None
        self.warm_up = warm_up
        self.keep_kb = keep_kb
        self.replaced = 0
        self.last_cpu_s = None   # what the last compile cost the server, in CPU seconds (None: it failed)

    def _spawn(self):
        # "{workdir}" in its argv: a directory of its own, which no candidate can read, for a compiler that
        # needs files (javac); under the supervisor's work root, which clean-up between jobs leaves alone
        workdir = os.path.join(WORK_ROOT, "compiler")
        if any("{workdir}" in a for a in self.argv) and not os.path.isdir(workdir):
            os.mkdir(workdir, 0o700)
            os.chown(workdir, COMPILER_UID, COMPILER_UID)
        argv = [a.replace("{workdir}", workdir) for a in self.argv]
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.dup2(in_r, 0)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                os.closerange(3, 4096)
                os.setgroups([])
                os.setgid(COMPILER_UID)
                os.setuid(COMPILER_UID)
                os.chdir("/")
                os.execvpe(argv[0], argv, {**CANDIDATE_ENV, "HOME": "/nonexistent"})
            finally:
                os._exit(127)
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        self.pid, self.stdin, self.stdout, self.stderr = pid, in_w, out_r, err_r
        os.set_blocking(err_r, False)
        self.buf = []   # what came after the last full line, in chunks (joined once: linear in the reply)
        deadline = time.monotonic() + WARM_UP_S
        hello = self._line(deadline)
        if not hello.get("ready"):
            raise ServerGone("the compile server did not say it was ready")
        self.version = hello.get("version")
        if self.warm_up is not None:   # the first compile's parse and JIT are the server's cost, not a job's
            self._ask(self.warm_up, deadline)

    def _line(self, deadline):
        size = sum(len(c) for c in self.buf)
        while not self.buf or b"\n" not in self.buf[-1]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the compile server did not answer in time")
            if not select.select([self.stdout], [], [], left)[0]:
                continue
            chunk = os.read(self.stdout, 1 << 20)
            if not chunk:
                raise ServerGone("the compile server ended", self._stderr())
            self.buf.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY:
                raise ServerGone("the compile server's answer is too large")
        data = b"".join(self.buf)
        line, rest = data.split(b"\n", 1)
        self.buf = [rest] if rest else []
        try:
            msg = json.loads(line)
        except ValueError:
            raise ServerGone("the compile server sent garbage") from None
        if not isinstance(msg, dict):
            raise ServerGone("the compile server sent garbage")
        return msg

    def _stderr(self):
        try:
            return os.read(self.stderr, 65536)
        except OSError:
            return b""

    def _ask(self, request, deadline):
        data = (json.dumps(request) + "\n").encode("utf-8", "surrogatepass")
        view = memoryview(data)
        while view:
            if not select.select([], [self.stdin], [], max(0.0, deadline - time.monotonic()))[1]:
                raise TimeoutError("the compile server did not take the program in time")
            try:
                n = os.write(self.stdin, view[:65536])
            except BrokenPipeError:
                raise ServerGone("the compile server ended", self._stderr()) from None
            view = view[n:]
        return self._line(deadline)

    def compile(self, request, timeout_s):
        """The server's reply to one request. TimeoutError (the server is killed) or ServerGone."""
        if self.pid is None:
            self._spawn()
        before = cpu_s(self.pid)
        self.last_cpu_s = None
        try:
            reply = self._ask(request, time.monotonic() + timeout_s)
        except (TimeoutError, ServerGone):
            self.stop()
            raise
        after = cpu_s(self.pid)
        if before is not None and after is not None:
            self.last_cpu_s = round(after - before, 6)
        held = resident_kb(self.pid)
        if self.keep_kb is not None and (held is None or held > self.keep_kb):
            self.stop()
            self.replaced += 1
        return reply

    def stop(self):
        if self.pid is None:
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        for fd in (self.stdin, self.stdout, self.stderr):
            os.close(fd)
        self.pid = None
