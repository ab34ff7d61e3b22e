"""A reward function for trainers, in verl's custom reward signature, judged by a running `passk serve`:

    custom_reward_function:
      path: <site-packages>/harness/serve/reward.py      # or: python -c "import harness.serve.reward as r; print(r.__file__)"
      name: compute_score

compute_score(data_source, solution_str, ground_truth, extra_info) sends the candidate to /v1/evaluate and
returns passk's verdict as a number. The tests are judged through passk's channels, out of the candidate's
reach: an always-equal object, an exit before the asserts or a patched test runner earns nothing.

ground_truth (a dict or its JSON text), as code RL datasets carry it:
- {"inputs": [...], "outputs": [...]}: stdin/stdout tests (APPS's rule); with "fn_name": call-based tests;
- {"assert_case": [...]} or {"test_list": [...]}: assert statements run after the program (MBPP's rule);
- {"problem_id": "..."}: a problem preloaded into the service (passk serve --problems).
extra_info may name the program's "language" (io tests) and the "reward" mode (binary, fraction, score).

Settings from the environment: PASSK_SERVE_URL (default http://127.0.0.1:8080), PASSK_SERVE_TOKEN,
PASSK_REWARD (binary), PASSK_REWARD_TIMEOUT_S (600), PASSK_REWARD_ON_ERROR: "raise" (default: a harness
fault is not the candidate's failure, so it is not scored as one) or "zero".

Standard library only: it runs in the trainer's process."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.S)


class RewardError(RuntimeError):
    """passk could not judge the candidate (the service is unreachable, or its sandbox faulted)."""


def extract_program(text: str) -> str:
    """The program in a model's answer: its last fenced block (a python one first), else the text itself."""
    blocks = _FENCE.findall(text or "")
    if not blocks:
        return text or ""
    python = [code for lang, code in blocks if lang.lower() in ("python", "py", "python3")]
    return (python or [code for _, code in blocks])[-1]


def problem_of(ground_truth, data_source: str = "") -> dict:
    """The /v1/evaluate `problem` of a dataset's ground truth."""
    gt = ground_truth
    if isinstance(gt, (bytes, str)):
        try:
            gt = json.loads(gt)
        except ValueError:
            raise RewardError("ground_truth is not JSON") from None
    if not isinstance(gt, dict):
        raise RewardError(f"ground_truth must be an object, got {type(gt).__name__}")
    task = str(data_source or "reward")[:80]
    if isinstance(gt.get("problem_id"), str):
        return {"id": gt["problem_id"]}
    asserts = gt.get("assert_case") or gt.get("test_list")
    if isinstance(asserts, list) and asserts:
        setup = gt.get("test_setup_code") or ""
        return {"format": "mbpp", "record": {"task_id": task, "code": "pass", "test_list": [str(a) for a in asserts],
                                              "test_setup_code": setup}}
    if isinstance(gt.get("inputs"), list) and isinstance(gt.get("outputs"), list):
        io_ = {"inputs": gt["inputs"], "outputs": gt["outputs"]}
        if gt.get("fn_name"):
            io_["fn_name"] = gt["fn_name"]
        return {"format": "apps", "record": {"problem_id": task, "question": "", "input_output": json.dumps(io_)}}
    raise RewardError("ground_truth has neither inputs/outputs, assert_case/test_list, nor problem_id")


def _post(url: str, body: dict, token: str | None, timeout: float) -> dict:
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.loads(answer.read())


def evaluate(problem: dict, program: str, *, language: str | None = None, reward: str = "binary",
             url: str | None = None, token: str | None = None, timeout_s: float | None = None,
             attempts: int = 5) -> dict:
    """One candidate through /v1/evaluate: its row (with `reward`). A full queue (429) or a sandbox that
    cannot run now (503), and a row whose status is `error`, are retried; then RewardError."""
    url = (url or os.environ.get("PASSK_SERVE_URL", "http://127.0.0.1:8080")).rstrip("/") + "/v1/evaluate"
    token = token if token is not None else os.environ.get("PASSK_SERVE_TOKEN")
    timeout_s = timeout_s or float(os.environ.get("PASSK_REWARD_TIMEOUT_S", "600"))
    candidate = {"code": program}
    if language:
        candidate["language"] = language
    body = {"problem": problem, "candidates": [candidate], "reward": reward}
    last = "no attempt"
    for attempt in range(attempts):
        try:
            row = _post(url, body, token, timeout_s)["rows"][0]
            if row["status"] != "error":
                return row
            last = f"the sandbox faulted: {row['reason']}: {row['detail'][:200]}"
            wait = 1.0
        except urllib.error.HTTPError as e:
            text = e.read()[:500].decode("utf-8", "replace")
            if e.code not in (429, 503, 504):
                raise RewardError(f"passk serve answered {e.code}: {text}") from None
            last = f"passk serve answered {e.code}: {text}"
            wait = float(e.headers.get("Retry-After") or 1)
        except (urllib.error.URLError, OSError, ValueError, KeyError) as e:
            last = f"passk serve could not be reached at {url}: {e}"
            wait = 1.0
        if attempt + 1 < attempts:
            time.sleep(min(30.0, wait * (attempt + 1)))
    raise RewardError(last)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> float:
    """verl's custom reward: passk's reward for one answer (1.0 / 0.0, or the fraction or score asked for)."""
    extra = extra_info if isinstance(extra_info, dict) else {}
    mode = extra.get("reward") or os.environ.get("PASSK_REWARD", "binary")
    try:
        problem = problem_of(ground_truth, data_source)
        row = evaluate(problem, extract_program(solution_str), language=extra.get("language"), reward=mode)
    except RewardError:
        if os.environ.get("PASSK_REWARD_ON_ERROR", "raise") == "zero":
            return 0.0
        raise
    return float(row["reward"])
