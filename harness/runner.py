"""Load inputs, build jobs, execute them in sandboxes, record results, score.

Each worker thread owns one session (a warm container). The main thread alone writes
results.jsonl, so rows are appended whole and in the order they finish."""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .config import RunConfig
from .constants import ERROR, LABELS, MANIFEST_FILE, REASON_INFRASTRUCTURE, RESULTS_FILE, SCORE_FILE
from .errors import HarnessError, InputError, SandboxUnavailableError
from .jsonl import sha256_path
from .manifest import base_manifest, now, write_json
from .problems import Problem, load_problems
from .results import ResultRow, ResultStore
from .samples import Sample, load_samples
from .sandbox import get_backend
from .scoring import score_rows



@dataclass(frozen=True)
class Job:
    problem: Problem
    sample: Sample

    @property
    def key(self) -> tuple[str, int]:
        return (self.sample.task_id, self.sample.sample_index)

    def payload(self, limits: dict) -> dict:
        return {"id": f"{self.sample.task_id}#{self.sample.sample_index}", "code": self.sample.program,
                "prompt": self.problem.prompt, "test": self.problem.test,
                "entry_point": self.problem.entry_point, "limits": limits}


@dataclass
class RunOutcome:
    out_dir: Path
    score: dict
    ran: int
    reused: int
    errors_remaining: int


def build_jobs(problems: dict[str, Problem], samples: list[Sample]) -> list[Job]:
    return [Job(problems[s.task_id], s) for s in samples]


def _comparable(config: dict) -> dict:
    """The settings that can change a label. Output place, worker count, k and scoring options may
    differ between a run and its resumption."""
    c = json.loads(json.dumps(config))
    for key in ("out", "k", "scoring"):
        c.pop(key, None)
    c.get("sandbox", {}).pop("workers", None)
    return c


def _check_resume(out: Path, config: dict, inputs: dict) -> dict | None:
    path = out / MANIFEST_FILE
    if not path.exists():
        if (out / RESULTS_FILE).exists():
            raise InputError(f"{out / RESULTS_FILE}: results without a manifest; use an empty --out directory")
        return None
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: unreadable manifest ({e}); use an empty --out directory") from None
    for name in ("problems", "samples"):
        if old.get("inputs", {}).get(name, {}).get("sha256") != inputs[name]["sha256"]:
            raise InputError(f"{out}: holds a run on different {name} (sha256 differs); use another --out")
    if _comparable(old.get("config", {})) != _comparable(config):
        raise InputError(f"{out}: holds a run with different settings (see its {MANIFEST_FILE}); use another --out")
    return old


class _Pool:
    def __init__(self, cfg: RunConfig, backend, limits_record: dict):
        self.cfg = cfg
        self.backend = backend
        self.limits_record = limits_record
        self.supervisor_limits = backend.supervisor_limits()
        self.stop = threading.Event()
        self._faults_in_a_row = 0
        self._faults_lock = threading.Lock()
        # With no job succeeding in between, this many infrastructure faults stop the run instead
        # of burning every candidate's attempts on a sandbox that cannot work.
        self.max_faults_in_a_row = 3 * cfg.sandbox.workers + cfg.sandbox.max_attempts

    def _fault(self, detail: str) -> None:
        with self._faults_lock:
            self._faults_in_a_row += 1
            if self._faults_in_a_row >= self.max_faults_in_a_row:
                raise HarnessError(f"the sandbox failed {self._faults_in_a_row} times in a row without running "
                                   f"any candidate; last fault: {detail}")

    def _success(self) -> None:
        with self._faults_lock:
            self._faults_in_a_row = 0

    def run_one(self, job: Job, session):
        settings = self.cfg.sandbox
        last = ""
        for attempt in range(1, settings.max_attempts + 1):
            if self.stop.is_set():
                return None, session
            try:
                if session is None:
                    session = self.backend.open_session()
                    session.start()
                result = session.run(job.payload(self.supervisor_limits))
            except SandboxUnavailableError as e:
                last = str(e)
                if session is not None:
                    session.stop()
                    session = None
                if not self.backend.healthy():
                    raise HarnessError(f"the sandbox infrastructure stopped answering ({last})") from None
                self._fault(last)
                time.sleep(min(2.0, 0.25 * attempt))
                continue
            self._success()
            replace = (not result.get("healthy", False) or settings.isolation == "fresh"
                       or session.jobs_run >= settings.jobs_per_container)
            if replace:
                session.stop()
                session = None
            return self.make_row(job, result, attempt), session
        row = self.make_row(job, {"status": ERROR, "reason": REASON_INFRASTRUCTURE, "detail": last[:1000]},
                            settings.max_attempts)
        return row, session

    def make_row(self, job: Job, result: dict, attempt: int) -> ResultRow:
        fields = ResultRow.__dataclass_fields__
        row = ResultRow(task_id=job.sample.task_id, sample_index=job.sample.sample_index,
                        status=result.get("status", ERROR),
                        **{k: result[k] for k in ("reason", "detail", "wall_s", "cpu_s", "test_cpu_s",
                                                  "peak_memory_kb", "exit_code", "signal", "stdout_tail",
                                                  "stderr_tail", "stdout_bytes", "stderr_bytes")
                           if k in result and k in fields})
        if row.status not in LABELS:
            row.status, row.reason = ERROR, f"supervisor sent unknown status {row.status!r}"
        row.limits = self.limits_record
        row.candidate_sha256 = job.sample.sha256
        row.sample = job.sample.row_fields()
        row.attempt = attempt
        row.run_id = self.backend.run_id
        row.finished_at = now()
        return row

    def worker(self, jobs: queue.Queue, results: queue.Queue):
        session = None
        try:
            while not self.stop.is_set():
                job = jobs.get()
                if job is None:
                    break
                row, session = self.run_one(job, session)
                if row is not None:
                    results.put(row)
        except BaseException as e:  # handed to the main thread, which stops the run
            results.put(e)
        finally:
            if session is not None:
                session.stop()
            results.put(None)


def _progress(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, initial=initial, unit="cand", dynamic_ncols=True, file=sys.stderr, disable=None)


def evaluate(cfg: RunConfig, progress: bool = True) -> RunOutcome:
    out = Path(cfg.out)
    problems = load_problems(cfg.problems)
    samples = load_samples(cfg.samples, problems)
    jobs = build_jobs(problems, samples)
    inputs = {"problems": {"path": str(cfg.problems), "sha256": sha256_path(Path(cfg.problems))},
              "samples": {"path": str(cfg.samples), "sha256": sha256_path(Path(cfg.samples))}}
    config = cfg.to_dict()
    out.mkdir(parents=True, exist_ok=True)
    old = _check_resume(out, config, inputs)
    store = ResultStore(out / RESULTS_FILE)
    done = store.finished()
    pending = [j for j in jobs if j.key not in done]
    reused = len(jobs) - len(pending)
    manifest = old or {**base_manifest(config, inputs), "run_id": uuid.uuid4().hex, "started_at": now()}
    try:
        if pending:
            _execute(cfg, manifest, out, store, pending, total=len(jobs), initial=reused, progress=progress)
    finally:
        store.close()
    score = score_rows(list(store.rows.values()), problem_ids=list(problems),
                       options=replace(cfg.scoring_options(), ks=tuple(cfg.k)))
    write_json(out / SCORE_FILE, score)
    manifest["finished_at"] = now()
    manifest["label_counts"] = score["labels"]
    write_json(out / MANIFEST_FILE, manifest)
    return RunOutcome(out, score, len(pending), reused, score["errors_remaining"])


def _execute(cfg: RunConfig, manifest: dict, out: Path, store: ResultStore, pending: list[Job],
             total: int, initial: int, progress: bool) -> None:
    backend = get_backend(cfg.sandbox.backend)(manifest["run_id"], cfg.limits, cfg.sandbox)
    try:
        facts = backend.prepare()
        sandbox_facts = {k: v for k, v in facts.items() if k != "swept_containers"}
        if "sandbox" in manifest and manifest["sandbox"].get("image_id") != facts["image_id"]:
            raise InputError(f"{out}: was started with image {manifest['sandbox'].get('image_id')}, "
                             f"now {facts['image_id']}; labels would not be comparable; use another --out")
        manifest["sandbox"] = sandbox_facts
        limits = cfg.limits
        limits_record = {**asdict(limits), "cpu_time_s": limits.effective_cpu_time_s,
                         "container_memory_mb": limits.container_memory_mb, "network": "none",
                         "container_pids": facts.get("container_pids"),
                         "runtime": facts["runtime"], "isolation": facts["isolation"],
                         "image": facts["image"], "image_id": facts["image_id"], "hash_seed": 0}
        manifest["limits"] = limits_record
        write_json(out / MANIFEST_FILE, manifest)
        pool = _Pool(cfg, backend, limits_record)
        try:
            _drive(pool, cfg, store, pending, total, initial, progress)
        finally:
            manifest["sandbox"]["image_python"] = backend.facts.get("image_python")
    finally:
        backend.close()


def _drive(pool: _Pool, cfg: RunConfig, store: ResultStore, pending: list[Job], total: int, initial: int,
           progress: bool) -> None:
    workers = min(cfg.sandbox.workers, len(pending))
    jobs: queue.Queue = queue.Queue(maxsize=2 * workers)
    results: queue.Queue = queue.Queue()
    threads = [threading.Thread(target=pool.worker, args=(jobs, results), daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()

    def feed():
        for job in pending:
            while not pool.stop.is_set():
                try:
                    jobs.put(job, timeout=0.2)
                    break
                except queue.Full:
                    continue
        for _ in threads:
            while True:
                try:
                    jobs.put(None, timeout=0.2)
                    break
                except queue.Full:
                    if pool.stop.is_set():
                        _drain(jobs)
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    bar = _progress(total, initial, progress)
    counts = {label: 0 for label in LABELS}
    fatal: BaseException | None = None
    finished_workers = 0
    try:
        while finished_workers < len(threads):
            try:
                item = results.get(timeout=0.5)
            except queue.Empty:
                continue
            if item is None:
                finished_workers += 1
            elif isinstance(item, BaseException):
                fatal = fatal or item
                pool.stop.set()
            else:
                store.append(item)
                counts[item.status] += 1
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(counts, refresh=False)
    except KeyboardInterrupt:
        pool.stop.set()
        print("\npassk: interrupted; finishing the candidates already running…", file=sys.stderr)
        _finish_after_stop(results, store, len(threads) - finished_workers)
        raise
    finally:
        if bar is not None:
            bar.close()
    if fatal is not None:
        raise fatal


def _drain(q: queue.Queue) -> None:
    try:
        while True:
            q.get_nowait()
    except queue.Empty:
        pass


def _finish_after_stop(results: queue.Queue, store: ResultStore, remaining_workers: int) -> None:
    """After Ctrl-C: keep every row that still arrives, then return once the workers are gone."""
    deadline = time.monotonic() + 60
    while remaining_workers and time.monotonic() < deadline:
        try:
            item = results.get(timeout=0.5)
        except queue.Empty:
            continue
        if item is None or isinstance(item, BaseException):
            remaining_workers -= item is None
        else:
            store.append(item)
