#!/usr/bin/env python3
"""Every image passk builds, built from nothing on a Docker engine that holds no passk image, on every
Debian base passk uses, then the repository agreement on that engine: the proof that a fresh machine gets
results, which a warm engine cannot give.

    bash scripts/drills/fresh_engine.sh start          # a second engine: its own data root and socket
    python3 scripts/drills/fresh_engine_drill.py --docker-host unix:///run/passk-fresh/docker.sock \\
        --repos /tmp/repos --swebench /tmp/swb/v5 --out /tmp/fresh-drill
    bash scripts/drills/fresh_engine.sh stop

It prints the engine's image list before (it refuses an engine that already holds a passk image), the time
each image took (the offline bases by debootstrap, passk's image on bookworm and bullseye, every language
image on bookworm, and on bullseye with the ones refused by name), then runs
scripts/agreement/repos_agreement.py on SWE-bench Lite's and Verified's rows of the eight repositories
reachable here (--repo, --instances N per repository) against that engine (each repository environment
built from nothing on the way) and prints its summary. PASSK_CACHE_DIR is a fresh
directory under --out, so no wheel, tree or snapshot of the machine's is reused either."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "swe-bench"
REPOS = ("sympy/sympy", "pytest-dev/pytest", "astropy/astropy", "sphinx-doc/sphinx", "pylint-dev/pylint",
         "psf/requests", "mwaskom/seaborn", "pallets/flask")


def run(cmd: list[str], env: dict, log: Path) -> tuple[int, float]:
    t0 = time.monotonic()
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    return rc, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docker-host", required=True, help="the fresh engine's socket (fresh_engine.sh start prints it)")
    ap.add_argument("--repos", required=True, help="DIR/<owner>/<name>: the repositories")
    ap.add_argument("--repo", action="append", default=[],
                    help=f"only these repositories (repeatable; default: the {len(REPOS)} reachable here)")
    ap.add_argument("--instances", type=int, default=0, help="at most this many instances per repository (0: all)")
    ap.add_argument("--swebench", default=None, help="an unpacked swebench 5.0.2 wheel (its grading on passk's logs)")
    ap.add_argument("--rows", action="append", default=[],
                    help="SWE-bench rows (repeatable; default: Lite's test rows and Verified's of these repositories)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--skip-languages", action="store_true", help="the sandbox and repository images only")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "drill.log"
    env = {**os.environ, "DOCKER_HOST": args.docker_host, "PASSK_CACHE_DIR": str(out / "cache")}
    images = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}"], env=env,
                            capture_output=True, text=True, check=True).stdout.split()
    print(f"engine {args.docker_host}: {len(images)} image(s) before: {', '.join(images) or 'none'}")
    if any(i.startswith("passk") for i in images):
        print("it already holds passk's images: not a fresh engine (fresh_engine.sh stop, then start)")
        return 2
    steps = [("passk-base:bookworm (debootstrap)", ["bash", "scripts/bootstrap_base_image.sh", "passk-base:bookworm", "bookworm"]),
             ("passk-base:bullseye (debootstrap)", ["bash", "scripts/bootstrap_base_image.sh", "passk-base:bullseye",
                                                    "bullseye"]),
             ("passk's image on bookworm", ["passk", "images", "build", "--base-image", "passk-base:bookworm"]),
             ("passk's image on bullseye", ["passk", "images", "build", "--base-image", "passk-base:bullseye"])]
    if not args.skip_languages:
        steps += [("every language image on bookworm", ["passk", "images", "build", "--base-image",
                                                        "passk-base:bookworm", "--language", "all"]),
                  ("every language image on bullseye", ["passk", "images", "build", "--base-image",
                                                        "passk-base:bullseye", "--language", "all"])]
    failed = 0
    print("\n| image | exit | minutes |\n|---|---|---|")
    for name, cmd in steps:
        rc, secs = run(cmd, env, log)
        print(f"| {name} | {rc} | {secs / 60:.1f} |", flush=True)
        failed += rc != 0 and name != "every language image on bullseye"   # there, some are refused by name
    text = log.read_text(errors="replace")
    refused = sorted(set(re.findall(r"passk: the (\w+) image needs [^\n]*", text)))
    if refused:
        print("\nrefused by name on bullseye: " + ", ".join(refused))
    built = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}} {{.Size}}"], env=env,
                           capture_output=True, text=True).stdout.splitlines()
    print(f"\n{len(built)} images on the engine after the builds")
    rows = args.rows or [str(DATA / "swe-bench-lite-test.jsonl"), str(DATA / "swe-bench-verified-test-9repos.jsonl")]
    cmd = [sys.executable, "scripts/agreement/repos_agreement.py", "--repos", args.repos, "--out", str(out / "agreement"),
           "--instances", str(args.instances)]
    cmd += [a for r in rows for a in ("--rows", r)] + [a for r in (args.repo or REPOS) for a in ("--repo", r)]
    if args.swebench:
        cmd += ["--swebench", args.swebench]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    minutes = (time.monotonic() - t0) / 60
    summary = proc.stdout[proc.stdout.find("| repository |"):] if "| repository |" in proc.stdout else proc.stdout[-3000:]
    print(f"\nthe agreement on {', '.join(args.repo or REPOS)} ({args.instances or 'every'} instance(s) each), every "
          f"environment built from nothing: "
          f"{minutes:.1f} minutes, exit {proc.returncode}\n\n{summary}")
    return 1 if failed else proc.returncode


if __name__ == "__main__":
    sys.exit(main())
