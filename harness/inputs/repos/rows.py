"""SWE-bench's files, read unchanged: its rows (JSON Lines or a JSON array: `instance_id`, `repo`,
`base_commit`, `patch`, `test_patch`, `FAIL_TO_PASS`, `PASS_TO_PASS` as JSON strings or lists, `version`,
`environment_setup_commit`, the rest kept as it is) and its predictions (`all_preds.jsonl`, or `preds.json`
as a list or as an object keyed by instance: `instance_id`, `model_name_or_path`, `model_patch`).

Every field is hostile: an instance id and a repository name become directory and image names later, so
they are held to the characters GitHub and SWE-bench use; a commit is 40 hex digits; test names and
patches are bounded. A prediction is a candidate whatever its patch holds: several for one instance are
n > 1 in their file's order; an empty or null patch is a candidate that fails (`empty_patch`), and one
over the size bound fails (`patch_too_large`) — neither is skipped, and neither stops the run."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.untrusted import shown

ROW_FIELDS = ("instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,49}$")
MAX_TESTS = 100_000               # names in one FAIL_TO_PASS or PASS_TO_PASS list
MAX_TEST_NAME = 4096
MAX_PATCH_BYTES = 16 << 20        # a row's gold or test patch, or a prediction's patch
EMPTY_PATCH, PATCH_TOO_LARGE = "empty_patch", "patch_too_large"


def is_row(record: dict) -> bool:
    """A SWE-bench row (the format's detection, on a file's first record)."""
    return isinstance(record, dict) and all(k in record for k in ROW_FIELDS)


@dataclass(frozen=True)
class RepoTask:
    instance_id: str
    repo: str                              # owner/name
    base_commit: str
    patch: str                             # the gold patch
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    version: str | None = None
    environment_setup_commit: str | None = None
    extra: dict = field(default_factory=dict, compare=False, repr=False)   # every other field, as it was


def _matching(where: str, key: str, value, pattern: re.Pattern, what: str) -> str:
    if not isinstance(value, str) or not pattern.match(value) or ".." in value:
        raise InputError(f"{where}: {key}: {shown(value)} (must be {what})")
    return value


def _patch(where: str, key: str, value) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: {key}: {shown(value)} (must be a string: a patch)")
    if len(value.encode("utf-8", "surrogatepass")) > MAX_PATCH_BYTES:
        raise InputError(f"{where}: {key}: a patch of more than {MAX_PATCH_BYTES >> 20} MB")
    return value


def _tests(where: str, key: str, value) -> tuple[str, ...]:
    """A FAIL_TO_PASS or PASS_TO_PASS list: a JSON string of a list (SWE-bench's own files) or a list."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise InputError(f"{where}: {key}: {shown(value)} (a JSON string of a list of test names)") from None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InputError(f"{where}: {key}: {shown(value)} (must be a list of test names)")
    if len(value) > MAX_TESTS:
        raise InputError(f"{where}: {key}: {len(value)} tests (at most {MAX_TESTS})")
    for name in value:
        # a name may span lines (a parametrized id: astroid's rows hold one), never hold a NUL
        if not name or len(name) > MAX_TEST_NAME or "\0" in name:
            raise InputError(f"{where}: {key}: test name {shown(name)} (at most {MAX_TEST_NAME} characters, no NUL)")
    return tuple(value)


def task_of(where: str, record: dict) -> RepoTask:
    if not isinstance(record, dict):
        raise InputError(f"{where}: a row must be an object")
    missing = [k for k in ROW_FIELDS if k not in record]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")
    version = record.get("version")
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        version = str(version)          # a JSON number in a hand-written row ("version": 1.1)
    setup = record.get("environment_setup_commit")
    return RepoTask(
        instance_id=_matching(where, "instance_id", record["instance_id"], _ID, "an instance id (letters, digits, _ . -)"),
        repo=_matching(where, "repo", record["repo"], _REPO, "owner/name"),
        base_commit=_matching(where, "base_commit", record["base_commit"], _COMMIT, "a commit: 40 hex digits"),
        patch=_patch(where, "patch", record["patch"]),
        test_patch=_patch(where, "test_patch", record["test_patch"]),
        fail_to_pass=_tests(where, "FAIL_TO_PASS", record["FAIL_TO_PASS"]),
        pass_to_pass=_tests(where, "PASS_TO_PASS", record["PASS_TO_PASS"]),
        version=None if version is None else _matching(where, "version", version, _VERSION, "a version"),
        environment_setup_commit=None if setup is None else _matching(where, "environment_setup_commit", setup,
                                                                      _COMMIT, "a commit: 40 hex digits"),
        extra={k: v for k, v in record.items() if k not in ROW_FIELDS + ("version", "environment_setup_commit")})


def tasks(records) -> dict[str, RepoTask]:
    """{instance_id: RepoTask} of [(where, record)]; a repeated instance id is refused."""
    out: dict[str, RepoTask] = {}
    for where, record in records:
        task = task_of(where, record)
        if task.instance_id in out:
            raise InputError(f"{where}: duplicate instance_id {task.instance_id!r}")
        out[task.instance_id] = task
    return out


@dataclass(frozen=True)
class Prediction:
    where: str
    instance_id: str
    model: str | None
    patch: str | None                      # None where `problem` says why there is none to apply
    problem: str | None = None             # EMPTY_PATCH or PATCH_TOO_LARGE: the candidate fails so


def prediction_of(where: str, record) -> Prediction:
    if not isinstance(record, dict):
        raise InputError(f"{where}: a prediction must be an object")
    for key in ("instance_id", "model_patch"):
        if key not in record:
            raise InputError(f"{where}: missing field {key!r}")
    instance = _matching(where, "instance_id", record["instance_id"], _ID, "an instance id (letters, digits, _ . -)")
    model = record.get("model_name_or_path")
    if model is not None and (not isinstance(model, str) or len(model) > 1000):
        raise InputError(f"{where}: model_name_or_path: {shown(model)} (a name of at most 1000 characters)")
    patch = record["model_patch"]
    if patch is not None and not isinstance(patch, str):
        raise InputError(f"{where}: model_patch: {shown(patch)} (must be a string or null)")
    if patch is None or not patch.strip():
        return Prediction(where, instance, model, None, EMPTY_PATCH)
    if len(patch.encode("utf-8", "surrogatepass")) > MAX_PATCH_BYTES:
        return Prediction(where, instance, model, None, PATCH_TOO_LARGE)
    return Prediction(where, instance, model, patch)


def predictions(path: Path) -> list[Prediction]:
    """The predictions of all_preds.jsonl (one per line) or preds.json (a list, or an object whose values
    are the predictions), in the file's order."""
    from harness.core.jsonl import iter_jsonl, read_json
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.name.endswith((".json", ".json.gz")):
        value = read_json(path)
        if isinstance(value, dict):
            items = [(f"{path}: {shown(k)}", v) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(f"{path}: item {i + 1}", v) for i, v in enumerate(value)]
        else:
            raise InputError(f"{path}: predictions must be a list or an object of predictions")
    else:
        items = [(f"{path}:{line}", obj) for line, obj in iter_jsonl(path, "predictions file")]
    return [prediction_of(where, record) for where, record in items]
