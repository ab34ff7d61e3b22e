"""The few calls of Docker's Engine API that an agent's command needs (a container's facts, an exec made,
started and its exit status read), spoken over the engine's unix socket with the standard library. Why not
the Docker SDK here: passk-docker runs once per agent command, and importing the SDK (with requests and
urllib3) costs more than the command's whole round trip; everything else in passk keeps the SDK.

DOCKER_HOST unset or unix://PATH: this client; anything else (tcp, ssh, TLS): the SDK, behind the same calls
(sdk_api below)."""

from __future__ import annotations

import json
import os
import socket
import urllib.parse

API = "/v1.41"      # Docker 20.10 and later answer it
TIMEOUT_S = 120.0


class EngineError(Exception):
    """The engine refused a call: its HTTP status and message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.explanation = status, message


class NotFound(EngineError):
    pass


def _socket_path() -> str | None:
    host = os.environ.get("DOCKER_HOST", "")
    if not host:
        return "/var/run/docker.sock"
    if host.startswith("unix://"):
        return host[len("unix://"):]
    return None


class RawAPI:
    """inspect_container, exec_create, exec_start(socket=True), exec_inspect, kill: as the SDK's low-level API
    names them, over the unix socket."""

    def __init__(self, path: str):
        self.path = path

    def _connect(self) -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(TIMEOUT_S)
        s.connect(self.path)
        return s

    def _send(self, s: socket.socket, method: str, url: str, body: dict | None, upgrade: bool = False) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        head = [f"{method} {API}{url} HTTP/1.1", "Host: docker", f"Content-Length: {len(data)}"]
        if body is not None:
            head.append("Content-Type: application/json")
        head += ["Connection: Upgrade", "Upgrade: tcp"] if upgrade else ["Connection: close"]
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)

    @staticmethod
    def _head(s: socket.socket) -> tuple[int, dict, bytes]:
        """The status line and headers; what of the body came with them."""
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise EngineError(0, "the engine closed the connection")
            buf += chunk
            if len(buf) > 1 << 20:
                raise EngineError(0, "the engine's answer has no end of headers")
        head, rest = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
        return status, headers, rest

    def _call(self, method: str, url: str, body: dict | None = None):
        s = self._connect()
        try:
            self._send(s, method, url, body)
            status, headers, rest = self._head(s)
            chunks = [rest]
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            s.close()
        raw = b"".join(chunks)
        if headers.get("transfer-encoding", "").lower() == "chunked":
            raw = _dechunk(raw)
        if status >= 400:
            try:
                message = json.loads(raw).get("message", "")
            except ValueError:
                message = raw[:300].decode("utf-8", "replace")
            raise (NotFound if status == 404 else EngineError)(status, message)
        return json.loads(raw) if raw.strip() else None

    def inspect_container(self, ref: str) -> dict:
        return self._call("GET", f"/containers/{urllib.parse.quote(ref, safe='')}/json")

    def exec_create(self, cid: str, cmd: list[str], stdin: bool = False, user: str = "", workdir: str | None = None,
                    environment: list[str] | None = None) -> dict:
        body = {"Cmd": list(cmd), "AttachStdin": bool(stdin), "AttachStdout": True, "AttachStderr": True,
                "Tty": False, "User": user}
        if workdir:
            body["WorkingDir"] = workdir
        if environment:
            body["Env"] = list(environment)
        return self._call("POST", f"/containers/{urllib.parse.quote(cid, safe='')}/exec", body)

    def exec_start(self, exec_id: str, socket: bool = True):   # noqa: A002 - the SDK's name
        """The exec started, its multiplexed stream on the returned socket (Docker's hijacked connection)."""
        s = self._connect()
        self._send(s, "POST", f"/exec/{exec_id}/start", {"Detach": False, "Tty": False}, upgrade=True)
        status, _, rest = self._head(s)
        if status not in (101, 200):
            s.close()
            raise (NotFound if status == 404 else EngineError)(status, f"exec start answered {status}")
        return _Prefixed(s, rest)

    def exec_inspect(self, exec_id: str) -> dict:
        return self._call("GET", f"/exec/{exec_id}/json")

    def kill(self, cid: str, signal: str = "SIGKILL") -> None:
        self._call("POST", f"/containers/{urllib.parse.quote(cid, safe='')}/kill?signal={urllib.parse.quote(signal)}")


class _Prefixed:
    """A socket whose first bytes were already read with the headers: recv gives those first."""

    def __init__(self, sock: socket.socket, first: bytes):
        self._inner, self._first = sock, first

    def recv(self, n: int) -> bytes:
        if self._first:
            out, self._first = self._first[:n], self._first[n:]
            return out
        return self._inner.recv(n)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _dechunk(raw: bytes) -> bytes:
    out, i = bytearray(), 0
    while i < len(raw):
        j = raw.find(b"\r\n", i)
        if j < 0:
            break
        size = int(raw[i:j].split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += raw[j + 2:j + 2 + size]
        i = j + 2 + size + 2
    return bytes(out)


class _SDK:
    """The SDK's low-level API behind the same calls, its errors as this module's."""

    def __init__(self):
        from harness.execution.sandbox.docker import connect
        self._api = connect().api

    def __getattr__(self, name):
        import docker.errors
        fn = getattr(self._api, name)

        def call(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except docker.errors.NotFound as e:
                raise NotFound(404, str(e.explanation or e)) from None
            except docker.errors.APIError as e:
                raise EngineError(e.status_code or 0, str(e.explanation or e)) from None
        return call


_api = None


def api():
    """The engine's API for sandbox calls: the raw unix-socket client where it can be, else the SDK's."""
    global _api
    if _api is None:
        path = _socket_path()
        _api = RawAPI(path) if path else _SDK()
    return _api
