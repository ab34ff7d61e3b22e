"""`passk doctor`: what this machine has for running passk, what is missing, and how to fix each."""

from __future__ import annotations

import platform
import shutil
from dataclasses import dataclass

from harness.core.version import __version__
from harness.inputs.config import default_base_image


@dataclass
class Check:
    name: str
    ok: bool
    found: str
    fix: str = ""
    needed: bool = True   # False: optional (gVisor); its absence does not fail the doctor


def checks(base_image: str | None = None) -> list[Check]:
    base_image = base_image or default_base_image()
    out = [Check("passk", True, f"{__version__} on Python {platform.python_version()}")]
    out += extra_checks()
    try:
        import docker  # noqa: F401
        out.append(Check("Docker SDK for Python", True, f"docker {docker.__version__}"))
    except ImportError:
        out.append(Check("Docker SDK for Python", False, "not installed", "pip install docker"))
        return out
    from harness.core.paths import containers_dir
    from harness.execution.sandbox.images import image_tag
    try:
        sources = containers_dir()
        out.append(Check("sandbox sources", True, str(sources)))
    except Exception as e:  # noqa: BLE001 - reported, not raised
        out.append(Check("sandbox sources", False, str(e), "reinstall passk (pip install passk)"))
        return out
    try:
        client = docker.from_env(timeout=10)
        client.ping()
        version = client.version()
        info = client.info()
    except Exception as e:  # noqa: BLE001
        fix = ("install and start a Docker engine: on Debian `apt-get install docker.io` then `dockerd &` "
               "(as root), or start Docker Desktop; DOCKER_HOST selects another engine")
        out.append(Check("Docker engine", False, f"no answer ({type(e).__name__})", fix))
        return out
    out.append(Check("Docker engine", True, f"server {version.get('Version')}, {info.get('OperatingSystem')}, "
                                            f"{info.get('NCPU')} CPUs"))
    runtimes = sorted((info.get("Runtimes") or {}).keys())
    out.append(Check("runtime runc", "runc" in runtimes, ", ".join(runtimes) or "none", "reinstall the engine"))
    runsc_binary = shutil.which("runsc")
    variants = [r for r in runtimes if r.startswith("runsc-")]
    out.append(Check("runtime runsc (gVisor, optional)", "runsc" in runtimes,
                     ("registered" if "runsc" in runtimes else ("installed, not registered" if runsc_binary
                                                                else "not installed"))
                     + (f"; variants {', '.join(variants)}" if variants else ""),
                     "apt-get install runsc, then register it in /etc/docker/daemon.json: "
                     '{"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--platform=ptrace", '
                     '"--network=none"]}}} and restart dockerd', needed=False))
    images = {}
    for name in (base_image, image_tag(base_image)):
        try:
            images[name] = client.images.get(name).id
        except Exception:  # noqa: BLE001
            images[name] = None
    base_fix = (f"docker pull {base_image}" if base_image != "passk-base:bookworm" else
                "where a registry is reachable: `passk images build --base-image python:3.11-slim` (or set "
                "PASSK_BASE_IMAGE); offline, `passk images build` makes it with debootstrap (apt-get install debootstrap)")
    out.append(Check(f"base image {base_image}", images[base_image] is not None,
                     images[base_image] or "not on this machine (made on first build)", base_fix, needed=False))
    tag = image_tag(base_image)
    out.append(Check(f"sandbox image {tag}", images[tag] is not None,
                     images[tag] or "not built yet (built on first use)",
                     f"passk images build --base-image {base_image}", needed=False))
    out += environment_checks(client, images[tag])
    out += repo_environment_checks(client)
    out += language_checks(client, tag, images[tag])
    return out


def extra_checks() -> list[Check]:
    """One line per optional extra: installed, or what it is for and how to install it."""
    from harness.core.extras import EXTRAS, missing
    out = []
    for name, extra in EXTRAS.items():
        absent = missing(name)
        out.append(Check(f"extra {name}", not absent, "installed" if not absent else
                         f"not installed ({', '.join(absent)} missing): needed by {extra.used_by}",
                         f"pip install 'passk[{name}]'", needed=False))
    return out


def language_checks(client, sandbox_tag: str, sandbox_id: str | None) -> list[Check]:
    """Which languages' images are built on the current sandbox image, and which would be built on first use
    (each is built only when a run, a test or `passk images build --language` needs it)."""
    from harness.execution.sandbox.images import language_tag
    from harness.inputs.languages import IMAGE_ONLY, LANGUAGES
    names = [*LANGUAGES, *IMAGE_ONLY]
    if sandbox_id is None:
        return [Check("language images", False, f"none yet ({len(names)} languages: built on first use, after the "
                                                "sandbox image)", "passk images build --language all", needed=False)]
    built, absent = [], []
    for name in names:
        tag, _ = language_tag({"image_id": sandbox_id, "image": sandbox_tag}, name)
        try:
            client.images.get(tag)
            built.append(name)
        except Exception:  # noqa: BLE001
            absent.append(name)
    found = f"built: {', '.join(built) or 'none'}" + (f"; built on first use: {', '.join(absent)}" if absent else "")
    return [Check("language images", not absent, found,
                  "passk images build --language " + (absent[0] if len(absent) == 1 else "all"), needed=False)]


def environment_checks(client, sandbox_id: str | None) -> list[Check]:
    """Each shipped environment: its pins and deviations, whether its lock is cached and its image built
    on the current sandbox image, and what its tasks need that no package provides."""
    from harness.environments import library as environments
    from harness.inputs import libraries
    locks = {}
    for c in environments.cached():
        locks.setdefault(c["name"], c)
    built: dict[str, list] = {}
    try:
        for img in client.images.list(filters={"label": environments.LABEL_ENVIRONMENT}):
            built.setdefault((img.labels or {}).get(environments.LABEL_ENVIRONMENT), []).append(img)
    except Exception:  # noqa: BLE001 - reported as not built
        pass
    out = []
    for name, path in libraries.shipped().items():
        try:
            env = libraries.parse_requirements(path, name)
        except Exception as e:  # noqa: BLE001
            out.append(Check(f"environment {name}", False, str(e), "reinstall passk", needed=False))
            continue
        lock = locks.get(name) if locks.get(name, {}).get("spec_sha256") == env.spec_sha256 else None
        images = built.get(name, [])
        current = [i for i in images if lock and (i.labels or {}).get(environments.LABEL_LOCK) == lock["sha256"]
                   and (i.labels or {}).get(environments.LABEL_SANDBOX) == sandbox_id]
        state = (f"{len(env.requirements)} pins, {len(env.deviations)} deviations from the benchmark's list; "
                 + (f"lock {lock['sha256'][:12]} ({lock['packages']} packages for Python {lock['python']}) cached; "
                    if lock else "not resolved yet; ")
                 + ("image on the current sandbox image: " if current else "")
                 + (f"image {current[0].tags[0] if current[0].tags else current[0].id[:19]} "
                    f"({current[0].attrs.get('Size', 0) / 1e6:.0f} MB)" if current
                    else "no image on the current sandbox image yet"))
        out.append(Check(f"environment {name}", bool(current), state,
                         f"passk images build --environment {name} (or on first use)", needed=False))
        for d in env.data:
            out.append(Check(f"  missing from {name}", False, d, "not provided: the tasks that need it fail, and "
                             "their rows say so", needed=False))
    return out


def repo_environment_checks(client) -> list[Check]:
    """The repository environments built on this machine (one image per environment: inputs/repos), each with
    its key, Python, packages and size; and whether git is here to export the repositories' trees."""
    import shutil
    from harness.environments.repository import LABEL_KEY
    out = [Check("git (repository tasks)", shutil.which("git") is not None,
                 shutil.which("git") or "not found", "apt-get install git", needed=False)]
    try:
        images = client.images.list(filters={"label": LABEL_KEY})
    except Exception:  # noqa: BLE001 - reported as none
        images = []
    for img in sorted(images, key=lambda i: (i.labels or {}).get(LABEL_KEY, "")):
        tag = img.tags[0] if img.tags else img.id[:19]
        out.append(Check(f"repository environment {(img.labels or {}).get(LABEL_KEY)}", True,
                         f"image {tag} ({img.attrs.get('Size', 0) / 1e6:.0f} MB)", "", needed=False))
    if not images:
        out.append(Check("repository environments", True, "none built yet (each is built on first use: one image "
                         "per environment, never one per instance)", "", needed=False))
    from harness.environments import instances
    snaps = list(instances.root().glob("*/*/facts.json")) if instances.root().is_dir() else []
    if snaps:
        out.append(Check("repository instance snapshots", True, f"{len(snaps)} under {instances.root()} "
                         f"({instances.disk_bytes() / 1e9:.2f} GB; each instance set up once)", "", needed=False))
    return out


def format_checks(found: list[Check]) -> str:
    lines = []
    for c in found:
        mark = "ok  " if c.ok else ("MISSING" if c.needed else "absent")
        lines.append(f"{mark:8} {c.name}: {c.found}")
        if not c.ok and c.fix:
            lines.append(f"         fix: {c.fix}")
    return "\n".join(lines)


def healthy(found: list[Check]) -> bool:
    return all(c.ok or not c.needed for c in found)
