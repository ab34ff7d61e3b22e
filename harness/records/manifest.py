"""The run manifest: what ran, pinned well enough to rerun it and to tell two runs apart."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from harness.core.constants import MANIFEST_FILE
from harness.core.errors import InputError
from harness.core.version import __version__


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def git_revision() -> dict:
    """passk's own source revision, when it runs from a git checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit or None, "dirty": bool(dirty) if commit else None}


def host_facts() -> dict:
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {"hostname": platform.node(), "platform": platform.platform(), "cpu_model": cpu_model,
            "cpu_count": os.cpu_count(), "memory_mb": mem_kb // 1024 if mem_kb else None,
            "harness_python": platform.python_version()}


def base_manifest(config: dict, inputs: dict) -> dict:
    return {"passk_version": __version__, "source": git_revision(), "config": config,
            "inputs": inputs, "host": host_facts()}


def write_json(path: Path, data: dict) -> None:
    """Write atomically: a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    # errors: a lone surrogate from an input file is written as its JSON escape (see results.ResultStore)
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", errors="backslashreplace")
    os.replace(tmp, path)


def load_manifest(run_dir: Path) -> dict:
    path = Path(run_dir) / MANIFEST_FILE
    if not path.exists():
        raise InputError(f"{run_dir}: no {MANIFEST_FILE} (not a passk run directory)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise InputError(f"{path}: unreadable ({e})") from None
