"""SWE-bench's grading rule, as its harness applies it (swebench 5.0.2, harness/grading.py), on a status
map a parser made: an instance is resolved when every FAIL_TO_PASS test passes (PASSED or XFAIL) and
every PASS_TO_PASS test is maintained (PASSED, XFAIL or SKIPPED). A test missing from the map has not
passed. A listed test whose status is none of the five (a runner's odd line, or a forged one) counts
neither way, as in SWE-bench (so a FAIL_TO_PASS list of such tests alone resolves): the report names
them (`uncounted`), and `strict` counts them as not passed. A listed name that is cut inside its parameters (more `[` than `]`: the rows hold hundreds of
such names) matches the tests whose names begin with it, when they all agree on pass or fail.

Before a map is graded the run itself must be believable (`believable`): a run whose exit status says
something failed while its log reports no failure and no error is not describing the run that
happened (a patch can print its own PASSED lines) and is not graded; nor is a run that reported no
test at all."""

from __future__ import annotations

from dataclasses import dataclass, field

PASSING = frozenset({"PASSED", "XFAIL"})
MAINTAINED = PASSING | {"SKIPPED"}
FAILING = frozenset({"FAILED", "ERROR"})
KNOWN = frozenset({"PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL"})


def resolve(name: str, status_map: dict[str, str]) -> str | None:
    """The key of the status map that a listed test name stands for, or None."""
    if name in status_map:
        return name
    if name.count("[") > name.count("]"):
        matches = [k for k in status_map if k.startswith(name)]
        if matches and len({status_map[k] in PASSING for k in matches}) == 1:
            return matches[0]
    return None


def _status(name: str, status_map: dict[str, str]) -> str | None:
    key = resolve(name, status_map)
    return None if key is None else status_map[key]


def _bare(name: str) -> str:
    """A listed test's function name: the last part of its id, its parameters aside."""
    return name.rsplit("::", 1)[-1].split("[", 1)[0].strip()


@dataclass(frozen=True)
class Report:
    fail_to_pass: tuple[list[str], list[str]]     # (passed, not passed), in the row's order
    pass_to_pass: tuple[list[str], list[str]]     # (maintained, broken)
    statuses: dict[str, str | None] = field(default_factory=dict)   # every listed test's status (None: absent)
    uncounted: tuple[str, ...] = ()               # listed tests with a status SWE-bench counts neither way
    known: tuple[str, ...] = ()                   # PASS_TO_PASS tests not counted: known differences (known.json)

    @property
    def resolved(self) -> bool:
        return not self.fail_to_pass[1] and not self.pass_to_pass[1]

    def counts(self) -> str:
        """'FAIL_TO_PASS x of y, PASS_TO_PASS x of y'."""
        f, p = self.fail_to_pass, self.pass_to_pass
        return (f"FAIL_TO_PASS {len(f[0])} of {len(f[0]) + len(f[1])}, "
                f"PASS_TO_PASS {len(p[0])} of {len(p[0]) + len(p[1])}")

    def to_swebench(self) -> dict:
        """The report in the shape SWE-bench's get_eval_tests_report gives (its tests_status)."""
        return {"FAIL_TO_PASS": {"success": list(self.fail_to_pass[0]), "failure": list(self.fail_to_pass[1])},
                "PASS_TO_PASS": {"success": list(self.pass_to_pass[0]), "failure": list(self.pass_to_pass[1])}}


def grade(status_map: dict[str, str], fail_to_pass: list[str], pass_to_pass: list[str],
          strict: bool = False, known: frozenset = frozenset()) -> Report:
    """`known`: the function names of PASS_TO_PASS tests that cannot pass in this sandbox (known.json): one
    that does not pass is set aside (Report.known), not counted against the candidate."""
    f_ok, f_bad, p_ok, p_bad = [], [], [], []
    statuses: dict[str, str | None] = {}
    uncounted: list[str] = []
    set_aside: list[str] = []
    for names, good, ok, bad in ((fail_to_pass, PASSING, f_ok, f_bad), (pass_to_pass, MAINTAINED, p_ok, p_bad)):
        for name in names:
            statuses[name] = status = _status(name, status_map)
            if status in good:
                ok.append(name)
            elif bad is p_bad and known and _bare(name) in known:
                set_aside.append(name)
            elif status is None or status in KNOWN or strict:
                bad.append(name)
            else:
                uncounted.append(name)
    return Report((f_ok, f_bad), (p_ok, p_bad), statuses, tuple(uncounted), tuple(set_aside))


def believable(status_map: dict[str, str], exit_code: int | None) -> str | None:
    """None when the run's log may be graded, else why not (one line)."""
    if not status_map:
        return "the test run reported no test"
    if exit_code not in (None, 0) and not any(s in FAILING for s in status_map.values()):
        return f"the test run exited {exit_code} but its log reports no failure or error"
    return None
