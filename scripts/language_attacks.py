"""The hostile programs of tests/language_attacks.py (plus the demo sets' early exit and infinite loop)
through passk, per language, one worker so that each runs after the one before it in the same warm
container: prints each program's label and reason as a Markdown table, and the passk containers and
candidate processes left on the machine afterwards (there must be none).

    python3 scripts/language_attacks.py [--languages cpp,rust,go,java,javascript,typescript] [--timeout 2]
                                        [--runtime runc|runsc] [--isolation pooled|fresh]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.language_attacks import ATTACKS, DOCUMENTED, EXPECTED, rows  # noqa: E402

LANGUAGES = ("cpp", "rust", "go", "java", "javascript", "typescript")
FROM_DEMO = {"early_exit": "failed exited_early", "infinite_loop": "timed_out wall_time_limit"}


def demo_rows(language: str) -> list[dict]:
    """The demo set's early exit and infinite loop, as attack rows."""
    out = []
    for line in (ROOT / "problems" / f"lang-{language}" / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        kind = {"failed exited_early": "early_exit", "timed_out wall_time_limit": "infinite_loop"}.get(s["expected"])
        if kind and not any(r["attack"] == kind for r in out):
            out.append({**{k: v for k, v in s.items() if k != "expected"}, "attack": kind})
    return out


def run(language: str, tmp: Path, timeout: float, runtime: str = "runc", isolation: str = "pooled") -> dict:
    samples = tmp / f"{language}.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in demo_rows(language) + rows(language)))
    out = tmp / f"run-{language}"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems",
                           str(ROOT / "problems" / f"lang-{language}" / "problems.jsonl"), "--samples", str(samples),
                           "--out", str(out), "--workers", "1", "--timeout-s", str(timeout), "--stop-tokens",
                           "--runtime", runtime, "--isolation", isolation,
                           "--no-progress", "--k", "1"], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"passk failed on {language}: {proc.stderr[-2000:]}")
    got = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        label = r["status"] if r["status"] == "passed" else f"{r['status']} {r['reason']}"
        got[r["sample"]["attack"]] = (label, r["wall_s"])
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--languages", default=",".join(LANGUAGES))
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--runtime", choices=("runc", "runsc"), default="runc")
    ap.add_argument("--isolation", choices=("pooled", "fresh"), default="pooled")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="passk-lang-attacks-"))
    languages = args.languages.split(",")
    table = {lang: run(lang, tmp, args.timeout, args.runtime, args.isolation) for lang in languages}
    print(f"runtime {args.runtime}, isolation {args.isolation}, {args.timeout} s run limit, one worker\n")
    names = list(FROM_DEMO) + list(dict.fromkeys(a for lang in languages for a in ATTACKS[lang]))
    expected = {**{k: {v} for k, v in FROM_DEMO.items()}, **EXPECTED}
    print("| program | expected | " + " | ".join(languages) + " |")
    print("|---|---|" + "---|" * len(languages))
    unexpected = documented = 0
    for name in names:
        cells = []
        for lang in languages:
            if name not in FROM_DEMO and name not in ATTACKS[lang]:
                cells.append("-")
                continue
            label, wall = table[lang].get(name, ("missing", 0))
            ok = label in expected[name]
            unexpected += not ok
            documented += ok and name in DOCUMENTED
            cells.append(f"{label} ({wall:.2f} s)" + ("" if ok else " **UNEXPECTED**"))
        want = " or ".join(sorted(expected[name])) + (" (documented)" if name in DOCUMENTED else "")
        print(f"| {name.replace('_', ' ')} | {want} | " + " | ".join(cells) + " |")
    left = subprocess.run(["docker", "ps", "-aq", "--filter", "label=org.passk.managed"], capture_output=True, text=True)
    procs = subprocess.run(["sh", "-c", "ps -eo user:12,comm | awk '$1 == \"10001\"' | wc -l"], capture_output=True, text=True)
    for name, why in DOCUMENTED.items():
        print(f"\ndocumented ({name.replace('_', ' ')}): {why}")
    print(f"\nunexpected: {unexpected}; documented: {documented}; passk containers left: {len(left.stdout.split())}; "
          f"processes of the candidate uid on the host: {procs.stdout.strip()}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
