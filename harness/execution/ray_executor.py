"""Candidates on a Ray cluster: one long-lived actor per node, each holding passk's own pooled sandbox
(an Evaluator: `workers` warm containers on that node's Docker engine), fed by the driver.

The driver (the `passk` process) reads the inputs, sends jobs to the nodes in small batches, and alone
writes the run directory, as a local run does: the executor has the Evaluator's interface (start,
submit_job -> Future, interrupt, close: executor.py), so dispatch.execute(), calibration and resume are
the same code. What is retried within a node (a container that died, a supervisor fault) is the Evaluator's own policy; what
this file adds is the node's loss:

  - a node (or its actor) that dies takes its in-flight jobs with it; the driver sends them again to the
    nodes left, and their rows say so (`attempt` counts every dispatch that was lost). A candidate is
    never blamed: after `max_attempts` lost dispatches its row is `error infrastructure`, never `failed`.
  - delivery is therefore at least once; the result store keeps a candidate's first verdict.
  - a node whose sandbox image id differs from the driver's is refused (labels never mix images), with
    one line saying why; a cluster that cannot be reached, or with no usable node, stops the run (exit 1).

Each problem goes into Ray's object store once; a batch names its candidates' problems (a node runs its
batches concurrently, in any order) and a node fetches each the first time it needs it."""

from __future__ import annotations

import collections
import concurrent.futures
import os
import socket
import sys
import threading
import time
from dataclasses import replace

from harness.inputs.config import Limits, SandboxSettings
from harness.core.constants import ERROR, REASON_INFRASTRUCTURE
from harness.core.errors import HarnessError, InputError
from harness.core.extras import require
from harness.execution.evaluator import Evaluator
from harness.execution.executor import Executor, Stopped
from harness.execution.jobs import Job, limits_record
from harness.records.manifest import now
from harness.records.results import ResultRow

# A call to a node costs the driver about a millisecond whatever it carries, so jobs go in batches sized
# to take about BATCH_S of the node's time at the rate it has shown (at least one job per warm container,
# at most MAX_BATCH); a node has up to IN_FLIGHT batches at once, so that it never waits for the driver.
# A batch's rows come back together: BATCH_S bounds how late a row is written.
BATCH_S = 0.3
MAX_BATCH = 256
IN_FLIGHT = 3
START_TIMEOUT_S = 1800.0 # a node's first start may build its images
STOP_WAIT_S = 30.0       # when stopping: how long batches in flight may still take to come back


def import_ray():
    """Ray, or exit 2 saying which extra installs it."""
    require("ray")
    import ray
    return ray


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


PROBE_TIMEOUT_S = 10.0


def _probe(address: str | None) -> None:
    """A cluster address (host:port, or ray://host:port) that takes no connection stops the run at once:
    Ray itself would keep retrying for minutes."""
    if not address or address in ("auto", "local"):
        return
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"ray address {address!r}: expected host:port or ray://host:port")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S).close()
    except OSError as e:
        raise HarnessError(f"cannot reach the Ray cluster at {address}: {e.strerror or e}") from None


class NodeWorker:
    """The actor on one node (made remote by RayExecutor): an Evaluator on the node's Docker engine.

    Its containers carry a run label of their own (the run id and the node), so that closing one node's
    sandbox never touches another's on a shared engine; rows carry the run's own id and the node."""

    def __init__(self, limits: Limits, settings: SandboxSettings, run_id: str, node: str):
        self.node = node
        self.run_id = run_id
        self.problems: dict = {}
        self.ev = Evaluator(limits, replace(settings, executor="local", ray_address=None),
                            run_id=f"{run_id}-{node}")

    def start(self) -> dict:
        facts = self.ev.start()
        return {"node": self.node, "hostname": socket.gethostname(), "pid": os.getpid(),
                "workers": self.ev.settings.workers, "facts": facts}

    def run_batch(self, items: list, problems: dict) -> list:
        """Rows for (task_id, sample, limits, note, lost, differential key) items, in order; None for a job
        stopped before it ran. `problems` holds object refs of the batch's problems (and EvalPlus parts)."""
        import ray
        wanted = [(task_id, ref) for task_id, ref in problems.items() if task_id not in self.problems]
        if wanted:   # each problem is in the object store once; a node fetches it the first time it needs it
            for (task_id, _), problem in zip(wanted, ray.get([ref for _, ref in wanted])):
                self.problems.setdefault(task_id, problem)
        futures = [self.ev.submit_job(Job(self.problems[task_id], sample, limits, note or {},
                                          self.problems[part] if part is not None else None))
                   for task_id, sample, limits, note, _, part in items]
        rows = []
        for (_, _, _, _, lost, _), future in zip(items, futures):
            try:
                row = future.result()
            except (Stopped, concurrent.futures.CancelledError):
                rows.append(None)
                continue
            row.attempt += lost
            row.node = self.node
            row.run_id = self.run_id
            rows.append(row)
        return rows

    def interrupt(self) -> None:
        self.ev.interrupt()

    def close(self) -> int:
        """Remove this node's containers, and any a dead passk process left on its engine."""
        self.ev.close()
        try:
            from harness.execution.sandbox.docker import connect, sweep
            return sweep(connect())
        except Exception:
            return 0


class _Node:
    def __init__(self, actor, info: dict):
        self.actor = actor
        self.info = info
        self.name = info["node"]
        self.workers = max(1, info["workers"])
        self.rate: float | None = None   # rows per second this node has returned (moving average)
        self.batches = 0                 # in flight

    @property
    def batch(self) -> int:
        if self.rate is None:
            return 2 * self.workers
        return max(self.workers, min(MAX_BATCH, int(self.rate * BATCH_S)))

    def returned(self, rows: int, seconds: float) -> None:
        """A batch of `rows` came back `seconds` after it was sent, with others in flight beside it."""
        rate = rows * max(1, self.batches + 1) / max(seconds, 1e-3)
        self.rate = rate if self.rate is None else 0.7 * self.rate + 0.3 * rate


class RayExecutor(Executor):
    """The executor over every usable node of a Ray cluster: the Evaluator's interface (submit, evaluate,
    stream, submit_job, start, close, `with`: executor.py), the same limits and labels.

        with RayExecutor(timeout_s=3, workers=2, ray_address="head:6379") as ev:   # workers per node
            rows = ev.evaluate([(problem, program), ...])"""

    def __init__(self, limits: Limits | None = None, settings: SandboxSettings | None = None, *,
                 run_id: str | None = None, **overrides):
        self.ray = import_ray()
        super().__init__(limits, settings, run_id=run_id, **overrides)
        self.settings = replace(self.settings, executor="ray")
        self._nodes: list[_Node] = []
        self._queue: collections.deque = collections.deque()   # (job, future, lost dispatches)
        self._cv = threading.Condition()
        self._inflight: dict = {}        # object ref -> (node, items, when sent)
        self._problem_refs: dict = {}    # task id -> (the problem, its copy in Ray's object store)
        self._dispatcher: threading.Thread | None = None
        self._stopping = False
        self._give_up_at = float("inf")  # once stopping: when to stop waiting for batches in flight
        self._owns_ray = False

    # -- lifetime ------------------------------------------------------------------------------
    def start(self) -> dict:
        if self._dispatcher is not None:
            return self.facts
        self._refuse_if_closed()
        ray = self.ray
        address = self.settings.ray_address or os.environ.get("RAY_ADDRESS")
        if not ray.is_initialized():
            if not address and threading.current_thread() is not threading.main_thread():
                # a new local cluster's processes are killed when the thread that started them ends (Ray
                # sets PR_SET_PDEATHSIG): the run would lose its cluster the moment this thread returned
                raise HarnessError("a new local Ray cluster must be started from the main thread; start this "
                                   "executor there, or give a cluster's address")
            _probe(address)
            try:
                # "local", not None: with None Ray joins whatever cluster /tmp/ray/ray_current_cluster names,
                # which a killed run leaves behind naming a dead one, and then waits for it without end
                ray.init(address=address or "local", logging_level="ERROR", log_to_driver=False,
                         **({} if address else {"include_dashboard": False}))
            except Exception as e:
                raise HarnessError(f"cannot reach the Ray cluster at {address or 'a new local cluster'}: "
                                   f"{_first_line(e)}") from None
            self._owns_ray = True
        try:
            self._start_nodes()
        except BaseException:
            self.close()
            raise
        self._dispatcher = threading.Thread(target=self._dispatch, name="passk-ray-dispatch", daemon=True)
        self._dispatcher.start()
        return self.facts

    def _reference_image(self) -> str | None:
        """The driver's own image id, where the driver has a Docker engine (built or checked here first,
        so that nodes sharing this engine find it); None without one: the first node's is the reference."""
        from harness.execution.sandbox.docker import connect, resolve_image
        try:
            client = connect()
        except Exception:
            return None
        return resolve_image(client, self.settings)["image_id"]

    def _start_nodes(self) -> None:
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        reference = self._reference_image()
        remote = ray.remote(NodeWorker)
        alive = [n for n in ray.nodes() if n.get("Alive")]
        if not alive:
            raise HarnessError("the Ray cluster has no live node")
        actors = []
        for n in alive:
            name = n["NodeID"][:16]
            actor = remote.options(num_cpus=0, max_concurrency=256, max_restarts=0,
                                   scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
                                   ).remote(self.limits, self.settings, self.run_id, name)
            actors.append((n, name, actor))
        starts = [actor.start.remote() for _, _, actor in actors]
        refused = []
        for (n, name, actor), ref in zip(actors, starts):
            where = f"node {name} ({n.get('NodeManagerAddress')})"
            try:
                info = ray.get(ref, timeout=START_TIMEOUT_S)
            except Exception as e:
                refused.append(f"{where}: its sandbox did not start: {_first_line(e)}")
                ray.kill(actor)
                continue
            image_id = info["facts"].get("image_id")
            if reference is None:
                reference = image_id
            if image_id != reference:
                refused.append(f"{where}: its image {image_id} is not the driver's {reference}; labels would "
                               "mix images (load the driver's image there: docker save | docker load)")
                ray.get(actor.close.remote())
                ray.kill(actor)
                continue
            info["address"] = n.get("NodeManagerAddress")
            self._nodes.append(_Node(actor, info))
        for line in refused:
            print(f"passk: refused {line}", file=sys.stderr)
        if not self._nodes:
            raise HarnessError("no Ray node could run the sandbox" + (f"; {refused[0]}" if refused else ""))
        first = self._nodes[0].info["facts"]
        self.facts = {**first, "executor": "ray", "ray_address": self.settings.ray_address,
                      "workers_total": sum(node.info["workers"] for node in self._nodes),
                      "nodes": [self._describe(node.info) for node in self._nodes],
                      **({"refused_nodes": refused} if refused else {})}
        self.facts.pop("swept_containers", None)

    @staticmethod
    def _describe(info: dict) -> dict:
        facts = info["facts"]
        return {"node": info["node"], "hostname": info["hostname"], "address": info.get("address"),
                "workers": info["workers"], "docker_server_version": facts.get("docker_server_version"),
                "image_id": facts.get("image_id")}

    def __enter__(self) -> "RayExecutor":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self, cancel: bool = True) -> None:
        if self._closed:
            return
        self._close_siblings(cancel)
        self._closed = True
        with self._cv:
            self._stopping = True
            self._give_up_at = min(self._give_up_at, time.monotonic() + STOP_WAIT_S)
            self._cancel_queued()
            self._cv.notify_all()
        if self._dispatcher is not None:
            self._dispatcher.join()
        ray = self.ray
        closing = []
        for node in self._nodes:
            try:
                closing.append(node.actor.close.remote())
            except Exception:
                pass
        for ref in closing:
            try:
                ray.get(ref, timeout=300)
            except Exception:
                pass   # a node that died took its actor; its engine's next passk run sweeps what it left
        for node in self._nodes:
            try:
                ray.kill(node.actor)
            except Exception:
                pass
        try:   # containers left on this machine's engine by a node that died (their owner is gone)
            from harness.execution.sandbox.docker import connect, sweep
            sweep(connect())
        except Exception:
            pass
        if self._owns_ray:
            ray.shutdown()

    def interrupt(self, timeout: float = 60.0) -> None:
        """After Ctrl-C: cancel what is queued, have every node finish what it is running (their rows are
        delivered), then stop dispatching."""
        with self._cv:
            self._cancel_queued()
        for node in self._nodes:
            try:
                node.actor.interrupt.remote()
            except Exception:
                pass
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._inflight and time.monotonic() < deadline:
                self._cv.wait(0.1)
            self._stopping = True
            self._give_up_at = min(self._give_up_at, time.monotonic() + STOP_WAIT_S)
            self._cv.notify_all()

    # -- submitting ----------------------------------------------------------------------------
    def submit_job(self, job: Job) -> "concurrent.futures.Future[ResultRow]":
        sibling, job = self.routed(job)
        if sibling is not None:
            return sibling.submit_job(job)
        self._ready_for_a_job(started=self._dispatcher is not None)
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._cv:
            self._queue.append((job, future, 0))
            self._cv.notify_all()
        return future

    def _cancel_queued(self) -> None:
        while self._queue:
            future = self._queue.popleft()[1]
            if not future.cancel() and not future.done():   # one waiting to be sent again
                future.set_exception(Stopped("stopped before it ran again"))

    # -- the dispatcher thread -----------------------------------------------------------------
    def _dispatch(self) -> None:
        ray = self.ray
        while True:
            with self._cv:
                self._fill()
                if self._stopping and (not self._inflight or time.monotonic() > self._give_up_at):
                    for _, entries, _ in self._inflight.values():   # a node that never answered
                        for _, future, _ in entries:
                            if not future.done():
                                future.set_exception(Stopped("stopped while its node did not answer"))
                    self._inflight.clear()
                    return
                if not self._inflight:
                    self._cv.wait(0.5)
                    continue
                refs = list(self._inflight)
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.05)
            for ref in ready:
                self._collect(ref)

    def _fill(self) -> None:
        """Send queued jobs to the nodes with room, least loaded first (holding the lock)."""
        if self._stopping:
            return
        while self._queue:
            node = min((n for n in self._nodes if n.batches < IN_FLIGHT), key=lambda n: n.batches, default=None)
            if node is None:
                return
            items, problems, entries = [], {}, []
            while self._queue and len(items) < node.batch:
                job, future, lost = self._queue.popleft()
                # (a job sent again after its node was lost is running already)
                if not (future.running() or future.set_running_or_notify_cancel()):
                    continue
                # every batch names its problems (in the object store): a node runs its batches
                # concurrently, in any order
                task_id = job.problem.task_id
                held = self._problem_refs.get(task_id)
                if held is None or held[0] is not job.problem:
                    held = self._problem_refs[task_id] = (job.problem, self.ray.put(job.problem))
                problems[task_id] = held[1]
                part = None   # an EvalPlus task's inputs, expected outputs and limits: in the store once too
                if job.differential is not None:
                    key = f"{task_id}\0{id(job.differential)}"
                    held = self._problem_refs.get(key)
                    if held is None or held[0] is not job.differential:
                        held = self._problem_refs[key] = (job.differential, self.ray.put(job.differential))
                    problems[key], part = held[1], key
                items.append((task_id, job.sample, job.limits, job.note or None, lost, part))
                entries.append((job, future, lost))
            if not items:
                continue
            ref = node.actor.run_batch.remote(items, problems)
            node.batches += 1
            self._inflight[ref] = (node, entries, time.monotonic())

    def _collect(self, ref) -> None:
        ray = self.ray
        with self._cv:
            node, entries, sent = self._inflight.pop(ref)
            node.batches -= 1
        try:
            rows = ray.get(ref)
        except Exception as e:   # the node, its actor, or its sandbox as a whole is gone
            self._lose(node, e, entries)
            return
        with self._cv:
            node.returned(len(entries), time.monotonic() - sent)
        for (_, future, _), row in zip(entries, rows):
            if row is None:
                future.set_exception(Stopped("stopped before it ran"))
            else:
                future.set_result(row)
        with self._cv:
            self._cv.notify_all()

    def _lose(self, node: _Node, error: BaseException, entries: list) -> None:
        """A node failed: take it out, and send what it was running again, to the nodes left."""
        with self._cv:
            if node in self._nodes:
                self._nodes.remove(node)

                print(f"passk: lost Ray node {node.name} ({_first_line(error)}); its candidates run again on "
                      f"the {len(self._nodes)} node(s) left", file=sys.stderr)
                self.facts.setdefault("lost_nodes", []).append({"node": node.name, "why": _first_line(error),
                                                                "at": now()})
            again = []
            for job, future, lost in entries:
                if lost + 1 >= self.settings.max_attempts:
                    future.set_result(self._error_row(job, lost + 1, node.name, error))
                else:
                    again.append((job, future, lost + 1))
            # the lost node's in-flight batches each arrive here, and go to the front: they were sent first
            for item in reversed(again):
                self._queue.appendleft(item)
            if not self._nodes:
                self._fatal = HarnessError(f"every Ray node failed; the last: {node.name}: {_first_line(error)}")
                for _, future, _ in list(self._queue):
                    if not future.done():
                        future.set_exception(self._fatal)
                self._queue.clear()
                for _, es, _ in list(self._inflight.values()):
                    for _, future, _ in es:
                        if not future.done():
                            future.set_exception(self._fatal)
                self._inflight.clear()
            self._cv.notify_all()

    def _error_row(self, job: Job, attempts: int, node: str, error: BaseException) -> ResultRow:
        row = ResultRow(job.sample.task_id, job.sample.sample_index, ERROR, reason=REASON_INFRASTRUCTURE,
                        detail=f"the Ray node running it was lost {attempts} times; last: {node}: {_first_line(error)}"[:1000])
        row.limits = limits_record(job.limits or self.limits, self.facts)
        row.verdict_channel = job.problem.channel
        row.node = node
        return job.stamp(row, attempts, self.run_id)

