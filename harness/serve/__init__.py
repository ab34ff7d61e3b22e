"""`passk serve`: passk's sandbox as an HTTP service for training loops and evaluation services.

    passk serve --port 8080 --workers 2 [--problems FILE ...] [--token T] [--executor ray]

service.py holds the executors and the admission rule, bodies.py and fusion.py read the requests, app.py
is the HTTP layer, reward.py the function a trainer (verl) calls. docs/serve.md is the reference."""

from __future__ import annotations

import ipaddress
import signal
import sys

from harness.core.errors import InputError


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(host: str, port: int, service, token: str | None = None, log_level: str = "warning",
          grace_s: float = 30.0, ready=None) -> None:
    """Start the service's executors, then answer HTTP until SIGTERM or Ctrl-C: new connections stop, the
    requests in flight get up to `grace_s` to finish, then what is queued is cancelled (those rows say so),
    what runs finishes, and every container is removed."""
    import uvicorn

    from harness.serve.app import build_app
    if not is_loopback(host) and not token:
        raise InputError(f"--host {host} is not a loopback address: set --token (a bearer token every request "
                         "must carry), or listen on 127.0.0.1")
    facts = service.start()
    app = build_app(service, token)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                            timeout_graceful_shutdown=grace_s, lifespan="off")
    server = _Server(config, service, grace_s)
    print(f"passk serve: listening on http://{host}:{port} ({service.settings.workers} workers, "
          f"{facts.get('runtime', service.settings.runtime)}, {len(service.problems)} problems preloaded)",
          file=sys.stderr, flush=True)
    if ready is not None:
        ready()
    # uvicorn handles SIGTERM and SIGINT while it serves, then raises them again under the handlers that
    # were in place before: SIGTERM's is made a no-op here so that the stop below runs (containers removed)
    # and the process ends with 0; SIGINT's stays KeyboardInterrupt (the CLI's exit 130), after the stop.
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        server.run()
    finally:
        service.close()
        print("passk serve: stopped; containers removed", file=sys.stderr, flush=True)


def _stop_margin(grace_s: float) -> float:
    """When, after a stop, the service ends what still runs: before the HTTP server's own grace ends (it
    then drops the requests it still holds, an HTTP 500 for each), with time for them to answer."""
    return max(0.0, grace_s - min(2.0, grace_s / 2))


class _Server:
    """uvicorn's server, and the service's end of a stop's grace: at _stop_margin after the first stop
    signal, every candidate still queued or running is ended, so that each request in flight answers with its
    rows (`error service_stopping` for what did not finish) before uvicorn gives up on it."""

    def __new__(cls, config, service, grace_s: float):
        import threading

        import uvicorn

        class Server(uvicorn.Server):
            def handle_exit(self, sig, frame):
                first = not self.should_exit
                super().handle_exit(sig, frame)
                if first:
                    timer = threading.Timer(_stop_margin(grace_s), service.stop_work)
                    timer.daemon = True
                    timer.start()
        return Server(config)
