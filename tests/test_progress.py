"""Progress on stderr when it is not a terminal: plain status lines, every few seconds, and at the end."""

import io
import time

from harness.execution.progress import Progress


def test_status_lines_when_output_is_not_a_terminal():
    stream = io.StringIO()
    bar = Progress(total=10, initial=2, mode="auto", stream=stream, every_s=0.05)
    for status in ("passed", "failed", "passed"):
        bar.update(status)
    time.sleep(0.2)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("passk: 5/10 (50%)") for line in lines)
    assert "passed 2 failed 1 timed_out 0 error 0" in lines[-1] and "cand/s" in lines[-1] and "ETA" in lines[-1]


def test_quiet_prints_nothing():
    stream = io.StringIO()
    bar = Progress(total=3, mode="quiet", stream=stream, every_s=0.01)
    bar.update("passed")
    time.sleep(0.05)
    bar.close()
    assert stream.getvalue() == ""
