"""Sandbox sessions: an instance's sandbox an agent works in, command by command, until it submits. One layer
for every way in: `passk-docker` (integrations/passk_docker.py: Docker's command line for mini-swe-agent and
the harnesses built like it), `passk serve`'s /v1/sessions (serve/sessions.py: trainers over HTTP) and the
inspect_ai provider; docs/agents.md is the user's reference.

    sandbox.py   the containers: start one from an environment's image and an instance's snapshot, exec,
                 files, the diff of /testbed, remove, list and sweep
    images.py    which SWE-bench instance an image name asks for
    local.py     Sessions on this machine's engine (rows and repositories here)
    remote.py    the same Sessions through a `passk serve` (PASSK_URL): no engine on the agent's machine

open_sessions() gives the one the environment asks for."""

from __future__ import annotations

import os


def open_sessions(environ=None):
    """PASSK_URL set: a remote passk serve's sessions (PASSK_TOKEN its bearer token); else this machine's,
    for the rows PASSK_ROWS names (`:`-separated files) and the repositories under PASSK_REPOS."""
    environ = os.environ if environ is None else environ
    if environ.get("PASSK_URL"):
        from harness.sessions.remote import RemoteSessions
        return RemoteSessions(environ["PASSK_URL"], environ.get("PASSK_TOKEN") or None)
    from harness.sessions.local import LocalSessions
    return LocalSessions.from_environ(environ)
