"""MultiPL-E's evaluator, per language, as its container runs it (evaluation/src/eval_*.py, read with the
search tool and written again here; MultiPL-E is not on PyPI): each program written to a temporary file,
compiled and run as fresh processes in one container holding every toolchain, a pool of worker threads,
and statuses from the exit code and the output:

    cpp         g++ FILE -o BIN -std=c++17; failure: SyntaxError; run BIN: Timeout / OK (exit 0) / Exception
    rust        rustc FILE -o BIN; the same
    go          go test FILE (one step, 30 s in MultiPL-E; here the run timeout + 2 s for its compile):
                "[setup failed]" or "[build failed]" in stdout: SyntaxError;
                "FAIL" in stdout: Exception; else OK
    java        javac -encoding UTF8 -d DIR FILE; failure: SyntaxError; java -ea -cp DIR:javatuples Problem
    javascript  node FILE: Timeout / OK / AssertionError (ERR_ASSERTION) / SyntaxError / ReferenceError / Exception
    typescript  tsc --target esnext FILE; failure: SyntaxError; node FILE.js, as JavaScript

Here it runs in passk's image for the language (the same toolchain versions; as root, no network, no
other limit: as MultiPL-E's container). A compiler has MultiPL-E's timeout (15 s); a program has it
too unless --timeout says another (Go's one step: that + 2 s).

    python3 scripts/multiple_peer.py LANGUAGE PROBLEMS SAMPLES OUT.jsonl [--workers 2] [--timeout 15]

writes one row per sample (name, sample_index, status, exit_code, stderr tail) and prints the time."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

JAVATUPLES = "/usr/share/java/javatuples.jar"
SUFFIX = {"cpp": ".cpp", "rust": ".rs", "go": "_test.go", "java": ".java", "javascript": ".js", "typescript": ".ts"}


def run(argv, timeout, env=None, cwd=None):
    """As MultiPL-E's safe_subprocess: the command in a session of its own, and on timeout the whole process
    group killed (`go test` runs the test binary as its child: killing `go` alone would leave it running)."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                          start_new_session=True) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            return True, None, out.decode("utf-8", "ignore"), err.decode("utf-8", "ignore")
        return False, p.returncode, out.decode("utf-8", "ignore"), err.decode("utf-8", "ignore")


def _node_status(timeout, code, err):
    if timeout:
        return "Timeout"
    if code == 0:
        return "OK"
    if "ERR_ASSERTION" in err:
        return "AssertionError"
    if "SyntaxError" in err:
        return "SyntaxError"
    if "ReferenceError" in err:
        return "ReferenceError"
    return "Exception"


COMPILE_TIMEOUT_S = 15.0   # MultiPL-E's safe_subprocess default


def evaluate(language: str, program: str, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as d:
        fd, name = tempfile.mkstemp(suffix=SUFFIX[language], dir=d)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(program)
        path = Path(name)
        env = dict(os.environ)
        if language in ("cpp", "rust"):
            binary = str(path.with_suffix(""))
            compiler = ["g++", name, "-o", binary, "-std=c++17"] if language == "cpp" else ["rustc", name, "-o", binary]
            t, code, out, err = run(compiler, COMPILE_TIMEOUT_S)
            if code != 0:
                return {"status": "SyntaxError", "exit_code": code, "stderr": err[-300:]}
            t, code, out, err = run([binary], timeout)
            return {"status": "Timeout" if t else ("OK" if code == 0 else "Exception"), "exit_code": code, "stderr": err[-300:]}
        if language == "go":
            t, code, out, err = run(["go", "test", name], timeout + 2.0, env={**env, "GOPROXY": "off"}, cwd=d)
            if t:
                status = "Timeout"
            elif "[setup failed]" in out or "[build failed]" in out:
                status = "SyntaxError"
            elif "FAIL" in out:
                status = "Exception"
            else:
                status = "OK"
            return {"status": status, "exit_code": code, "stderr": (out + err)[-300:]}
        if language == "java":
            env["CLASSPATH"] = JAVATUPLES
            outdir = tempfile.mkdtemp(dir=d)
            t, code, out, err = run(["javac", "-encoding", "UTF8", "-d", outdir, name], COMPILE_TIMEOUT_S, env=env)
            if code != 0:
                return {"status": "SyntaxError", "exit_code": code, "stderr": err[-300:]}
            t, code, out, err = run(["java", "-ea", "-cp", f"{outdir}:{JAVATUPLES}", "Problem"], timeout, env=env)
            return {"status": "Timeout" if t else ("OK" if code == 0 else "Exception"), "exit_code": code, "stderr": err[-300:]}
        if language == "typescript":
            t, code, out, err = run(["tsc", "--target", "esnext", name], COMPILE_TIMEOUT_S)
            if code != 0:
                return {"status": "SyntaxError", "exit_code": code, "stderr": (out + err)[-300:]}
            name = name[:-3] + ".js"
        t, code, out, err = run(["node", name], timeout)
        return {"status": _node_status(t, code, err), "exit_code": code, "stderr": err[-300:]}


def inside(args) -> None:
    problems = {}
    for line in open(args.problems, encoding="utf-8"):
        p = json.loads(line)
        problems[p["name"]] = p
    jobs, counts = [], {}
    for line in open(args.samples, encoding="utf-8"):
        s = json.loads(line)
        p = problems[s["name"]]
        index = counts.get(s["name"], 0)
        counts[s["name"]] = index + 1
        program = s["solution"] if "solution" in s else p["prompt"] + s["completion"]
        jobs.append((s["name"], index, program + "\n" + (p.get("tests") or p["test"])))
    start = time.monotonic()
    with ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(lambda j: evaluate(args.language, j[2], args.timeout), jobs))
    elapsed = time.monotonic() - start
    with open(args.out, "w", encoding="utf-8") as f:
        for (name, index, _), r in zip(jobs, results):
            f.write(json.dumps({"name": name, "sample_index": index, **r}) + "\n")
    print(json.dumps({"candidates": len(jobs), "seconds": round(elapsed, 3)}))


def on_host(args) -> dict:
    """Run the peer in a container of passk's image for the language (built by passk if missing)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from harness.sandbox.docker import connect
    from harness.sandbox.images import ensure_image, ensure_language_image

    client = connect()
    image = ensure_language_image(client, ensure_image(client), args.language)["image"]
    work = Path(tempfile.mkdtemp(prefix="passk-peer-"))
    for name, src in (("peer.py", __file__), ("problems.jsonl", args.problems), ("samples.jsonl", args.samples)):
        (work / name).write_bytes(Path(src).read_bytes())
    os.chmod(work, 0o755)
    cmd = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "passk-python", "-v", f"{work}:/peer",
           "--tmpfs", "/tmp:rw,exec,size=2g", "-e", "HOME=/tmp", "-e", "GOCACHE=/tmp/gocache", image,
           "/peer/peer.py", "--inside", args.language, "/peer/problems.jsonl", "/peer/samples.jsonl", "/peer/out.jsonl",
           "--workers", str(args.workers), "--timeout", str(args.timeout)]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"the peer failed: {proc.stderr[-2000:]}")
    Path(args.out).write_bytes((work / "out.jsonl").read_bytes())
    summary = {**json.loads(proc.stdout.strip().splitlines()[-1]), "wall_with_container_s": round(wall, 3), "image": image}
    print(json.dumps(summary))
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("language", choices=sorted(SUFFIX))
    ap.add_argument("problems")
    ap.add_argument("samples")
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=15.0)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    return inside(args) if args.inside else on_host(args)


if __name__ == "__main__":
    main()
