"""Human-readable text for a score: the summary table printed after a run and by `passk score`."""

from __future__ import annotations

from .constants import LABELS


def format_summary(score: dict) -> str:
    lines = []
    n_text = (f"n = {score['n_min']}" if score["n_min"] == score["n_max"]
              else f"n = {score['n_min']}..{score['n_max']}")
    lines.append(f"tasks {score['num_tasks']} · candidates {score['num_candidates']} · {n_text} per task")
    lines.append("labels  " + "  ".join(f"{label} {score['labels'].get(label, 0)}" for label in LABELS))
    if score["pass_at_k"]:
        lines.append("")
        lines.append(f"{'k':>5}  {'pass@k':>8}  exact")
        for k, value in score["pass_at_k"].items():
            lines.append(f"{k:>5}  {value:>8.4f}  {score['pass_at_k_exact'][k]}")
    for k, why in score["omitted_k"].items():
        lines.append(f"omitted pass@{k}: {why}")
    sel = score.get("selected_answer")
    if sel:
        lines.append(f"selected answer (rule: {sel['rule']} sample): success {sel['success_rate']:.4f} "
                     f"({sel['success_rate_exact']}) — the one answer a user gets, not pass@k")
    pooled = score.get("pooled_pass_rate")
    if pooled:
        lines.append(f"pooled candidate pass rate {pooled['value']:.4f} ({pooled['exact']}) — {pooled['note']}")
    if score.get("excluded_errors"):
        lines.append(f"excluded {score['excluded_errors']} error rows at the user's request (--exclude-errors)")
    missing = score.get("tasks_without_samples")
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        lines.append(f"tasks without samples (left out of the mean): {len(missing)}: {shown}")
    return "\n".join(lines)
