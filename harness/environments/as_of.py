"""The package index as it stood on a day: a local index (PEP 691's JSON simple API, on 127.0.0.1) that
serves PyPI's files for a package less every file uploaded after the day, so that pip resolves what it
would have resolved then. A spec-resolved repository environment resolves as of the day SWE-bench's
official environments were exported (recipes.RESOLVED_AS_OF): the newest releases of today are not the
ones its harness installed (docutils 0.22 dropped the `roman` module sphinx 3.x imports).

pip runs with this index only: the machine's own configuration (extra indexes, find-links, constraints)
is left out, since a file from it would carry no upload time to bound."""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UPSTREAM = "https://pypi.org/simple/"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
MAX_PAGE = 64 << 20          # an upstream page larger than this is refused (numpy's is ~4 MiB)
_NAME = re.compile(r"^/simple/([a-z0-9](?:[a-z0-9._-]{0,200}[a-z0-9])?)/?$")


def _day_end(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=23, minute=59, second=59, tzinfo=timezone.utc)


def _uploaded(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def bounded_page(page: dict, until: datetime) -> dict:
    """A JSON simple page less the files uploaded after `until`; a file with no upload time is left out
    too (nothing says it was there then)."""
    files = [f for f in page.get("files") or [] if isinstance(f, dict)
             and (t := _uploaded(f.get("upload-time"))) is not None and t <= until]
    out = {"meta": {"api-version": "1.0"}, "name": page.get("name", ""), "files": files}
    return out


class BoundedIndex:
    """A context manager: a local index serving UPSTREAM's pages bounded to the end of `day` (YYYY-MM-DD).
    `pip_args` and `pip_env(environ)` make a pip command use it and nothing else."""

    def __init__(self, day: str, upstream: str = UPSTREAM):
        self.day = day
        self.until = _day_end(day)
        self.upstream = upstream.rstrip("/") + "/"
        self._pages: dict[str, tuple[int, bytes]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def _page(self, name: str) -> tuple[int, bytes]:
        with self._lock:
            if name in self._pages:
                return self._pages[name]
        req = urllib.request.Request(self.upstream + name + "/", headers={"Accept": JSON_TYPE})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                raw = resp.read(MAX_PAGE + 1)
            if len(raw) > MAX_PAGE:
                got = (502, b"")
            else:
                got = (200, json.dumps(bounded_page(json.loads(raw), self.until)).encode())
        except urllib.error.HTTPError as e:
            got = (404 if e.code == 404 else 502, b"")
        except (OSError, ValueError):
            got = (502, b"")
        with self._lock:
            if got[0] != 502:            # a passing fault is tried again on pip's next request
                self._pages[name] = got
        return got

    def __enter__(self) -> "BoundedIndex":
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):   # noqa: N802 (http.server's name)
                m = _NAME.match(self.path.split("?", 1)[0])
                code, body = index._page(re.sub(r"[-_.]+", "-", m.group(1))) if m else (404, b"")
                self.send_response(code)
                self.send_header("Content-Type", JSON_TYPE if code == 200 else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="passk-index", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the index is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/simple/"

    @property
    def pip_args(self) -> list[str]:
        return ["--index-url", self.url]

    @staticmethod
    def pip_env(environ: dict) -> dict:
        """`environ` less what would add packages from elsewhere (the machine's pip configuration: extra
        indexes, find-links, constraints), so that every package comes through the bounded index."""
        env = {k: v for k, v in environ.items()
               if k not in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT", "PIP_NO_INDEX")}
        env["PIP_CONFIG_FILE"] = os.devnull
        return env
