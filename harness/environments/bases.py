"""What every environment shares, in one home: building an image (passk's sandbox image, a language's, a
library environment's and a repository environment's are each a build context and build arguments given
to build() here), the offline base images (Debian by debootstrap, `passk-base:<suite>`, made by
bootstrap_base()), what an image's Python accepts (probe_image, platforms), and the host's cache of
resolved wheels with its locks (cache_root, sha256, commit_lock, link_wheels)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness.core.errors import HarnessError, InputError
from harness.core.paths import cache_root  # noqa: F401 - the environments' cache, re-exported

OFFLINE_BASES = ("bookworm", "bullseye")     # the suites passk bootstraps: passk-base:<suite>
# the pip an environment's image installs its wheels with (from its own wheel: the sandbox image has no pip);
# a repository environment's venv keeps it (a PEP 660 editable install, as the harness's conda has)
INSTALLER = "pip==24.2"


# what a build step prints when Debian's mirror or the npm registry did not answer this time, as opposed to a
# package that is not there (which no retry fixes)
_TRANSIENT = re.compile(r"Failed to fetch|Temporary failure resolving|Could not connect to|Connection failed|"
                        r"Connection timed out|Connection reset by peer|Hash Sum mismatch|Unable to connect to|"
                        r"urlopen error|Read timed out|IncompleteRead|Undetermined Error")
_NOT_TRANSIENT = re.compile(r"Unable to locate package|has no installation candidate")
BUILD_TRIES = 3


def transient(log: str) -> bool:
    """Whether a failed build's log says the network failed its last step (worth a retry), not the build: only
    the failing step's output counts (an earlier step's warning that a mirror did not answer does not)."""
    steps = list(re.finditer(r"^Step \d+/\d+ :", log, re.M))
    last = log[steps[-1].start():] if steps else log
    return bool(_TRANSIENT.search(last)) and not _NOT_TRANSIENT.search(last)


def build(client, path, tag: str, buildargs: dict, labels: dict | None = None, nocache: bool = False,
          tries: int = BUILD_TRIES, pause_s: float = 10.0):
    """Build the context at `path` as `tag`; a failed build raises HarnessError with its last lines and
    leaves no container behind (forcerm: the builder keeps a failed step's container otherwise). A build
    that a mirror's hiccup failed (transient(): a fetch that did not answer) is tried again, up to `tries`
    in all, after a pause; the steps that had passed come from the builder's cache."""
    import docker.errors

    for attempt in range(1, tries + 1):
        try:
            img, _ = client.images.build(path=str(path), tag=tag, buildargs=buildargs, labels=labels or {},
                                         rm=True, forcerm=True, pull=False, nocache=nocache)
            return img
        except docker.errors.BuildError as e:
            log = "".join(str(x.get("stream", x.get("error", ""))) for x in list(e.build_log))
            tail = "".join(str(x.get("stream", x.get("error", ""))) for x in list(e.build_log)[-8:])
            if attempt < tries and transient(log):
                print(f"passk: building {tag}: the network failed a step ({_TRANSIENT.search(log).group(0)[:40]}); "
                      f"trying again ({attempt + 1} of {tries})", file=sys.stderr)
                time.sleep(pause_s * attempt)
                continue
            raise HarnessError(f"building {tag} failed: {e.msg}\n{tail}") from None
    raise AssertionError("unreachable")


def offline_base(base_image: str) -> str | None:
    """The Debian suite of an offline base image's tag (passk-base:bullseye -> bullseye), or None."""
    repo, _, suite = base_image.partition(":")
    return suite if repo == "passk-base" and suite in OFFLINE_BASES else None


def bootstrap_base(base_image: str) -> None:
    """Make an offline base image (debootstrap of its suite, then docker import); InputError for another
    image that is not on this machine and cannot be pulled."""
    from harness.core.paths import containers_dir
    script = containers_dir() / "bootstrap_base_image.sh"
    suite = offline_base(base_image)
    if suite is None or not script.exists():
        raise InputError(f"base image {base_image!r} is not on this machine and cannot be pulled; pull it "
                         f"where a registry answers, or use an offline base: passk-base:<{'|'.join(OFFLINE_BASES)}>")
    print(f"passk: building the offline base image {base_image} (debootstrap {suite}; a few minutes, once)",
          file=sys.stderr)
    proc = subprocess.run(["bash", str(script), base_image, suite])
    if proc.returncode != 0:
        raise HarnessError(f"{script} failed with exit code {proc.returncode}")


def ensure_base(client, base_image: str) -> None:
    """The base image is on this machine: there already, pulled, or bootstrapped offline."""
    import docker.errors
    try:
        client.images.get(base_image)
        return
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(base_image)
    except docker.errors.APIError:
        bootstrap_base(base_image)


# ------------------------------------------------------------------------------------------------
# An image's Python, and the host's cache of what was resolved for it.
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


_PIP_PROGRESS = ("  Using", "  Downloading", "Collecting", "  Obtaining")


def run_pip(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """The host's pip (resolving and downloading for an image's Python), its output and errors as one text."""
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def pip_lines(output: str) -> list[str]:
    """pip's output less its progress lines: what an error message can quote."""
    return [ln for ln in output.splitlines() if ln.strip() and not ln.startswith(_PIP_PROGRESS)]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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
