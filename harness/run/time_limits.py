"""A judged problem's time limit where its format infers it from its own submissions (Kattis packages with
neither a .timelimit file nor limits.time_limit): as problemtools computes it (checks/submissions.py,
_compute_time_limit), the slowest accepted submission's slowest test T (CPU seconds), times the package's
multiplier (legacy time_multiplier, default 5; 2023-07 on ac_to_time_limit, default 2), rounded up to a
whole multiple of time_resolution (default 1 s) and at least one of it. The accepted submissions are run
first under a generous limit (the format's cap); the limit found is recorded in the manifest (a resumed or
reproduced run uses it, never measures again) and in every row (limits.time_limit_s, limits.time_source).

Which accepted submissions: the samples' own where they carry `expected: accepted` (passk verify), else the
package's own submissions/accepted/ as problemtools uses them whatever is judged. What a package's own
submissions give is cached across runs by the package's content hash, the sandbox image and the Python
the run chose (PASSK_CACHE_DIR/time_limits/), so that a package is measured once per machine setup."""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import replace
from pathlib import Path

from harness.core.errors import InputError
from harness.execution.jobs import Job
from harness.core.paths import cache_root

PROBE_LIMIT_S = 10.0   # the accepted submissions' limit while the time limit is found
CACHE_VERSION = 1


def cache_dir() -> Path:
    return cache_root("time_limits")


def package_sha256(root: Path, boundary: Path | None = None) -> str:
    """A package's content hash: every regular file's path inside it and its bytes, read through the
    package's checks (nothing outside the package, or the contest directory it came in, is read)."""
    from harness.inputs.untrusted import Package
    pkg = Package(Path(root), boundary=Path(boundary) if boundary else None)
    h = hashlib.sha256()
    for f in sorted(pkg.walk_files(Path(root)), key=lambda p: pkg.rel(p)):
        data = pkg.read_bytes(f)
        h.update(pkg.rel(f).encode("utf-8", "surrogateescape") + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def _cache_key(problem, facts: dict | None, python: str) -> str | None:
    root = problem.notes.get("path")
    if not root:
        return None
    parts = [str(CACHE_VERSION), package_sha256(Path(root), problem.notes.get("contest")), str((facts or {}).get("image_id")), python]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _cached(key: str | None) -> dict | None:
    if key is None:
        return None
    try:
        entry = json.loads((cache_dir() / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None
    limit = entry.get("time_limit_s") if isinstance(entry, dict) else None
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or not 0 < limit <= 1e6:
        return None
    return entry


def _store(key: str | None, entry: dict) -> None:
    if key is None:
        return
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
        tmp = cache_dir() / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(entry, sort_keys=True))
        os.replace(tmp, cache_dir() / f"{key}.json")
    except OSError:
        pass   # a cache that cannot be written costs a measurement next time, nothing else


def _package_accepted(problem) -> list:
    """The package's own submissions/accepted/ as samples (the languages passk runs)."""
    from harness.inputs.samples import load_samples
    root = problem.notes.get("path")
    if not root:
        return []
    try:
        own = load_samples(Path(root), {problem.task_id: problem})
    except InputError:
        return []
    return [s for s in own if s.extra.get("expected") == "accepted"]


def needs_inference(problems: dict) -> list:
    return [t for t, p in problems.items() if p.judge is not None and p.judge.time_source == "inferred"]


def rule_limit(slowest_s: float, multiplier: float, resolution: float) -> float:
    """problemtools' rule: max(1, ceil(slowest x multiplier / resolution)) x resolution."""
    return max(1, math.ceil(slowest_s * multiplier / resolution)) * resolution


def infer(problems: dict, samples: list, executor, known: dict | None = None, python: str = "auto") -> tuple[dict, dict]:
    """(problems with their inferred limits, {task: how it was found}). `known`: a manifest's earlier
    findings, used as they are."""
    known = dict(known or {})
    found, out = {}, dict(problems)
    tasks = needs_inference(problems)
    todo = [t for t in tasks if t not in known]
    futures, keys = {}, {}
    facts = getattr(executor, "facts", None) if executor is not None else None
    for t in list(todo):
        accepted = [s for s in samples if s.task_id == t and s.extra.get("expected") == "accepted"]
        source = "samples"
        if not accepted:   # problemtools' rule: the package's own accepted submissions, whatever is judged
            keys[t] = _cache_key(problems[t], facts, python)
            hit = _cached(keys[t])
            if hit is not None:
                known[t] = {**hit, "cached": True}
                todo.remove(t)
                continue
            accepted, source = _package_accepted(problems[t]), "package"
        if not accepted:
            raise InputError(f"{problems[t].notes.get('path', t)}: no time limit (.timelimit or limits.time_limit) "
                             "and no accepted submission (in the samples or the package's submissions/accepted/) "
                             "to infer it from")
        probe = replace(problems[t], judge=replace(problems[t].judge, time_limit_s=PROBE_LIMIT_S))
        futures[t] = (source, [executor.submit_job(Job(probe, s)) for s in accepted])
    for t in todo:
        source, pending = futures[t]
        rows = [f.result() for f in pending]
        passing = [r for r in rows if r.status == "passed"]
        if not passing:
            bad = rows[0]
            raise InputError(f"{t}: no accepted submission passes under the {PROBE_LIMIT_S:g} s probe limit "
                             f"({bad.sample.get('file', bad.sample_index)}: {bad.reason}); the time limit cannot "
                             "be inferred")
        slowest = max((x.get("time_s") or 0.0) for r in passing for x in (r.tests or ()))
        k = problems[t].notes["kattis"]
        limit = rule_limit(slowest, k["time_multiplier"], k["time_resolution"])
        known[t] = {"time_limit_s": limit, "slowest_accepted_s": slowest, "accepted": len(passing),
                    "multiplier": k["time_multiplier"], "resolution": k["time_resolution"],
                    # as problemtools leaves out a submission that does not compile: named, not used
                    "not_passing": [f"{r.sample.get('file', r.sample_index)}: {r.status} {r.reason}"
                                    for r in rows if r.status != "passed"],
                    "from": "the samples' accepted submissions" if source == "samples"
                    else "the package's submissions/accepted/"}
        if source == "package":
            _store(keys.get(t), known[t])
    for t in tasks:
        entry = known[t]
        found[t] = entry
        out[t] = replace(problems[t], judge=replace(problems[t].judge, time_limit_s=float(entry["time_limit_s"]),
                                                    time_source="inferred from the accepted submissions"))
    return out, found
