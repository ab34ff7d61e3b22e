#!/usr/bin/env python3
"""Agreement you can check yourself, on real repositories: every gold patch resolved and every empty patch
not, per instance and per repository, as `passk evaluate` gives them on SWE-bench rows; beside them a
no-op patch (it adds one file and changes no code: the tests run on the base as it is, so its
FAIL_TO_PASS tests must fail, which an empty patch, refused before it runs, does not show); and SWE-bench's
own grading (swebench 5.0.2's harness/grading.py, get_eval_report) run on passk's logs beside passk's
verdicts, per instance. Every difference is listed by name.

    pip download --no-deps swebench==5.0.2 -d /tmp/swb && (cd /tmp/swb && unzip -q -o swebench-5.0.2-*.whl -d s5)
    pip install unidiff                # imported by swebench's log_parsers package
    python3 scripts/agreement/repos_agreement.py --rows ../shared/data/swe-bench/swe-bench-lite-test.jsonl \\
        --repos /tmp/repos --repo sympy/sympy --repo pytest-dev/pytest --swebench /tmp/swb/s5 \\
        --out /tmp/repos-agreement [--write-docs]

--repos holds the repositories at DIR/<owner>/<name> (the search tool's `fetch` brings bare mirrors; never
commit them). The run is resumable: run the same command again after a stop."""

from __future__ import annotations

import argparse
import json
import re
import sys
import types
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import passk_run  # noqa: E402

NOOP = ("diff --git a/.passk-noop b/.passk-noop\nnew file mode 100644\n--- /dev/null\n+++ b/.passk-noop\n"
        "@@ -0,0 +1 @@\n+passk: a patch that changes no code\n")
CANDIDATES = (("gold", None), ("empty", ""), ("noop", NOOP))   # sample index 0, 1, 2 of each instance
PARSER_NAMES = {"pytest": "parse_log_pytest", "pytest_options": "parse_log_pytest_options",
                "pytest_v2": "parse_log_pytest_v2", "sympy": "parse_log_sympy", "seaborn": "parse_log_seaborn",
                "django": "parse_log_django", "pytest_matplotlib": "parse_log_matplotlib"}


def swebench_report(swebench: Path, parser: str, row: dict, log_path: Path | None, patch: str | None) -> bool | None:
    """Whether swebench 5.0.2's get_eval_report resolves the instance on this log (None: not loaded)."""
    from scripts.peers.repos_grading_peer import load_swebench
    _, grading = load_swebench(swebench)
    spec = types.SimpleNamespace(instance_id=row["instance_id"], FAIL_TO_PASS=_list(row["FAIL_TO_PASS"]),
                                 PASS_TO_PASS=_list(row["PASS_TO_PASS"]), log_parser=PARSER_NAMES[parser],
                                 eval_type="pass_and_fail")
    prediction = {"instance_id": row["instance_id"], "model_name_or_path": "agreement", "model_patch": patch}
    if log_path is None:   # the patch did not apply (or was empty): the harness stops before any log
        return False
    report = grading.get_eval_report(spec, prediction, str(log_path), include_tests_status=False)
    return bool(report[row["instance_id"]]["resolved"])


SEED = re.compile(r"PYTHONHASHSEED=(\d+)")


def reruns(row: dict, out: Path, args, first_log: Path) -> str:
    """The gold patch of an instance it did not resolve, run --reruns more times: whether the verdict is
    the patch's or the draw's (sympy's bin/test draws a random hash seed per run and prints it)."""
    if not args.reruns:
        return "not rerun"
    where = out / "reruns" / row["instance_id"]
    where.mkdir(parents=True, exist_ok=True)
    (where / "rows.jsonl").write_text(json.dumps(row) + "\n")
    (where / "preds.jsonl").write_text("".join(json.dumps({"instance_id": row["instance_id"], "model_name_or_path": "gold",
                                                           "model_patch": row["patch"]}) + "\n"
                                               for _ in range(args.reruns)))
    rows = passk_run.evaluate(where / "rows.jsonl", where / "preds.jsonl", where / "run", "--repos", args.repos,
                              workers=args.workers, required=False)
    done = list({r["sample_index"]: r for r in rows}.values())   # a resumed run's last row of each rerun counts

    def seed(log: Path) -> str | None:
        m = SEED.search(log.read_text(errors="replace")) if log.is_file() else None
        return m.group(1) if m else None
    passed = [r for r in done if r["status"] == "passed"]
    text = f"the gold patch rerun {len(done)} times: resolved {len(passed)}"
    seeds = {"resolved": [seed(where / "run" / r["channel_detail"]["log"]) for r in passed if r["channel_detail"].get("log")],
             "not": [seed(where / "run" / r["channel_detail"]["log"]) for r in done
                     if r["status"] != "passed" and r["channel_detail"].get("log")]}
    if 0 < len(passed) < len(done):
        text += " (the same patch both ways: a flaky test, not the patch"
        first = seed(first_log)
        if first or any(seeds.values()):
            text += (f"; the runner drew a random PYTHONHASHSEED each time: not resolved with {first or '?'} and "
                     f"{', '.join(filter(None, seeds['not'])) or '-'}, resolved with "
                     f"{', '.join(filter(None, seeds['resolved'])) or '-'}")
        text += ")"
    return text


def _list(value):
    return json.loads(value) if isinstance(value, str) else list(value)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", required=True, action="append",
                    help="SWE-bench rows (JSON Lines; repeatable: Lite's and Verified's, an instance once)")
    ap.add_argument("--repos", required=True, help="DIR/<owner>/<name>: the repositories")
    ap.add_argument("--repo", action="append", default=[], help="only these repositories (repeatable)")
    ap.add_argument("--instances", type=int, default=0, help="at most this many instances per repository (0: all)")
    ap.add_argument("--out", required=True, help="the run's directory (resumed when it exists)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--swebench", default=None, help="an unpacked swebench 5.0.2 wheel: its grading beside passk's")
    ap.add_argument("--reruns", type=int, default=8, help="a gold patch not resolved is run this many times more")
    ap.add_argument("--instance", action="append", default=[],
                    help="only this instance (repeatable; with --only-unpinned, these and those)")
    ap.add_argument("--only-unpinned", action="store_true",
                    help="only the instances SWE-bench published no exported environment for (their packages "
                         "resolved from the spec, as of the exports' day)")
    ap.add_argument("--write-docs", action="store_true", help="write docs/figures/FIGURE.md")
    ap.add_argument("--figure", default="repos-agreement", type=lambda v: v if re.fullmatch(r"[a-z0-9-]{1,64}", v)
                    else ap.error("--figure: lowercase letters, digits and dashes"),
                    help="the figure's name under docs/figures/ (default repos-agreement)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, per_repo, seen, refused, sets = [], defaultdict(int), set(), [], defaultdict(list)
    from harness.inputs.repos.official import for_instance
    from harness.inputs.repos.specs import spec_for
    for path in args.rows:
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            sets[r["instance_id"]].append(Path(path).stem)
            if r["instance_id"] in seen or (args.repo and r["repo"] not in args.repo):
                continue
            if (args.instance or args.only_unpinned) and not (
                    r["instance_id"] in args.instance or (args.only_unpinned and for_instance(r["instance_id"]) is None)):
                continue
            if args.instances and per_repo[r["repo"]] >= args.instances:
                continue
            seen.add(r["instance_id"])
            why = passk_run.unbuildable(r, args.repos)   # refused by name, as `passk evaluate` refuses it
            if why:
                refused.append((r["instance_id"], r["version"], why))
                continue
            per_repo[r["repo"]] += 1
            rows.append(r)
    rows_file, preds_file = out / "rows.jsonl", out / "preds.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds_file.write_text("".join(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": name,
                                              "model_patch": r["patch"] if patch is None else patch}) + "\n"
                                  for r in rows for name, patch in CANDIDATES))
    run = out / "run"
    results = {}
    for r in passk_run.evaluate(rows_file, preds_file, run, "--repos", args.repos, workers=args.workers):
        results[(r["task_id"], r["sample_index"])] = r      # the last row of a candidate counts
    table, counts, differences, known = [], defaultdict(lambda: [0, 0, 0, 0, 0, 0]), [], defaultdict(set)
    for r in rows:
        got = {name: results.get((r["instance_id"], i)) for i, (name, _) in enumerate(CANDIDATES)}
        if any(v is None for v in got.values()):
            differences.append(f"{r['instance_id']}: not run (the run stopped)")
            continue
        label = {k: f"{v['status']} {v['reason']}" for k, v in got.items()}
        theirs = {}
        if args.swebench:
            parser = spec_for(r["repo"], r["version"]).parser
            for name, patch in CANDIDATES:
                log = got[name]["channel_detail"].get("log")
                theirs[name] = swebench_report(Path(args.swebench), parser, r, run / log if log else None,
                                               r["patch"] if patch is None else patch)
        for g in got.values():
            if g["channel_detail"].get("known_differences"):
                known[r["repo"]].update(re.findall(r"::([A-Za-z0-9_]+)(?:\[[^\]]*\])? \(", g["channel_detail"]["known_differences"]))
        c = counts[(r["repo"], r["version"])]
        c[0] += 1
        c[1] += got["gold"]["status"] == "passed"
        c[2] += got["empty"]["status"] != "passed"
        c[3] += got["noop"]["status"] != "passed"
        agree = all(theirs.get(n) is None or theirs[n] == (row["status"] == "passed") for n, row in got.items())
        c[4] += agree
        c[5] += any(v["status"] == "error" for v in got.values())
        if got["gold"]["status"] != "passed":
            detail = " ".join(got["gold"]["detail"].split())   # one line: a log's lines are not the list's
            if len(detail) > 300:
                detail = detail[:140] + " ... " + detail[-150:]
            differences.append(f"{r['instance_id']}: gold {label['gold']}: {detail}; "
                               + reruns(r, out, args, run / got["gold"]["channel_detail"].get("log", "-")))
        for name in ("empty", "noop"):
            if got[name]["status"] == "passed":
                differences.append(f"{r['instance_id']}: the {name} patch resolved it")
        if not agree:
            differences.append(f"{r['instance_id']}: swebench's grading on passk's logs says " +
                               ", ".join(f"{n} {'resolved' if v else 'not'}" for n, v in theirs.items()))
        table.append([r["instance_id"], r["version"], label["gold"], label["empty"], label["noop"],
                      "-" if not theirs else ", ".join(f"{n} {'resolved' if v else 'not'}" for n, v in theirs.items()),
                      f"{got['gold'].get('wall_s') or 0:.0f} s"])
    from scripts.lib import figures
    body = figures.table(["instance", "version", "gold (passk)", "empty (passk)", "no-op (passk)",
                          "swebench 5.0.2 on passk's logs", "gold's wall"], table)
    def version_key(v):
        return [int(x) if x.isdigit() else 0 for x in v.split(".")]
    body += "\n\n" + figures.table(
        ["repository", "version", "instances", "gold resolved", "empty not resolved", "no-op not resolved",
         "swebench's grading agrees", "instances with an error row"],
        [[repo, version, *c] for (repo, version), c in sorted(counts.items(), key=lambda kv: (kv[0][0], version_key(kv[0][1])))])
    totals = defaultdict(lambda: [0] * 6)
    for (repo, _), c in counts.items():
        totals[repo] = [a + b for a, b in zip(totals[repo], c)]
    body += "\n\n" + figures.table(
        ["repository", "instances", "gold resolved", "empty not resolved", "no-op not resolved",
         "swebench's grading agrees", "instances with an error row"],
        [[repo, *c] for repo, c in sorted(totals.items())] + [["all", *[sum(c[i] for c in totals.values()) for i in range(6)]]])
    if known:
        body += "\n\nKnown differences set aside (PASS_TO_PASS tests that cannot pass without a network; " \
                "harness/inputs/repos/known.json says why):\n\n" + "\n".join(
                    f"- {repo}: {', '.join(sorted(names))}" for repo, names in sorted(known.items()))
    if refused:
        body += "\n\nRefused by name (this machine cannot build them as the harness does):\n\n" + "\n".join(
            f"- {iid} ({version}): {why}" for iid, version, why in refused)
    body += "\n\nDifferences:\n\n" + ("\n".join(f"- {d}" for d in differences) if differences else "- none") + "\n"
    return figures.finish(args.figure, body, args.write_docs, len(differences))


if __name__ == "__main__":
    sys.exit(main())
