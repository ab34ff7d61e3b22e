"""Removing the images a passk checkout no longer runs (`passk images prune`).

Every image passk builds stands on a passk sandbox image (the Dockerfile labels it org.passk.role=sandbox,
and everything built on it inherits the label), and the sandbox image's tag hashes its sources and base
image: a change to containers/ gives new tags to the sandbox image and to every language, library and
repository environment built on it, and the old ones stay on the engine. Nothing else removes them; a
machine that runs passk's tests after each change fills its disk (CI did: no space left on device while
building the D toolchain).

An image is current when it can still be run by this checkout:
  - a sandbox image whose tag is what image_tag() gives for an image on this engine that passk did not build
    (passk-base:bookworm, python:3.11-slim, ...);
  - a language image whose tag is language_tag() of a current sandbox image, a project image whose tag is
    project_tag() of one, the repository base image of a current sandbox image;
  - a library or repository environment built on a current sandbox image (its label says which).
Every other image with passk's label is superseded, unless a container (running or stopped) uses it. An
image passk did not build is never touched. The instance snapshots kept for a removed repository
environment image (environments/instances.py) go with it."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.core.constants import LABEL_SOURCE_HASH
from harness.core.paths import containers_dir

ROLE = "org.passk.role"


def _facts(image) -> dict:
    return {"id": image.id, "tags": list(image.tags), "labels": image.attrs.get("Config", {}).get("Labels") or {},
            "size": image.attrs.get("Size", 0), "created": image.attrs.get("Created", "")}


def plan(client) -> tuple[list[dict], list[dict]]:
    """(superseded, kept): the passk images this checkout no longer runs, each with why; the others."""
    from harness.environments import library, repository
    from harness.execution.sandbox.images import image_tag, language_tag, project_tag

    images = [_facts(i) for i in client.images.list(all=False)]
    by_tag = {t: i for i in images for t in i["tags"]}
    ours = [i for i in images if i["labels"].get(ROLE) == "sandbox"]
    foreign_tags = [t for i in images if i["labels"].get(ROLE) != "sandbox" for t in i["tags"]]
    in_use = {c.attrs.get("Image") for c in client.containers.list(all=True, ignore_removed=True)}

    sandboxes = {}   # image id -> facts as ensure_image gives them, for every current sandbox image
    for base in foreign_tags:
        tag = image_tag(base)
        if tag in by_tag:
            sandboxes[by_tag[tag]["id"]] = {"image": tag, "image_id": by_tag[tag]["id"],
                                            "source_sha256": by_tag[tag]["labels"].get(LABEL_SOURCE_HASH)}
    current = set()   # ids
    languages = sorted(p.name for p in (containers_dir() / "languages").iterdir() if (p / "Dockerfile").is_file())
    projects = sorted(p.name for p in (containers_dir() / "projects").iterdir() if (p / "Dockerfile").is_file())
    for sid, sandbox in sandboxes.items():
        current.add(sid)
        for tag in ([language_tag(sandbox, lang)[0] for lang in languages]
                    + [project_tag(sandbox, lang)[0] for lang in projects] + [repository.base_tag(sandbox)]):
            if tag in by_tag:
                current.add(by_tag[tag]["id"])
    digests = {s["source_sha256"] for s in sandboxes.values()}

    superseded, kept = [], []
    for image in ours:
        labels = image["labels"]
        if image["id"] in current:
            kept.append({**image, "why": "current"})
        elif labels.get(library.LABEL_SANDBOX) in sandboxes or (
                labels.get(repository.LABEL_KEY) and labels.get(LABEL_SOURCE_HASH) in digests):
            kept.append({**image, "why": "an environment on a current sandbox image"})
        elif image["id"] in in_use:
            kept.append({**image, "why": "a container uses it"})
        else:
            superseded.append({**image, "why": "built by other sources than this checkout's" if image["tags"]
                               else "untagged"})
    return superseded, kept


def remove(client, images: list[dict], log=print) -> list[dict]:
    """Remove each image (every tag of it); an image Docker refuses to remove (an image built on it is still
    there, a container started meanwhile) is left and said. The removed ones, with their snapshots gone."""
    import docker.errors
    from harness.environments import instances, repository

    removed = []
    for image in images:
        try:
            for tag in image["tags"] or [image["id"]]:
                client.images.remove(tag, noprune=False)
        except docker.errors.APIError as e:
            log(f"kept {name(image)}: {getattr(e, 'explanation', None) or e}")
            continue
        removed.append(image)
        if image["labels"].get(repository.LABEL_KEY):
            snapshots = Path(instances.root(), image["id"].split(":")[-1][:16])
            if snapshots.is_dir():
                shutil.rmtree(snapshots, ignore_errors=True)
    return removed


def name(image: dict) -> str:
    """An image's first tag, else its short id."""
    return image["tags"][0] if image["tags"] else image["id"].split(":")[-1][:12]
