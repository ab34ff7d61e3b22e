"""The long-lived evaluator: warm sandboxes for the lifetime of a `with` block, programs in, typed rows
out. The CLI runs through it (dispatch.execute), and so can a notebook or a training loop:

    from harness import Evaluator, Problem
    problem = Problem("add", "def add(a, b):\\n", "def check(candidate):\\n    assert candidate(1, 2) == 3\\n", "add")
    with Evaluator(timeout_s=3, workers=2) as ev:
        rows = ev.evaluate([(problem, "def add(a, b):\\n    return a + b\\n")])

One queue feeds one worker thread per warm container; every submission gets a Future, so callers on
any number of threads get their own results, in their own order or as they finish."""

from __future__ import annotations

import concurrent.futures
import queue
import threading
import time

from harness.core.errors import InputError, UnbuildableEnvironment
from harness.execution.executor import Aborted, Executor, Late, Slots, Stopped
from harness.execution.jobs import Job
from harness.execution.pool import Lane, Pool
from harness.execution.sandbox import get_backend
from harness.inputs.config import EvalPlusSettings, Limits, SandboxSettings
from harness.records.results import ResultRow

_STOP = object()
CLOSE_WAIT_S = 2.0   # after an interrupt's grace, how long close() waits for a job before removing its container


class Evaluator(Executor):
    """Owns a sandbox backend and its warm containers from `start()` (or `with`) to `close()`.

    `limits` size the containers; a submission may carry stricter (or equal) limits of its own. Settings
    that cannot work (no engine, a runtime the engine lacks, a missing image) raise when it starts,
    before anything is evaluated."""

    _noun = "Evaluator"

    def __init__(self, limits: Limits | None = None, settings: SandboxSettings | None = None, *,
                 run_id: str | None = None, evalplus: EvalPlusSettings | None = None, **overrides):
        super().__init__(limits, settings, run_id=run_id, evalplus=evalplus, **overrides)
        self._queue: queue.Queue = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._backend = None
        self._pool: Pool | None = None
        self._interrupted = False
        self._running: dict = {}   # future -> (lane, aborted event) of each job running
        self._slots = Slots(self.settings.workers)
        self._overflow = Slots(self.settings.overflow) if self.settings.overflow > 0 else None
        self._lanes: list[Lane] = []   # one per worker slot: the containers its jobs run in
        self._overflow_lanes: list[Lane] = []   # one per overflow slot, started when first taken

    # -- lifetime ------------------------------------------------------------------------------
    def start(self) -> dict:
        """Prepare the backend (engine, runtime, image) and the workers. Returns the backend's facts."""
        if self._pool is not None:
            return self.facts
        self._refuse_if_closed()
        if self.settings.executor != "local":
            raise InputError(f"executor {self.settings.executor!r}: use harness.RayExecutor, which has this "
                             "interface (or harness.execution.dispatch.make_executor)")
        backend = get_backend(self.settings.backend)(self.run_id, self.limits, self.settings)
        try:
            self.facts = backend.prepare()
        except BaseException:
            backend.close()
            raise
        with self._lock:
            # closed while its image was being built (a run stopped while a job was being submitted: a
            # repository environment's image can take minutes): no container may start after close()
            if self._closed:
                backend.close()
                raise Stopped("closed while it was starting")
            self._backend = backend
            self._pool = Pool(backend, self.limits, self.settings, self.facts)
            self._lanes = [Lane(backend, self._pool.background, slot) for slot in range(self.settings.workers)]
            for lane in self._lanes:
                lane.prepare_next()   # the containers start now, not when the first job comes
            self._overflow_lanes = [Lane(backend, self._pool.background, self.settings.workers + i)
                                    for i in range(self.settings.overflow)]
            # a thread per worker slot, and one per overflow lane: a job waiting for a slot is held by a thread
            for i in range(self.settings.workers + self.settings.overflow):
                t = threading.Thread(target=self._worker, name=f"passk-worker-{i}", daemon=True)
                t.start()
                self._threads.append(t)
        return self.facts

    def close(self, cancel: bool = True) -> None:
        """Stop the workers (the jobs they are running finish; queued ones are cancelled unless
        `cancel` is False, in which case they run first) and remove every container."""
        with self._lock:   # against start(): it either finished before this (and is closed here) or sees it
            if self._closed:
                return
            self._closed = True
        self._close_siblings(cancel)
        if self._pool is not None:
            if cancel:
                self._cancel_queued()
                self._pool.stop.set()
            for _ in self._threads:
                self._queue.put(_STOP)
            # After interrupt() (whose grace is over): a job still running after CLOSE_WAIT_S is stopped
            # with its container (its row is not kept; a resumed run runs it again). Otherwise the jobs
            # running end by their own limits.
            deadline = time.monotonic() + CLOSE_WAIT_S if cancel and self._interrupted else None
            for t in self._threads:
                t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            for lane in self._lanes + self._overflow_lanes:
                lane.close()
            for t in self._threads:   # their container is gone: a session's call ends at once
                t.join(CLOSE_WAIT_S)
            self._pool.background.shutdown(wait=True)  # retired containers are removed before we return
        if self._backend is not None:
            self._backend.close()

    def interrupt(self, timeout: float = 60.0) -> None:
        """After Ctrl-C: cancel what is queued and let what is running finish (their futures complete),
        waiting at most `timeout` seconds in all (close() then stops what still runs). What is submitted
        afterwards is stopped at once."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._interrupted = True
        for sibling in list(self._siblings.values()):
            sibling.interrupt(max(0.0, deadline - time.monotonic()))
        self._cancel_queued()
        if self._pool is not None:
            self._pool.stop.set()
        for _ in self._threads:
            self._queue.put(_STOP)
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def abort(self, futures) -> int:
        """End the jobs of `futures` that are running now (their containers killed: each future gets
        Aborted, never a row) and cancel those queued. How many were running."""
        hit = 0
        for sibling in list(self._siblings.values()):
            hit += sibling.abort(futures)
        for f in futures:
            f.cancel()
            with self._lock:
                held = self._running.get(f)
            if held is not None:
                held[1].set()
                held[0].kill()
                hit += 1
        return hit

    # -- submitting ----------------------------------------------------------------------------
    def submit_job(self, job: Job) -> "concurrent.futures.Future[ResultRow]":
        """Queue one Job (a problem and a sample). Thread-safe. An io program in another image's language
        goes to that image's sibling evaluator (Executor.routed)."""
        sibling, job = self.routed(job)
        if sibling is not None:
            why = self._unbuildable.get(id(sibling))
            if why is None:
                try:
                    return sibling.submit_job(job)
                except UnbuildableEnvironment as e:   # its environment cannot be built here: its candidates only
                    why = self._unbuildable[id(sibling)] = str(e)
            future = concurrent.futures.Future()
            future.set_result(self.unbuildable_row(job, why))
            return future
        self._ready_for_a_job(started=self._pool is not None)
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:   # against interrupt(): a job queued after it would wait for a worker that is gone
            if self._interrupted:
                future.set_exception(Stopped("the evaluator was interrupted before this job ran"))
            else:
                self._queue.put((job, future))
        return future

    # -- workers -------------------------------------------------------------------------------
    WAIT_S = 0.2    # how often a job waiting for a worker slot looks at its future (cancelled?) and the executor
    POLL_S = 0.02   # how often an urgent job (past its overflow_at) looks for any slot

    def _slot_for(self, job: Job, future) -> tuple:
        """(slots, slot) to run `job` in: a worker slot, or, for a job with a deadline, from its overflow_at on
        an overflow lane's too, whichever comes free first. (None, None) when the job will not run: its
        future was cancelled while it waited, or it reached its start_by (its future then fails with Late:
        it never runs), or the executor stopped or failed (the caller settles the future)."""
        overflow = self._overflow if job.start_by is not None and job.overflow_at is not None else None
        while True:
            if future.cancelled() or self._fatal is not None or self._pool.stop.is_set():
                return None, None
            now = time.monotonic()
            if job.start_by is not None and now >= job.start_by:
                try:
                    future.set_exception(Late("not started by its deadline: every worker" + (
                        " and overflow lane" if overflow else "") + " was busy until too late to run it "
                        "within its caller's deadline"))
                except concurrent.futures.InvalidStateError:
                    pass   # cancelled meanwhile
                return None, None
            if overflow is None or now < job.overflow_at:   # a worker slot only
                until = [t for t in (job.start_by, job.overflow_at if overflow else None) if t is not None]
                slot = self._slots.try_take(min([self.WAIT_S] + [t - now for t in until]))
                if slot is not None:
                    return self._slots, slot
                continue
            slot = self._slots.try_take()
            if slot is not None:
                return self._slots, slot
            slot = overflow.try_take(min(self.POLL_S, job.start_by - now))
            if slot is not None:
                return overflow, slot

    def _cancel_queued(self) -> None:
        try:
            while True:
                item = self._queue.get_nowait()
                if item is _STOP:
                    self._queue.put(_STOP)
                    return
                item[1].cancel()
        except queue.Empty:
            pass

    def _worker(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            job, future = item
            slots, slot = self._slot_for(job, future)
            if slot is None:
                if not future.done() and future.set_running_or_notify_cancel():   # stopped or failed meanwhile
                    future.set_exception(self._fatal or Stopped("stopped before it ran"))
                continue
            if not future.set_running_or_notify_cancel():
                slots.give(slot)
                continue
            if self._fatal is not None:
                slots.give(slot)
                future.set_exception(self._fatal)
                continue
            lanes = self._lanes if slots is self._slots else self._overflow_lanes
            lane, aborted = lanes[slot % len(lanes)], threading.Event()
            with self._lock:
                self._running[future] = (lane, aborted)
            try:
                row = self._pool.run_one(job, lane, aborted)
            except BaseException as e:  # the sandbox cannot go on: every later job fails with it
                self._fatal = self._fatal or e
                future.set_exception(e)
                self._cancel_queued()
                continue
            finally:
                with self._lock:
                    self._running.pop(future, None)
                slots.give(slot)
            if row is None and aborted.is_set():
                future.set_exception(Aborted("aborted while it ran (its request's deadline passed); its "
                                             "container was removed"))
            elif row is None:
                future.set_exception(Stopped("stopped before it ran"))
            else:
                future.set_result(row)
