#!/usr/bin/env python3
"""The hostile table for patches: every attack of tests/repo_attacks.py on tinycalc (a repository written
for the tests), graded as the harness grades and with --strict-tests, each beside the label written for it
before it ran; then honest candidates in the same workers, which must pass (nothing a patch did reaches
them). Prints the table and the count of unexpected labels; --write-docs writes docs/figures/repo-attacks.md.
With --rows and --repos, the attacks that need nothing of a repository's files run on one instance of each
repository too (tests/repo_attacks.py real_attacks), with their expectations by runner (with --swebench, a
forged report's by the harness's own grading of passk's log: it forges only where the FAIL_TO_PASS tests are
collected on the base).

    python3 scripts/attacks/repo_attacks.py [--rows ROWS --repos DIR [--swebench /tmp/swb/v5]] [--write-docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import figures  # noqa: E402
from tests.repo_attacks import run_table  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--rows", action="append", default=[], help="SWE-bench rows: one instance per repository")
    ap.add_argument("--repos", default=None, help="DIR/<owner>/<name>")
    ap.add_argument("--instances", default=None, help="the instances to attack, comma-separated (default: the first "
                                                     "of each repository)")
    ap.add_argument("--swebench", default=None,
                    help="an unpacked swebench 5.0.2 wheel: a forged report's expected label is its grading of passk's "
                         "log (without it, the runner's rule: a pytest suite resolves)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="passk-repo-attacks-") as tmp:
        table, unexpected, honest = run_table(Path(tmp))
        real = real_table(args, Path(tmp)) if args.rows and args.repos else None
    rows = [[a.name, f"{a.default[0]} {a.default[1]}", f"{got[0][0]} {got[0][1]}" + ("" if got[0] == a.default else " **UNEXPECTED**"),
             f"{a.strict[0]} {a.strict[1]}", f"{got[1][0]} {got[1][1]}" + ("" if got[1] == a.strict else " **UNEXPECTED**"),
             a.documented or "-"] for a, got in table]
    body = figures.table(["patch", "expected", "passk", "expected (--strict-tests)", "passk (--strict-tests)",
                          "documented"], rows)
    body += (f"\n\n{len(table)} patches, 2 gradings: {unexpected} unexpected labels; the honest candidates that ran "
             f"after them in the same workers: {honest}.\n")
    if real is not None:
        rows2, unexpected2 = real
        body += "\nOn real repositories (one instance each):\n\n" + figures.table(
            ["instance", "patch", "expected", "passk", "expected (--strict-tests)", "passk (--strict-tests)"], rows2)
        body += f"\n\n{len(rows2)} patches on {len({r[0] for r in rows2})} instances, 2 gradings: {unexpected2} unexpected.\n"
        unexpected += unexpected2
    return figures.finish("repo-attacks", body, args.write_docs, unexpected)


def repos_under(repos: str) -> set:
    """owner/name of every repository under DIR/<owner>/<name>."""
    return {f"{o.name}/{n.name}" for o in Path(repos).iterdir() if o.is_dir() for n in o.iterdir()}


def real_table(args, root: Path):
    """([instance, patch, expected, passk, expected strict, passk strict]], unexpected) on real instances."""
    import json
    import subprocess
    from dataclasses import replace
    from harness.inputs.repos.specs import spec_for
    from harness.inputs.repos.trees import git_dir
    from scripts.agreement.repos_agreement import swebench_report
    from scripts.lib import passk_run
    from tests.repo_attacks import real_attacks
    rows, seen = [], set()
    wanted = set(args.instances.split(",")) if args.instances else None
    every = [json.loads(line) for path in args.rows for line in Path(path).read_text().splitlines()]
    ok, refused = passk_run.buildable([r for r in every if r["repo"] in repos_under(args.repos)], args.repos)
    for r in ok:   # what this machine cannot build (a Python 3.6, a mirror's missing file) is passed over
        if (wanted and r["instance_id"] in wanted) or (not wanted and r["repo"] not in seen):
            seen.add(r["repo"])
            rows.append(r)
    out, unexpected = [], 0
    for r in rows:
        spec = spec_for(r["repo"], r["version"])
        has = subprocess.run(["git", f"--git-dir={git_dir(args.repos, r['repo'])}", "cat-file", "-e",
                              f"{r['base_commit']}:conftest.py"], capture_output=True).returncode == 0
        attacks = real_attacks(r["patch"], pytest_runner=spec.parser != "sympy", root_conftest=has)
        where = root / r["instance_id"]
        where.mkdir()
        (where / "rows.jsonl").write_text(json.dumps(r) + "\n")
        (where / "preds.jsonl").write_text("".join(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": "a",
                                                               "model_patch": a.patch}) + "\n" for a in attacks))
        got = {}
        for mode in ("default", "strict"):
            done = passk_run.evaluate(where / "rows.jsonl", where / "preds.jsonl", where / mode, "--repos", args.repos,
                                      *(["--strict-tests"] if mode == "strict" else []))
            got[mode] = {d["sample_index"]: (d["status"], d["reason"]) for d in done}
            if mode == "default":   # the logs swebench's grading reads
                logs = {d["sample_index"]: d.get("channel_detail", {}).get("log") for d in done}
        for i, a in enumerate(attacks):
            d, st = got["default"].get(i, ("-", "-")), got["strict"].get(i, ("-", "-"))
            decided = bool(a.harness_decides and args.swebench and logs.get(i))
            if decided:   # what the harness's grading gives here
                theirs = swebench_report(Path(args.swebench), spec.parser, r, where / "default" / logs[i], a.patch)
                a = replace(a, default=("passed", "resolved") if theirs else ("failed", "tests_failed"))
            unexpected += (d != a.default) + (st != a.strict)
            out.append([r["instance_id"], a.name, " ".join(a.default) + (" (swebench's grading)" if decided else ""),
                        " ".join(d) + ("" if d == a.default else " **UNEXPECTED**"),
                        " ".join(a.strict), " ".join(st) + ("" if st == a.strict else " **UNEXPECTED**")])
    return out, unexpected


if __name__ == "__main__":
    sys.exit(main())
