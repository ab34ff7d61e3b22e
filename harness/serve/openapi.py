"""The OpenAPI 3.1 schema `passk serve` serves at /openapi.json: its routes, their bodies and answers. Written
by hand beside the routes (app.py) and the readers of their bodies (bodies.py, fusion.py); tests check that
every route is described and that the examples here are accepted by the service."""

from __future__ import annotations

from harness.core.version import __version__
from harness.records.results import ROW_FIELDS
from harness.serve.bodies import REQUEST_LIMITS, REWARDS

_ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}

EVALUATE_EXAMPLE = {
    "problem": {"format": "humaneval", "record": {
        "task_id": "demo/add", "prompt": "def add(a, b):\n", "entry_point": "add",
        "canonical_solution": "    return a + b\n",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"}},
    "candidates": [{"completion": "    return a + b\n", "key": "right"},
                   {"completion": "    return a - b\n", "key": "wrong"}],
    "reward": "binary",
}
RUN_CODE_EXAMPLE = {"code": "print(int(input()) * 2)", "stdin": "21\n", "language": "python",
                    "run_timeout": 10, "compile_timeout": 10, "memory_limit_MB": 256}

_COMMAND_RESULT = {"type": ["object", "null"], "properties": {
    "status": {"enum": ["Finished", "Error", "TimeLimitExceeded"]},
    "execution_time": {"type": ["number", "null"]}, "return_code": {"type": ["integer", "null"]},
    "stdout": {"type": ["string", "null"]}, "stderr": {"type": ["string", "null"]}}}


def schema() -> dict:
    row = {"type": "object", "description": "A ResultRow (docs/output.md) with the candidate's key and reward.",
           "properties": {**{name: {} for name in ROW_FIELDS},
                          "key": {"type": ["string", "integer"]},
                          "reward": {"type": ["number", "null"],
                                     "description": "null when status is error: the harness's fault, not the candidate's"}}}
    evaluate_body = {"type": "object", "required": ["problem", "candidates"], "properties": {
        "problem": {"oneOf": [
            {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}},
             "description": "a problem preloaded with passk serve --problems"},
            {"type": "object", "required": ["record"], "properties": {
                "record": {"type": ["object", "array"]}, "format": {"type": "string"}},
             "description": "a row of a problem file in any format passk reads from rows (docs/inputs.md)"}]},
        "candidates": {"type": "array", "items": {"oneOf": [
            {"type": "string"},
            {"type": "object", "properties": {"code": {"type": "string"}, "completion": {"type": "string"},
                                              "language": {"type": "string"}, "key": {"type": ["string", "integer"]}}}]}},
        "limits": {"type": "object", "properties": {k: {"type": "number"} for k in REQUEST_LIMITS}},
        "reward": {"enum": list(REWARDS), "default": "binary"},
        "stream": {"type": "boolean", "default": False,
                   "description": "true: one row per line (application/x-ndjson) as each finishes"},
        "deadline_s": {"type": "number"}}}
    run_code_body = {"type": "object", "required": ["code", "language"], "properties": {
        "code": {"type": "string"}, "stdin": {"type": ["string", "null"]}, "language": {"type": "string"},
        "compile_timeout": {"type": "number", "default": 10}, "run_timeout": {"type": "number", "default": 10},
        "memory_limit_MB": {"type": "integer", "default": -1},
        "files": {"type": "object", "description": "must be empty"}, "fetch_files": {"type": "array", "description": "must be empty"}}}
    run_code_answer = {"type": "object", "properties": {
        "status": {"enum": ["Success", "Failed", "SandboxError"]}, "message": {"type": "string"},
        "compile_result": _COMMAND_RESULT, "run_result": _COMMAND_RESULT,
        "executor_pod_name": {"type": ["string", "null"]}, "files": {"type": "object"}}}

    def answers(ok: dict, *codes) -> dict:
        out = {"200": ok}
        texts = {"400": "a bad request (the message names the field)", "401": "no or a wrong bearer token", "404": "no such session (closed, expired, or not this service's)",
                 "413": "the body is over the limit", "429": "the queue is full: retry after Retry-After seconds",
                 "503": "the sandbox cannot run now, or the service is stopping",
                 "504": "not run in time for the caller's deadline (or the machine's load stopped it): retry"}
        for code in codes:
            out[code] = {"description": texts[code], "content": {"application/json": {"schema": _ERROR}}}
        return out

    def test_program(what: str, tests: dict) -> dict:
        """open-instruct's routes (harness/serve/instruct.py)."""
        body = {"type": "object", "required": ["program", "tests"], "properties": {
            "program": {"type": "string"}, "max_execution_time": {"type": "number", "default": 1.0},
            "tests": {"oneOf": [tests, {"type": "string", "description": "the list as JSON, or base64 of zlib "
                                        "of a pickle of plain data"}]}}}
        result = {"type": "object", "properties": {
            "results": {"type": "array", "items": {"type": "integer", "enum": [0, 1]}},
            "runtimes": {"type": "array", "items": {"type": "number"}}}}
        return {"post": {"summary": f"open-instruct's code API: {what}",
                         "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                         "responses": answers({"description": "1/0 and seconds per test (-1.0 where it did not pass)",
                                               "content": {"application/json": {"schema": result}}},
                                              "400", "401", "413", "429", "503", "504")}}

    return {
        "openapi": "3.1.0",
        "info": {"title": "passk serve", "version": __version__,
                 "description": "Candidates run in passk's sandbox; verdicts the candidate cannot forge. docs/serve.md."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": {
            "/v1/evaluate": {"post": {
                "summary": "Run candidates against a problem's tests: one row and reward per candidate",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": evaluate_body, "example": EVALUATE_EXAMPLE}}},
                "responses": answers({"description": "rows in the candidates' order (or NDJSON when stream is true)",
                                      "content": {"application/json": {"schema": {"type": "object", "properties": {
                                          "task_id": {"type": "string"}, "reward": {"type": "string"},
                                          "summary": {"type": "object"}, "rows": {"type": "array", "items": row}}}},
                                          "application/x-ndjson": {"schema": row}}},
                                     "400", "401", "413", "429", "503")}},
            "/run_code": {"post": {
                "summary": "SandboxFusion's /run_code: run a program on a stdin, return what it printed",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": run_code_body, "example": RUN_CODE_EXAMPLE}}},
                "parameters": [{"name": "X-Passk-Deadline-S", "in": "header", "required": False,
                                "description": "seconds the caller waits (default: compile_timeout + run_timeout + 10)",
                                "schema": {"type": "number", "exclusiveMinimum": 0}}],
                "responses": answers({"description": "SandboxFusion's RunCodeResponse",
                                      "content": {"application/json": {"schema": run_code_answer}}},
                                     "400", "401", "413", "429", "503", "504")}},
            "/test_program": test_program("assert statements, each run against the program in its own run",
                                          {"type": "array", "items": {"type": "string"}}),
            "/test_program_stdio": test_program("stdin/stdout pairs, compared by LiveCodeBench's rule", {
                "type": "array", "items": {"type": "object", "required": ["input", "output"], "properties": {
                    "input": {"type": "string"}, "output": {"type": "string"}}}}),
            "/v1/problems": {"get": {"summary": "The preloaded problems",
                                     "responses": answers({"description": "ids, formats, channels"}, "401")}},
            "/health": {"get": {"summary": "Alive, and how full", "security": [],
                                "responses": {"200": {"description": "serving"}, "503": {"description": "stopping"}}}},
            "/metrics": {"get": {"summary": "Prometheus text format",
                                 "responses": answers({"description": "counters, gauges, histograms",
                                                       "content": {"text/plain": {}}}, "401")}},
            "/execute": {"post": {
                "summary": "NeMo-Skills' /execute: python3, pypy3 or shell on a stdin, stateless",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["generated_code", "timeout"], "properties": {
                        "generated_code": {"type": "string"}, "std_input": {"type": "string"},
                        "timeout": {"type": "number"}, "language": {"enum": ["python3", "python", "pypy3", "shell"]},
                        "max_output_characters": {"type": "integer"}, "traceback_verbosity": {"type": "string"}}}}}},
                "responses": answers({"description": "process_status (completed, error, timeout), stdout, stderr",
                                      "content": {"application/json": {"schema": {"type": "object"}}}},
                                     "400", "401", "413", "429", "503", "504")}},
            "/api/v2/runtimes": {"get": {"summary": "Piston's runtimes: every language passk runs on a stdin",
                                         "responses": answers({"description": "language, version, aliases, runtime"},
                                                              "401")}},
            "/api/v2/execute": {"post": {
                "summary": "Piston's execute: one file on a stdin, Piston's fields and statuses",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["language", "version", "files"], "properties": {
                        "language": {"type": "string"}, "version": {"type": "string"},
                        "files": {"type": "array", "maxItems": 1, "items": {"type": "object", "required": ["content"],
                                  "properties": {"name": {"type": "string"}, "content": {"type": "string"},
                                                 "encoding": {"enum": ["utf8", "base64", "hex"]}}}},
                        "stdin": {"type": "string"}, "args": {"type": "array", "maxItems": 0},
                        "compile_timeout": {"type": "number"}, "run_timeout": {"type": "number"},
                        "compile_cpu_time": {"type": "number"}, "run_cpu_time": {"type": "number"},
                        "compile_memory_limit": {"type": "number"}, "run_memory_limit": {"type": "number"}}}}}},
                "responses": answers({"description": "language, version, run (and compile): stdout, stderr, output, "
                                                     "code, signal, message, status, cpu_time, wall_time, memory",
                                      "content": {"application/json": {"schema": {"type": "object"}}}},
                                     "400", "401", "413", "429", "503", "504")}},
            "/v1/ping": {"get": {"summary": "SandboxFusion's liveness probe: \"pong\"", "security": [],
                                 "responses": {"200": {"description": "the JSON string \"pong\""}}}},
            "/openapi.json": {"get": {"summary": "This schema", "security": [],
                                      "responses": {"200": {"description": "OpenAPI 3.1"}}}},
            **_session_paths(answers),
        },
    }


def _session_paths(answers) -> dict:
    """/v1/sessions (serve/sessions.py; docs/agents.md): an instance's sandbox for an agent."""
    sid = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
            "description": "the session's id, an id prefix of 12 or more characters, or its name"}]
    obj = {"type": "object"}

    def body(props: dict, required: list | None = None) -> dict:
        return {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "properties": props, **({"required": required} if required else {})}}}}
    text = {"type": "string"}
    env = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "/v1/sessions": {
            "get": {"summary": "The service's sessions", "responses": answers({"description": "sessions"}, "401", "404")},
            "post": {"summary": "A sandbox of a preloaded SWE-bench instance, set up, or of a plain environment "
                                "(language)",
                     "requestBody": body({"instance_id": text, "image": text, "language": text,
                                          "lifetime_s": {"type": "number"},
                                          "workdir": text, "env": env, "name": text}),
                     "responses": answers({"description": "made (201)"}, "400", "401", "404", "429", "503")}},
        "/v1/sessions/{id}": {
            "parameters": sid,
            "get": {"summary": "One session", "responses": answers({"description": "the session"}, "401", "404")},
            "delete": {"summary": "Close it (again: no error)", "responses": answers({"description": "closed"}, "401")}},
        "/v1/sessions/{id}/exec": {
            "parameters": sid,
            "post": {"summary": "A command in the sandbox, as the agent's user",
                     "requestBody": body({"command": text, "argv": {"type": "array", "items": text}, "cwd": text,
                                          "env": env, "timeout_s": {"type": "number"},
                                          "max_output_bytes": {"type": "integer"}, "root": {"type": "boolean"}}),
                     "responses": answers({"description": "exit_code, output, output_b64, truncated, timed_out",
                                           "content": {"application/json": {"schema": obj}}},
                                          "400", "401", "404", "503")}},
        "/v1/sessions/{id}/files": {
            "parameters": sid,
            "get": {"summary": "A file's bytes (base64)",
                    "parameters": [{"name": "path", "in": "query", "required": True, "schema": text}],
                    "responses": answers({"description": "path, size, content_b64"}, "400", "401", "404")},
            "put": {"summary": "Write a file as the agent's user",
                    "requestBody": body({"path": text, "content": text, "content_b64": text,
                                         "mode": {"type": "integer"}}, ["path"]),
                    "responses": answers({"description": "written"}, "400", "401", "404", "413")}},
        "/v1/sessions/{id}/diff": {
            "parameters": sid,
            "get": {"summary": "/testbed against the instance as set up, as a patch",
                    "responses": answers({"description": "diff"}, "401", "404", "503")}},
        "/v1/sessions/{id}/grade": {
            "parameters": sid,
            "post": {"summary": "The diff graded as /v1/evaluate grades a patch",
                     "requestBody": body({"reward": {"enum": ["binary", "fraction"]}, "close": {"type": "boolean"}}),
                     "responses": answers({"description": "the row, its reward, the patch"},
                                          "400", "401", "404", "429", "503", "504")}},
    }
