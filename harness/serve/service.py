"""The service behind `passk serve`, without HTTP: executors that stay warm for the service's life, the
admission rule (a bounded number of candidates queued or running; beyond it a request is turned away at
once, never left to time out), per-request deadlines and cancellation, and the counters /metrics shows.

Everything here is thread-safe: the HTTP layer (app.py) calls `admit` and `run` from the event loop's worker
threads, and the executors' own threads complete the futures."""

from __future__ import annotations

import concurrent.futures
import math
import os
import threading
import time
import uuid
from dataclasses import dataclass, field, replace

from harness.core.errors import HarnessError, InputError
from harness.execution.executor import Aborted, Late, Stopped
from harness.inputs.untrusted import DEFAULT_CEILINGS, Ceilings
from harness.execution.evaluator import Evaluator
from harness.execution.jobs import judge_limits
from harness.inputs.config import Limits, RepoSettings, SandboxSettings
from harness.inputs.problem import Problem
from harness.records.results import ResultRow

# Latency buckets (seconds) of the histograms /metrics shows: a trivial program is ~5 ms, a judged
# problem with many tests seconds, a queued request up to its deadline.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


OVERFLOW_PER_WORKER = 8   # passk serve's overflow lanes (SandboxSettings.overflow), by default, per worker


def default_overflow(workers: int, memory_mb: int, runtime: str = "runc", asked: int | None = None) -> int:
    """passk serve's overflow lanes: `asked`, else 8 a worker, at most what half this machine's memory holds
    when every lane's program (and every worker's) uses its whole memory limit. None under gVisor: its
    containers' CPU weight cannot be lowered (`docker update --cpu-shares` fails under runsc), so a lane
    would slow the workers' programs, and gVisor gives no run-queue delay to tell a machine stall from a
    time limit: the load could decide a verdict."""
    gvisor = str(runtime).startswith("runsc")
    if gvisor and asked:
        raise InputError(f"--overflow {asked}: overflow lanes need --runtime runc (under gVisor a lane's CPU weight "
                         "cannot be lowered and a machine stall cannot be told from a time limit)")
    if asked is not None or gvisor:
        return asked or 0
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (ValueError, OSError, AttributeError):
        total_mb = 4096.0
    fits = int(total_mb / 2 // max(64, memory_mb)) - workers
    return max(0, min(OVERFLOW_PER_WORKER * workers, fits))


class Busy(HarnessError):
    """The queue is full: the request is refused now, with how long to wait before trying again."""

    def __init__(self, retry_after_s: int, queued: int, limit: int):
        super().__init__(f"the queue holds {queued} candidates (its limit is {limit}); try again in {retry_after_s} s")
        self.retry_after_s = retry_after_s


class Unavailable(HarnessError):
    """The sandbox cannot run anything now (the engine is gone or restarting); the request may be retried."""


@dataclass
class Histogram:
    counts: list = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    total: float = 0.0
    n: int = 0

    def observe(self, value: float) -> None:
        for i, edge in enumerate(BUCKETS):
            if value <= edge:
                self.counts[i] += 1
                break
        else:
            self.counts[-1] += 1
        self.total += value
        self.n += 1


class Metrics:
    """What /metrics reports, in Prometheus's text format (metrics_text)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.completed: dict[tuple[str, str], int] = {}      # (status, reason) -> candidates
        self.requests: dict[tuple[str, int], int] = {}       # (route, HTTP code) -> requests
        self.request_seconds: dict[str, Histogram] = {}      # route -> latency
        self.candidate_seconds = Histogram()                 # admitted to row, per candidate
        self.refused = 0                                     # candidates turned away (429)
        self.cancelled = 0                                   # candidates cancelled (client gone, deadline)

    def row(self, row: ResultRow, seconds: float) -> None:
        with self.lock:
            key = (row.status, row.reason or "")
            self.completed[key] = self.completed.get(key, 0) + 1
            self.candidate_seconds.observe(seconds)

    def request(self, route: str, code: int, seconds: float) -> None:
        with self.lock:
            self.requests[(route, code)] = self.requests.get((route, code), 0) + 1
            self.request_seconds.setdefault(route, Histogram()).observe(seconds)


def _label(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _header(name: str, kind: str, text: str) -> list[str]:
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]


def _histogram_lines(name: str, labels: str, h: Histogram) -> list[str]:
    out, running = [], 0
    sep = "," if labels else ""
    for edge, count in zip(BUCKETS, h.counts):
        running += count
        out.append(f'{name}_bucket{{{labels}{sep}le="{edge:g}"}} {running}')
    out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {running + h.counts[-1]}')
    brace = f"{{{labels}}}" if labels else ""
    out += [f"{name}_sum{brace} {h.total:.6f}", f"{name}_count{brace} {h.n}"]
    return out


@dataclass(frozen=True)
class ServiceOptions:
    max_queue: int = 4096            # candidates queued or running at once; beyond it: 429
    deadline_s: float = 600.0        # a request's default deadline (a request may ask for less)
    max_candidates: int = 1024       # per request
    max_code_bytes: int = 1 << 20    # per candidate
    max_body_bytes: int = 64 << 20   # per request
    max_memory_mb: int = 4096        # the most a request may ask for (the containers are sized for it)
    ceilings: Ceilings = DEFAULT_CEILINGS   # the most a request's limits or an inline record may state
    # repository tasks: where the repositories are, the specs, their limits; strict grading by default (a
    # reward must not come from a patch that edited the tests)
    repos: RepoSettings = field(default_factory=lambda: RepoSettings(strict_tests=True))


class Service:
    """Warm executors, one per language of the problems' tests (io programs route by their own language
    inside an executor), sharing the service's worker slots."""

    def __init__(self, limits: Limits, settings: SandboxSettings, options: ServiceOptions,
                 problems: dict[str, Problem] | None = None):
        self.limits, self.settings, self.options = limits, settings, options
        self.problems = dict(problems or {})
        self.metrics = Metrics()
        self._lock = threading.Lock()
        self._executors: dict[str, Evaluator] = {}
        self._repo_tasks: dict[str, Problem] = {}   # repository tasks made ready, by instance
        self._inflight: set = set()                 # the futures of candidates queued or running
        self._queued = 0       # candidates admitted and not yet finished
        self._running_since = time.monotonic()
        self._finished = 0     # candidates finished since the start (the rate a 429's Retry-After is from)
        self.stopping = False
        self.sessions = None   # serve/sessions.py's SessionPool, where passk serve offers sessions
        self.run_id = "serve-" + uuid.uuid4().hex[:8]   # its containers' org.passk.run label: <run_id>-<language>

    # -- executors -------------------------------------------------------------------------------
    def start(self) -> dict:
        """Start the Python executor now (images built, containers warm), so the first request is fast."""
        return self._executor("python").start()

    def _executor(self, language: str):
        with self._lock:
            ex = self._executors.get(language)
            if ex is not None and ex._fatal is None and not ex._closed:
                return ex
            broken = ex
            settings = replace(self.settings, language=language)
            if self.settings.executor == "ray":
                from harness.execution.ray_executor import RayExecutor
                ex = RayExecutor(self.limits, settings, run_id=f"{self.run_id}-{language}")
            else:
                ex = Evaluator(self.limits, settings, run_id=f"{self.run_id}-{language}")
            first = self._executors.get("python")
            if first is not None and first is not broken:
                ex._share_slots(first)
            self._executors[language] = ex
        if broken is not None:   # its warm containers died with the engine: a new executor starts fresh
            threading.Thread(target=broken.close, daemon=True).start()
        return ex

    def executors(self) -> dict:
        with self._lock:
            return dict(self._executors)

    def close(self) -> None:
        """The stop after the grace the requests in flight had: queued candidates are cancelled (their
        rows say so), running ones are ended with their containers, every container is removed."""
        self.stopping = True
        if self.sessions is not None:
            self.sessions.close_all()
        for ex in self.executors().values():
            ex.interrupt(0.0)
            ex.close(cancel=True)
        if self.settings.executor == "local":   # what an executor closed while the engine was away left behind
            from harness.execution.sandbox.docker import remove_runs
            remove_runs(self.run_id + "-")

    # -- admission -------------------------------------------------------------------------------
    def admit(self, n: int) -> None:
        """Take n candidates into the queue, or raise Busy at once."""
        if self.stopping:
            raise Unavailable("the service is stopping")
        with self._lock:
            if self._queued + n > self.options.max_queue and self._queued > 0:
                self.metrics.refused += n
                raise Busy(self.retry_after(), self._queued, self.options.max_queue)
            self._queued += n

    def release(self, n: int = 1) -> None:
        with self._lock:
            self._queued = max(0, self._queued - n)
            self._finished += n

    def retry_after(self) -> int:
        """Seconds a refused client should wait: the queue over the rate kept so far (1-60; 5 before any)."""
        elapsed = max(1e-3, time.monotonic() - self._running_since)
        rate = self._finished / elapsed if self._finished else 0.0
        return max(1, min(60, math.ceil(self._queued / rate))) if rate else 5

    @property
    def queued(self) -> int:
        return self._queued

    # -- running ---------------------------------------------------------------------------------
    def submit(self, problem: Problem, program: str, *, language: str | None, limits: Limits | None,
               fields: dict | None = None, start_by: float | None = None,
               overflow_at: float | None = None) -> concurrent.futures.Future:
        """Queue one candidate on the executor of its problem's language. A sandbox that cannot start
        raises Unavailable (retry later); a problem or program passk refuses raises InputError. `start_by`
        (time.monotonic()): the candidate fails with Late if it has not started by then; `overflow_at`: from
        then on it may run on an overflow lane (Job.start_by)."""
        key = problem.language if problem.channel != "io" else "python"
        if limits is None and problem.judge is not None:   # a judged problem's own limits, within the containers'
            limits = self.cap_limits(judge_limits(self.limits, problem.judge))
        if problem.channel == "repo":   # a repository task: made ready once, under the service's repo settings
            problem, limits = self.repo_task(problem), None
        ex = self._executor(key)
        try:
            future = ex.submit(problem, program, limits=limits, language=language, fields=fields,
                               start_by=start_by, overflow_at=overflow_at)
        except InputError:
            raise
        except (HarnessError, OSError) as e:
            raise Unavailable(f"the sandbox cannot run candidates now: {e}") from e
        with self._lock:
            self._inflight.add(future)
        future.add_done_callback(self._done)
        return future

    def _done(self, future) -> None:
        with self._lock:
            self._inflight.discard(future)

    def stop_work(self) -> int:
        """The end of a stop's grace, just before the HTTP server gives up on the requests in flight: every
        candidate still queued or running is ended (its container killed), so each request answers with its
        rows (`error service_stopping` for those), never an HTTP 500. How many were still there."""
        self.stopping = True
        with self._lock:
            futures = list(self._inflight)
        self.abort(futures)
        return len(futures)

    def repo_task(self, problem: Problem) -> Problem:
        """A repository task (a preloaded or inline SWE-bench row) made ready under the service's settings
        (its repositories, specs, limits and strict grading), kept by instance."""
        from harness.inputs.repos.tasks import PreparedTask, prepare
        if isinstance(problem.repo, PreparedTask):
            return problem
        with self._lock:
            ready = self._repo_tasks.get(problem.task_id)
            if ready is not None and ready.repo.task == problem.repo:
                return ready
        ready = prepare({problem.task_id: problem}, self.options.repos, self.limits)[problem.task_id]
        with self._lock:
            self._repo_tasks[problem.task_id] = ready
        return ready

    def abort(self, futures) -> int:
        """End the candidates of `futures` that run now (and cancel the queued): how many were running."""
        return sum(ex.abort(futures) for ex in list(self.executors().values()))

    def cap_limits(self, limits: Limits) -> Limits:
        """A request's limits within what the service's containers are sized for."""
        return replace(limits, memory_mb=min(int(limits.memory_mb), int(self.limits.memory_mb)),
                       tmpfs_mb=min(int(limits.tmpfs_mb), int(self.limits.tmpfs_mb)),
                       cpus=min(float(limits.cpus), float(self.limits.cpus)),
                       pids=min(int(limits.pids), int(self.limits.pids)))

    def outcome(self, future: concurrent.futures.Future, problem: Problem, index: int, started: float,
                why_cancelled: str = "not_run") -> ResultRow:
        """The row of a finished, failed or cancelled future: never a `failed` for what was not the
        candidate's doing (a cancelled or faulted job is `error`, naming why)."""
        if future.cancelled():
            why_cancelled = "service_stopping" if self.stopping and why_cancelled == "not_run" else why_cancelled
            row = _error_row(problem, index, why_cancelled, "the candidate did not run (cancelled before it started: "
                             "the client went away, the deadline passed, the sandbox failed or the service stopped)")
        else:
            error = future.exception()
            if error is None:
                row = future.result()
            elif isinstance(error, Late):
                row = _error_row(problem, index, "deadline", "the candidate did not run: " + str(error))
            elif isinstance(error, Aborted) and self.stopping:
                row = _error_row(problem, index, "service_stopping", "the service stopped while the candidate ran "
                                 "(the end of its stop's grace)")
            elif isinstance(error, Aborted):
                row = _error_row(problem, index, why_cancelled if why_cancelled != "not_run" else "deadline",
                                 "the candidate was stopped while it ran: " + str(error))
            elif isinstance(error, Stopped):
                row = _error_row(problem, index, "service_stopping", str(error))
            else:
                row = _error_row(problem, index, "sandbox_fault", f"{type(error).__name__}: {error}")
        self.metrics.row(row, time.monotonic() - started)
        return row

    def sandbox_state(self) -> str:
        """"ok", or why the sandbox cannot run candidates now (the engine does not answer, or the executor
        failed for good and a new one will start on the next request). Asked of the engine at most once a
        second."""
        now = time.monotonic()
        held = getattr(self, "_state", None)
        if held is not None and now - held[0] < 1.0:
            return held[1]
        ex = self.executors().get("python")
        backend = getattr(ex, "_backend", None)
        if ex is None or getattr(ex, "_fatal", None) is not None:
            state = "unavailable: the sandbox failed; a new one starts on the next request"
        elif backend is not None and not backend.healthy():
            state = "unavailable: the container engine does not answer"
        else:
            state = "ok"
        self._state = (now, state)
        return state

    def metrics_text(self) -> str:
        m = self.metrics
        executors = self.executors()
        warm = sum(getattr(ex.settings, "workers", 0) for ex in executors.values()
                   if getattr(ex, "_pool", None) is not None and not ex._closed)
        with m.lock:
            lines = []
            for name, kind, text, value in (
                    ("passk_queue_depth", "gauge", "Candidates admitted and not yet finished (queued or running).", self._queued),
                    ("passk_queue_limit", "gauge", "Candidates the queue admits before it answers 429.", self.options.max_queue),
                    ("passk_candidates_running", "gauge", "Candidates running in a sandbox now.", self.running()),
                    ("passk_containers_warm", "gauge", "Warm containers (one per worker of each started executor).", warm),
                    ("passk_candidates_refused_total", "counter", "Candidates turned away because the queue was full.", m.refused),
                    ("passk_candidates_cancelled_total", "counter",
                     "Candidates cancelled before they ran (client gone, deadline).", m.cancelled)):
                lines += _header(name, kind, text) + [f"{name} {value}"]
            lines += _header("passk_candidates_completed_total", "counter", "Candidates finished, by label and reason.")
            for (status, reason), n in sorted(m.completed.items()):
                lines.append(f'passk_candidates_completed_total{{status="{_label(status)}",reason="{_label(reason)}"}} {n}')
            lines += _header("passk_requests_total", "counter", "HTTP requests, by route and status code.")
            for (route, code), n in sorted(m.requests.items()):
                lines.append(f'passk_requests_total{{route="{_label(route)}",code="{code}"}} {n}')
            lines += _header("passk_request_seconds", "histogram", "Time from a request's arrival to its response's end.")
            for route, h in sorted(m.request_seconds.items()):
                lines += _histogram_lines("passk_request_seconds", f'route="{_label(route)}"', h)
            lines += _header("passk_candidate_seconds", "histogram", "Time from a candidate's admission to its row.")
            lines += _histogram_lines("passk_candidate_seconds", "", m.candidate_seconds)
        return "\n".join(lines) + "\n"

    def running(self) -> int:
        """Candidates in a sandbox now: the worker slots taken (every executor shares the first one's)."""
        for ex in self.executors().values():
            slots = getattr(ex, "_slots", None)
            if slots is not None:
                return slots.taken()
        return 0


def _error_row(problem: Problem, index: int, reason: str, detail: str) -> ResultRow:
    return ResultRow(problem.task_id, index, "error", reason, detail[:1000])
