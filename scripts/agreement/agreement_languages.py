"""passk against MultiPL-E's evaluator (scripts/peers/multiple_peer.py) on the same candidates, per language, in
one run: the same status for every candidate, each disagreement listed with its reason, and the
throughput of both (candidates per second, same worker count, same run timeout).

    python3 scripts/agreement/agreement_languages.py [--languages cpp,rust,go,java,javascript,typescript]
                                           [--timeout 3] [--workers 2] [--out DIR]

Candidates: scripts/inputs/language_samples.py (MultiPL-E's HumanEval, which ships no solutions: defaults, code
that does not compile, infinite loops, early exits, correct and wrong completions written by us).
MultiPL-E's status -> passk's label: OK -> passed; Timeout -> timed_out; SyntaxError -> failed with
compile_error (syntax_error in JavaScript); Exception, AssertionError, ReferenceError -> failed.
One difference is by design: a program that exits with code 0 before its tests ran is OK to MultiPL-E
and failed exited_early to passk."""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.inputs import language_passing, language_samples  # noqa: E402
from scripts.lib.measure import busy_cpu_s  # noqa: E402
from scripts.peers import multiple_peer  # noqa: E402

LANGUAGES = ("cpp", "rust", "go", "java", "javascript", "typescript")
# MultiPL-E's other languages (issue 35): their problem files come from --more (the synthetic mix), or
# passk's own demo sets (the demo mix: problems/lang-<language>/, its samples and the tampering and
# nonce-reading programs of tests/language_attacks.py; no bombs, since the peer runs without limits)
MORE = ("lua", "ruby", "php", "perl", "r", "bash", "racket", "scala", "csharp", "d", "elixir", "clojure", "haskell",
        "ocaml", "ada")
EXPECTED_DIFFERENCE = {("failed exited_early", "OK"): "exits 0 before its tests: MultiPL-E trusts the exit code, "
                                                      "passk needs the tests' completion marker"}
# differences of one language's rule, by design: (language, passk's label, MultiPL-E's status) -> why
LANGUAGE_DIFFERENCE = {
    ("clojure", "failed", "OK"): "clojure.test's run-test reports a failed `is` on stdout and exits 0, which "
                                 "MultiPL-E's rule (exit code and stderr) passes; passk needs the tests' summary "
                                 "to count no failure",
    **{(lang, "timed_out", "Exception"): "MultiPL-E's eval for the language never reads safe_subprocess's "
                                         "timeout flag: a run killed at the limit is an Exception there"
       for lang in ("php", "racket", "clojure")},
}
TAMPERING_DIFFERENCE = "a wrong program that tampers with the tests: MultiPL-E passes it, passk's wrapping fails it"


# Languages without a compile step whose MultiPL-E rule calls a run a SyntaxError from what it printed;
# passk's label is failed (runtime_error: a reason the program's own text cannot choose). The same status.
SYNTAX_FROM_OUTPUT = ("ruby", "php", "r", "bash", "racket", "elixir", "ocaml")


def explain(language: str, kind: str, mine: str, theirs: str) -> str:
    """Why passk and MultiPL-E differ on a candidate, where it is by design; UNEXPLAINED otherwise."""
    if kind == "tampering" and mine.startswith("failed") and theirs == "OK":
        return TAMPERING_DIFFERENCE
    return LANGUAGE_DIFFERENCE.get((language, mine, theirs)) or EXPECTED_DIFFERENCE.get((mine, theirs), "UNEXPLAINED")


def passk_label(row: dict) -> str:
    if row["status"] == "failed" and row["reason"] in ("compile_error", "syntax_error", "exited_early"):
        return f"failed {row['reason']}"
    return row["status"]


def peer_label(status: str) -> str:
    return {"OK": "passed", "Timeout": "timed_out", "SyntaxError": "failed compile_error"}.get(status, "failed")


def same(passk: str, peer: str) -> bool:
    if passk == "failed syntax_error":   # JavaScript has no compile step: MultiPL-E's SyntaxError too
        passk = "failed compile_error"
    if passk == "failed exited_early":
        passk = "failed"
    return passk == peer


def _split(rows, compile_key, run_key, busy_s, candidates) -> dict:
    """CPU seconds per candidate: the compile steps, the runs, and the rest of what the machine did in the
    harness's run (the harness itself: its processes, its containers' other processes, Docker)."""
    values = [r.get(compile_key) for r in rows], [r.get(run_key) for r in rows]
    if all(v is None for v in values[0] + values[1]):
        return {"compile": None, "run": None, "own": None, "total": busy_s / candidates}
    compile_s, run_s = (sum(v for v in vs if isinstance(v, (int, float))) for vs in values)
    return {"compile": compile_s / candidates, "run": run_s / candidates,
            "own": (busy_s - compile_s - run_s) / candidates, "total": busy_s / candidates}


def demo_samples(language: str, tmp: Path) -> Path:
    """The demo mix: passk's demo set for the language, and the hostile rows that do not need limits to be
    safe to run (the tampering and nonce-reading programs)."""
    sys.path.insert(0, str(ROOT))
    from tests.language_attacks import ATTACKS, DOCUMENTED, EXPECTED
    rows = [{"name": s["name"], "completion": s["completion"], "kind": s["expected"]}
            for s in map(json.loads, (ROOT / "problems" / f"lang-{language}" / "samples.jsonl").read_text().splitlines())]
    for name, program in ATTACKS[language].items():
        if name == "reads_the_nonce" or "failed assertion" in EXPECTED.get(name, ()) and name != "control_finds_what_it_left_itself":
            rows.append({"name": "demo_add", "solution": program,
                         "kind": "documented" if name in DOCUMENTED else "tampering"})
    samples = tmp / f"{language}-demo.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return samples


def has_problems(language: str, more: Path | None) -> bool:
    """Whether MultiPL-E's HumanEval file of the language is at hand (../shared, or --more)."""
    if language in language_samples.FILES:
        return True
    return bool(more) and language in language_samples.MORE_FILES and \
        (more / f"{language_samples.MORE_FILES[language]}.jsonl").is_file()


COMMENT = {"lua": "-- {}", "ruby": "# {}", "php": "// {}", "perl": "# {}", "r": "# {}", "bash": "# {}",
           "racket": "; {}", "scala": "// {}", "csharp": "// {}", "d": "// {}", "elixir": "# {}", "clojure": "; {}",
           "haskell": "-- {}", "ocaml": "(* {} *)", "ada": "-- {}"}
REPEAT = 12


def demo_repeated_samples(language: str, tmp: Path) -> Path:
    """The demo-repeated mix, for a speed figure where no MultiPL-E file of the language is at hand: the demo
    set's candidates, each REPEAT times with a comment of its own at its end, so that no program text
    repeats (MultiPL-E's cache would evaluate a repeated one once)."""
    rows = []
    demo = [json.loads(line) for line in (ROOT / "problems" / f"lang-{language}" / "samples.jsonl").read_text().splitlines()]
    for copy in range(REPEAT):
        for i, s in enumerate(demo):
            note = COMMENT[language].format(f"copy {copy} of candidate {i}")
            rows.append({"name": s["name"], "completion": s["completion"] + note + "\n", "kind": s["expected"]})
    samples = tmp / f"{language}-demo-repeated.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return samples


def problems_for(language: str, mix: str, more: Path | None) -> Path:
    if mix in ("demo", "demo-repeated"):
        return ROOT / "problems" / f"lang-{language}" / "problems.jsonl"
    if language in language_samples.MORE_FILES:
        if more is None:
            raise SystemExit(f"{language}: give --more DIR, a directory with MultiPL-E's {language_samples.MORE_FILES[language]}.jsonl "
                             "(or use --mix demo)")
        return more / f"{language_samples.MORE_FILES[language]}.jsonl"
    return language_samples.SHARED / f"{language_samples.FILES[language]}.jsonl"


def samples_for(language: str, tmp: Path, mix: str, more: Path | None = None) -> Path:
    """The candidates of a mix: "synthetic" (scripts/inputs/language_samples.py), "synthetic-no-loops" (the same
    without the infinite loops) or "passing" (scripts/inputs/language_passing.py)."""
    if mix == "passing":
        samples = tmp / f"{language}-passing.jsonl"
        if not samples.exists():
            language_passing.main(tmp)
        return samples
    if mix == "demo":
        return demo_samples(language, tmp)
    if mix == "demo-repeated":
        return demo_repeated_samples(language, tmp)
    samples = tmp / f"{language}.jsonl"
    if not samples.exists():
        language_samples.main(tmp, more)
    if mix == "synthetic-no-loops":
        kept = [line for line in samples.read_text().splitlines() if json.loads(line)["kind"] != "loop"]
        samples = tmp / f"{language}-no-loop.jsonl"
        samples.write_text("".join(line + "\n" for line in kept))
    return samples


def run_language(language: str, tmp: Path, timeout: float, workers: int, mix: str = "synthetic",
                 more: Path | None = None) -> dict:
    """Both harnesses on the language's candidates of the mix."""
    problems = problems_for(language, mix, more)
    samples = samples_for(language, tmp, mix, more)
    kinds = [json.loads(line)["kind"] for line in samples.read_text().splitlines()]
    out = tmp / f"passk-{samples.stem}"
    shutil.rmtree(out, ignore_errors=True)
    busy, start = busy_cpu_s()[0], time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples",
                           str(samples), "--out", str(out), "--timeout-s", str(timeout), "--workers", str(workers),
                           "--no-progress", "--k", "1"], capture_output=True, text=True, cwd=ROOT)
    passk_s, passk_busy = time.monotonic() - start, busy_cpu_s()[0] - busy
    if proc.returncode != 0:
        raise SystemExit(f"passk failed on {language}: {proc.stderr[-2000:]}")
    peer_out = tmp / f"peer-{samples.stem}.jsonl"
    busy, start = busy_cpu_s()[0], time.monotonic()
    peer = multiple_peer.main([language, str(problems), str(samples), str(peer_out), "--workers", str(workers),
                               "--timeout", str(timeout)])
    peer_s, peer_busy = time.monotonic() - start, busy_cpu_s()[0] - busy
    rows = {(r["task_id"], r["sample_index"]): r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    theirs = {(r["name"], r["sample_index"]): r for r in map(json.loads, peer_out.read_text().splitlines())}
    order, counts = [], collections.Counter()
    for line in samples.read_text().splitlines():
        name = json.loads(line)["name"]
        order.append((name, counts[name]))
        counts[name] += 1
    agree, differences, table = 0, [], collections.Counter()
    for key, kind in zip(order, kinds):
        mine, other = passk_label(rows[key]), peer_label(theirs[key]["status"])
        if language in SYNTAX_FROM_OUTPUT and other == "failed compile_error":
            other = "failed"
        table[(mine, theirs[key]["status"])] += 1
        if same(mine, other):
            agree += 1
        else:
            differences.append((key, kind, mine, theirs[key]["status"], rows[key]["detail"][:160]))
    details = [r.get("channel_detail") or {} for r in rows.values()]
    return {"language": language, "mix": mix, "candidates": len(order), "agree": agree, "differences": differences,
            "table": table, "passk_s": passk_s, "peer_s": peer_s, "peer_eval_s": peer["seconds"],
            "passk_cpu": _split(details, "compile_cpu_s", "run_cpu_s", passk_busy, len(order)),
            "peer_cpu": _split(list(theirs.values()), "compile_cpu_s", "run_cpu_s", peer_busy, len(order)),
            "toolchain": json.loads((out / "manifest.json").read_text())["sandbox"].get("toolchain")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--languages", default=",".join(LANGUAGES))
    ap.add_argument("--timeout", type=float, default=3.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mix", default="synthetic", choices=("synthetic", "synthetic-no-loops", "passing", "demo",
                                                                "demo-repeated"))
    ap.add_argument("--more", type=Path, default=None, help="a directory with MultiPL-E's HumanEval files of its "
                                                            "other languages (humaneval-lua.jsonl, ...)")
    ap.add_argument("--out", default=None, help="keep the runs here (default: a temporary directory)")
    args = ap.parse_args()
    tmp = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="passk-agree-"))
    tmp.mkdir(parents=True, exist_ok=True)
    results = []
    for language in args.languages.split(","):
        r = run_language(language, tmp, args.timeout, args.workers, args.mix, args.more)
        results.append(r)
        print(f"\n== {language}: {r['agree']} of {r['candidates']} candidates with the same status "
              f"({r['candidates'] - r['agree']} different); toolchain {r['toolchain']}")
        for (mine, theirs), n in sorted(r["table"].items()):
            print(f"   passk {mine:22s} MultiPL-E {theirs:15s} {n:4d}")
        for key, kind, mine, theirs, detail in r["differences"]:
            why = explain(language, kind, mine, theirs)
            print(f"   differs: {key[0]}#{key[1]} ({kind}): passk {mine}, MultiPL-E {theirs}: {why} | {detail}")
    print("\nthroughput (same candidates, workers and run timeout; passk's time includes its start-up):")
    print(f"{'language':12s} {'cands':>6s} {'passk cand/s':>13s} {'MultiPL-E cand/s':>17s} {'ratio':>6s}")
    for r in results:
        mine, theirs = r["candidates"] / r["passk_s"], r["candidates"] / r["peer_s"]
        print(f"{r['language']:12s} {r['candidates']:6d} {mine:13.2f} {theirs:17.2f} {mine / theirs:6.2f}")
    print(f"\nruns kept in {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
