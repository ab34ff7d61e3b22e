#!/usr/bin/env python3
"""Repository tasks, speed and disk: passk's environment images (how many for the instances, how large,
minutes to build from nothing cached), its instance snapshots (how many, how large, minutes to set up), the
seconds a candidate costs beyond its tests' own run (median and p90), and a group of 32 candidates on one
instance (what one RL step asks) with 2 workers; beside them the official structure's cost for the same
instances (SWE-bench's harness builds an image per instance: its instance layer holds a clone of the
repository with its whole history and the repository's install; measured here as that clone's size, a
lower bound).

    python3 scripts/speed/bench_repos.py --rows ../shared/data/swe-bench/swe-bench-verified-test-9repos.jsonl \\
        --repos /tmp/repos --group pytest-dev__pytest-7373 --group-rows ../shared/data/swe-bench/swe-bench-lite-test.jsonl \\
        [--from-run /tmp/ra-full/run] [--rebuild 0] [--write-docs]

On a fresh engine (scripts/drills/fresh_engine.sh, DOCKER_HOST and PASSK_CACHE_DIR set) every image is built
from nothing and its minutes are what a new machine pays; --rebuild N also removes and rebuilds N per
repository on a warm one. --from-run reads the per-candidate figures from an earlier run's rows
(scripts/agreement/repos_agreement.py's) instead of running every instance again. What this machine cannot
build (refused by name: a Python no Debian base gives, a file the mirror lacks) is left out and counted."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.lib import passk_run  # noqa: E402
from scripts.lib.passk_run import buildable  # noqa: E402


def _evaluate(rows_file: Path, preds_file: Path, repos: str, out: Path, workers: int = 2) -> list:
    return passk_run.evaluate(rows_file, preds_file, out, "--repos", repos, workers=workers)


def overhead(row: dict) -> float | None:
    """A candidate's seconds beyond its tests' own run: the tree, the venv's copy, the setup and the eval's
    install, the patch, the prepare step, and passk's hand-over (its whole wall minus the test step)."""
    test = row.get("channel_detail", {}).get("test_s")
    return None if test is None or row.get("wall_s") is None else row["wall_s"] - test


def environments(rows: list, repos: str, rebuild: int) -> list:
    """[(key, python, packages, image MB, unique MB, build minutes)] of each environment the rows need; the
    first `rebuild` of each repository built from nothing cached (its image removed, its wheels resolved
    again) and timed, the others built if missing and sized (minutes from the record passk kept when an
    earlier run built the image from nothing cached, else None)."""
    import docker
    from harness.environments.bases import ensure_base
    from harness.execution.sandbox.docker import repo_image
    from harness.execution.sandbox.images import ensure_image
    from harness.inputs.config import Limits, RepoSettings
    from harness.inputs.formats.swebench import load
    from harness.environments.repository import build_record, cache_root
    from harness.inputs.repos.recipes import from_settings, to_settings
    from harness.inputs.repos.tasks import environments as envs_of, prepare
    client = docker.from_env()
    problems = prepare(load(Path("rows"), [(f"row {i}", r) for i, r in enumerate(rows)]),
                       RepoSettings(dir=repos), Limits())
    out, rebuilt, images = [], {}, {"sandbox": set(), "environments": set()}
    for key, env in envs_of(problems).items():
        ensure_base(client, env.base_image)
        sandbox = ensure_image(client, env.base_image)
        timed = rebuilt.get(env.spec.repo, 0) < rebuild
        if timed:
            rebuilt[env.spec.repo] = rebuilt.get(env.spec.repo, 0) + 1
            for img in client.images.list(filters={"label": f"org.passk.repo-environment={key}"}):
                client.images.remove(img.id, force=True)
            shutil.rmtree(cache_root() / key, ignore_errors=True)
        env2, projects = from_settings(to_settings(env, repos))
        fresh = not client.images.list(filters={"label": f"org.passk.repo-environment={key}"})
        t0 = time.monotonic()
        facts = repo_image(client, sandbox, env2, projects)
        minutes = (time.monotonic() - t0) / 60 if timed or fresh else None
        record = build_record(key, facts["image"])
        if minutes is None and record and not record["wheels_cached"]:   # built from nothing by an earlier run
            minutes = record["seconds"] / 60
        size = client.images.get(facts["image_id"]).attrs["Size"]
        base = client.images.get(sandbox["image_id"]).attrs["Size"]
        images["sandbox"].add(sandbox["image_id"])
        images["environments"].add(facts["image_id"])
        out.append((key, facts["repo_environment"]["python"], len(facts["repo_environment"]["packages"]),
                    size / 1e6, (size - base) / 1e6, minutes))
    return out, disk_mb(client, images["environments"]) - disk_mb(client, images["sandbox"])


def disk_mb(client, image_ids: set) -> float:
    """What these images hold on disk together, in MB: each distinct layer of the storage driver counted
    once (images that share a base share its layers; Docker's per-image size counts them again)."""
    dirs = set()
    for image_id in image_ids:
        data = client.images.get(image_id).attrs["GraphDriver"]["Data"] or {}
        dirs.update(d for d in [data.get("UpperDir"), *(data.get("LowerDir") or "").split(":")] if d)
    total = 0
    for d in dirs:
        du = subprocess.run(["du", "-sb", d], capture_output=True, text=True)
        total += int(du.stdout.split()[0]) if du.returncode == 0 and du.stdout else 0
    return total / 1e6


def layer_or_snapshot(client, image_id: str, snapshot_dir: Path, repeat: int = 5) -> str:
    """The two ways to keep an instance set up, side by side on one snapshot: as a layer of an image of its
    own (FROM the environment's image, the tree copied in: SWE-bench's structure, without its clone's
    history) or as passk's snapshot on the host (a read-only mount). Each costs a candidate the same copy
    into its tmpfs; what differs is making and keeping it. One line of figures."""
    import statistics as st
    with tempfile.TemporaryDirectory(prefix="passk-layer-") as ctx:
        subprocess.run(["cp", "-a", str(snapshot_dir / "testbed"), f"{ctx}/testbed"], check=True)
        Path(ctx, "Dockerfile").write_text("ARG ENV\nFROM ${ENV}\nCOPY testbed /opt/passk/instance/testbed\n")
        t0 = time.monotonic()
        img, _ = client.images.build(path=ctx, tag="passk-bench-instance-layer:1", buildargs={"ENV": image_id},
                                     rm=True, forcerm=True, pull=False)
        build_s = time.monotonic() - t0
    layer_mb = (img.attrs["Size"] - client.images.get(image_id).attrs["Size"]) / 1e6
    snap_mb = int(subprocess.run(["du", "-sb", str(snapshot_dir)], capture_output=True, text=True).stdout.split()[0]) / 1e6
    copy = "t0=$(date +%s%N); cp -a {src}/. /testbed/; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 ))"
    runs = {}
    for name, src, volumes in (("layer", "/opt/passk/instance/testbed", {}),
                               ("snapshot", "/s/testbed", {str(snapshot_dir): {"bind": "/s", "mode": "ro"}})):
        ms = []
        for _ in range(repeat):
            out = client.containers.run(img.id, ["-c", copy.format(src=src)], entrypoint="/bin/sh", remove=True,
                                        network_disabled=True, volumes=volumes, user="0",
                                        tmpfs={"/testbed": "size=4096m"})
            ms.append(int(out.decode().split()[-1]))
        runs[name] = st.median(ms) / 1000
    client.images.remove(img.id, force=True)
    return (f"An instance kept set up, two ways (one snapshot of {snap_mb:.0f} MB): as an image layer, {build_s:.1f} s "
            f"to build and {layer_mb:.0f} MB in the engine, a candidate's copy {runs['layer']:.2f} s (median of "
            f"{repeat}); as passk's snapshot on the host, made by the set-up's own container (no build), "
            f"{snap_mb:.0f} MB on disk, a candidate's copy {runs['snapshot']:.2f} s. passk keeps the snapshot.")


def clone_mb(repos: str, repo: str) -> tuple[float, bool]:
    """(the size of a clone of the repository with its whole history, what the harness's instance image holds
    before the install, in MB; whether it was a clone). A partial mirror (`fetch` brings some without every
    object) cannot be cloned: its packed objects are counted instead, a lower bound."""
    from harness.inputs.repos.trees import git_dir
    with tempfile.TemporaryDirectory() as tmp:
        cloned = subprocess.run(["git", "clone", "-q", "--no-local", str(git_dir(repos, repo)), f"{tmp}/c"],
                                capture_output=True)
        if cloned.returncode == 0:
            return sum(f.stat().st_size for f in Path(tmp, "c").rglob("*") if f.is_file()) / 1e6, True
    counted = subprocess.run(["git", f"--git-dir={git_dir(repos, repo)}", "count-objects", "-v"], capture_output=True,
                             text=True, check=True).stdout
    kib = {k: int(v) for k, _, v in (line.partition(": ") for line in counted.splitlines()) if v.strip().isdigit()}
    return (kib.get("size-pack", 0) + kib.get("size", 0)) * 1024 / 1e6, False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", required=True, action="append", help="SWE-bench rows (repeatable; an instance once)")
    ap.add_argument("--repos", required=True)
    ap.add_argument("--repo", action="append", default=[])
    ap.add_argument("--group", required=True, help="the instance the 32-candidate group runs on")
    ap.add_argument("--group-rows", default=None, help="the rows file that holds --group (default: --rows)")
    ap.add_argument("--from-run", default=None, help="an earlier run's directory (its rows give the per-candidate figures)")
    ap.add_argument("--rebuild", type=int, default=0,
                    help="environments per repository rebuilt from nothing cached and timed (the others sized)")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    rows, seen = [], set()
    for path in args.rows:
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            if r["instance_id"] not in seen and (not args.repo or r["repo"] in args.repo):
                seen.add(r["instance_id"])
                rows.append(r)
    rows, refused = buildable(rows, args.repos)
    lines = []
    t0 = time.monotonic()
    envs, distinct_mb = environments(rows, args.repos, args.rebuild)
    build_minutes = (time.monotonic() - t0) / 60
    from scripts.lib import figures
    lines.append(figures.table(["environment", "Python", "packages", "image MB", "MB over passk's sandbox image",
                                "minutes to build (nothing cached)"],
                               [[k, py, n, f"{mb:.0f}", f"{u:.0f}", "-" if m is None else f"{m:.1f}"]
                                for k, py, n, mb, u, m in envs]))
    by_repo: dict = {}
    for r in rows:
        by_repo.setdefault(r["repo"], []).append(r)
    official = []
    for repo, its in sorted(by_repo.items()):
        mb, cloned = clone_mb(args.repos, repo)
        official.append([repo, len(its), f"{mb:.0f}" + ("" if cloned else " (packed objects: a partial mirror)"),
                         f"{mb * len(its) / 1e3:.1f}"])
    official.append(["all", len(rows), "", f"{sum(float(o[3]) for o in official):.1f}"])
    lines.append(figures.table(["repository", "instances", "one instance layer's clone, MB (the official structure)",
                                "GB for these instances (clones alone, before installs and the env layers)"], official))
    timed = [m for *_, m in envs if m is not None]
    lines.append(f"passk: {len(envs)} environment image(s) for {len(rows)} instances ({len(refused)} more refused by "
                 f"name), {distinct_mb / 1e3:.2f} GB on disk over its sandbox images (each layer counted once: the "
                 f"environments share their repository base; the per-image column above counts it in each, "
                 f"{sum(u for _, _, _, _, u, _ in envs) / 1e3:.2f} GB); {len(timed)} built from nothing on this engine in "
                 f"{sum(timed):.1f} minutes ({build_minutes:.1f} minutes for this step in all).")
    from harness.environments import instances
    snaps = [json.loads(p.read_text()) for p in instances.root().glob("*/*/facts.json")]
    ids = {r["instance_id"] for r in rows}
    mine = [f for f in snaps if f.get("instance_id") in ids]
    if mine:
        setup = [f["setup_s"] for f in mine if isinstance(f.get("setup_s"), (int, float))]
        lines.append(f"Instance snapshots on this machine for these instances: {len({f['instance_id'] for f in mine})} "
                     f"({len(mine)} with every environment image they were made on), "
                     f"{instances.disk_bytes() / 1e9:.2f} GB for all snapshots in the cache; set-up (the spec's "
                     f"pre-install and install, once per instance) median {statistics.median(setup):.1f} s, max "
                     f"{max(setup):.0f} s, {sum(setup) / 60:.0f} minutes in all.")
    if args.from_run:
        done = [json.loads(line) for line in (Path(args.from_run) / "results.jsonl").read_text().splitlines()]
        extra = sorted(o for o in (overhead(r) for r in done) if o is not None)
        if extra:
            p90 = extra[min(len(extra) - 1, int(0.9 * len(extra)))]
            lines.append(f"Seconds per candidate beyond its tests' own run ({len(extra)} candidates of {args.from_run}): "
                         f"median {statistics.median(extra):.2f} s, p90 {p90:.2f} s, max {max(extra):.1f} s.")
    group_rows = [json.loads(line) for line in Path(args.group_rows or args.rows[0]).read_text().splitlines()]
    group = next(r for r in group_rows if r["instance_id"] == args.group)
    with tempfile.TemporaryDirectory(prefix="passk-bench-repos-") as tmp:
        rows_file, preds_file = Path(tmp, "rows.jsonl"), Path(tmp, "preds.jsonl")
        rows_file.write_text(json.dumps(group) + "\n")
        preds_file.write_text("".join(json.dumps({"instance_id": group["instance_id"], "model_name_or_path": "gold",
                                                  "model_patch": group["patch"]}) + "\n" for _ in range(32)))
        t0 = time.monotonic()
        got = _evaluate(rows_file, preds_file, args.repos, Path(tmp, "run"))
        took = time.monotonic() - t0
    labels: dict = {}
    for r in got:
        labels[f"{r['status']} {r['reason']}"] = labels.get(f"{r['status']} {r['reason']}", 0) + 1
    extra = [o for o in (overhead(r) for r in got) if o is not None]
    tests = [r["channel_detail"].get("test_s") for r in got if r["channel_detail"].get("test_s") is not None]
    lines.append(f"A group of 32 candidates (the gold patch) on {group['instance_id']}, 2 workers: {took:.0f} s "
                 f"({32 / took * 60:.1f} candidates/min; its snapshot made once, if it was not there); labels {labels}; "
                 f"each candidate's tests {statistics.median(tests):.1f} s (median), beyond them "
                 f"{statistics.median(extra):.2f} s (median).")
    from harness.environments import instances
    sample = next((p.parent for p in instances.root().glob("*/*/facts.json")
                   if json.loads(p.read_text()).get("instance_id") == args.group), None)
    if sample is not None:
        import docker
        client = docker.from_env()
        image_id = json.loads((sample / "facts.json").read_text())["image_id"]
        try:
            lines.append(layer_or_snapshot(client, image_id, sample))
        except Exception as e:  # noqa: BLE001 - a figure left out, said
            lines.append(f"(the layer-or-snapshot figure was not measured: {type(e).__name__}: {e})")
    if refused:
        lines.append("Refused by name: " + "; ".join(f"{i}: {w.splitlines()[0][:160]}" for i, w in refused))
    body = "\n\n".join(lines) + "\n"
    print(body)
    if args.write_docs:
        figures.write("repos-speed", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
