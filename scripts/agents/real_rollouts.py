#!/usr/bin/env python3
"""Scripted rollouts on real SWE-bench instances, through mini-swe-agent's own batch runner, unchanged, and
passk-docker: for each instance its model (mini-swe-agent's scripted one) looks at the repository, writes
the instance's gold patch with a heredoc, applies it with `git apply`, runs the FAIL_TO_PASS test file's
import and submits `git add -A && git diff --cached`. Then `passk evaluate` grades what was submitted: each
must be resolved, its diff touching the gold patch's files. Not CI (real repositories): the proof on pytest
and sympy that an agent's final diff in passk's sandbox is graded as the patch it is.

    python3 scripts/agents/real_rollouts.py --mini /tmp/msa/bin/mini-extra --rows ROWS --repos /tmp/repos \\
        --instance pytest-dev__pytest-7373 --instance sympy__sympy-20590 --out /tmp/real-rollouts [--remote]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.agents.mini_swe_agent_drill import SUBMIT, rollouts  # noqa: E402

DELIMITER = "PASSK_GOLD_PATCH_END"


def actions_for(row: dict) -> list[str]:
    patch = row["patch"] if row["patch"].endswith("\n") else row["patch"] + "\n"
    if DELIMITER in patch:
        raise SystemExit(f"{row['instance_id']}: its patch holds the heredoc's delimiter")
    return ["git log --oneline | head -3; git status --short | head; command -v python",
            f"cat > /tmp/gold.patch <<'{DELIMITER}'\n{patch}{DELIMITER}\ngit apply /tmp/gold.patch && git status --short",
            SUBMIT]


def files_of(patch: str) -> set[str]:
    return set(re.findall(r"^diff --git a/(\S+) b/", patch, flags=re.M))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mini", required=True)
    ap.add_argument("--rows", action="append", required=True)
    ap.add_argument("--repos", required=True)
    ap.add_argument("--instance", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--remote", action="store_true")
    args = ap.parse_args()
    from harness.core.errors import InputError
    from harness.sessions.rows import pick
    try:
        every = pick(args.rows, args.instance)
    except InputError as e:
        print(f"real_rollouts: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "rows.jsonl"
    rows_file.write_text("".join(json.dumps(every[i]) + "\n" for i in args.instance))
    got = rollouts(args.mini, out, rows_file, args.repos, None, {i: actions_for(every[i]) for i in args.instance},
                   args.remote)
    ok = not got["left"]
    for i in args.instance:
        submitted = (got["preds"].get(i) or {}).get("model_patch") or ""
        same = files_of(submitted) == files_of(every[i]["patch"])
        verdict = got["verdicts"].get(i)
        print(f"{i}: {verdict[0] + ' ' + verdict[1] if verdict else 'not graded'}; the diff's files are the gold "
              f"patch's: {same}")
        ok = ok and verdict == ("passed", "resolved") and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
