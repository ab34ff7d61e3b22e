"""SWE-bench's official environments, pinned: the exported conda environment of each instance SWE-bench
publishes one for (its git history at v4.1.0; official.json, written by scripts/inputs/repos_pins.py), as
pip pins. Where an instance has one, its environment installs exactly those versions; elsewhere the spec's
packages are resolved as the spec asks (recipes.py). Every package carries where its pin came from, and
what passk cannot give as the official environment had it is said (`differences`), never hidden."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

OFFICIAL_FILE = Path(__file__).with_name("official.json")


@dataclass(frozen=True)
class OfficialEnvironment:
    id: str                               # the sha256 prefix official.json stores it under
    python: str                           # conda's python, e.g. "3.9.20"
    packages: tuple[tuple[str, str, str], ...]   # (pip name, version, source)
    runtime: tuple[str, ...]              # conda's own runtime ("openssl=3.0.15", ...): Debian's stands in
    conda_only: tuple[str, ...]           # conda Python packages with no PyPI release

    def pins(self) -> list[str]:
        return [f"{name}=={version}" for name, version, _ in self.packages]


@lru_cache(maxsize=1)
def _data() -> dict:
    try:
        return json.loads(OFFICIAL_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"environments": {}, "instances": {}}


def source() -> str:
    return str(_data().get("source") or "")


def exported_on() -> str | None:
    """The newest day the exports record (conda's ca-certificates release each carries, YYYY.M.D): the
    official environments were made no earlier. A spec-resolved environment resolves as of it (recipes.py),
    not at today's newest releases. None where no export records one."""
    days = []
    for env in _data()["environments"].values():
        for entry in env.get("runtime", ()):
            m = re.fullmatch(r"ca-certificates=(\d{4})\.(\d{1,2})\.(\d{1,2})", entry)
            if m:
                days.append(tuple(int(x) for x in m.groups()))
    if not days:
        return None
    y, mo, d = max(days)
    return f"{y:04d}-{mo:02d}-{d:02d}"


def for_instance(instance_id: str) -> OfficialEnvironment | None:
    """The official environment SWE-bench exported for an instance, or None where it published none."""
    data = _data()
    key = data["instances"].get(instance_id)
    if key is None:
        return None
    env = data["environments"][key]
    return OfficialEnvironment(key, env["python"], tuple(tuple(p) for p in env["packages"]), tuple(env["runtime"]),
                               tuple(env["conda_only"]))
