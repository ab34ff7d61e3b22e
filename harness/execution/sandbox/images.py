"""passk's sandbox image: built from containers/ on top of a base image that has python3.

The tag carries a hash of the Dockerfile, the supervisor and the base image name, so a changed
supervisor is never run from a stale image."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from harness.core.constants import DEFAULT_BASE_IMAGE, IMAGE_REPOSITORY, LABEL_SOURCE_HASH
from harness.core.errors import HarnessError
from harness.environments.bases import build as core_build, ensure_base
from harness.core.paths import containers_dir

# What goes into the image (its tag hashes every file of these, by path and content): the Dockerfile, the
# entry point and the in-container package. Not the offline base-image script or the package marker.
IMAGE_SOURCES = ("Dockerfile", "start.py", "passk_exec.c", "box")


def image_files(root: Path) -> list[Path]:
    files = []
    for name in IMAGE_SOURCES:
        path = root / name
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        else:
            files.append(path)
    return files


def source_hash(base_image: str) -> str:
    h = hashlib.sha256(base_image.encode() + b"\0")
    d = containers_dir()
    for path in image_files(d):
        h.update(path.relative_to(d).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def image_tag(base_image: str) -> str:
    return f"{IMAGE_REPOSITORY}:{source_hash(base_image)[:12]}"


def ensure_image(client, base_image: str = DEFAULT_BASE_IMAGE, rebuild: bool = False) -> dict:
    """Build passk's image if it is missing. Returns {image, image_id, source_sha256, base_image}."""
    import docker.errors

    tag = image_tag(base_image)
    digest = source_hash(base_image)
    if not rebuild:
        try:
            img = client.images.get(tag)
            return {"image": tag, "image_id": img.id, "source_sha256": digest, "base_image": base_image}
        except docker.errors.ImageNotFound:
            pass
    ensure_base(client, base_image)
    print(f"passk: building image {tag} from {containers_dir()}", file=sys.stderr)
    img = build(client, containers_dir(), tag, {"BASE_IMAGE": base_image}, digest)
    return {"image": tag, "image_id": img.id, "source_sha256": digest, "base_image": base_image}


def language_tag(sandbox: dict, language: str) -> tuple[str, str]:
    """(tag, source digest) of a language's image: passk's image plus containers/languages/<language>/ (every
    file of it)."""
    return _folder_tag(sandbox, "languages", language)


def project_tag(sandbox: dict, language: str) -> tuple[str, str]:
    """(tag, source digest) of a language's project image (containers/projects/<language>/: a build tool and
    a test runner for exercises that are small projects, aider's polyglot benchmark's)."""
    return _folder_tag(sandbox, "projects", language)


_KINDS = {"languages": ("passk-{}", "{}", "the {} toolchain, from Debian's packages; minutes, once"),
          "projects": ("passk-project-{}", "project-{}", "the {} project toolchain; minutes, once")}


def _folder_tag(sandbox: dict, kind: str, language: str) -> tuple[str, str]:
    name, salt, _ = _KINDS[kind]
    folder = containers_dir() / kind / language
    if not (folder / "Dockerfile").is_file():
        noun = "language" if kind == "languages" else "project language"
        raise HarnessError(f"passk has no image for {noun} {language!r} (no {folder / 'Dockerfile'})")
    h = hashlib.sha256(f"{sandbox['image_id']}\0{salt.format(language)}\0".encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return f"{name.format(language)}:{h.hexdigest()[:12]}", h.hexdigest()


def ensure_language_image(client, sandbox: dict, language: str, rebuild: bool = False) -> dict:
    """Build a language's image (Debian's toolchain on passk's image) if it is missing. Returns the same
    facts as ensure_image, for the language's image, and the sandbox image it was built on."""
    return _ensure_folder_image(client, sandbox, "languages", language, rebuild)


def ensure_project_image(client, sandbox: dict, language: str, rebuild: bool = False) -> dict:
    """The same for a language's project image (containers/projects/<language>/)."""
    return _ensure_folder_image(client, sandbox, "projects", language, rebuild)


def _ensure_folder_image(client, sandbox: dict, kind: str, language: str, rebuild: bool) -> dict:
    import docker.errors

    tag, digest = _folder_tag(sandbox, kind, language)
    facts = {"image": tag, "source_sha256": digest, "base_image": sandbox["base_image"],
             "sandbox_image": sandbox["image"], "sandbox_image_id": sandbox["image_id"]}
    if not rebuild:
        try:
            return {**facts, "image_id": client.images.get(tag).id}
        except docker.errors.ImageNotFound:
            pass
    print(f"passk: building image {tag} ({_KINDS[kind][2].format(language)})", file=sys.stderr)
    img = build(client, containers_dir() / kind / language, tag, {"SANDBOX_IMAGE": sandbox["image"]}, digest)
    return {**facts, "image_id": img.id}


def build(client, path: Path, tag: str, buildargs: dict, digest: str):
    """Build `path` as `tag`, labelled with its source digest (environments/bases.py builds every image)."""
    return core_build(client, path, tag, buildargs, {LABEL_SOURCE_HASH: digest})
