"""Instance snapshots: an instance's tree set up and installed once (what SWE-bench's harness bakes into an
image per instance), kept on the host and copied into each candidate's container, so that a candidate costs
its tests and little more.

A snapshot is made in a container of the environment's image (the repo channel's `snapshot` mode,
containers/box/repo.py): the base commit's tree, the spec's pre-install steps and install, a commit of what
they changed; the supervisor then copies /testbed and what the install changed in the venv into a staging
directory on the host, which becomes the snapshot once it is complete (a rename: a stopped run leaves no
half). Its name hashes everything it was made from: the environment's image, the tree, the steps and their
environment. The snapshots of one environment image live in one directory, root's own (mode 0700), which
every container of that environment mounts read-only at /opt/passk/instances: the supervisor (root) copies
the one a job names; the candidate's user cannot read the directory, so no candidate sees another
instance's tree (a later base commit may hold an earlier instance's fix).

Cached under PASSK_CACHE_DIR (bases.cache_root): repos/instances/<image>/<snapshot>/{testbed/, venv/,
venv-deleted, facts.json}."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

from harness.environments.bases import cache_root

FORMAT = 1


def root() -> Path:
    return cache_root("repos/instances")


def image_dir(image_id: str) -> Path:
    """The directory of one environment image's snapshots (made root-only): what its containers mount."""
    d = root() / image_id.split(":")[-1][:16]
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    return d


def name(image_id: str, tree_sha256: str, part: dict) -> str:
    """A snapshot's name: the sha256 of everything it is made from (the image, the tree's file, the steps
    that set it up and the environment they ran in)."""
    what = {"format": FORMAT, "image": image_id, "tree": tree_sha256,
            **{k: part.get(k) for k in ("base", "pre_install", "install", "env")}}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]


def find(image_id: str, snapshot: str) -> dict | None:
    """The snapshot's facts when it is complete on this machine, else None."""
    facts = image_dir(image_id) / snapshot / "facts.json"
    try:
        return json.loads(facts.read_text())
    except (OSError, ValueError):
        return None


@contextmanager
def building(image_id: str, snapshot: str):
    """Held while one snapshot is made: every other thread or process that wants it waits here, then finds
    it (one build per snapshot on a machine)."""
    lock_path = image_dir(image_id) / f".{snapshot}.lock"
    with open(lock_path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def staging(image_id: str, snapshot: str) -> Path:
    """An empty directory, root's own, for a snapshot job to write into (mounted at /opt/passk/snapshot-out)."""
    d = image_dir(image_id) / f".staging-{snapshot}-{os.getpid()}-{time.monotonic_ns()}"
    d.mkdir(mode=0o700)
    return d


def commit(image_id: str, snapshot: str, staged: Path, facts: dict) -> dict:
    """The staged directory becomes the snapshot (its facts written last, then one rename)."""
    (staged / "facts.json").write_text(json.dumps({**facts, "format": FORMAT, "name": snapshot}, indent=1))
    final = image_dir(image_id) / snapshot
    if final.exists():
        shutil.rmtree(final)
    os.rename(staged, final)
    return json.loads((final / "facts.json").read_text())


def discard(staged: Path) -> None:
    shutil.rmtree(staged, ignore_errors=True)


def disk_bytes(image_id: str | None = None) -> int:
    """The bytes the snapshots take (of one environment image, or of all)."""
    top = root() if image_id is None else image_dir(image_id)
    total = 0
    for dirpath, _dirs, files in os.walk(top):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
            except OSError:
                pass
    return total
