"""Hostile problem packages and rows, each with what passk must do with it, written before it ran: a
package, a row or a file it names is untrusted data (harness/inputs/untrusted.py). Used by
test_untrusted.py and by scripts/attacks/package_attacks.py (which prints the table for the docs).

Every attack is built from a small honest package (or row file) with one thing made hostile. The outcome
is either `refused` (exit 2, one line naming the file, the key or the path, and nothing of the host in it)
or `loads` (an honest shape that must keep working, such as a link inside the package)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

# What must never reach a message: a line of the host's files or environment
HOST_MARKERS = ("root:", "PATH=", "HOME=", "daemon:")

HONEST_YAML = "name: Add\nsource: passk\nlicense: cc0\nlimits:\n  memory: 256\n"
ADD_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
CHECKER_PY = "import sys\nsys.exit(42)\n"


def honest_package(root: Path, yaml_text: str = HONEST_YAML, timelimit: str | None = "1\n") -> Path:
    """A legacy package: read `a b`, print a + b; a sample, two secret tests, one accepted submission."""
    pkg = root / "add"
    for d in ("data/sample", "data/secret", "submissions/accepted"):
        (pkg / d).mkdir(parents=True, exist_ok=True)
    (pkg / "problem.yaml").write_text(yaml_text)
    if timelimit is not None:
        (pkg / ".timelimit").write_text(timelimit)
    for name, (i, o) in {"sample/1": ("1 2\n", "3\n"), "secret/01": ("20 22\n", "42\n"),
                         "secret/02": ("5 5\n", "10\n")}.items():
        (pkg / "data" / f"{name}.in").write_text(i)
        (pkg / "data" / f"{name}.ans").write_text(o)
    (pkg / "submissions/accepted/add.py").write_text(ADD_PY)
    return pkg


def _relink(path: Path, target: str) -> None:
    path.unlink(missing_ok=True)
    os.symlink(target, path)


def _with(edit: Callable[[Path], None], yaml_text: str = HONEST_YAML, timelimit: str | None = "1\n"):
    def build(root: Path) -> Path:
        pkg = honest_package(root, yaml_text, timelimit)
        edit(pkg)
        return pkg
    return build


def _yaml(text: str, timelimit: str | None = "1\n"):
    return _with(lambda pkg: None, text, timelimit)


def _custom_validator(extra: Callable[[Path], None]):
    def edit(pkg: Path) -> None:
        v = pkg / "output_validators" / "v"
        v.mkdir(parents=True)
        (v / "v.py").write_text(CHECKER_PY)
        extra(v)
    return _with(edit, HONEST_YAML + "validation: custom\n")


def _rows(row: dict):
    def build(root: Path) -> Path:
        path = root / "rows.jsonl"
        path.write_text(json.dumps(row) + "\n")
        return path
    return build


def _deep(pkg: Path) -> None:
    d = pkg / "data" / "secret"
    for _ in range(1100):   # one level at a time (os.makedirs recurses once per level)
        d = d / "g"
        d.mkdir()
    (d / "1.in").write_text("1 1\n")
    (d / "1.ans").write_text("2\n")


def _fifo(pkg: Path) -> None:
    (pkg / "data/secret/01.in").unlink()
    os.mkfifo(pkg / "data/secret/01.in")


def _inner_link(pkg: Path) -> None:
    # problemtools' own examples link a test to another file of the package: that is fine
    (pkg / "data/secret/03.in").symlink_to("02.in")
    (pkg / "data/secret/03.ans").symlink_to("../secret/02.ans")


def _dir_out(pkg: Path) -> None:
    os.symlink("/etc", pkg / "data" / "secret" / "etc")


def _include_out(pkg: Path) -> None:
    (pkg / "include" / "python").mkdir(parents=True)
    os.symlink("/etc/passwd", pkg / "include" / "python" / "helper.py")


def _graders(pkg: Path) -> None:
    (pkg / "graders").mkdir()
    (pkg / "graders" / "grader.py").write_text("print('AC 1')\n")


def _submission_out(pkg: Path) -> None:
    os.symlink("/etc/shadow", pkg / "submissions" / "accepted" / "shadow.py")


def _contest(target: str, give: str):
    """A contest directory whose package's validator header is a link (to `target`, relative to the
    validator's directory); `give` "contest" or "package": what --problems names."""
    def build(root: Path) -> Path:
        contest = root / "contest"
        (contest / "shared").mkdir(parents=True)
        (contest / "shared" / "validation.h").write_text("// shared by the contest's validators\n")
        pkg = honest_package(contest, HONEST_YAML + "validation: custom\n")
        v = pkg / "output_validators" / "v"
        v.mkdir(parents=True)
        (v / "v.py").write_text(CHECKER_PY)
        os.symlink(target, v / "validation.h")
        return contest if give == "contest" else pkg
    return build


BOMB = ('a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
        'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n'
        'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n')
CF_ROW = {"id": "1A", "time_limit": 1.0, "memory_limit": 256, "official_tests": [{"input": "1 2\n", "output": "3\n"}]}
CCPLUS_ROW = {"id": "cc1", "time_limit": 1000, "memory_limit": 256, "checker": "",
              "test_cases": [{"input": "1 2\n", "output": "3\n"}]}


@dataclass(frozen=True)
class PackageAttack:
    name: str
    build: Callable[[Path], Path]     # builds the hostile input under a directory, returns what --problems names
    outcome: str                      # "refused" or "loads"
    says: tuple = ()                  # fragments the refusal's one line must hold (the file, the key, the why)


PACKAGE_ATTACKS = [
    # links and special files: only regular files that resolve inside the package are read
    PackageAttack("an answer linked to /etc/shadow", _with(lambda p: _relink(p / "data/secret/01.ans", "/etc/shadow")),
                  "refused", ("data/secret/01.ans", "leads outside the package")),
    PackageAttack("an input linked to /proc/self/environ",
                  _with(lambda p: _relink(p / "data/secret/01.in", "/proc/self/environ")),
                  "refused", ("data/secret/01.in", "/proc")),
    PackageAttack("an input linked to /dev/zero", _with(lambda p: _relink(p / "data/secret/01.in", "/dev/zero")),
                  "refused", ("data/secret/01.in", "/dev")),
    PackageAttack("an input that is a FIFO", _with(_fifo), "refused", ("data/secret/01.in", "FIFO")),
    PackageAttack("a test directory linked out of the package (to /etc)", _with(_dir_out),
                  "refused", ("data/secret/etc", "leads outside the package")),
    PackageAttack("a validator's header linked to /proc/self/environ",
                  _custom_validator(lambda v: os.symlink("/proc/self/environ", v / "validate.h")),
                  "refused", ("output_validators/v/validate.h", "/proc")),
    PackageAttack("a validator's source linked to /etc/passwd",
                  _custom_validator(lambda v: _relink(v / "v.py", "/etc/passwd")),
                  "refused", ("output_validators/v/v.py", "leads outside the package")),
    PackageAttack("an include/ file linked to /etc/passwd", _with(_include_out),
                  "refused", ("include/python/helper.py", "leads outside the package")),
    PackageAttack("a submission linked to /etc/shadow", _with(_submission_out),
                  "refused", ("submissions/accepted/shadow.py", "leads outside the package")),
    PackageAttack("problem.yaml linked to /etc/passwd", _with(lambda p: _relink(p / "problem.yaml", "/etc/passwd")),
                  "refused", ("problem.yaml", "leads outside the package")),
    PackageAttack("tests linked to other files of the package (honest)", _with(_inner_link), "loads"),
    PackageAttack("a validator's header linked to the contest's shared one, the contest given (honest)",
                  _contest("../../../shared/validation.h", "contest"), "loads"),
    PackageAttack("a validator's header linked to the contest's shared one, the package given alone",
                  _contest("../../../shared/validation.h", "package"), "refused",
                  ("output_validators/v/validation.h", "leads outside the package")),
    PackageAttack("a validator's header linked out of the contest directory, the contest given",
                  _contest("../../../../../../../../../etc/passwd", "contest"), "refused",
                  ("output_validators/v/validation.h", "leads outside the contest directory")),
    # absurd limits, in every place a limit is stated
    PackageAttack(".timelimit of 1e9", _yaml(HONEST_YAML, "1e9\n"), "refused", (".timelimit", "1e9", "ceiling")),
    PackageAttack(".timelimit of nan", _yaml(HONEST_YAML, "nan\n"), "refused", (".timelimit", "nan")),
    PackageAttack(".timelimit of -1", _yaml(HONEST_YAML, "-1\n"), "refused", (".timelimit", "positive")),
    PackageAttack(".timelimit that is not a number", _yaml(HONEST_YAML, "soon\n"), "refused", (".timelimit", "not a number")),
    PackageAttack("limits.time_limit of 1e9 (2023-07)",
                  _yaml("problem_format_version: 2023-07\nname: Add\nlimits:\n  time_limit: 1e9\n", None),
                  "refused", ("problem.yaml", "limits.time_limit", "ceiling")),
    PackageAttack("limits.time_multiplier of 1e9", _yaml(HONEST_YAML + "  time_multiplier: 1e9\n", None),
                  "refused", ("problem.yaml", "limits.time_multiplier", "ceiling")),
    PackageAttack("limits.time_multipliers.ac_to_time_limit of 1e9 (2023-07)",
                  _yaml("problem_format_version: 2023-07\nname: Add\nlimits:\n  time_multipliers:\n"
                        "    ac_to_time_limit: 1e9\n", None),
                  "refused", ("problem.yaml", "ac_to_time_limit", "ceiling")),
    PackageAttack("limits.validation_time of 1e9", _yaml(HONEST_YAML + "  validation_time: 1e9\n"),
                  "refused", ("problem.yaml", "limits.validation_time", "ceiling")),
    PackageAttack("limits.memory of 10^12 MiB", _yaml(HONEST_YAML.replace("256", "1000000000000")),
                  "refused", ("problem.yaml", "limits.memory", "ceiling")),
    PackageAttack("limits.output of 10^12 MiB", _yaml(HONEST_YAML + "  output: 1000000000000\n"),
                  "refused", ("problem.yaml", "limits.output", "ceiling")),
    PackageAttack("limits.validation_memory of 10^12 MiB", _yaml(HONEST_YAML + "  validation_memory: 1000000000000\n"),
                  "refused", ("problem.yaml", "limits.validation_memory", "ceiling")),
    PackageAttack("a Codeforces row with a time_limit of 1e9", _rows({**CF_ROW, "time_limit": 1e9}),
                  "refused", ("rows.jsonl:1", "time_limit", "ceiling")),
    PackageAttack("a Codeforces row with a memory_limit of 10^12", _rows({**CF_ROW, "memory_limit": 10 ** 12}),
                  "refused", ("rows.jsonl:1", "memory_limit", "ceiling")),
    PackageAttack("a Code-Contests-Plus row with a time_limit of 10^12 ms", _rows({**CCPLUS_ROW, "time_limit": 10 ** 12}),
                  "refused", ("rows.jsonl:1", "time_limit", "ceiling")),
    PackageAttack("a Codeforces row with a time_limit of NaN", _rows({**CF_ROW, "time_limit": "NaN"}),
                  "refused", ("rows.jsonl:1", "time_limit")),
    # malformed values: one line naming the file and the key, never a traceback
    PackageAttack("a list where limits.memory belongs", _yaml(HONEST_YAML.replace("256", "[1, 2]")),
                  "refused", ("problem.yaml", "limits.memory", "not a number")),
    PackageAttack("a list where limits is a mapping", _yaml("name: Add\nlimits: [1, 2]\n"),
                  "refused", ("problem.yaml", "limits", "mapping")),
    PackageAttack("a list where a testdata.yaml score belongs",
                  _with(lambda p: (p / "data/secret/testdata.yaml").write_text("accept_score: [1]\n"),
                        HONEST_YAML + "type: scoring\n"),
                  "refused", ("data/secret/testdata.yaml", "accept_score")),
    PackageAttack("problem.yaml that is a list", _yaml("- 1\n- 2\n"), "refused", ("problem.yaml", "mapping")),
    PackageAttack("problem.yaml that is not YAML", _yaml("name: [unclosed\n"), "refused", ("problem.yaml", "invalid YAML")),
    PackageAttack("validator_flags that are a mapping", _yaml(HONEST_YAML + "validator_flags: {a: 1}\n"),
                  "refused", ("problem.yaml", "validator_flags")),
    # sizes: alias bombs and deep trees
    PackageAttack("an alias bomb in name:", _yaml(BOMB + "name: *h\n"), "refused", ("problem.yaml", "alias bomb")),
    PackageAttack("an alias bomb in validator_flags", _yaml(HONEST_YAML + BOMB + "validator_flags: *h\n"),
                  "refused", ("problem.yaml", "alias bomb")),
    PackageAttack("an alias bomb in testdata.yaml",
                  _with(lambda p: (p / "data/secret/testdata.yaml").write_text(BOMB + "output_validator_flags: *h\n")),
                  "refused", ("data/secret/testdata.yaml", "alias bomb")),
    PackageAttack("a test 1,100 directories deep", _with(_deep), "refused", ("data/secret/g", "deep", "ceiling depth")),
    # what passk does not run is refused by name, never judged some other way
    PackageAttack("a custom grader (graders/)", _with(_graders), "refused", ("graders", "custom graders")),
]


def outcome_of(attack: PackageAttack, root: Path) -> tuple:
    """(outcome, the line passk printed) of `passk evaluate` on the attack's input, in this process: the
    command line reads the package (and its own submissions) or the rows before anything runs, so a refusal
    never reaches Docker; an input that loads is only loaded (problems and submissions), never run."""
    import contextlib
    import io
    from harness.cli import main
    from harness.core.errors import InputError
    from harness.inputs.formats import kattis
    from harness.inputs.problems import load_problems
    root.mkdir(parents=True, exist_ok=True)
    problems = attack.build(root)
    try:
        load_problems(problems)
        if problems.is_dir():
            kattis.submissions(problems)
    except InputError:
        pass
    else:
        return "loads", ""
    samples = root / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "1A", "solution": ADD_PY}) + "\n")
    args = ["evaluate", "--problems", str(problems), "--out", str(root / "out"), "--quiet"]
    if not problems.is_dir():
        args += ["--samples", str(samples)]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args)
    text = err.getvalue().strip()
    return ("refused" if code == 2 and "\n" not in text else f"exit {code}"), text


def remove_tree(root: Path) -> None:
    """Remove a directory tree of any depth, links not followed (shutil.rmtree recurses once per level, and
    pytest's clean-up of old temporary directories with it, so a 1,100-level test tree must go this way)."""
    import stat
    root = str(root)
    if not os.path.lexists(root):
        return
    if os.path.islink(root) or not os.path.isdir(root):
        os.unlink(root)
        return
    dirs, stack = [], [root]
    while stack:
        d = stack.pop()
        dirs.append(d)
        for entry in os.scandir(d):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                os.unlink(entry.path)
    for d in reversed(dirs):
        os.chmod(d, stat.S_IRWXU)
        os.rmdir(d)
