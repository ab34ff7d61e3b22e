"""MultiPL-E's evaluator, per language, as its evaluation container runs it (evaluation/src/main.py,
containerized_eval.py, safe_subprocess and eval_*.py, read with the search tool and written again here;
MultiPL-E is not on PyPI). Each program is written to a temporary file on the container's own filesystem
(tempfile's default directory, not a tmpfs), compiled and run as fresh processes by a pool of worker
threads, and an identical program text is evaluated once (MultiPL-E's cache). Statuses come from the
exit code and the output:

    cpp         g++ FILE -o BIN -std=c++17; failure: SyntaxError; run BIN: Timeout / OK (exit 0) / Exception
    rust        rustc FILE -o BIN; the same
    go          go test FILE, one step: "[setup failed]" or "[build failed]" in stdout: SyntaxError;
                "FAIL" in stdout: Exception; else OK
    java        javac -encoding UTF8 -d DIR FILE; failure: SyntaxError; java -ea -cp DIR:javatuples Problem
    javascript  node FILE: Timeout / OK / AssertionError (ERR_ASSERTION) / SyntaxError / ReferenceError / Exception
    typescript  tsc --target esnext FILE; failure: SyntaxError; node FILE.js, as JavaScript

How each step is waited for is MultiPL-E's too. C++, Java, JavaScript and TypeScript go through its
safe_subprocess: the command in a session of its own, its output read 1 KB per stream every 0.1 s (at
most 2 KB kept), the exit polled every 0.1 s, and the process group killed at the end. Rust and Go use
subprocess.run with a timeout.

Where this differs from MultiPL-E's own run (each one in the peer's favour, or neutral):
- it runs in passk's image for the language (the same toolchain versions as passk; MultiPL-E's image
  is Ubuntu 22.04 with every language), as root, with no network and no limit, as MultiPL-E's container;
- the worker count is given (the benchmarks use 2 for both harnesses; MultiPL-E's default is
  cpu_count() - 1, which is 1 on a 2-core machine);
- the run timeout is --timeout for every language (MultiPL-E: 15 s, Rust 5 s, Go's one step 30 s;
  here Go's one step gets --timeout + 2 s for its compile), and a compiler has MultiPL-E's 15 s;
- on Go's timeout the whole process group is killed (subprocess.run kills only `go`, which leaves the
  test binary it started running until go test's own 10-minute alarm);
- Go's build cache is warmed before the clock starts (MultiPL-E's image starts with none, so its first
  programs also build the standard library);
- the results are written once at the end (MultiPL-E rewrites a problem's results file after each
  completion).

    python3 scripts/peers/multiple_peer.py LANGUAGE PROBLEMS SAMPLES OUT.jsonl [--workers 2] [--timeout 15]

writes one row per sample (name, sample_index, status, exit_code, stderr tail, CPU seconds of the compile
and of the run, each from wait4 on the step's process) and prints the time and the peer's own CPU."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

JAVATUPLES = "/usr/share/java/javatuples.jar"
SUFFIX = {"cpp": ".cpp", "rust": ".rs", "go": "_test.go", "java": ".java", "javascript": ".js", "typescript": ".ts",
          "lua": ".lua", "ruby": ".rb", "php": ".php", "perl": ".pl", "r": ".r", "bash": ".sh", "racket": ".rkt",
          "scala": ".scala", "csharp": ".cs", "d": ".d", "elixir": ".exs", "clojure": ".clj", "haskell": ".hs",
          "ocaml": ".ml", "ada": ".adb"}
CLOJURE_JAR = "/usr/share/java/clojure-1.11.jar"
COMPILE_TIMEOUT_S = 15.0   # MultiPL-E's safe_subprocess default
POLL_S = 0.1               # safe_subprocess: SLEEP_BETWEEN_READS
READ_BYTES = 1024          # safe_subprocess: MAX_BYTES_PER_READ
KEEP_BYTES = 2048          # safe_subprocess: max_output_size


def _cpu(ru) -> float:
    return ru.ru_utime + ru.ru_stime


def _reap(pid, block):
    """wait4 on one child: (exit code or None while it runs, its CPU seconds and its reaped descendants')."""
    got, status, ru = os.wait4(pid, 0 if block else os.WNOHANG)
    if got == 0:
        return None, 0.0
    return (os.waitstatus_to_exitcode(status), _cpu(ru))


def safe_run(argv, timeout, env=None, cwd=None):
    """MultiPL-E's safe_subprocess.run: (timed out, exit code, stdout, stderr, CPU seconds)."""
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, bufsize=READ_BYTES)
    for stream in (p.stdout, p.stderr):
        fcntl.fcntl(stream.fileno(), fcntl.F_SETFL, fcntl.fcntl(stream.fileno(), fcntl.F_GETFL) | os.O_NONBLOCK)
    saved = {p.stdout: [], p.stderr: []}
    code, cpu = None, 0.0
    for _ in range(int(timeout * 10)):
        for stream, kept in saved.items():
            chunk = stream.read(READ_BYTES)
            if chunk is not None and sum(map(len, kept)) < KEEP_BYTES:
                kept.append(chunk)
        code, cpu = _reap(p.pid, False)
        if code is not None:
            break
        time.sleep(POLL_S)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if code is None:
        _, cpu = _reap(p.pid, True)
    p.returncode = code if code is not None else -1   # reaped here: Popen must not wait for it again
    p.stdout.close()
    p.stderr.close()
    out, err = (b"".join(saved[s]).decode("utf-8", "ignore") for s in (p.stdout, p.stderr))
    return code is None, (code if code is not None else -1), out, err, cpu


def plain_run(argv, timeout, env=None, cwd=None):
    """subprocess.run(argv, capture_output=True, timeout=...), as MultiPL-E's Rust and Go steps call it, with
    the CPU seconds from wait4; on the timeout the process group is killed (see the module's text)."""
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    result = {}

    def drain():
        result["out"], result["err"] = p.stdout.read(), p.stderr.read()

    reader = threading.Thread(target=drain)
    reader.start()
    deadline = time.monotonic() + timeout
    code = None
    while code is None and time.monotonic() < deadline:
        code, cpu = _reap(p.pid, False)
        if code is None:
            time.sleep(0.002)
    if code is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, cpu = _reap(p.pid, True)
    p.returncode = code if code is not None else -1
    reader.join()
    return (code is None, code, result["out"].decode("utf-8", "ignore"), result["err"].decode("utf-8", "ignore"),
            cpu)


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


def _done(status, code, err, c_cpu=None, r_cpu=None):
    return {"status": status, "exit_code": code, "stderr": err[-300:], "compile_cpu_s": c_cpu, "run_cpu_s": r_cpu}


def evaluate_more(language: str, name: str, timeout: float) -> dict:
    """MultiPL-E's eval_*.py for its other languages (the bigcode harness's copies where MultiPL-E's
    repository has none): the command, how it is waited for (safe_subprocess or subprocess.run), and how
    its exit code and output make the status. Debian's commands where MultiPL-E's are not packaged: mcs
    for csc, ldmd2 -run for rdmd, clojure.main on the JVM for the Clojure CLI's `clojure -M`."""
    path = Path(name)
    if language in ("lua", "haskell", "bash", "perl", "ocaml"):
        argv = {"lua": ["lua", name], "haskell": ["runghc", name], "bash": ["bash", name], "perl": ["perl", name],
                "ocaml": ["ocaml", name]}[language]
        t, code, out, err, cpu = safe_run(argv, timeout)
        if t:
            return _done("Timeout", code, err, r_cpu=cpu)
        if language == "perl":
            status = "Exception" if code != 0 or "ERROR" in out or "ERROR" in err else "OK"
        elif code == 0:
            status = "OK"
        elif language == "bash" and "syntax error" in err:
            status = "SyntaxError"
        elif language == "ocaml" and "Assert_failure" in err:
            status = "AssertionError"
        elif language == "ocaml" and "Syntax error" in err:
            status = "SyntaxError"
        else:
            status = "Exception"
        return _done(status, code, err, r_cpu=cpu)
    if language in ("php", "racket", "clojure"):   # no timeout check: a run killed at the limit is an Exception
        argv = {"php": ["php", name], "racket": ["racket", name],
                "clojure": ["java", "-Dclojure.main.report=stderr", "-cp", CLOJURE_JAR, "clojure.main", name]}[language]
        t, code, out, err, cpu = safe_run(argv, timeout)
        if language == "php":
            status = "SyntaxError" if "PHP Parse error" in out else ("Exception" if code != 0 else "OK")
        elif err or code != 0:
            status = "SyntaxError" if language == "racket" and "read-syntax" in err else "Exception"
        else:
            status = "OK"
        return _done(status, code, err, r_cpu=cpu)
    if language in ("ruby", "r", "elixir"):   # subprocess.run(..., timeout=5): here the run timeout
        argv = {"ruby": ["ruby", name], "r": ["Rscript", name], "elixir": ["elixir", name]}[language]
        t, code, out, err, cpu = plain_run(argv, timeout)
        if t:
            return _done("Timeout", -1, err, r_cpu=cpu)
        if code == 0:
            status = "OK"
        elif language == "ruby":
            status = "SyntaxError" if err else "Exception"
        elif language == "r":
            status = "SyntaxError" if "unexpected" in out + err else ("AssertionError" if not err else "Exception")
        else:
            status = ("AssertionError" if "Assertion with == failed" in out + err
                      else "SyntaxError" if "SyntaxError" in out + err else "Exception")
        return _done(status, code, err, r_cpu=cpu)
    if language == "d":   # rdmd -unittest FILE: compile, then run, as one command whose stderr is read
        binary = str(path.with_suffix(""))
        try:
            t, code, out, err, c_cpu = safe_run(["ldmd2", "-unittest", f"-of={binary}", name], COMPILE_TIMEOUT_S)
            if code != 0:
                return _done("Timeout" if t else "SyntaxError" if "Error:" in err else "Exception", code, err, c_cpu)
            t, code, out, err, r_cpu = safe_run([binary], timeout)
        finally:
            for leftover in (binary, binary + ".o"):
                if os.path.exists(leftover):
                    os.remove(leftover)
        status = "Timeout" if t else "OK" if code == 0 else "SyntaxError" if "Error:" in err else "Exception"
        return _done(status, code, err, c_cpu, r_cpu)
    if language == "scala":
        with tempfile.TemporaryDirectory() as outdir:
            t, code, out, err, c_cpu = safe_run(["scalac", "-d", outdir, name], 45.0)
            if code != 0:
                return _done("SyntaxError", code, err, c_cpu)
            t, code, out, err, r_cpu = safe_run(["scala", "-cp", outdir, "Problem"], timeout)
        status = "Timeout" if t else "OK" if code == 0 and err == "" else "Exception"
        return _done(status, code, err, c_cpu, r_cpu)
    if language == "csharp":
        binary = str(path.with_suffix(".exe"))
        try:
            t, code, out, err, c_cpu = plain_run(["mcs", "-d:DEBUG", "-r:System.Numerics.dll", name, f"-out:{binary}"],
                                                 COMPILE_TIMEOUT_S)
            if code != 0:
                return _done("SyntaxError", code, out + err, c_cpu)
            t, code, out, err, r_cpu = plain_run(["mono", binary], timeout, env={"PATH": os.environ["PATH"],
                                                                                 "MONO_TRACE_LISTENER": "Console.Error"})
            if t:
                return _done("Timeout", -1, err, c_cpu, r_cpu)
            failed = "System.Diagnostics.DefaultTraceListener.Fail" in err or "Unhandled Exception" in err
            return _done("Exception" if failed else "OK", code, err, c_cpu, r_cpu)
        finally:
            if os.path.exists(binary):
                os.remove(binary)
    if language == "ada":
        with tempfile.TemporaryDirectory() as work:
            t, code, out, err, c1 = safe_run(["gnatchop", "-w", name, work], COMPILE_TIMEOUT_S)
            if code != 0:
                return _done("SyntaxError", code, err, c1)
            t, code, out, err, c2 = safe_run(["gnatmake", "-gnatW8", "main.adb", "-o", "main", "-g", "-j0", "-gnata",
                                              "-gnateE", "-bargs", "-Es"], COMPILE_TIMEOUT_S, cwd=work)
            if code != 0:
                return _done("SyntaxError", code, out + err, c1 + c2)
            t, code, out, err, r_cpu = safe_run(["./main"], timeout, cwd=work)
        return _done("Timeout" if t else "Exception" if code != 0 else "OK", code, err, c1 + c2, r_cpu)
    raise ValueError(language)


def evaluate(language: str, program: str, timeout: float) -> dict:
    with tempfile.NamedTemporaryFile(suffix=SUFFIX[language]) as f:
        f.write(program.encode("utf-8"))
        f.flush()
        name = f.name
        path = Path(name)
        env = dict(os.environ)
        if language not in ("cpp", "rust", "go", "java", "javascript", "typescript"):
            return evaluate_more(language, name, timeout)
        if language in ("cpp", "rust"):
            binary = str(path.with_suffix(""))
            try:
                if language == "cpp":
                    t, code, out, err, c_cpu = safe_run(["g++", name, "-o", binary, "-std=c++17"], COMPILE_TIMEOUT_S)
                else:
                    t, code, out, err, c_cpu = plain_run(["rustc", name, "-o", binary], COMPILE_TIMEOUT_S)
                if code != 0:
                    status = "Timeout" if t and language == "rust" else "SyntaxError"
                    return {"status": status, "exit_code": code, "stderr": err[-300:], "compile_cpu_s": c_cpu}
                t, code, out, err, r_cpu = (safe_run if language == "cpp" else plain_run)([binary], timeout)
                return {"status": "Timeout" if t else ("OK" if code == 0 else "Exception"), "exit_code": code,
                        "stderr": err[-300:], "compile_cpu_s": c_cpu, "run_cpu_s": r_cpu}
            finally:
                if os.path.exists(binary):
                    os.remove(binary)
        if language == "go":
            t, code, out, err, cpu = plain_run(["go", "test", name], timeout + 2.0, env={**env, "GOPROXY": "off"})
            if t:
                status = "Timeout"
            elif "[setup failed]" in out or "[build failed]" in out:
                status = "SyntaxError"
            elif "FAIL" in out:
                status = "Exception"
            else:
                status = "OK"
            return {"status": status, "exit_code": code, "stderr": (out + err)[-300:], "compile_cpu_s": cpu}
        if language == "java":
            env["CLASSPATH"] = JAVATUPLES
            with tempfile.TemporaryDirectory() as outdir:
                t, code, out, err, c_cpu = safe_run(["javac", "-encoding", "UTF8", "-d", outdir, name],
                                                    COMPILE_TIMEOUT_S, env=env)
                if code != 0:
                    return {"status": "SyntaxError", "exit_code": code, "stderr": err[-300:], "compile_cpu_s": c_cpu}
                t, code, out, err, r_cpu = safe_run(["java", "-ea", "-cp", f"{outdir}:{JAVATUPLES}", "Problem"],
                                                    timeout, env=env)
            return {"status": "Timeout" if t else ("OK" if code == 0 else "Exception"), "exit_code": code,
                    "stderr": err[-300:], "compile_cpu_s": c_cpu, "run_cpu_s": r_cpu}
        c_cpu = None
        if language == "typescript":
            t, code, out, err, c_cpu = safe_run(["tsc", "--target", "esnext", name], COMPILE_TIMEOUT_S)
            if code != 0:
                return {"status": "SyntaxError", "exit_code": code, "stderr": (out + err)[-300:], "compile_cpu_s": c_cpu}
            name = name[:-3] + ".js"
        try:
            t, code, out, err, r_cpu = safe_run(["node", name], timeout)
        finally:
            if language == "typescript" and os.path.exists(name):
                os.remove(name)
        return {"status": _node_status(t, code, err), "exit_code": code, "stderr": err[-300:],
                "compile_cpu_s": c_cpu, "run_cpu_s": r_cpu}


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
    if args.language == "go" and os.path.isdir("/opt/passk/go-cache"):   # warmed before the clock starts
        gocache = os.environ["GOCACHE"]
        os.makedirs(os.path.dirname(gocache), exist_ok=True)
        subprocess.run(["cp", "-R", "/opt/passk/go-cache", gocache], check=True)
    cache, lock = {}, threading.Lock()

    def cached(program):
        """MultiPL-E's cache: an identical program text is evaluated once; later ones wait for its result."""
        with lock:
            entry = cache.get(program)
            first = entry is None
            if first:
                entry = cache[program] = {"done": threading.Event()}
        if first:
            entry["result"] = evaluate(args.language, program, args.timeout)
            entry["done"].set()
            return entry["result"]
        entry["done"].wait()
        return {**entry["result"], "cached": True, "compile_cpu_s": None, "run_cpu_s": None}

    start = time.monotonic()
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    with ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(lambda j: cached(j[2]), jobs))
    elapsed = time.monotonic() - start
    own = _cpu(resource.getrusage(resource.RUSAGE_SELF)) - _cpu(self_before)
    with open(args.out, "w", encoding="utf-8") as f:
        for (name, index, _), r in zip(jobs, results):
            f.write(json.dumps({"name": name, "sample_index": index, **r}) + "\n")
    print(json.dumps({"candidates": len(jobs), "seconds": round(elapsed, 3), "own_cpu_s": round(own, 3),
                      "evaluated": len(cache)}))


def on_host(args) -> dict:
    """Run the peer in a container of passk's image for the language (built by passk if missing)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import ensure_image, ensure_language_image

    client = connect()
    image = ensure_language_image(client, ensure_image(client), args.language)["image"]
    work = Path(tempfile.mkdtemp(prefix="passk-peer-"))
    for name, src in (("peer.py", __file__), ("problems.jsonl", args.problems), ("samples.jsonl", args.samples)):
        (work / name).write_bytes(Path(src).read_bytes())
    os.chmod(work, 0o755)
    # the container's own filesystem for the programs, as MultiPL-E's (no tmpfs); root's home and Go cache
    cmd = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "passk-python", "-v", f"{work}:/peer",
           "-w", "/peer", "-e", "HOME=/root", "-e", "GOCACHE=/root/.cache/go-build", image,
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
