"""Which SWE-bench instance an agent harness's image name asks for. The official images are named
`sweb.eval.x86_64.<instance id, "__" as "_1776_">` (SWE-bench's harness; mini-swe-agent asks for
`docker.io/swebench/sweb.eval.x86_64.<...>:latest`, lowercased); OpenHands' and SkyRL's copies are
`xingyaoww/sweb.eval.x86_64.<instance id, "__" as "_s_">`; a row may name its own (`image_name`,
`docker_image`). The registry and the tag are not part of the name."""

from __future__ import annotations

import re

PREFIX = "sweb.eval.x86_64."
# what "__" (between the owner and the repository) becomes in the harnesses' image names (Docker Hub refused it)
SEPARATORS = ("_1776_", "_s_", "__")
_REFERENCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,511}$")


def bare_name(reference: str) -> str:
    """An image reference without its registry and repository path, tag or digest, lowercased:
    `docker.io/swebench/sweb.eval.x86_64.a_1776_b-1:latest` -> `sweb.eval.x86_64.a_1776_b-1`."""
    ref = reference.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[0].lower()


def row_names(row: dict) -> set[str]:
    """Every name an image for this row may be asked by (bare, lowercased)."""
    iid = str(row.get("instance_id", ""))
    names = {PREFIX + iid.replace("__", sep).lower() for sep in SEPARATORS}
    for key in ("image_name", "docker_image"):
        if isinstance(row.get(key), str) and row[key]:
            names.add(bare_name(row[key]))
    return names


def valid_reference(reference: str) -> bool:
    """Whether the text can be an image reference at all (what Docker would parse), before any lookup."""
    return bool(_REFERENCE.match(reference)) and "//" not in reference


class Catalog:
    """The rows an agent may ask for, by every name of their image."""

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self._by_name: dict[str, dict] = {}
        self._by_id: dict[str, dict] = {}
        for row in rows:
            for name in row_names(row):
                self._by_name.setdefault(name, row)
            self._by_id.setdefault(str(row.get("instance_id", "")), row)

    def find(self, reference: str) -> dict | None:
        """The row an image name (any of its forms) or an instance id (exactly) names, or None."""
        if reference in self._by_id:
            return self._by_id[reference]
        return self._by_name.get(bare_name(reference)) if valid_reference(reference) else None

    def __len__(self) -> int:
        return len(self.rows)
