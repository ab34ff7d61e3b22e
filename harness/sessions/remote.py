"""Sessions through a `passk serve` (its /v1/sessions, serve/sessions.py): the same calls as LocalSessions,
so passk-docker with PASSK_URL set needs no Docker engine on the agent's machine. The standard library's
HTTP client only; PASSK_TOKEN is the service's bearer token."""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

from harness.core.errors import HarnessError, InputError
from harness.sessions.local import Found, UnknownImage

CONNECT_MARGIN_S = 60.0     # beyond a command's own time: the service's answer on its way back


class RemoteSessions:
    def __init__(self, url: str, token: str | None = None, queue_s: float | None = None):
        if not url.startswith(("http://", "https://")):
            raise InputError(f"PASSK_URL: an http:// or https:// address of a passk serve, not {url[:100]!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.queue_s = float(os.environ.get("PASSK_QUEUE_S") or 100) if queue_s is None else queue_s

    def _call(self, method: str, path: str, body=None, timeout: float = 120.0, query: dict | None = None):
        """(HTTP status, the JSON answer). A service that cannot be reached: HarnessError naming it."""
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, raw, headers = resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as e:
            status, raw, headers = e.code, e.read(), e.headers
        except (urllib.error.URLError, OSError) as e:
            raise HarnessError(f"passk serve at {self.url[:200]} cannot be reached: "
                               f"{getattr(e, 'reason', None) or e}") from None
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            answer = {"error": raw[:300].decode("utf-8", "replace")}
        if isinstance(answer, dict):
            answer["_retry_after"] = headers.get("Retry-After")
        return status, answer

    @staticmethod
    def _why(answer) -> str:
        return str(answer.get("error") if isinstance(answer, dict) else answer)[:1000]

    def _ok(self, status: int, answer, what: str):
        if status in (200, 201):
            return answer
        if status == 404:
            raise InputError(f"{what}: {self._why(answer)}")
        if status in (400, 413):
            raise InputError(f"{what}: {self._why(answer)}")
        raise HarnessError(f"{what}: passk serve answered {status}: {self._why(answer)}")

    def create(self, ref: str, lifetime_s: float = 7200, name: str | None = None, workdir: str = "/testbed",
               env: dict | None = None) -> str:
        body = {"image": ref, "lifetime_s": max(1.0, min(float(lifetime_s), 24 * 3600)), "workdir": workdir,
                **({"env": env} if env else {}), **({"name": name} if name else {})}
        deadline = time.monotonic() + self.queue_s
        while True:
            status, answer = self._call("POST", "/v1/sessions", body, timeout=900)
            if status != 429:
                break
            wait = float(answer.get("_retry_after") or 5)
            if time.monotonic() + wait > deadline:
                raise HarnessError(f"passk serve at {self.url[:200]} is at its capacity of sessions; waited "
                                   f"{self.queue_s:.0f} s (PASSK_QUEUE_S): {self._why(answer)}")
            time.sleep(wait)
        if status == 400 and "no row" in self._why(answer):
            raise UnknownImage(self._why(answer))
        return self._ok(status, answer, "a session")["id"]

    def find(self, ref: str) -> Found | None:
        status, answer = self._call("GET", "/v1/sessions/" + urllib.parse.quote(ref, safe=""))
        if status == 404:
            return None
        a = self._ok(status, answer, ref[:80])
        return Found(a["id"], bool(a.get("running", True)), a.get("workdir") or "/testbed", a.get("instance_id", ""))

    def exists(self, ref: str) -> bool:
        return self.find(ref) is not None

    def exec(self, sid: str, argv: list[str], workdir: str = "/testbed", env: dict | None = None,
             timeout_s: float | None = None, limit: int = 16 << 20, sink=None, stop=None,
             root: bool = False) -> tuple[int, bytes]:
        body = {"argv": list(argv), "cwd": workdir, "max_output_bytes": min(int(limit), 16 << 20),
                **({"root": True} if root else {}),
                **({"env": env} if env else {}), **({"timeout_s": float(timeout_s)} if timeout_s else {})}
        status, answer = self._call("POST", f"/v1/sessions/{urllib.parse.quote(sid, safe='')}/exec", body,
                                    timeout=(float(timeout_s) if timeout_s else 24 * 3600) + CONNECT_MARGIN_S)
        a = self._ok(status, answer, sid[:80])
        data = base64.b64decode(a.get("output_b64") or "")
        if sink is not None:
            sink(data)
            data = b""
        return int(a["exit_code"]), data

    def write_file(self, sid: str, path: str, data: bytes, mode: int = 0o644) -> None:
        self._ok(*self._call("PUT", f"/v1/sessions/{urllib.parse.quote(sid, safe='')}/files",
                             {"path": path, "content_b64": base64.b64encode(data).decode(), "mode": mode}), path[:200])

    def read_file(self, sid: str, path: str, limit: int = 64 << 20) -> bytes:
        a = self._ok(*self._call("GET", f"/v1/sessions/{urllib.parse.quote(sid, safe='')}/files",
                                 query={"path": path}), path[:200])
        return base64.b64decode(a["content_b64"])[:limit]

    def diff(self, sid: str) -> str:
        return self._ok(*self._call("GET", f"/v1/sessions/{urllib.parse.quote(sid, safe='')}/diff", timeout=600),
                        sid[:80])["diff"]

    def grade(self, sid: str, reward: str = "binary", close: bool = False) -> dict:
        return self._ok(*self._call("POST", f"/v1/sessions/{urllib.parse.quote(sid, safe='')}/grade",
                                    {"reward": reward, "close": close}, timeout=4000), sid[:80])

    def remove(self, sid: str) -> bool:
        status, answer = self._call("DELETE", "/v1/sessions/" + urllib.parse.quote(sid, safe=""))
        return bool(self._ok(status, answer, sid[:80]).get("closed"))

    def running(self) -> int:
        return len(self._ok(*self._call("GET", "/v1/sessions"), "sessions")["sessions"])

    def sweep(self, idle_s: float = 0) -> list:   # the service sweeps its own
        return []
