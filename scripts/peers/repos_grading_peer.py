#!/usr/bin/env python3
"""passk's repository-task log parsers and grading against SWE-bench's own (swebench 5.0.2's
harness/log_parsers/python.py and harness/grading.py), on the same logs: a few written ones and
random ones built from the runners' words (statuses, parameter brackets, paths, colour codes). Prints
the number of logs and the differences (parser maps, then graded reports and resolved), exit 1 on any.

    pip download --no-deps swebench==5.0.2 -d /tmp/swb && (cd /tmp/swb && unzip -q -o swebench-5.0.2-*.whl -d s5)
    pip install unidiff                 # imported by swebench's log_parsers package
    python3 scripts/peers/repos_grading_peer.py --swebench /tmp/swb/s5 [--logs 3000]

swebench's package __init__ imports its data-collection tools (bs4, datasets, ...): the script loads
only its harness modules, without running that __init__."""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

WRITTEN = [
    "PASSED tests/t.py::test_a\nFAILED tests/t.py::test_b - assert 1 == 2\nSKIPPED [1] tests/t.py:3: no\n"
    "XFAIL tests/t.py::test_c - later\nERROR tests/t.py::test_d - fixture\nPASSED tests/t.py::test_e[/tmp/x/y]\n",
    "\x1b[32mPASSED\x1b[0m tests/test_a.py::test_x[a b]\nFAILED tests/test_a.py::test_y - a - b\n"
    "tests/test_a.py::test_z PASSED\n",
    "test_equality ok\ntest_subs F\n___ sympy/core/tests/test_basic.py:test_subs ___\n  test_atoms E\n",
]
WORDS = ["PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", "XPASS", "-", " - ", "test_a", "t.py::test_b[x",
         "/tmp/a/b]", "[1]", "ok", " E", " F", "___", ".py:", "\x1b[31m", "\t", " ", "\n",
         # django's runner and matplotlib's ids
         " ... ok", " ... OK", " ... FAIL", " ... ERROR", " ... skipped", "FAIL:", "ERROR:", "(a.tests.T)",
         "System check identified no issues (0 silenced)", "MouseButton.LEFT", "MouseButton.RIGHT"]


def load_swebench(root: Path):
    sys.path.insert(0, str(root))
    for name, sub in (("swebench", "swebench"), ("swebench.harness", "swebench/harness")):
        module = types.ModuleType(name)
        module.__path__ = [str(root / sub)]
        sys.modules[name] = module
    return (importlib.import_module("swebench.harness.log_parsers.python"),
            importlib.import_module("swebench.harness.grading"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--swebench", required=True, help="a directory holding swebench's package (an unpacked wheel)")
    ap.add_argument("--logs", type=int, default=3000, help="random logs beside the written ones")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    lp, grading = load_swebench(Path(args.swebench))
    from harness.inputs.repos import parsers
    from harness.inputs.repos.grading import grade
    theirs = {"pytest": lp.parse_log_pytest, "pytest_options": lp.parse_log_pytest_options,
              "pytest_v2": lp.parse_log_pytest_v2, "sympy": lp.parse_log_sympy, "django": lp.parse_log_django,
              "seaborn": lp.parse_log_seaborn, "pytest_matplotlib": lp.parse_log_matplotlib}
    rng = random.Random(args.seed)
    logs = WRITTEN + ["".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))) for _ in range(args.logs)]
    maps = reports = raised = 0
    for log in logs:
        for name, parse in theirs.items():
            ours = parsers.parse(name, log)   # passk's never raises on a log, whatever it holds
            try:
                peer = parse(log, None)
            except IndexError:   # swebench's django parser on a bare `FAIL:` or `ERROR:` line
                raised += 1
                continue
            if ours != peer:
                maps += 1
                print(f"parser {name} differs on {log[:120]!r}: passk {ours}, swebench {peer}")
            keys = list(peer)[:6]
            f2p, p2p = keys[:3] + ["absent"], keys[3:]
            mine = grade(peer, f2p, p2p)
            report = grading.get_eval_tests_report(peer, {"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p})
            resolved = grading.get_resolution_status(report) == "RESOLVED_FULL"
            if mine.to_swebench() != {k: report[k] for k in ("FAIL_TO_PASS", "PASS_TO_PASS")} or resolved != mine.resolved:
                reports += 1
                print(f"grading differs on {peer}: passk {mine.to_swebench()} resolved {mine.resolved}, "
                      f"swebench {report} resolved {resolved}")
    print(f"{len(logs)} logs x {len(theirs)} parsers: {maps} parser differences, {reports} grading differences"
          f" ({raised} logs swebench's parser raised on, which passk's read)")
    return 1 if maps or reports else 0


if __name__ == "__main__":
    sys.exit(main())
