"""The executor's pure parts, above the sandbox seam (no Docker): building rows from results."""

import json

from harness.inputs.config import Limits, SandboxSettings
from harness.execution.jobs import Job
from harness.execution.pool import Pool
from harness.inputs.problem import Problem
from harness.inputs.samples import Sample


class _Backend:
    run_id = "r"

    def supervisor_limits(self, limits):
        return limits.for_supervisor()


FACTS = {"runtime": "runc", "isolation": "pooled", "image": "img", "image_id": "sha256:1"}
JOB = Job(Problem("T/0", "", "def check(c):\n    pass\n", "f"), Sample("T/0", 0, "def f(): pass", "solution", "x"))


def test_any_result_the_container_sends_becomes_a_bounded_writable_row():
    """Regression: reason, detail and tails came from the container unchecked; a 20 MB exception name made
    every artifact 20 MB, a lone surrogate made the row unwritable, newlines in a reason became report
    structure."""
    pool = Pool(_Backend(), Limits(), SandboxSettings(workers=1), FACTS)
    try:
        row = pool.make_row(JOB, {"status": "failed", "reason": "exception:" + "E\n#|" * 5_000_000,
                                  "detail": "\ud800" * 10_000, "stdout_tail": "o" * 100_000, "stderr_tail": None,
                                  "wall_s": "1", "cpu_s": True, "exit_code": 3, "signal": "SIG\nX"}, 1)
    finally:
        pool.background.shutdown()
    assert len(row.reason) <= 120 and "\n" not in row.reason and "|" not in row.reason
    assert len(row.detail) < 1100 and len(row.stdout_tail) < 4200 and row.stderr_tail == ""
    assert row.wall_s is None and row.cpu_s is None and row.exit_code == 3 and row.signal == "SIG_X"
    json.loads(row.to_json().encode("utf-8"))


def test_an_unknown_status_is_an_error_row():
    pool = Pool(_Backend(), Limits(), SandboxSettings(workers=1), FACTS)
    try:
        row = pool.make_row(JOB, {"status": "passed\n", "reason": "x"}, 1)
    finally:
        pool.background.shutdown()
    assert (row.status, row.reason) == ("error", "supervisor_sent_unknown_status")
