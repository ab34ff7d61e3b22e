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
    server = uvicorn.Server(config)
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
