"""sympy's own runner (`bin/test -C --verbose`): a line per test, `test_name ok`, `test_name F` or
`test_name E` (indented under its file), and a banner `____ path/to/test_file.py:test_name ____` over
each failure's traceback, which marks `path/to/test_file.py:test_name` FAILED. The rows' lists name
tests by their bare names, so the per-test lines decide a verdict; the banners only add failures."""

from __future__ import annotations

import re

_BANNER = re.compile(r"(_*) (.*)\.py:(.*) (_*)")
_ENDINGS = ((" E", "ERROR"), (" F", "FAILED"), (" ok", "PASSED"))


def parse(log: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in _BANNER.finditer(log):
        found[f"{m.group(2)}.py:{m.group(3)}"] = "FAILED"
    for line in log.split("\n"):
        line = line.strip()
        if not line.startswith("test_"):
            continue
        for ending, status in _ENDINGS:
            if line.endswith(ending):
                found[line.split()[0]] = status
    return found
