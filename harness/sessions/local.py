"""Sessions on this machine's engine: an instance's sandbox made from the rows and repositories here (each
instance's environment image and snapshot prepared once per process, as `passk evaluate` prepares them)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from harness.core.errors import InputError
from harness.sessions import sandbox
from harness.sessions.images import Catalog


class UnknownImage(InputError):
    """No row is the image (or instance) asked for."""


@dataclass
class Found:
    """A session as a caller names it: its id, whether it runs, its working directory and instance."""
    id: str
    running: bool
    workdir: str
    instance: str


class LocalSessions:
    """Sandboxes of the rows' instances on this machine's engine.

    `prepare(row)` makes a row's instance ready (sandbox.Prepared): from the rows and repositories (the
    command line's) or from a service's repository tasks (passk serve's)."""

    def __init__(self, rows: list[dict] | Callable[[], tuple[list[dict], str]],
                 prepare: Callable[[dict], sandbox.Prepared], where: str = "the rows"):
        self._rows = rows          # or what reads them, when first needed (an exec needs no rows)
        self._catalog: Catalog | None = None
        self.where = where
        self._prepare = prepare
        self._prepared: dict[str, sandbox.Prepared] = {}
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            rows = self._rows
            if callable(rows):
                rows, self.where = rows()
            self._catalog = Catalog(rows)
        return self._catalog

    @classmethod
    def from_environ(cls, environ) -> LocalSessions:
        from harness.sessions.rows import read_rows
        names = environ.get("PASSK_ROWS", "")
        where = names
        repos = environ.get("PASSK_REPOS")
        specs = environ.get("PASSK_REPO_SPECS") or None
        pins = environ.get("PASSK_REPO_PINS") or "official"
        runtime = environ.get("PASSK_RUNTIME") or "runc"

        def prepare(row):
            if not repos:
                raise InputError("PASSK_REPOS names no directory: set it to where the repositories are "
                                 "(DIR/<owner>/<name>, as passk evaluate's --repos)")
            return sandbox.prepare(row, repos, specs=specs, pins=pins, runtime=runtime,
                                   where=f"{where}: {row['instance_id']}")
        return cls(lambda: read_rows(names), prepare, where)

    def row(self, ref: str) -> dict:
        """The row an image name (any of its forms) or an instance id names; UnknownImage when none."""
        row = self.catalog.find(ref)
        if row is None:
            raise UnknownImage(f"no row of {self.where[:300]} ({len(self.catalog)} rows) is image or instance "
                               f"{ref[:200]!r}; known: sweb.eval.x86_64.<instance id, __ as _1776_> (with any "
                               "registry and tag), OpenHands' _s_ form, a row's image_name, the instance id")
        return row

    def prepared(self, row: dict) -> sandbox.Prepared:
        """The row's instance made ready, once per process (concurrent asks for it wait for the first)."""
        iid = row["instance_id"]
        with self._lock:
            lock = self._locks.setdefault(iid, threading.Lock())
        with lock:
            if iid not in self._prepared:
                self._prepared[iid] = self._prepare(row)
            return self._prepared[iid]

    def create(self, ref: str, lifetime_s: float = 7200, name: str | None = None, workdir: str = "/testbed",
               env: dict | None = None, labels: dict | None = None, created=None) -> str:
        """A sandbox of the instance `ref` names, set up: its id (labels and created as sandbox.start's)."""
        return sandbox.start(self.prepared(self.row(ref)), lifetime_s, name=name, workdir=workdir, env=env,
                             labels=labels, created=created)

    def create_plain(self, language: str = "python", lifetime_s: float = 7200, name: str | None = None,
                     workdir: str = "/testbed", env: dict | None = None, runtime: str = "runc") -> str:
        """A sandbox of a plain environment (passk's image of `language`, an empty /testbed): its id. No
        rows are needed."""
        key = f"{sandbox.PLAIN}{language}\0{runtime}"
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._prepared:
                self._prepared[key] = sandbox.prepare_plain(language, runtime)
            prepared = self._prepared[key]
        return sandbox.start(prepared, lifetime_s, name=name, workdir=workdir, env=env)

    def find(self, ref: str) -> Found | None:
        """The session `ref` names (its id, a prefix of it, or its name), or None (another container is not
        a session)."""
        from harness.sessions.engine import EngineError, api
        try:
            info = api().inspect_container(ref)
        except (EngineError, OSError):
            return None
        labels = (info.get("Config") or {}).get("Labels") or {}
        if sandbox.LABEL_AGENT not in labels:
            return None
        return Found(info["Id"], bool((info.get("State") or {}).get("Running")),
                     (info.get("Config") or {}).get("WorkingDir") or "/", labels[sandbox.LABEL_AGENT])

    def exists(self, ref: str) -> bool:
        """Whether the engine has a container `ref` names at all (a session or not)."""
        from harness.sessions.engine import EngineError, api
        try:
            api().inspect_container(ref)
            return True
        except (EngineError, OSError):
            return False

    def exec(self, sid: str, argv: list[str], workdir: str = "/testbed", env: dict | None = None,
             timeout_s: float | None = None, limit: int = 16 << 20, sink=None, stop=None,
             root: bool = False) -> tuple[int, bytes]:
        return sandbox.run(sid, argv, workdir=workdir, env=env, timeout_s=timeout_s, limit=limit, sink=sink, stop=stop,
                           root=root)

    def write_file(self, sid: str, path: str, data: bytes, mode: int = 0o644) -> None:
        sandbox.write_file(sid, path, data, mode)

    def read_file(self, sid: str, path: str, limit: int = 64 << 20) -> bytes:
        return sandbox.read_file(sid, path, limit)

    def diff(self, sid: str) -> str:
        return sandbox.diff(sid)

    def reset(self, sid: str) -> None:
        """End every process the agent started (a fork bomb's too); its files stay."""
        sandbox.reset(sid)

    def remove(self, sid: str) -> bool:
        return sandbox.remove(sid)

    def running(self) -> int:
        return sum(1 for c in sandbox.listing() if c["state"] == "running")

    def sweep(self, idle_s: float = sandbox.IDLE_S) -> list[dict]:
        return sandbox.sweep(idle_s)
