#!/usr/bin/env python3
"""passk's judge against Kattis's problemtools on the same packages and their own submissions.

For each package, problemtools' `verifyproblem -p submissions` and `passk verify` judge every submission in
submissions/<verdict>/; the script prints, per submission, the verdict each gave (problemtools' AC, WA,
TLE, RTE, CE, JE; passk's label and reason mapped onto those) and whether the two agree, then the agreement
per expected verdict and per language, and every disagreement.

    python3 -m venv /tmp/pt && /tmp/pt/bin/pip install problemtools     # the peer (PyPI)
    apt-get install pypy3                                                 # problemtools runs Python 3 with it
    python3 scripts/agreement/agreement_judge.py --verifyproblem /tmp/pt/bin/verifyproblem [PACKAGE ...] [--write-docs]

problemtools compiles and runs on this machine (its compilers: gcc, g++, a JDK, pypy3), passk in its
containers. Debian bookworm's JDK is 17 and problemtools' Java command asks for `-source 21`: the script
gives problemtools a configuration (XDG_CONFIG_HOME) that compiles Java for 17, nothing else changed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PT_LINE = re.compile(r"^(?:ERROR\s+|\s+)(?P<sub>[\w.+-]+/\S+) \((?P<lang>[^)]*(?:\([^)]*\))?[^)]*)\)"
                     r"(?: OK(?: with extra time)?: | got )(?P<verdict>[A-Z]+)(?: \((?P<score>[-\d.]+)\))?")
PT_COMPILE = re.compile(r"^ERROR Compile error for (?P<sub>[\w.+-]+/\S+) \(")
REFUSED = "(refused)"   # problemtools' key for a package it would not load: its message
PT_LICENSES = ("unknown", "public domain", "cc0", "cc by", "cc by-sa", "educational", "permission")
JAVA_17 = ("java:\n    compile: 'javac -encoding UTF-8 -sourcepath {path} -d {path} {files}'\n")


def kattis_verdict(status: str, reason: str) -> str:
    """passk's label as problemtools' verdict."""
    if status == "passed" or reason == "partial_score":
        return "AC"
    return {"wrong_answer": "WA", "presentation_error": "WA", "time_limit": "TLE", "idleness_limit": "TLE",
            "runtime_error": "RTE", "memory_limit": "RTE", "output_limit": "OLE", "compile_error": "CE",
            "judge_error": "JE"}.get(reason, reason)


def not_both(sub: str, theirs: str, ours: str) -> str | None:
    """Why a submission was judged by one side only (left out of the agreement), or None."""
    if ours == "-" and theirs in ("CE", "-"):
        return "not run by passk (a language it does not run, or Python 2), nor compiled by problemtools here"
    if ours == "-":
        return "not run by passk (a language it does not run, or Python 2)"
    if theirs == "-":
        return f"not run by problemtools ({sub.split('/')[0]}/ is not one of its submission directories)"
    if theirs == "CE" and ours != "CE":
        return "problemtools could not compile it here (its compiler for the language is not installed)"
    return None


def for_problemtools(package: Path, tmp: str) -> Path:
    """The package as problemtools is given it: unchanged, except, in a copy: a package of a contest that has
    its own languages.yaml is copied alone (below); and metadata fields of legacy problem.yaml files that
    problemtools 1.20260907's schema refuses while contests' own judges take them: a `name` that is a map of languages (NWERC 2023's, `name: {en: ...}`) becomes its English (or
    first) string ('Input should be a valid string'); a `uuid` that is not a UUID (KARWa's, a problem
    letter) and a `license` outside its list (KARWa's `mit`) are left out ('Input should be a valid UUID',
    "Input should be 'unknown', ..."). None of them is read by a judge. passk gets the package unchanged."""
    import shutil
    import uuid
    import yaml
    meta_file = package / "problem.yaml"
    meta = yaml.safe_load(meta_file.read_text()) if meta_file.is_file() else None
    changes = []
    if (package.parent / "languages.yaml").is_file():
        # problemtools reads a contest's own languages.yaml from the package's parent (KARWa 2025's is in a
        # schema problemtools 1.20260907 refuses: 'must specify both "shebang" and "shebang_files"'); passk
        # runs problemtools' own commands: both are given those, the package copied alone, its links into
        # the contest replaced by the files they name
        changes.append("the package is copied alone (the contest's languages.yaml is not read)")
    if not isinstance(meta, dict) or "problem_format_version" in meta:
        meta = None
    if meta is not None and isinstance(meta.get("name"), dict):
        names = meta["name"]
        meta["name"] = str(names.get("en", next(iter(names.values()))))
        changes.append(f"name is the string {meta['name']!r}")
    if meta is not None and "uuid" in meta:
        try:
            uuid.UUID(str(meta["uuid"]))
        except ValueError:
            changes.append(f"uuid {meta.pop('uuid')!r} (not a UUID) is left out")
    if meta is not None and "license" in meta and str(meta["license"]).lower() not in PT_LICENSES:
        changes.append(f"license {meta.pop('license')!r} (not one of problemtools' list) is left out")
    if not changes:
        return package
    copy = Path(tmp) / package.name
    shutil.copytree(package, copy, symlinks=False)
    if meta is not None:
        (copy / "problem.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    print(f"{package.name}: problemtools is given a copy: " + "; ".join(changes),
          file=sys.stderr, flush=True)
    return copy


def problemtools(verifyproblem: str, package: Path) -> dict:
    """{submissions/<dir>/<file>: verdict} as problemtools' verifyproblem gives them."""
    with tempfile.TemporaryDirectory() as conf:
        (Path(conf) / "problemtools").mkdir()
        (Path(conf) / "problemtools" / "languages.yaml").write_text(JAVA_17)
        package = for_problemtools(package, conf)
        proc = subprocess.run([verifyproblem, str(package), "-p", "submissions"], capture_output=True, text=True,
                              env={**os.environ, "XDG_CONFIG_HOME": conf}, timeout=3600)
    out = {}
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("ERROR Failed to load problem"):
            out[REFUSED] = line.removeprefix("ERROR ")[:200]
        m = PT_LINE.match(line)
        if m:
            out[m.group("sub")] = (m.group("verdict"), float(m.group("score")) if m.group("score") else None)
            continue
        m = PT_COMPILE.match(line)
        if m:
            out[m.group("sub")] = ("CE", None)
    return out


def passk(given: Path, out_dir: Path) -> dict:
    """{(package, submissions/<dir>/<file>): (verdict, language, status, reason, score)} as `passk verify` gives
    them, for a package or a whole contest directory (as a user gives either: a contest's packages may share
    files by links inside it)."""
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "verify", str(given), "--out", str(out_dir),
                           "--quiet", "--k", "1", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=6 * 3600)
    try:
        entries = json.loads(proc.stdout)
    except ValueError:   # refused (one line, exit 2) or the run failed: every submission differs
        print(f"passk verify failed on {given}: {proc.stderr.strip()[-2000:]}", file=sys.stderr, flush=True)
        return {}
    out = {}
    for e in entries:
        package, sub = e["file"].split("/submissions/", 1)
        out[(package.rsplit("/", 1)[-1], sub)] = (kattis_verdict(e["status"], e["reason"]), e["language"] or "python",
                                                  e["status"], e["reason"], e["score"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("packages", nargs="*", help="Kattis packages, or contest directories of them (passk is given a "
                                                "contest whole, as a user would; default: every package in problems/kattis)")
    ap.add_argument("--verifyproblem", default="verifyproblem", help="problemtools' verifyproblem command")
    ap.add_argument("--write-docs", action="store_true", help="write docs/figures/judge-agreement.md")
    args = ap.parse_args()
    from harness.inputs.formats.kattis import packages
    given = [Path(p) for p in args.packages] or [ROOT / "problems" / "kattis"]
    found = [pkg for g in given for pkg in packages(g)]
    rows, by_dir, by_lang, by_package = [], defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    with tempfile.TemporaryDirectory() as tmp:
        judged = {number: passk(g, Path(tmp) / f"{number}-{g.name}") for number, g in enumerate(given)}
        for number, package in ((n, pkg) for n, g in enumerate(given) for pkg in packages(g)):
            pt = problemtools(args.verifyproblem, package)
            refused = pt.pop(REFUSED, None)
            if refused:
                print(f"{package.name}: problemtools refused it: {refused}", file=sys.stderr, flush=True)
            ours = {sub: v for (name, sub), v in judged[number].items() if name == package.name}
            print(f"{package.name}: problemtools judged {len(pt)}, passk {len(ours)}", file=sys.stderr, flush=True)
            # a scoring problem: problemtools' full score is what its accepted submissions get
            full = max((s for sub, (v, s) in pt.items() if sub.startswith("accepted/") and s is not None), default=None)
            for sub in sorted(set(pt) | set(ours)):
                verdict, lang, status, reason, score = ours.get(sub, ("-", "-", "-", "-", None))
                theirs, points = pt.get(sub, ("-", None))
                if score is not None and full:   # scores: problemtools' share of its full score against passk's
                    verdict = "AC" if score > 0 and theirs == "AC" else verdict
                    agree = verdict == theirs and (points is None or abs(points / full - score) < 1e-6)
                    theirs += f" ({points:g} of {full:g})" if points is not None else ""
                else:
                    agree = verdict == theirs
                why = not_both(sub, theirs, verdict)
                if why and refused and theirs == "-":
                    why = f"not run by problemtools: it refused the package ({refused})"
                rows.append((package.name, sub, lang, theirs, verdict, f"{status} {reason}" + (f" {score:.3f}" if score is not None else ""),
                             why or agree))
                if why:
                    continue
                for key, table in ((sub.split("/")[0], by_dir), (lang, by_lang), (package.name, by_package)):
                    table[key][0] += agree
                    table[key][1] += 1
    lines = ["| package | submission | language | problemtools | passk | passk's label | agree |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {p} | `{s}` | {lang} | {t} | {v} | {label} | "
              f"{a if isinstance(a, str) else 'yes' if a else '**no**'} |" for p, s, lang, t, v, label, a in rows]
    lines += ["", "| expected verdict | agree |", "|---|---|"] + [f"| {k} | {a}/{n} |" for k, (a, n) in sorted(by_dir.items())]
    lines += ["", "| language | agree |", "|---|---|"] + [f"| {k} | {a}/{n} |" for k, (a, n) in sorted(by_lang.items())]
    lines += ["", "| package | agree |", "|---|---|"] + [f"| {k} | {a}/{n} |" for k, (a, n) in sorted(by_package.items())]
    both = [r for r in rows if not isinstance(r[-1], str)]
    agree = sum(1 for r in both if r[-1])
    headline = (f"passk and problemtools agree on {agree} of the {len(both)} submissions both judged, of "
                f"{len(found)} packages ({len(rows) - len(both)} judged by one side only: the reason is in the table)")
    lines += ["", headline]
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        from scripts.lib import figures
        figures.write("judge-agreement", table)
    return 0 if agree == len(both) else 1


if __name__ == "__main__":
    sys.exit(main())
