"""The `passk` command: a thin layer over library functions. Errors a user can fix print one
line and exit 2; an unrecoverable harness failure exits 1; a completed run exits 0."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from harness.core.version import __version__
from harness.inputs.untrusted import Ceilings
from harness.inputs.config import (BigCodeBenchSettings, EvalPlusSettings, Limits, RepoSettings, RunConfig, SandboxSettings,
                                   default_base_image, parse_k_list)
from harness.core.constants import (DEFAULT_K, EXECUTORS, ISOLATIONS, MANIFEST_FILE, PIN_CPUS, RESULTS_FILE, runtime_arg,
                                    TRANSPORTS)
from harness.core.errors import InputError, PasskError

PIN_CPUS_HELP = ("auto: each worker's containers on CPUs of their own when the workers fit the machine's CPUs (a local "
                 "engine; the choice is in the manifest); off: wherever the kernel puts them")   # evaluate and serve


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise InputError(f"{self.prog}: {message}")


def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
        return value
    return parse


def _nonnegative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def _scoring_args(p) -> None:
    p.add_argument("--k-policy", choices=("all", "subset"), default="all",
                   help="all: report k only when every task has n ≥ k; subset: also report it on the tasks "
                        "that have n ≥ k, labelled with their count")
    p.add_argument("--selection", default="first",
                   help="selected-answer rule: first, random (seeded) or max:FIELD of a per-sample field")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and of --selection random")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples over tasks (0: none)")


def _scoring_options(args, exclude_errors=False):
    from harness.inputs.config import ScoringOptions
    return ScoringOptions(ks=parse_k_list(args.k), k_policy=args.k_policy, selection=args.selection,
                          seed=args.seed, bootstrap=args.bootstrap, exclude_errors=exclude_errors)


def _quiet_args(p) -> None:
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                   help="no progress on stderr (by default: a bar on a terminal, else a status line every 5 s)")


def _workers_default() -> int:
    return os.cpu_count() or 1


class _Help(argparse.HelpFormatter):
    """Every option's help ends with its default, where it has one."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.required or action.default is None or action.default is False
                or action.default is argparse.SUPPRESS or "%(default)" in text or not action.option_strings):
            return text
        return text + " (default: %(default)s)"


def _evaluate_args(ev, verify: bool = False) -> None:
    """evaluate's options (verify takes the same, with the package as its one argument)."""
    ev.add_argument("--problems" if not verify else "problems", **({"required": True} if not verify else {}),
                    help="problem file (HumanEval, HumanEval+, MBPP, MBPP+, MultiPL-E, APPS, CodeContests, "
                         "LiveCodeBench, BigCodeBench, Codeforces, Code-Contests-Plus format: read from its fields), a "
                         "Kattis problem package (or a directory of them), or a directory in passk's layout")
    ev.add_argument("--samples", default=None,
                    help="candidates: .jsonl(.gz), .json (rows, or bigcode's generations.json), or a directory "
                         "(DIR/<task>/<file>.py, or MultiPL-E completion files, or a Kattis package's submissions); "
                         "a Kattis package's own submissions when --problems is one and this is left out")
    ev.add_argument("--format", dest="problems_format", default=None,
                    help="force the problem format (humaneval, humaneval+, mbpp, mbpp+, multipl-e, apps, codecontests, "
                         "livecodebench, bigcodebench, native) instead of reading it from the file's fields")
    ev.add_argument("--channel", choices=("auto", "proxy", "in_process"), default="auto",
                    help="who decides verdicts: auto (per problem, documented rule), or force proxy or in_process")
    ev.add_argument("--stop-tokens", action="store_true",
                    help="cut each completion at its problem's first stop token (MultiPL-E)")
    ev.add_argument("--extract-code", action="store_true",
                    help="take the code of the last fenced block of each sample (chat answers); none: failed no_code")
    ev.add_argument("--out", required=True, help="output directory (an existing one of the same run is resumed)")
    ev.add_argument("--k", default=",".join(map(str, DEFAULT_K)), help="k values, e.g. 1,10,100")
    ev.add_argument("--timeout-s", type=_positive(float), default=Limits.timeout_s,
                    help="wall-clock limit of a candidate and its tests, in seconds")
    ev.add_argument("--memory-mb", type=_positive(int), default=Limits.memory_mb,
                    help="address-space limit of the candidate (and of the test process), in MB")
    ev.add_argument("--cpus", type=_positive(float), default=Limits.cpus, help="CPU quota of each container")
    ev.add_argument("--pids", type=_positive(int), default=Limits.pids, help="processes a candidate may have")
    ev.add_argument("--output-bytes", type=_positive(int), default=Limits.output_bytes,
                    help="stdout + stderr a candidate may write")
    ev.add_argument("--workers", type=_positive(int), default=_workers_default(),
                    help="candidates run at once, each worker with its own warm container (default: the CPU count, %(default)s here)")
    ev.add_argument("--runtime", type=runtime_arg, default="runc",
                    help="container runtime: runc, or gVisor as runsc (or a variant registered as runsc-systrap, runsc-ptrace)")
    ev.add_argument("--isolation", choices=ISOLATIONS, default="pooled",
                    help="pooled: warm containers, cleaned between candidates; fresh: a new container each")
    ev.add_argument("--transport", choices=TRANSPORTS, default="auto",
                    help="how jobs reach a container: socket (bind-mounted unix socket), attach (Docker's "
                         "attach stream), auto (socket under runc on a local engine)")
    ev.add_argument("--pin-cpus", choices=PIN_CPUS, default="auto",
                    help=PIN_CPUS_HELP)
    ev.add_argument("--executor", choices=EXECUTORS, default="local",
                    help="local: this machine's Docker engine; ray: every node of a Ray cluster (pip install "
                         "'passk[ray]'), each running --workers warm containers on its own engine")
    ev.add_argument("--ray-address", default=None,
                    help="with --executor ray: the cluster to join (default: RAY_ADDRESS, else a new local one)")
    ev.add_argument("--python", choices=("auto", "cpython", "pypy"), default="auto",
                    help="the Python that runs io programs (judged problems, CodeContests, ...): auto (the one the "
                         "problem's format assumes: Debian's PyPy 3 for a Kattis package, as Kattis judges Python 3 and "
                         "its time limits assume it; passk's CPython otherwise), cpython or pypy")
    ev.add_argument("--language", default=None,
                    help="the candidates' language (python or one of MultiPL-E's: cpp, rust, go, java, javascript, "
                         "typescript, lua, ruby, php, perl, r, bash, racket, scala, csharp, d, elixir, clojure, "
                         "haskell, ocaml, ada; default: the problem file's)")
    ev.add_argument("--compile-timeout-s", type=_positive(float), default=Limits.compile_timeout_s,
                    help="wall-clock limit of a compile step (C++, Rust, Go, Java, TypeScript, Scala, C#, D, Ada), "
                         "in seconds")
    ev.add_argument("--compile-memory-mb", type=_positive(int), default=Limits.compile_memory_mb,
                    help="memory of a compile step, in MB (watched in the container's cgroup)")
    ev.add_argument("--base-image", default=default_base_image(),
                    help="base image with python3 for passk's image (e.g. python:3.11-slim; env PASSK_BASE_IMAGE)")
    _environment_args(ev)
    ev.add_argument("--ceiling", action="append", default=[], metavar="KEY=VALUE",
                    help="the most a problem package or row may state, e.g. time_limit_s=120 or memory_mb=8192 "
                         "(a value over its ceiling is refused, never clipped; see docs/limits.md; recorded in the "
                         "manifest)")
    ev.add_argument("--bigcodebench-timeout-s", type=_positive(float), default=BigCodeBenchSettings.timeout_s,
                    help="BigCodeBench tasks (its BIGCODEBENCH_TIMEOUT_PER_TASK): the test suite's limit is max(this, "
                         "the ground truth's time) + 1 s; --timeout-s and --memory-mb do not apply to these tasks "
                         "(their address space is BigCodeBench's 30 GB)")
    ev.add_argument("--check-ground-truth", action="store_true",
                    help="first run each task's canonical solution in the run's sandbox and environment, and report "
                         "the ground truth's pass rate and every failing task with its reason (BigCodeBench's "
                         "--check-gt-only; recorded in the manifest)")
    ev.add_argument("--bigcodebench-original", action="store_true",
                    help="BigCodeBench tasks: run each program as it is, not after the task's code_prompt and `pass` "
                         "(BigCodeBench's default, calibrated, is passk's)")
    ev.add_argument("--repos", default=None, metavar="DIR",
                    help="repository tasks (SWE-bench rows): the repositories, at DIR/<owner>/<name> (a clone or a bare "
                         "mirror, e.g. `git clone --mirror`); nothing is fetched while a run evaluates")
    ev.add_argument("--repo-specs", default=None, metavar="FILE",
                    help="repository tasks: more environment specifications (a JSON file shaped as passk's "
                         "harness/inputs/repos/specs.json, which holds SWE-bench 4.1.0's)")
    ev.add_argument("--repo-timeout-s", type=_positive(float), default=RepoSettings.timeout_s,
                    help="repository tasks: the wall clock of one candidate's whole evaluation (the harness's default)")
    ev.add_argument("--project-timeout-s", type=_positive(float), default=180.0,
                    help="projects (Exercism exercises, aider's polyglot benchmark): the wall clock of one candidate's "
                         "test command, its build included (aider's runner: 180 s)")
    ev.add_argument("--repo-memory-mb", type=_positive(int), default=RepoSettings.memory_mb,
                    help="repository tasks: the memory of one candidate's install and tests, in MB")
    ev.add_argument("--repo-pins", choices=("official", "spec"), default=RepoSettings.pins,
                    help="repository tasks: `official` installs SWE-bench's exported environment where it published "
                         "the instance's (else the spec's packages, resolved by pip); `spec` always resolves the spec")
    ev.add_argument("--strict-tests", action="store_true",
                    help="repository tasks: refuse a patch that touches the tests or what runs them (failed "
                         "test_tampering), and grade on the runner's own report where it writes one; the default "
                         "grades as SWE-bench's harness does, and flags such a patch on its row")
    ev.add_argument("--min-time-limit", type=_positive(float), default=EvalPlusSettings.min_time_limit_s,
                    help="HumanEval+/MBPP+ (EvalPlus's option): the floor of an input's time limit, in seconds; an "
                         "input's limit is max(this, --gt-time-limit-factor x the ground truth's time on it), and "
                         "--timeout-s does not apply to these problems")
    ev.add_argument("--gt-time-limit-factor", type=_positive(float), default=EvalPlusSettings.gt_time_limit_factor,
                    help="HumanEval+/MBPP+ (EvalPlus's option): an input's limit as a multiple of the ground truth's time")
    ev.add_argument("--evalplus-timeout-per-task", type=_positive(float), default=EvalPlusSettings.task_timeout_s,
                    help="HumanEval+/MBPP+ (EvalPlus's EVALPLUS_TIMEOUT_PER_TASK): each check (base, plus) gets "
                         "min(this, the sum of its inputs' limits) + 2 s")
    _quiet_args(ev)
    _scoring_args(ev)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="passk", description="Run generated code in hardened containers and score pass@k.",
                formatter_class=_Help)
    p.add_argument("--version", action="version", version=f"passk {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name, text):
        return sub.add_parser(name, help=text, description=text, formatter_class=_Help)

    _evaluate_args(command("evaluate", "run every candidate and score the run"))
    vf = command("verify", "judge a Kattis package's own submissions (or samples with an `expected` verdict) and "
                           "check each gets the verdict its directory promises (as problemtools' verifyproblem does)")
    _evaluate_args(vf, verify=True)
    vf.add_argument("--json", dest="verify_json", action="store_true", help="print the agreement as JSON, not a table")

    sc = command("score", "recompute the score from results.jsonl alone (no Docker)")
    sc.add_argument("results", help="a results.jsonl file or a run directory")
    sc.add_argument("--k", default=",".join(map(str, DEFAULT_K)), help="k values, e.g. 1,10,100")
    sc.add_argument("--format", choices=("table", "json", "csv", "markdown"), default="table",
                    help="table for a terminal; json (score.json's content); csv or markdown for papers")
    sc.add_argument("--exclude-errors", action="store_true",
                    help="score without the candidates whose status is error (recorded in the output)")
    _scoring_args(sc)

    cp = command("compare", "compare runs: pass@k side by side, paired differences, order changes")
    cp.add_argument("runs", nargs="+", help="run directories or results.jsonl files (two or more)")
    cp.add_argument("--k", default=None, help="k values (default: every k up to the smallest n, or a standard list)")
    cp.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    cp.add_argument("--seed", type=int, default=0, help="seed of the paired bootstrap")
    cp.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples over common tasks")

    rp = command("report", "write report.md and report.html into a run directory")
    rp.add_argument("run_dir", help="a run directory (holding results.jsonl)")

    rn = command("run", "run from a YAML config (resumes an existing output directory)")
    rn.add_argument("config", help="YAML run config (see configs/ and docs/cli.md)")
    rn.add_argument("--out", default=None, help="output directory (overrides 'out' in the config)")
    rn.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config value, e.g. --set limits.timeout_s=5 (repeatable)")
    _quiet_args(rn)

    rp2 = command("reproduce", "rerun a run from its manifest and report how far labels agree")
    rp2.add_argument("run_dir", help="the run to reproduce")
    rp2.add_argument("--out", required=True, help="where the rerun goes")
    rp2.add_argument("--force", action="store_true", help="rerun even if the inputs now hash differently")
    rp2.add_argument("--workers", type=_positive(int), default=None, help="workers (default: the run's own)")
    rp2.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    _quiet_args(rp2)

    au = command("audit", "which labels did the limits decide? relaxed reruns, margins, canonical, flakiness")
    au.add_argument("run_dir", help="the run to audit")
    au.add_argument("--factors", default="2,4", help="relaxation factors of the limits, e.g. 2,4")
    au.add_argument("--repeat", type=int, default=0, help="rerun timed-out and sampled candidates N times")
    au.add_argument("--sample", type=int, default=50, help="how many other candidates --repeat samples")
    au.add_argument("--seed", type=int, default=0, help="seed of the --repeat sample")
    au.add_argument("--workers", type=_positive(int), default=None, help="workers (default: the run's own)")
    au.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    _quiet_args(au)

    im = command("images", "manage passk's sandbox images")
    im_sub = im.add_subparsers(dest="images_command", required=True, parser_class=_Parser,
                               help="build: make passk's sandbox image; prune: remove the ones this checkout "
                                    "no longer runs")
    b = im_sub.add_parser("build", help="build passk's image from its container sources", formatter_class=_Help)
    b.add_argument("--base-image", default=default_base_image(), help="base image with python3")
    b.add_argument("--rebuild", action="store_true", help="build even if the image exists")
    b.add_argument("--language", action="append", default=[],
                   help="also build this language's image (any language passk runs, by its name or MultiPL-E's, "
                        "pypy, or all; `passk doctor` lists which are built); repeatable")
    b.add_argument("--jobs", type=_positive(int), default=3, help="language images built side by side")
    _environment_args(b)
    b.add_argument("--rows", action="append", default=[], metavar="FILE",
                   help="also build every repository environment image and instance snapshot these SWE-bench rows "
                        "need (JSON Lines; repeatable), --jobs environments side by side: what agent sandboxes "
                        "(passk-docker) and `passk evaluate` then start from at once")
    b.add_argument("--repos", default=None, metavar="DIR", help="with --rows: the repositories, DIR/<owner>/<name>")
    b.add_argument("--repo-specs", default=None, metavar="FILE", help="with --rows: more environment specifications")
    b.add_argument("--repo-pins", choices=("official", "spec"), default=RepoSettings.pins,
                   help="with --rows: SWE-bench's exported pins where it has them, or the spec's packages resolved")
    pr = im_sub.add_parser("prune", formatter_class=_Help,
                           help="remove passk's images that this checkout no longer runs (built from other sources: "
                                "a sandbox, language or environment image of an earlier passk) and their snapshots")
    pr.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")

    sv = command("serve", "an HTTP service for training loops and evaluation services: passk's /v1/evaluate, "
                          "SandboxFusion's /run_code, /health, /metrics (docs/serve.md)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (any but loopback needs --token)")
    sv.add_argument("--port", type=int, default=8080, help="port to listen on")
    sv.add_argument("--token", default=os.environ.get("PASSK_SERVE_TOKEN"),
                    help="bearer token every request but /health and /openapi.json must carry (env PASSK_SERVE_TOKEN)")
    sv.add_argument("--problems", action="append", default=[], metavar="FILE|DIR",
                    help="preload problems (any format passk reads) so requests can name them by id; repeatable")
    sv.add_argument("--format", dest="problems_format", default=None, help="force the preloaded problems' format")
    sv.add_argument("--workers", type=_positive(int), default=_workers_default(),
                    help="candidates run at once, each worker with its own warm container")
    sv.add_argument("--overflow", type=_nonnegative_int, default=None,
                    help="lanes beyond --workers (containers sharing the workers' CPUs) that a /run_code program "
                         "takes after waiting 1 s for a worker, so that programs which sleep or loop to their "
                         "limit do not make the requests behind them miss their callers' deadlines (default: "
                         "8 per worker, at most what half the machine's memory holds at --memory-mb each; 0: none)")
    sv.add_argument("--runtime", type=runtime_arg, default="runc",
                    help="container runtime: runc, or gVisor as runsc (or a variant registered as runsc-systrap, runsc-ptrace)")
    sv.add_argument("--isolation", choices=ISOLATIONS, default="pooled",
                    help="pooled: warm containers, cleaned between candidates; fresh: a new container each")
    sv.add_argument("--pin-cpus", choices=PIN_CPUS, default="auto",
                    help=PIN_CPUS_HELP)
    sv.add_argument("--executor", choices=EXECUTORS, default="local", help="local: this machine's Docker engine; ray: a Ray cluster")
    sv.add_argument("--ray-address", default=None, help="with --executor ray: the cluster to join")
    sv.add_argument("--python", choices=("auto", "cpython", "pypy"), default="auto", help="the Python that runs io programs")
    sv.add_argument("--ceiling", action="append", default=[], metavar="KEY=VALUE",
                    help="the most a preloaded package, an inline record or a request's limits may state, e.g. "
                         "time_limit_s=120 (over it: refused, HTTP 400; see docs/limits.md)")
    sv.add_argument("--timeout-s", type=_positive(float), default=Limits.timeout_s,
                    help="a candidate's wall-clock limit where its request sets none")
    sv.add_argument("--memory-mb", type=_positive(int), default=1024,
                    help="memory of a candidate where its request sets none, and the most a request may ask for")
    sv.add_argument("--compile-timeout-s", type=_positive(float), default=Limits.compile_timeout_s,
                    help="wall-clock limit of a compile step where the request sets none")
    sv.add_argument("--max-queue", type=_positive(int), default=4096,
                    help="candidates queued or running at once; a request beyond it gets 429 with Retry-After")
    sv.add_argument("--deadline-s", type=_positive(float), default=600.0,
                    help="a request's deadline (a request may ask for less): what has not run by then is `error deadline`")
    sv.add_argument("--max-candidates", type=_positive(int), default=1024, help="candidates in one request")
    sv.add_argument("--max-code-bytes", type=_positive(int), default=1 << 20, help="bytes of one candidate's program")
    sv.add_argument("--max-body-bytes", type=_positive(int), default=64 << 20, help="bytes of one request's body")
    sv.add_argument("--grace-s", type=_positive(float), default=30.0,
                    help="on SIGTERM, how long requests in flight may take to finish before they are cancelled")
    sv.add_argument("--log-level", choices=("critical", "error", "warning", "info", "debug"), default="warning",
                    help="the HTTP server's log level")
    sv.add_argument("--base-image", default=default_base_image(), help="base image with python3 for passk's image")
    sv.add_argument("--repos", default=None, metavar="DIR",
                    help="repository tasks (SWE-bench rows, preloaded or inline): the repositories, DIR/<owner>/<name>")
    sv.add_argument("--sessions", type=_nonnegative_int, default=None,
                    help="agent sessions (/v1/sessions: an instance's sandbox or a plain environment's, command by command) open at once; "
                         "beyond it, 429 with Retry-After (default: 8 where repository rows are preloaded, else "
                         "none; docs/agents.md)")
    sv.add_argument("--session-idle-s", type=_positive(float), default=600.0,
                    help="a session with no command begun or ended for this long is closed")
    sv.add_argument("--repo-specs", default=None, metavar="FILE", help="repository tasks: more environment specifications")
    sv.add_argument("--repo-timeout-s", type=_positive(float), default=RepoSettings.timeout_s,
                    help="repository tasks: the wall clock of one candidate's whole evaluation")
    sv.add_argument("--repo-pins", choices=("official", "spec"), default=RepoSettings.pins,
                    help="repository tasks: SWE-bench's exported environment where it has one, or the spec's packages")
    sv.add_argument("--no-strict-tests", dest="strict_tests", action="store_false",
                    help="repository tasks: grade as SWE-bench's harness does, also a patch that touches the tests "
                         "(the service refuses one by default: failed test_tampering)")

    dr = command("doctor", "what this machine has for running passk, what is missing, how to fix it")
    dr.add_argument("--base-image", default=default_base_image(), help="base image to look for")
    return p


def _environment_args(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--environment", default=None, metavar="NAME|FILE|none",
                       help="the Python libraries candidates get: a shipped environment (bigcodebench, tabular), a requirements "
                         "file of exact pins, or none (default: bigcodebench for BigCodeBench tasks whose libs go "
                         "beyond the standard library, else none); built offline into an image once per lock")
    group.add_argument("--requirements", default=None, metavar="FILE",
                       help="the same as --environment FILE: a requirements file of exact pins (name==version)")


def _environment_of(args) -> str | None:
    return args.requirements or args.environment


_SIGNALS = {"seen": 0}


def _interrupt(signum, frame):
    """The first stop lets the candidates running finish (a bounded grace), the second stops them now;
    later ones are noted and do not interrupt the removal of the run's containers."""
    _SIGNALS["seen"] += 1
    if _SIGNALS["seen"] <= 2:
        raise KeyboardInterrupt
    print("passk: stopping; removing the run's containers", file=sys.stderr, flush=True)


def _stop_cleanly_on_signals() -> None:
    """Ctrl-C and SIGTERM both stop cleanly: containers removed, finished rows kept."""
    _SIGNALS["seen"] = 0
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)


def _progress(args) -> str:
    return "quiet" if args.quiet else "auto"


def cmd_run(args) -> int:
    from harness.inputs.config import load_config
    return _run_config(load_config(args.config, args.set, {"out": args.out}), progress=_progress(args))


def cmd_reproduce(args) -> int:
    from harness.run.reproduce import format_reproduction, reproduce
    _stop_cleanly_on_signals()
    result = reproduce(args.run_dir, args.out, force=args.force, progress=_progress(args), workers=args.workers)
    print(json.dumps(result, indent=2) if args.format == "json" else format_reproduction(result))
    return 0 if not result["changed"] else 1


def cmd_audit(args) -> int:
    from harness.run.audit import audit, format_audit
    try:
        factors = tuple(float(f) for f in args.factors.split(","))
    except ValueError:
        raise InputError(f"--factors: expected numbers separated by commas, got {args.factors!r}") from None
    if any(f <= 0 for f in factors) or args.repeat < 0 or args.sample < 0:
        raise InputError("--factors must be > 0; --repeat and --sample must be ≥ 0")
    _stop_cleanly_on_signals()
    result = audit(args.run_dir, factors, repeat=args.repeat, seed=args.seed, sample=args.sample,
                   progress=_progress(args), workers=args.workers)
    print(json.dumps(result, indent=2) if args.format == "json" else format_audit(result))
    sys.stdout.flush()
    print(f"wrote {Path(args.run_dir) / 'audit.json'} and the report's audit section", file=sys.stderr)
    return 0


def _samples_of(args) -> str:
    """--samples, or a Kattis package's own submissions when --problems is a package and --samples is left out."""
    if args.samples is not None:
        return args.samples
    from harness.inputs.formats import kattis
    if Path(args.problems).is_dir() and kattis.packages(Path(args.problems)):
        return args.problems
    raise InputError("passk evaluate: --samples is required (only a Kattis package brings its own submissions)")


def _evaluate_config(args, samples: str) -> RunConfig:
    from harness.inputs.samples import SampleOptions
    return RunConfig(
        problems=args.problems, samples=samples, out=args.out, k=parse_k_list(args.k),
        problems_format=args.problems_format, channel=args.channel,
        sample_options=SampleOptions(stop_tokens=args.stop_tokens, extract_code=args.extract_code),
        scoring=_scoring_options(args),
        limits=Limits(timeout_s=args.timeout_s, memory_mb=args.memory_mb, cpus=args.cpus, pids=args.pids,
                      output_bytes=args.output_bytes, compile_timeout_s=args.compile_timeout_s,
                      compile_memory_mb=args.compile_memory_mb),
        sandbox=SandboxSettings(runtime=args.runtime, isolation=args.isolation, workers=args.workers,
                                base_image=args.base_image, transport=args.transport, language=args.language,
                                executor=args.executor, ray_address=args.ray_address,
                                environment=_environment_of(args), python=args.python, pin_cpus=args.pin_cpus),
        evalplus=EvalPlusSettings(min_time_limit_s=args.min_time_limit, gt_time_limit_factor=args.gt_time_limit_factor,
                                  task_timeout_s=args.evalplus_timeout_per_task),
        bigcodebench=BigCodeBenchSettings(calibrated=not args.bigcodebench_original,
                                          timeout_s=args.bigcodebench_timeout_s),
        check_ground_truth=args.check_ground_truth,
        ceilings=Ceilings.parse(args.ceiling),
        repos=RepoSettings(dir=args.repos, specs=args.repo_specs, timeout_s=args.repo_timeout_s,
                           memory_mb=args.repo_memory_mb, strict_tests=args.strict_tests, pins=args.repo_pins),
        project_timeout_s=args.project_timeout_s)


def cmd_evaluate(args) -> int:
    cfg = _evaluate_config(args, _samples_of(args))
    return _run_config(cfg, progress=_progress(args))


def cmd_verify(args) -> int:
    """A Kattis package's (or a contest directory's) own submissions, judged, against their directories."""
    from harness.inputs.formats import kattis
    from harness.records.results import latest_rows, read_rows
    from harness.scoring.verify import check, format_check
    if args.samples is None and not (Path(args.problems).is_dir() and kattis.packages(Path(args.problems))):
        raise InputError(f"{args.problems}: not a Kattis problem package (a problem.yaml beside data/) or a "
                         "directory of them; give --samples whose rows say what they expect (`expected`)")
    code = _run_config(_evaluate_config(args, _samples_of(args)), progress=_progress(args),
                       out=sys.stderr if args.verify_json else sys.stdout)
    if code not in (0, 1):
        return code
    entries = check(latest_rows(read_rows(Path(args.out) / RESULTS_FILE)).values())
    if args.verify_json:
        print(json.dumps(entries, indent=1))
    else:
        print(format_check(entries))
    return 0 if code == 0 and all(e["agrees"] is not False for e in entries) else 1


def _run_config(cfg, progress: bool, out=None) -> int:
    """Run `cfg` and print its summary on `out` (stdout; verify --json prints it on stderr, its JSON alone on
    stdout)."""
    out = out or sys.stdout
    from harness.scoring.report import format_summary
    from harness.run.runner import evaluate

    _stop_cleanly_on_signals()
    try:
        outcome = evaluate(cfg, progress=progress)
    except KeyboardInterrupt:
        print(f"passk: stopped; results so far are kept in {Path(cfg.out) / RESULTS_FILE}. "
              "Run the same command again to resume.", file=sys.stderr)
        return 130
    print(format_summary(outcome.score), file=out)
    if outcome.ignored:
        from harness.core import text
        shown = ", ".join(outcome.ignored[:10]) + (f" and {len(outcome.ignored) - 10} more" if len(outcome.ignored) > 10 else "")
        print(text.terminal(f"ignored in the samples directory (not samples): {len(outcome.ignored)}: {shown}", 2000), file=out)
    print(f"ran {outcome.ran} candidates, reused {outcome.reused} from an earlier run; results in {outcome.out_dir}", file=out)
    if outcome.errors_remaining:
        from harness.scoring.score import errors_text
        print(f"passk: {errors_text(outcome.errors_remaining, outcome.score['errors_permanent'])}", file=sys.stderr)
        return 1
    return 0


def cmd_score(args) -> int:
    from harness.scoring.report import format_score, format_summary
    from harness.records.results import read_rows
    from harness.scoring.score import errors_text, score_rows

    path = Path(args.results)
    run_dir = path if path.is_dir() else path.parent
    results = path / RESULTS_FILE if path.is_dir() else path
    problem_ids = None
    manifest = run_dir / MANIFEST_FILE
    if manifest.exists():
        try:
            m = json.loads(manifest.read_text(encoding="utf-8"))
            from harness.inputs.problems import load_problems
            problem_ids = list(load_problems(m["inputs"]["problems"]["path"], m.get("config", {}).get("problems_format")))
        except (ValueError, KeyError, InputError):
            problem_ids = None
    score = score_rows(read_rows(results), problem_ids=problem_ids,
                       options=_scoring_options(args, exclude_errors=args.exclude_errors))
    if args.format == "json":
        print(json.dumps(score, indent=2, ensure_ascii=False))
    elif args.format == "table":
        print(format_summary(score))
    else:
        print(format_score(score, args.format))
    if score["errors_remaining"]:
        print(f"passk: pass@k is not reported: {errors_text(score['errors_remaining'], score['errors_permanent'])}",
              file=sys.stderr)
        return 1
    return 0


def _results_path(text: str) -> Path:
    path = Path(text)
    return path / RESULTS_FILE if path.is_dir() else path


def cmd_compare(args) -> int:
    from harness.scoring.compare import compare_runs, format_comparison
    from harness.records.results import read_rows

    if len(args.runs) < 2:
        raise InputError("compare needs at least two runs")
    runs = {}
    for text in args.runs:
        name = text.rstrip("/")
        runs[name] = read_rows(_results_path(text))
    result = compare_runs(runs, ks=parse_k_list(args.k) if args.k else None, seed=args.seed, resamples=args.bootstrap)
    print(json.dumps(result, indent=2) if args.format == "json" else format_comparison(result))
    return 0


def cmd_report(args) -> int:
    from harness.scoring.report import write_report

    run_dir = Path(args.run_dir)
    if not (run_dir / RESULTS_FILE).exists():
        raise InputError(f"{run_dir}: no {RESULTS_FILE} here")
    md, page = write_report(run_dir)
    print(f"wrote {md} and {page}")
    return 0


def cmd_images(args) -> int:
    from harness.execution.sandbox.docker import connect
    if args.images_command == "prune":
        return _images_prune(connect(), args.dry_run)
    from harness.execution.sandbox.images import ensure_image

    from harness.inputs.languages import IMAGE_ONLY, LANGUAGES, canonical
    from harness.inputs.judge import IO_LANGUAGES, image_of
    from harness.execution.sandbox.images import ensure_language_image

    from harness.environments import library as environments
    from harness.inputs import libraries
    env = libraries.load(_environment_of(args))   # a bad list exits 2 before anything is built
    client = connect()
    facts = ensure_image(client, args.base_image, rebuild=args.rebuild)
    print(f"{facts['image']} {facts['image_id']}")
    wanted = []
    for name in args.language:
        if name == "all":
            wanted += [*LANGUAGES, *IMAGE_ONLY]
        else:
            wanted.append(image_of(name) if name in IO_LANGUAGES else canonical(name))
    names = list(dict.fromkeys(w for w in wanted if w != "python"))

    def one(name):   # a client of its own per build: the builds run side by side
        return ensure_language_image(connect(), facts, name, rebuild=args.rebuild)

    # side by side: a build waits on Debian's mirror about as long as on the CPU (22 images: 6.3 min one at a
    # time on 2 cores); every build is finished, and its image printed, before the first failure is raised
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(names) or 1))) as pool:
        futures = [pool.submit(one, name) for name in names]
        failures = []
        for future in futures:
            try:
                lang = future.result()
            except Exception as e:
                failures.append(e)
                continue
            print(f"{lang['image']} {lang['image_id']}", flush=True)
    for e in failures[1:]:   # the first is raised; none is left unsaid
        print(f"passk: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
    if failures:
        raise failures[0]
    if args.rows:
        status = _images_rows(args)
        if status:
            return status
    if env is not None:
        import time
        t0 = time.monotonic()
        built = environments.ensure_image(client, facts, env, rebuild=args.rebuild)
        e = built["environment"]
        size = client.images.get(built["image_id"]).attrs.get("Size", 0)
        print(f"{built['image']} {built['image_id']}")
        print(f"environment {e['name']}: {len(e['lock'])} packages for Python {e['python']}, lock {e['sha256'][:16]}, "
              f"image {size / 1e6:.0f} MB, {time.monotonic() - t0:.0f} s")
        for d in e["deviations"]:
            print(f"  deviation: {d}")
    return 0


def _images_rows(args) -> int:
    """`images build --rows`: every environment image and snapshot the rows need; each instance printed when
    ready, each failure listed (exit 1 when any)."""
    import time
    from harness.sessions.sandbox import prepare_rows
    from harness.core import text
    from harness.core.jsonl import iter_jsonl
    if not args.repos:
        raise InputError("--rows needs --repos DIR (the repositories, DIR/<owner>/<name>)")
    rows = [(f"{path}:{lineno}", rec) for path in args.rows for lineno, rec in iter_jsonl(Path(path), "rows file")]
    t0 = time.monotonic()
    import threading
    lock = threading.Lock()

    def done(p):
        with lock:
            print(f"{text.clean(p.instance_id, 200)} {p.image} snapshot {p.snapshot.name[:16]}", flush=True)
    failures = prepare_rows(rows, args.repos, args.repo_specs, args.repo_pins, jobs=args.jobs, done=done)
    for iid, why in failures:
        print(f"passk: {text.clean(iid, 200)}: {text.clean(why, 500)}", file=sys.stderr)
    print(f"{len(rows) - len(failures)} of {len(rows)} instances ready in {(time.monotonic() - t0) / 60:.1f} min",
          file=sys.stderr)
    return 1 if failures else 0


def _images_prune(client, dry_run: bool) -> int:
    from harness.execution.sandbox import prune
    superseded, kept = prune.plan(client)
    done = superseded if dry_run else prune.remove(client, superseded, log=lambda m: print(f"passk: {m}", file=sys.stderr))
    for image in done:
        print(f"{'would remove' if dry_run else 'removed'} {prune.name(image)} ({image['size'] / 1e6:.0f} MB, "
              f"{image['why']})")
    print(f"{len(done)} image(s) {'to remove' if dry_run else 'removed'}, {len(kept)} kept "
          "(sizes count shared layers in each)")
    return 0


def cmd_serve(args) -> int:
    from harness.core.extras import require
    require("serve")
    if args.executor == "ray":
        require("ray")
    from harness.execution.jobs import run_limits
    from harness.inputs.problems import load_problems
    from harness.serve import serve
    from harness.serve.service import Service, ServiceOptions, default_overflow
    problems: dict = {}
    for path in args.problems:
        for tid, problem in load_problems(path, args.problems_format, ceilings=Ceilings.parse(args.ceiling)).items():
            if tid in problems:
                raise InputError(f"{path}: task {tid!r} is preloaded twice (from two --problems)")
            problems[tid] = problem
    limits = run_limits(Limits(timeout_s=args.timeout_s, memory_mb=args.memory_mb,
                               compile_timeout_s=args.compile_timeout_s,
                               compile_memory_mb=max(Limits.compile_memory_mb, args.memory_mb)), problems.values())
    settings = SandboxSettings(runtime=args.runtime, isolation=args.isolation, workers=args.workers,
                               base_image=args.base_image, executor=args.executor, ray_address=args.ray_address,
                               python=args.python, pin_cpus=args.pin_cpus,
                               overflow=default_overflow(args.workers, limits.memory_mb, args.runtime, args.overflow))
    repos = RepoSettings(dir=args.repos, specs=args.repo_specs, timeout_s=args.repo_timeout_s,
                         strict_tests=args.strict_tests, pins=args.repo_pins)
    if any(p.channel == "repo" for p in problems.values()):   # every repository and commit checked at start
        from harness.inputs.repos.tasks import prepare
        problems = prepare(problems, repos, limits)
    options = ServiceOptions(max_queue=args.max_queue, deadline_s=args.deadline_s, max_candidates=args.max_candidates,
                             max_code_bytes=args.max_code_bytes, max_body_bytes=args.max_body_bytes,
                             max_memory_mb=limits.memory_mb, ceilings=Ceilings.parse(args.ceiling), repos=repos)
    service = Service(limits, settings, options, problems)
    has_rows = any(p.channel == "repo" for p in problems.values())
    capacity = args.sessions if args.sessions is not None else (8 if has_rows else 0)
    if capacity:   # without rows, only plain environments' sessions ({"language": ...})
        from harness.serve.sessions import SessionPool
        service.sessions = SessionPool(service, capacity, args.session_idle_s)
    serve(args.host, args.port, service, token=args.token, log_level=args.log_level, grace_s=args.grace_s)
    return 0


def cmd_doctor(args) -> int:
    from harness.execution.doctor import checks, format_checks, healthy

    from harness.sessions.sandbox import doctor_checks
    found = checks(args.base_image) + doctor_checks()
    print(format_checks(found))
    return 0 if healthy(found) else 1


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        handler = {"evaluate": cmd_evaluate, "verify": cmd_verify, "run": cmd_run, "reproduce": cmd_reproduce, "audit": cmd_audit,
                   "score": cmd_score, "compare": cmd_compare, "report": cmd_report,
                   "images": cmd_images, "doctor": cmd_doctor, "serve": cmd_serve}[args.command]
        return handler(args)
    except PasskError as e:
        print(f"passk: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("passk: interrupted; containers removed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
