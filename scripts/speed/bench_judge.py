#!/usr/bin/env python3
"""Tests per second on a problem with many tiny tests: passk's judge against the same program run in a plain
loop outside any sandbox (the floor: one process per test, nothing else), and against problemtools'
verifyproblem on the same package.

    python3 scripts/speed/bench_judge.py [--tests 1000] [--verifyproblem /tmp/pt/bin/verifyproblem] [--write-docs]

The package (written to a temporary directory): one test per line pair `a b` -> `a+b`, the default
validator, a 1 s time limit; one accepted submission in C++ and one in Python. passk runs each submission
as a candidate (warm container, one compile, then the binary once per test, each output checked); the plain
loop compiles the same source with the same command on this machine and runs it once per test with
subprocess, comparing the output as text. problemtools judges the package's submissions (`-p submissions`),
which also runs each accepted submission a second time at the safety-margin limit. The per-test overhead
is (passk's time per test) - (the loop's time per test).
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def package(root: Path, tests: int) -> Path:
    pkg = root / "sums"
    (pkg / "data" / "secret").mkdir(parents=True)
    (pkg / "problem.yaml").write_text("name: Sums\nsource: passk\nlicense: cc0\n")
    (pkg / ".timelimit").write_text("1\n")
    for i in range(tests):
        (pkg / "data" / "secret" / f"{i:05d}.in").write_text(f"{i} {2 * i}\n")
        (pkg / "data" / "secret" / f"{i:05d}.ans").write_text(f"{3 * i}\n")
    (pkg / "submissions" / "accepted").mkdir(parents=True)
    (pkg / "submissions" / "accepted" / "sums.cpp").write_text(CPP)
    (pkg / "submissions" / "accepted" / "sums.py").write_text(PY)
    return pkg


def plain_loop(pkg: Path, language: str, tests: int) -> float:
    """Seconds for the loop: compile once (C++), run once per test with subprocess, compare the text."""
    with tempfile.TemporaryDirectory() as tmp:
        if language == "cpp":
            src = Path(tmp) / "main.cpp"
            src.write_text(CPP)
            subprocess.run(["g++", "-O2", "-std=gnu++20", "-DONLINE_JUDGE", "-o", str(Path(tmp) / "main"), str(src)], check=True)
            argv = [str(Path(tmp) / "main")]
        else:
            src = Path(tmp) / "main.py"
            src.write_text(PY)
            argv = [sys.executable, str(src)]
        start = time.perf_counter()
        for i in range(tests):
            data = (pkg / "data" / "secret" / f"{i:05d}.in").read_bytes()
            out = subprocess.run(argv, input=data, capture_output=True).stdout
            assert out.split() == (pkg / "data" / "secret" / f"{i:05d}.ans").read_bytes().split()
        return time.perf_counter() - start


def passk(pkg: Path, workers: int) -> dict:
    """{language: seconds} of each submission's candidate in a warm container (its own row's wall times)."""
    import json
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(pkg), "--out", str(out),
                        "--quiet", "--k", "1", "--workers", str(workers)], cwd=ROOT, check=True, capture_output=True)
        rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    result = {}
    for r in rows:
        assert r["status"] == "passed", r["detail"]
        compile_s = (r["channel_detail"] or {}).get("compile_s") or 0.0
        per_test = sum(t.get("wall_s") or 0.0 for t in r["tests"] or ())
        result[r["language"]] = {"tests_s": per_test, "compile_s": compile_s}
    return result


def passk_end_to_end(pkg: Path, workers: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(pkg), "--out",
                        str(Path(tmp) / "run"), "--quiet", "--k", "1", "--workers", str(workers)], cwd=ROOT, check=True,
                       capture_output=True)
        return time.perf_counter() - start


def problemtools(verifyproblem: str, pkg: Path) -> float | None:
    if not shutil.which(verifyproblem) and not os.path.exists(verifyproblem):
        return None
    start = time.perf_counter()
    subprocess.run([verifyproblem, str(pkg), "-p", "submissions"], capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--verifyproblem", default="verifyproblem")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pkg = package(Path(tmp), args.tests)
        passk_end_to_end(pkg, args.workers)        # images built and warm before anything is timed
        ours = passk(pkg, args.workers)
        loops = {lang: plain_loop(pkg, lang, args.tests) for lang in ("cpp", "python")}
        total = passk_end_to_end(pkg, args.workers)
        peer = problemtools(args.verifyproblem, pkg)
    n = args.tests
    rows = []
    for lang in ("cpp", "python"):
        t, loop = ours[lang]["tests_s"], loops[lang]
        rows.append([lang, f"{n / t:.0f}", f"{n / loop:.0f}", f"{loop / t:.2f}x", f"{1000 * (t - loop) / n:+.2f} ms",
                     f"{ours[lang]['compile_s']:.2f} s"])
    body = figures.table(["language", "passk tests/s (in its warm container)", "plain loop tests/s (no sandbox)",
                          "passk / loop", "overhead per test", "compile (once)"], rows)
    body += (f"\n\nBoth submissions of the {n}-test package end to end with `passk evaluate` (start-up, containers, "
             f"compile, every test, the row): {total:.1f} s")
    if peer is not None:
        body += f"; problemtools' `verifyproblem -p submissions` on the same package: {peer:.1f} s ({peer / total:.2f}x passk's time)"
    body += ".\n"
    print(body)
    if args.write_docs:
        figures.write("judge", body, f"The judge, {n} tiny tests: passk runs C++ at {n / ours['cpp']['tests_s']:.0f} tests/s "
                      f"and Python at {n / ours['python']['tests_s']:.0f} tests/s in its sandbox"
                      + (f"; the whole package in {total:.1f} s against problemtools' {peer:.1f} s" if peer else "") + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
