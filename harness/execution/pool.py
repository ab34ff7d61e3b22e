"""Jobs in warm sandboxes: a Pool turns a job into the line the supervisor reads and its result into a typed
row, with retries for infrastructure faults; a Lane is one worker's containers (the one in use, the next
one starting in the background). Generic over what the rows are for: a run appends them to
results.jsonl, an audit or a calibration keeps them in memory. Every row carries the limits that applied."""

from __future__ import annotations

import base64
import concurrent.futures
import json
import threading
import time

from harness.core import text
from harness.core.constants import ERROR, FAILED, LABELS, PASSED, REASON_INFRASTRUCTURE, TIMED_OUT
from harness.core.errors import HarnessError, SandboxUnavailableError
from harness.execution.jobs import Job, host_wait_s, judge_limits, limits_record
from harness.inputs import judge, languages, projects
from harness.inputs.config import Limits, SandboxSettings
from harness.inputs.libraries import missing_hint
from harness.records.manifest import now
from harness.records.results import ResultRow
from harness.inputs import grading
from harness.inputs.repos import verdict as repo_verdict

# Errors the supervisor reports that are faults of the sandbox, not of the job: retried in a new container.
RETRYABLE_REASONS = {"tester_died", "tester_fault"}
# A wall-clock backstop that ended a program the machine kept off the CPU (box/verdicts.py, stalled) is the
# machine's doing: the job runs again, at most this many times, then stays `error machine_stall`.
STALL_RERUNS = 2


def _number(value):
    """A measurement from the supervisor: a number or None, never anything else."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Pool:
    def __init__(self, backend, base: Limits, settings: SandboxSettings, facts: dict):
        self.backend = backend
        self.base = base
        self.settings = settings
        self.facts = facts
        self._records: dict[Limits, dict] = {}  # one limits record per distinct Limits, shared by rows
        self._encoded: dict[tuple, tuple] = {}   # (problem, limits) -> the problem's part of a job line
        self.stop = threading.Event()
        # Starts and stops containers off the workers' path (Lane); shut down by `execute`.
        self.background = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, settings.workers),
                                                                thread_name_prefix="passk-container")
        self._faults_in_a_row = 0
        self._faults_lock = threading.Lock()
        # a repository task's instance snapshot (environments/instances.py), by problem: its name, or the
        # result of a set-up that failed (every candidate of the instance gets it: the environment's error)
        self._instances: dict[int, str] = {}
        self._instance_failures: dict[int, dict] = {}
        # With no job succeeding in between, this many infrastructure faults stop the run instead
        # of burning every candidate's attempts on a sandbox that cannot work.
        self.max_faults_in_a_row = 3 * settings.workers + settings.max_attempts

    def _fault(self, detail: str) -> None:
        with self._faults_lock:
            self._faults_in_a_row += 1
            if self._faults_in_a_row >= self.max_faults_in_a_row:
                raise HarnessError(f"the sandbox failed {self._faults_in_a_row} times in a row without running "
                                   f"any candidate; last fault: {detail}")

    def _count(self, key: str) -> None:
        """A count the run's manifest reports (sandbox.<key>)."""
        with self._faults_lock:
            self.facts[key] = int(self.facts.get(key) or 0) + 1

    def _success(self) -> None:
        with self._faults_lock:
            self._faults_in_a_row = 0

    def limits_for(self, job: Job) -> Limits:
        """The limits a job runs under: its own, a judged problem's (inputs/judge.py), or the run's."""
        if job.limits is not None:
            return job.limits
        if job.problem.channel == "repo":
            return job.problem.repo.limits
        if job.problem.channel == "project":
            return job.problem.project.limits
        if job.problem.judge is not None:
            return judge_limits(self.base, job.problem.judge)
        return self.base

    def _problem_part(self, job: Job) -> dict:
        """What the supervisor takes of the problem (box/protocol.py): the channel, the limits, and what
        the verdict channel needs."""
        p = job.problem
        limits = self.limits_for(job)
        out = {"channel": p.channel, "limits": self.backend.supervisor_limits(limits)}
        if p.channel == "repo":
            snapshot = self._instances.get(id(p))
            out["repo"] = (p.repo.job_part(instance=snapshot) if snapshot else
                           p.repo.job_part(base64.b64encode(p.repo.tree.path.read_bytes()).decode()))
        elif p.channel == "project":
            out["project"] = projects.job_part(p.project.exercise, p.project.reference)
        elif p.channel == "io":
            spec = p.judge
            if spec is None:
                out.update(tests=[{"input": i, "output": o} for i, o in p.tests], compare=p.compare, runner=p.runner)
            else:
                out["limits"]["stack_bytes"] = int(spec.memory_mb) << 20
                out["limits"]["memory_mb"] = int(spec.memory_mb)
                out.update(tests=[{"input": t.input, "output": t.answer, "name": t.name, "group": t.group,
                                   "flags": list(t.flags)} for t in spec.tests],
                           compare=spec.checker.rule, runner="script",
                           judge={"time_limit_s": float(spec.time_limit_s), "stop": "groups" if spec.scoring else "first",
                                  "groups": [{"on_reject": g.on_reject} for g in spec.groups],
                                  "file_io": ({"input": spec.file_io[0], "output": spec.file_io[1]} if spec.file_io else None),
                                  "checker": self._checker_part(job, spec), "emit": spec.emit,
                                  "interactive": spec.interactive, "capture": int(spec.capture)})
        elif p.language != "python":
            lang = languages.LANGUAGES[p.language]
            test, files = languages.glue(p.language, p.task_id, p.prompt, p.test)
            out.update(test=test, language=p.language,
                       build={"language": p.language, "source": lang.source, "files": files,
                              "env": languages.run_env(lang, self.settings.runtime),
                              "steps": languages.steps(p.language, self.backend.compile_limits(limits),
                                                       out["limits"], self.settings.commands, limits.cpus)})
        elif p.runner == "evalplus":
            if job.differential is None:
                raise HarnessError(f"{p.task_id}: an EvalPlus task's job needs its ground truth (groundtruth.py)")
            out.update(prompt="", test="", entry_point=p.entry_point, runner="evalplus", evalplus=job.differential)
            # the host's deadline: both phases, each possibly run again one input per call
            out["limits"] = dict(out["limits"], timeout_s=2 * sum(ph["cap_s"] for ph in job.differential["phases"]))
        else:
            out.update(prompt=p.prompt, test=p.test, entry_point=p.entry_point, runner=p.runner, main=p.main)
        return out

    def _checker_part(self, job: Job, spec) -> dict:
        """A judged problem's checker as the supervisor runs it: a rule or the default validator (run in the
        supervisor), or a program with its own limits, run as the checker's user."""
        checker = spec.checker
        out = {"protocol": checker.protocol, "flags": list(checker.flags), "rule": checker.rule}
        if checker.protocol in judge.SUPERVISOR_PROTOCOLS or spec.emit:
            return out
        if job.checker is None:
            raise HarnessError(f"{job.problem.task_id}: a checker program's job needs the program (Executor.checker_program)")
        limits = Limits(timeout_s=checker.time_s, memory_mb=checker.memory_mb, output_bytes=8 << 20,
                        cpus=self.base.cpus, pids=self.base.pids, tmpfs_mb=self.base.tmpfs_mb)
        # problemtools runs its validators with the stack unbounded: here, as large as their memory (a
        # recursive validator of a real package had crashed with SIGSEGV at the default 8 MB)
        out["limits"] = {**self.backend.supervisor_limits(limits), "job_memory_kb": int(checker.memory_mb) * 1024,
                         "stack_bytes": int(checker.memory_mb) << 20}
        out["program"] = job.checker
        return out

    def _io_build(self, job: Job, language: str) -> dict | None:
        """An io program's build in another language than CPython (inputs/judge.py), with the compile limits."""
        limits = self.limits_for(job)
        spec = job.problem.judge
        if spec is not None and spec.emit:
            return judge.checker_build(spec.checker, self.backend.compile_limits(limits))
        file_name = str(job.sample.extra.get("file") or "").rsplit("/", 1)[-1] or None
        dialect, includes = (spec.dialect, spec.includes) if spec is not None else ("passk", ())
        return judge.io_build(language, job.sample.program or "", self.backend.compile_limits(limits), limits.cpus,
                              limits.memory_mb, file_name, self.settings.runtime, dialect, includes)

    def encoded(self, job: Job) -> tuple[dict, bytes]:
        """The job's header (id, limits) and its whole line as sent: the problem's part (tests, prompt,
        limits) is encoded once per problem and limits, not once per candidate."""
        key = (id(job.problem), job.limits, id(job.differential), id(job.checker))
        cached = self._encoded.get(key)
        if cached is None or cached[0] is not job.problem or cached[3] is not job.differential:
            if len(self._encoded) >= 4096:
                self._encoded.clear()
            part = self._problem_part(job)
            cached = self._encoded[key] = (job.problem, {**part["limits"], "host_wait_s": host_wait_s(part)},
                                           json.dumps(part)[1:].encode(), job.differential)
        s = job.sample
        ident = f"{s.task_id}#{s.sample_index}"
        extra, header = b"", cached[1]
        language = "python"
        if job.problem.channel == "io":
            language = job.language(self.settings.io_python)
            build = self._io_build(job, language)
            if build is not None:
                extra = b'"build": ' + json.dumps(build).encode() + b", "
                compiling = sum(float((st.get("limits") or {}).get("timeout_s", 0.0)) for st in build["steps"][:-1])
                header = {**header, "host_wait_s": header["host_wait_s"] + compiling}
        line = b"".join((b'{"id": ', json.dumps(ident).encode(), b', "code": ',
                         json.dumps(job.problem.program_text(s.program, language)).encode(), b", ", extra, cached[2]))
        return {"id": ident, "limits": header}, line

    def run_one(self, job: Job, lane: "Lane", aborted: threading.Event | None = None):
        """The job's row; None when the run stops first, or when `aborted` is set while it runs (its
        container is then killed by Lane.kill: no row, never a failed one)."""
        refused = repo_verdict.before_running(job.problem.repo, job.sample) if job.problem.channel == "repo" else None
        if refused is not None:   # an empty, oversized or (strict) test-touching patch: failed, never skipped
            return self.make_row(job, refused, 1)
        if job.sample.program is None:  # no code could be taken from the sample's text: failed, not dropped
            return self.make_row(job, {"status": "failed", "reason": "no_code",
                                       "detail": "no code block in the sample's text (extract_code is on)",
                                       "verdict_channel": "none"}, 1)
        last = ""
        stalls = 0
        for attempt in range(1, self.settings.max_attempts + 1):
            if self.stop.is_set() or (aborted is not None and aborted.is_set()):
                return None
            try:
                if job.problem.channel == "repo" and self.backend.snapshots_image_id is not None:
                    failed = self._ensure_instance(job)
                    if failed is not None:
                        return self.make_row(job, failed, attempt)
                session = lane.session()
                # the session may have been starting (the lane's last container was killed or retired):
                # an abort in that wait found no container to kill, so it is seen here, before the run
                if aborted is not None and aborted.is_set():
                    return None
                result = session.run(*self.encoded(job))
                # a job with a deadline is not run again: its caller cannot wait another whole run (passk
                # serve's /run_code answers a stall with a 504, which its clients retry)
                while (result.get("status") == ERROR and result.get("reason") == "machine_stall"
                       and stalls < STALL_RERUNS and not self.stop.is_set() and job.start_by is None):
                    stalls += 1
                    self._count("machine_stall_reruns")
                    result = session.run(*self.encoded(job))
                if result.get("status") == ERROR and result.get("reason") in RETRYABLE_REASONS:
                    raise SandboxUnavailableError(f"{result.get('reason')}: {result.get('detail', '')}")
            except SandboxUnavailableError as e:
                last = str(e)
                lane.retire()
                if aborted is not None and aborted.is_set():
                    return None
                if not self.backend.healthy():
                    raise HarnessError(f"the sandbox infrastructure stopped answering ({last})") from None
                self._fault(last)
                time.sleep(min(2.0, 0.25 * attempt))
                continue
            self._success()
            if stalls and isinstance(result.get("channel_detail"), dict):
                result["channel_detail"]["machine_stall_reruns"] = stalls
            if (not result.get("healthy", False) or self.settings.isolation == "fresh"
                    or session.jobs_run >= self.settings.jobs_per_container):
                lane.retire()
            elif session.jobs_run >= self.settings.jobs_per_container - SPARE_LEAD:
                lane.prepare_next()
            return self.make_row(job, result, attempt)
        return self.make_row(job, {"status": ERROR, "reason": REASON_INFRASTRUCTURE, "detail": last[:1000]},
                             self.settings.max_attempts)

    def _ensure_instance(self, job: Job) -> dict | None:
        """The job's instance snapshot exists on this machine (made once, in a container of its own, the
        first time any worker needs it; the others wait for it): None, or the result every candidate of
        the instance gets when its set-up failed (the environment's error, never the candidate's). Raises
        SandboxUnavailableError for a fault of the sandbox (the attempt is retried)."""
        from harness.environments import instances
        p = job.problem
        if id(p) in self._instances:
            return None
        if id(p) in self._instance_failures:
            return self._instance_failures[id(p)]
        image_id = self.backend.snapshots_image_id
        task = p.repo
        part = task.job_part(mode="snapshot")
        name = instances.name(image_id, task.tree.base, part)
        if instances.find(image_id, name) is None:
            with instances.building(image_id, name):
                if instances.find(image_id, name) is None:
                    failed = self._make_instance(job, image_id, name)
                    if failed is not None:
                        self._instance_failures[id(p)] = failed
                        return failed
        self._instances[id(p)] = name
        return None

    def _make_instance(self, job: Job, image_id: str, name: str) -> dict | None:
        from harness.environments import instances
        task = job.problem.repo
        limits = self.limits_for(job)
        part = {"channel": "repo", "limits": self.backend.supervisor_limits(limits),
                "repo": task.job_part(base64.b64encode(task.tree.path.read_bytes()).decode(), mode="snapshot")}
        ident = f"snapshot:{task.task.instance_id}"
        header = {"id": ident, "limits": {**part["limits"], "host_wait_s": host_wait_s(part)}}
        line = json.dumps({"id": ident, "code": "", **part}).encode()
        staged = instances.staging(image_id, name)
        session = self.backend.open_snapshot_session(str(staged))
        try:
            session.start()
            result = session.run(header, line)
        except BaseException:
            instances.discard(staged)
            raise
        finally:
            session.stop()
        self._count("instance_snapshots_made")
        detail = result.get("channel_detail") if isinstance(result.get("channel_detail"), dict) else {}
        if result.get("status") == PASSED and result.get("reason") == "snapshot_saved":
            instances.commit(image_id, name, staged, {
                "instance_id": task.task.instance_id, "image_id": image_id,
                "setup_s": detail.get("setup_s"), "tree_s": detail.get("tree_s"), "save_s": detail.get("save_s"),
                "venv_changed": detail.get("venv_changed"), "venv_deleted": detail.get("venv_deleted"),
                "made": now()})
            return None
        instances.discard(staged)
        if result.get("status") == ERROR and result.get("reason") in RETRYABLE_REASONS:
            raise SandboxUnavailableError(f"{result.get('reason')}: {result.get('detail', '')}")
        # the instance did not set up (its install failed, or ran out of the job's limits): the environment's
        return {"status": ERROR, "reason": "environment_error", "verdict_channel": "repo",
                "detail": "the instance did not set up before any patch: " + str(result.get("detail") or "")[:1500],
                "channel_detail": {**{k: v for k, v in detail.items() if isinstance(v, (int, float, str))},
                                   "step": "setup"}}

    def make_row(self, job: Job, result: dict, attempt: int) -> ResultRow:
        """A typed row from the supervisor's result. Every string in it may hold what a candidate chose
        (exception names and messages, output): each is bounded and made valid text here, whatever the
        container sent, so that writing the row can never fail and never carry structure."""
        row = ResultRow(task_id=job.sample.task_id, sample_index=job.sample.sample_index,
                        status=result.get("status", ERROR), reason=text.clean_reason(result.get("reason")),
                        detail=text.clean(result.get("detail")),
                        stdout_tail=text.clean(result.get("stdout_tail"), text.TAIL_CHARS),
                        stderr_tail=text.clean(result.get("stderr_tail"), text.TAIL_CHARS),
                        signal=text.clean_reason(result["signal"]) if result.get("signal") else None,
                        **{k: _number(result.get(k)) for k in ("wall_s", "cpu_s", "test_cpu_s", "peak_memory_kb",
                                                             "exit_code", "stdout_bytes", "stderr_bytes")})
        if row.status not in LABELS:
            row.status, row.reason = ERROR, "supervisor_sent_unknown_status"
        if row.status == FAILED and row.reason.startswith("exception:"):
            row.detail = missing_hint(row.reason, row.detail, self.facts.get("environment")) + row.detail
        limits = self.limits_for(job)
        record = self._records.get(limits)
        if record is None:
            record = self._records.setdefault(limits, limits_record(limits, self.facts))
        spec = job.problem.judge
        if spec is not None:   # what a judge applied: the exact CPU limit, its backstop, where they came from
            record = {**record, "time_limit_s": float(spec.time_limit_s), "wall_limit_s": spec.wall_limit_s,
                      "stack_mb": int(spec.memory_mb), "time_source": spec.time_source,
                      "python_expected": spec.python,   # the Python the format's limits assume (Kattis: PyPy)
                      "checker": {"protocol": spec.checker.protocol, "flags": list(spec.checker.flags),
                                  **({"language": spec.checker.language, "sha256": spec.checker.sha256,
                                      "time_s": spec.checker.time_s, "memory_mb": spec.checker.memory_mb}
                                     if spec.checker.language else {})},
                      **({"file_io": list(spec.file_io)} if spec.file_io else {})}
        if job.problem.channel == "io":
            language = job.language(self.settings.io_python)
            record = {**record, "language": language,
                      "commands": judge.io_commands(language, spec.dialect if spec is not None else "passk")} \
                if spec is not None or language != "python" else record
            row.language = language
        else:
            row.language = job.problem.language
        row.limits = {**record, **job.note} if job.note else record
        row.verdict_channel = text.clean_reason(result.get("verdict_channel")) or job.problem.channel
        detail = result.get("channel_detail")
        row.channel_detail = ({text.clean_reason(k): v for k, v in detail.items()
                               if isinstance(v, (int, str, float)) and not isinstance(v, bool)}
                              if isinstance(detail, dict) else {})
        if isinstance(result.get("tests"), list):
            kept = max(judge.MAX_TESTS_KEPT, len(spec.tests) if spec is not None else 0)   # whole, then compact
            row.tests = [_test_entry(t) for t in result["tests"][:kept] if isinstance(t, dict)]
            if spec is not None and row.status != ERROR:
                row.score, row.groups = grading.grade(spec, row.tests)
        if isinstance(result.get("captured"), list) and spec is not None and spec.capture:
            row.captured = [_captured(c, spec.capture) for c in result["captured"][:judge.MAX_TESTS_KEPT] if isinstance(c, dict)]
        if isinstance(result.get("artifact_b64"), str) and spec is not None and spec.emit:
            row.artifact = base64.b64decode(result["artifact_b64"])
        if isinstance(result.get("artifact_files_b64"), dict) and spec is not None and spec.emit == "*":
            row.artifact = {str(k): base64.b64decode(v) for k, v in result["artifact_files_b64"].items()
                            if isinstance(v, str)}
        if job.problem.channel == "repo":   # graded here, from the log and the runner's report (inputs/repos)
            repo_verdict.apply(row, job.problem.repo, job.sample, result)
        if job.problem.channel == "project":   # judged here, from the exit status and the runner's own account
            projects.apply(row, job.problem.project, job.sample, result)
        base_status = result.get("base_status")
        row.base_status = base_status if base_status in (PASSED, FAILED, TIMED_OUT) else None
        if isinstance(result.get("truth"), dict) and job.differential is not None and job.differential.get("mode") == "truth":
            row.ground_truth = result["truth"]
        return job.stamp(row, attempt, self.backend.run_id)


def _captured(c: dict, limit: int) -> dict:
    """One test's captured output as the container sent it (capture mode): bytes, bounded, and numbers."""
    def raw(key, cap):
        try:
            return base64.b64decode(c.get(key) or "", validate=True)[:cap]
        except (ValueError, TypeError):
            return b""
    out = {"stdout": raw("stdout_b64", limit), "stderr": raw("stderr_b64", 4096)}
    for key in ("stdout_bytes", "stderr_bytes", "exit_code", "cpu_s", "wall_s"):
        out[key] = _number(c.get(key))
    out["signal"] = text.clean_reason(c["signal"]) if c.get("signal") else None
    return out


def _test_entry(t: dict) -> dict:
    """One test's result as the container sent it: numbers as numbers, every string bounded and made text."""
    out = {}
    for key in ("i", "group", "time_s", "wall_s", "memory_kb", "score"):
        value = _number(t.get(key))
        if value is not None:
            out[key] = value
    for key, limit in (("verdict", 40), ("name", 80), ("detail", 300)):
        if t.get(key) is not None:
            out[key] = text.clean(t.get(key), limit)
    if isinstance(t.get("feedback"), dict):
        out["feedback"] = {text.clean(k, 40): text.clean(v, 500) for k, v in list(t["feedback"].items())[:4]}
    return out


# A pooled container is replaced after `jobs_per_container` candidates; its successor starts this many
# candidates earlier, in the background, so that the worker does not wait ~0.25 s for it.
SPARE_LEAD = 50


class Lane:
    """One worker slot's containers: the session in use and, when it is due to be replaced (or after a
    replacement, or always under --isolation fresh), the next one, started in the background. Retired
    sessions are stopped in the background too: a worker never waits for Docker to create or remove a
    container it could be running candidates in instead."""

    def __init__(self, backend, background: "concurrent.futures.Executor", slot: int = 0):
        self.backend = backend
        self.background = background
        self.slot = slot   # the worker slot whose jobs run here (the backend may keep its containers to its CPUs)
        self._current = None
        self._next: concurrent.futures.Future | None = None

    def _start(self):
        session = self.backend.open_session(self.slot)
        try:
            session.start()
        except BaseException:
            session.stop()
            raise
        return session

    def session(self):
        """The session to run in; a container that failed to start raises here, on the worker, where
        it counts as a fault like any other."""
        if self._current is None:
            upcoming, self._next = self._next, None
            self._current = upcoming.result() if upcoming is not None else self._start()
        return self._current

    def prepare_next(self) -> None:
        if self._next is None:
            self._next = self.background.submit(self._start)

    def kill(self) -> None:
        """From another thread: end the job the current session runs (its container is killed)."""
        current = self._current
        if current is not None:
            current.kill()

    def retire(self) -> None:
        """Stop the current session (in the background) and have the next one starting."""
        old, self._current = self._current, None
        if old is not None:
            self.background.submit(old.stop)
        self.prepare_next()

    def close(self) -> None:
        if self._current is not None:
            self._current.stop()
            self._current = None
        if self._next is not None and not self._next.cancel():
            try:
                self._next.result().stop()
            except Exception:
                pass  # it never started; the backend's sweep removes whatever is left
            self._next = None
