"""Where passk's own files are: the container sources the sandbox image is built from, and the host's cache."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

from harness.core.errors import HarnessError


def containers_dir() -> Path:
    """passk's container sources: $PASSK_CONTAINERS if set; else the package data installed with passk
    (harness.containers, from the checkout's containers/ directory)."""
    env = os.environ.get("PASSK_CONTAINERS")
    if env:
        path = Path(env)
    else:
        try:
            path = Path(str(importlib.resources.files("harness.containers")))
        except (ModuleNotFoundError, TypeError):
            path = Path(__file__).resolve().parents[2] / "containers"  # a checkout that was not installed
    if not (path / "Dockerfile").exists():
        raise HarnessError(f"cannot find passk's container sources (looked in {path}); reinstall passk, or set "
                           "PASSK_CONTAINERS to a directory holding its Dockerfile, start.py and box/")
    return path


def cache_root(kind: str) -> Path:
    """The host's cache of one kind (`environments`, `repos/trees`, `groundtruth`, ...): under
    PASSK_CACHE_DIR, else XDG_CACHE_HOME/passk, else ~/.cache/passk."""
    root = os.environ.get("PASSK_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "passk")
    return Path(root) / kind
