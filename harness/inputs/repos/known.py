"""Known differences: tests of SWE-bench's rows that cannot give the harness's result inside passk's sandbox
(it has no network), each listed by name with why (known.json). Read as data; a run may turn them off
(repos.known_differences: false), and then they count as the harness counts them."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

KNOWN_FILE = Path(__file__).with_name("known.json")


@lru_cache(maxsize=1)
def _table() -> dict:
    return json.loads(KNOWN_FILE.read_text(encoding="utf-8"))["repositories"]


def for_repository(repo: str) -> dict[str, str]:
    """{test function name: why} of a repository's known differences."""
    return {test: entry["why"] for entry in _table().get(repo, []) for test in entry["tests"]}
