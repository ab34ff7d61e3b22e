"""What a problem is: the code a candidate's program follows, the tests it is checked against, the channel
that decides the verdict. Problems are data; nothing here executes them (test code is compiled, not run,
so that a test that cannot run is refused before any candidate is)."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.core.constants import CHANNELS, COMPARE_RULES, RUNNERS
from harness.core.errors import InputError


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
    judge: object = field(default=None, compare=False, repr=False)   # a judged io problem: inputs.judge.JudgeSpec
    repo: object = field(default=None, compare=False, repr=False)    # a repository task: inputs.repos.rows.RepoTask
    project: object = field(default=None, compare=False, repr=False)  # a project (an exercise): inputs.projects.ProjectTask

    def __post_init__(self):
        if self.channel not in CHANNELS or self.runner not in RUNNERS or self.compare not in COMPARE_RULES:
            raise InputError(f"{self.task_id}: channel {self.channel!r}, runner {self.runner!r} or rule "
                             f"{self.compare!r} is not one passk knows")
        if self.judge is not None and self.channel != "io":
            raise InputError(f"{self.task_id}: a judged problem is an io problem")
        if (self.repo is not None) != (self.channel == "repo"):
            raise InputError(f"{self.task_id}: a repository task, and only one, is judged on the repo channel")
        if (self.project is not None) != (self.channel == "project"):
            raise InputError(f"{self.task_id}: a project, and only one, is judged on the project channel")

    def program_text(self, program: str, language: str = "python") -> str:
        """What runs: the benchmark's header, then the candidate's program (for runner apps_stdin, turned
        into APPS's `def code():` as APPS's grader turns it). The header is Python: an io program in another
        language runs as it is, and under PyPy a stdin program runs as a plain script (APPS's rewriting needs
        the grader's own runner, which is CPython's)."""
        if language not in ("python", "pypy"):
            return program
        if self.runner == "apps_stdin" and language == "python":
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


def apps_stdin_program(program: str) -> str:
    """A stdin program as APPS's grader rewrites it before running it in its own process (eval/
    testing_util.py, run_test): each line that does not start with `from ` or `import ` gets a tab in
    front; `stdin = sys.stdin`, `stdout = sys.stdout` and `def code():` go before the first such line, and
    import lines after it get a tab too. So the program's work is the body of code(), its top-level
    imports before the first other line stay at module level, and a line inside a multi-line string gets
    a tab like any other, as there."""
    out, started = [], False
    for line in program.split("\n"):
        is_import = line.startswith("from ") or line.startswith("import ")
        if is_import:
            out.append(("\t" if started else "") + line + "\n")
            continue
        if not started:
            out.append("stdin = sys.stdin\nstdout = sys.stdout\ndef code():\n")
            started = True
        out.append("\t" + line + "\n")
    return "".join(out)
