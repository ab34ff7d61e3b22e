"""pytest's short test summary (`-rA`): one line per test, `STATUS name` (FAILED and ERROR lines add
` - message`). Three dialects, as SWE-bench's parsers read them:

- parse: the name is the line's second word (a parametrized id with a space in it keeps its first part,
  as the rows' lists do);
- parse_with_options: the same, with a parameter that is an absolute path cut to its last part
  (`test_x[/tmp/abc/file]` -> `test_x[/file]`): requests', pylint's and pydicom's rows name them so;
- parse_matplotlib: parse, with matplotlib's mouse buttons as numbers;
- parse_v2: colour codes and control characters removed, the name is the rest of the line (spaces
  kept) and, for older pytest's verbose lines, a line that ends in a status names the test before it.

A `SKIPPED [N] file:line: reason` line counts N skips of no named test and is not a test."""

from __future__ import annotations

import re

STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")
_COUNT = re.compile(r"^\[\d+\]$")
_OPTION = re.compile(r"^(.*?)\[(.*)\]")
_COLOUR = re.compile(r"\[(\d+)m")
_CONTROLS = {c: None for c in range(1, 32)}


def _status_of(line: str) -> str | None:
    return next((s for s in STATUSES if line.startswith(s)), None)


def _words(line: str, status: str) -> list[str]:
    if status == "FAILED":
        line = line.replace(" - ", " ")
    return line.split()


def _skip_count(status: str, name: str) -> bool:
    return status == "SKIPPED" and bool(_COUNT.match(name))


def parse(log: str, name=lambda n: n) -> dict[str, str]:
    """{test: status} of the log's result lines; `name` maps a test's name as printed to the one kept."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        status = _status_of(line)
        if status is None:
            continue
        words = _words(line, status)
        if len(words) > 1 and not _skip_count(words[0], words[1]):
            found[name(words[1])] = words[0]
    return found


def _cut_path_option(name: str) -> str:
    m = _OPTION.search(name)
    if not m:
        return name
    main, option = m.groups()
    if option.startswith("/") and not option.startswith("//") and "*" not in option:
        option = "/" + option.split("/")[-1]
    return f"{main}[{option}]"


def parse_with_options(log: str) -> dict[str, str]:
    return parse(log, _cut_path_option)


def parse_matplotlib(log: str) -> dict[str, str]:
    """parse's dialect for matplotlib's rows: a mouse button's enum printed in a test's id is its number
    (`MouseButton.LEFT` is 1, `MouseButton.RIGHT` 3), as the rows name those tests."""
    return parse(log.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3"))


def parse_v2(log: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in log.split("\n"):
        line = _COLOUR.sub("", line).translate(_CONTROLS)
        status = _status_of(line)
        if status is not None:
            if status == "FAILED":
                line = line.split(" - ", 1)[0]
            words = line.split()
            if len(words) >= 2 and not _skip_count(words[0], words[1]):
                found[" ".join(words[1:])] = words[0]
        elif line.endswith(STATUSES):
            words = line.split()
            if len(words) >= 2:
                found[" ".join(words[:-1])] = words[-1]
    return found
