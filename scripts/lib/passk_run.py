"""Run passk as a child process, the way a user runs it, for the scripts that compare its rows with a peer's
or time a whole run."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start_serve(*args: str, log_name: str = "passk-serve") -> tuple:
    """`passk serve` on a free loopback port, as a user starts it, once /health answers: (process, url). Its
    output goes to a log file (named when it does not start)."""
    import tempfile
    import time
    import urllib.request
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(Path(tempfile.mkdtemp(prefix=log_name + "-")) / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", "--port", str(port), *args],
                              stdout=log, stderr=log, cwd=ROOT)
    deadline = time.monotonic() + 600   # the first start may build passk's image
    while True:
        try:
            urllib.request.urlopen(url + "/health", timeout=5)
            return server, url
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise SystemExit(f"passk serve did not start: see {log.name}") from None
            time.sleep(0.5)


def peer_file(where: str, path: str) -> str:
    """A file of a peer's repository, from a checkout or from the bare repository `fetch` brings (its HEAD)."""
    root = Path(where)
    if (root / path).is_file():
        return (root / path).read_text()
    return subprocess.run(["git", "--git-dir", str(root), "show", f"HEAD:{path}"], capture_output=True,
                          text=True, check=True).stdout


def free_port() -> int:
    """A loopback port no one listens on now (for a `passk serve` the script starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def evaluate(problems: Path, samples: Path, out: Path, *extra: str, workers: int = 2,
             required: bool = True) -> list[dict]:
    """`passk evaluate --problems P --samples S --out OUT --k 1 --workers W --quiet EXTRA...`; the rows of
    OUT/results.jsonl. A run that wrote none: its last lines of stderr and exit 2 when `required`, else []."""
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples",
                           str(samples), "--out", str(out), "--k", "1", "--workers", str(workers), "--quiet", *extra],
                          cwd=ROOT, capture_output=True, text=True)
    results = out / "results.jsonl"
    if not results.exists():
        if not required:
            return []
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(2)
    return [json.loads(line) for line in results.read_text().splitlines() if line.strip()]


def unbuildable(row: dict, repos: str) -> str | None:
    """Why this machine cannot build a SWE-bench row's instance, as passk evaluate decides (a Python no Debian
    base gives, a conda-only package, a file the mirror lacks), or None."""
    from harness.core.errors import InputError
    from harness.inputs.repos.recipes import recipe
    from harness.inputs.repos.specs import spec_for
    from harness.inputs.repos.trees import tree
    try:
        spec = spec_for(row["repo"], row["version"], where=row["instance_id"])
        why = spec.unbuildable() or recipe(spec, row["instance_id"], None, None).unbuildable()
        if not why:   # the tree: a file the mirror lacks, a submodule (cached)
            tree(repos, row["repo"], row["base_commit"], row["instance_id"])
    except InputError as e:
        why = str(e)
    return why or None


def buildable(rows: list, repos: str) -> tuple[list, list]:
    """(the rows this machine can build, [(instance, why not)] for the others), as passk evaluate decides."""
    ok, refused = [], []
    for r in rows:
        why = unbuildable(r, repos)
        (refused.append((r["instance_id"], why)) if why else ok.append(r))
    return ok, refused
