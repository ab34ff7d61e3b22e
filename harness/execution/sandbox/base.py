"""The execution seam. A backend prepares the machine once per run (images, sweeping leftovers)
and opens sessions; a session runs one job at a time. Everything above this seam is
backend-agnostic; nothing below it knows about pass@k."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

from harness.core.errors import InputError


class Session(ABC):
    """One sandbox (a warm container, or a fresh one per job)."""

    jobs_run: int = 0

    @abstractmethod
    def start(self) -> None:
        """Make the sandbox ready. Raises SandboxUnavailableError."""

    @abstractmethod
    def run(self, job: dict, line: bytes | None = None) -> dict:
        """Run one job and return the supervisor's result. `line`, when given, is the whole job as
        encoded (Pool.encoded); `job` then holds its id and limits. Raises SandboxUnavailableError on
        any fault that is not the candidate's; the session must then be stopped and replaced."""

    @abstractmethod
    def stop(self) -> None:
        """Remove the sandbox. Never raises."""

    def kill(self) -> None:
        """From another thread than the one in run(): end the sandbox now, so that run() raises
        SandboxUnavailableError (a job aborted: its request's deadline passed). Never raises; stop() is
        still called after."""
        self.stop()


class Backend(ABC):
    name: str
    # Where this backend's sessions read instance snapshots from (environments/instances.py), or None: a
    # repository environment's on an engine that can mount a host directory. open_snapshot_session then
    # gives a session that writes one.
    snapshots_image_id: str | None = None

    def open_snapshot_session(self, staging: str) -> Session:
        """A new session, not yet started, whose container can write one instance snapshot into the host
        directory `staging`."""
        raise NotImplementedError(f"the {self.name} backend keeps no instance snapshots")

    @abstractmethod
    def prepare(self) -> dict:
        """Once per run: sweep leftovers, ensure images. Returns facts for the manifest and rows
        (at least image, image_id, runtime, isolation)."""

    @abstractmethod
    def supervisor_limits(self, limits) -> dict:
        """A job's limits (a config.Limits) as the supervisor takes them."""

    @abstractmethod
    def open_session(self, slot: int = 0) -> Session:
        """A new session, not yet started, for worker slot `slot` (0 .. workers - 1: one job at a time per slot)."""

    @abstractmethod
    def healthy(self) -> bool:
        """Whether the infrastructure answers at all (e.g. the Docker engine)."""

    @abstractmethod
    def close(self) -> None:
        """Remove every sandbox this backend created. Never raises."""


_BACKENDS: dict[str, Callable[..., Backend]] = {}


def register_backend(name: str):
    def deco(factory):
        _BACKENDS[name] = factory
        return factory
    return deco


def get_backend(name: str) -> Callable[..., Backend]:
    if name not in _BACKENDS:
        raise InputError(f"unknown sandbox backend {name!r}; known: {', '.join(sorted(_BACKENDS))}")
    return _BACKENDS[name]
