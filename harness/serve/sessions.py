"""passk serve's sessions: an instance's sandbox over HTTP, for a trainer's agent loop (and for passk-docker
with PASSK_URL: the agent's machine needs no Docker). The sandboxes are harness/sessions' own; this module is
the pool the service keeps (a capacity, idle expiry, only its own sessions reachable) and the routes' bodies.

    POST   /v1/sessions                 {"instance_id" | "image" | "language", "lifetime_s", "workdir", "env",
                                         "name"} -> 201 (language: a plain environment, passk's image of it
                                         with an empty /testbed; no diff or grade)
    GET    /v1/sessions                 the service's sessions
    GET    /v1/sessions/{id}            one (its id, a prefix of 12 or more, or its name)
    POST   /v1/sessions/{id}/exec       {"command": "..." (bash -c) | "argv": [...], "cwd", "env", "timeout_s",
                                         "max_output_bytes", "root" (gVisor only)} -> {"exit_code", "output", "output_b64",
                                         "truncated", "timed_out"}
    PUT    /v1/sessions/{id}/files      {"path", "content" | "content_b64", "mode"}
    GET    /v1/sessions/{id}/files?path=/abs/path   -> {"path", "size", "content_b64"}
    GET    /v1/sessions/{id}/diff       -> {"diff"}: /testbed against the instance as it was set up
    POST   /v1/sessions/{id}/grade      {"reward": "binary" | "fraction", "close": bool} -> the row of
                                         /v1/evaluate for the diff, graded as `passk evaluate` grades it
    DELETE /v1/sessions/{id}            -> {"closed": bool}: idempotent

A session beyond the capacity is 429 with Retry-After; one idle past `idle_s` (no command begun or ended) is
closed by the pool; every one is removed when the service stops. docs/agents.md is the reference."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from harness.core.errors import HarnessError, InputError
from harness.serve.service import Busy
from harness.sessions.sandbox import PLAIN, is_plain

DEFAULT_EXEC_TIMEOUT_S = 600.0
DEFAULT_OUTPUT_BYTES = 1 << 20
MAX_OUTPUT_BYTES = 16 << 20
MAX_FILE_BYTES = 32 << 20
SWEEP_EVERY_S = 10.0


class NotFound(InputError):
    """No session of this service is named so (HTTP 404)."""


@dataclass
class Record:
    id: str
    instance: str
    name: str | None
    created: float
    last: float
    expires: float
    busy: int = 0          # commands running now (an idle sweep leaves a session with one running alone)


class SessionPool:
    """The service's sessions: at most `capacity` at once, each closed when idle `idle_s` or past its
    lifetime, all closed with the service."""

    def __init__(self, service, capacity: int = 8, idle_s: float = 600.0, max_lifetime_s: float = 4 * 3600):
        from harness.sessions import sandbox
        from harness.sessions.local import LocalSessions
        self.service = service
        self.capacity, self.idle_s, self.max_lifetime_s = int(capacity), float(idle_s), float(max_lifetime_s)

        def rows():
            return ([{"instance_id": tid} for tid, p in service.problems.items() if p.channel == "repo"],
                    "the service's preloaded rows (passk serve --problems)")

        def prepare(row):
            task = service.repo_task(service.problems[row["instance_id"]])
            return sandbox.prepare_problem(task, service.settings.runtime)
        self.local = LocalSessions(rows, prepare)
        self._lock = threading.RLock()   # create's refusal reads retry_after under it
        self._sessions: dict[str, Record] = {}
        self._starting = 0
        self._closed = threading.Event()
        self._sweeper = threading.Thread(target=self._sweep_loop, name="passk-sessions", daemon=True)
        self._sweeper.start()

    # -- the pool's own bookkeeping

    def _sweep_loop(self) -> None:
        while not self._closed.wait(SWEEP_EVERY_S):
            try:
                self.sweep()
            except Exception:  # noqa: BLE001 - the next round tries again; a failure here ends no request
                pass

    def sweep(self, now: float | None = None) -> list[str]:
        """Close the sessions idle past idle_s or past their lifetime: their ids."""
        now = time.time() if now is None else now
        with self._lock:
            doomed = [r.id for r in self._sessions.values()
                      if r.expires <= now or (r.busy == 0 and now - r.last > self.idle_s)]
        for sid in doomed:
            self.close(sid)
        return doomed

    def retry_after(self) -> int:
        """Seconds a caller refused for capacity waits: until the session idle longest would expire, at
        least 1, at most 60."""
        now = time.time()
        with self._lock:
            waits = [max(0.0, self.idle_s - (now - r.last)) for r in self._sessions.values() if r.busy == 0]
        return int(max(1, min(60, min(waits) if waits else 10)))

    def get(self, ref: str) -> Record:
        """The service's session `ref` names: its id, an id prefix of 12 or more characters, or its name."""
        with self._lock:
            if ref in self._sessions:
                return self._sessions[ref]
            hits = [r for r in self._sessions.values() if (len(ref) >= 12 and r.id.startswith(ref)) or r.name == ref]
        if len(hits) != 1:
            raise NotFound(f"no session {ref[:80]!r} (closed, expired, or never this service's)")
        return hits[0]

    def listing(self) -> list[dict]:
        now = time.time()
        with self._lock:
            return [self.describe(r, now) for r in self._sessions.values()]

    def describe(self, r: Record, now: float | None = None) -> dict:
        now = time.time() if now is None else now
        return {"id": r.id, "instance_id": r.instance, "name": r.name, "running": True,
                "workdir": "/testbed", "seconds_left": max(0, int(r.expires - now)),
                "idle_s": int(now - r.last), "busy": r.busy}

    # -- what the routes do (each in a worker thread: they block on the engine)

    def create(self, ref: str | None, lifetime_s: float = 3600, workdir: str = "/testbed", env: dict | None = None,
               name: str | None = None, language: str | None = None) -> dict:
        if language is not None:      # a plain environment: an unknown language is 400 before anything waits
            from harness.inputs.languages import canonical
            instance = PLAIN + canonical(language)
        else:
            instance = self.local.row(ref)["instance_id"]    # an unknown instance: 400 before anything waits
        with self._lock:
            if len(self._sessions) + self._starting >= self.capacity:
                raise Busy(self.retry_after(), len(self._sessions) + self._starting, self.capacity)
            if name is not None and any(r.name == name for r in self._sessions.values()):
                raise InputError(f"a session named {name[:80]!r} exists")
            self._starting += 1
        try:
            lifetime = max(1.0, min(float(lifetime_s), self.max_lifetime_s))
            if language is not None:
                sid = self.local.create_plain(instance[len(PLAIN):], lifetime, workdir=workdir, env=env,
                                              runtime=self.service.settings.runtime)
            else:
                sid = self.local.create(instance, lifetime, workdir=workdir, env=env)
        finally:
            with self._lock:
                self._starting -= 1
        now = time.time()
        rec = Record(sid, instance, name, now, now, now + lifetime)
        with self._lock:
            self._sessions[sid] = rec
        return self.describe(rec, now)

    def exec(self, ref: str, argv: list[str], cwd: str, env: dict | None, timeout_s: float, limit: int,
             stop: threading.Event, root: bool = False) -> dict:
        r = self.get(ref)
        with self._lock:
            r.busy += 1
            r.last = time.time()
        t0 = time.monotonic()
        try:
            out = bytearray()
            try:
                code, _ = self.local.exec(r.id, argv, workdir=cwd, env=env, timeout_s=timeout_s, limit=limit + 1,
                                          sink=out.extend, stop=stop, root=root)
            except HarnessError as e:
                raise self._ended(r, e) from None
        finally:
            with self._lock:
                r.busy -= 1
                r.last = time.time()
        truncated = len(out) > limit
        data = bytes(out[:limit])
        timed_out = code == 137 and not truncated and time.monotonic() - t0 >= timeout_s - 0.05
        import base64
        return {"exit_code": code, "output": data.decode("utf-8", "replace"),
                "output_b64": base64.b64encode(data).decode(), "truncated": truncated, "timed_out": timed_out}

    def _ended(self, r: Record, e: Exception):
        """A sandbox that went away under the service (its agent ended it: a gVisor sandbox past its process
        limit): the record goes, and the caller is told the session is gone (404), not that the service failed."""
        if self.local.find(r.id) is None:
            with self._lock:
                self._sessions.pop(r.id, None)
            return NotFound(f"session {r.id[:12]} ended: its sandbox is gone (its own processes or limits ended it)")
        return e

    def touch(self, r: Record) -> None:
        with self._lock:
            r.last = time.time()

    def write_file(self, ref: str, path: str, data: bytes, mode: int) -> None:
        r = self.get(ref)
        self.touch(r)
        try:
            self.local.write_file(r.id, path, data, mode)
        except HarnessError as e:
            raise self._ended(r, e) from None

    def read_file(self, ref: str, path: str) -> bytes:
        r = self.get(ref)
        self.touch(r)
        try:
            return self.local.read_file(r.id, path, MAX_FILE_BYTES)
        except HarnessError as e:
            raise self._ended(r, e) from None

    def diff(self, ref: str) -> str:
        r = self.get(ref)
        if is_plain(r.instance):
            raise InputError(f"session {r.id[:12]} is a plain environment ({r.instance}): it has no instance's "
                             "tree to diff against or grade")
        self.touch(r)
        try:
            return self.local.diff(r.id)
        except HarnessError as e:
            raise self._ended(r, e) from None

    def close(self, ref: str) -> bool:
        try:
            r = self.get(ref)
        except NotFound:
            return False
        with self._lock:
            self._sessions.pop(r.id, None)
        self.local.remove(r.id)
        return True

    def close_all(self) -> int:
        self._closed.set()
        with self._lock:
            ids = list(self._sessions)
        for sid in ids:
            self.close(sid)
        return len(ids)


# -- request bodies, read as bodies.py reads /v1/evaluate's: one message naming the field

def _str(body: dict, key: str, default=None, limit: int = 4096):
    v = body.get(key, default)
    if v is None:
        return None
    if not isinstance(v, str) or not v or len(v) > limit or "\0" in v:
        raise InputError(f"{key}: a non-empty string of at most {limit} characters")
    return v


def _env(body: dict) -> dict | None:
    v = body.get("env")
    if v is None:
        return None
    if not isinstance(v, dict) or len(v) > 256 or not all(
            isinstance(k, str) and isinstance(x, str) and k and "=" not in k and "\0" not in k + x and len(k + x) < 65536
            for k, x in v.items()):
        raise InputError("env: an object of at most 256 string values (names without '=')")
    return dict(v)


def _number(body: dict, key: str, default: float, low: float, high: float) -> float:
    v = body.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
        raise InputError(f"{key}: a number from {low:g} to {high:g}")
    return float(v)


def _known(body, allowed: set) -> dict:
    if not isinstance(body, dict):
        raise InputError("the body is a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise InputError(f"unknown field(s): {', '.join(u[:40] for u in unknown[:5])}")
    return body


def parse_create(body) -> dict:
    body = _known(body, {"instance_id", "image", "language", "lifetime_s", "workdir", "env", "name"})
    ref = _str(body, "instance_id") or _str(body, "image")
    language = _str(body, "language", limit=64)
    if (ref is None) == (language is None):
        raise InputError("instance_id (or image, a SWE-bench image name): the instance the session is for; or "
                         "language (python, cpp, ...): a plain environment; one of them")
    workdir = _str(body, "workdir", "/testbed")
    if not workdir.startswith("/"):
        raise InputError("workdir: an absolute path")
    return {"ref": ref, "language": language, "lifetime_s": _number(body, "lifetime_s", 3600, 1, 24 * 3600),
            "workdir": workdir, "env": _env(body), "name": _str(body, "name", limit=128)}


def parse_exec(body, max_timeout_s: float) -> dict:
    body = _known(body, {"command", "argv", "cwd", "env", "timeout_s", "max_output_bytes", "root"})
    if not isinstance(body.get("root", False), bool):
        raise InputError("root: true or false (root only in a gVisor sandbox)")
    if ("command" in body) == ("argv" in body):
        raise InputError("command (a shell command line, run by bash -c) or argv (a list of strings): one of them")
    if "command" in body:
        argv = ["bash", "-c", _str(body, "command", limit=1 << 20)]
    else:
        argv = body["argv"]
        if not isinstance(argv, list) or not argv or len(argv) > 4096 or not all(
                isinstance(a, str) and "\0" not in a for a in argv) or sum(map(len, argv)) > 1 << 20:
            raise InputError("argv: a list of 1 to 4096 strings (no NUL), 1 MiB in all")
    cwd = _str(body, "cwd", "/testbed")
    if not cwd.startswith("/"):
        raise InputError("cwd: an absolute path")
    return {"argv": argv, "cwd": cwd, "env": _env(body),
            "timeout_s": _number(body, "timeout_s", min(DEFAULT_EXEC_TIMEOUT_S, max_timeout_s), 0.1, max_timeout_s),
            "limit": int(_number(body, "max_output_bytes", DEFAULT_OUTPUT_BYTES, 0, MAX_OUTPUT_BYTES)),
            "root": bool(body.get("root", False))}


def parse_write(body) -> dict:
    import base64
    import binascii
    body = _known(body, {"path", "content", "content_b64", "mode"})
    path = _str(body, "path")
    if not path.startswith("/"):
        raise InputError("path: an absolute path")
    if ("content" in body) == ("content_b64" in body):
        raise InputError("content (text) or content_b64 (bytes, base64): one of them")
    if "content" in body:
        if not isinstance(body["content"], str):
            raise InputError("content: a string")
        data = body["content"].encode("utf-8")
    else:
        try:
            data = base64.b64decode(body["content_b64"], validate=True) if isinstance(body["content_b64"], str) else None
        except (binascii.Error, ValueError):
            data = None
        if data is None:
            raise InputError("content_b64: base64 text")
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"the file is {len(data)} bytes; the limit is {MAX_FILE_BYTES}")
    mode = body.get("mode", 0o644)
    if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o777:
        raise InputError("mode: permission bits, 0 to 0o777 (511)")
    return {"path": path, "data": data, "mode": mode}
