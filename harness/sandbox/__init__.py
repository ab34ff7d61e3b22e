"""Sandboxes: the abstract seam and its backends."""

from .base import Backend, Session, get_backend, register_backend

__all__ = ["Backend", "Session", "get_backend", "register_backend"]
