"""The supervisor (root): talks to the host, holds job data, never forks a candidate."""

import base64
import json
import math
import os
import platform
import signal
import socket
import sys
import time

from .channels.base import _describe
from .cleanup import remove_tree, scrub
from .files import ProgramTooLarge, _private_dir, _write_file
from .judge import run_io
from .project import run_project
from .repo import run_repo
from .labels import _marked, _native_label
from .build import compile_argv
from .compile_server import CompileServer, ServerGone
from .framing import Unencodable, recv_msg, recv_with_fds, send_with_fds
from .layout import TOOLCHAIN_FILE, CANDIDATE_UID, ENV, START, WORK_ROOT
from .protocol import MARKER_PLACEHOLDER, CHANNELS, HOST_SOCKET_ENV, TESTER_MEMORY_ENV, TRANSPORT_CAP, VERSION
from .text import clean_text
from .verdicts import stall_detail, stalled
from .watch import Watcher


class EmittedTooLarge(Exception):
    """What a compile server emitted cannot be written as the program's files: a file over the job's file
    size limit (what the command's own write would have hit), or more than the job's space holds."""


def _write_emitted(p_dir, reply, file_size_bytes=None):
    """What a compile server emitted (`files`: text, `files_b64`: bytes), into the job's directory as the
    candidate's files; a relative name's directories (a Java package's) are made as the candidate's. Each
    file's size is checked against the job's file size limit before anything is written; a write the
    job's space cannot hold raises EmittedTooLarge too (the compile's failure, not the harness's)."""
    out = []
    for key, decode in (("files", lambda v: v.encode("utf-8", "surrogatepass")), ("files_b64", base64.b64decode)):
        files = reply.get(key)
        for name, value in (files.items() if isinstance(files, dict) else ()):
            parts = name.split("/") if isinstance(name, str) else []
            if not parts or any(not part or part.startswith(".") for part in parts) or not isinstance(value, str):
                raise RuntimeError("the compile server named a bad file")
            data = decode(value)
            if file_size_bytes is not None and len(data) > file_size_bytes:
                raise EmittedTooLarge(f"the compiler's output {clean_text(name, 80)!r} is {len(data)} bytes, "
                                      f"over the file size limit of {file_size_bytes}")
            out.append((parts, data))
    for parts, data in out:
        where = p_dir
        for part in parts[:-1]:
            where = os.path.join(where, part)
            if not os.path.isdir(where):
                _private_dir(where, CANDIDATE_UID)
        try:
            _write_file(os.path.join(where, parts[-1]), data, CANDIDATE_UID)
        except ProgramTooLarge as e:
            raise EmittedTooLarge(f"the compiler's output ({sum(len(d) for _, d in out)} bytes) does not fit "
                                  f"in the job's space: {e.why}") from None


TESTER_ANSWER_S = 10.0  # the zygote forks or reaps a test worker within this, or the tester is replaced
CLEANUP_BUDGET_S = 2.0    # removing what a job left; a container not cleaned by then is replaced
MAX_CLEANUP_S = 1.0


def _start_child(role, *args):
    """fork + exec a fresh interpreter for `role`, connected by a socket on its fd 3."""
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(theirs.fileno(), 3)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            if role == "tester":  # what test code prints is not the candidate's output
                os.dup2(devnull, 2)
            os.closerange(4, 4096)
            os.execve(sys.executable, [sys.executable, "-s", "-B", START, role, *map(str, args)], ENV)
        finally:
            os._exit(70)
    theirs.close()
    return pid, mine


class Supervisor:
    def __init__(self):
        os.makedirs(WORK_ROOT, mode=0o755, exist_ok=True)
        os.chmod(WORK_ROOT, 0o755)
        self.count = 0
        self.fs_pid, self.fs = _start_child("forkserver")
        self.watcher = Watcher(self.fs)
        self.zygote_pid = self.zygote = None
        self.zygote_memory = None
        self.worker = None  # (pid, socket) of the test worker in use
        self.taught = set()  # problems the zygote has compiled
        self.servers = {}    # a language's compile servers, by argv
        memory = os.environ.pop(TESTER_MEMORY_ENV, "")
        if memory.isdigit():   # the host says the jobs' memory limit: the tester starts now, not at the first job
            self._worker(max(int(memory), 64))

    def _zygote(self, memory_mb):
        if self.zygote is not None and self.zygote_memory != memory_mb:
            self._stop_tester()
        if self.zygote is None:
            self.zygote_pid, self.zygote = _start_child("tester", memory_mb)
            self.zygote_memory = memory_mb
            self.taught = set()
        return self.zygote

    def _ask_zygote(self, msg):
        zygote = self.zygote
        send_with_fds(zygote, [], msg)
        zygote.settimeout(TESTER_ANSWER_S)
        try:
            got = recv_with_fds(zygote)
        finally:
            zygote.settimeout(None)
        if got is None:
            raise RuntimeError("the tester did not answer")
        return got

    def _worker(self, memory_mb):
        """The test worker for the next job: the one in use, or a fresh fork of the zygote."""
        self._zygote(memory_mb)
        if self.worker is None:
            fds, msg = self._ask_zygote({"op": "fork"})
            self.worker = (int(msg["pid"]), socket.socket(fileno=fds[0]))
        return self.worker[1]

    def _end_worker(self, kill):
        """Retire the test worker in use: reaped by the zygote (killed first when `kill`). How it ended."""
        pid, sock = self.worker
        self.worker = None
        sock.close()
        try:
            return self._ask_zygote({"op": "reap", "pid": pid, "kill": kill})[1].get("exited")
        except (OSError, EOFError, ValueError, Unencodable, RuntimeError):
            self._stop_tester()
            return None

    def _stop_tester(self):
        if self.worker is not None:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.worker[0], signal.SIGKILL)
                except OSError:
                    pass
            self.worker[1].close()
            self.worker = None
        if self.zygote is None:
            return
        try:
            os.kill(self.zygote_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.zygote_pid, 0)
        self.zygote.close()
        self.zygote = self.zygote_pid = None

    def run_io(self, job):
        """The io channel (judge.py): the program, in any language, once per test; its output judged by the
        problem's rule or checker, which no process of the candidate's reaches."""
        return run_io(self, job)

    def _job_dir(self, job):
        """A fresh directory for the job, with the candidate's private working directory holding its program."""
        jobdir = self._new_jobdir()
        p_dir = os.path.join(jobdir, "p")
        _private_dir(p_dir, CANDIDATE_UID)
        _write_file(os.path.join(p_dir, "program.py"), job["code"], CANDIDATE_UID)
        return jobdir, p_dir

    def run_native(self, job):
        """A program in a language other than Python (the in_process channel): its files are written, then
        each step runs as the candidate (a compile, then the program), each with its own limits. The test
        code is compiled into the program; it passes only when it exits 0 *and* the end of the tests wrote
        this job's nonce on fd 3 (a pipe only the supervisor reads): an early exit(0) writes no nonce."""
        build = job["build"]
        nonce = os.urandom(16).hex()
        jobdir = self._new_jobdir()
        p_dir = os.path.join(jobdir, "p")
        _private_dir(p_dir, CANDIDATE_UID)
        source = job["code"] + "\n" + job["test"].replace(MARKER_PLACEHOLDER, nonce)
        _write_file(os.path.join(p_dir, build["source"]), source, CANDIDATE_UID)
        for name, text in (build.get("files") or {}).items():
            if "/" in name or name.startswith("."):
                raise ValueError(f"bad file name {name!r}")
            _write_file(os.path.join(p_dir, name), text.replace(MARKER_PLACEHOLDER, nonce), CANDIDATE_UID)
        env = {str(k): str(v).replace("{dir}", p_dir) for k, v in (build.get("env") or {}).items()}
        detail = {"language": clean_text(build.get("language", ""), 40)}
        report = None
        clean = True
        steps = build["steps"]
        for index, step in enumerate(steps):
            limits = step.get("limits") or job["limits"]
            if step.get("server"):
                report = self._compile_by_server(step["server"], build["source"], source, p_dir, limits)
                name = step.get("step", f"step{index}")
                detail[f"{name}_s"] = round(max(0.0, report["end"] - report["start"]), 3)
                detail[f"{name}_cpu_s"] = report["cpu_s"]
                detail["compiled_by"] = "server"
                status, reason, text = _native_label(report, limits, name, False, False, build.get("language"))
                if status != "passed":
                    break
                continue
            mark_r, mark_w = os.pipe()
            # The candidate's own (a pipe's owner is its maker): the runtimes that cannot write to a bare
            # descriptor (Java) open /proc/self/fd/3, which checks the pipe's owner and mode.
            try:
                os.fchown(mark_w, CANDIDATE_UID, CANDIDATE_UID)
            except PermissionError:
                # gVisor refuses to chown a pipe: a FIFO of the candidate's in its directory instead
                os.close(mark_r)
                os.close(mark_w)
                fifo = os.path.join(p_dir, f".passk-marker-{index}")
                os.mkfifo(fifo, 0o600)
                os.chown(fifo, CANDIDATE_UID, CANDIDATE_UID)
                mark_r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
                mark_w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            argv = list(step["argv"])
            if step.get("pch"):
                argv, used = compile_argv(argv, step["pch"], source)
                detail["precompiled_header"] = "used" if used else "not_used"
            try:
                report = self.watcher.run(p_dir, limits, "exec", program=(argv, env),
                                          marker_fd=mark_w)[0]
                os.set_blocking(mark_r, False)
                try:
                    marked = os.read(mark_r, 4096)
                except (BlockingIOError, OSError):
                    marked = b""
            finally:
                os.close(mark_r)
            name = step.get("step", f"step{index}")
            detail[f"{name}_s"] = round(max(0.0, report["end"] - report["start"]), 3)
            detail[f"{name}_cpu_s"] = report["cpu_s"]
            detail[f"{name}_memory_kb"] = max(report.get("job_memory_peak_kb") or 0, report["peak_memory_kb"] or 0)
            last = index == len(steps) - 1
            status, reason, text = _native_label(report, limits, name, last, _marked(marked, nonce),
                                                 build.get("language"), step.get("rule"))
            # A step that left something (a compiler's stray process, memory under gVisor) does not end the
            # job: what it left was killed, the program still runs, and the container is replaced after.
            clean = clean and bool(report["clean"])
            if status != "passed" or last:
                break
        detail["steps_run"] = index + 1
        result = {"status": status, "reason": reason, "detail": clean_text(text), "wall_s":
                  round(max(0.0, report["end"] - report["start"]), 6), "cpu_s": report["cpu_s"], "test_cpu_s": None,
                  "peak_memory_kb": max(report.get("job_memory_peak_kb") or 0, report["peak_memory_kb"] or 0),
                  "exit_code": report["exit_code"], "signal": report["signal"],
                  "stdout_tail": report["stdout_tail"].decode("utf-8", errors="replace"),
                  "stderr_tail": report["stderr_tail"].decode("utf-8", errors="replace"),
                  "stdout_bytes": report["stdout_bytes"], "stderr_bytes": report["stderr_bytes"],
                  "verdict_channel": "in_process", "channel_detail": detail}
        return self._finish(result, dict(report, clean=clean and bool(report["clean"])), jobdir)

    def _compile_by_server(self, server, file_name, source, p_dir, limits):
        """A compile step done by the language's compile server: the program's text goes to it, what it
        emitted is written into the job's directory as the candidate's; a report as a run's."""
        key = tuple(server["argv"])
        srv = self.servers.get(key)
        if srv is None:
            srv = self.servers[key] = CompileServer(server["argv"], server.get("warm_up"), server.get("keep_kb"))
        start = time.monotonic()
        timed_out, died, reply = False, None, {}
        request = {**server.get("request", {}), "file": file_name}
        if server.get("bytes"):   # the program's exact bytes, as the command would read them from its file
            request["source_b64"] = base64.b64encode(source.encode("utf-8", "surrogatepass")).decode()
        else:
            request["source"] = source
        try:
            reply = srv.compile(request, limits["timeout_s"])
        except TimeoutError:
            timed_out = True
        except ServerGone as e:
            died = e
        end = time.monotonic()
        output = str(reply.get("output", "")).encode("utf-8", "replace")
        if died is not None:
            output = b"the compiler crashed: " + died.tail[-1500:]
        code = reply.get("exit_code") if isinstance(reply.get("exit_code"), int) else (None if timed_out else 70)
        signal_name = None
        if code == 0:
            try:
                _write_emitted(p_dir, reply, limits.get("file_size_bytes"))
            except EmittedTooLarge as e:   # as the command's own write would have ended: SIGXFSZ
                code, signal_name, output = None, "SIGXFSZ", str(e).encode()
        oom = died is not None and (b"heap out of memory" in died.tail or b"OutOfMemoryError" in died.tail)
        return {"start": start, "end": end, "timed_out": timed_out, "output_exceeded": False,
                "memory_exceeded": oom, "memory_pressure": False, "exit_code": code, "signal": signal_name,
                "cpu_s": srv.last_cpu_s, "peak_memory_kb": None, "job_memory_peak_kb": None,
                "stdout_bytes": len(output), "stderr_bytes": 0, "stdout_tail": output[-2048:], "stderr_tail": b"",
                "clean": True, "cleanup_s": 0.0}

    def _new_jobdir(self):
        self.count += 1
        jobdir = os.path.join(WORK_ROOT, f"j{self.count}")
        os.mkdir(jobdir, 0o755)
        os.chmod(jobdir, 0o755)
        return jobdir

    def run(self, job):
        try:
            return self._run(job)
        except ProgramTooLarge as e:   # nothing ran: what was written is removed, the container goes on
            report = {"clean": True, "cleanup_s": 0.0, "memory_pressure": False}
            result = {"status": "failed", "reason": "file_size_limit", "detail": clean_text(str(e)), "wall_s": 0.0,
                      "cpu_s": None, "test_cpu_s": None, "peak_memory_kb": None, "exit_code": None, "signal": None,
                      "stdout_tail": "", "stderr_tail": "", "stdout_bytes": 0, "stderr_bytes": 0,
                      "verdict_channel": "in_process" if job.get("build") else job.get("channel", "proxy"),
                      "channel_detail": {"not_run": "the program does not fit in the job's space"}}
            return self._finish(result, report, os.path.join(WORK_ROOT, f"j{self.count}"))

    def _run(self, job):
        channel = job.get("channel", "proxy")
        if channel not in CHANNELS:
            raise ValueError(f"unknown channel {channel!r}")
        if channel == "io":
            return self.run_io(job)
        if channel == "repo":
            return run_repo(self, job)
        if channel == "project":
            return run_project(self, job)
        if job.get("build"):
            return self.run_native(job)
        if job.get("runner") == "evalplus":
            return self.run_evalplus(job)
        return self._run_proxy(job, channel)

    def run_evalplus(self, job):
        """EvalPlus's differential tests (proxy): its two checks, base then plus inputs, each in a new
        candidate process with its own wall-clock limit (EvalPlus's per-check cap), the per-input limits
        judged by the test process (channels/differential.py). Plus runs only after base passed: the
        row's status is the plus verdict (both passed), base's is kept as `base`. A phase whose batch
        could not prove its inputs in time is run again one input per call."""
        ev = job["evalplus"]
        phases, results = [], []
        for phase in ev["phases"]:
            if not phase["inputs"]:
                continue
            cap = float(phase["cap_s"])
            limits = dict(job["limits"], timeout_s=cap, cpu_time_s=int(math.ceil(cap)) + 1)
            spec = {"mode": ev["mode"], "phase": phase["phase"], "inputs": phase["inputs"],
                    "expected": phase.get("expected"), "limits": phase.get("limits"), "oracle": ev["oracle"],
                    "dataset": ev["dataset"], "atol": ev["atol"], "batch": True}
            result = self._run_proxy(job, "proxy", spec, limits)
            if result["reason"] == "rerun_unbatched":
                result = self._run_proxy(job, "proxy", dict(spec, batch=False), limits)
                result["channel_detail"]["rerun"] = phase["phase"]
            phases.append(phase["phase"])
            results.append(result)
            if result["status"] != "passed":
                break
        if not results:
            return {"status": "error", "reason": "problem_error", "detail": "an EvalPlus task with no inputs",
                    "verdict_channel": "proxy", "channel_detail": {"runner": "evalplus"}, "healthy": True}
        last = results[-1]
        out = dict(last)
        for key in ("wall_s", "cpu_s", "test_cpu_s"):
            values = [r.get(key) for r in results if isinstance(r.get(key), (int, float))]
            out[key] = round(sum(values), 6) if values else None
        out["peak_memory_kb"] = max((r.get("peak_memory_kb") or 0 for r in results), default=0)
        out["healthy"] = all(r.get("healthy") for r in results)
        out["leftover_paths"] = [p for r in results for p in r.get("leftover_paths") or []][:20]
        detail = {"runner": "evalplus", "phases_run": ",".join(phases)}
        for r in results:
            detail.update(r.get("channel_detail") or {})
        base = results[0] if phases[0] == "base" else None
        out["base_status"] = base["status"] if base is not None else "passed"   # no base inputs: nothing failed
        if ev["mode"] == "truth":
            out["truth"] = {ph: r.get("truth") for ph, r in zip(phases, results)}
        out["channel_detail"] = detail
        out["verdict_channel"] = "proxy"
        return out

    def _run_proxy(self, job, channel, evalplus=None, limits=None):
        jobdir, p_dir = self._job_dir(job)
        limits = limits or job["limits"]
        verdicts = self._worker(max(limits["memory_mb"], 64))
        spec = {"prompt": job.get("prompt", ""), "test": job["test"], "entry_point": job.get("entry_point"),
                "runner": job.get("runner", "check"), "channel": channel}
        if evalplus is not None:
            spec["evalplus"] = evalplus
        if channel == "in_process":  # the tests go to the candidate; its report must carry this job's nonce
            spec["nonce"] = os.urandom(16).hex()
            _write_file(os.path.join(p_dir, "inproc.json"),
                        json.dumps({"test": job["test"], "runner": spec["runner"], "entry_point": spec["entry_point"],
                                    "main": bool(job.get("main")), "nonce": spec["nonce"]}), CANDIDATE_UID)
        key = (spec["prompt"], spec["test"])
        if key not in self.taught and len(self.taught) < 512:
            send_with_fds(self.zygote, [], {"op": "learn", "prompt": spec["prompt"], "test": spec["test"]})  # no answer: workers forked later inherit it
            self.taught.add(key)
        for_cand, for_test = socket.socketpair()
        send_with_fds(verdicts, [for_test.fileno()], spec)
        for_test.close()
        got = {"verdict": None, "credit": 0.0}

        def on_tester():
            """A message of the tests: a transport credit, or their verdict (None: they died or sent garbage)."""
            try:
                msg = recv_msg(verdicts)
            except (EOFError, OSError, ValueError, Unencodable):  # the worker died
                msg = None
            if isinstance(msg, dict) and "credit" in msg and "status" not in msg:
                # passk's transport so far: the deadline moves by what was not the candidate's
                delta = _credit(msg["credit"], limits) - got["credit"]
                got["credit"] += max(delta, 0.0)
                return "credit", max(delta, 0.0)
            try:
                got["verdict"] = _checked_verdict(msg)
            except ValueError:
                got["verdict"] = None
            return "done", got["verdict"] is not None and got["verdict"]["reason"] == "candidate_exited"

        try:
            report, credit, tests_done = self.watcher.run(
                p_dir, limits, channel, chan=for_cand, tester=verdicts, on_tester=on_tester)
        finally:
            for_cand.close()   # (closed already once handed over)
        verdict = got["verdict"]
        # No report means the forkserver is still killing what the candidate left (a fork bomb under
        # gVisor): the candidate timed out, unless the tests gave a verdict in time (then it is a fault);
        # the container, whose forkserver is busy, is reported unhealthy and replaced.
        if report.get("unreported") and verdict is not None and verdict["t_end"] - report["start"] <= limits["timeout_s"]:
            raise RuntimeError("the forkserver did not report in time")
        test_status = None
        if verdict is None:
            # still running (killed now), or dead already (how it ended is what the labels need)
            test_status = self._end_worker(kill=True) or ({"signal": None, "running": False} if tests_done else None)
        elif verdict["retire"]:
            self._end_worker(kill=False)  # it ends itself after answering: the next job gets a fresh one
        if verdict is not None:   # the final count, which may be more than the last credit message said
            credit = max(credit, min(_credit(verdict["transport_s"], limits), credit + 0.05))
        charged = dict(limits, timeout_s=limits["timeout_s"] + credit)   # the limit on the candidate's own time
        result = compose(verdict, report, charged, test_status)
        result["verdict_channel"] = channel
        result["channel_detail"] = {"runner": spec["runner"]}
        if credit:
            result["channel_detail"]["transport_s"] = round(credit, 3)
        if verdict is not None and result["reason"] == verdict["reason"]:   # the tests' verdict stood
            result["channel_detail"].update(verdict.get("extra") or {})
            if verdict.get("truth") is not None:
                result["truth"] = verdict["truth"]
        return self._finish(result, report, jobdir)

    def _finish(self, result, report, jobdir):
        """Remove what the job left, and say whether the container can take another job."""
        deadline = time.monotonic() + CLEANUP_BUDGET_S
        leftovers, scrubbed = scrub(deadline)
        removed = remove_tree(jobdir, deadline)
        result["leftover_paths"] = leftovers
        # A container the forkserver could not clean (a fork bomb among others), or took long to clean, or
        # whose files could not all be removed, is replaced: what is left must not reach the next candidate.
        result["healthy"] = (bool(report["clean"]) and scrubbed and removed and result["status"] != "error"
                             and report["cleanup_s"] < MAX_CLEANUP_S and not report["memory_pressure"])
        return result


def _credit(value, limits) -> float:
    """A transport credit the tests reported, in seconds, within the cap."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
        return 0.0
    return min(float(value), TRANSPORT_CAP * limits["timeout_s"])


def _checked_verdict(msg):
    """The test process's message, as the labels need it (it is ours, but nothing is taken on faith)."""
    if not isinstance(msg, dict) or msg.get("status") not in ("passed", "failed", "error") \
            or not isinstance(msg.get("t_end"), (int, float)):
        raise ValueError("malformed verdict")
    extra = msg.get("extra") if isinstance(msg.get("extra"), dict) else {}
    return {"status": msg["status"], "reason": clean_text(msg.get("reason", ""), 120),
            "detail": clean_text(msg.get("detail", "")), "t_end": float(msg["t_end"]),
            "extra": {clean_text(str(k), 40): (v if isinstance(v, (int, float)) and not isinstance(v, bool)
                                               else clean_text(str(v), 200)) for k, v in list(extra.items())[:20]},
            "truth": msg.get("truth") if isinstance(msg.get("truth"), dict) else None,
            "test_cpu_s": msg.get("test_cpu_s") if isinstance(msg.get("test_cpu_s"), (int, float)) else None,
            "transport_s": msg.get("transport_s") if isinstance(msg.get("transport_s"), (int, float)) else 0.0,
            "retire": bool(msg.get("retire"))}


def decide(verdict, report, limits, test_status):
    """(status, reason, detail): the label, from facts only, never from which message arrived first.
    The rules, first match wins (docs/limits-and-labels.md lists them in this order):

     1. the forkserver never reported (it was still killing a fork bomb)     timed_out wall_time_limit
     2. output over the limit, every byte written before the candidate was
        stopped counted, whenever it was read                                failed output_limit
     3. the sandbox's memory watch fired while the candidate ran (gVisor)    failed memory_limit
     4. the tests gave a verdict and ended within the wall-clock limit, and
        it is not "the candidate went away"                                  that verdict
     5. the candidate was still running at the wall-clock limit              timed_out wall_time_limit
     6. the candidate ended by itself, the tests saw it go:
          the container's OOM killer killed during the job (its only choice
          is the candidate; it may not have been reaped yet)                 failed memory_limit
          SIGXCPU                                                            timed_out cpu_time_limit
          SIGXFSZ                                                            failed file_size_limit
          another signal                                                     failed signal:<NAME>
          an exit code                                                       failed exited_early
     7. the tests were still running when the limit (and its grace) ran out timed_out wall_time_limit
     8. the test process died of a signal other than SIGKILL                 failed test_crashed
     9. a verdict that came after the limit                                  timed_out wall_time_limit
    10. no verdict and nothing else known (the test process was killed)      error tester_died
    """
    timeout = limits["timeout_s"]
    if report.get("unreported"):
        return "timed_out", "wall_time_limit", f"still running after {timeout} s"
    if report["output_exceeded"]:
        return "failed", "output_limit", f"printed more than {limits['output_bytes']} bytes"
    if report.get("memory_exceeded"):
        return ("failed", "memory_limit", "the sandbox's memory passed its limit (memory held outside the "
                "candidate's address space counts: memfd, shared memory, tmpfs files)")
    in_time = verdict is not None and verdict["t_end"] - report["start"] <= timeout
    if in_time and verdict["reason"] != "candidate_exited":
        return verdict["status"], verdict["reason"], verdict["detail"]
    if report["timed_out"]:
        if stalled(report):
            return "error", "machine_stall", stall_detail(report)
        return "timed_out", "wall_time_limit", f"still running after {timeout} s"
    sig, exit_code = report["signal"], report["exit_code"]
    if verdict is not None and verdict["reason"] == "candidate_exited" or (verdict is None and (sig or exit_code is not None)):
        if report["memory_pressure"]:
            return "failed", "memory_limit", "killed by the container's memory limit"
        if sig == "SIGXCPU":
            return "timed_out", "cpu_time_limit", f"used more than {limits['cpu_time_s']} s of CPU"
        if sig == "SIGXFSZ":
            return "failed", "file_size_limit", "wrote a file larger than the limit"
        if sig is not None:
            return "failed", f"signal:{sig}", f"the candidate was killed by {sig}"
        if exit_code is not None:
            return "failed", "exited_early", f"the candidate exited with code {exit_code} before the tests finished"
        if verdict is not None and in_time:
            return verdict["status"], verdict["reason"], verdict["detail"]
    if verdict is None:
        status = test_status or {}
        if status.get("running"):
            return "timed_out", "wall_time_limit", f"the tests were still running after {timeout} s"
        if status.get("signal") not in (None, "SIGKILL"):
            return "failed", "test_crashed", f"the test process was killed by {status['signal']} while testing"
        return "error", "tester_died", "the test process gave no verdict"
    return "timed_out", "wall_time_limit", f"the tests finished after the {timeout} s limit"


def compose(verdict, report, limits, test_status=None):
    """The result line for the host: the label (decide) and what was measured."""
    status, reason, detail = decide(verdict, report, limits, test_status)
    in_time = verdict is not None and verdict["t_end"] - report["start"] <= limits["timeout_s"]
    end = verdict["t_end"] if in_time and status != "timed_out" else report["end"]
    return {
        "status": status, "reason": clean_text(reason, 120), "detail": clean_text(detail),
        "wall_s": round(max(0.0, end - report["start"]), 6), "cpu_s": report["cpu_s"],
        "test_cpu_s": (verdict or {}).get("test_cpu_s"),
        "peak_memory_kb": report["peak_memory_kb"],
        "exit_code": report["exit_code"], "signal": report["signal"],
        "stdout_tail": report["stdout_tail"].decode("utf-8", errors="replace"),
        "stderr_tail": report["stderr_tail"].decode("utf-8", errors="replace"),
        "stdout_bytes": report["stdout_bytes"], "stderr_bytes": report["stderr_bytes"],
    }


def _host_streams():
    """The host's line streams: a unix socket the host listens on, bind-mounted into the container (set by
    the host in PASSK_HOST_SOCKET; it accepts one connection, this one, and closes the listener), or this
    process's stdin and stdout through Docker's attach stream."""
    path = os.environ.pop(HOST_SOCKET_ENV, None)
    if not path:
        return sys.stdin.buffer, sys.stdout.buffer
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    return conn.makefile("rb"), conn.makefile("wb")


def serve():
    sup = Supervisor()
    jobs, out = _host_streams()
    hello = {"event": "ready", "protocol": VERSION, "python": platform.python_version(), "pid": os.getpid()}
    try:   # a language image says which toolchain it holds (written when the image was built)
        with open(TOOLCHAIN_FILE, encoding="utf-8") as f:
            hello["toolchain"] = {clean_text(str(k), 40): clean_text(str(v), 200) for k, v in json.load(f).items()}
    except (OSError, ValueError, AttributeError):
        pass
    try:
        out.write((json.dumps(hello) + "\n").encode())
        out.flush()
        for line in jobs:
            if not line.strip():
                continue
            job = json.loads(line)
            try:
                result = sup.run(job)
                result["event"] = "result"
            except Exception as e:
                result = {"event": "fault", "id": job.get("id"), "detail": clean_text(_describe(e), 500)}
                out.write((json.dumps(result) + "\n").encode())
                out.flush()
                return 1
            result["id"] = job.get("id")
            out.write((json.dumps(result) + "\n").encode())
            out.flush()
    except (BrokenPipeError, ConnectionResetError):
        return 0   # the host has gone
    return 0
