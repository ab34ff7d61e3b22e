"""The long-lived evaluator: warm sandboxes for the lifetime of a `with` block, programs in, typed rows
out. The CLI runs through it (execute.execute), and so can a notebook or a training loop:

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
import uuid
from dataclasses import replace
from typing import Any, Iterable, Iterator

from .config import EvalPlusSettings, Limits, SandboxSettings
from .errors import HarnessError, InputError
from .execute import Job, Lane, Pool
from .problems import Problem
from .results import ResultRow
from .samples import Sample
from .sandbox import get_backend

_STOP = object()


class Stopped(HarnessError):
    """The evaluator was stopped (Ctrl-C, close) before this job ran."""


def make_executor(limits: Limits, settings: SandboxSettings, run_id: str):
    """The executor a run's settings ask for: this machine's Evaluator, or the Ray cluster's
    (harness/ray_executor.py), which has the same interface."""
    if settings.executor == "ray":
        from .ray_executor import RayExecutor
        return RayExecutor(limits, settings, run_id=run_id)
    return Evaluator(limits, settings, run_id=run_id)


class Evaluator:
    """Owns a sandbox backend and its warm containers from `start()` (or `with`) to `close()`.

    `limits` size the containers; a submission may carry stricter (or equal) limits of its own. Settings
    that cannot work (no engine, a runtime the engine lacks, a missing image) raise when it starts,
    before anything is evaluated."""

    def __init__(self, limits: Limits | None = None, settings: SandboxSettings | None = None, *,
                 run_id: str | None = None, evalplus: EvalPlusSettings | None = None, **overrides):
        limit_names = set(Limits.__dataclass_fields__)
        setting_names = set(SandboxSettings.__dataclass_fields__)
        unknown = set(overrides) - limit_names - setting_names
        if unknown:
            raise InputError(f"Evaluator: unknown option(s) {', '.join(sorted(unknown))}; limits are "
                             f"{', '.join(sorted(limit_names))}; settings are {', '.join(sorted(setting_names))}")
        self.limits = replace(limits or Limits(), **{k: v for k, v in overrides.items() if k in limit_names})
        self.settings = replace(settings or SandboxSettings(),
                                **{k: v for k, v in overrides.items() if k in setting_names})
        self.run_id = run_id or "api-" + uuid.uuid4().hex
        self.evalplus = evalplus or EvalPlusSettings()
        self._truths: dict = {}              # EvalPlus problems: their ground truth, measured once here
        self._truth_lock = threading.Lock()
        self.facts: dict = {}
        self._queue: queue.Queue = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._backend = None
        self._pool: Pool | None = None
        self._fatal: BaseException | None = None
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._closed = False
        self._interrupted = False

    # -- lifetime ------------------------------------------------------------------------------
    def start(self) -> dict:
        """Prepare the backend (engine, runtime, image) and the workers. Returns the backend's facts."""
        if self._pool is not None:
            return self.facts
        if self._closed:
            raise HarnessError("this Evaluator is closed; make a new one")
        if self.settings.executor != "local":
            raise InputError(f"executor {self.settings.executor!r}: use harness.RayExecutor, which has this "
                             "interface (or harness.evaluator.make_executor)")
        backend = get_backend(self.settings.backend)(self.run_id, self.limits, self.settings)
        try:
            self.facts = backend.prepare()
        except BaseException:
            backend.close()
            raise
        self._backend = backend
        self._pool = Pool(backend, self.limits, self.settings, self.facts)
        for i in range(self.settings.workers):
            t = threading.Thread(target=self._worker, name=f"passk-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        return self.facts

    def __enter__(self) -> "Evaluator":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self, cancel: bool = True) -> None:
        """Stop the workers (the jobs they are running finish; queued ones are cancelled unless
        `cancel` is False, in which case they run first) and remove every container."""
        if self._closed:
            return
        self._closed = True
        if self._pool is not None:
            if cancel:
                self._cancel_queued()
                self._pool.stop.set()
            for _ in self._threads:
                self._queue.put(_STOP)
            for t in self._threads:
                t.join()
            self._pool.background.shutdown(wait=True)  # retired containers are removed before we return
        if self._backend is not None:
            self._backend.close()

    def interrupt(self, timeout: float = 60.0) -> None:
        """After Ctrl-C: cancel what is queued and let what is running finish (their futures complete).
        What is submitted afterwards is stopped at once."""
        with self._lock:
            self._interrupted = True
        self._cancel_queued()
        if self._pool is not None:
            self._pool.stop.set()
        for _ in self._threads:
            self._queue.put(_STOP)
        for t in self._threads:
            t.join(timeout)

    # -- submitting ----------------------------------------------------------------------------
    def submit_job(self, job: Job) -> "concurrent.futures.Future[ResultRow]":
        """Queue one Job (a problem and a sample). Thread-safe."""
        if self._pool is None:
            self.start()
        if self._fatal is not None:
            raise self._fatal
        if self._closed:
            raise HarnessError("this Evaluator is closed")
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:   # against interrupt(): a job queued after it would wait for a worker that is gone
            if self._interrupted:
                future.set_exception(Stopped("the evaluator was interrupted before this job ran"))
            else:
                self._queue.put((job, future))
        return future

    def submit(self, problem: Problem, program: str, *, limits: Limits | None = None,
               sample_index: int | None = None, fields: dict | None = None) -> "concurrent.futures.Future[ResultRow]":
        """Queue one program (the whole program: for a completion, pass problem.prompt + completion).
        Without a `sample_index`, candidates of a task are numbered in the order they are submitted."""
        if not isinstance(problem, Problem):
            raise InputError(f"expected a harness.Problem, got {type(problem).__name__}")
        if not isinstance(program, str):
            raise InputError(f"a program must be a string, got {type(program).__name__}")
        index = self._next_index(problem.task_id) if sample_index is None else sample_index
        sample = Sample(problem.task_id, index, program, "solution", "api", dict(fields or {}))
        if problem.runner == "evalplus":
            return self.submit_job(self._differential_job(problem, sample, limits))
        return self.submit_job(Job(problem, sample, limits))

    def _differential_job(self, problem: Problem, sample: Sample, limits: Limits | None) -> Job:
        """An EvalPlus task's job: its ground truth is measured in this evaluator's sandbox the first time
        the problem is submitted (a problem that cannot be judged raises InputError, naming it)."""
        from . import groundtruth
        with self._truth_lock:
            held = self._truths.get(id(problem.differential))
            if held is None or held[0] is not problem.differential:
                tasks = groundtruth.measure({problem.task_id: problem}, self.limits, self)
                held = self._truths[id(problem.differential)] = (
                    problem.differential, groundtruth.GroundTruth.of("api", tasks, {"source": "measured"}))
        return groundtruth.judge_job(problem, sample, held[1], self.limits, self.evalplus, limits=limits)

    def _next_index(self, task_id: str) -> int:
        with self._lock:
            index = self._counts.get(task_id, 0)
            self._counts[task_id] = index + 1
        return index

    def evaluate(self, items: Iterable[tuple[Problem, str]]) -> list[ResultRow]:
        """Evaluate (problem, program) pairs; rows in the order given."""
        futures = [self.submit(problem, program) for problem, program in items]
        return [f.result() for f in futures]

    def stream(self, items: Iterable[tuple[Any, Problem, str]]) -> Iterator[tuple[Any, ResultRow]]:
        """Evaluate (your id, problem, program) triples; yields (your id, row) as each finishes."""
        def job(problem, program):
            sample = Sample(problem.task_id, self._next_index(problem.task_id), program, "solution", "api")
            return self._differential_job(problem, sample, None) if problem.runner == "evalplus" else Job(problem, sample)
        return self.stream_jobs((key, job(problem, program)) for key, problem, program in items)

    def stream_jobs(self, keyed_jobs: Iterable[tuple[Any, Job]]) -> Iterator[tuple[Any, ResultRow]]:
        """Yields (key, row) for each (key, Job) as it finishes. A fault the sandbox could not recover
        from (the engine gone, every container failing) is raised here, after the rows before it."""
        done: queue.Queue = queue.Queue()
        pending = 0
        for key, job in keyed_jobs:
            future = self.submit_job(job)
            future.add_done_callback(lambda f, key=key: done.put((key, f)))
            pending += 1
        while pending:
            key, future = done.get()
            pending -= 1
            if future.cancelled():
                continue
            error = future.exception()
            if isinstance(error, Stopped):
                continue
            if error is not None:
                raise error
            yield key, future.result()

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
        lane = Lane(self._backend, self._pool.background)
        lane.prepare_next()   # the container starts now, not when the first job comes
        try:
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
                try:
                    row = self._pool.run_one(job, lane)
                except BaseException as e:  # the sandbox cannot go on: every later job fails with it
                    self._fatal = self._fatal or e
                    future.set_exception(e)
                    self._cancel_queued()
                    continue
                if row is None:
                    future.set_exception(Stopped("stopped before it ran"))
                else:
                    future.set_result(row)
        finally:
            lane.close()
