"""The hostile programs of tests/language_attacks.py (plus the demo sets' early exit and infinite loop)
through passk, per language, one worker so that each runs after the one before it in the same warm
container: prints each program's label and reason as a Markdown table, and the passk containers and
candidate processes left on the machine afterwards (there must be none).

    python3 scripts/attacks/language_attacks.py [--languages cpp,rust,go,java,javascript,typescript] [--timeout 2]
                                        [--runtime runc|runsc|runsc-VARIANT] [--isolation pooled|fresh] [--write-docs]

--write-docs: also write the table into docs/figures/language-attacks.md, which docs/languages.md includes
(scripts/lib/figures.py); only for the whole table, runc, pooled, at the 2 s limit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.core.constants import runtime_arg  # noqa: E402
from scripts.lib import figures  # noqa: E402
from tests.language_attacks import ATTACKS, DOCUMENTED, EXPECTED, GVISOR_TIMEOUT_FACTOR, TIMEOUT_S, rows  # noqa: E402

from harness.inputs.languages import LANGUAGES, SHOWN  # noqa: E402

FIRST = ("cpp", "rust", "go", "java", "javascript", "typescript")
# What each program does, as the table says it (a program without an entry is shown by its name)
PROGRAMS = {
    "early_exit": "exit(0) before the tests",
    "infinite_loop": "infinite loop",
    "memory_bomb": "memory bomb (1 MiB blocks, touched; the runtime started under the limit)",
    "output_flood": "output flood",
    "leave_files_and_a_process": "leave files in /tmp and /dev/shm and a background process",
    "find_what_was_left": "the next candidate looks for them (passes only if none is there)",
    "control_finds_what_it_left_itself": "control: the same looker in the leaver's own program",
    "macro_renames_passks_entry": "a wrong program renames passk's entry with a `__COUNTER__` macro (the tests never "
                                  "ran, the marker was written)",
    "macro_switches_assert_off": "a wrong program defines `NDEBUG` and an empty `assert`",
    "macro_shadows_assert_eq": "a wrong program's `macro_rules! assert_eq` expands to nothing",
    "runs_no_test": "a wrong program appends `-test.run=^$` to `os.Args` in `init()`",
    "unsafe_switches_assertions_off": "a wrong program flips `$assertionsDisabled` with `sun.misc.Unsafe`",
    "patches_node_assert": "a wrong program replaces every function of `require('node:assert')`",
    "replaces_require": "a wrong program replaces `require`",
    "macro_rewrites_the_tests": "a wrong program's `#define candidate(...) true ? 1 : 0` rewrites the tests",
    "fork_bomb": "fork bomb (Java, JS, TS: a flood of `sleep` processes; Go: raw fork; MultiPL-E's other languages: "
                 "their own fork, or `sleep` processes by their way of running a command)",
    "network": "connect to 1.1.1.1:80 (passes only if it fails; MultiPL-E's other languages: through passk-python)",
    "reads_the_nonce": "a program reads the nonce out of its own text and writes it on the marker's descriptor, "
                       "then exits 0",
    "selects_no_tests": "a wrong program selects no test (Lua's `arg`, Ruby's `ARGV`)",
    "replaces_luaunit": "a wrong program puts its own luaunit in `package.loaded`",
    "patches_assert_equal": "a wrong program reopens Test::Unit's `assert_equal`",
    "defines_the_tests_function": "a wrong program defines the tests' `test()` first",
    "overrides_exit": "a wrong program overrides `CORE::GLOBAL::exit`",
    "patches_eq_deeply": "a wrong program replaces Test::Deep's `eq_deeply` before the tests import it",
    "redefines_stopifnot": "a wrong program defines its own `stopifnot`",
    "shadows_set_and_exit": "a wrong program defines functions `set` and `exit`",
    "silences_checks": "a wrong program sets rackunit's `current-check-handler` to `void`",
    "hides_stderr": "a wrong program sends `current-error-port` nowhere",
    "shadows_assert": "a wrong program defines `assert` in its object",
    "shadows_debug": "a wrong program defines a class `Debug` with an empty `Assert`",
    "clears_trace_listeners": "a wrong program clears `Trace.Listeners`",
    "swallows_asserts": "a wrong program sets an `assertHandler` that returns",
    "skips_the_unittests": "a wrong program sets `Runtime.moduleUnitTester` to skip the unittests",
    "excludes_every_test": "a wrong program configures ExUnit to exclude every test",
    "silences_clojure_test": "a wrong program replaces `clojure.test/report` with a function that does nothing",
    "defines_main": "a wrong program defines `main`",
    "shadows_equality": "a wrong program rebinds `=` to a function that always says true",
    "ignores_assertions": "a wrong program's package body says `pragma Assertion_Policy (Ignore)`",
}


def shown_label(label: str) -> str:
    status, _, reason = label.partition(" ")
    return f"{status} `{reason}`" if reason else status
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
    ap.add_argument("--runtime", type=runtime_arg, default="runc", help="runc, runsc or a gVisor variant (runsc-system)")
    ap.add_argument("--isolation", choices=("pooled", "fresh"), default="pooled")
    ap.add_argument("--write-docs", action="store_true", help="also write docs/figures/language-attacks.md (the "
                                                                  "whole table: runc, pooled, 2 s)")
    args = ap.parse_args()
    if args.write_docs and (args.languages != ",".join(LANGUAGES) or args.timeout != 2.0 or args.runtime != "runc"
                            or args.isolation != "pooled"):
        ap.error("--write-docs writes the whole table as docs/languages.md describes it: leave out --languages, "
                 "--timeout, --runtime and --isolation")
    tmp = Path(tempfile.mkdtemp(prefix="passk-lang-attacks-"))
    languages = args.languages.split(",")
    factor = 1.0 if args.runtime == "runc" else GVISOR_TIMEOUT_FACTOR
    table = {lang: run(lang, tmp, factor * max(args.timeout, TIMEOUT_S.get(lang, 0.0)), args.runtime, args.isolation)
             for lang in languages}
    expected = {**{k: {v} for k, v in FROM_DEMO.items()}, **EXPECTED}
    unexpected = documented = 0
    slow = ", ".join(f"{SHOWN.get(lang, lang)} {TIMEOUT_S[lang]:g} s" for lang in languages
                     if TIMEOUT_S.get(lang, 0.0) > args.timeout)
    body = (f"runtime {args.runtime}, isolation {args.isolation}, {args.timeout:g} s run limit"
            + (f" ({slow}: the runtime's own start takes much of 2 s)" if slow else "")
            + (f", each x{factor:g} under gVisor" if factor != 1.0 else "") + ", one worker")
    # one table per group of languages (the first six, then MultiPL-E's others), each as wide as a page
    groups = [[lang for lang in languages if lang in group] for group in (FIRST, tuple(LANGUAGES))]
    groups = [g for i, g in enumerate(groups) if g and not (i and set(g) <= set(groups[0]))]
    if len(groups) == 2:
        groups[1] = [lang for lang in groups[1] if lang not in groups[0]]
    for group in groups:
        names = list(FROM_DEMO) + list(dict.fromkeys(a for lang in group for a in ATTACKS[lang]))
        names.sort(key=lambda name: name in DOCUMENTED)   # the documented passes last
        table_rows = []
        for name in names:
            cells = []
            for lang in group:
                if name not in ATTACKS[lang] and (name not in FROM_DEMO or name not in table[lang]):   # Bash's demo
                    # set has no early exit: its tests call the candidate in a subshell, where an exit ends only that
                    cells.append("-")
                    continue
                label, wall = table[lang].get(name, ("missing", 0))
                ok = label in expected[name]
                unexpected += not ok
                documented += ok and name in DOCUMENTED
                cells.append(shown_label(label) + (f" ({wall:.2f} s)" if label.startswith("timed_out") else "")
                             + ("" if ok else " **UNEXPECTED**"))
            want = " or ".join(shown_label(x) for x in sorted(expected[name]))
            program = PROGRAMS.get(name, name.replace("_", " "))
            table_rows.append([f"**documented**: {program}" if name in DOCUMENTED else program, want, *cells])
        body += "\n\n" + figures.table(["program", "expected", *(SHOWN.get(lang, lang) for lang in group)], table_rows)
    left = subprocess.run(["docker", "ps", "-aq", "--filter", "label=org.passk.managed"], capture_output=True, text=True)
    procs = subprocess.run(["sh", "-c", "ps -eo user:12,comm | awk '$1 == \"10001\"' | wc -l"], capture_output=True, text=True)
    for name, why in DOCUMENTED.items():
        if any(name in ATTACKS[lang] for lang in languages):
            body += f"\n\nDocumented ({PROGRAMS.get(name, name)}): {why}."
    body += (f"\n\nUnexpected: {unexpected}; documented: {documented}; passk containers left: "
             f"{len(left.stdout.split())}; processes of the candidate's uid on the host: {procs.stdout.strip()}.")
    return figures.finish("language-attacks", body, args.write_docs, unexpected)


if __name__ == "__main__":
    sys.exit(main())
