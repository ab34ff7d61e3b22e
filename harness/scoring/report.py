"""Human-readable output: the summary table printed after a run and by `passk score`, and
report.md / report.html for a run directory."""

from __future__ import annotations

import functools
import html
import json
import re
from collections import Counter
from pathlib import Path

from harness.core import text
from harness.core.constants import DEFAULT_K, LABELS, VERDICTS


def format_summary(score: dict) -> str:
    lines = []
    n_text = (f"n = {score['n_min']}" if score["n_min"] == score["n_max"]
              else f"n = {score['n_min']}..{score['n_max']}")
    lines.append(f"tasks {score['num_tasks']} · candidates {score['num_candidates']} · {n_text} per task")
    lines.append("labels  " + "  ".join(f"{label} {score['labels'].get(label, 0)}" for label in LABELS))
    channels = score.get("verdict_channels") or {}
    if channels:
        lines.append("verdicts by  " + "  ".join(f"{ch} {sum(per.values())}" for ch, per in channels.items()))
    base = score.get("base")
    if base:
        b = base.get("labels", {})
        lines.append("base    " + "  ".join(f"{label} {b.get(label, 0)}" for label in VERDICTS)
                     + "   (EvalPlus: status is the plus verdict, base and plus inputs; base is the base inputs')")
    if score["pass_at_k"]:
        lines.append("")
        title = "plus" if base else "pass@k"
        head = f"{'k':>5}  {title:>8}  {'SE':>7}  {'95% CI':>17}  {'of tasks':>12}  exact"
        lines.append(head + (f"{'':8}{'base':>8}  {'SE':>7}  {'of tasks':>12}  exact" if base else ""))
        for k, value in score["pass_at_k"].items():
            u = score.get("pass_at_k_uncertainty", {}).get(k, {})
            ci = f"[{u['ci95'][0]:.4f}, {u['ci95'][1]:.4f}]" if u.get("ci95") else "-"
            line = (f"{k:>5}  {value:>8.4f}  {u.get('se', 0):>7.4f}  {ci:>17}  "
                    f"{score.get('pass_at_k_tasks', {}).get(k, '-'):>12}  {score['pass_at_k_exact'][k]}")
            if base and k in base.get("pass_at_k", {}):
                bu = base.get("pass_at_k_uncertainty", {}).get(k, {})
                line = (f"{line:<{len(head)}}{'':8}{base['pass_at_k'][k]:>8.4f}  {bu.get('se', 0):>7.4f}  "
                        f"{base.get('pass_at_k_tasks', {}).get(k, '-'):>12}  {base['pass_at_k_exact'][k]}")
            lines.append(line)
    for k, why in score["omitted_k"].items():
        lines.append(f"omitted pass@{k}: {why}")
    for k, sub in score.get("pass_at_k_subset", {}).items():
        lines.append(f"pass@{k} on a subset: {sub['value']:.4f} ({sub['exact']}) — {sub['note']}")
    if score.get("mixed_generation"):
        lines.append(f"not one pass@k: {score['mixed_generation']}")
        for g, sub in score["generation_groups"].items():
            values = ", ".join(f"pass@{k} {v:.4f} ({sub['pass_at_k_exact'][k]})" for k, v in sub["pass_at_k"].items())
            lines.append(f"  group {g}: {sub['num_tasks']} tasks, n = {sub['n_min']}..{sub['n_max']}: {values or 'no k'}")
    mean = score.get("score")
    if mean:
        lines.append(f"mean score {mean['mean']:.4f} over {mean['tasks']} scoring tasks ({mean['candidates']} candidates) "
                     "— partial credit from test groups; pass@k counts full passes only")
    sel = score.get("selected_answer")
    if sel:
        lines.append(f"selected answer (rule: {sel['rule']}): success {sel['success_rate']:.4f} "
                     f"({sel['success_rate_exact']}) — the one answer a user gets, not pass@k")
    rep = score.get("repair")
    if rep:
        fixed = (f"repair rate {rep['repair_rate']:.4f} ({rep['repaired']}/{rep['second_tries']} failed first tries "
                 "fixed by their second)" if rep.get("repair_rate") is not None else "no second try")
        lines.append(f"repair (apart from pass@k, which counts first tries only): try 1 {rep['try1_rate']:.4f}, within "
                     f"two tries {rep['within_two_rate']:.4f}, {fixed}")
        aider = rep.get("aider")
        if aider:
            lines.append(f"aider's record of these {aider['exercises']} exercises: pass_rate_1 {aider['pass_rate_1']:.4f}, "
                         f"pass_rate_2 {aider['pass_rate_2']:.4f}; passk's verdict agrees on {aider['agree']}, "
                         f"differs on {aider['differ']}")
            for d in aider["differences"][:10]:
                lines.append(f"  {d}")
    pooled = score.get("pooled_pass_rate")
    if pooled:
        lines.append(f"pooled candidate pass rate {pooled['value']:.4f} ({pooled['exact']}) — {pooled['note']}")
    if score.get("excluded_errors"):
        lines.append(f"excluded {score['excluded_errors']} error rows at the user's request (--exclude-errors)")
    hint = input_hint(score)
    if hint:
        lines.append(hint)
    missing = score.get("tasks_without_samples")
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        lines.append(f"tasks without samples (left out of the mean): {len(missing)}: {shown}")
    return text.terminal_lines(lines)


def input_hint(score: dict) -> str:
    """A run that is mostly syntax errors is almost always malformed input, not a bad model."""
    syntax = score["reasons"].get("failed:syntax_error", 0)
    total = sum(score["labels"].values())
    if total and syntax * 2 > total:
        return (f"hint: {syntax} of {total} candidates are syntax errors: the samples are probably malformed, "
                "e.g. completions that repeat the whole `def` (give such programs as `solution`, not "
                "`completion`), a markdown fence around the code, or the wrong field")
    return ""


SCORE_COLUMNS = ("k", "pass_at_k", "exact", "of_tasks", "se", "ci95_low", "ci95_high", "tasks", "note", "score")


def score_table(score: dict) -> list[list]:
    """One row per k asked for, reported or omitted (with why), for CSV and Markdown tables; for EvalPlus
    runs one per k and score (plus, then base)."""
    rows = []
    ks = [str(k) for k in score.get("scoring", {}).get("ks", [])] or list(score["pass_at_k"])
    blocks = [("plus", score), ("base", score["base"])] if score.get("base") else [("", score)]
    for name, block in blocks:
        for k in ks:
            if k in block["pass_at_k"]:
                u = block.get("pass_at_k_uncertainty", {}).get(k, {})
                ci = u.get("ci95") or [None, None]
                rows.append([k, f"{block['pass_at_k'][k]:.6f}", block["pass_at_k_exact"][k],
                             block.get("pass_at_k_tasks", {}).get(k, ""), f"{u.get('se', 0):.6f}",
                             "" if ci[0] is None else f"{ci[0]:.6f}", "" if ci[1] is None else f"{ci[1]:.6f}",
                             score["num_tasks"], "", name])
            else:
                rows.append([k, "", "", "", "", "", "", score["num_tasks"],
                             block["omitted_k"].get(k, "not reported"), name])
    return rows


def format_score(score: dict, fmt: str) -> str:
    """`passk score --format csv|markdown`: pass@k per k, for papers."""
    if fmt == "csv":
        import csv
        import io
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        writer.writerows(score_table(score))
        return buf.getvalue().rstrip("\n")
    doc = Doc()
    doc.table(["k", "pass@k", "exact", "of tasks", "SE", "95% CI low", "95% CI high", "tasks", "note", "score"],
              score_table(score))
    return doc.markdown().rstrip("\n")


# ------------------------------------------------------------------------------------------------
# report.md and report.html: computed from results.jsonl (and manifest.json / audit.json when present).
# Charts are inline SVG written here, so the report needs no plotting library and no network.
# ------------------------------------------------------------------------------------------------


def _curve(score: dict, rows, verdict: str = "status") -> list[tuple[int, float]]:
    """pass@k for k = 1..min n, as floats (a chart; the exact values of the reported k are in the table);
    `verdict` "base": of EvalPlus's base verdicts."""
    from harness.scoring.score import count_tasks, pass_at_k
    counts = [c for c in count_tasks(rows, exclude_errors=True, verdict=verdict).values() if c.n > 0]
    if not counts or score.get("errors_remaining"):
        return []
    pairs = Counter((c.n, c.c) for c in counts)  # tasks share (n, c): each pair is computed once per k
    return [(k, sum(pass_at_k(n, c, k) * times for (n, c), times in pairs.items()) / len(counts))
            for k in range(1, min(c.n for c in counts) + 1)]


def _margins(rows) -> dict:
    """Wall time of passing candidates as a fraction of their timeout."""
    from harness.scoring.score import time_shares
    ratios = [share for share, _, _ in time_shares(rows)]
    bins = [0] * 10
    for x in ratios:
        bins[min(9, int(x * 10))] += 1
    return {"count": len(ratios), "bins": bins, "within_20pct": sum(1 for x in ratios if x >= 0.8),
            "max": max(ratios) if ratios else None}


def _svg_line(points: list[tuple[int, float]], width=520, height=220, second=None) -> str:
    """The pass@k curve; `second` (EvalPlus's base curve) drawn dashed beside it."""
    if not points:
        return ""
    pad = 40
    kmax = max(k for k, _ in points)
    def x(k):
        return pad + (k - 1) / max(1, kmax - 1) * (width - 2 * pad)
    def y(v):
        return height - pad + 10 - v * (height - 2 * pad)
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(k):.1f},{y(v):.1f}" for i, (k, v) in enumerate(points))
    extra = ""
    if second:
        line = " ".join(f"{'M' if i == 0 else 'L'}{x(k):.1f},{y(v):.1f}" for i, (k, v) in enumerate(second))
        extra = (f'<path d="{line}" fill="none" stroke="#c2721b" stroke-width="2" stroke-dasharray="6 4"/>'
                 + "".join(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="#c2721b"><title>base pass@{k} = '
                           f'{v:.4f}</title></circle>' for k, v in second)
                 + f'<text x="{width - pad}" y="{pad - 14}" text-anchor="end" font-size="11" fill="#c2721b">'
                   f'base (dashed)</text><text x="{width - pad}" y="{pad - 2}" text-anchor="end" font-size="11" '
                   f'fill="#1f5fa8">plus</text>')
    dots = "".join(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3"><title>pass@{k} = {v:.4f}</title></circle>'
                   for k, v in points)
    grid = "".join(f'<line x1="{pad}" x2="{width - pad}" y1="{y(g):.1f}" y2="{y(g):.1f}" stroke="#ddd"/>'
                   f'<text x="{pad - 6}" y="{y(g) + 4:.1f}" text-anchor="end" font-size="11">{g:.2f}</text>'
                   for g in (0, 0.25, 0.5, 0.75, 1.0))
    ticks = "".join(f'<text x="{x(k):.1f}" y="{height - pad + 26}" text-anchor="middle" font-size="11">{k}</text>'
                    for k, _ in points if kmax <= 20 or k in (1, kmax) or k % max(1, kmax // 10) == 0)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="pass@k curve">{grid}{ticks}<path d="{path}" fill="none" stroke="#1f5fa8" stroke-width="2"/>'
            f'{dots}{extra}<text x="{width / 2}" y="{height - 4}" text-anchor="middle" font-size="12">k</text></svg>')


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

    def pre(self, body: str, title: str = "") -> None:
        """Verbatim text (code, output): escaped, never interpreted."""
        self.blocks.append(("pre", body, title))

    def details(self, summary: tuple, inner: "Doc", open_: bool = False) -> None:
        """A section shown folded in HTML (<details>, no scripts); Markdown leaves it out."""
        self.blocks.append(("details", summary, inner, open_))

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
            elif kind == "pre":
                body, title = block[1], block[2]
                fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
                out += ([f"{_md(title)}:", ""] if title else []) + [fence, text.visible(body), fence, ""]
            elif kind == "details":
                continue
            else:
                _, headers, rows = block
                out.append("| " + " | ".join(_md(h) for h in headers) + " |")
                out.append("|" + "---|" * len(headers))
                out += ["| " + " | ".join(_md_parts(c if isinstance(c, tuple) else (c,)) for c in row) + " |"
                        for row in rows]
                out.append("")
        return "\n".join(out).rstrip("\n") + "\n"

    def html_body(self) -> str:
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
            elif kind == "pre":
                body, title = block[1], block[2]
                out.append((f"<div class=\"label\">{_h(title)}</div>" if title else "")
                           + f"<pre>{html.escape(text.visible(body))}</pre>")
            elif kind == "details":
                _, summary, inner, open_ = block
                out.append(f"<details{' open' if open_ else ''}><summary>{_h_parts(summary)}</summary>"
                           f"{inner.html_body()}</details>")
            else:
                _, headers, rows = block
                out.append("<table><thead><tr>" + "".join(f"<th>{_h(h)}</th>" for h in headers) + "</tr></thead><tbody>"
                           + "".join("<tr>" + "".join(f"<td>{_h_parts(c if isinstance(c, tuple) else (c,))}</td>"
                                                      for c in row) + "</tr>" for row in rows)
                           + "</tbody></table>")
        return "".join(out)

    def html(self) -> str:
        style = ("body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;color:#222}"
                 "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
                 "th{background:#f3f3f3}code{background:#f3f3f3;padding:0 3px}h2{margin-top:1.6em}svg{display:block}"
                 "details{margin:.3em 0 .3em 1em}summary{cursor:pointer}pre{background:#f7f7f7;padding:6px;"
                 "overflow-x:auto;max-height:24em;white-space:pre-wrap;word-break:break-all}"
                 ".label{font-size:90%;color:#555;margin-top:.4em}")
        return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>passk report</title>"
                f"<style>{style}</style></head><body>{self.html_body()}</body></html>\n")


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


DRILL_PER_TASK = 10      # candidates shown in one task's drill-down (failures first)
DRILL_TOTAL = 2000       # candidates shown in all drill-downs together
CODE_CHARS = 4000        # of each candidate's program, in its drill-down


def _load_programs(manifest: dict) -> tuple[dict, str]:
    """{(task_id, sample_index): program} from the run's inputs, and a note when they cannot be read."""
    from harness.core.errors import InputError
    from harness.inputs.problems import load_problems
    from harness.inputs.samples import load_samples
    inputs = manifest.get("inputs", {})
    try:
        from harness.inputs.config import config_from_dict
        cfg = config_from_dict(manifest["config"]) if manifest.get("config") else None
        problems = load_problems(inputs["problems"]["path"], cfg.problems_format if cfg else None,
                                 cfg.channel if cfg else None)
        samples = load_samples(inputs["samples"]["path"], problems, cfg.generation if cfg else None,
                               cfg.sample_options if cfg else None)
    except (KeyError, TypeError, InputError, OSError) as e:
        return {}, f"the candidates' code is not shown: the run's inputs cannot be read ({text.clean(str(e), 200)})"
    return {(s.task_id, s.sample_index): s for s in samples}, ""


def _why_table(rows) -> list[list]:
    """The most common reasons candidates did not pass, each with how many and one example."""
    from harness.core.constants import PASSED
    groups: dict[str, list] = {}
    for r in sorted(rows, key=lambda r: (_natural(r.task_id), r.sample_index)):
        if r.status != PASSED:
            groups.setdefault(f"{r.status} {r.reason or '-'}", []).append(r)
    total = len(rows) or 1
    out = []
    for key, group in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:20]:
        ex = group[0]
        out.append([key, len(group), f"{100 * len(group) / total:.1f}%",
                    f"{ex.task_id} #{ex.sample_index}: {text.clean(ex.detail, 160)}"])
    return out


_ORDER = {"failed": 0, "timed_out": 1, "error": 2, "passed": 3}


TESTS_SHOWN = 60   # of a judged candidate's tests, in its drill-down (the one that decided always among them)


def _judged(doc: "Doc", r) -> None:
    """A judged candidate's groups (and score) and its tests: verdict, CPU and wall time, memory."""
    if r.groups:
        doc.table(["group", "verdict", "tests accepted", "score"],
                  [[g.get("name", ""), g.get("verdict", ""), f"{g.get('accepted', 0)}/{g.get('tests', 0)}",
                    "-" if g.get("score") is None else f"{g['score']:g} of {'-' if g.get('max') is None else format(g['max'], 'g')}"]
                   for g in r.groups])
    if r.score is not None:
        doc.para(f"score {r.score:.4f} (of 1)")
    if r.tests and r.verdict_channel == "repo":   # a repository task's listed tests: the ones that did not pass first
        order = sorted(r.tests, key=lambda t: t.get("status") in ("PASSED", "XFAIL", "SKIPPED"))
        shown = order[:TESTS_SHOWN]
        doc.table(["test", "list", "status"], [[text.clean(t.get("name", ""), 200), t.get("list", ""),
                                                t.get("status", "")] for t in shown])
        if len(shown) < len(r.tests):
            doc.para(f"{len(r.tests) - len(shown)} more tests are not shown")
        return
    if r.tests:
        bad = [t for t in r.tests if t.get("verdict") not in ("ok", "skipped")]
        shown = r.tests[:TESTS_SHOWN] + [t for t in bad[:1] if t not in r.tests[:TESTS_SHOWN]]
        doc.table(["test", "verdict", "CPU s", "wall s", "memory MB", "detail"],
                  [[t.get("name") or t.get("i", ""), t.get("verdict", ""), _num(t.get("time_s")), _num(t.get("wall_s")),
                    "-" if t.get("memory_kb") is None else f"{t['memory_kb'] / 1024:.1f}",
                    text.clean(t.get("detail", ""), 160)] for t in shown])
        if len(shown) < len(r.tests):
            doc.para(f"{len(r.tests) - len(shown)} more tests are not shown")


def _num(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _drill_down(doc: "Doc", rows, programs: dict, note: str) -> None:
    """Per task, worst first: a folded section with each shown candidate's label, reason, detail,
    output tails and code, failures first."""
    by_task: dict[str, list] = {}
    for r in rows:
        by_task.setdefault(r.task_id, []).append(r)

    def badness(item):
        task, rs = item
        passed = sum(r.status == "passed" for r in rs)
        return (passed / len(rs), -sum(r.status in ("timed_out", "error") for r in rs), _natural(task))

    budget = DRILL_TOTAL
    shown_tasks = 0
    for task, rs in sorted(by_task.items(), key=badness):
        rs.sort(key=lambda r: (_ORDER.get(r.status, 9), r.sample_index))
        passed = sum(r.status == "passed" for r in rs)
        inner = Doc()
        take = rs[:min(DRILL_PER_TASK, budget)]
        budget -= len(take)
        inner.table(["#", "label", "reason", "wall s", "detail"],
                    [[r.sample_index, r.status, r.reason, "-" if r.wall_s is None else f"{r.wall_s:.3f}",
                      text.clean(r.detail, 200)] for r in take])
        for r in take:
            one = Doc()
            if r.detail:
                one.pre(r.detail, "detail")
            _judged(one, r)
            if r.stdout_tail:
                one.pre(r.stdout_tail, f"stdout (last {len(r.stdout_tail)} characters of {r.stdout_bytes} bytes)")
            if r.stderr_tail:
                one.pre(r.stderr_tail, f"stderr (last {len(r.stderr_tail)} characters of {r.stderr_bytes} bytes)")
            sample = programs.get((r.task_id, r.sample_index))
            if sample is None:
                one.para(note or "code: not in the run's inputs")
            else:
                code = sample.program
                changed = r.candidate_sha256 and sample.sha256 != r.candidate_sha256
                title = "code" + (" (NOTE: the samples file has changed since this run)" if changed else "")
                one.pre(code if len(code) <= CODE_CHARS else code[:CODE_CHARS] + f"\n… [{len(code) - CODE_CHARS} more characters]",
                        title)
            inner.details((f"#{r.sample_index} ", Strong(r.status), f" {r.reason}"), one)
        if len(take) < len(rs):
            inner.para(f"{len(rs) - len(take)} more candidates of this task are not shown "
                       f"(at most {DRILL_PER_TASK} per task and {DRILL_TOTAL} in the report)")
        doc.details((Code(task), f" — {passed}/{len(rs)} passed, "
                     f"{sum(r.status == 'failed' for r in rs)} failed, {sum(r.status == 'timed_out' for r in rs)} "
                     f"timed out, {sum(r.status == 'error' for r in rs)} errors"), inner)
        shown_tasks += 1


def build_report(run_dir) -> tuple[str, str]:
    """Return (markdown, html) for a run directory."""
    from harness.core.constants import MANIFEST_FILE, RESULTS_FILE, SCORE_FILE
    from harness.records.results import latest_rows, read_rows
    from harness.inputs.config import ScoringOptions
    from harness.scoring.score import score_rows

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
    if "time_limit_s" in limits:   # a judged problem's own limits, per problem: each row has its own
        judged = [r.limits for r in rows if "time_limit_s" in (r.limits or {})]
        tls = sorted({lim["time_limit_s"] for lim in judged})
        head["limits"] = (f"each judged problem's own: CPU time {', '.join(f'{t:g}' for t in tls[:6])} s per test "
                          f"(wall-clock backstop 2 x + 1 s), memory {', '.join(sorted({str(lim['memory_mb']) for lim in judged}))} "
                          f"MB, stack as large, output {limits.get('output_bytes')} bytes; cpus={limits.get('cpus')}, "
                          f"network={limits.get('network')}")
    ep = limits.get("evalplus")
    if isinstance(ep, dict):
        head["limits"] = (f"EvalPlus's ({ep.get('rule')}): per input max({ep.get('min_time_limit_s')} s, "
                          f"{ep.get('gt_time_limit_factor')} x the ground truth's time), per check "
                          f"min({ep.get('task_timeout_s')} s, their sum) + 2 s; memory_mb={limits.get('memory_mb')}, "
                          f"cpus={limits.get('cpus')}, network={limits.get('network')}")
        gt = manifest.get("ground_truth") or {}
        head["ground truth"] = (f"{gt.get('tasks', '?')} tasks, {gt.get('inputs', '?')} inputs, measured in the sandbox "
                                f"({gt.get('source', '?')}; sha256 {str(gt.get('sha256', '?'))[:12]})")
    gen = manifest.get("config", {}).get("generation")
    if gen:
        head["generation"] = json.dumps(gen, sort_keys=True)
    doc = Doc()
    doc.h1("passk report")
    doc.bullets([((Strong(k), f": {v}"), []) for k, v in head.items()])
    hint = input_hint(score)
    if hint:
        doc.para(Strong("Input"), f": {hint}")
    doc.h2("pass@k")
    base = score.get("base")
    ks = []
    for k, v in score["pass_at_k"].items():
        u = score["pass_at_k_uncertainty"].get(k, {})
        ci = u.get("ci95")
        row = [k, f"{v:.4f}", score["pass_at_k_exact"][k], score.get("pass_at_k_tasks", {}).get(k, "-"),
               f"{u.get('se', 0):.4f}", f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"]
        if base:
            bu = base.get("pass_at_k_uncertainty", {}).get(k, {})
            bci = bu.get("ci95")
            row[1:1] = [f"{base['pass_at_k'][k]:.4f}" if k in base["pass_at_k"] else "-"]
            row += [base["pass_at_k_exact"].get(k, "-"), f"[{bci[0]:.4f}, {bci[1]:.4f}]" if bci else "-"]
        ks.append(row)
    if base:
        doc.para("EvalPlus's two scores, side by side: ", Strong("base"), " counts a candidate that passed the "
                 "base inputs (the original benchmark's tests); ", Strong("plus"), " one that passed the base and "
                 "the plus inputs (each row's status).")
        doc.table(["k", "base pass@k", "plus pass@k", "plus exact", "plus of tasks", "plus SE", "plus 95% CI",
                   "base exact", "base 95% CI"], ks)
        for k, why in base["omitted_k"].items():
            doc.para(f"omitted base pass@{k}: {why}")
    else:
        doc.table(["k", "pass@k", "exact", "of tasks", "SE", "95% CI (bootstrap over tasks)"], ks)
    for k, why in score["omitted_k"].items():
        doc.para(f"omitted pass@{k}: {why}")
    for k, sub in score.get("pass_at_k_subset", {}).items():
        doc.para(f"pass@{k} on a subset: {sub['value']:.4f} ({sub['exact']}) — {sub['note']}")
    if score.get("score"):
        m = score["score"]
        doc.para(Strong("Mean score"), f" {m['mean']:.4f} over {m['tasks']} scoring tasks ({m['candidates']} candidates): "
                 f"{m['note']}.")
        doc.table(["task", "mean score", "candidates", "full score"],
                  [[t, f"{v['mean']:.4f}", v["n"], v["full"]] for t, v in m["per_task"].items()])
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
    doc.h2("Why candidates did not pass")
    why = _why_table(rows)
    if why:
        doc.table(["label and reason", "candidates", "share of all", "example (task #sample: detail)"], why)
    else:
        doc.para("Every candidate passed.")
    if base:
        base_curve = _curve(score, rows, verdict="base")
        doc.h2("pass@k curve", _svg_line(curve, second=base_curve))
        doc.table(["k", "plus pass@k", "base pass@k"], [[k, f"{v:.4f}", f"{b:.4f}"] for (k, v), (_, b) in zip(curve, base_curve)])
    else:
        doc.h2("pass@k curve", _svg_line([(k, v) for k, v in curve]))
        doc.table(["k", "pass@k"], [[k, f"{v:.4f}"] for k, v in curve])
    doc.h2("Labels")
    if base:
        doc.table(["status", "count (plus: the row's status)", "base verdicts"],
                  [[k, v, base.get("labels", {}).get(k, "-")] for k, v in score["labels"].items()])
    else:
        doc.table(["status", "count"], [[k, v] for k, v in score["labels"].items()])
    channels = score.get("verdict_channels") or {}
    if channels:
        doc.para("Who decided the verdicts (proxy: the tests in a process the candidate cannot reach; "
                 "in_process: the candidate's own process, forgeable by deliberate code; io: the supervisor "
                 "comparing stdout):")
        doc.table(["verdict channel", *score["labels"]],
                  [[ch, *[per.get(label, 0) for label in score["labels"]]] for ch, per in channels.items()])
    doc.h2("Wall time of passing candidates against the timeout" if not base else
           "Time of passing candidates against their limits (EvalPlus: each one's largest share of an input's limit)",
           _svg_bars(margins["bins"]))
    doc.para(f"{margins['count']} passing candidates; {margins['within_20pct']} passed within 20% of the limit"
             + (f"; the closest used {margins['max']:.0%} of it." if margins["max"] is not None else "."))
    doc.table(["share of timeout", "passing candidates"],
              [[f"{i * 10}–{i * 10 + 10}%", b] for i, b in enumerate(margins["bins"])])
    if audit:
        doc.h2("Audit")
        items = []
        for rel in audit.get("relaxed", []):
            flips = (f" (EvalPlus: {rel['plus_flips']} plus and {rel['base_flips']} base verdicts flip; base pass@k "
                     + ", ".join(f"@{k}={v:.4f}" for k, v in rel.get("base_pass_at_k", {}).items()) + ")"
                     if "plus_flips" in rel else "")
            items.append(((f"limits ×{rel['factor']}: {len(rel['flips'])} labels change; pass@k "
                           + ", ".join(f"@{k}={v:.4f}" for k, v in rel.get("pass_at_k", {}).items()) + flips,),
                          [(f"{f['task_id']} #{f['sample_index']}: {f['from']} → {f['to']}",) for f in rel["flips"][:20]]))
        canon = audit.get("canonical", {})
        if canon.get("cannot_pass"):
            items.append(((f"canonical solutions that cannot pass under the limits: {', '.join(canon['cannot_pass'])}",), []))
        flaky = audit.get("flaky", {})
        if flaky:
            items.append(((f"flakiness: {len(flaky.get('changed', []))} of {flaky.get('checked', 0)} candidates "
                           f"changed label over {flaky.get('repeat', 0)} reruns",), []))
        doc.bullets(items)
    doc.h2("Tasks, worst first")
    task_rows = []
    if base:
        from harness.scoring.score import count_tasks
        base_c = {t: c.c for t, c in count_tasks(rows, exclude_errors=True, verdict="base").items()}
    for t, c in sorted(score["per_task"].items(), key=lambda item: (
            item[1]["c"] / item[1]["n"] if item[1]["n"] else 1.0, -item[1]["timed_out"] - item[1]["errors"],
            _natural(item[0]))):
        d = score["diversity"].get(t, {})
        task_rows.append([t, c["n"], c["c"], c["failed"], c["timed_out"], c["errors"], d.get("distinct", "-"),
                          f"{c['c'] / c['n']:.3f}" if c["n"] else "-"])
        if base:
            task_rows[-1].insert(3, base_c.get(t, 0))
    columns = ["task", "n", "c", "failed", "timed out", "errors", "distinct texts", "pass@1"]
    if base:
        columns[2:3] = ["c (plus)", "c (base)"]
    means = (score.get("score") or {}).get("per_task")
    if means:
        columns.append("mean score")
        for row in task_rows:
            m = means.get(row[0])
            row.append("-" if m is None else f"{m['mean']:.3f}")
        doc.para(f"Mean score {score['score']['mean']:.4f} over {score['score']['tasks']} scoring tasks: "
                 f"{score['score']['note']}.")
    doc.table(columns, task_rows)
    programs, note = _load_programs(manifest)
    drill = Doc()
    _drill_down(drill, rows, programs, note)
    doc.h2("Candidates by task (HTML: open a task)")
    doc.para(f"Each task's candidates, failures first, with what decided each label and the code"
             f" (at most {DRILL_PER_TASK} per task, {DRILL_TOTAL} in all).")
    doc.blocks += drill.blocks
    return doc.markdown(), doc.html()


@functools.lru_cache(maxsize=65536)
def _natural(text: str) -> tuple:
    """Sort key: digits as numbers (Task/2 before Task/10). One per task id, however many rows."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def write_report(run_dir) -> tuple[Path, Path]:
    md, page = build_report(run_dir)
    run_dir = Path(run_dir)
    (run_dir / "report.md").write_text(md, encoding="utf-8")
    (run_dir / "report.html").write_text(page, encoding="utf-8")
    return run_dir / "report.md", run_dir / "report.html"
