#!/usr/bin/env python3
"""Write a HumanEval+-format file derived from HumanEval (../shared/data/HumanEval.jsonl.gz, MIT), big
enough to measure with: EvalPlus's release files cannot be downloaded here. For each of the 164 tasks:

  base_input   the arguments HumanEval's own check() passes to the candidate (recorded by running the
               check against the canonical solution), as EvalPlus's base inputs are;
  plus_input   up to --plus-per-task inputs made by mutating those, keeping each argument's type (ints
               stay ints and keep their sign, strings keep their alphabet, lists their element types),
               each kept only when the canonical solution returns on it within 5 ms without raising,
               input and output are each under 2,000 characters of JSON, and it was not seen before (EvalPlus's own inputs come from an LLM seed pool and type-aware mutation,
               filtered by contracts: these are of the same kind, not the same inputs);
  atol         1e-6 for HumanEval/32 (its oracle needs one), 0 elsewhere (EvalPlus enforces 1e-6 on floats);
  contract     empty; the rest as in HumanEval (prompt, entry_point, canonical_solution, test).

This runs HumanEval's canonical solutions and tests on the host: they are the benchmark's own trusted
code, not candidates. The output is deterministic for a seed. Not committed: it is made where it is used.

Usage: python3 scripts/inputs/humanevalplus_derived.py OUT.jsonl.gz [--plus-per-task 1000] [--seed 0] [--tasks N]
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import signal
import string
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT.parent / "shared" / "data" / "HumanEval.jsonl.gz"


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def _json_ready(v):
    """The value as JSON carries it (tuples become lists), or raise TypeError when JSON cannot."""
    return json.loads(json.dumps(v, allow_nan=True))


def _record_base(task, fn, ns):
    calls = []

    def recorder(*args, **kwargs):
        if not kwargs:
            calls.append(copy.deepcopy(list(args)))
        return fn(*args, **kwargs)

    ns = dict(ns)   # the test may use the prompt's helpers (HumanEval/32's poly)
    exec(task["test"], ns)
    signal.setitimer(signal.ITIMER_REAL, 20.0)
    try:
        ns["check"](recorder)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    seen, out = set(), []
    for args in calls:
        try:
            key = json.dumps(_json_ready(args), sort_keys=True)
        except (TypeError, ValueError):
            continue
        if key not in seen:
            seen.add(key)
            out.append(_json_ready(args))
    return out


def _mutate(v, rng, depth=0):
    t = type(v)
    if t is bool:
        return not v
    if t is int:
        options = [v + 1, v - 1, v * 2, v // 2, rng.randint(0, 100), v + rng.randint(1, 1000), 0, 1]
        if v < 0:
            options += [-v, v * 3]
        out = rng.choice(options)
        return abs(out) if v >= 0 else out
    if t is float:
        out = rng.choice([v + rng.uniform(-1, 1), v * 2, v / 2, round(v, 1), rng.uniform(-10, 10), v + 0.5])
        return abs(out) if v >= 0 else out
    if t is str:
        alphabet = sorted(set(v)) or list(string.ascii_lowercase)
        if rng.random() < 0.2:
            alphabet = alphabet + list(string.ascii_letters + string.digits + " ")
        chars = list(v)
        op = rng.randrange(6)
        if op == 0 or not chars:
            chars.insert(rng.randint(0, len(chars)), rng.choice(alphabet))
        elif op == 1:
            del chars[rng.randrange(len(chars))]
        elif op == 2 and len(chars) > 1:
            i, j = rng.randrange(len(chars)), rng.randrange(len(chars))
            chars[i], chars[j] = chars[j], chars[i]
        elif op == 3 and len(chars) < 60:
            chars = chars + chars
        elif op == 4:
            chars.reverse()
        else:
            i = rng.randrange(len(chars))
            chars[i] = rng.choice(alphabet)
        return "".join(chars)
    if t in (list, tuple):
        items = list(v)
        op = rng.randrange(6)
        if (op == 0 or not items) and len(items) < 60:
            sample = rng.choice(items) if items else rng.choice([0, 1, "a", 1.0])
            items.insert(rng.randint(0, len(items)), _mutate(copy.deepcopy(sample), rng, depth + 1))
        elif op == 1 and items:
            del items[rng.randrange(len(items))]
        elif op == 2 and items:
            i = rng.randrange(len(items))
            items[i] = _mutate(items[i], rng, depth + 1)
        elif op == 3:
            rng.shuffle(items)
        elif op == 4 and len(items) < 30:
            items = items + copy.deepcopy(items)
        else:
            items.reverse()
        return t(items)
    if t is dict and v:
        out = dict(v)
        key = rng.choice(list(out))
        if rng.random() < 0.5:
            out[key] = _mutate(out[key], rng, depth + 1)
        elif isinstance(key, str):
            out[_mutate(key, rng, depth + 1)] = out[key]
        return out
    return v


def _poly(xs, x):
    import math
    return sum(c * math.pow(x, i) for i, c in enumerate(xs))


def _plus_inputs(fn, base, want, rng, task_id=""):
    seen = {json.dumps(b, sort_keys=True) for b in base}
    pool = [copy.deepcopy(b) for b in base]
    out = []
    attempts = 0
    while len(out) < want and attempts < want * 5 and pool:
        attempts += 1
        args = copy.deepcopy(rng.choice(pool))
        for _ in range(rng.randint(1, 3)):
            if args:
                i = rng.randrange(len(args))
                args[i] = _mutate(args[i], rng)
        try:
            args = _json_ready(args)
        except (TypeError, ValueError, RecursionError):
            continue
        key = json.dumps(args, sort_keys=True)
        if key in seen or len(key) > 2000:
            continue
        seen.add(key)
        try:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0.01)
                t0 = time.perf_counter()
                result = fn(*copy.deepcopy(args))
                took = time.perf_counter() - t0
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except BaseException:   # noqa: B036 - an input the canonical solution does not take (or too slow)
            continue
        if took > 0.005:
            continue
        if task_id == "HumanEval/32" and not (args[0] and len(args[0]) % 2 == 0 and args[0][-1] != 0
                                               and abs(_poly(args[0], result)) <= 1e-6):
            continue   # its docstring's condition (an even number of coefficients), and a zero the oracle accepts
        try:
            if len(json.dumps(result)) > 2000:
                continue   # inputs and outputs both stay small, as most of EvalPlus's are
        except (TypeError, ValueError):
            if not isinstance(result, (tuple, set)):
                continue
        out.append(args)
        pool.append(args)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--problems", type=Path, default=DEFAULT)
    ap.add_argument("--plus-per-task", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks", type=int, default=None, help="only the first N tasks")
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    tasks = [json.loads(line) for line in gzip.open(args.problems, "rt")]
    if args.tasks:
        tasks = tasks[:args.tasks]
    rows, total = [], 0
    for n, task in enumerate(tasks):
        ns = {}
        exec(task["prompt"] + task["canonical_solution"], ns)
        fn = ns[task["entry_point"]]
        base = _record_base(task, fn, ns)
        plus = _plus_inputs(fn, base, args.plus_per_task, random.Random(args.seed * 1000 + n), task["task_id"])
        total += len(plus)
        rows.append({"task_id": task["task_id"], "prompt": task["prompt"], "entry_point": task["entry_point"],
                     "canonical_solution": task["canonical_solution"], "contract": "", "base_input": base,
                     "plus_input": plus, "atol": 1e-6 if task["task_id"] == "HumanEval/32" else 0,
                     "test": task["test"]})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if args.out.name.endswith(".gz") else open
    with opener(args.out, "wt") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"wrote {args.out}: {len(rows)} tasks, {sum(len(r['base_input']) for r in rows)} base and {total} plus inputs "
          f"({total / max(1, len(rows)):.0f} per task)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
