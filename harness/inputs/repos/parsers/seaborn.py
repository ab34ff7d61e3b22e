"""seaborn's tests (`pytest --no-header -rA`), as SWE-bench's parser reads them (its `parse_log_seaborn`,
swebench 5.0.2): a `FAILED name` line fails the name; a line with ` PASSED ` in it whose second word is
PASSED passes its first word (pytest's verbose `name PASSED [ 5%]`); a `PASSED name` summary line passes
the name. Nothing else counts: not SKIPPED, not ERROR (a test the log shows neither way has not passed)."""

from __future__ import annotations


def parse(log: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in log.split("\n"):
        words = line.split()
        if len(words) < 2:
            continue
        if line.startswith("FAILED"):
            found[words[1]] = "FAILED"
        elif " PASSED " in line:
            if words[1] == "PASSED":
                found[words[0]] = "PASSED"
        elif line.startswith("PASSED"):
            found[words[1]] = "PASSED"
    return found
