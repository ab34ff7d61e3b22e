"""Building an image, in one home: passk's sandbox image, a language's, a library environment's and a
repository environment's are each a build context and build arguments given to build() here; the offline
base images (Debian by debootstrap, `passk-base:<suite>`) are made by bootstrap_base()."""

from __future__ import annotations

import subprocess
import sys

from harness.core.errors import HarnessError, InputError

OFFLINE_BASES = ("bookworm", "bullseye")     # the suites passk bootstraps: passk-base:<suite>


def build(client, path, tag: str, buildargs: dict, labels: dict | None = None, nocache: bool = False):
    """Build the context at `path` as `tag`; a failed build raises HarnessError with its last lines and
    leaves no container behind (forcerm: the builder keeps a failed step's container otherwise)."""
    import docker.errors

    try:
        img, _ = client.images.build(path=str(path), tag=tag, buildargs=buildargs, labels=labels or {},
                                     rm=True, forcerm=True, pull=False, nocache=nocache)
    except docker.errors.BuildError as e:
        tail = "".join(str(x.get("stream", x.get("error", ""))) for x in list(e.build_log)[-8:])
        raise HarnessError(f"building {tag} failed: {e.msg}\n{tail}") from None
    return img


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
