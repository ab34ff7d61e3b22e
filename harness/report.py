"""Human-readable output: the summary table printed after a run and by `passk score`, and
report.md / report.html for a run directory."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from . import text
from .constants import DEFAULT_K, LABELS


def format_summary(score: dict) -> str:
    lines = []
    n_text = (f"n = {score['n_min']}" if score["n_min"] == score["n_max"]
              else f"n = {score['n_min']}..{score['n_max']}")
    lines.append(f"tasks {score['num_tasks']} · candidates {score['num_candidates']} · {n_text} per task")
    lines.append("labels  " + "  ".join(f"{label} {score['labels'].get(label, 0)}" for label in LABELS))
    if score["pass_at_k"]:
        lines.append("")
        lines.append(f"{'k':>5}  {'pass@k':>8}  {'SE':>7}  {'95% CI':>17}  exact")
        for k, value in score["pass_at_k"].items():
            u = score.get("pass_at_k_uncertainty", {}).get(k, {})
            ci = f"[{u['ci95'][0]:.4f}, {u['ci95'][1]:.4f}]" if u.get("ci95") else "-"
            lines.append(f"{k:>5}  {value:>8.4f}  {u.get('se', 0):>7.4f}  {ci:>17}  {score['pass_at_k_exact'][k]}")
    for k, why in score["omitted_k"].items():
        lines.append(f"omitted pass@{k}: {why}")
    for k, sub in score.get("pass_at_k_subset", {}).items():
        lines.append(f"pass@{k} on a subset: {sub['value']:.4f} ({sub['exact']}) — {sub['note']}")
    if score.get("mixed_generation"):
        lines.append(f"not one pass@k: {score['mixed_generation']}")
        for g, sub in score["generation_groups"].items():
            values = ", ".join(f"pass@{k} {v:.4f} ({sub['pass_at_k_exact'][k]})" for k, v in sub["pass_at_k"].items())
            lines.append(f"  group {g}: {sub['num_tasks']} tasks, n = {sub['n_min']}..{sub['n_max']}: {values or 'no k'}")
    sel = score.get("selected_answer")
    if sel:
        lines.append(f"selected answer (rule: {sel['rule']}): success {sel['success_rate']:.4f} "
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
    return text.terminal_lines(lines)


# ------------------------------------------------------------------------------------------------
# report.md and report.html: computed from results.jsonl (and manifest.json / audit.json when present).
# Charts are inline SVG written here, so the report needs no plotting library and no network.
# ------------------------------------------------------------------------------------------------


def _curve(score: dict, rows) -> list[tuple[int, float, str]]:
    from .scoring import count_tasks, fraction_text, mean_of, per_task_pass_at_k
    counts = [c for c in count_tasks(rows, exclude_errors=True).values() if c.n > 0]
    if not counts or score.get("errors_remaining"):
        return []
    out = []
    for k in range(1, min(c.n for c in counts) + 1):
        mean = mean_of(per_task_pass_at_k(counts, k))
        out.append((k, float(mean), fraction_text(mean)))
    return out


def _margins(rows) -> dict:
    """Wall time of passing candidates as a fraction of their timeout."""
    from .scoring import time_shares
    ratios = [share for share, _, _ in time_shares(rows)]
    bins = [0] * 10
    for x in ratios:
        bins[min(9, int(x * 10))] += 1
    return {"count": len(ratios), "bins": bins, "within_20pct": sum(1 for x in ratios if x >= 0.8),
            "max": max(ratios) if ratios else None}


def _svg_line(points: list[tuple[int, float]], width=520, height=220) -> str:
    if not points:
        return ""
    pad = 40
    kmax = max(k for k, _ in points)
    def x(k):
        return pad + (k - 1) / max(1, kmax - 1) * (width - 2 * pad)
    def y(v):
        return height - pad + 10 - v * (height - 2 * pad)
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(k):.1f},{y(v):.1f}" for i, (k, v) in enumerate(points))
    dots = "".join(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3"><title>pass@{k} = {v:.4f}</title></circle>'
                   for k, v in points)
    grid = "".join(f'<line x1="{pad}" x2="{width - pad}" y1="{y(g):.1f}" y2="{y(g):.1f}" stroke="#ddd"/>'
                   f'<text x="{pad - 6}" y="{y(g) + 4:.1f}" text-anchor="end" font-size="11">{g:.2f}</text>'
                   for g in (0, 0.25, 0.5, 0.75, 1.0))
    ticks = "".join(f'<text x="{x(k):.1f}" y="{height - pad + 26}" text-anchor="middle" font-size="11">{k}</text>'
                    for k, _ in points if kmax <= 20 or k in (1, kmax) or k % max(1, kmax // 10) == 0)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="pass@k curve">{grid}{ticks}<path d="{path}" fill="none" stroke="#1f5fa8" stroke-width="2"/>'
            f'{dots}<text x="{width / 2}" y="{height - 4}" text-anchor="middle" font-size="12">k</text></svg>')


def _svg_bars(bins: list[int], width=520, height=200) -> str:
    if not any(bins):
        return ""
    pad = 40
    top = max(bins)
    bw = (width - 2 * pad) / len(bins)
    bars = ""
    for i, b in enumerate(bins):
        h = b / top * (height - 2 * pad)
        color = "#c0392b" if i >= 8 else "#1f5fa8"
        bars += (f'<rect x="{pad + i * bw + 2:.1f}" y="{height - pad - h:.1f}" width="{bw - 4:.1f}" height="{h:.1f}" '
                 f'fill="{color}"><title>{i * 10}–{i * 10 + 10}% of the timeout: {b}</title></rect>'
                 f'<text x="{pad + i * bw + bw / 2:.1f}" y="{height - pad + 14}" text-anchor="middle" '
                 f'font-size="10">{i * 10}%</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="wall time of passing candidates against the timeout">{bars}'
            f'<text x="{width / 2}" y="{height - 6}" text-anchor="middle" font-size="12">'
            f'wall time / timeout (passing candidates; red: within 20% of the limit)</text></svg>')


class Strong(str):
    """Text shown in bold."""


class Code(str):
    """Text shown as code."""


class Doc:
    """A report as blocks of text and tables, rendered to Markdown and to HTML by two renderers that
    each escape every string for their own target. Strings here are data, whoever wrote them (a task id,
    a reason, a candidate's exception name): no string can become a heading, a row or a tag."""

    def __init__(self):
        self.blocks: list[tuple] = []

    def h1(self, title: str) -> None:
        self.blocks.append(("h1", title))

    def h2(self, title: str, svg: str = "") -> None:
        self.blocks.append(("h2", title, svg))

    def para(self, *parts: str) -> None:
        self.blocks.append(("p", parts))

    def bullets(self, items: list[tuple]) -> None:
        """items: (parts, [sub-item parts, ...])"""
        self.blocks.append(("ul", items))

    def table(self, headers: list[str], rows: list[list]) -> None:
        self.blocks.append(("table", headers, rows))

    def markdown(self) -> str:
        out: list[str] = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h1":
                out += [f"# {_md(block[1])}", ""]
            elif kind == "h2":
                out += [f"## {_md(block[1])}", ""]
            elif kind == "p":
                out += [_md_parts(block[1]), ""]
            elif kind == "ul":
                for parts, subs in block[1]:
                    out.append(f"- {_md_parts(parts)}")
                    out += [f"  - {_md_parts(sub)}" for sub in subs]
                out.append("")
            else:
                _, headers, rows = block
                out.append("| " + " | ".join(_md(h) for h in headers) + " |")
                out.append("|" + "---|" * len(headers))
                out += ["| " + " | ".join(_md_parts(c if isinstance(c, tuple) else (c,)) for c in row) + " |"
                        for row in rows]
                out.append("")
        return "\n".join(out).rstrip("\n") + "\n"

    def html(self) -> str:
        out: list[str] = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h1":
                out.append(f"<h1>{_h(block[1])}</h1>")
            elif kind == "h2":
                out.append(f"<h2>{_h(block[1])}</h2>{block[2]}")
            elif kind == "p":
                out.append(f"<p>{_h_parts(block[1])}</p>")
            elif kind == "ul":
                items = "".join(f"<li>{_h_parts(parts)}"
                                + (f"<ul>{''.join(f'<li>{_h_parts(s)}</li>' for s in subs)}</ul>" if subs else "")
                                + "</li>" for parts, subs in block[1])
                out.append(f"<ul>{items}</ul>")
            else:
                _, headers, rows = block
                out.append("<table><thead><tr>" + "".join(f"<th>{_h(h)}</th>" for h in headers) + "</tr></thead><tbody>"
                           + "".join("<tr>" + "".join(f"<td>{_h_parts(c if isinstance(c, tuple) else (c,))}</td>"
                                                      for c in row) + "</tr>" for row in rows)
                           + "</tbody></table>")
        style = ("body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;color:#222}"
                 "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
                 "th{background:#f3f3f3}code{background:#f3f3f3;padding:0 3px}h2{margin-top:1.6em}svg{display:block}")
        return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>passk report</title>"
                f"<style>{style}</style></head><body>{''.join(out)}</body></html>\n")


def _md(value) -> str:
    return text.markdown_inline(str(value))


def _h(value) -> str:
    return html.escape(text.terminal(str(value), text.DETAIL_CHARS))


def _render_parts(parts, escape, strong: str, code: str) -> str:
    """Inline parts, each escaped for the target; only the wrappers (ours) are markup. In Markdown the
    code wrapper is an HTML tag, not a backtick span, whose content could not be escaped."""
    return "".join(strong.format(escape(p)) if isinstance(p, Strong) else
                   code.format(escape(p)) if isinstance(p, Code) else escape(p) for p in parts)


def _md_parts(parts) -> str:
    return _render_parts(parts, _md, "**{}**", "<code>{}</code>")


def _h_parts(parts) -> str:
    return _render_parts(parts, _h, "<strong>{}</strong>", "<code>{}</code>")


def build_report(run_dir) -> tuple[str, str]:
    """Return (markdown, html) for a run directory."""
    from .constants import MANIFEST_FILE, RESULTS_FILE, SCORE_FILE
    from .results import latest_rows, read_rows
    from .scoring import ScoringOptions, score_rows

    run_dir = Path(run_dir)
    rows = list(latest_rows(read_rows(run_dir / RESULTS_FILE)).values())
    manifest = json.loads((run_dir / MANIFEST_FILE).read_text()) if (run_dir / MANIFEST_FILE).exists() else {}
    saved = json.loads((run_dir / SCORE_FILE).read_text()) if (run_dir / SCORE_FILE).exists() else {}
    scoring = saved.get("scoring", {})
    opts = ScoringOptions(ks=tuple(scoring.get("ks", DEFAULT_K)),
                          k_policy=scoring.get("k_policy", "all"), selection=scoring.get("selection", "first"),
                          seed=scoring.get("seed", 0), bootstrap=scoring.get("bootstrap_resamples", 1000))
    score = score_rows(rows, options=opts)
    curve = _curve(score, rows)
    margins = _margins(rows)
    audit = json.loads((run_dir / "audit.json").read_text()) if (run_dir / "audit.json").exists() else None
    limits = rows[0].limits if rows else {}
    head = {
        "tasks": score["num_tasks"], "candidates": score["num_candidates"],
        "n": f"{score['n_min']}" if score["n_min"] == score["n_max"] else f"{score['n_min']}..{score['n_max']}",
        "k reported": ", ".join(score["pass_at_k"]) or "none", "estimator": score["estimator"],
        "k policy": opts.k_policy, "selection rule": opts.selection,
        "limits": ", ".join(f"{k}={limits[k]}" for k in ("timeout_s", "cpu_time_s", "memory_mb", "cpus", "pids",
                                                        "output_bytes", "network") if k in limits),
        "image": f"{limits.get('image', '?')} ({str(limits.get('image_id', '?'))[:19]})",
        "runtime": f"{limits.get('runtime', '?')}, isolation {limits.get('isolation', '?')}",
    }
    gen = manifest.get("config", {}).get("generation")
    if gen:
        head["generation"] = json.dumps(gen, sort_keys=True)
    doc = Doc()
    doc.h1("passk report")
    doc.bullets([((Strong(k), f": {v}"), []) for k, v in head.items()])
    doc.h2("pass@k")
    ks = []
    for k, v in score["pass_at_k"].items():
        u = score["pass_at_k_uncertainty"].get(k, {})
        ci = u.get("ci95")
        ks.append([k, f"{v:.4f}", score["pass_at_k_exact"][k], f"{u.get('se', 0):.4f}",
                   f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"])
    doc.table(["k", "pass@k", "exact", "SE", "95% CI (bootstrap over tasks)"], ks)
    for k, why in score["omitted_k"].items():
        doc.para(f"omitted pass@{k}: {why}")
    for k, sub in score.get("pass_at_k_subset", {}).items():
        doc.para(f"pass@{k} on a subset: {sub['value']:.4f} ({sub['exact']}) — {sub['note']}")
    sel = score.get("selected_answer")
    if sel:
        doc.para(Strong("Selected answer"), " (rule ", Code(sel["rule"]),
                 f"): {sel['success_rate']:.4f} ({sel['success_rate_exact']}) over {sel['tasks']} tasks — {sel['note']}.")
    if score.get("pooled_pass_rate"):
        p = score["pooled_pass_rate"]
        doc.para(f"Pooled candidate pass rate: {p['value']:.4f} ({p['exact']}) — {p['note']}.")
    if score.get("generation_groups"):
        doc.h2("Generation groups")
        doc.para(score["mixed_generation"])
        doc.table(["group", "tasks", "n", "pass@k"],
                  [[(Code(g),), sub["num_tasks"], f"{sub['n_min']}..{sub['n_max']}",
                    ", ".join(f"@{k}={v:.4f}" for k, v in sub["pass_at_k"].items()) or "-"]
                   for g, sub in score["generation_groups"].items()])
    doc.h2("pass@k curve", _svg_line([(k, v) for k, v, _ in curve]))
    doc.table(["k", "pass@k", "exact"], [[k, f"{v:.4f}", e] for k, v, e in curve])
    doc.h2("Labels")
    doc.table(["status", "count"], [[k, v] for k, v in score["labels"].items()])
    doc.table(["status:reason", "count"], [[k, v] for k, v in score["reasons"].items()])
    doc.h2("Wall time of passing candidates against the timeout", _svg_bars(margins["bins"]))
    doc.para(f"{margins['count']} passing candidates; {margins['within_20pct']} passed within 20% of the limit"
             + (f"; the closest used {margins['max']:.0%} of it." if margins["max"] is not None else "."))
    doc.table(["share of timeout", "passing candidates"],
              [[f"{i * 10}–{i * 10 + 10}%", b] for i, b in enumerate(margins["bins"])])
    if audit:
        doc.h2("Audit")
        items = []
        for rel in audit.get("relaxed", []):
            items.append(((f"limits ×{rel['factor']}: {len(rel['flips'])} labels change; pass@k "
                           + ", ".join(f"@{k}={v:.4f}" for k, v in rel.get("pass_at_k", {}).items()),),
                          [(f"{f['task_id']} #{f['sample_index']}: {f['from']} → {f['to']}",) for f in rel["flips"][:20]]))
        canon = audit.get("canonical", {})
        if canon.get("cannot_pass"):
            items.append(((f"canonical solutions that cannot pass under the limits: {', '.join(canon['cannot_pass'])}",), []))
        flaky = audit.get("flaky", {})
        if flaky:
            items.append(((f"flakiness: {len(flaky.get('changed', []))} of {flaky.get('checked', 0)} candidates "
                           f"changed label over {flaky.get('repeat', 0)} reruns",), []))
        doc.bullets(items)
    doc.h2("Tasks")
    task_rows = []
    for t, c in sorted(score["per_task"].items(), key=lambda item: _natural(item[0])):
        d = score["diversity"].get(t, {})
        task_rows.append([t, c["n"], c["c"], c["failed"], c["timed_out"], c["errors"], d.get("distinct", "-"),
                          f"{c['c'] / c['n']:.3f}" if c["n"] else "-"])
    doc.table(["task", "n", "c", "failed", "timed out", "errors", "distinct texts", "pass@1"], task_rows)
    return doc.markdown(), doc.html()


def _natural(text: str):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def write_report(run_dir) -> tuple[Path, Path]:
    md, page = build_report(run_dir)
    run_dir = Path(run_dir)
    (run_dir / "report.md").write_text(md, encoding="utf-8")
    (run_dir / "report.html").write_text(page, encoding="utf-8")
    return run_dir / "report.md", run_dir / "report.html"
