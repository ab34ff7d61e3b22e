"""Reading JSON Lines (optionally gzip-compressed) with errors that name the file and line."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Iterator

from harness.core.errors import InputError


def _open_bytes(path: Path):
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, expected a .jsonl or .jsonl.gz file")
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_json(path: Path):
    """The value of a JSON file (.json, or .json.gz); bad input is one InputError naming the file."""
    try:
        raw = gzip.open(path, "rb").read() if path.name.endswith(".gz") else path.read_bytes()
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: malformed JSON ({e.msg})") from None
    except (OSError, EOFError) as e:
        raise InputError(f"{path}: cannot read ({e})") from None


def iter_jsonl(path: Path, what: str = "file") -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for every non-blank line. Raises InputError on the first bad line."""
    path = Path(path)
    seen = False
    try:
        with _open_bytes(path) as f:
            for lineno, raw in enumerate(f, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InputError(f"{path}:{lineno}: not valid UTF-8 (byte {e.start})") from None
                if not text.strip():
                    continue
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as e:
                    raise InputError(f"{path}:{lineno}: malformed JSON ({e.msg} at column {e.colno})") from None
                if not isinstance(obj, dict):
                    raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
                seen = True
                yield lineno, obj
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise InputError(f"{path}: cannot read ({e})") from None
    if not seen:
        raise InputError(f"{path}: empty {what}: no JSON lines")


def require_str(path: Path, lineno: int, obj: dict, field: str, allow_empty: bool = False) -> str:
    if field not in obj:
        raise InputError(f"{path}:{lineno}: missing field '{field}'")
    value = obj[field]
    if not isinstance(value, str):
        raise InputError(f"{path}:{lineno}: field '{field}' must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InputError(f"{path}:{lineno}: field '{field}' is empty")
    return value


def sha256_path(path: Path) -> str:
    """sha256 of a file's bytes, or of a directory's files (sorted relative paths and contents)."""
    path = Path(path)
    if not path.exists():   # before a run hashes its inputs: one line naming the file, exit 2
        raise InputError(f"{path}: no such file")
    h = hashlib.sha256()
    if path.is_dir():
        # a package is hostile: its links are hashed as links (their target's name), never followed off
        # it; only regular files are read; the walk is a loop, so no depth of directories can exhaust it
        for rel, kind, value in _tree(path):
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + kind + b"\0")
            h.update(value)
    else:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _tree(root: Path):
    """(relative path, kind, digest or link target) of every entry under `root`, sorted, links not followed."""
    import os
    import stat
    out, stack = [], [""]
    while stack:
        rel = stack.pop()
        try:
            names = os.listdir(os.path.join(root, rel) if rel else root)
        except OSError:
            continue
        for name in names:
            child = f"{rel}/{name}" if rel else name
            full = os.path.join(root, child)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                out.append((child, b"link", os.fsencode(os.readlink(full))))
            elif stat.S_ISDIR(st.st_mode):
                stack.append(child)
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256()
                with open(full, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        digest.update(block)
                out.append((child, b"file", digest.digest()))
    return sorted(out)
