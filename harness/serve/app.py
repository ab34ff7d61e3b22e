"""The HTTP face of `passk serve`: Starlette routes over a Service (service.py), run by uvicorn.

Why Starlette and uvicorn: an ASGI toolkit and server that are small (their dependencies are anyio and
h11), widely used and maintained, and give streaming responses and a clean shutdown on SIGTERM; passk checks
its requests itself (bodies.py: one message naming the field), so a validation framework would add
nothing, and the OpenAPI schema is written here, next to the routes it describes (openapi.py).

Routes: POST /v1/evaluate (passk's own: rows and rewards, JSON or NDJSON), POST /run_code (SandboxFusion's),
GET /v1/problems, GET /health, GET /metrics (Prometheus), GET /openapi.json."""

from __future__ import annotations

import asyncio
import hmac
import json
import time

import anyio
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.core.errors import HarnessError, InputError
from harness.core.version import __version__
from harness.records.results import ROW_FIELDS
from harness.serve import fusion, instruct, nemo, piston
from harness.serve.bodies import Candidate, parse_evaluate, reward_of
from harness.serve.openapi import schema
from harness.serve.service import Busy, Service, Unavailable
from harness.serve.sessions import NotFound

POLL_S = 0.2   # how often a waiting request looks for its client's disconnect and its deadline


class _Refused(Exception):
    def __init__(self, code: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.code, self.headers = code, headers or {}


def _error(code: int, message: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=code, headers=headers)


async def _read_json(request: Request, limit: int):
    """The body as JSON, read no further than the limit (413 past it: the service never holds more)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _Refused(413, f"the body is {declared} bytes; the limit is {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _Refused(413, f"the body is over the {limit} byte limit")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError) as e:
        raise _Refused(400, f"the body is not JSON: {e}"[:300]) from None
    except RecursionError:
        raise _Refused(400, "the body is nested too deeply") from None
    _check_json(body)
    return body


JSON_DEPTH = 64   # arrays and objects nested in a request body, at most (real requests: a handful)


def _check_json(body) -> None:
    """A request body's structure, walked without recursion: nested at most JSON_DEPTH, and every string
    (keys too) valid Unicode text (a lone surrogate such as \ud800 cannot be written as UTF-8)."""
    stack = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise _Refused(400, "the body holds a string that is not valid Unicode (a lone surrogate)") from None
        elif isinstance(value, (list, dict)):
            if depth > JSON_DEPTH:
                raise _Refused(400, f"the body is nested more than {JSON_DEPTH} deep")
            items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
            for k, v in items:
                if k is not None:
                    stack.append((k, depth))
                stack.append((v, depth + 1))


def _quiet(waiter) -> None:
    """Mark an asyncio wrapper's exception as seen (asyncio would log 'never retrieved' for each)."""
    if not waiter.cancelled():
        waiter.exception()


LATE_REASONS = ("deadline", "machine_stall")   # an error row its caller should retry later: 504, else 503


def _retry_status(row) -> int:
    """The status of an answer for an `error` row (never a verdict): 504 when time or the machine's load
    stopped it, 503 when the sandbox failed."""
    return 504 if row.reason in LATE_REASONS else 503


def row_dict(row, key, reward_mode: str) -> dict:
    out = {name: getattr(row, name) for name in ROW_FIELDS}
    out["key"] = key
    out["reward"] = reward_of(row, reward_mode)
    return out


def build_app(service: Service, token: str | None = None) -> Starlette:
    options = service.options

    def authorised(request: Request) -> bool:
        if not token:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())

    def endpoint(route: str, open_: bool = False):
        """A route's handler with what every route does: the token, refusals as JSON, the metrics."""
        def wrap(handler):
            async def run(request: Request):
                started = time.monotonic()
                try:
                    if not open_ and not authorised(request):
                        response = _error(401, "a bearer token is required (Authorization: Bearer ...)",
                                          {"WWW-Authenticate": "Bearer"})
                    else:
                        response = await handler(request)
                except _Refused as e:
                    response = _error(e.code, str(e), e.headers)
                except NotFound as e:      # a session this service does not have
                    response = _error(404, str(e))
                except InputError as e:   # a BadRequest, or a problem or program passk refuses
                    response = _error(400, str(e))
                except Busy as e:
                    response = _error(429, str(e), {"Retry-After": str(e.retry_after_s)})
                except Unavailable as e:
                    response = _error(503, str(e), {"Retry-After": "5"})
                except HarnessError as e:   # the sandbox failed (an instance that did not set up): said, not a 500
                    response = _error(503, str(e)[:2000])
                except ClientDisconnect:
                    response = Response(status_code=499)
                service.metrics.request(route, response.status_code, time.monotonic() - started)
                return response
            return run
        return wrap

    def queue_all(problem, candidates, limits, start_by=None, overflow_at=None) -> list:
        """Queue every candidate (in a worker thread: the first job of a language starts its executor). A
        refusal of one (a language passk does not run) cancels the others."""
        return queue_pairs([(problem, c) for c in candidates], limits, start_by, overflow_at)

    def queue_pairs(pairs, limits, start_by=None, overflow_at=None) -> list:
        """queue_all's work for (problem, candidate) pairs: each admitted candidate released as it ends."""
        futures = []
        try:
            for problem, c in pairs:
                futures.append(service.submit(problem, c.program, language=c.language, limits=limits,
                                              fields=c.fields, start_by=start_by, overflow_at=overflow_at))
        except BaseException:
            for f in futures:
                f.cancel()
            service.release(len(pairs) - len(futures))
            raise
        for f in futures:
            f.add_done_callback(lambda _f: service.release(1))
        return futures

    async def submit_all(problem, candidates, limits, start_by=None, overflow_at=None):
        return await anyio.to_thread.run_sync(queue_all, problem, candidates, limits, start_by, overflow_at)

    def accept_evaluate(body):
        """/v1/evaluate's request read, admitted and queued, in one worker thread (one hop off the event
        loop a request, not one to read it and another to queue it)."""
        req = parse_evaluate(body, service.problems, service.limits, options)
        limits = service.cap_limits(req.limits) if req.limits is not None else None
        service.admit(len(req.candidates))
        return req, queue_all(req.problem, req.candidates, limits)

    async def watch(request: Request, futures: list, deadline: float, started: float, on_done=None):
        """Wait for the futures; cancel what has not started when the client goes or the deadline passes.
        Returns why it stopped early ("client_gone", "deadline") or None."""
        pending = {asyncio.wrap_future(f): i for i, f in enumerate(futures)}
        for waiter in pending:   # one that ends after the watch stopped (aborted): its outcome is read elsewhere
            waiter.add_done_callback(_quiet)
        why = None
        while pending:
            done, _ = await asyncio.wait(list(pending), timeout=POLL_S, return_when=asyncio.FIRST_COMPLETED)
            for d in done:
                i = pending.pop(d)
                if on_done is not None:
                    await on_done(i)
            if not pending:
                break
            if time.monotonic() - started > deadline:
                why = "deadline"
            elif await request.is_disconnected():
                why = "client_gone"
            if why:
                cancel(futures)
                return why
        return None

    async def settle(request: Request, futures: list, answer_by: float, started: float):
        """watch() until the futures end or `answer_by` (seconds from `started`); when the deadline stopped it,
        also wait for what it ended (their rows say `error deadline`). Why it stopped early, or None."""
        why = await watch(request, futures, answer_by, started)
        if why is not None and why != "client_gone":
            await asyncio.wait([asyncio.wrap_future(f) for f in futures])
        return why

    def cancel(futures: list) -> None:
        """Cancel what has not started and end what runs (its container killed: a request never holds a
        worker past its deadline or its client), counting each candidate once however often it is asked."""
        cancelled = sum(1 for f in futures if not f.cancelled() and f.cancel())
        if not all(f.done() for f in futures):
            cancelled += service.abort(futures)
        with service.metrics.lock:
            service.metrics.cancelled += cancelled

    async def run_single(request, problem, program, language, limits, answer_by, started, start_by=None,
                         overflow_at=None):
        """One program of another service's API, admitted, queued and waited for until `answer_by` (seconds
        from `started`): its row, or None when the client went."""
        service.admit(1)
        futures = await submit_all(problem, (Candidate(program, language, 0, {}),), limits, start_by, overflow_at)
        why = await settle(request, futures, answer_by, started)
        if why == "client_gone":
            return None
        return service.outcome(futures[0], problem, 0, started, why or "not_run")

    @endpoint("/v1/evaluate")
    async def evaluate(request: Request):
        started = time.monotonic()
        body = await _read_json(request, options.max_body_bytes)
        req, futures = await anyio.to_thread.run_sync(accept_evaluate, body)
        problem = req.problem
        # the answer leaves before the caller's deadline (as /run_code's), so that a client that waits exactly
        # `deadline_s` gets the rows that finished and `error deadline` for the rest, not its own timeout
        answer_by = fusion.answer_by(req.deadline_s)

        def row_at(i: int, why: str = "not_run"):
            row = service.outcome(futures[i], problem, i, started, why)
            return row_dict(row, req.candidates[i].key, req.reward)

        if req.stream:
            async def lines():
                queue: asyncio.Queue = asyncio.Queue()

                async def put(i):
                    await queue.put(i)
                task = asyncio.ensure_future(watch(request, futures, answer_by, started, put))
                sent = set()
                try:
                    while len(sent) < len(futures):
                        if task.done() and queue.empty():
                            why = task.result() or "not_run"
                            for i in range(len(futures)):
                                if i not in sent and futures[i].done():
                                    sent.add(i)
                                    yield json.dumps(row_at(i, why), ensure_ascii=False) + "\n"
                            if len(sent) < len(futures):   # running ones finish within their limits
                                await asyncio.sleep(POLL_S)
                            continue
                        try:
                            i = await asyncio.wait_for(queue.get(), timeout=POLL_S)
                        except asyncio.TimeoutError:
                            continue
                        if i not in sent:
                            sent.add(i)
                            yield json.dumps(row_at(i), ensure_ascii=False) + "\n"
                finally:   # the stream ended, or its client went: nothing more runs for it
                    cancel(futures)
                    task.cancel()
            return StreamingResponse(lines(), media_type="application/x-ndjson")

        why = await settle(request, futures, answer_by, started)   # the deadline: `error deadline` for what did not run
        if why == "client_gone":
            return Response(status_code=499)
        rows = [row_at(i, why or "not_run") for i in range(len(futures))]
        counted = [r for r in rows if r["status"] != "error"]
        summary = {"candidates": len(rows), "passed": sum(r["status"] == "passed" for r in rows),
                   "errors": len(rows) - len(counted),
                   "mean_reward": (sum(r["reward"] for r in counted) / len(counted)) if counted else None}
        return JSONResponse({"task_id": problem.task_id, "reward": req.reward, "summary": summary, "rows": rows})

    @endpoint("/run_code")
    async def run_code(request: Request):
        started = time.monotonic()
        body = await _read_json(request, options.max_body_bytes)
        problem, program, language, limits = fusion.parse_run_code(body, service.limits, options.max_code_bytes,
                                                                   options.max_memory_mb)
        limits = service.cap_limits(limits)
        plan = fusion.deadline(request.headers.get(fusion.DEADLINE_HEADER), language, limits,
                               options.deadline_s)
        row = await run_single(request, problem, program, language, limits, plan.answer_by_s, started,
                               started + plan.start_by_s, started + plan.overflow_after_s)
        if row is None:
            return Response(status_code=499)
        if row.status == "error" and row.reason == "deadline":
            # not started (or not finished) in time for the caller's own deadline: the status its client
            # retries (SandboxFusion's clients, verl's reward), at once rather than after the client gave up
            return _error(504, f"/run_code could not run the program within the caller's deadline "
                          f"({plan.deadline_s:g} s, {plan.source}): every worker was busy; try again",
                          {"Retry-After": str(service.retry_after())})
        if row.status == "error" and row.reason == "machine_stall":   # the load stopped it, not the program
            return _error(504, f"/run_code: {row.detail}"[:500], {"Retry-After": str(service.retry_after())})
        return JSONResponse(fusion.response(row, language))

    async def test_program_route(request: Request, stdio: bool):
        """open-instruct's /test_program and /test_program_stdio (harness/serve/instruct.py)."""
        started = time.monotonic()
        body = await _read_json(request, options.max_body_bytes)
        problems, program, limits = instruct.parse(body, service.limits, options.max_code_bytes, stdio)
        limits = service.cap_limits(limits)
        answer_by = fusion.answer_by(min(instruct.client_wait_s(body), options.deadline_s))
        runnable = [p for p in problems if p is not None]
        service.admit(len(runnable))
        start_by = started + fusion.start_by(answer_by, float(limits.timeout_s))
        futures = await anyio.to_thread.run_sync(queue_pairs, [(p, Candidate(program, None, 0, {})) for p in runnable],
                                                  limits, start_by)
        why = await settle(request, futures, answer_by, started)
        if why == "client_gone":
            return Response(status_code=499)
        rows = iter([service.outcome(f, p, 0, started, why or "not_run") for f, p in zip(futures, runnable)])
        rows = [None if p is None else next(rows) for p in problems]
        errors = [r for r in rows if r is not None and r.status == "error"]
        if errors:   # the sandbox's fault or the deadline's, never a failed test: the client retries these
            return _error(max(_retry_status(r) for r in errors), f"{len(errors)} of {len(rows)} tests could not be run: "
                          f"{errors[0].reason}: {errors[0].detail}"[:500], {"Retry-After": str(service.retry_after())})
        return JSONResponse(instruct.answer(rows))

    @endpoint("/test_program")
    async def test_program(request: Request):
        return await test_program_route(request, stdio=False)

    @endpoint("/test_program_stdio")
    async def test_program_stdio(request: Request):
        return await test_program_route(request, stdio=True)

    @endpoint("/v1/problems")
    async def problems(request: Request):
        return JSONResponse({"problems": [{"id": tid, "format": p.format, "channel": p.channel, "language": p.language}
                                          for tid, p in service.problems.items()]})

    @endpoint("/health", open_=True)
    async def health(request: Request):
        sandbox = await anyio.to_thread.run_sync(service.sandbox_state)
        state = "stopping" if service.stopping else ("ok" if sandbox == "ok" else "degraded")
        return JSONResponse({"status": state, "sandbox": sandbox, "version": __version__, "run_id": service.run_id,
                             "queued": service.queued, "running": service.running(), "queue_limit": options.max_queue},
                            status_code=200 if state == "ok" else 503)

    @endpoint("/execute")
    async def execute(request: Request):
        """NeMo-Skills' /execute (harness/serve/nemo.py): stateless python3, pypy3 and shell."""
        started = time.monotonic()
        body = await _read_json(request, options.max_body_bytes)
        problem, program, language, limits, asked, cap = nemo.parse(body, service.limits, options.max_code_bytes,
                                                                    options.max_memory_mb)
        limits = service.cap_limits(limits)
        answer_by = fusion.answer_by(min(float(limits.timeout_s) + nemo.CLIENT_MARGIN_S, options.deadline_s))
        start_by = started + fusion.start_by(answer_by, float(limits.timeout_s))
        row = await run_single(request, problem, program, language, limits, answer_by, started, start_by)
        if row is None:
            return Response(status_code=499)
        if row.status == "error":   # never an answer the program did not earn; NeMo-Skills' client reads any status's body
            message = f"passk could not run the program ({row.reason}: {row.detail}); not the program's doing, retry"
            return JSONResponse({"error": message[:500], "process_status": "error", "stdout": "",
                                 "stderr": message[:500] + "\n"}, status_code=_retry_status(row),
                                headers={"Retry-After": str(service.retry_after())})
        return JSONResponse(nemo.response(row, asked, float(limits.timeout_s), cap))

    @endpoint("/api/v2/runtimes")
    async def piston_runtimes(request: Request):
        return JSONResponse(piston.runtimes())

    @endpoint("/api/v2/execute")
    async def piston_execute(request: Request):
        """Piston's /api/v2/execute (harness/serve/piston.py): one file on a stdin."""
        started = time.monotonic()
        body = await _read_json(request, options.max_body_bytes)
        try:
            problem, program, language, limits, _ = piston.parse(body, service.limits, options.max_code_bytes,
                                                                     options.max_memory_mb)
        except InputError as e:   # Piston's refusals carry `message`
            return JSONResponse({"message": str(e)}, status_code=400)
        limits = service.cap_limits(limits)
        answer_by = min(options.deadline_s, float(limits.compile_timeout_s) + float(limits.timeout_s) + 30.0)
        row = await run_single(request, problem, program, language, limits, answer_by, started)
        if row is None:
            return Response(status_code=499)
        if row.status == "error":   # never a stage the program did not run: Piston's clients retry a non-200
            return JSONResponse({"message": f"passk could not run the program ({row.reason}): {row.detail}"[:500]},
                                status_code=_retry_status(row), headers={"Retry-After": str(service.retry_after())})
        return JSONResponse(piston.response(row, language))

    @endpoint("/v1/ping", open_=True)
    async def ping(request: Request):   # SandboxFusion's liveness probe: the JSON string "pong"
        return JSONResponse("pong")

    @endpoint("/metrics")
    async def metrics(request: Request):
        return Response(service.metrics_text(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @endpoint("/openapi.json", open_=True)
    async def openapi(request: Request):
        return JSONResponse(schema())

    # -- sessions (serve/sessions.py): an instance's sandbox, command by command

    def pool():
        if service.sessions is None:
            raise _Refused(404, "this service offers no sessions (passk serve --sessions N; an instance's "
                                "needs its repository rows preloaded: --problems ROWS --repos DIR)")
        return service.sessions

    async def in_thread(fn, *args):
        return await anyio.to_thread.run_sync(fn, *args)

    @endpoint("/v1/sessions")
    async def sessions_root(request: Request):
        from harness.serve.sessions import parse_create
        p = pool()
        if request.method == "GET":
            return JSONResponse({"sessions": p.listing(), "capacity": p.capacity, "idle_s": p.idle_s})
        req = parse_create(await _read_json(request, 1 << 20))
        made = await in_thread(lambda: p.create(req["ref"], req["lifetime_s"], req["workdir"], req["env"], req["name"],
                                                req["language"]))
        return JSONResponse(made, status_code=201)

    @endpoint("/v1/sessions/{id}")
    async def session_one(request: Request):
        p = pool()
        ref = request.path_params["id"]
        if request.method == "DELETE":
            return JSONResponse({"closed": await in_thread(p.close, ref)})
        return JSONResponse(p.describe(await in_thread(p.get, ref)))

    @endpoint("/v1/sessions/{id}/exec")
    async def session_exec(request: Request):
        import threading

        from harness.serve.sessions import parse_exec
        p = pool()
        ref = request.path_params["id"]
        r = p.get(ref)
        req = parse_exec(await _read_json(request, 2 << 20), max(1.0, r.expires - time.time()))
        stop = threading.Event()
        task = asyncio.ensure_future(in_thread(p.exec, ref, req["argv"], req["cwd"], req["env"], req["timeout_s"],
                                               req["limit"], stop, req["root"]))
        while not task.done():   # a caller that hangs up ends its command (its whole process group)
            await asyncio.wait([task], timeout=POLL_S)
            if not task.done() and await request.is_disconnected():
                stop.set()
        return JSONResponse(task.result())

    @endpoint("/v1/sessions/{id}/files")
    async def session_files(request: Request):
        import base64

        from harness.serve.sessions import MAX_FILE_BYTES, parse_write
        p = pool()
        ref = request.path_params["id"]
        if request.method == "GET":
            path = request.query_params.get("path", "")
            if not path.startswith("/"):
                raise InputError("path: an absolute path (?path=/testbed/...)")
            data = await in_thread(p.read_file, ref, path)
            return JSONResponse({"path": path, "size": len(data), "content_b64": base64.b64encode(data).decode()})
        req = parse_write(await _read_json(request, MAX_FILE_BYTES * 4 // 3 + (1 << 16)))
        await in_thread(p.write_file, ref, req["path"], req["data"], req["mode"])
        return JSONResponse({"path": req["path"], "size": len(req["data"])})

    @endpoint("/v1/sessions/{id}/diff")
    async def session_diff(request: Request):
        p = pool()
        return JSONResponse({"diff": await in_thread(p.diff, request.path_params["id"])})

    @endpoint("/v1/sessions/{id}/grade")
    async def session_grade(request: Request):
        started = time.monotonic()
        p = pool()
        ref = request.path_params["id"]
        body = await _read_json(request, 1 << 16)
        if not isinstance(body, dict) or set(body) - {"reward", "close"}:
            raise InputError("the body: {\"reward\": \"binary\" | \"fraction\", \"close\": true | false}")
        mode = body.get("reward", "binary")
        if mode not in ("binary", "fraction"):
            raise InputError("reward: binary or fraction")
        r = p.get(ref)
        patch = await in_thread(p.diff, ref)     # a plain environment's session: 400, it has nothing to grade
        if body.get("close"):
            await in_thread(p.close, ref)
        problem = service.problems[r.instance]
        row = await run_single(request, problem, patch, None, None, fusion.answer_by(options.deadline_s), started)
        if row is None:
            return Response(status_code=499)
        return JSONResponse({**row_dict(row, r.id, mode), "patch": patch})

    routes = [Route("/v1/evaluate", evaluate, methods=["POST"]), Route("/run_code", run_code, methods=["POST"]),
              Route("/v1/problems", problems, methods=["GET"]), Route("/health", health, methods=["GET"]),
              Route("/metrics", metrics, methods=["GET"]), Route("/openapi.json", openapi, methods=["GET"]),
              Route("/test_program", test_program, methods=["POST"]), Route("/v1/ping", ping, methods=["GET"]),
              Route("/execute", execute, methods=["POST"]),
              Route("/api/v2/runtimes", piston_runtimes, methods=["GET"]),
              Route("/api/v2/execute", piston_execute, methods=["POST"]),
              Route("/test_program_stdio", test_program_stdio, methods=["POST"]),
              Route("/v1/sessions", sessions_root, methods=["GET", "POST"]),
              Route("/v1/sessions/{id}", session_one, methods=["GET", "DELETE"]),
              Route("/v1/sessions/{id}/exec", session_exec, methods=["POST"]),
              Route("/v1/sessions/{id}/files", session_files, methods=["GET", "PUT"]),
              Route("/v1/sessions/{id}/diff", session_diff, methods=["GET"]),
              Route("/v1/sessions/{id}/grade", session_grade, methods=["POST"])]
    return Starlette(routes=routes)
