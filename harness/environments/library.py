"""Python environments: the libraries a benchmark's tests need, as data. An environment is a list of exact
pins (`name==version`), optionally named; passk resolves it on the host with pip (the container build
cannot reach the package index), downloads binary wheels for the sandbox image's Python (a package built
from its source distribution only where the list allows it), records every file's sha256 in a lock, and
builds a derived image from passk's sandbox image with `pip install --no-index` from those wheels. The
image's tag hashes the sandbox image id, the Python version and the lock, so the same list gives the same
image and a changed one a new one. Shipped environments live in containers/environments/NAME.txt.

A requirements file is pip's format restricted to pins, with passk's own lines in comments:
    # passk: name: bigcodebench
    # passk: allow-source: wordninja, wikipedia        (built into wheels on the host, from their sdists)
    # passk: deviation: numpy 1.21.2 -> 1.23.5: ...     (where the list differs from the benchmark's own)
    # passk: data: nltk punkt: ...                       (data the tasks need that no package provides)
    numpy==1.23.5
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.core.errors import HarnessError, InputError
from harness.core.images import build

LOCK_FORMAT = 1
INSTALLER = "pip==24.2"          # installs the wheels inside the image (from its own wheel; the image has no pip)
ENV_REPOSITORY = "passk-env"
LABEL_ENVIRONMENT = "org.passk.environment"
LABEL_LOCK = "org.passk.environment-lock"
LABEL_SANDBOX = "org.passk.sandbox-image-id"
NONE, AUTO = "none", "auto"

_PIN = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(\[[A-Za-z0-9,._ -]+\])?\s*==\s*"
                  r"([0-9][A-Za-z0-9.+!_-]*)$")
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


def canonical_name(name: str) -> str:
    """PEP 503's normalised name: lower case, runs of -, _ and . as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The canonical package name of a pin ("Foo_Bar[x]==1.0" -> "foo-bar")."""
    return canonical_name(requirement.split("==")[0].split("[")[0].strip())


@dataclass(frozen=True)
class Environment:
    name: str
    requirements: tuple[str, ...]                 # "name==version", one per package asked for
    allow_source: tuple[str, ...] = ()            # canonical names that may be built from their sdist
    deviations: tuple[str, ...] = ()              # where the list differs from the benchmark's published one
    data: tuple[str, ...] = ()                    # data the tasks need that is not a package (named as missing)
    file: str | None = None                       # where it was read from
    preload: tuple[str, ...] = ()                 # modules the forkserver imports once for BigCodeBench's candidates

    def spec(self) -> dict:
        """What decides the lock: the pins and what may be built from source (not the notes)."""
        return {"requirements": sorted(self.requirements, key=lambda r: canonical_name(r.split("==")[0])),
                "allow_source": sorted(self.allow_source)}

    @property
    def spec_sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.spec(), sort_keys=True).encode()).hexdigest()

    def pins(self) -> dict[str, str]:
        return {requirement_name(r): r.split("==", 1)[1].strip() for r in self.requirements}

    def to_dict(self) -> dict:
        return asdict(self)


def shipped_dir() -> Path:
    from harness.core.paths import containers_dir
    return containers_dir() / "environments"


def shipped() -> dict[str, Path]:
    """The named environments passk ships: {name: requirements file}."""
    try:
        folder = shipped_dir()
    except HarnessError:
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.txt"))} if folder.is_dir() else {}


def parse_requirements(path: Path, name: str | None = None) -> Environment:
    """An environment from a requirements file. Anything but exact pins, comments and passk's own comment
    lines exits 2 naming the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such requirements file") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    reqs: dict[str, tuple[int, str]] = {}
    allow, deviations, data, preload = [], [], [], []
    for lineno, raw in enumerate(text.splitlines(), 1):
        where = f"{path}:{lineno}"
        line = raw.strip()
        if line.startswith("#"):
            body = line[1:].strip()
            if body.startswith("passk:"):
                key, sep, value = body[len("passk:"):].strip().partition(":")
                key, value = key.strip(), value.strip()
                if not sep or not value:
                    raise InputError(f"{where}: a passk line is '# passk: KEY: VALUE' (name, allow-source, "
                                     f"deviation or data)")
                if key == "name":
                    if not _NAME.match(value):
                        raise InputError(f"{where}: environment name {value!r} must be letters, digits, . _ -")
                    name = name or value
                elif key == "allow-source":
                    for item in value.split(","):
                        if not _NAME.match(item.strip()):
                            raise InputError(f"{where}: allow-source names packages: {item.strip()!r} is not one")
                        allow.append(canonical_name(item.strip()))
                elif key == "deviation":
                    deviations.append(value)
                elif key == "data":
                    data.append(value)
                elif key == "preload":
                    for item in value.split(","):
                        if not _MODULE.match(item.strip()):
                            raise InputError(f"{where}: preload names modules: {item.strip()!r} is not one")
                        preload.append(item.strip())
                else:
                    raise InputError(f"{where}: unknown passk line '{key}' (name, allow-source, deviation, data or preload)")
            continue
        line = line.split(" #", 1)[0].strip()
        if not line:
            continue
        m = _PIN.match(line)
        if m is None:
            raise InputError(f"{where}: {line[:120]!r} is not an exact pin (write name==version; an environment "
                             "is pinned so that its verdicts can be reproduced)")
        key = canonical_name(m.group(1))
        pin = f"{m.group(1)}{m.group(2) or ''}=={m.group(3)}"
        if key in reqs and reqs[key][1] != pin:
            raise InputError(f"{where}: {m.group(1)} is pinned twice ({reqs[key][1]} on line {reqs[key][0]})")
        reqs.setdefault(key, (lineno, pin))
    if not reqs:
        raise InputError(f"{path}: no packages (an environment pins at least one)")
    for a in allow:
        if a not in reqs:
            raise InputError(f"{path}: allow-source names {a}, which the file does not pin")
    if name is None:
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-._") or "custom"
    return Environment(name, tuple(p for _, p in reqs.values()), tuple(dict.fromkeys(allow)), tuple(deviations),
                       tuple(data), str(path.resolve()), tuple(dict.fromkeys(preload)))


def load(spec: str | None) -> Environment | None:
    """`spec` as a setting gives it: a shipped environment's name, a requirements file, or none."""
    if spec is None or spec in (NONE, AUTO):
        return None
    named = shipped()
    if spec in named:
        return parse_requirements(named[spec], spec)
    path = Path(spec)
    if path.suffix in (".txt", ".in") or os.sep in spec or path.exists():
        return parse_requirements(path)
    known = ", ".join(named) or "none shipped"
    raise InputError(f"environment {spec!r}: neither a requirements file nor one passk ships ({known})")


def check_spec(spec) -> None:
    """A setting's value is a name, a path, none or auto (it is read when the run starts)."""
    if spec is not None and (not isinstance(spec, str) or not spec.strip()):
        raise InputError(f"environment must be a name, a requirements file, 'none' or 'auto', got {spec!r}")


def auto_for(problems: dict) -> str | None:
    """The environment a run gets when none is set: BigCodeBench's for its tasks whose `libs` go beyond
    Python's standard library, else none."""
    for p in problems.values():
        if p.format == "bigcodebench" and third_party(p.notes.get("libs")):
            return "bigcodebench"
    return None


def third_party(libs) -> list[str]:
    """The names in a task's `libs` (a list, or its text as BigCodeBench writes it) that are not modules
    of Python's standard library."""
    if isinstance(libs, str):
        try:
            import ast
            libs = ast.literal_eval(libs)
        except (ValueError, SyntaxError):
            libs = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", libs)
    if not isinstance(libs, (list, tuple)):
        return []
    std = getattr(sys, "stdlib_module_names", frozenset())
    return sorted({str(x) for x in libs if isinstance(x, str) and x.split(".")[0] not in std})


# ------------------------------------------------------------------------------------------------
# The image's Python, and resolving a list for it on the host.
# ------------------------------------------------------------------------------------------------
_PROBE = ("import json, os, platform, sys\n"
          "paths = [p for p in sys.path if p.startswith('/usr/local/lib/') and p.endswith(('dist-packages', 'site-packages'))]\n"
          "print(json.dumps({'python': platform.python_version(), 'tag': 'cp%d%d' % sys.version_info[:2],\n"
          "  'glibc': os.confstr('CS_GNU_LIBC_VERSION').split()[-1], 'machine': platform.machine(),\n"
          "  'site': paths[0] if paths else None}))\n")


def probe_image(client, image: str) -> dict:
    """The sandbox image's Python: version, ABI tag, glibc, machine and the site directory on its path."""
    out = client.containers.run(image, ["-c", _PROBE], entrypoint="/usr/local/bin/passk-python",
                                network_disabled=True, remove=True, stdout=True, stderr=True)
    facts = json.loads(out.decode().strip().splitlines()[-1])
    if not facts.get("site"):
        raise HarnessError(f"{image}: its Python has no /usr/local site directory on its path to install into")
    return facts


def platforms(target: dict) -> list[str]:
    """The wheel platform tags the image's Python accepts (manylinux down to 2.17, and the legacy names)."""
    machine = target["machine"]
    major, minor = (int(x) for x in target["glibc"].split(".")[:2])
    tags = [f"manylinux_{major}_{m}_{machine}" for m in range(minor, 16, -1)]
    return tags + [f"manylinux2014_{machine}", f"manylinux2010_{machine}", f"manylinux1_{machine}", f"linux_{machine}"]


def cache_root() -> Path:
    root = os.environ.get("PASSK_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "passk")
    return Path(root) / "environments"


def _cache_dir(env: Environment, target: dict) -> Path:
    key = hashlib.sha256(json.dumps({"spec": env.spec(), "tag": target["tag"], "glibc": target["glibc"],
                                     "machine": target["machine"], "installer": INSTALLER}, sort_keys=True).encode())
    return cache_root() / f"{env.name}-{key.hexdigest()[:16]}"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _wheel_name_version(filename: str) -> tuple[str, str]:
    parts = filename[:-len(".whl")].split("-")
    return canonical_name(parts[0]), parts[1]


def _pip(args: list[str], what: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip() and not ln.startswith(("  Using", "  Downloading",
                                                                                               "Collecting", "  Obtaining"))]
        raise InputError(f"{what}: pip failed (exit {proc.returncode}):\n  " + "\n  ".join(lines[-12:]))


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
               if not (wheels / p["file"]).is_file() or _sha256(wheels / p["file"]) != p["sha256"]]
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
                    built.setdefault(n, {"sdist": sdist.name, "sdist_sha256": _sha256(sdist)})
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
            packages.append({"name": n, "version": v, "file": whl.name, "sha256": _sha256(whl),
                             **({"built_from": built[n]["sdist"], "sdist_sha256": built[n]["sdist_sha256"]}
                                if n in built else {})})
        missing = [n for n in pins if n not in {p["name"] for p in packages}]
        if missing:
            raise InputError(f"environment {env.name}: pip resolved no wheel for {', '.join(missing)}")
        iname, iversion = _wheel_name_version(inst.name)
        installer = {"name": iname, "version": iversion, "file": inst.name, "sha256": _sha256(inst)}
        lock = {"format": LOCK_FORMAT, "environment": env.name, "spec_sha256": env.spec_sha256,
                "python": target["python"], "abi": target["tag"], "glibc": target["glibc"],
                "machine": target["machine"], "packages": packages, "installer": installer,
                "sha256": lock_sha256(packages, installer)}
        return commit_lock(wheels, where / "wheels", lock_path, lock)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def link_wheels(wheels: str, files: list, into: Path) -> None:
    """The locked wheel files into a build context's directory: hard links where the file system allows
    (a context of hundreds of MB costs no copy), copies elsewhere."""
    into.mkdir()
    for name in files:
        src, dst = Path(wheels, name), into / name
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)


def commit_lock(wheels: Path, final: Path, lock_path: Path, lock: dict) -> dict:
    """Move the downloaded wheels to `final`, then write the lock beside them (the lock last, atomically:
    a stop between the two leaves no lock, so the next run resolves again instead of trusting a half)."""
    if final.exists():
        shutil.rmtree(final)
    shutil.move(str(wheels), final)
    tmp = lock_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(lock, indent=1) + "\n")
    os.replace(tmp, lock_path)
    return {**lock, "wheels": str(final)}


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


def missing_hint(reason: str, detail: str, env: dict | None) -> str:
    """What a failing row adds when the environment, not the code, lacked something: a module it does not
    hold, or nltk data (which no package provides and the sandbox cannot download)."""
    name = env["name"] if env else "none"
    if reason == "exception:ModuleNotFoundError":
        return (f"[not in the run's environment ({name}); the libraries candidates get are set with --environment "
                "or --requirements] ")
    if reason == "exception:LookupError" and "nltk" in detail:
        return (f"[nltk data is not in the run's environment ({name}): no package provides it and the sandbox has "
                "no network for nltk.download] ")
    return ""


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

