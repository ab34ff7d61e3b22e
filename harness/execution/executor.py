"""The executor seam: what runs jobs, behind one small interface. An executor is started (`start()` or
`with`), takes jobs (`submit_job` -> a Future of the row), can be interrupted (queued jobs cancelled,
running ones finish) and closed. Everything a caller uses beyond that (programs in, rows out in order or
as they finish, EvalPlus's ground truth measured once per problem) is built here on those four methods,
so this machine's Evaluator (evaluator.py) and a Ray cluster's (ray_executor.py) share it, and a third
executor is one subclass."""

from __future__ import annotations

import concurrent.futures
import queue
import threading
import uuid
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, Iterable, Iterator

from harness.core.errors import HarnessError, InputError
from harness.execution import groundtruth
from harness.execution.jobs import Job
from harness.inputs.config import EvalPlusSettings, Limits, SandboxSettings
from harness.inputs.problem import Problem
from harness.inputs.samples import Sample
from harness.records.results import ResultRow


class Stopped(HarnessError):
    """The executor was stopped (Ctrl-C, close) before this job ran."""


class Executor(ABC):
    """Jobs in, rows out. `limits` size the sandboxes; a submission may carry stricter (or equal) limits
    of its own. Options (`**overrides`) are any field of Limits or SandboxSettings."""

    def __init__(self, limits: Limits | None = None, settings: SandboxSettings | None = None, *,
                 run_id: str | None = None, evalplus: EvalPlusSettings | None = None, **overrides):
        limit_names = set(Limits.__dataclass_fields__)
        setting_names = set(SandboxSettings.__dataclass_fields__)
        unknown = set(overrides) - limit_names - setting_names
        if unknown:
            raise InputError(f"{type(self).__name__}: unknown option(s) {', '.join(sorted(unknown))}; limits are "
                             f"{', '.join(sorted(limit_names))}; settings are {', '.join(sorted(setting_names))}")
        self.limits = replace(limits or Limits(), **{k: v for k, v in overrides.items() if k in limit_names})
        self.settings = replace(settings or SandboxSettings(),
                                **{k: v for k, v in overrides.items() if k in setting_names})
        self.run_id = run_id or "api-" + uuid.uuid4().hex
        self.evalplus = evalplus or EvalPlusSettings()
        self._truths: dict = {}              # EvalPlus problems: their ground truth, measured once here
        self._truth_lock = threading.Lock()
        self.facts: dict = {}
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._fatal: BaseException | None = None   # set when the executor can run nothing more
        self._closed = False

    # -- the interface -------------------------------------------------------------------------
    @abstractmethod
    def start(self) -> dict:
        """Prepare what runs the jobs; returns the sandbox's facts (runtime, image, ...). Idempotent."""

    @abstractmethod
    def submit_job(self, job: Job) -> "concurrent.futures.Future[ResultRow]":
        """Queue one Job; its Future gets the row, or Stopped if it never ran. Thread-safe."""

    @abstractmethod
    def interrupt(self, timeout: float = 60.0) -> None:
        """After Ctrl-C: cancel what is queued and let what is running finish (their futures complete)."""

    @abstractmethod
    def close(self, cancel: bool = True) -> None:
        """Stop and remove every sandbox; queued jobs are cancelled unless `cancel` is False."""

    # -- what every executor checks ---------------------------------------------------------------
    def _refuse_if_closed(self) -> None:
        """start(): a closed executor is not started again."""
        if self._closed:
            raise HarnessError(f"this {self._noun} is closed; make a new one")

    def _ready_for_a_job(self, started: bool) -> None:
        """submit_job(): start on the first job; refuse once closed or failed for good."""
        if not started:
            self.start()
        if self._fatal is not None:
            raise self._fatal
        if self._closed:
            raise HarnessError(f"this {self._noun} is closed")

    _noun = "executor"   # what its messages call it

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- built on the interface ----------------------------------------------------------------
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
        return self.submit_job(self._job(problem, sample, limits))

    def _job(self, problem: Problem, sample: Sample, limits: Limits | None) -> Job:
        """A program of the API as a Job: an EvalPlus task's carries its ground truth."""
        if problem.runner == "evalplus":
            return self._differential_job(problem, sample, limits)
        return Job(problem, sample, limits)

    def _differential_job(self, problem: Problem, sample: Sample, limits: Limits | None) -> Job:
        """An EvalPlus task's job: its ground truth is measured in this evaluator's sandbox the first time
        the problem is submitted (a problem that cannot be judged raises InputError, naming it)."""
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
            return self._job(problem, sample, None)
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
