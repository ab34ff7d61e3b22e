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

from harness.core.errors import InputError
from harness.execution.executor import Aborted, Executor, Slots, Stopped
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
        self._lanes: list[Lane] = []   # one per worker slot: the containers its jobs run in

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
        self._backend = backend
        self._pool = Pool(backend, self.limits, self.settings, self.facts)
        self._lanes = [Lane(backend, self._pool.background, slot) for slot in range(self.settings.workers)]
        for lane in self._lanes:
            lane.prepare_next()   # the containers start now, not when the first job comes
        for i in range(self.settings.workers):
            t = threading.Thread(target=self._worker, name=f"passk-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        return self.facts

    def close(self, cancel: bool = True) -> None:
        """Stop the workers (the jobs they are running finish; queued ones are cancelled unless
        `cancel` is False, in which case they run first) and remove every container."""
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
            for lane in self._lanes:
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
            return sibling.submit_job(job)
        self._ready_for_a_job(started=self._pool is not None)
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:   # against interrupt(): a job queued after it would wait for a worker that is gone
            if self._interrupted:
                future.set_exception(Stopped("the evaluator was interrupted before this job ran"))
            else:
                self._queue.put((job, future))
        return future

    # -- workers -------------------------------------------------------------------------------
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
            if not future.set_running_or_notify_cancel():
                continue
            if self._fatal is not None:
                future.set_exception(self._fatal)
                continue
            slot = self._slots.take()
            lane, aborted = self._lanes[slot % len(self._lanes)], threading.Event()
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
                self._slots.give(slot)
            if row is None and aborted.is_set():
                future.set_exception(Aborted("aborted while it ran (its request's deadline passed); its "
                                             "container was removed"))
            elif row is None:
                future.set_exception(Stopped("stopped before it ran"))
            else:
                future.set_result(row)
