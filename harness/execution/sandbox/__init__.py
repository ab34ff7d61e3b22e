"""Sandboxes: the abstract seam (base: Backend, Session, the registry by name) and its backends, each a
module that registers itself (docker: Docker with runc or gVisor). Importing this package registers the
built-in ones; a new backend is a module beside docker.py with a `@register_backend("name")` class."""

from harness.execution.sandbox import docker  # noqa: F401  (registers the built-in backend)
from harness.execution.sandbox.base import Backend, Session, get_backend, register_backend

__all__ = ["Backend", "Session", "get_backend", "register_backend"]
