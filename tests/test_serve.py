"""passk serve: a real server process on a loopback port, real HTTP clients (urllib, SandboxFusion's own
client package), the real Docker engine. Pure logic (request bodies, rewards, metrics text) first."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from harness.core.errors import InputError
from harness.inputs.config import Limits
from harness.inputs.problem import Problem
from harness.records.results import ResultRow
from harness.serve import is_loopback
from harness.serve.bodies import BadRequest, parse_evaluate, reward_of
from harness.serve.fusion import parse_run_code
from harness.serve.openapi import EVALUATE_EXAMPLE, RUN_CODE_EXAMPLE, schema
from harness.serve.reward import RewardError, extract_program, problem_of
from harness.serve.service import Histogram, ServiceOptions, _histogram_lines

ADD = {"task_id": "t/add", "prompt": "def add(a, b):\n", "entry_point": "add", "canonical_solution": "    return a + b\n",
       "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(2, 2) == 4\n"}
OPTIONS = ServiceOptions()


# -- pure ----------------------------------------------------------------------------------------------
def test_an_evaluate_body_is_read_whole_or_refused_naming_the_field():
    req = parse_evaluate(EVALUATE_EXAMPLE, {}, Limits(), OPTIONS)
    assert req.problem.task_id == "demo/add" and len(req.candidates) == 2
    assert req.candidates[0].program == "def add(a, b):\n    return a + b\n"   # a completion follows the prompt
    bad = [({"problem": {"record": ADD}}, "candidates"),
           ({"problem": {"record": ADD}, "candidates": [{"code": "x", "completion": "y"}]}, "exactly one"),
           ({"problem": {"record": ADD}, "candidates": ["x"], "reward": "max"}, "reward"),
           ({"problem": {"record": ADD}, "candidates": ["x"], "limits": {"timeout_s": -1}}, "limits.timeout_s"),
           ({"problem": {"record": ADD}, "candidates": ["x"], "limits": {"pids": 5}}, "unknown field"),
           ({"problem": {"id": "nope"}, "candidates": ["x"]}, "not a preloaded problem"),
           ({"problem": {"record": {"task_id": "x"}}, "candidates": ["x"]}, "problem:"),
           ({"problem": {"record": ADD, "format": "kattis"}, "candidates": ["x"]}, "read from a directory"),
           ({"problem": {"record": ADD}, "candidates": ["x"], "extra": 1}, "unknown field"),
           ({"problem": {"record": ADD}, "candidates": ["x" * (OPTIONS.max_code_bytes + 1)]}, "byte limit")]
    for body, words in bad:
        with pytest.raises(BadRequest, match=words):
            parse_evaluate(body, {}, Limits(), OPTIONS)


def test_an_inline_record_names_no_file_on_the_service_machine():
    # a record's fields are read as data: the reader gets a private temporary file, whatever the record says
    body = {"problem": {"record": {**ADD, "task_id": "/etc/passwd"}}, "candidates": ["x"]}
    assert parse_evaluate(body, {}, Limits(), OPTIONS).problem.task_id == "/etc/passwd"
    with pytest.raises(BadRequest, match="record"):
        parse_evaluate({"problem": {"record": "/etc/passwd"}, "candidates": ["x"]}, {}, Limits(), OPTIONS)


def test_run_code_bodies_follow_sandbox_fusion_and_refuse_what_passk_does_not_do():
    problem, program, language, limits = parse_run_code(RUN_CODE_EXAMPLE, Limits(), 1 << 20, 1024)
    assert language == "python" and program.startswith("print")
    assert problem.judge.capture > 0 and problem.judge.tests[0].input == "21\n"
    assert limits.memory_mb == 256 and problem.judge.wall_limit_s == 10
    _, _, language, limits = parse_run_code({"code": "", "language": "nodejs", "memory_limit_MB": -1}, Limits(), 10, 512)
    assert language == "javascript" and limits.memory_mb == 512    # -1: the service's most
    for body, words in [({"code": "x", "language": "cobol"}, "not one passk runs"),
                        ({"code": "x", "language": "python", "files": {"a": "Yg=="}}, "files"),
                        ({"code": 1, "language": "python"}, "code"),
                        ({"code": "x", "language": "python", "run_timeout": 0}, "run_timeout")]:
        with pytest.raises(BadRequest, match=words):
            parse_run_code(body, Limits(), 1 << 20, 1024)


def test_rewards_keep_a_harness_fault_apart_from_a_failure():
    row = ResultRow("t", 0, "passed")
    assert reward_of(row, "binary") == 1.0
    assert reward_of(ResultRow("t", 0, "error", "sandbox_fault"), "binary") is None
    failed = ResultRow("t", 0, "failed", "wrong_answer", channel_detail={"tests_passed": 3, "tests_total": 4})
    assert reward_of(failed, "binary") == 0.0 and reward_of(failed, "fraction") == 0.75
    assert reward_of(ResultRow("t", 0, "failed", score=0.5), "score") == 0.5
    assert reward_of(ResultRow("t", 0, "timed_out"), "fraction") == 0.0


def test_the_reward_function_reads_what_datasets_carry():
    assert extract_program("text\n```python\nprint(1)\n```\nmore") == "print(1)\n"
    assert extract_program("```cpp\nint main(){}\n```") == "int main(){}\n"
    assert extract_program("print(2)") == "print(2)"
    assert problem_of('{"inputs": ["1"], "outputs": ["1"]}')["format"] == "apps"
    assert problem_of({"assert_case": ["assert f() == 1"]})["record"]["test_list"] == ["assert f() == 1"]
    assert problem_of({"problem_id": "HumanEval/0"}) == {"id": "HumanEval/0"}
    with pytest.raises(RewardError):
        problem_of({"nothing": 1})


def test_metrics_histograms_are_cumulative_and_labels_escaped():
    h = Histogram()
    for v in (0.001, 0.02, 0.02, 1000):
        h.observe(v)
    lines = _histogram_lines("x", 'route="/a\\"b"', h)
    assert lines[0] == 'x_bucket{route="/a\\"b",le="0.005"} 1'
    assert 'x_bucket{route="/a\\"b",le="+Inf"} 4' in lines and "x_count{route=\"/a\\\"b\"} 4" in lines


def test_every_route_is_in_the_schema_and_only_loopback_is_open():
    paths = schema()["paths"]
    assert set(paths) == {"/v1/evaluate", "/run_code", "/v1/problems", "/health", "/metrics", "/openapi.json",
                          "/test_program", "/test_program_stdio", "/v1/ping", "/execute", "/api/v2/runtimes",
                          "/api/v2/execute", "/v1/sessions", "/v1/sessions/{id}", "/v1/sessions/{id}/exec",
                          "/v1/sessions/{id}/files", "/v1/sessions/{id}/diff", "/v1/sessions/{id}/grade"}
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1")


def test_an_io_program_in_another_language_runs_as_it_is():
    # regression: an APPS problem's Python header was put before a C++ program (compile_error)
    p = Problem("APPS/1", "", "", None, channel="io", runner="apps_stdin", tests=(("1", "1"),), compare="apps",
                header="import sys\n", format="apps")
    assert p.program_text("int main(){}", "cpp") == "int main(){}"
    assert p.program_text("print(1)", "pypy") == "import sys\nprint(1)"
    assert "def code():" in p.program_text("print(1)", "python")


# -- a real server ---------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *args, token=None, env=None):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        cmd = [sys.executable, "-m", "harness.cli", "serve", "--port", str(self.port), *args]
        if token:
            cmd += ["--token", token]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None})
        deadline = time.monotonic() + 600   # the first start may build passk's image
        while True:
            if self.proc.poll() is not None:
                raise AssertionError("passk serve ended: " + self.proc.stdout.read())
            try:
                self.health = self.get("/health")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def request(self, method, path, body=None, headers=None, timeout=300):
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        h = {"Content-Type": "application/json", **(headers or {})}
        if self.token and "Authorization" not in h:
            h["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, headers=h, method=method)
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            raw = answer.read()
            kind = answer.headers.get("content-type", "")
            return json.loads(raw) if "json" in kind and "ndjson" not in kind else raw.decode()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def stop(self, sig=signal.SIGTERM, timeout=120):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
        return self.proc.stdout.read()


def _containers(run_id: str) -> list:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=org.passk.run"], capture_output=True, text=True).stdout.split()
    if not out:
        return []
    labels = subprocess.run(["docker", "inspect", "--format", '{{index .Config.Labels "org.passk.run"}}', *out],
                            capture_output=True, text=True).stdout.split()
    return [label for label in labels if label.startswith(run_id)]


@pytest.fixture(scope="module")
def server():
    s = Server("--workers", "2", "--problems", "problems/kattis/hello", "--deadline-s", "120")
    yield s
    s.stop()


def _evaluate(server, candidates, record=ADD, **extra):
    return server.post("/v1/evaluate", {"problem": {"record": record}, "candidates": candidates, **extra})


HACKS = {
    "exit_zero_before_the_asserts": "import os\ndef add(a, b):\n    return 0\nos._exit(0)\n",
    "sys_exit_zero": "import sys\ndef add(a, b):\n    return 0\nsys.exit(0)\n",
    "always_equal": "class A:\n    def __eq__(self, o): return True\n    __hash__ = None\ndef add(a, b):\n    return A()\n",
    "patched_assertion": "import builtins\nbuiltins.AssertionError = type('E', (BaseException,), {})\ndef add(a, b):\n    return 0\n",
    "patched_test_runner": "import unittest\nunittest.TestCase.run = lambda self, result=None: None\ndef add(a, b):\n    return 0\n",
}


@pytest.mark.docker
def test_evaluate_judges_each_candidate_and_no_reward_hack_is_rewarded(server):
    answer = _evaluate(server, [{"completion": "    return a + b\n", "key": "right"},
                                {"completion": "    return a - b\n", "key": "wrong"},
                                *({"code": code, "key": name} for name, code in HACKS.items())])
    rows = {r["key"]: r for r in answer["rows"]}
    assert rows["right"]["status"] == "passed" and rows["right"]["reward"] == 1.0
    assert rows["wrong"]["status"] == "failed" and rows["wrong"]["reward"] == 0.0
    for name in HACKS:
        assert rows[name]["status"] != "passed" and rows[name]["reward"] == 0.0, (name, rows[name])
    assert answer["summary"]["candidates"] == 2 + len(HACKS) and answer["summary"]["passed"] == 1
    assert rows["right"]["verdict_channel"] and rows["right"]["limits"]["timeout_s"] > 0


@pytest.mark.docker
def test_run_code_rewards_an_early_exit_where_evaluate_does_not(server):
    # SandboxFusion's rule (exit code 0 is Success) cannot tell an exit before the asserts from a pass;
    # /v1/evaluate's verdict comes from passk's channel
    program = HACKS["exit_zero_before_the_asserts"] + "\nassert add(1, 2) == 3\n"
    run = server.post("/run_code", {"code": program, "language": "python"})
    assert run["status"] == "Success" and run["run_result"]["return_code"] == 0
    mbpp = {"task_id": "t", "code": "pass", "test_list": ["assert add(1, 2) == 3"]}
    row = server.post("/v1/evaluate", {"problem": {"record": mbpp, "format": "mbpp"},
                                       "candidates": [HACKS["exit_zero_before_the_asserts"]]})["rows"][0]
    assert row["status"] == "failed" and row["reward"] == 0.0


@pytest.mark.docker
def test_sandbox_fusion_client_runs_unchanged_against_passk(server):
    sandbox_fusion = pytest.importorskip("sandbox_fusion")
    from sandbox_fusion import RunCodeRequest, SummaryMapping, run_code, summary_run_code_result
    mapping = SummaryMapping(CompileFailed="compile", RunTimeout="timeout", RunFailed="run")

    def run(**kw):
        return run_code(RunCodeRequest(**kw), endpoint=server.url, max_attempts=1)

    r = run(code="print(int(input()) * 2)", stdin="21\n", language="python")
    assert r.status == sandbox_fusion.RunStatus.Success and r.run_result.stdout == "42\n"
    assert summary_run_code_result(r, mapping) == "Success"
    r = run(code="import sys\nprint('x')\nsys.exit(3)", language="python")
    assert r.run_result.return_code == 3 and summary_run_code_result(r, mapping) == "run"
    r = run(code="while True: pass", language="python", run_timeout=1)
    assert summary_run_code_result(r, mapping) == "timeout"
    cpp = '#include <cstdio>\nint main(){int a; scanf("%d",&a); printf("%d\\n", a + 1);}'
    r = run(code=cpp, stdin="41", language="cpp")
    assert r.run_result.stdout == "42\n" and r.compile_result.return_code == 0
    r = run(code="int main() { return 0 }", language="cpp")
    assert r.run_result is None and summary_run_code_result(r, mapping) == "compile"
    assert "error" in r.compile_result.stderr


@pytest.mark.docker
def test_io_rows_in_several_languages_stream_as_ndjson(server):
    apps = {"problem_id": "s", "question": "", "input_output": json.dumps({"inputs": ["1 2\n", "5 7\n"],
                                                                           "outputs": ["3\n", "12\n"]})}
    cpp = '#include <cstdio>\nint main(){int a,b; scanf("%d %d",&a,&b); printf("%d\\n",a+b);}'
    text = server.post("/v1/evaluate", {"problem": {"record": apps}, "stream": True, "reward": "fraction",
                                        "candidates": [{"code": "a, b = map(int, input().split())\nprint(a + b)", "key": 0},
                                                       {"code": cpp, "language": "cpp", "key": 1},
                                                       {"code": "print(3)", "key": 2}]})
    rows = {r["key"]: r for r in map(json.loads, text.splitlines())}
    assert len(text.splitlines()) == 3
    assert rows[0]["status"] == "passed" and rows[1]["status"] == "passed" and rows[1]["language"] == "cpp"
    assert rows[2]["status"] == "failed" and rows[2]["reward"] == 0.5


@pytest.mark.docker
def test_a_preloaded_package_is_judged_by_its_own_checker(server):
    problems = server.get("/v1/problems")["problems"]
    pid = next(p["id"] for p in problems if p["format"] == "kattis")
    row = server.post("/v1/evaluate", {"problem": {"id": pid}, "reward": "score",
                                       "candidates": [{"code": "print(f'Hello, {input().strip()}!')"}, {"code": "print('hi')"}]})["rows"]
    assert [r["status"] for r in row] == ["passed", "failed"]
    assert row[0]["limits"]["checker"]["protocol"] and row[0]["tests"]


@pytest.mark.docker
def test_bad_requests_are_one_message_and_the_service_keeps_answering(server):
    for body, code in [(b"{not json", 400), (json.dumps({"candidates": ["x"]}).encode(), 400)]:
        with pytest.raises(urllib.error.HTTPError) as e:
            server.post("/v1/evaluate", body)
        assert e.value.code == code and "error" in json.loads(e.value.read())
    with pytest.raises(urllib.error.HTTPError) as e:
        server.post("/run_code", {"code": "x", "language": "cobol"})
    assert e.value.code == 400
    # what a candidate prints stays a string inside the JSON, whatever it prints
    r = server.post("/run_code", {"code": "import sys\nsys.stdout.write('\"}\\n{\\x00\\x1b[2J' * 3)", "language": "python"})
    assert r["status"] == "Success" and r["run_result"]["stdout"].startswith('"}\n{')
    metrics = server.get("/metrics")
    assert 'passk_requests_total{route="/v1/evaluate",code="400"}' in metrics
    assert "passk_candidates_completed_total{" in metrics and "passk_queue_depth 0" in metrics
    health = server.get("/health")
    assert health["status"] == "ok" and health["sandbox"] == "ok"


@pytest.mark.docker
def test_a_full_queue_is_refused_at_once_and_a_gone_client_cancels_its_work():
    s = Server("--workers", "1", "--max-queue", "3", token="secret-token")
    try:
        with pytest.raises(urllib.error.HTTPError) as e:
            s.post("/v1/evaluate", {"problem": {"record": ADD}, "candidates": ["x"]}, headers={"Authorization": "Bearer no"})
        assert e.value.code == 401
        slow = "import time\ntime.sleep(2)\ndef add(a, b):\n    return a + b\n"
        body = {"problem": {"record": ADD}, "candidates": [slow] * 3, "limits": {"timeout_s": 10}}
        held = {}
        first = threading.Thread(target=lambda: held.setdefault("rows", s.post("/v1/evaluate", body)))
        first.start()
        time.sleep(1.0)
        started = time.monotonic()
        with pytest.raises(urllib.error.HTTPError) as e:
            s.post("/v1/evaluate", {"problem": {"record": ADD}, "candidates": ["x"]})
        assert e.value.code == 429 and int(e.value.headers["Retry-After"]) >= 1
        assert time.monotonic() - started < 5          # at once, not after the queue drains
        first.join(120)
        assert [r["status"] for r in held["rows"]["rows"]] == ["passed"] * 3
        # a client that goes away: what has not started is cancelled, the queue empties
        with pytest.raises(OSError):
            s.post("/v1/evaluate", body, timeout=1.0)
        deadline = time.monotonic() + 60
        while s.get("/health")["queued"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert s.get("/health")["queued"] == 0
        assert "passk_candidates_cancelled_total 0" not in s.get("/metrics")
        # a request's deadline: what did not run in time is `error deadline`, never `failed`
        rows = s.post("/v1/evaluate", {**body, "deadline_s": 1})["rows"]
        assert {r["status"] for r in rows} <= {"passed", "error"} and any(r["reason"] == "deadline" for r in rows)
        assert all(r["reward"] is None for r in rows if r["status"] == "error")
        # a streaming client that reads its first row and hangs up: the rest is cancelled, nothing waits on it
        cancelled = _metric(s.get("/metrics"), "passk_candidates_cancelled_total")
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=120)
        conn.request("POST", "/v1/evaluate", json.dumps({**body, "stream": True}),
                     {"Content-Type": "application/json", "Authorization": "Bearer secret-token"})
        answer = conn.getresponse()
        assert answer.status == 200 and json.loads(answer.readline())["status"] == "passed"
        conn.close()
        deadline = time.monotonic() + 60
        while s.get("/health")["queued"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert s.get("/health")["queued"] == 0
        assert _metric(s.get("/metrics"), "passk_candidates_cancelled_total") > cancelled
        assert [r["status"] for r in _evaluate(s, ["def add(a, b):\n    return a + b\n"])["rows"]] == ["passed"]
    finally:
        out = s.stop()
    assert "stopped; containers removed" in out


def _metric(text: str, name: str) -> float:
    """A metric's value in Prometheus's text format (0 when it is not there yet)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


@pytest.mark.docker
def test_sigterm_finishes_in_flight_work_and_leaves_no_container():
    s = Server("--workers", "1", "--grace-s", "60")
    run_id = s.health["run_id"]
    slow = "import time\ntime.sleep(1.5)\ndef add(a, b):\n    return a + b\n"
    held = {}
    t = threading.Thread(target=lambda: held.setdefault("answer", s.post(
        "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [slow, slow]})))
    t.start()
    time.sleep(1.0)
    out = s.stop(signal.SIGTERM)
    t.join(30)
    assert s.proc.returncode == 0, out
    assert [r["status"] for r in held["answer"]["rows"]] == ["passed", "passed"]
    assert _containers(run_id) == []
    # regression: a counter named like the service's done-callback shadowed it, so every finished candidate
    # logged a TypeError (a server whose stderr nobody read stopped answering) and stayed in its in-flight set
    assert "Traceback" not in out and "exception calling callback" not in out, out[-2000:]


def test_serving_off_loopback_needs_a_token():
    out = subprocess.run([sys.executable, "-m", "harness.cli", "serve", "--host", "0.0.0.0", "--port", "1"],
                         capture_output=True, text=True, env={**os.environ, "PASSK_SERVE_TOKEN": ""})
    assert out.returncode == 2 and "--token" in out.stderr
    with pytest.raises(InputError):
        from harness.serve import serve
        serve("0.0.0.0", 1, None)


@pytest.mark.docker
def test_the_service_runs_on_a_ray_cluster():
    pytest.importorskip("ray", reason="the Ray extra is not installed")
    s = Server("--workers", "1", "--executor", "ray", env={"RAY_ADDRESS": None})   # its own local cluster
    try:
        rows = _evaluate(s, [{"completion": "    return a + b\n"}, {"completion": "    return 0\n"}])["rows"]
        assert [r["status"] for r in rows] == ["passed", "failed"] and rows[0]["node"]
        run = s.post("/run_code", {"code": "print(input()[::-1])", "stdin": "abc", "language": "python"})
        assert run["run_result"]["stdout"] == "cba\n"
    finally:
        out = s.stop()
    assert s.proc.returncode == 0, out


def test_a_hostile_body_is_a_400_not_a_500():
    # regressions (issue 43): 100,000 nested arrays and a lone surrogate in an inline record were HTTP 500;
    # a request's limit of 1e9 s ran (HTTP 200 with an OverflowError)
    import asyncio

    from harness.serve.app import _Refused, _check_json, _read_json
    from harness.serve.bodies import BadRequest, parse_limits

    class Body:   # what _read_json reads of a request: its headers and its stream
        headers: dict = {}

        def __init__(self, raw):
            self.raw = raw

        async def stream(self):
            yield self.raw

    for raw in (b"[" * 100000 + b"]" * 100000, b"[" * 65 + b"]" * 65, b'{"a": "\\ud800"}', b'{"\\udfff": 1}'):
        with pytest.raises(_Refused) as e:
            asyncio.run(_read_json(Body(raw), 1 << 30))
        assert e.value.code == 400
    _check_json({"problem": {"record": {"x": [[["fine"]]]}}, "candidates": ["é"]})
    for limits in ({"timeout_s": 1e9}, {"memory_mb": 10 ** 12}, {"output_bytes": 10 ** 15}, {"compile_timeout_s": 86400}):
        with pytest.raises(BadRequest, match="ceiling"):
            parse_limits({"limits": limits}, Limits())
    assert parse_limits({"limits": {"timeout_s": 30}}, Limits()).timeout_s == 30


@pytest.mark.docker
def test_a_requests_deadline_ends_its_running_candidates():
    # regression (issue 43): `deadline_s` cancelled only what had not started: two requests of day-long
    # sleepers held both workers past their deadlines and honest requests behind them timed out
    s = Server("--workers", "1", "--deadline-s", "600")
    try:
        run_id = s.health["run_id"]
        sleeper = "import time\ntime.sleep(300)\ndef add(a, b):\n    return a + b\n"
        t0 = time.monotonic()
        rows = s.post("/v1/evaluate", {"problem": {"record": ADD}, "candidates": [sleeper, sleeper],
                                       "limits": {"timeout_s": 60}, "deadline_s": 3})["rows"]
        took = time.monotonic() - t0
        assert [(r["status"], r["reason"]) for r in rows] == [("error", "deadline")] * 2
        # the answer leaves before the deadline (it left at it, so a client waiting deadline_s timed out)
        assert took < 3, took
        honest = s.post("/v1/evaluate", {"problem": {"record": ADD}, "candidates": ["def add(a, b):\n    return a + b\n"]},
                        timeout=120)["rows"]
        assert [r["status"] for r in honest] == ["passed"]
    finally:
        out = s.stop(signal.SIGTERM)
    assert s.proc.returncode == 0, out
    assert _containers(run_id) == []


@pytest.mark.docker
def test_a_deadline_that_passes_while_the_next_container_starts_still_ends_the_candidate():
    # regression (issue 43, serve_drills' poison drill): two requests of sleepers with deadline_s 3 on two
    # workers; the first request's were killed at its deadline, the second's were taken by the freed workers
    # while their new containers started, so its abort found no container to kill: they ran their whole
    # 60 s (`timed_out`, and the honest request behind them waited 63 s)
    s = Server("--workers", "2", "--deadline-s", "600")
    try:
        sleeper = "import time\ntime.sleep(300)\ndef add(a, b):\n    return a + b\n"
        got: dict = {}

        def ask(i, deadline):
            got[i] = s.post("/v1/evaluate", {"problem": {"record": ADD}, "candidates": [sleeper, sleeper],
                                             "limits": {"timeout_s": 60}, "deadline_s": deadline}, timeout=200)["rows"]
        threads = [threading.Thread(target=ask, args=(i, 3)) for i in range(2)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(0.5)
        honest = s.post("/v1/evaluate", {"problem": {"record": ADD}, "candidates": ["def add(a, b):\n    return a + b\n"]},
                        timeout=200)["rows"]
        took = time.monotonic() - t0
        for t in threads:
            t.join(200)
        assert [[(r["status"], r["reason"]) for r in got[i]] for i in (0, 1)] == [[("error", "deadline")] * 2] * 2
        assert [r["status"] for r in honest] == ["passed"]
        assert took < 40, took   # it was 63 s: the second request's sleepers ran their whole 60 s
    finally:
        out = s.stop(signal.SIGTERM)
    assert s.proc.returncode == 0, out


@pytest.mark.docker
def test_sigterm_after_the_grace_ends_the_running_candidates():
    # regression (issue 43): after SIGTERM with --grace-s 5 the server still ran 30 s later
    s = Server("--workers", "1", "--grace-s", "2")
    run_id = s.health["run_id"]
    sleeper = "import time\ntime.sleep(300)\ndef add(a, b):\n    return a + b\n"
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("answer", _swallow(lambda: s.post(
        "/v1/evaluate", {"problem": {"record": ADD}, "candidates": [sleeper], "limits": {"timeout_s": 60}}, timeout=120))))
    t.start()
    time.sleep(3)
    t0 = time.monotonic()
    out = s.stop(signal.SIGTERM, timeout=60)
    took = time.monotonic() - t0
    t.join(60)
    assert s.proc.returncode == 0, out
    assert took < 20, (took, out)
    assert _containers(run_id) == []
    # regression (issue 43): the request in flight got an HTTP 500 when the server's grace ran out; the
    # service ends its candidates just before, and the request answers with its rows
    answer = got.get("answer")
    assert isinstance(answer, dict) and [(r["status"], r["reason"]) for r in answer["rows"]] == \
        [("error", "service_stopping")], answer


def _swallow(call):
    try:
        return call()
    except OSError as e:
        return e


def test_overflow_lanes_are_runc_only_and_sized_by_memory():
    from harness.serve.service import default_overflow
    assert 0 < default_overflow(2, 1024) <= 16 and default_overflow(2, 1 << 20) == 0
    assert default_overflow(2, 1024, "runsc") == 0 == default_overflow(2, 1024, "runsc-systrap", 0)
    assert default_overflow(2, 1024, "runc", 3) == 3
    with pytest.raises(InputError, match="runc"):
        default_overflow(2, 1024, "runsc", 4)


def test_run_code_deadline_is_the_one_sandbox_fusion_clients_imply_or_the_callers_header():
    from harness.serve.fusion import CLIENT_MARGIN_S, DEADLINE_HEADER, deadline
    limits = Limits(timeout_s=10, compile_timeout_s=10)
    python = deadline(None, "python", limits, 600)
    assert python.deadline_s == 10 + 10 + CLIENT_MARGIN_S          # verl: compile + run + API_TIMEOUT
    assert python.answer_by_s < python.deadline_s                    # answered before its client gives up
    assert python.start_by_s + 10 < python.answer_by_s               # started by then, its run fits
    assert 0 < python.overflow_after_s <= 1.0
    cpp = deadline(None, "cpp", limits, 600)                         # a compile step needs its time too
    assert cpp.start_by_s + 10 + 10 < cpp.answer_by_s and cpp.start_by_s < python.start_by_s
    assert deadline("4", "python", Limits(timeout_s=1), 600).deadline_s == 4
    assert deadline("4000", "python", limits, 600).deadline_s == 600   # never past the service's own
    for bad in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(BadRequest, match=DEADLINE_HEADER):
            deadline(bad, "python", limits, 600)


@pytest.mark.docker
def test_run_code_runs_behind_looping_programs_or_answers_504_before_the_callers_deadline():
    # issue 46: verl's reward waits compile + run + 10 s for /run_code, then gives up (a 504 it retries);
    # requests queued behind programs that loop to their limit were never answered in time
    s = Server("--workers", "1", "--overflow", "1")
    try:
        run_id = s.health["run_id"]
        loop = {"code": "while True:\n    pass\n", "language": "python", "run_timeout": 15}
        quick = {"code": "print(int(input()) * 2)", "stdin": "21\n", "language": "python", "run_timeout": 5}
        held = {}

        def post(name, body, **kw):
            try:
                held[name] = s.post("/run_code", body, **kw)
            except urllib.error.HTTPError as e:   # a 504: the machine's load stopped it (a stall), retry
                held[name] = {"http": e.code}
        first = threading.Thread(target=post, args=("A", loop))
        first.start()
        time.sleep(1.0)
        t0 = time.monotonic()
        answer = s.post("/run_code", quick)                   # the worker loops: an overflow lane runs it
        assert answer["status"] == "Success" and answer["run_result"]["stdout"] == "42\n", answer
        assert time.monotonic() - t0 < 12, "it waited for the looping program"
        second = threading.Thread(target=post, args=("C", loop))
        second.start()
        time.sleep(3.0)                                       # both lanes loop now
        t0 = time.monotonic()
        with pytest.raises(urllib.error.HTTPError) as e:
            s.post("/run_code", {**quick, "run_timeout": 1}, headers={"X-Passk-Deadline-S": "4"})
        assert e.value.code == 504 and int(e.value.headers["Retry-After"]) >= 1
        assert time.monotonic() - t0 < 4, "answered after the caller's deadline"
        first.join(60)
        second.join(60)
        assert held["A"]["run_result"]["status"] == "TimeLimitExceeded", held["A"]   # a worker's: its own CPU
        # an overflow lane's program gets what the workers leave: its time limit, or a 504 when it waited
        # for a CPU (the load, not the program, stopped it; never a verdict of the machine's making)
        assert held["C"].get("http") == 504 or held["C"]["run_result"]["status"] == "TimeLimitExceeded", held["C"]
        assert 'route="/run_code",code="504"}' in s.get("/metrics")
    finally:
        out = s.stop(signal.SIGTERM)
    assert s.proc.returncode == 0, out
    assert _containers(run_id) == []


def test_open_instruct_bodies_are_read_as_its_server_reads_them_and_pickles_only_as_data():
    import base64
    import pickle
    import zlib

    from harness.serve.instruct import answer, client_wait_s, decode_tests, parse
    tests = ["assert add(1, 2) == 3", "assert add(0, 0) == 1"]
    packed = base64.b64encode(zlib.compress(pickle.dumps(tests))).decode()
    assert decode_tests(tests) == decode_tests(json.dumps(tests)) == decode_tests(packed) == tests
    # a pickle that calls os.system is refused, never run
    marker = f"/tmp/passk-pickle-{os.getpid()}"
    hostile = base64.b64encode(zlib.compress(b"cos\nsystem\n(S'touch " + marker.encode() + b"'\ntR.")).decode()
    with pytest.raises(BadRequest, match="plain data"):
        decode_tests(hostile)
    assert not os.path.exists(marker)
    problems, program, limits = parse({"program": "def add(a, b):\n    return a + b\n",
                                       "tests": tests + ["assert ("], "max_execution_time": 2},
                                      Limits(), 1 << 20, stdio=False)
    assert [p is None for p in problems] == [False, False, True]    # a test that does not compile: a 0
    assert limits.timeout_s == 2 and problems[0].test == "assert add(1, 2) == 3\n"
    stdio, _, limits = parse({"program": "print(input())", "tests": [{"input": "1\n", "output": "1\n"}],
                              "max_execution_time": 1.5}, Limits(), 1 << 20, stdio=True)
    assert stdio[0].channel == "io" and stdio[0].compare == "livecodebench" and limits.timeout_s == 2
    for bad in ({"program": 1, "tests": []}, {"program": "", "tests": [1]}, {"program": "", "tests": {}},
                {"program": "", "tests": [], "max_execution_time": 0}, {"program": "", "tests": [], "x": 1}):
        with pytest.raises(BadRequest):
            parse(bad, Limits(), 1 << 20, stdio=False)
    with pytest.raises(BadRequest):
        parse({"program": "", "tests": ["x"]}, Limits(), 1 << 20, stdio=True)
    row = ResultRow("t", 0, "passed", "tests_completed", "", wall_s=0.25)
    assert answer([row, None, ResultRow("t", 1, "failed", "assertion", "")]) == {
        "results": [1, 0, 0], "runtimes": [0.25, -1.0, -1.0]}
    assert client_wait_s({"max_execution_time": 1}) == 30 and client_wait_s({"max_execution_time": 100}) == 300


@pytest.mark.docker
def test_open_instruct_routes_judge_each_test_and_reward_no_hack(server):
    tests = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(0, 0) == 1"]   # open-instruct's own
    honest = server.post("/test_program", {"program": "def add(a, b):\n    return a + b\n", "tests": tests,
                                            "max_execution_time": 1.0})
    assert honest["results"] == [1, 1, 0] and honest["runtimes"][2] == -1.0 and honest["runtimes"][0] >= 0
    hacks = {"exit": "import sys\nsys.exit(0)\ndef add(a, b):\n    return 0\n",
             "always_equal": "class A:\n    def __eq__(self, other):\n        return True\n"
                             "def add(a, b):\n    return A()\n"}
    for name, program in hacks.items():
        got = server.post("/test_program", {"program": program, "tests": tests})
        assert got["results"] == [0, 0, 0], (name, got)
    assert server.get("/v1/ping") == "pong"                      # SandboxFusion's probe, as its server answers
    stdio = server.post("/test_program_stdio", {
        "program": "import sys\nfor line in sys.stdin.read().splitlines():\n    print(int(line.strip()) + 1)",
        "tests": [{"input": "1\n", "output": "2\n"}, {"input": "100\n", "output": "101\n"},
                  {"input": "5\n", "output": "7\n"}], "max_execution_time": 1.0})
    assert stdio["results"] == [1, 1, 0]
    looping = server.post("/test_program_stdio", {"program": "while True:\n    pass\n",
                                                  "tests": [{"input": "", "output": "x\n"}]})
    assert looping["results"] == [0]


@pytest.mark.docker
def test_nemo_skills_execute_runs_python_pypy_and_shell_statelessly(server):
    two = server.post("/execute", {"generated_code": "print(int(input()) * 2)", "std_input": "21\n", "timeout": 10,
                                   "language": "python3"})
    assert two == {"process_status": "completed", "stdout": "42\n", "stderr": ""}
    pypy = server.post("/execute", {"generated_code": "import sys\nprint(sys.implementation.name)", "timeout": 10,
                                    "language": "pypy3"})
    assert pypy["process_status"] == "completed" and pypy["stdout"] == "pypy\n"
    shell = server.post("/execute", {"generated_code": "echo hi; exit 3", "timeout": 10, "language": "shell"})
    assert shell["process_status"] == "error" and shell["stdout"] == "hi\n"    # NeMo-Skills: shell's exit code
    crash = server.post("/execute", {"generated_code": "raise ValueError('x')", "timeout": 10, "language": "python3"})
    assert crash["process_status"] == "completed" and "ValueError" in crash["stderr"]   # as its server says
    loop = server.post("/execute", {"generated_code": "while True:\n    pass", "timeout": 1, "language": "python3"})
    assert loop["process_status"] == "timeout"
    cut = server.post("/execute", {"generated_code": "print('x' * 50)", "timeout": 10, "language": "python3",
                                   "max_output_characters": 10})
    assert cut["stdout"] == "x" * 10 + "<output cut>"
    with pytest.raises(urllib.error.HTTPError) as e:   # a session: passk's /execute keeps none
        server.post("/execute", {"generated_code": "x = 1", "timeout": 10, "language": "ipython"})
    assert e.value.code == 400


def test_piston_bodies_follow_piston_and_refuse_what_passk_does_not_run():
    from harness.core.version import __version__
    from harness.serve.piston import parse, runtimes
    listed = {r["language"]: r for r in runtimes()}
    assert {"python", "c++", "java", "rust", "go", "javascript"} <= set(listed)
    assert "cpp" in listed["c++"]["aliases"] and listed["python"]["version"] == __version__
    body = {"language": "cpp", "version": "*", "files": [{"name": "main.cpp", "content": "int main(){}"}],
            "run_timeout": 5000, "run_cpu_time": 2000, "run_memory_limit": 64 << 20}
    problem, program, language, limits, _ = parse(body, Limits(), 1 << 20, 4096)
    assert language == "cpp" and program == "int main(){}" and problem.judge.time_limit_s == 2.0
    assert problem.judge.wall_s == 5.0 and limits.memory_mb == 64
    hexed = {**body, "files": [{"content": "696e74206d61696e28297b7d", "encoding": "hex"}]}
    assert parse(hexed, Limits(), 1 << 20, 4096)[1] == "int main(){}"
    for bad, says in (({**body, "language": "cobol"}, "runtime is unknown"), ({**body, "version": "9.9"}, "runtime is unknown"),
                      ({**body, "files": body["files"] * 2}, "one file"), ({**body, "args": ["1"]}, "args"),
                      ({**body, "run_timeout": -1}, "non-negative"), ({**body, "files": []}, "files is required")):
        with pytest.raises(BadRequest, match=says):
            parse(bad, Limits(), 1 << 20, 4096)


@pytest.mark.docker
def test_piston_execute_answers_with_pistons_stages_and_statuses(server):
    from harness.core.version import __version__
    run = server.post("/api/v2/execute", {"language": "python", "version": "*", "stdin": "21\n",
                                          "files": [{"name": "main.py", "content": "print(int(input()) * 2)"}]})
    assert run["language"] == "python" and run["version"] == __version__ and "compile" not in run
    assert run["run"]["stdout"] == "42\n" and run["run"]["code"] == 0 and run["run"]["status"] is None
    crash = server.post("/api/v2/execute", {"language": "py", "version": "*",
                                            "files": [{"content": "import sys\nsys.exit(3)"}]})["run"]
    assert crash["status"] == "RE" and crash["code"] == 3
    loop = server.post("/api/v2/execute", {"language": "python", "version": "*", "run_timeout": 1000,
                                           "run_cpu_time": 1000, "files": [{"content": "while True:\n    pass"}]})["run"]
    assert loop["status"] == "TO" and loop["signal"] == "SIGKILL"
    cpp = server.post("/api/v2/execute", {"language": "c++", "version": "*", "stdin": "2 3\n", "files": [
        {"name": "main.cpp", "content": "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a+b);}"}]})
    assert cpp["compile"]["code"] == 0 and cpp["run"]["stdout"] == "5\n"
    broken = server.post("/api/v2/execute", {"language": "c++", "version": "*",
                                             "files": [{"content": "int main( {"}]})
    assert broken["compile"]["status"] == "RE" and broken["compile"]["code"] != 0 and broken["run"] == broken["compile"]
    with pytest.raises(urllib.error.HTTPError) as e:
        server.post("/api/v2/execute", {"language": "cobol", "version": "*", "files": [{"content": "x"}]})
    assert e.value.code == 400 and "runtime is unknown" in json.loads(e.value.read())["message"]
    assert any(r["language"] == "c++" for r in server.get("/api/v2/runtimes"))
