#!/usr/bin/env python3
"""Write sample files for checking passk on HumanEval (the file is read from ../shared, never copied):

  canonical.jsonl     each task's canonical solution, repeated --repeat times
  empty.jsonl         prompt-only completions (empty bodies)
  mutants.jsonl       canonical solutions and mechanical mutations of them (wrong answers,
                      off-by-one, swapped operators, an infinite loop now and then)

Usage: python3 scripts/inputs/humaneval_samples.py OUTDIR [--problems PATH] [--repeat N] [--mutants-per-task M]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness.core.jsonl import iter_jsonl  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "HumanEval.jsonl.gz"

MUTATIONS = [
    (r"<=", "<"), (r">=", ">"), (r"(?<![<>=!])<(?!=)", "<="), (r"(?<![<>=!])>(?!=)", ">="),
    (r"==", "!="), (r"\+ 1\b", "+ 2"), (r"- 1\b", "- 2"), (r"\band\b", "or"), (r"\bor\b", "and"),
    (r"\bTrue\b", "False"), (r"\bFalse\b", "True"), (r"\[1:\]", "[2:]"), (r"\b0\b", "1"),
    (r"return ", "return not "), (r"\+", "-"), (r"\*", "+"), (r"\bmax\(", "min("), (r"\bmin\(", "max("),
]


def mutate(body: str, rng: random.Random) -> str | None:
    options = [(p, r) for p, r in MUTATIONS if re.search(p, body)]
    if not options:
        return None
    pattern, repl = rng.choice(options)
    matches = list(re.finditer(pattern, body))
    m = rng.choice(matches)
    return body[: m.start()] + re.sub(pattern, repl, m.group(0), count=1) + body[m.end():]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--problems", default=str(DEFAULT))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--mutants-per-task", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    problems = [obj for _, obj in iter_jsonl(args.problems, "problems file")]
    rng = random.Random(args.seed)
    with open(out / "canonical.jsonl", "w") as f:
        for _ in range(args.repeat):
            for p in problems:
                f.write(json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]}) + "\n")
    with open(out / "empty.jsonl", "w") as f:
        for p in problems:
            f.write(json.dumps({"task_id": p["task_id"], "completion": ""}) + "\n")
    count = 0
    with open(out / "mutants.jsonl", "w") as f:
        for p in problems:
            f.write(json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]}) + "\n")
            count += 1
            for _ in range(args.mutants_per_task):
                body = mutate(p["canonical_solution"], rng)
                if rng.random() < 0.03:
                    body = "    while True:\n        pass\n"
                if body is None:
                    body = "    return None\n"
                f.write(json.dumps({"task_id": p["task_id"], "completion": body}) + "\n")
                count += 1
    print(f"wrote {out}/canonical.jsonl ({len(problems) * args.repeat}), empty.jsonl ({len(problems)}), "
          f"mutants.jsonl ({count})")


if __name__ == "__main__":
    main()
