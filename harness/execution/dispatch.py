"""Which executor runs a run's jobs, and the loop that runs them: `execute` submits every job to the executor
the settings name (this machine's Evaluator, or a Ray cluster's), hands each row to the caller as it
finishes, and on Ctrl-C keeps the rows of the jobs already running. A third executor is one class with the
Executor interface (executor.py), one entry in EXECUTOR_CLASSES and its name in core.constants.EXECUTORS
(the names the run config and the CLI accept, checked at the edge, before this stage is imported)."""

from __future__ import annotations

import queue
import threading
from typing import Callable

from harness.execution.evaluator import Evaluator
from harness.execution.executor import Executor, Stopped
from harness.execution.jobs import Job
from harness.execution.progress import Progress
from harness.execution.ray_executor import RayExecutor
from harness.inputs.config import Limits, SandboxSettings
from harness.records.results import ResultRow

# The executors by the name a run's settings give (SandboxSettings.executor, --executor): one for each name
# of core.constants.EXECUTORS (tests/test_evaluator.py holds the two to each other).
EXECUTOR_CLASSES: dict[str, Callable[..., Executor]] = {"local": Evaluator, "ray": RayExecutor}


class _SubmitFailed:
    """What the submitting thread hands the loop when submitting a job raised: the loop raises it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


STOP_GRACE_S = 10.0   # on a stop, how long the candidates already running may take to finish (their rows kept)


def stop_grace_s() -> float:
    """STOP_GRACE_S, or PASSK_STOP_GRACE_S when it is a number ≥ 0."""
    import math
    import os
    try:
        value = float(os.environ.get("PASSK_STOP_GRACE_S", STOP_GRACE_S))
    except ValueError:
        return STOP_GRACE_S
    return value if math.isfinite(value) and value >= 0 else STOP_GRACE_S


def make_executor(limits: Limits, settings: SandboxSettings, run_id: str) -> Executor:
    """The executor a run's settings ask for, not started."""
    return EXECUTOR_CLASSES[settings.executor](limits, settings, run_id=run_id)


def execute(jobs: list[Job], base: Limits, settings: SandboxSettings, run_id: str,
            on_row: Callable[[ResultRow], None], on_prepared: Callable[[dict], None] | None = None,
            progress: str = "quiet", total: int | None = None, initial: int = 0, evaluator=None) -> dict:
    """Run `jobs` and hand each row to `on_row` (in the calling thread) as it finishes. Containers are
    sized by `base`; a job may carry stricter or equal limits of its own. Returns the backend's facts.
    With `evaluator` (started, owned by the caller) its warm containers are used and left running.
    On Ctrl-C the jobs already running finish and are handed over, then KeyboardInterrupt propagates."""
    ev = evaluator or make_executor(base, settings, run_id)
    try:
        facts = ev.start()
        if on_prepared is not None:
            on_prepared(facts)
        if not jobs:
            return facts
        bar = Progress(total if total is not None else len(jobs), initial, progress)
        done: queue.Queue = queue.Queue()
        stop = threading.Event()

        def submit_all() -> None:
            # Submitting can take minutes (a repository environment's image is built when its first job comes):
            # it runs beside the loop below, so that every row is handed over (and written) as it finishes,
            # never held until the last job is submitted.
            try:
                for job in jobs:
                    if stop.is_set():
                        return
                    ev.submit_job(job).add_done_callback(done.put)
            except BaseException as e:   # handed to the loop, which raises it there
                done.put(_SubmitFailed(e))

        submitter = threading.Thread(target=submit_all, name="passk-submit", daemon=True)
        submitter.start()
        left = len(jobs)

        def take(future) -> None:
            if isinstance(future, _SubmitFailed):
                raise future.error
            if future.cancelled() or isinstance(future.exception(), Stopped):
                return
            if future.exception() is not None:
                raise future.exception()
            row = future.result()
            on_row(row)
            bar.update(row.status)

        try:
            while left:
                future = done.get()
                left -= 1
                take(future)
        except KeyboardInterrupt:
            stop.set()
            grace = stop_grace_s()
            bar.note(f"passk: interrupted; finishing the candidates already running (at most {grace:g} s; "
                     "interrupt again to stop now)…")
            ev.interrupt(grace)
            while True:  # every job that was running has finished: keep its row
                try:
                    take(done.get_nowait())
                except queue.Empty:
                    break
            raise
        except BaseException:
            stop.set()
            raise
        finally:
            bar.close()
        return facts
    finally:
        if evaluator is None:
            ev.close()
