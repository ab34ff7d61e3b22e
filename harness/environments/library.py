"""Library environments: a list of exact pins (inputs/libraries.py reads it) resolved on the host with pip
(the container build cannot reach the package index), binary wheels downloaded for the sandbox image's
Python (a package built from its source distribution only where the list allows it), every file's sha256
in a lock, and a derived image built from passk's sandbox image with `pip install --no-index` from those
wheels. The image's tag hashes the sandbox image id, the Python version and the lock, so the same list
gives the same image and a changed one a new one."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from harness.core.errors import InputError
from harness.environments.bases import INSTALLER, build, pip_lines, run_pip, cache_root as _cache_root, commit_lock, link_wheels, platforms, probe_image, sha256
from harness.inputs.libraries import Environment, canonical_name, requirement_name

LOCK_FORMAT = 1
ENV_REPOSITORY = "passk-env"
LABEL_ENVIRONMENT = "org.passk.environment"
LABEL_LOCK = "org.passk.environment-lock"
LABEL_SANDBOX = "org.passk.sandbox-image-id"


def cache_root() -> Path:
    return _cache_root("environments")


def _cache_dir(env: Environment, target: dict) -> Path:
    key = hashlib.sha256(json.dumps({"spec": env.spec(), "tag": target["tag"], "glibc": target["glibc"],
                                     "machine": target["machine"], "installer": INSTALLER}, sort_keys=True).encode())
    return cache_root() / f"{env.name}-{key.hexdigest()[:16]}"


def _wheel_name_version(filename: str) -> tuple[str, str]:
    parts = filename[:-len(".whl")].split("-")
    return canonical_name(parts[0]), parts[1]


def _pip(args: list[str], what: str) -> None:
    proc = run_pip(args)
    if proc.returncode != 0:
        raise InputError(f"{what}: pip failed (exit {proc.returncode}):\n  " + "\n  ".join(pip_lines(proc.stdout)[-12:]))


def lock_sha256(packages: list[dict], installer: dict) -> str:
    """The lock's identity: every package's name, version and the sha256 that decides it (a wheel built
    on the host counts by its source distribution's, which does not change between builds)."""
    lines = sorted(f"{p['name']}=={p['version']} {p.get('sdist_sha256') or p['sha256']}" for p in packages)
    lines.append(f"installer {installer['name']}=={installer['version']} {installer['sha256']}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def resolve(env: Environment, target: dict, log=None) -> dict:
    """The lock of `env` for the image's Python (`target`, from probe_image): resolved by pip on the host
    once, then read from the cache (each file's sha256 checked). Returns the lock with `wheels`, the
    directory that holds its files."""
    log = log or (lambda msg: print(f"passk: {msg}", file=sys.stderr))
    where = _cache_dir(env, target)
    lock_path = where / "lock.json"
    if lock_path.exists():
        lock = json.loads(lock_path.read_text())
        wheels = where / "wheels"
        bad = [p["file"] for p in lock["packages"] + [lock["installer"]]
               if not (wheels / p["file"]).is_file() or sha256(wheels / p["file"]) != p["sha256"]]
        if not bad:
            return {**lock, "wheels": str(wheels)}
        log(f"environment {env.name}: {len(bad)} cached wheel(s) changed or missing ({bad[0]}); resolving again")
    where.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="resolve-", dir=where))
    try:
        wheels, sources = work / "wheels", work / "sources"
        wheels.mkdir()
        pins = {requirement_name(r): r for r in env.requirements}
        built: dict[str, dict] = {}
        if env.allow_source:
            log(f"environment {env.name}: building {', '.join(env.allow_source)} from source on the host")
            _pip(["download", "--no-deps", "--no-binary", ":all:", "-d", str(sources),
                  *[pins[a] for a in env.allow_source]], f"environment {env.name}")
            for sdist in sorted(sources.iterdir()):
                _pip(["wheel", "--no-deps", "-w", str(wheels), str(sdist)], f"environment {env.name}: {sdist.name}")
                for whl in wheels.glob("*.whl"):
                    n, _ = _wheel_name_version(whl.name)
                    built.setdefault(n, {"sdist": sdist.name, "sdist_sha256": sha256(sdist)})
        req_file = work / "requirements.txt"
        req_file.write_text("\n".join(env.requirements) + "\n")
        plats = [a for t in platforms(target) for a in ("--platform", t)]
        log(f"environment {env.name}: resolving {len(env.requirements)} pins for Python {target['python']} "
            f"({target['tag']}, glibc {target['glibc']}) with pip")
        _pip(["download", "--only-binary=:all:", "--python-version", target["tag"][2:], "--implementation", "cp",
              "--abi", target["tag"], "--abi", "abi3", "--abi", "none", *plats, "--platform", "any",
              "--find-links", str(wheels), "-d", str(wheels), "-r", str(req_file)], f"environment {env.name}")
        installer_dir = work / "installer"
        _pip(["download", "--only-binary=:all:", "--no-deps", "-d", str(installer_dir), INSTALLER], "the installer")
        found = next(installer_dir.glob("*.whl"))
        inst = wheels / found.name
        shutil.move(str(found), inst)
        packages = []
        for whl in sorted(wheels.glob("*.whl")):
            if whl.name == inst.name:
                continue
            n, v = _wheel_name_version(whl.name)
            packages.append({"name": n, "version": v, "file": whl.name, "sha256": sha256(whl),
                             **({"built_from": built[n]["sdist"], "sdist_sha256": built[n]["sdist_sha256"]}
                                if n in built else {})})
        missing = [n for n in pins if n not in {p["name"] for p in packages}]
        if missing:
            raise InputError(f"environment {env.name}: pip resolved no wheel for {', '.join(missing)}")
        iname, iversion = _wheel_name_version(inst.name)
        installer = {"name": iname, "version": iversion, "file": inst.name, "sha256": sha256(inst)}
        lock = {"format": LOCK_FORMAT, "environment": env.name, "spec_sha256": env.spec_sha256,
                "python": target["python"], "abi": target["tag"], "glibc": target["glibc"],
                "machine": target["machine"], "packages": packages, "installer": installer,
                "sha256": lock_sha256(packages, installer)}
        return commit_lock(wheels, where / "wheels", lock_path, lock)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# The derived image.
# ------------------------------------------------------------------------------------------------
_DOCKERFILE = """\
# passk environment {name}: its locked wheels, installed offline, then copied into passk's sandbox image.
# The install runs on the base image (the same Python), so that a new sandbox image reuses it from the
# build cache and only the copy is done again.
ARG BASE_IMAGE
ARG SANDBOX_IMAGE
FROM ${{BASE_IMAGE}} AS install
COPY wheels /opt/passk-wheels
RUN python3 /opt/passk-wheels/{installer}/pip install --no-index --no-deps --no-cache-dir \\
      --disable-pip-version-check --target /opt/passk-env {packages}
FROM ${{SANDBOX_IMAGE}}
COPY --from=install /opt/passk-env {site}
RUN passk-python -c "import sys; assert '{site}' in sys.path, sys.path"{preload}
LABEL {label_env}="{name}" {label_lock}="{lock}" {label_sandbox}="{sandbox_id}"
"""


def _preload_step(env: Environment) -> str:
    """The Dockerfile's lines that name the modules the forkserver preloads (layout.ENV_PRELOAD_FILE), and
    build matplotlib's font cache once, where candidates read it."""
    if not env.preload:
        return ""
    names = " ".join(env.preload)   # module names only (_MODULE): nothing here reaches the shell as syntax
    return (f" \\\n && mkdir -p /opt/passk/mpl && printf '%s\\n' {names} > /opt/passk/preload"
            f" \\\n && (MPLCONFIGDIR=/opt/passk/mpl MPLBACKEND=Agg passk-python -c \"import matplotlib.pyplot\" || true)"
            " \\\n && chmod -R a+rX /opt/passk/mpl")


def image_tag(env: Environment, sandbox: dict, lock: dict) -> str:
    h = hashlib.sha256(f"{sandbox['image_id']}\0{lock['python']}\0{lock['sha256']}\0{' '.join(env.preload)}".encode()).hexdigest()
    repo = re.sub(r"[^a-z0-9]+", "-", env.name.lower()).strip("-") or "custom"   # what Docker takes in a name
    return f"{ENV_REPOSITORY}-{repo}:{h[:12]}"


def summary(env: Environment, lock: dict, image: str, image_id: str) -> dict:
    """What the manifest records of an environment (and `reproduce` compares)."""
    return {"name": env.name, "sha256": lock["sha256"], "python": lock["python"], "abi": lock["abi"],
            "image": image, "image_id": image_id, "file": env.file, "spec_sha256": env.spec_sha256,
            "requirements": list(env.requirements), "allow_source": list(env.allow_source),
            "deviations": list(env.deviations), "data": list(env.data),
            "lock": [{k: p[k] for k in ("name", "version", "sha256", "built_from", "sdist_sha256") if k in p}
                     for p in lock["packages"]],
            "installer": {k: lock["installer"][k] for k in ("name", "version", "sha256")}}


def ensure_image(client, sandbox: dict, env: Environment, rebuild: bool = False, log=None) -> dict:
    """The environment's image on passk's sandbox image, built if missing. Returns the sandbox facts for
    it, with `environment` (summary) and `sandbox_image`/`sandbox_image_id` of the image under it."""
    import docker.errors
    log = log or (lambda msg: print(f"passk: {msg}", file=sys.stderr))
    target = probe_image(client, sandbox["image"])
    lock = resolve(env, target, log)
    tag = image_tag(env, sandbox, lock)
    facts = {**sandbox, "image": tag, "sandbox_image": sandbox["image"], "sandbox_image_id": sandbox["image_id"]}
    if not rebuild:
        try:
            img = client.images.get(tag)
            return {**facts, "image_id": img.id, "environment": summary(env, lock, tag, img.id)}
        except docker.errors.ImageNotFound:
            pass
    size = sum(Path(lock["wheels"], p["file"]).stat().st_size for p in lock["packages"])
    log(f"building image {tag} (environment {env.name}: {len(lock['packages'])} packages, {size / 1e6:.0f} MB of "
        f"wheels, installed offline)")
    with tempfile.TemporaryDirectory(prefix="passk-env-") as ctx:
        link_wheels(lock["wheels"], [p["file"] for p in lock["packages"] + [lock["installer"]]], Path(ctx, "wheels"))
        Path(ctx, "Dockerfile").write_text(_DOCKERFILE.format(
            name=env.name, installer=lock["installer"]["file"], site=target["site"], lock=lock["sha256"],
            packages=" ".join(f"/opt/passk-wheels/{p['file']}" for p in lock["packages"]),
            preload=_preload_step(env),
            label_env=LABEL_ENVIRONMENT, label_lock=LABEL_LOCK, label_sandbox=LABEL_SANDBOX,
            sandbox_id=sandbox["image_id"]))
        img = build(client, ctx, tag, {"SANDBOX_IMAGE": sandbox["image"],
                                       "BASE_IMAGE": sandbox.get("base_image") or sandbox["image"]}, nocache=rebuild)
    return {**facts, "image_id": img.id, "environment": summary(env, lock, tag, img.id)}


def lock_differences(before: dict | None, now: dict | None) -> list[str]:
    """Which packages differ between two recorded environments ('numpy 1.23.5 then, 1.24.0 now')."""
    if not before and not now:
        return []
    if not before or not now:
        return [f"environment: {before.get('name') if before else 'none'} then, {now.get('name') if now else 'none'} now"]
    a = {p["name"]: p for p in before.get("lock", [])}
    b = {p["name"]: p for p in now.get("lock", [])}
    out = []
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name), b.get(name)
        if x is None or y is None:
            out.append(f"{name}: {'absent' if x is None else x['version']} then, {'absent' if y is None else y['version']} now")
        elif x["version"] != y["version"]:
            out.append(f"{name}: {x['version']} then, {y['version']} now")
        elif (x.get("sdist_sha256") or x["sha256"]) != (y.get("sdist_sha256") or y["sha256"]):
            out.append(f"{name} {x['version']}: another file (sha256 {x['sha256'][:12]} then, {y['sha256'][:12]} now)")
    if before.get("python") != now.get("python"):
        out.append(f"python: {before.get('python')} then, {now.get('python')} now")
    return out


def cached() -> list[dict]:
    """The locks in the cache: [{name, python, packages, sha256, path}]."""
    out = []
    root = cache_root()
    for lock_path in sorted(root.glob("*/lock.json")) if root.is_dir() else []:
        try:
            lock = json.loads(lock_path.read_text())
        except (OSError, ValueError):
            continue
        out.append({"name": lock.get("environment"), "python": lock.get("python"), "sha256": lock.get("sha256"),
                    "packages": len(lock.get("packages", [])), "spec_sha256": lock.get("spec_sha256"),
                    "path": str(lock_path.parent)})
    return out

