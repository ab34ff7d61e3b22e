"""Jobs in warm sandboxes: a Pool turns a job into the line the supervisor reads and its result into a typed
row, with retries for infrastructure faults; a Lane is one worker's containers (the one in use, the next
one starting in the background). Generic over what the rows are for: a run appends them to
results.jsonl, an audit or a calibration keeps them in memory. Every row carries the limits that applied."""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time

from harness.core import text
from harness.core.constants import ERROR, FAILED, LABELS, PASSED, REASON_INFRASTRUCTURE, TIMED_OUT
from harness.core.errors import HarnessError, SandboxUnavailableError
from harness.execution.jobs import Job, host_wait_s, limits_record
from harness.inputs import languages
from harness.inputs.config import Limits, SandboxSettings
from harness.inputs.environments import missing_hint
from harness.records.manifest import now
from harness.records.results import ResultRow

# Errors the supervisor reports that are faults of the sandbox, not of the job: retried in a new container.
RETRYABLE_REASONS = {"tester_died", "tester_fault"}


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
        # With no job succeeding in between, this many infrastructure faults stop the run instead
        # of burning every candidate's attempts on a sandbox that cannot work.
        self.max_faults_in_a_row = 3 * settings.workers + settings.max_attempts

    def _fault(self, detail: str) -> None:
        with self._faults_lock:
            self._faults_in_a_row += 1
            if self._faults_in_a_row >= self.max_faults_in_a_row:
                raise HarnessError(f"the sandbox failed {self._faults_in_a_row} times in a row without running "
                                   f"any candidate; last fault: {detail}")

    def _success(self) -> None:
        with self._faults_lock:
            self._faults_in_a_row = 0

    def _problem_part(self, job: Job) -> dict:
        """What the supervisor takes of the problem (box/protocol.py): the channel, the limits, and what
        the verdict channel needs."""
        p = job.problem
        out = {"channel": p.channel, "limits": self.backend.supervisor_limits(job.limits or self.base)}
        if p.language != "python":
            lang = languages.LANGUAGES[p.language]
            test, files = languages.glue(p.language, p.task_id, p.prompt, p.test)
            out.update(test=test, language=p.language,
                       build={"language": p.language, "source": lang.source, "files": files, "env": lang.env,
                              "steps": languages.steps(p.language, self.backend.compile_limits(job.limits or self.base),
                                                       out["limits"], self.settings.commands,
                                                       (job.limits or self.base).cpus)})
        elif p.runner == "evalplus":
            if job.differential is None:
                raise HarnessError(f"{p.task_id}: an EvalPlus task's job needs its ground truth (groundtruth.py)")
            out.update(prompt="", test="", entry_point=p.entry_point, runner="evalplus", evalplus=job.differential)
            # the host's deadline: both phases, each possibly run again one input per call
            out["limits"] = dict(out["limits"], timeout_s=2 * sum(ph["cap_s"] for ph in job.differential["phases"]))
        elif p.channel == "io":
            out.update(tests=[{"input": i, "output": o} for i, o in p.tests], compare=p.compare, runner=p.runner)
        else:
            out.update(prompt=p.prompt, test=p.test, entry_point=p.entry_point, runner=p.runner, main=p.main)
        return out

    def encoded(self, job: Job) -> tuple[dict, bytes]:
        """The job's header (id, limits) and its whole line as sent: the problem's part (tests, prompt,
        limits) is encoded once per problem and limits, not once per candidate."""
        key = (id(job.problem), job.limits, id(job.differential))
        cached = self._encoded.get(key)
        if cached is None or cached[0] is not job.problem or cached[3] is not job.differential:
            if len(self._encoded) >= 4096:
                self._encoded.clear()
            part = self._problem_part(job)
            cached = self._encoded[key] = (job.problem, {**part["limits"], "host_wait_s": host_wait_s(part)},
                                           json.dumps(part)[1:].encode(), job.differential)
        s = job.sample
        ident = f"{s.task_id}#{s.sample_index}"
        line = b"".join((b'{"id": ', json.dumps(ident).encode(), b', "code": ',
                         json.dumps(job.problem.program_text(s.program)).encode(), b", ", cached[2]))
        return {"id": ident, "limits": cached[1]}, line

    def run_one(self, job: Job, lane: "Lane"):
        if job.sample.program is None:  # no code could be taken from the sample's text: failed, not dropped
            return self.make_row(job, {"status": "failed", "reason": "no_code",
                                       "detail": "no code block in the sample's text (extract_code is on)",
                                       "verdict_channel": "none"}, 1)
        last = ""
        for attempt in range(1, self.settings.max_attempts + 1):
            if self.stop.is_set():
                return None
            try:
                session = lane.session()
                result = session.run(*self.encoded(job))
                if result.get("status") == ERROR and result.get("reason") in RETRYABLE_REASONS:
                    raise SandboxUnavailableError(f"{result.get('reason')}: {result.get('detail', '')}")
            except SandboxUnavailableError as e:
                last = str(e)
                lane.retire()
                if not self.backend.healthy():
                    raise HarnessError(f"the sandbox infrastructure stopped answering ({last})") from None
                self._fault(last)
                time.sleep(min(2.0, 0.25 * attempt))
                continue
            self._success()
            if (not result.get("healthy", False) or self.settings.isolation == "fresh"
                    or session.jobs_run >= self.settings.jobs_per_container):
                lane.retire()
            elif session.jobs_run >= self.settings.jobs_per_container - SPARE_LEAD:
                lane.prepare_next()
            return self.make_row(job, result, attempt)
        return self.make_row(job, {"status": ERROR, "reason": REASON_INFRASTRUCTURE, "detail": last[:1000]},
                             self.settings.max_attempts)

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
        limits = job.limits or self.base
        record = self._records.get(limits)
        if record is None:
            record = self._records.setdefault(limits, limits_record(limits, self.facts))
        row.limits = {**record, **job.note} if job.note else record
        row.candidate_sha256 = job.sample.sha256
        row.sample = job.sample.row_fields()
        row.attempt = attempt
        row.verdict_channel = text.clean_reason(result.get("verdict_channel")) or job.problem.channel
        detail = result.get("channel_detail")
        row.channel_detail = ({text.clean_reason(k): v for k, v in detail.items()
                               if isinstance(v, (int, str, float)) and not isinstance(v, bool)}
                              if isinstance(detail, dict) else {})
        base_status = result.get("base_status")
        row.base_status = base_status if base_status in (PASSED, FAILED, TIMED_OUT) else None
        if isinstance(result.get("truth"), dict) and job.differential is not None and job.differential.get("mode") == "truth":
            row.ground_truth = result["truth"]
        row.run_id = self.backend.run_id
        row.finished_at = now()
        return row


# A pooled container is replaced after `jobs_per_container` candidates; its successor starts this many
# candidates earlier, in the background, so that the worker does not wait ~0.25 s for it.
SPARE_LEAD = 50


class Lane:
    """One worker's containers: the session in use and, when it is due to be replaced (or after a
    replacement, or always under --isolation fresh), the next one, started in the background. Retired
    sessions are stopped in the background too: a worker never waits for Docker to create or remove a
    container it could be running candidates in instead."""

    def __init__(self, backend, background: "concurrent.futures.Executor"):
        self.backend = backend
        self.background = background
        self._current = None
        self._next: concurrent.futures.Future | None = None

    def _start(self):
        session = self.backend.open_session()
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
