#!/usr/bin/env python3
"""Tests per second on a problem with many tiny tests: passk's judge against the same program run in a plain
loop outside any sandbox (the floor: one process per test, nothing else), and against problemtools'
verifyproblem on the same package.

    python3 scripts/speed/bench_judge.py [--tests 1000] [--rounds 2] [--verifyproblem /tmp/pt/bin/verifyproblem]
                                         [--write-docs]

The package (written to a temporary directory): one test per line pair `a b` -> `a+b`, the default
validator, a 1 s time limit; one accepted submission in C++ and one in Python. passk's figure is the
marginal cost of a test: `passk evaluate` on the package with one submission, end to end, at --tests tests
and at 10, and (the difference) / (the tests between), so it holds everything a test costs (the program's
fork and exec, its run, feeding and reading it, the check, the supervisor's work between two tests) and
nothing paid once (start-up, containers, the compile). Python is measured with Debian's CPython
(`--python cpython`: passk forks a warm interpreter per test) against a loop of `python3 program.py`
(/usr/bin/python3 where there is one), and with PyPy (a Kattis package's default, `pypy3` run per test)
where the host has a pypy3 for its loop. The plain loop compiles the C++ with passk's Kattis command
and runs each program once per test with subprocess, comparing the output as text. problemtools judges
the package's submissions (`-p submissions`), which also runs each accepted submission a second time at
the safety-margin limit. The split: "its own run" is the mean of the tests' wall times as the row
records them (the forkserver's fork to the program's reaped exit); the rest of a test is passk's work
between tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.lib import figures  # noqa: E402

CPP = "#include <cstdio>\nint main() { long long a, b; if (scanf(\"%lld %lld\", &a, &b) == 2) printf(\"%lld\\n\", a + b); }\n"
PY = "a, b = map(int, input().split())\nprint(a + b)\n"
SMALL = 10
CPP_COMPILE = ["g++", "-g", "-O2", "-std=gnu++23", "-static"]   # passk's Kattis command (problemtools' flags)


def package(root: Path, tests: int, submissions=(("sums.cpp", CPP), ("sums.py", PY))) -> Path:
    pkg = root / "sums"
    (pkg / "data" / "secret").mkdir(parents=True)
    (pkg / "problem.yaml").write_text("name: Sums\nsource: passk\nlicense: cc0\n")
    (pkg / ".timelimit").write_text("1\n")
    for i in range(tests):
        (pkg / "data" / "secret" / f"{i:05d}.in").write_text(f"{i} {2 * i}\n")
        (pkg / "data" / "secret" / f"{i:05d}.ans").write_text(f"{3 * i}\n")
    (pkg / "submissions" / "accepted").mkdir(parents=True)
    for name, code in submissions:
        (pkg / "submissions" / "accepted" / name).write_text(code)
    return pkg


def plain_loop(pkg: Path, argv_of, tests: int) -> float:
    """Seconds a test for the loop: compile once (C++), run once per test with subprocess, compare the text."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = argv_of(Path(tmp))
        start = time.perf_counter()
        for i in range(tests):
            data = (pkg / "data" / "secret" / f"{i:05d}.in").read_bytes()
            out = subprocess.run(argv, input=data, capture_output=True).stdout
            assert out.split() == (pkg / "data" / "secret" / f"{i:05d}.ans").read_bytes().split()
        return (time.perf_counter() - start) / tests


def cpp_argv(tmp: Path) -> list:
    (tmp / "main.cpp").write_text(CPP)
    subprocess.run([*CPP_COMPILE, "-o", str(tmp / "main"), str(tmp / "main.cpp")], check=True)
    return [str(tmp / "main")]


def python_argv(python: str):
    def argv(tmp: Path) -> list:
        (tmp / "main.py").write_text(PY)
        return [python, str(tmp / "main.py")]
    return argv


def passk_run(root: Path, tests: int, name: str, code: str, python: str) -> tuple[float, dict]:
    """(seconds end to end, the row) of `passk evaluate` on a package of `tests` tests and one submission."""
    where = Path(tempfile.mkdtemp(dir=root))
    pkg = package(where, tests, ((name, code),))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(pkg), "--out",
                           str(where / "run"), "--quiet", "--k", "1", "--workers", "1", "--python", python],
                          cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    (row,) = [json.loads(line) for line in (where / "run" / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "passed", row["detail"]
    shutil.rmtree(where)
    return seconds, row


def marginal(root: Path, tests: int, name: str, code: str, python: str, rounds: int) -> dict:
    """passk's seconds a test (median over the rounds), the test's own run as its row records it, the
    interpreter or compiler that ran it."""
    per_test, own = [], []
    for _ in range(rounds):
        small, _ = passk_run(root, SMALL, name, code, python)
        big, row = passk_run(root, tests, name, code, python)
        per_test.append((big - small) / (tests - SMALL))
        own.append(statistics.mean(t["wall_s"] for t in row["tests"] if t.get("wall_s") is not None))
    return {"per_test": statistics.median(per_test), "own": statistics.median(own), "language": row["language"]}


def problemtools(verifyproblem: str, pkg: Path) -> float | None:
    if not shutil.which(verifyproblem) and not os.path.exists(verifyproblem):
        return None
    start = time.perf_counter()
    subprocess.run([verifyproblem, str(pkg), "-p", "submissions"], capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--verifyproblem", default="verifyproblem")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    n = args.tests
    host_python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    cases = [("C++", "sums.cpp", CPP, "auto", cpp_argv, "g++ " + " ".join(CPP_COMPILE[1:])),
             ("Python (CPython)", "sums.py", PY, "cpython", python_argv(host_python), host_python)]
    if shutil.which("pypy3"):
        cases.append(("Python (PyPy)", "sums.py", PY, "pypy", python_argv(shutil.which("pypy3")), "pypy3"))
    rows, headline = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        passk_run(root, SMALL, "sums.cpp", CPP, "auto")             # images built and warm before anything is timed
        pkg = package(root / "whole", n)
        for label, name, code, python, argv_of, loop_what in cases:
            ours = marginal(root, n, name, code, python, args.rounds)
            loop = plain_loop(pkg, argv_of, n)
            rows.append([label, f"{1 / ours['per_test']:.0f}", f"{1 / loop:.0f} (`{loop_what}`)",
                         f"{loop / ours['per_test']:.2f}x", f"{1000 * (ours['per_test'] - loop):+.2f} ms",
                         f"{1000 * ours['own']:.2f} ms", f"{1000 * (ours['per_test'] - ours['own']):.2f} ms"])
            headline[label] = 1 / ours["per_test"]
            print(" | ".join(rows[-1]), flush=True)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(pkg), "--out",
                        str(root / "both"), "--quiet", "--k", "1", "--workers", "2"], cwd=ROOT, check=True,
                       capture_output=True)
        total = time.perf_counter() - start
        peer = problemtools(args.verifyproblem, pkg)
    body = figures.table(["language", "passk tests/s", "plain loop tests/s (no sandbox)", "passk / loop",
                          "passk - loop, a test", "a test: its own run", "a test: passk's work between tests"], rows)
    body += (f"\n\npassk's tests/s is the marginal cost of a test ({n} tests against {SMALL}, end to end, median of "
             f"{args.rounds} rounds), so it holds the supervisor's work between tests; its own run is the fork to "
             f"the reaped exit. Both submissions of the {n}-test package end to end with `passk evaluate` "
             f"(start-up, containers, compile, every test, the rows; PyPy for the Python one, a Kattis package's "
             f"default): {total:.1f} s")
    if peer is not None:
        body += f"; problemtools' `verifyproblem -p submissions` on the same package: {peer:.1f} s ({peer / total:.2f}x passk's time)"
    body += ".\n"
    print(body)
    if args.write_docs:
        figures.write("judge", body, f"The judge, {n} tiny tests: passk runs C++ at {headline['C++']:.0f} tests/s "
                      f"and Python at {headline['Python (CPython)']:.0f} tests/s in its sandbox"
                      + (f"; the whole package in {total:.1f} s against problemtools' {peer:.1f} s" if peer else "") + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
