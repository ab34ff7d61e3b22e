"""The evaluate step: load inputs, build jobs, execute them, record each row as it finishes, score.

The main thread alone writes results.jsonl, so rows are appended whole and in the order they
finish; an existing output directory of the same inputs and settings is resumed."""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.execution import groundtruth
from harness.execution.calibrate import calibrate, calibrated_limits, ground_truth_lines, ground_truth_rate
from harness.inputs.config import RunConfig
from harness.core.constants import GROUND_TRUTH_FILE, LOGS_DIR, MANIFEST_FILE, RESULTS_FILE, SCORE_FILE
from harness.core.errors import InputError
from harness.execution.evaluator import Evaluator
from harness.execution.dispatch import make_executor
from harness.execution.jobs import Job, run_limits
from harness.run.time_limits import infer as infer_time_limits, needs_inference
from harness.execution.dispatch import execute
from harness.inputs.formats.unittests import apply_rule, is_bigcodebench, rule_limits, rule_record
from harness.core.jsonl import sha256_path
from harness.records.manifest import base_manifest, now, write_json
from harness.inputs.problem import Problem
from harness.inputs.problems import load_problems, peek_format, peek_language, problems_language
from harness.records.results import ResultStore
from harness.inputs.samples import Sample, load_samples
from harness.scoring.score import score_rows


JUDGED_FORMATS = ("kattis", "codeforces", "code-contests-plus")   # formats whose problems carry their own limits (inputs/judge.py)


@dataclass
class RunOutcome:
    out_dir: Path
    score: dict
    ran: int
    reused: int
    errors_remaining: int
    ignored: list = field(default_factory=list)   # what the samples directory held that is not a sample


def build_jobs(problems: dict[str, Problem], samples: list[Sample], cfg: RunConfig,
               calibration: dict | None = None, truth=None, checked: dict | None = None) -> list[Job]:
    jobs = []
    checked = checked or {}
    for s in samples:
        problem = problems[s.task_id]
        if problem.runner == "evalplus":   # limits from the ground truth, as EvalPlus sets them
            jobs.append(groundtruth.judge_job(problem, s, truth, cfg.limits, cfg.evalplus))
        elif problem.runner == "bigcodebench":   # the run's limits are BigCodeBench's (bigcodebench_config)
            gt = checked.get(s.task_id, {})
            slow = gt.get("passed") and gt["wall_s"] > cfg.bigcodebench.timeout_s   # max(240, gt) + 1
            jobs.append(Job(problem, s, rule_limits(cfg.limits, cfg.bigcodebench, gt["wall_s"]) if slow else None,
                            {"rule": rule_record(cfg.bigcodebench)}))
        elif calibration is None or s.task_id not in calibration:
            jobs.append(Job(problems[s.task_id], s))
        else:
            entry = calibration[s.task_id]
            jobs.append(Job(problems[s.task_id], s, calibrated_limits(cfg.limits, entry),
                            {"calibrated": {**cfg.calibration.__dict__, **entry}}))
    return jobs


def bigcodebench_config(cfg: RunConfig, problems: dict) -> RunConfig:
    """The run's settings where its problems are BigCodeBench's: BigCodeBench's limits in place of passk's,
    and, with no environment set, the environment their `libs` need. Recorded as the run's config."""
    from harness.inputs import libraries
    sandbox = cfg.sandbox
    if sandbox.environment is None:
        sandbox = replace(sandbox, environment=libraries.auto_for(problems) or libraries.NONE)
    if not is_bigcodebench(problems):
        return replace(cfg, sandbox=sandbox)
    return replace(cfg, sandbox=sandbox, limits=rule_limits(cfg.limits, cfg.bigcodebench))


def _comparable(config: dict) -> dict:
    """The settings that can change a label. Output place, worker count, transport, k, scoring options and
    generation metadata may differ between a run and its resumption."""
    c = json.loads(json.dumps(config))
    for key in ("out", "k", "scoring", "generation"):
        c.pop(key, None)
    for key in ("workers", "transport", "executor", "ray_address"):   # where it runs, not what a label means
        c.get("sandbox", {}).pop(key, None)
    return c


def input_hashes(cfg: RunConfig) -> dict:
    return {"problems": {"path": str(Path(cfg.problems).resolve()), "sha256": sha256_path(Path(cfg.problems))},
            "samples": {"path": str(Path(cfg.samples).resolve()), "sha256": sha256_path(Path(cfg.samples))}}


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
    changed = _differences(_comparable(old.get("config", {})), _comparable(config))
    if changed:
        shown = "; ".join(changed[:5]) + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise InputError(f"{out}: holds a run with different settings ({shown}); use another --out, or the "
                         "same settings to resume it")
    return old


def _differences(before: dict, now: dict, prefix: str = "") -> list[str]:
    """`key: before → now` for every setting that differs, with dotted keys."""
    out = []
    for key in sorted(set(before) | set(now), key=str):
        a, b = before.get(key, "<unset>"), now.get(key, "<unset>")
        name = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, name + ".")
        elif a != b:
            out.append(f"{name}: {json.dumps(a)} then, {json.dumps(b)} now")
    return out


def _start_in_background(ev: Evaluator, failed: list) -> None:
    """Start the evaluator; what it raises is kept in `failed` for the caller to raise."""
    try:
        ev.start()
    except BaseException as e:
        failed.append(e)


def evaluate(cfg: RunConfig, progress: str | bool = True, calibration: dict | None = None,
             ground_truth_of: Path | None = None) -> RunOutcome:
    """Run every candidate not yet finished in cfg.out, then score. `calibration` (per-task limits from
    an earlier run's manifest) is used instead of measuring again, and `ground_truth_of` (an earlier run's
    directory) gives EvalPlus tasks that run's ground truth, so a reproduction runs under the same
    limits. The sandbox is prepared (engine, runtime, image) and the ground truth measured before
    anything is written: settings or problems that cannot work leave no run directory behind."""
    out = Path(cfg.out)
    inputs = input_hashes(cfg)
    preloaded = None
    fmt = peek_format(cfg.problems, cfg.problems_format)
    if fmt == "bigcodebench":
        # what the problems need decides the image and the limits: read them before the sandbox starts
        preloaded = load_problems(cfg.problems, cfg.problems_format, cfg.channel, cfg.ceilings)
        cfg = bigcodebench_config(cfg, preloaded)
    elif fmt == "swe-bench":
        # repository tasks: every repository, commit and environment spec checked (and every tree made)
        # before anything starts; each environment's image is built by the executor of its candidates
        from harness.inputs.repos.tasks import prepare
        preloaded = prepare(load_problems(cfg.problems, cfg.problems_format, cfg.channel, cfg.ceilings), cfg.repos,
                            cfg.limits)
        if cfg.sandbox.environment is None:
            cfg = replace(cfg, sandbox=replace(cfg.sandbox, environment="none"))
    elif fmt == "polyglot":
        # projects: each candidate's limits are the projects' (aider's 180 s by default), on the run's
        from harness.inputs.projects import with_limits
        preloaded = with_limits(load_problems(cfg.problems, cfg.problems_format, cfg.channel, cfg.ceilings),
                                cfg.limits, cfg.project_timeout_s)
        if cfg.sandbox.environment is None:
            cfg = replace(cfg, sandbox=replace(cfg.sandbox, environment="none"))
    elif fmt in JUDGED_FORMATS:
        # a judged problem's own limits size the containers (each job carries its own within them)
        preloaded = load_problems(cfg.problems, cfg.problems_format, cfg.channel, cfg.ceilings)
        cfg = replace(cfg, limits=run_limits(cfg.limits, preloaded.values()))
        if cfg.sandbox.environment is None:
            cfg = replace(cfg, sandbox=replace(cfg.sandbox, environment="none"))
    elif cfg.sandbox.environment is None:
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, environment="none"))
    config = cfg.to_dict()
    old = _check_resume(out, config, inputs)
    run_id = old["run_id"] if old and old.get("run_id") else uuid.uuid4().hex
    # The sandbox starts (engine, image, the first warm containers) while the inputs are read; its image
    # is the problems' language's (the first record says it; the full load checks every problem).
    settings = cfg.sandbox
    if settings.language is None:
        settings = replace(settings, language=peek_language(cfg.problems, cfg.problems_format))
    ev = make_executor(cfg.limits, settings, run_id)
    failed: list = []
    if settings.executor == "ray":
        # in this thread: a local Ray cluster it starts lives only as long as the thread that started it
        _start_in_background(ev, failed)
        started = lambda: None   # noqa: E731
    else:
        starting = threading.Thread(target=_start_in_background, args=(ev, failed), name="passk-start",
                                    daemon=True)
        starting.start()
        started = starting.join
    try:
        problems = apply_rule(preloaded or load_problems(cfg.problems, cfg.problems_format, cfg.channel, cfg.ceilings),
                              cfg.bigcodebench)
        language = problems_language(problems)
        if language != settings.language:
            raise InputError(f"{cfg.problems}: its problems are in {language}, the run's sandbox is set to "
                             f"{settings.language} (sandbox.language / --language)")
        samples = load_samples(cfg.samples, problems, cfg.generation, cfg.sample_options)
        inputs_cached = groundtruth.prepare_inputs(problems, inputs["problems"]["sha256"])   # while the sandbox starts
    except BaseException:
        started()
        ev.close()
        raise
    started()
    if failed:
        ev.close()
        raise failed[0]
    with ev:
        facts = ev.facts
        if old and "sandbox" in old and old["sandbox"].get("image_id") != facts["image_id"]:
            raise InputError(f"{out}: was started with image {old['sandbox'].get('image_id')}, "
                             f"now {facts['image_id']}; labels would not be comparable; use another --out")
        truth = _ground_truth(problems, cfg, inputs, ev, facts, out, old, ground_truth_of)
        if not inputs_cached:
            groundtruth.store_inputs(problems, inputs["problems"]["sha256"])
        out.mkdir(parents=True, exist_ok=True)
        if truth is not None and not (out / GROUND_TRUTH_FILE).exists():
            groundtruth.save_into(out / GROUND_TRUTH_FILE, truth)
        store = ResultStore(out / RESULTS_FILE)
        manifest = old or {**base_manifest(config, inputs), "run_id": run_id, "started_at": now()}
        manifest["config"] = config  # the latest resolved config (k and scoring may change on resume)
        manifest["inputs"]["problems"]["format"] = ", ".join(sorted({p.format for p in problems.values()}))
        if samples.ignored:
            manifest["inputs"]["samples"]["ignored"] = samples.ignored[:200]
        manifest["sandbox"] = {k: v for k, v in facts.items() if k != "swept_containers"}
        if truth is not None:
            manifest["ground_truth"] = manifest.get("ground_truth") or truth.summary()
        write_json(out / MANIFEST_FILE, manifest)  # before anything can fail, so a rerun resumes
        try:
            if cfg.calibration is not None:
                calibration = manifest.get("calibration") or calibration
                if calibration is None:
                    calibration = calibrate(problems, cfg.limits, cfg.sandbox, cfg.calibration, evaluator=ev)
                manifest["calibration"] = calibration
                write_json(out / MANIFEST_FILE, manifest)
            if needs_inference(problems):   # a Kattis package's time limit, from its accepted submissions
                problems, found = infer_time_limits(problems, samples, ev, manifest.get("time_limits"), settings.python)
                if manifest.get("time_limits") != found:
                    manifest["time_limits"] = found
                    write_json(out / MANIFEST_FILE, manifest)
            checked = None
            if cfg.check_ground_truth:
                checked = manifest.get("ground_truth_check", {}).get("per_task")
                if checked is None:
                    checked = check_ground_truth(problems, cfg, ev)
                    manifest["ground_truth_check"] = {"per_task": checked, "pass_rate": ground_truth_rate(checked)}
                    write_json(out / MANIFEST_FILE, manifest)
                if progress is not False:
                    import sys
                    from harness.core import text
                    print(text.terminal_lines(ground_truth_lines(checked)), file=sys.stderr)
            jobs = build_jobs(problems, samples, cfg, calibration if cfg.calibration is not None else None, truth,
                              checked)
            done = store.finished()
            pending = [j for j in jobs if j.key not in done]
            reused = len(jobs) - len(pending)
            if pending:
                execute(pending, cfg.limits, cfg.sandbox, run_id, _keeping_logs(out, store.append), progress=progress,
                        total=len(jobs), initial=reused, evaluator=ev)
            manifest["sandbox"]["image_python"] = facts.get("image_python")
            if facts.get("toolchain"):   # a language image says it when its first container starts
                manifest["sandbox"]["toolchain"] = facts["toolchain"]
            if facts.get("machine_stall_reruns"):   # jobs the machine's load stopped, run again (pool.py)
                manifest["sandbox"]["machine_stall_reruns"] = facts["machine_stall_reruns"]
            if facts.get("lost_nodes"):  # Ray nodes that died during the run (their candidates ran again)
                manifest["sandbox"]["lost_nodes"] = facts["lost_nodes"]
            others = ev.languages_facts()   # io programs in other languages ran in their own images
            languages = {name: {k: f.get(k) for k in ("image", "image_id", "toolchain", "commands", "language") if f.get(k)}
                         for name, f in others.items() if not name.startswith("repo:")}
            if languages:
                manifest["sandbox"]["languages"] = languages
            environments = {name[5:]: f["repo_environment"] for name, f in others.items()
                            if name.startswith("repo:") and f.get("repo_environment")}
            if environments:   # repository tasks: each environment's image, Python and every package's version
                manifest["sandbox"]["repo_environments"] = {**manifest["sandbox"].get("repo_environments", {}),
                                                            **environments}
        finally:
            store.close()
    score = score_rows(list(store.rows.values()), problem_ids=list(problems),
                       options=replace(cfg.scoring_options(), ks=tuple(cfg.k)))
    write_json(out / SCORE_FILE, score)
    manifest["finished_at"] = now()
    manifest["label_counts"] = score["labels"]
    write_json(out / MANIFEST_FILE, manifest)
    return RunOutcome(out, score, len(pending), reused, score["errors_remaining"], samples.ignored)


def _keeping_logs(out: Path, append):
    """The row handler that writes a repository task's test log beside the rows (logs/<task>/<index>.log,
    the task id made a safe file name) before the row is appended: a resumed run finds both or neither."""
    def keep(row) -> None:
        if row.log is not None:
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", row.task_id).strip(".") or "_"
            folder = out / LOGS_DIR / name
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{row.sample_index}.log"
            path.write_bytes(row.log)
            row.channel_detail["log"] = str(path.relative_to(out))
        append(row)
    return keep


def check_ground_truth(problems: dict, cfg: RunConfig, ev) -> dict:
    """Each task's canonical solution, once, in the run's sandbox and environment (BigCodeBench's ground
    truth as it checks it: not calibrated): {task: {passed, wall_s, labels, detail}}."""
    from harness.execution.calibrate import measure_canonical
    return measure_canonical(problems, cfg.limits, cfg.sandbox, 1, evaluator=ev)


def _ground_truth(problems, cfg, inputs, ev, facts, out: Path, old: dict | None, ground_truth_of: Path | None):
    """EvalPlus tasks' ground truth: a resumed run's own, a reproduced run's, else the cache's or measured."""
    if not groundtruth.differential_problems(problems):
        return None
    pinned = source = None
    if old is not None and old.get("ground_truth"):
        pinned, source = old["ground_truth"]["sha256"], out
    elif ground_truth_of is not None:
        from harness.records.manifest import load_manifest
        original = load_manifest(ground_truth_of).get("ground_truth")
        if original:
            pinned, source = original["sha256"], Path(ground_truth_of)
    return groundtruth.obtain(problems, inputs["problems"]["sha256"], cfg.limits, ev, facts,
                              run_file=source / GROUND_TRUTH_FILE if source is not None else None,
                              pinned_sha256=pinned)
