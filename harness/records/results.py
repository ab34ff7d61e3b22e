"""Typed result rows and the append-only results.jsonl store.

Each finished candidate is appended as one JSON line and flushed at once, so a killed run loses at
most the candidates that were running. On resume the store reads what is there; a line cut short by
a kill (the last line, without its newline) is dropped and rewritten by the resumed run.
"""

from __future__ import annotations

import gc
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.constants import ERROR, LABELS, PERMANENT_ERRORS, SCHEMA_VERSION
from harness.core.errors import HarnessError, InputError


@dataclass(slots=True)
class ResultRow:
    task_id: str
    sample_index: int
    status: str
    reason: str = ""
    detail: str = ""
    limits: dict = field(default_factory=dict)
    wall_s: float | None = None
    cpu_s: float | None = None
    test_cpu_s: float | None = None
    peak_memory_kb: int | None = None
    exit_code: int | None = None
    signal: str | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    stdout_bytes: int | None = 0
    stderr_bytes: int | None = 0
    candidate_sha256: str = ""
    attempt: int = 1
    sample: dict = field(default_factory=dict)   # the sample's own extra fields (e.g. generation, logprob)
    verdict_channel: str = ""                    # proxy, in_process or io: who decided the verdict
    channel_detail: dict = field(default_factory=dict)  # e.g. the io rule and how many tests passed
    run_id: str = ""
    node: str = ""                               # the Ray node it ran on ("" on the local executor)
    base_status: str | None = None               # EvalPlus: the base inputs' verdict (`status` is plus's)
    language: str = ""                           # the language the program ran in (an io program's own)
    score: float | None = None                   # a scoring problem's score in [0, 1] (judged io problems)
    groups: list | None = None                   # a judged problem's groups: name, verdict, score
    tests: list | None = None                    # a judged or compiled io program's tests: verdict, time, memory (bounded)
    feedback: str | None = None                  # a failed project's test output, cleaned as aider shows it for a second try
    finished_at: str = ""
    schema_version: int = SCHEMA_VERSION
    ground_truth: dict | None = None             # a ground-truth job's outputs (never written; groundtruth.py)
    artifact: bytes | None = None                # a checker build's program (never written; Executor.checker_program)
    captured: list | None = None                 # capture mode: each test's output, stderr tail, exit (never written; passk serve)
    log: bytes | None = None                     # a repository task's test log (written beside the rows, logs/)

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.sample_index)

    def to_json(self) -> str:
        # Fields in declaration order, nested dicts as they are: asdict's deep copy of every row's
        # limits and sample cost more than the rest of writing the row.
        return json.dumps({name: getattr(self, name) for name in ROW_FIELDS}, ensure_ascii=False,
                          separators=(",", ":"))


ROW_FIELDS = tuple(f for f in ResultRow.__dataclass_fields__ if f not in ("ground_truth", "artifact", "captured", "log"))   # what a row file holds
_FIELD_SET = frozenset(ROW_FIELDS)


def row_from_dict(obj: dict, origin) -> ResultRow:
    """Accepts full rows and minimal ones (task_id, sample_index, status) for `passk score`.
    `origin` names the place for messages (a string, or a callable that makes one only when needed)."""
    task_id, index, status = obj.get("task_id"), obj.get("sample_index"), obj.get("status")
    if type(task_id) is not str or type(index) is not int or index < 0 or status not in LABELS:
        where = origin() if callable(origin) else origin
        if not isinstance(task_id, str):
            raise InputError(f"{where}: missing or non-string field 'task_id'")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise InputError(f"{where}: field 'sample_index' must be a whole number ≥ 0")
        raise InputError(f"{where}: field 'status' must be one of {', '.join(LABELS)}, got {status!r}")
    try:
        return ResultRow(**obj)  # a row passk wrote: every field is known
    except TypeError:  # fields of a newer or other writer: left out
        return ResultRow(**{k: v for k, v in obj.items() if k in _FIELD_SET})


def read_rows(path: str | Path, tolerate_torn_tail: bool = False) -> list[ResultRow]:
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    # Bulk-building rows creates no reference cycles; the cyclic collector would walk the growing list
    # again and again (it was half the time of reading 100,000 rows).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read(path, tolerate_torn_tail)
    finally:
        if collecting:
            gc.enable()


def _read(path: Path, tolerate_torn_tail: bool) -> list[ResultRow]:
    lines = path.read_bytes().split(b"\n")
    numbered = [(lineno, raw) for lineno, raw in enumerate(lines, start=1) if raw.strip()]
    # All lines at once, as one JSON array: one call into the decoder instead of one per row. Anything
    # that does not give exactly one object per line is read again line by line, to name the line.
    try:
        objs = json.loads(b"[" + b",".join(raw for _, raw in numbered) + b"]")
    except (UnicodeDecodeError, ValueError):
        objs = None
    if objs is None or len(objs) != len(numbered):
        objs = []
        for lineno, raw in numbered:
            try:
                objs.append(json.loads(raw.decode("utf-8")))
            except (UnicodeDecodeError, json.JSONDecodeError):
                if lineno == len(lines) and tolerate_torn_tail:  # no newline after it: the writer was killed
                    break
                raise InputError(f"{path}:{lineno}: malformed result row") from None
    rows = []
    for (lineno, _), obj in zip(numbered, objs):
        if type(obj) is not dict:
            raise InputError(f"{path}:{lineno}: expected a JSON object")
        rows.append(row_from_dict(obj, lambda: f"{path}:{lineno}"))  # noqa: B023 - called at once or never
    return rows


def latest_rows(rows: list[ResultRow]) -> dict[tuple[str, int], ResultRow]:
    """The row that counts for each candidate: an `error` row is superseded by a later attempt of the
    same candidate; a verdict by nothing. A second row with the same verdict (a delivery repeated) is
    ignored; two different verdicts for one candidate are an input error."""
    latest: dict[tuple[str, int], ResultRow] = {}
    for row in rows:
        prev = latest.get(row.key)
        if prev is not None and prev.status != ERROR and row.status != ERROR and prev.status != row.status:
            raise InputError(f"two verdicts for {row.task_id!r} sample {row.sample_index}: "
                             f"{prev.status} and {row.status}")
        if prev is None or prev.status == ERROR:
            latest[row.key] = row
    return latest


def slim(row: ResultRow) -> ResultRow:
    """What scoring needs of a row, without its output tails and details: the store keeps one per
    candidate in memory, so a long run's memory grows by this little per candidate."""
    return ResultRow(row.task_id, row.sample_index, row.status, reason=row.reason,
                     candidate_sha256=row.candidate_sha256, attempt=row.attempt, sample=row.sample,
                     verdict_channel=row.verdict_channel, base_status=row.base_status, score=row.score)


class ResultStore:
    """Append-only writer. Opening an existing file keeps every complete row."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.rows: dict[tuple[str, int], ResultRow] = {}
        if self.path.exists():
            self._repair_torn_tail()
            self.rows = {k: slim(r) for k, r in latest_rows(read_rows(self.path)).items()}
        # A lone surrogate (JSON input may hold one, e.g. in a sample's metadata) is written as its JSON
        # escape, which reads back as the same string: a row can always be written.
        self._f = open(self.path, "a", encoding="utf-8", errors="backslashreplace")

    def _repair_torn_tail(self):
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as f:
                f.truncate(cut)

    def finished(self) -> set[tuple[str, int]]:
        """Candidates a resume does not run again: every verdict, and errors no rerun can change."""
        return {k for k, r in self.rows.items() if r.status != ERROR or r.reason in PERMANENT_ERRORS}

    def append(self, row: ResultRow) -> bool:
        """Write the row; False (nothing written) when the candidate already has a verdict: a cluster
        delivers at least once, and the first verdict stands."""
        prev = self.rows.get(row.key)
        if prev is not None and prev.status != ERROR:
            return False
        try:
            self._f.write(row.to_json() + "\n")
            self._f.flush()
        except OSError as e:
            raise HarnessError(f"cannot append to {self.path} ({e.strerror or e}); the rows written so far are "
                               "kept: free space and rerun the same command to resume") from None
        self.rows[row.key] = slim(row)
        return True

    def sync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        if not self._f.closed:
            self.sync()
            self._f.close()
