#!/usr/bin/env python3
"""aider's polyglot procedure as a plain loop, in one container per language with passk's project toolchains
(containers/projects/<language>/): every exercise's reference solution (files.example over the stub) and its
untouched stub, one after another, each with aider's test command and its 180 s timeout, run as aider's
runner runs it (as root, the tests restored, Java's @Disabled and JavaScript's xtest rewritten). Not passk's
sandbox: the baseline passk's judging is measured against, and the first look at which references pass and
which stubs fail on these toolchains.

    python3 scripts/agreement/polyglot_plain.py --problems /path/to/polyglot-benchmark [--language rust ...]
        [--only reference|stub] [--out /tmp/polyglot-plain]

Prints, per language: exercises, references passed, stubs failed, the loop's wall time, the toolchain's
versions, and every exception by name; the logs are kept under --out.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TIMEOUT_S = 180

LOOP = r"""
cd /work
for d in */*/; do
  d=${d%/}
  start=$(date +%s.%N)
  ( cd "$d" && timeout -k 5 __TIMEOUT__ bash -c "$CMD" ) > "/work/$d.log" 2>&1
  code=$?
  end=$(date +%s.%N)
  echo "$d $code $start $end" >> /work/results.txt
done
"""


def project_image(client, sandbox: dict, language: str) -> str:
    """passk's project image for `language` (containers/projects/<language>/), built if missing."""
    from harness.execution.sandbox.images import ensure_project_image
    return ensure_project_image(client, sandbox, language)["image"]


def plain_loop(client, sandbox: dict, language: str, trees: dict, logs_dir: Path | None = None):
    """aider's command over `trees` ({"<kind>/<exercise>": tree}) one after another in one container of the
    language's project image: ({name: (exit code, seconds)}, the loop's wall time, the toolchain's versions)."""
    from harness.inputs.projects import LANGUAGES
    image = project_image(client, sandbox, language)
    container = client.containers.run(image, entrypoint=["sleep", "infinity"], user="0:0", detach=True,
                                      network_mode="none", working_dir="/work", mem_limit="6g",
                                      environment={"CMD": LANGUAGES[language].aider, "HOME": "/root"})
    try:
        container.exec_run(["mkdir", "-p", "/work"])
        container.put_archive("/work", archive(trees))
        toolchain = container.exec_run(["cat", "/opt/passk/toolchain.json"]).output.decode()
        t0 = time.monotonic()
        container.exec_run(["bash", "-c", LOOP.replace("__TIMEOUT__", str(TIMEOUT_S))])
        wall = time.monotonic() - t0
        lines = container.exec_run(["cat", "/work/results.txt"]).output.decode().splitlines()
        if logs_dir is not None:
            logs_dir.mkdir(parents=True, exist_ok=True)
            stream, _ = container.get_archive("/work")
            with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
                for m in tar.getmembers():
                    if m.isfile() and m.name.count("/") == 2 and m.name.endswith(".log"):
                        kind, name = m.name.split("/")[1:]
                        (logs_dir / f"{kind}--{name}").write_bytes(tar.extractfile(m).read())
    finally:
        container.remove(force=True)
    results = {}
    for line in lines:
        name, code_s, start, end = line.split()
        results[name] = (int(code_s), float(end) - float(start))
    return results, wall, toolchain.strip()


def archive(trees: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for top, tree in trees.items():
            for rel, data in tree.items():
                info = tarfile.TarInfo(f"{top}/{rel}")
                info.size = len(data)
                info.mode = 0o755 if rel.endswith(("gradlew", ".sh")) else 0o644
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", required=True)
    ap.add_argument("--language", action="append", default=[])
    ap.add_argument("--only", choices=["reference", "stub"])
    ap.add_argument("--out", default="/tmp/polyglot-plain")
    ap.add_argument("--as-candidate", action="store_true",
                    help="the references as a candidate sends them (its own Cargo.toml set aside), as in a real run")
    args = ap.parse_args()
    from harness.core.errors import InputError
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import ensure_image
    from harness.inputs import polyglot
    try:
        every = polyglot.exercises(Path(args.problems))
    except InputError as e:
        print(f"polyglot_plain: {e}", file=sys.stderr)
        return 2
    client = connect()
    sandbox = ensure_image(client)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kinds = [args.only] if args.only else ["reference", "stub"]
    summary = []
    for language in args.language or sorted({e.language for e in every}):
        mine = [e for e in every if e.language == language]
        if not mine:
            continue
        trees = {}
        for e in mine:
            for kind in kinds:
                if kind != "reference":
                    cand = None
                elif args.as_candidate:   # as a candidate sends it: a Rust reference's own manifest set aside
                    cand = polyglot.reference_candidate(e)
                else:
                    cand = polyglot.Candidate(e.task_id, e.example, ())
                trees[f"{kind}/{e.name}"] = polyglot.tree_for(e, cand)
        results, wall, toolchain = plain_loop(client, sandbox, language, trees, out / language)
        ref_pass = [e.name for e in mine if results.get(f"reference/{e.name}", (1, 0))[0] == 0]
        stub_fail = [e.name for e in mine if results.get(f"stub/{e.name}", (0, 0))[0] != 0]
        row = {"language": language, "exercises": len(mine), "wall_s": round(wall, 1), "toolchain": toolchain.strip(),
               "reference_passed": len(ref_pass) if "reference" in kinds else None,
               "stub_failed": len(stub_fail) if "stub" in kinds else None,
               "reference_not": sorted(set(e.name for e in mine) - set(ref_pass)) if "reference" in kinds else [],
               "stub_not": sorted(set(e.name for e in mine) - set(stub_fail)) if "stub" in kinds else [],
               "seconds": {k: round(v[1], 2) for k, v in sorted(results.items())},
               "timed_out": sorted(k for k, v in results.items() if v[0] in (124, 137))}
        (out / f"{language}.json").write_text(json.dumps(row, indent=1))
        summary.append(row)
        print(f"{language}: {len(mine)} exercises; references passed {row['reference_passed']}; stubs failed "
              f"{row['stub_failed']}; loop {wall:.0f} s; not: {row['reference_not']} / stub passes: {row['stub_not']}"
              f"; timed out: {row['timed_out']}\n  {row['toolchain']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
