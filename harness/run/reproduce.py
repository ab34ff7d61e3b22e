"""Rerun a finished run from its manifest and say how far the labels agree."""

from __future__ import annotations

import json
from harness.core import text
from dataclasses import replace
from pathlib import Path

from harness.inputs.config import config_from_dict
from harness.core.constants import RESULTS_FILE
from harness.core.errors import InputError
from harness.records.manifest import load_manifest
from harness.records.results import latest_rows, read_rows
from harness.run.runner import evaluate, input_hashes


def reproduce(run_dir, out, force: bool = False, progress: bool = False, workers: int | None = None) -> dict:
    run_dir = Path(run_dir)
    manifest = load_manifest(run_dir)
    cfg = replace(config_from_dict(manifest["config"]), out=str(out))
    if workers:
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, workers=workers))
    now_hashes = input_hashes(cfg)
    changed = [name for name in ("problems", "samples")
               if now_hashes[name]["sha256"] != manifest["inputs"][name]["sha256"]]
    if changed and not force:
        raise InputError(f"{run_dir}: the {' and '.join(changed)} now hash differently from the run "
                         f"({', '.join(now_hashes[c]['path'] for c in changed)}); pass --force to rerun anyway")
    old_env = manifest.get("sandbox", {}).get("environment")
    if not force:
        _check_environment(run_dir, old_env, cfg.sandbox.environment)
    outcome = evaluate(cfg, progress=progress, calibration=manifest.get("calibration"), ground_truth_of=run_dir)
    before = latest_rows(read_rows(run_dir / RESULTS_FILE))
    after = latest_rows(read_rows(Path(out) / RESULTS_FILE))
    diffs = [{"task_id": t, "sample_index": i, "original": before[(t, i)].status,
              "reproduced": after[(t, i)].status if (t, i) in after else None,
              "original_reason": before[(t, i)].reason,
              "reproduced_reason": after[(t, i)].reason if (t, i) in after else None}
             for (t, i) in sorted(before) if (t, i) not in after or after[(t, i)].status != before[(t, i)].status]
    original_score = json.loads((run_dir / "score.json").read_text()) if (run_dir / "score.json").exists() else {}
    new_manifest = load_manifest(Path(out))
    from harness.environments.library import lock_differences
    return {
        "environment": lock_differences(old_env, new_manifest.get("sandbox", {}).get("environment")),
        "total": len(before), "identical": len(before) - len(diffs), "changed": diffs,
        "inputs_changed": changed,
        "image": {"original": manifest.get("sandbox", {}).get("image_id"),
                  "reproduced": new_manifest.get("sandbox", {}).get("image_id")},
        "pass_at_k": {k: {"original": original_score.get("pass_at_k", {}).get(k), "reproduced": v}
                      for k, v in outcome.score["pass_at_k"].items()},
        "pass_at_k_exact": {k: {"original": original_score.get("pass_at_k_exact", {}).get(k), "reproduced": v}
                            for k, v in outcome.score["pass_at_k_exact"].items()},
    }


def _check_environment(run_dir: Path, recorded: dict | None, spec) -> None:
    """Refuse a rerun whose environment list is no longer the one the run recorded, naming each pin that
    differs (a lock resolved again from the same list is compared after the rerun)."""
    from harness.inputs import libraries
    now = libraries.load(spec)
    if recorded is None and now is None:
        return
    if recorded is not None and now is not None and recorded.get("spec_sha256") == now.spec_sha256:
        return
    before = {libraries.requirement_name(r): r for r in (recorded or {}).get("requirements", [])}
    after = {libraries.requirement_name(r): r for r in (now.requirements if now else ())}
    diffs = [f"{before.get(n, 'absent')} then, {after.get(n, 'absent')} now" for n in sorted(set(before) | set(after))
             if before.get(n) != after.get(n)]
    raise InputError(f"{run_dir}: its environment ({(recorded or {}).get('name', 'none')}) is no longer the one "
                     f"named by its config: {'; '.join(diffs[:6]) or 'what may be built from source differs'}; "
                     "pass --force to rerun in the environment as it is now")


def format_reproduction(result: dict) -> str:
    lines = [f"labels identical: {result['identical']} of {result['total']}"]
    if result["inputs_changed"]:
        lines.append(f"WARNING: rerun with --force although the {' and '.join(result['inputs_changed'])} changed")
    img = result["image"]
    lines.append("image: same" if img["original"] == img["reproduced"] else
                 f"image differs: {img['original']} then, {img['reproduced']} now")
    for d in result.get("environment", []):
        lines.append(f"environment differs: {d}")
    for d in result["changed"]:
        lines.append(f"  CHANGED {d['task_id']} #{d['sample_index']}: {d['original']} ({d['original_reason']}) "
                     f"-> {d['reproduced']} ({d['reproduced_reason']})")
    lines.append(f"{'k':>5}  {'original':>10}  {'reproduced':>10}")
    for k, v in result["pass_at_k"].items():
        orig = v["original"]
        lines.append(f"{k:>5}  {orig if orig is None else f'{orig:.4f}':>10}  {v['reproduced']:>10.4f}"
                     f"   ({result['pass_at_k_exact'][k]['original']} vs {result['pass_at_k_exact'][k]['reproduced']})")
    return text.terminal_lines(lines)
