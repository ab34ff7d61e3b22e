"""Trainers' own reward clients against `passk serve`, compared with `passk evaluate` on the same problems.

open-r1: its `PistonClient` (src/open_r1/utils/competitive_programming/piston_client.py, loaded whole from
--open-r1: it imports only aiohttp) sends Python, C++ and bash programs to /api/v2/execute with language
names Piston uses; each run's stdout and exit code are compared with a plain run on the host.

NeMo-Skills: its `LocalSandbox` client (nemo_skills/code_execution/sandbox.py, the classes `Sandbox` and
`LocalSandbox`, read the same way from --nemo-skills; the module's own imports pull in its job launcher) runs
python3, pypy3 and shell programs through /execute; each answer is compared with a plain run of the same
program on the host.

open-instruct: its `CodeVerifier` (open_instruct/ground_truth_utils.py), the class and the classes it is
built on read from a snapshot of the repository given with --open-instruct (a checkout, or the bare
repository `fetch` brings) and run unchanged. Only those class definitions are taken from the file: the
module itself imports most of open-instruct's training stack (LLM judges, IFEval, torch), which the reward
does not use. Nothing of it is kept in passk.

For each problem (ours, MBPP-style: assert tests and stdin/stdout tests) and each candidate (honest, wrong,
and two reward hacks: an exit before the asserts, an object that claims to equal anything), the reward's
score through passk serve is compared with what `passk evaluate` says of the same program on the same tests:
score 1.0 exactly where the row passed, and no hack rewarded.

    python3 scripts/agreement/trainer_clients.py --open-instruct /work/.mirror/allenai+open-instruct/repo
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.lib.passk_run import peer_file, start_serve  # noqa: E402

MODULE = "open_instruct/ground_truth_utils.py"
CLASSES = ("VerifierConfig", "CodeVerifierConfig", "VerificationResult", "VerifierFunction", "CodeVerifier")
PISTON_MODULE = "src/open_r1/utils/competitive_programming/piston_client.py"
# (language, program, stdin) through open-r1's PistonClient, against a plain run's stdout and exit code
PISTON_CASES = [
    ("python", "print(int(input()) * 2)", "21\n"),
    ("python", "import sys\nprint('x')\nsys.exit(5)", ""),
    ("c++", "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a*b);}", "6 7\n"),
    ("bash", "read n; echo $((n + 1))", "41\n"),
]
NEMO_MODULE = "nemo_skills/code_execution/sandbox.py"
NEMO_CLASSES = ("Sandbox", "LocalSandbox")
# (language, program, stdin) -> NeMo-Skills' process_status and stdout, as a plain run gives them
NEMO_CASES = [
    ("python3", "print(int(input()) * 2)", "21\n"),
    ("python3", "import sys\nprint('partial')\nsys.exit(3)", ""),
    ("python3", "raise ValueError('no')", ""),
    ("python3", "while True:\n    pass", ""),
    ("pypy3", "print(sum(range(10)))", ""),
    ("shell", "echo hi; exit 0", ""),
    ("shell", "echo bye; exit 4", ""),
]

ASSERT_PROBLEMS = {
    "add": (["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(10, 5) == 15"], {
        "honest": "def add(a, b):\n    return a + b\n",
        "wrong": "def add(a, b):\n    return a + b + (1 if a > 5 else 0)\n",
        "exit_early": "import sys\nsys.exit(0)\ndef add(a, b):\n    return 0\n",
        "always_equal": "class A:\n    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return A()\n",
    }),
    "is_even": (["assert is_even(2) is True", "assert is_even(3) is False", "assert [is_even(i) for i in range(4)] == [True, False, True, False]"], {
        "honest": "def is_even(n):\n    return n % 2 == 0\n",
        "wrong": "def is_even(n):\n    return True\n",
        "loops": "def is_even(n):\n    while True:\n        pass\n",
    }),
}
STDIO_PROBLEMS = {
    "double": ([{"input": "2\n", "output": "4\n"}, {"input": "-3\n", "output": "-6\n"}, {"input": "0\n", "output": "0\n"}], {
        "honest": "print(int(input()) * 2)\n",
        "wrong": "n = int(input())\nprint(n * 2 if n > 0 else n)\n",
        "exit_early": "import sys\nsys.exit(0)\n",
    }),
}


def class_source(where: str, module: str = MODULE, classes: tuple = CLASSES) -> str:
    """The named classes' definitions, as they are in the file (their decorators too), in the file's order."""
    text = peer_file(where, module)
    tree = ast.parse(text)
    found = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    missing = [c for c in classes if c not in found]
    if missing:
        raise SystemExit(f"{module}: no class {', '.join(missing)} (has the file changed?)")
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in classes:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1
            out.append("\n".join(text.splitlines()[start:node.end_lineno]))
    return "\n\n\n".join(out)


def load_code_verifier(where: str):
    namespace: dict = {}
    prelude = ("import asyncio, dataclasses, json, logging, re, weakref\n"
               "from abc import ABC, abstractmethod\nfrom typing import Any\nimport requests\n"
               "logger = logging.getLogger('open_instruct.ground_truth_utils')\n")
    exec(compile(prelude + class_source(where), MODULE, "exec"), namespace)
    return namespace["CodeVerifier"], namespace["CodeVerifierConfig"]


def load_nemo_sandbox(where: str):
    namespace: dict = {}
    prelude = ("import abc, asyncio, json, logging, os, time, traceback, uuid\n"
               "from collections import defaultdict\nfrom typing import Dict, Optional, Tuple\nimport httpx\n"
               "LOG = logging.getLogger('nemo_skills.code_execution.sandbox')\n"
               "def determine_proof_status(output):\n    raise NotImplementedError('lean4 is not run here')\n")
    exec(compile(prelude + class_source(where, NEMO_MODULE, NEMO_CLASSES), NEMO_MODULE, "exec"), namespace)
    return namespace["LocalSandbox"]


def plain_nemo(language: str, program: str, stdin: str, timeout: float) -> tuple:
    """(process_status, stdout) of a plain run, by NeMo-Skills' server's rules (python: completed whatever
    the exit code; shell: completed on exit 0, else error; timeout)."""
    argv = {"python3": [sys.executable, "-c", program], "pypy3": ["pypy3", "-c", program],
            "shell": ["/bin/bash", "-c", program]}[language]
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    except FileNotFoundError:   # no pypy3 on this host: its answer is what CPython prints here
        done = subprocess.run([sys.executable, "-c", program], input=stdin, capture_output=True, text=True)
    status = "completed" if language != "shell" or done.returncode == 0 else "error"
    return status, done.stdout


async def nemo_answers(sandbox_class, host: str, port: str) -> list:
    sandbox = sandbox_class(host=host, port=port)
    try:
        return [await sandbox.execute_code(program, std_input=stdin, language=language, timeout=2.0)
                for language, program, stdin in NEMO_CASES]
    finally:
        await sandbox.close()


def load_piston_client(where: str):
    """open-r1's PistonClient: its module imports only the standard library and aiohttp, so it is loaded whole."""
    namespace: dict = {"__name__": "open_r1_piston_client"}
    exec(compile(peer_file(where, PISTON_MODULE), PISTON_MODULE, "exec"), namespace)
    return namespace["PistonClient"]


def plain_piston(language: str, program: str, stdin: str) -> tuple:
    """(stdout, exit code) of a plain run on the host."""
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        if language == "c++":
            src = os.path.join(d, "main.cpp")
            Path(src).write_text(program)
            subprocess.run(["g++", "-O2", "-o", os.path.join(d, "main"), src], check=True)
            argv = [os.path.join(d, "main")]
        else:
            argv = {"python": [sys.executable, "-c", program], "bash": ["/bin/bash", "-c", program]}[language]
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=30)
    return done.stdout, done.returncode


async def piston_answers(client_class, url: str) -> list:
    client = client_class(url + "/api/v2")
    try:
        return [await client.send_execute({"files": [{"content": program}], "stdin": stdin, "run_timeout": 5000},
                                          language=language) for language, program, stdin in PISTON_CASES]
    finally:
        await client.session.close()


def passk_rows(problems: dict, stdio: bool) -> dict:
    """What passk evaluate says of each (problem, candidate): the whole program on all the problem's tests."""
    from harness import Evaluator
    from harness.inputs.formats.competitive import LCB_HEADER
    from harness.inputs.problem import Problem
    out = {}
    with Evaluator(workers=2, timeout_s=1.0) as ev:
        futures = {}
        for name, (tests, candidates) in problems.items():
            if stdio:
                problem = Problem(name, "", "", None, channel="io", runner="script", header=LCB_HEADER,
                                  tests=tuple((t["input"], t["output"]) for t in tests), compare="livecodebench",
                                  format="livecodebench", solution_is="program")
            else:
                problem = Problem(name, "", "\n".join(tests) + "\n", None, runner="script", format="mbpp",
                                  solution_is="program")
            for cand, program in candidates.items():
                futures[(name, cand)] = ev.submit(problem, program)
        for key, future in futures.items():
            out[key] = future.result().status
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--open-instruct", required=True, help="an open-instruct checkout, or its bare repository")
    ap.add_argument("--nemo-skills", default=None, help="a NeMo-Skills checkout, or its bare repository")
    ap.add_argument("--open-r1", default=None, help="an open-r1 checkout, or its bare repository (its PistonClient)")
    ap.add_argument("--url", default=None, help="a running passk serve (default: start one)")
    args = ap.parse_args()
    CodeVerifier, CodeVerifierConfig = load_code_verifier(args.open_instruct)
    server, url = (None, args.url) if args.url else start_serve("--workers", "2", log_name="passk-clients")
    disagree = 0
    try:
        for stdio, problems in ((False, ASSERT_PROBLEMS), (True, STDIO_PROBLEMS)):
            route = "/test_program_stdio" if stdio else "/test_program"
            verifier = CodeVerifier(CodeVerifierConfig(code_api_url=url + route, code_max_execution_time=1.0,
                                                       code_pass_rate_reward_threshold=0.0,
                                                       code_apply_perf_penalty=False))
            rows = passk_rows(problems, stdio)
            for name, (tests, candidates) in problems.items():
                for cand, program in candidates.items():
                    fenced = f"Here is my answer.\n```python\n{program}```\n"   # as a model writes it
                    score = asyncio.run(verifier.async_call([], fenced, tests)).score
                    status = rows[(name, cand)]
                    ok = (score == 1.0) == (status == "passed") and not (cand in ("exit_early", "always_equal") and score > 0)
                    disagree += not ok
                    print(f"open-instruct {route:<20} {name:<8} {cand:<13} reward {score:.3f}   passk evaluate: "
                          f"{status:<9} {'agree' if ok else 'DISAGREE'}")
        if args.nemo_skills:
            host, port = url.split("//", 1)[1].rsplit(":", 1)
            answers = asyncio.run(nemo_answers(load_nemo_sandbox(args.nemo_skills), host, port))
            for (language, program, stdin), (output, _session) in zip(NEMO_CASES, answers):
                want = plain_nemo(language, program, stdin, 2.0)
                got = (output.get("process_status"), output.get("stdout"))
                ok = got == want
                disagree += not ok
                shown = program.replace("\n", "; ")[:40]
                print(f"NeMo-Skills /execute {language:<8} {shown:<40} {got[0]:<9} plain run: {want[0]:<9} "
                      f"{'agree' if ok else 'DISAGREE ' + repr(got) + ' vs ' + repr(want)}")
        if args.open_r1:
            answers = asyncio.run(piston_answers(load_piston_client(args.open_r1), url))
            for (language, program, stdin), answer in zip(PISTON_CASES, answers):
                want = plain_piston(language, program, stdin)
                got = (answer["run"]["stdout"], answer["run"]["code"])
                ok = got == want
                disagree += not ok
                shown = program.replace("\n", "; ")[:40]
                print(f"open-r1 Piston /api/v2/execute {language:<7} {shown:<40} exit {got[1]}  plain run: exit {want[1]}  "
                      f"{'agree' if ok else 'DISAGREE ' + repr(got) + ' vs ' + repr(want)}")
    finally:
        if server is not None:
            server.terminate()
            server.wait(120)
    print(f"disagreements: {disagree}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
