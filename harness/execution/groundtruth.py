"""EvalPlus's ground truth and the limits it sets, for problems read from HumanEval+ and MBPP+ files.

EvalPlus judges a candidate by comparing its return value on every input with the canonical solution's
(prompt + canonical_solution, the contract left out, as its evaluator runs it), and gives each input a
time limit of max(min_time_limit, gt_time_limit_factor x the canonical solution's time on that input)
(evalplus/evaluate.py and evalplus/eval/__init__.py, 0.3.1; defaults 1.0 s and 4.0). passk runs the
canonical solution in the sandbox, never on the host: once per problem file, image, runtime and memory
limit, through the same warm containers the candidates use. Its outputs and times are cached by content
hash (CACHE_DIR), written into the run directory (GROUND_TRUTH_FILE, its sha256 in the manifest) and
taken from there on resume and by `reproduce`, so a run's limits never change under it.

A task whose ground truth raises, times out, runs out of memory or returns something that is not plain
data on one of its own inputs cannot be judged: the run stops before any candidate runs, with one line
naming the file, its line, the task and the input (exit 2)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

from harness.inputs.config import EvalPlusSettings, Limits
from harness.core.constants import GROUND_TRUTH_FILE, PASSED
from harness.core.errors import HarnessError, InputError
from harness.inputs.problem import Problem
from harness.inputs.samples import Sample
from harness.core.paths import cache_root

VERSION = 1                 # of the ground-truth record and of how it is measured
TRUTH_CAP_S = 120.0         # the ground truth's own wall clock per phase (EvalPlus sets none)
PHASES = ("base", "plus")
RULE = "evalplus-0.3.1"


def cache_dir() -> Path:
    return cache_root("groundtruth")


def differential_problems(problems: dict) -> dict:
    return {t: p for t, p in problems.items() if p.runner == "evalplus"}


_ENCODED: dict = {}


_JSON = json.JSONEncoder(separators=(",", ":"), check_circular=False)


def encode_args(args) -> str:
    """One input's arguments as the JSON text of the codec's data, argument by argument (one encoder:
    the candidate's decoder numbers their containers in that order)."""
    from harness.containers.box.codec import Encoder, deep
    enc = Encoder()
    with deep():
        return _JSON.encode([enc.enc(a) for a in args])


def encoded_inputs(problem: Problem) -> dict[str, list[str]]:
    """Each phase's inputs as the JSON text of the codec's data (once per problem)."""
    key = id(problem.differential)
    cached = _ENCODED.get(key)
    if cached is not None and cached[0] is problem.differential:
        return cached[1]
    out = {phase: [encode_args(args) for args in getattr(problem.differential, phase)] for phase in PHASES}
    if len(_ENCODED) > 4096:
        _ENCODED.clear()
    _ENCODED[key] = (problem.differential, out)
    return out


def _inputs_cache(problems_sha256: str) -> Path:
    from harness.containers.box import codec
    codec_sha = hashlib.sha256(Path(codec.__file__).read_bytes()).hexdigest()
    name = hashlib.sha256(f"{VERSION}\0{problems_sha256}\0{codec_sha}".encode()).hexdigest()
    return cache_dir() / f"{name}.inputs.json.gz"


def prepare_inputs(problems: dict, problems_sha256: str) -> bool:
    """Every EvalPlus task's encoded inputs from the cache, when this file's were encoded before (by this
    codec: its source is part of the key). False when they were not (they are encoded when first needed:
    store_inputs caches them)."""
    wanted = differential_problems(problems)
    if not wanted:
        return True
    path = _inputs_cache(problems_sha256)
    try:
        with open(path, "rb") as f:
            cached = json.loads(gzip.decompress(f.read()))
    except (OSError, ValueError, EOFError):
        cached = None
    if isinstance(cached, dict) and all(
            isinstance(cached.get(t), dict) and all(len(cached[t].get(ph, ())) == len(getattr(p.differential, ph))
                                                  for ph in PHASES) for t, p in wanted.items()):
        for t, p in wanted.items():
            _ENCODED[id(p.differential)] = (p.differential, {ph: cached[t][ph] for ph in PHASES})
        return True
    return False


def store_inputs(problems: dict, problems_sha256: str) -> None:
    """Cache every EvalPlus task's encoded inputs (encoding any not encoded yet)."""
    encoded = {t: encoded_inputs(p) for t, p in differential_problems(problems).items()}
    if not encoded:
        return
    try:
        path = _inputs_cache(problems_sha256)
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_bytes(path, gzip.compress(json.dumps(encoded, separators=(",", ":")).encode(), compresslevel=1))
    except OSError:
        pass


def _part(problem: Problem, mode: str) -> dict:
    d = problem.differential
    return {"mode": mode, "oracle": d.oracle, "dataset": d.dataset, "atol": d.atol, "phases": []}


def truth_job(problem: Problem, base: Limits):
    from harness.execution.jobs import Job
    inputs = encoded_inputs(problem)
    part = _part(problem, "truth")
    part["phases"] = [{"phase": ph, "inputs": inputs[ph], "cap_s": TRUTH_CAP_S} for ph in PHASES]
    sample = Sample(problem.task_id, 0, problem.canonical_program, "solution", "ground truth")
    return Job(problem, sample, replace(base, timeout_s=TRUTH_CAP_S * len(PHASES), cpu_time_s=None),
               differential=part)


def cache_key(problems_sha256: str, facts: dict, base: Limits) -> str:
    """What can change the ground truth's outputs or times: the file, the image (its Python), the runtime,
    the CPU quota and memory, and how passk measures."""
    parts = {"version": VERSION, "problems": problems_sha256, "image_id": facts.get("image_id"),
             "runtime": facts.get("runtime"), "cpus": base.cpus, "memory_mb": base.memory_mb}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _where(problem: Problem) -> str:
    return problem.notes.get("where") or problem.task_id


def measure(problems: dict, base: Limits, evaluator) -> dict:
    """Run every task's ground truth in `evaluator`'s sandbox (started if it is not). {task: {phase:
    {outputs, times}}}; a task whose ground truth cannot be judged stops the run (InputError naming it)."""
    evaluator.start()
    # each task's job goes as soon as its inputs are encoded: the sandbox works while the host encodes
    futures = [evaluator.submit_job(truth_job(p, base)) for p in problems.values()]
    rows = [f.result() for f in futures]
    out = {}
    for row in rows:
        problem = problems[row.task_id]
        if row.status == "error":
            raise HarnessError(f"the ground truth of {row.task_id!r} could not be run ({row.reason}: {row.detail})")
        if row.status != PASSED or not isinstance(row.ground_truth, dict):
            why = row.detail or row.reason
            if row.status == "timed_out":
                why = f"it ran past {TRUTH_CAP_S:g} s on its own inputs ({row.detail})"
            elif row.reason == "memory_limit":
                why = f"it ran out of memory under --memory-mb {base.memory_mb} ({row.detail})"
            raise InputError(f"{_where(problem)}: the ground truth of task {row.task_id!r} (prompt + "
                             f"canonical_solution) cannot be judged: {why}")
        truth = {}
        for ph in PHASES:
            got = row.ground_truth.get(ph) or {"outputs": [], "times": []}
            want = len(getattr(problem.differential, ph))
            if len(got.get("outputs", ())) != want or len(got.get("times", ())) != want:
                raise HarnessError(f"the ground truth of {row.task_id!r} came back with "
                                   f"{len(got.get('outputs', ()))} of {want} {ph} outputs")
            truth[ph] = {"outputs": list(got["outputs"]), "times": [float(t) for t in got["times"]]}
        out[row.task_id] = truth
    return out


@dataclass
class GroundTruth:
    """The ground truth of one problem file: per task, per phase, outputs (the codec's JSON text) and times.
    Its file holds exactly {version, rule, key, tasks} as canonical JSON (gzip); its sha256 is that of
    those bytes. `meta` (where this copy came from, how long it took) lives beside it, in the manifest."""
    key: str
    tasks: dict
    meta: dict
    sha256: str = ""
    path: str | None = None   # a file that holds exactly this ground truth (the cache's, a run's)

    @staticmethod
    def of(key: str, tasks: dict, meta: dict) -> "GroundTruth":
        return GroundTruth(key, tasks, meta, hashlib.sha256(_canonical(key, tasks)).hexdigest())

    def summary(self) -> dict:
        n = sum(len(t[ph]["times"]) for t in self.tasks.values() for ph in PHASES)
        return {"rule": RULE, "key": self.key, "sha256": self.sha256, "file": GROUND_TRUTH_FILE,
                "tasks": len(self.tasks), "inputs": n, "truth_cap_s": TRUTH_CAP_S, **self.meta}


def _canonical(key: str, tasks: dict) -> bytes:
    """What a ground truth's file holds (gzip-compressed), and what its sha256 is of."""
    return json.dumps({"version": VERSION, "rule": RULE, "key": key, "tasks": tasks}, sort_keys=True,
                      separators=(",", ":")).encode()


def read(path: Path) -> GroundTruth | None:
    """The ground truth in `path` (its sha256 that of what the file holds), or None."""
    try:
        with open(path, "rb") as f:
            data = gzip.decompress(f.read())
        content = json.loads(data)
    except (OSError, ValueError, EOFError):
        return None
    if not isinstance(content, dict) or content.get("version") != VERSION or not isinstance(content.get("tasks"), dict):
        return None
    return GroundTruth(content["key"], content["tasks"], {}, hashlib.sha256(data).hexdigest(), str(path))


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write(path: Path, truth: GroundTruth) -> None:
    """The ground truth's file, from its tasks as they are now."""
    _write_bytes(path, gzip.compress(_canonical(truth.key, truth.tasks), compresslevel=1))


def save_into(path: Path, truth: GroundTruth) -> None:
    """The run directory's copy: the file that holds it, as it is, or written."""
    if truth.path:
        try:
            shutil.copyfile(truth.path, path)
            return
        except OSError:
            pass
    write(path, truth)


def obtain(problems: dict, problems_sha256: str, base: Limits, evaluator, facts: dict,
           run_file: Path | None = None, pinned_sha256: str | None = None) -> GroundTruth | None:
    """The ground truth of the file's EvalPlus tasks: the run directory's own (resume, reproduce: it must
    be the one the manifest pins), else the cache's, else measured now and cached."""
    wanted = differential_problems(problems)
    if not wanted:
        return None
    if pinned_sha256 is not None:
        found = read(run_file) if run_file is not None and run_file.exists() else None
        if found is None or found.sha256 != pinned_sha256:
            raise InputError(f"{run_file}: the ground truth this run was judged by (sha256 {pinned_sha256[:12]}…) "
                             "is missing or changed; its limits cannot be reproduced: use another --out")
        return found
    key = cache_key(problems_sha256, facts, base)
    cached_path = cache_dir() / f"{key}.json.gz"
    found = read(cached_path) if cached_path.exists() else None
    if found is not None and found.key == key and set(found.tasks) == set(wanted):
        try:
            meta = json.loads(cached_path.with_suffix(".meta").read_text())
        except (OSError, ValueError):
            meta = {}
        found.meta = {**(meta if isinstance(meta, dict) else {}), "source": "cache"}
        return found
    t0 = time.monotonic()
    tasks = measure(wanted, base, evaluator)
    meta = {"source": "measured", "measured_s": round(time.monotonic() - t0, 3), "image_id": facts.get("image_id"),
            "runtime": facts.get("runtime"), "memory_mb": base.memory_mb, "cpus": base.cpus,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    data = _canonical(key, tasks)
    truth = GroundTruth(key, tasks, meta, hashlib.sha256(data).hexdigest())
    try:
        cached_path.parent.mkdir(parents=True, exist_ok=True)
        _write_bytes(cached_path, gzip.compress(data, compresslevel=1))
        _write_bytes(cached_path.with_suffix(".meta"), json.dumps(meta).encode())
        truth.path = str(cached_path)
    except OSError:
        pass   # no cache (read-only home): measured again next time
    return truth


def input_limits(times, ev: EvalPlusSettings, factor: float = 1.0) -> list[float]:
    """EvalPlus's per-input limits: max(min_time_limit, gt_time_limit_factor x the ground truth's time)."""
    return [factor * max(ev.min_time_limit_s, ev.gt_time_limit_factor * t) for t in times]


def phase_cap(limits, ev: EvalPlusSettings, factor: float = 1.0) -> float:
    """EvalPlus's wall clock for one check (fast_check, its default): it joins the process after
    min(EVALPLUS_TIMEOUT_PER_TASK, sum of the input limits) + 1, plus 1 s."""
    return min(factor * ev.task_timeout_s, sum(limits)) + 2.0


_PARTS: dict = {}


def judge_part(problem: Problem, truth: GroundTruth, ev: EvalPlusSettings, factor: float = 1.0) -> tuple[dict, dict]:
    """(what a candidate's job carries, what its row records of the limits) for one EvalPlus task: one per
    task, ground truth, settings and factor, shared by its candidates' jobs (their JSON is made once)."""
    key = (id(problem.differential), id(truth), ev, factor)
    held = _PARTS.get(key)
    if held is not None and held[0] is problem.differential and held[1] is truth:
        return held[2]
    if len(_PARTS) > 4096:
        _PARTS.clear()
    made = _judge_part(problem, truth, ev, factor)
    _PARTS[key] = (problem.differential, truth, made)
    return made


def _judge_part(problem: Problem, truth: GroundTruth, ev: EvalPlusSettings, factor: float) -> tuple[dict, dict]:
    inputs = encoded_inputs(problem)
    part = _part(problem, "judge")
    record = {"rule": RULE, "dataset": problem.differential.dataset, "oracle": problem.differential.oracle,
              "atol": problem.differential.atol, "min_time_limit_s": ev.min_time_limit_s,
              "gt_time_limit_factor": ev.gt_time_limit_factor, "task_timeout_s": ev.task_timeout_s,
              "fast_check": True, "ground_truth_sha256": truth.sha256,
              "input_limit": "max(min_time_limit_s, gt_time_limit_factor x the ground truth's time on the input)"
                             + (f" x {factor:g}" if factor != 1.0 else ""),
              "cap": "min(task_timeout_s, sum of the phase's input limits) + 2 s, per phase"}
    if factor != 1.0:
        record["relaxed_by"] = factor
    task = truth.tasks[problem.task_id]
    for ph in PHASES:
        limits = input_limits(task[ph]["times"], ev, factor)
        cap = phase_cap(limits, ev, factor)
        part["phases"].append({"phase": ph, "inputs": inputs[ph], "expected": task[ph]["outputs"],
                               "limits": [round(x, 6) for x in limits], "cap_s": round(cap, 3)})
        record[ph] = {"inputs": len(limits), "cap_s": round(cap, 3),
                      "input_limit_min_s": round(min(limits), 6) if limits else None,
                      "input_limit_max_s": round(max(limits), 6) if limits else None}
    return part, record


def judge_job(problem: Problem, sample, truth: GroundTruth, base: Limits, ev: EvalPlusSettings,
              factor: float = 1.0, limits: Limits | None = None):
    from harness.execution.jobs import Job
    part, record = judge_part(problem, truth, ev, factor)
    total = sum(ph["cap_s"] for ph in part["phases"] if ph["inputs"])
    own = replace(limits or base, timeout_s=round(max(total, 0.001), 3), cpu_time_s=None)
    return Job(problem, sample, own, {"evalplus": record}, differential=part)
