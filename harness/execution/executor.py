"""The executor seam: what runs jobs, behind one small interface. An executor is started (`start()` or
`with`), takes jobs (`submit_job` -> a Future of the row), can be interrupted (queued jobs cancelled,
running ones finish) and closed. Everything a caller uses beyond that (programs in, rows out in order or
as they finish, EvalPlus's ground truth measured once per problem) is built here on those four methods,
so this machine's Evaluator (evaluator.py) and a Ray cluster's (ray_executor.py) share it, and a third
executor is one subclass."""

from __future__ import annotations

import base64
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
from harness.inputs.judge import SUPERVISOR_PROTOCOLS, image_of
from harness.inputs.problem import Problem
from harness.inputs.samples import Sample
from harness.records.results import ResultRow


CHECKER_BUILD_S = 300.0   # a checker's, interactor's or build/run validator's build, at least this long


class Stopped(HarnessError):
    """The executor was stopped (Ctrl-C, close) before this job ran."""


class Aborted(Stopped):
    """The job was ended while it ran (Executor.abort: its request's deadline passed)."""


class Late(Stopped):
    """The job did not start by its start-by time (Job.start_by: its caller's deadline less the time it may
    take): it never ran, so its caller can be told at once to try again."""


class Slots:
    """The run's workers as numbered slots, shared by an executor and its siblings (other images): a job
    holds one while it runs, so that no more candidates run at once than there are workers, whichever image
    they run in, and each slot has its own containers in every image (pool.Lane), kept to CPUs of their own
    where the backend pins them (sandbox/docker.py cpu_sets): two jobs never share a slot's CPUs."""

    def __init__(self, n: int):
        self.n = n
        self._free: queue.LifoQueue = queue.LifoQueue()   # the slot used last is the warmest: taken first
        for i in reversed(range(n)):
            self._free.put(i)

    def take(self) -> int:
        return self._free.get()

    def try_take(self, timeout: float = 0.0) -> int | None:
        """A slot, waiting at most `timeout` seconds for one; None if none came free."""
        try:
            return self._free.get(timeout=timeout) if timeout > 0 else self._free.get_nowait()
        except queue.Empty:
            return None

    def give(self, slot: int) -> None:
        self._free.put(slot)

    def taken(self) -> int:
        """Slots held by a job now."""
        return max(0, self.n - self._free.qsize())


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
        self._siblings: dict = {}            # executors of other images, for io programs in other languages
        self._unbuildable: dict = {}         # id(sibling) -> why its environment cannot be built here
        self._slots: Slots | None = None     # the run's worker slots, shared with the siblings
        self._overflow: Slots | None = None  # its overflow lanes' slots (SandboxSettings.overflow), shared too
        self._checkers: dict = {}            # checker programs, built once per run, by content hash
        self._checker_lock = threading.Lock()

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

    def abort(self, futures) -> int:
        """End the jobs of `futures` now, running or queued (Aborted, or cancelled). How many were
        running. An executor that cannot end a running job cancels the queued ones only."""
        for f in futures:
            f.cancel()
        return 0

    @abstractmethod
    def close(self, cancel: bool = True) -> None:
        """Stop and remove every sandbox; queued jobs are cancelled unless `cancel` is False."""

    # -- programs in other languages (the judge) ----------------------------------------------------
    def image_language(self) -> str:
        """The language whose image this executor's containers run (python: passk's own)."""
        return image_of(self.settings.language or "python")

    def routed(self, job: Job) -> "tuple[Executor | None, Job]":
        """(the executor that runs `job`, the job as it runs): an io program in a language whose toolchain
        is in another image goes to a sibling executor of that image (made on first use, with this one's
        limits, settings and run), and a judged problem's checker program comes with it (built once)."""
        if self._closed:
            raise HarnessError(f"this {self._noun} is closed")
        spec = job.problem.judge
        if spec is not None and spec.checker.protocol not in SUPERVISOR_PROTOCOLS and not spec.emit and job.checker is None:
            job = replace(job, checker=self.checker_program(spec.checker))
        if job.problem.channel == "repo":
            return self._repo_sibling(job), job
        if job.problem.channel == "project":
            return self._project_sibling(job), job
        if job.problem.channel != "io":
            return None, job
        image = image_of(job.language(self.settings.io_python))
        if image == self.image_language():
            return None, job
        return self._sibling(image, lambda: replace(self.settings, language=image), self.limits), job

    def _sibling(self, key: str, settings, limits) -> "Executor":
        """The sibling executor `key` (made on first use from `settings()` and `limits`, with this one's run,
        within this executor's slots)."""
        with self._lock:
            sibling = self._siblings.get(key)
            if sibling is None:
                if self._closed:
                    raise HarnessError(f"this {self._noun} is closed")
                sibling = self._siblings[key] = type(self)(limits, settings(), run_id=self.run_id, evalplus=self.evalplus)
                sibling._share_slots(self)
        return sibling

    def _repo_sibling(self, job: Job) -> "Executor":
        """The executor of a repository task's environment (one image per environment): made on first use,
        with the task's own limits, a fresh container per candidate, within this executor's slots."""
        from harness.inputs.repos.recipes import to_settings
        task = job.problem.repo
        if self.settings.repo_environment is not None and self.settings.repo_environment.get("key") == task.env.key:
            return None
        # its containers sized for the job's own limits where it carries some (an audit's relaxed ones)
        return self._sibling("repo:" + task.env.key, lambda: replace(
            self.settings, isolation="fresh", language=None, environment="none",
            repo_environment=to_settings(task.env, task.repos_dir, task.snapshots)), job.limits or task.limits)

    def _project_sibling(self, job: Job) -> "Executor":
        """The executor of a language's projects (its project image, containers/projects/<language>/): made on
        first use, with the projects' own limits, within this executor's slots. Its containers take one
        candidate after another (the toolchain stays warm; each job's directory and processes are removed)."""
        task = job.problem.project
        if self.settings.project == task.language:
            return None
        return self._sibling("project:" + task.language, lambda: replace(
            self.settings, language=None, environment="none", project=task.language), job.limits or task.limits)

    def unbuildable_row(self, job: Job, why: str) -> ResultRow:
        """The row of a candidate whose environment cannot be built on this machine: the environment's
        error (permanent: a rerun on this machine does not change it), never the candidate's failure."""
        from dataclasses import asdict
        from harness.core import text
        limits = job.limits or (job.problem.repo.limits if job.problem.channel == "repo" else self.limits)
        row = ResultRow(task_id=job.sample.task_id, sample_index=job.sample.sample_index, status="error",
                        reason="environment_error", detail=text.clean("the environment cannot be built here: " + why),
                        limits={**asdict(limits), "network": "none", "runtime": self.settings.runtime,
                                "isolation": "fresh", "image": None, "image_id": None},
                        verdict_channel=job.problem.channel, channel_detail={"step": "environment"})
        row.language = job.problem.language
        return job.stamp(row, 1, self.run_id)

    def _share_slots(self, parent: "Executor") -> None:
        """A sibling runs its jobs within its parent's slots: as many candidates at once as the run's
        workers, whichever image they run in (an executor without slots, Ray's, leaves them None)."""
        self._slots = parent._slots
        self._overflow = parent._overflow

    def languages_facts(self) -> dict:
        """The facts of every sibling executor, by image (the manifest records them)."""
        return {name: sib.facts for name, sib in self._siblings.items() if sib.facts}

    def _close_siblings(self, cancel: bool = True) -> None:
        for sib in list(self._siblings.values()):
            sib.close(cancel)

    def checker_program(self, checker) -> dict:
        """A checker program as jobs send it (containers/box/judge.py): a Python checker's source, or a C or
        C++ checker compiled once per run (statically, in the C++ image) by content hash. A checker that does
        not compile is the problem's fault: InputError naming it."""
        key = checker.sha256
        with self._checker_lock:
            held = self._checkers.get(key)
            if held is not None:
                return held
            if checker.language == "python":
                held = {"files": dict(checker.files), "argv": ["python3", "-S", "{dir}/" + checker.files[0][0]],
                        "sha256": key}
            elif checker.language in ("c", "cpp"):
                binary = self._build_checker(checker)
                held = {"files": {"checker": base64.b64encode(binary).decode()}, "base64": True,
                        "argv": ["{dir}/checker"], "sha256": key}
            elif checker.language == "buildrun":   # what its build script left, run as ./run
                files = self._build_checker(checker)
                held = {"files": {name: base64.b64encode(data).decode() for name, data in files.items()},
                        "base64": True, "argv": ["{dir}/run"], "sha256": key}
            else:
                raise InputError(f"a checker in {checker.language!r}: passk runs checkers in C, C++, Python or "
                                 "build/run scripts")
            self._checkers[key] = held
            return held

    def _build_checker(self, checker):
        """A C or C++ checker's binary (bytes), or a build/run directory's files after its build ({name: bytes}),
        built in the C++ image."""
        from harness.inputs.judge import JudgeSpec, JudgeTest, checker_source
        emit = "*" if checker.language == "buildrun" else "checker"
        problem = Problem(f"checker/{checker.sha256[:12]}", "", "", None, channel="io", format="checker",
                          judge=JudgeSpec((JudgeTest("", ""),), 1.0, checker=checker, emit=emit))
        sample = Sample(problem.task_id, 0, checker_source(checker), "solution", "checker",
                        language="cpp" if checker.language == "buildrun" else checker.language)
        # a package's validators are built once per run and may be large (two -O2 builds of a 90 KB header
        # took 23 s on a quiet core): problemtools gives their build no time limit, passk CHECKER_BUILD_S
        build_s = max(self.limits.compile_timeout_s, CHECKER_BUILD_S)
        row = self.submit_job(Job(problem, sample, replace(self.limits, timeout_s=max(build_s, 60.0),
                                                           compile_timeout_s=build_s))).result()
        if row.artifact is None:
            what = "does not build" if checker.language == "buildrun" else "does not compile"
            # a build's last line says why it stopped (its warnings come first)
            last = next((line for line in reversed((row.stderr_tail or "").splitlines()) if line.strip()), "")
            raise InputError(f"the checker ({checker.files[0][0]}) {what}: {row.reason}: {row.detail[:300]}"
                             + (f" ... {last[:200]}" if last and last not in row.detail[:300] else ""))
        return row.artifact

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
               sample_index: int | None = None, fields: dict | None = None,
               language: str | None = None, start_by: float | None = None,
               overflow_at: float | None = None) -> "concurrent.futures.Future[ResultRow]":
        """Queue one program (the whole program: for a completion, pass problem.prompt + completion).
        Without a `sample_index`, candidates of a task are numbered in the order they are submitted.
        `language`: an io program's own (inputs/judge.py IO_LANGUAGES: cpp, c, java, ...; Python when None).
        `start_by`, `overflow_at`: a deadline's times (time.monotonic(); Job.start_by): a job not started by
        `start_by` fails with Late (this machine's executor; Ray's runs it whenever it can)."""
        if not isinstance(problem, Problem):
            raise InputError(f"expected a harness.Problem, got {type(problem).__name__}")
        if not isinstance(program, str):
            raise InputError(f"a program must be a string, got {type(program).__name__}")
        index = self._next_index(problem.task_id) if sample_index is None else sample_index
        if language is not None:
            from harness.inputs.samples import sample_language
            language = sample_language("submit", problem, language)
            if language is None:
                raise InputError(f"{problem.task_id}: only an io problem's programs name their own language")
        sample = Sample(problem.task_id, index, program, "solution", "api", dict(fields or {}), language=language)
        job = self._job(problem, sample, limits)
        if start_by is not None:
            job = replace(job, start_by=start_by, overflow_at=overflow_at)
        return self.submit_job(job)

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
