"""The SWE-bench rows an agent's sandboxes are made from: the files PASSK_ROWS names."""

from __future__ import annotations

import json
from pathlib import Path

from harness.core.errors import InputError


def read_rows(names: str) -> tuple[list[dict], str]:
    """The rows of the files `names` lists (`:`-separated; JSON Lines, or one JSON array), and the files as one
    line for messages. A file that cannot be read or is not JSON: InputError naming it."""
    files = [n for n in names.split(":") if n]
    if not files:
        raise InputError("PASSK_ROWS names no file: set it to the SWE-bench rows the agent works on (JSON Lines; "
                         "several as a:b)")
    rows = []
    for name in files:
        try:
            text = Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"PASSK_ROWS: {name[:300]}: {getattr(e, 'strerror', None) or e}") from None
        stripped = text.lstrip()
        try:
            if stripped.startswith("["):
                data = json.loads(stripped)
            else:
                data = []
                for lineno, line in enumerate(text.splitlines(), 1):
                    if line.strip():
                        try:
                            data.append(json.loads(line))
                        except ValueError as e:
                            raise InputError(f"{name[:300]}:{lineno}: not a JSON row ({str(e)[:120]})") from None
        except (ValueError, RecursionError) as e:
            raise InputError(f"{name[:300]}: not JSON Lines of SWE-bench rows ({str(e)[:120]})") from None
        rows.extend(r for r in (data if isinstance(data, list) else [])
                    if isinstance(r, dict) and isinstance(r.get("instance_id"), str))
    return rows, ", ".join(files)


def pick(names: list[str], wanted: list[str]) -> dict[str, dict]:
    """The rows of `wanted` instances, by id, from the files `names` (the first row of an id wins). A file
    that cannot be read, or an id no file has: InputError naming them."""
    rows, files = read_rows(":".join(names))
    every: dict[str, dict] = {}
    for r in rows:
        every.setdefault(r["instance_id"], r)
    missing = [i for i in wanted if i not in every]
    if missing:
        raise InputError(f"{', '.join(missing)[:300]}: no such instance in {files[:300]}")
    return {i: every[i] for i in wanted}
