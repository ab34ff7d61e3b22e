"""Problems, whatever file they came from: what a candidate's program is tested against, and how.
Problems are data; nothing here executes them (test code is compiled, not run, so that a test that
cannot run is refused before any candidate is). Each file format is read by a module of
harness/formats/; load_problems picks it from the file's fields, or by name."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .constants import CHANNELS, COMPARE_RULES, RUNNERS
from .errors import InputError


@dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str                      # the code a completion follows ("" where the prompt is text)
    test: str                        # test code (proxy and in_process channels; "" for io)
    entry_point: str | None          # the function the tests check (None: the tests name it themselves)
    canonical_solution: str | None = None   # a completion (HumanEval) or a whole program, per `solution_is`
    channel: str = "proxy"           # who decides the verdict (box/protocol.py CHANNELS)
    runner: str = "check"            # how the tests start (RUNNERS)
    tests: tuple = ()                # io: ((stdin, expected stdout), ...)
    compare: str = "strict"          # io: the comparison rule (COMPARE_RULES)
    header: str = ""                 # code put before every program (a benchmark's own import block)
    main: bool = False               # in_process script: run as __main__ (MultiPL-E runs programs as scripts)
    format: str = "humaneval"
    language: str = "python"
    stop_tokens: tuple = ()          # MultiPL-E: where a completion is cut when stop tokens are applied
    solution_is: str = "completion"  # what canonical_solution is: "completion" (after the prompt) or "program"
    aliases: tuple = ()              # other ids samples may use for this task (MBPP's plain numbers)
    notes: dict = field(default_factory=dict, compare=False)
    differential: object = field(default=None, compare=False, repr=False)   # EvalPlus: formats.evalplus.DifferentialTests

    def __post_init__(self):
        if self.channel not in CHANNELS or self.runner not in RUNNERS or self.compare not in COMPARE_RULES:
            raise InputError(f"{self.task_id}: channel {self.channel!r}, runner {self.runner!r} or rule "
                             f"{self.compare!r} is not one passk knows")

    def program_text(self, program: str) -> str:
        """What runs: the benchmark's header, then the candidate's program (for runner apps_stdin, turned
        into APPS's `def code():` as APPS's grader turns it)."""
        if self.runner == "apps_stdin":
            from .formats.competitive import apps_stdin_program
            program = apps_stdin_program(program)
        return self.header + program

    @property
    def canonical_program(self) -> str | None:
        if self.canonical_solution is None:
            return None
        return self.canonical_solution if self.solution_is == "program" else self.prompt + self.canonical_solution


def check_test_compiles(path, where: str, task_id: str, test: str) -> None:
    """Refuse a problem whose test code does not compile (exit 2 naming the task)."""
    try:
        compile(test, f"{task_id} test", "exec")
    except (SyntaxError, ValueError) as e:
        line = f" (line {e.lineno})" if getattr(e, "lineno", None) else ""
        raise InputError(f"{where}: the test code of {task_id!r} does not compile{line}: {getattr(e, 'msg', e)}") from None


def load_problems(path: str | Path, fmt: str | None = None, channel: str | None = None) -> dict[str, Problem]:
    """Problems in file order, keyed by task id. `fmt` forces a format (else it is read from the fields);
    `channel` forces the verdict channel of every problem whose tests can run there (proxy or in_process:
    an io problem stays io, another language's stays in_process, an EvalPlus one proxy)."""
    from dataclasses import replace

    from .formats import load
    problems = load(Path(path), fmt)
    if channel and channel != "auto":
        if channel not in ("proxy", "in_process"):
            raise InputError(f"channel must be auto, proxy or in_process, got {channel!r}")
        # an io problem stays io, another language's in_process, EvalPlus's differential tests proxy (their
        # comparison must run where the candidate cannot reach it)
        problems = {t: (replace(p, channel=channel) if p.channel != "io" and p.language == "python"
                        and p.runner not in ("evalplus", "bigcodebench") else p)
                    for t, p in problems.items()}
    return problems


def problems_language(problems: dict) -> str:
    """The one language of a problem set (a run has one image): refused (exit 2) when they mix."""
    found = {p.language for p in problems.values()}
    if len(found) > 1:
        raise InputError("the problems are in several languages (" + ", ".join(sorted(found)) + "): one run "
                         "runs one language; split the file")
    return found.pop() if found else "python"


def _first_record(path: Path) -> dict | None:
    """A problem file's first record, read before the whole file is (a large JSON Lines file is read once,
    by the full load); None where it cannot be read (the full load says what is wrong with it)."""
    from .formats import read_records
    try:
        name = path.name[:-3] if path.name.endswith(".gz") else path.name
        if name.endswith(".json"):
            records = read_records(path)
            return records[0][1] if records else None
        from .jsonl import iter_jsonl
        first = next(iter_jsonl(path, "problem file"), None)
        return first[1] if first else None
    except InputError:
        return None


def peek_format(path, fmt: str | None = None) -> str | None:
    """The format of a problem file, from its first record (or as forced); None where it cannot be told
    (the full load says why)."""
    from .formats import formats
    path = Path(path)
    if fmt is not None or path.is_dir():
        return fmt or "native"
    first = _first_record(path)
    if first is None:
        return None
    return next((f.name for f in formats().values() if f.detect(first)), None)


def peek_language(path, fmt: str | None = None) -> str:
    """The language of a problem file's first record, read before the whole file is (so that the language's
    image can start while the inputs load); "python" when the file does not say."""
    from . import languages
    path = Path(path)
    if path.is_dir() or fmt not in (None, "multipl-e"):
        return "python"
    first = _first_record(path)
    value = first.get("language") if first else None
    try:
        return languages.canonical(value) if isinstance(value, str) else "python"
    except InputError:
        return "python"
