"""What a compile server holds between jobs: each of a MultiPL-E problem file's programs (prompt + tests,
glued as passk glues them) goes to the language's compile server in its image, one after another as
in a warm container, and the server's resident memory is read after each compile. Prints the figures
that each language's `server_keep_mb` (harness/inputs/languages.py: what a server may hold before it is
replaced) is set above.

    python3 scripts/speed/server_memory.py [--languages typescript,java,scala,csharp] [--limit 0] [--more DIR]

--more DIR: where MultiPL-E's HumanEval files for Scala and C# are (humaneval-scala.jsonl, humaneval-cs.jsonl;
../shared has only the first seven languages': see scripts/agreement/agreement_languages.py --more).
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.inputs import languages  # noqa: E402
from harness.execution.sandbox.docker import connect  # noqa: E402
from harness.execution.sandbox.images import ensure_image, ensure_language_image  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "multipl-e"
FILES = {"typescript": "humaneval-ts.jsonl", "java": "humaneval-java.jsonl", "scala": "humaneval-scala.jsonl",
         "csharp": "humaneval-cs.jsonl"}

# Runs inside the image: the server as the supervisor starts it, one request per program, VmRSS after each.
INSIDE = r'''
import json, os, subprocess, sys
spec = json.load(sys.stdin)
server = subprocess.Popen(spec["argv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd="/tmp")
assert json.loads(server.stdout.readline())["ready"]
def rss():
    for line in open(f"/proc/{server.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
out = [rss()]
for request in spec["requests"]:
    server.stdin.write((json.dumps(request) + "\n").encode())
    server.stdin.flush()
    json.loads(server.stdout.readline())
    out.append(rss())
print(json.dumps(out))
'''


def measure(language: str, limit: int, more: Path | None = None) -> list[int]:
    lang = languages.LANGUAGES[language]
    path = SHARED / FILES[language]
    if not path.exists() and more is not None:
        path = more / FILES[language]
    problems = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if limit:
        problems = problems[:limit]
    step = languages.steps(language, {"job_memory_kb": 1024 * 1024}, {})[0]["server"]
    argv = [a.replace("{workdir}", "/tmp") for a in step["argv"]]
    requests = [step["warm_up"]]
    for p in problems:
        tests, _ = languages.glue(language, p["name"], p["prompt"], p["tests"])
        source = p["prompt"] + "\n" + tests.replace(languages.MARK, "0" * languages.NONCE_CHARS)
        request = {"args": step["request"]["args"], "file": lang.source}
        if lang.server_bytes:
            request["source_b64"] = base64.b64encode(source.encode()).decode()
        else:
            request["source"] = source
        requests.append(request)
    client = connect()
    image = ensure_language_image(client, ensure_image(client), language)["image"]
    proc = subprocess.run(["docker", "run", "--rm", "-i", "--network", "none", "--entrypoint", "passk-python",
                           image, "-c", INSIDE], input=json.dumps({"argv": argv, "requests": requests}).encode(),
                          capture_output=True, check=True)
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--languages", default="typescript,java,scala,csharp")
    ap.add_argument("--more", type=Path, default=None, help="a directory with the Scala and C# files")
    ap.add_argument("--limit", type=int, default=0, help="the first N problems only (0: all)")
    args = ap.parse_args()
    print("| server | programs | started (MB) | after warm-up | median after a compile | max after a compile | "
          "may keep (server_keep_mb) |")
    print("|---|---|---|---|---|---|---|")
    for language in args.languages.split(","):
        kb = measure(language, args.limit, args.more)
        after = kb[2:]
        print(f"| {language} | {len(after)} | {kb[0] / 1024:.0f} | {kb[1] / 1024:.0f} | "
              f"{statistics.median(after) / 1024:.0f} | {max(after) / 1024:.0f} | {languages.LANGUAGES[language].server_keep_mb} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
