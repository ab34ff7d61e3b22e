"""SWE-bench's environment specifications, as data: per repository and version, the Python, the packages,
the pre-install steps, the install and test commands (specs.json, written by scripts/inputs/repos_specs.py from
`swebench` 4.1.0's harness/constants; a run may add its own with a file of the same shape). Adding a
repository is adding rows, not code.

What passk can build here is decided from the spec alone, and what it cannot is refused by name, never
approximated: a Python that no Debian base of passk's gives (bullseye 3.9, bookworm 3.11; `python:X-slim`
where a registry answers), a conda environment file, a pre-install step that needs a package manager at run
time in any shape other than `apt-get install` of Debian's packages. Those (graphviz for sphinx 7.2,
enchant for pylint 2.8) are installed from Debian's packages when the environment's image is built, and
the step is not run again per instance (apt_packages, setup_steps)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.repos.parsers import BY_REPOSITORY, PARSERS
from harness.inputs.untrusted import shown

SPECS_FILE = Path(__file__).with_name("specs.json")
# The Debian release whose python3 is the spec's Python (a base image passk bootstraps offline)
DEBIAN_PYTHON = {"3.9": "bullseye", "3.11": "bookworm"}
_APT_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]{0,99}$")
# an apt-get pre-install step as SWE-bench's specs write them: update, upgrade and install, joined by &&
_APT_PART = re.compile(r"^(?:DEBIAN_FRONTEND=noninteractive\s+)?apt-get\s+(?:-y\s+)?(update|upgrade|install)"
                       r"(?:\s+-y)?((?:\s+[^\s&|;]+)*)\s*$")
_PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?((==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)*$")


@dataclass(frozen=True)
class EnvSpec:
    repo: str
    version: str
    python: str
    packages: str = ""                       # conda's package names, or "requirements.txt" / "environment.yml"
    pip_packages: tuple[str, ...] = ()
    pre_install: tuple[str, ...] = ()
    install: str = ""
    test_cmd: str = ""
    eval_commands: tuple[str, ...] = ()
    parser: str = ""                         # the log parser (parsers.PARSERS) its test runner needs
    requirements_paths: tuple[str, ...] = ()
    source: str = "swebench"                 # where the spec came from (swebench, or a run's own file)

    @property
    def reads_requirements(self) -> bool:
        return self.packages.strip() == "requirements.txt"

    def apt_packages(self) -> tuple[str, ...]:
        """The Debian packages the pre-install steps ask apt-get for (installed when the image is built)."""
        out: list[str] = []
        for step in self.pre_install:
            parsed = apt_step(step)
            if parsed:
                out += [p for p in parsed if p not in out]
        return tuple(out)

    def setup_steps(self) -> tuple[str, ...]:
        """The pre-install steps an instance's setup runs: every one but apt-get's (done in the image)."""
        return tuple(step for step in self.pre_install if apt_step(step) is None)

    def unbuildable(self) -> str | None:
        """Why this machine cannot build the spec's environment (one line), or None."""
        if self.python not in DEBIAN_PYTHON:
            return (f"Python {self.python}, which no Debian base of passk's gives (it builds {', '.join(DEBIAN_PYTHON)} "
                    "offline)")
        if self.packages.strip() == "environment.yml":
            return "a conda environment file (environment.yml): conda packages, which passk does not install"
        for step in self.pre_install:
            if apt_step(step) is None and ("apt-get" in step or "conda " in step or "apt " in step):
                return f"a pre-install step that needs a package manager at run time ({shown(step)})"
        words = [] if self.reads_requirements else self.packages.split()
        for name in [*words, *self.pip_packages]:
            if not _PACKAGE.match(name):
                return f"a package passk cannot read as a pip requirement ({shown(name)})"
        if self.parser not in PARSERS:
            return (f"its log parser {self.parser!r}, which passk does not have" if self.parser else
                    "no log parser for its test runner's output")
        return None

    def to_dict(self) -> dict:
        return asdict(self)


def apt_step(step: str) -> list[str] | None:
    """The Debian packages of a pre-install step made only of apt-get's update, upgrade and install (joined
    by &&), or None for any other step. A name that is not a Debian package's shape makes it None too."""
    if "apt-get" not in step:
        return None
    packages: list[str] = []
    for part in step.split("&&"):
        m = _APT_PART.match(part.strip())
        if m is None:
            return None
        if m.group(1) == "install":
            words = [w for w in m.group(2).split() if w not in ("-y", "--no-install-recommends")]
            if not words or not all(_APT_NAME.match(w) for w in words):
                return None
            packages += words
    return packages or None


@lru_cache(maxsize=None)
def _shipped() -> dict:
    return json.loads(SPECS_FILE.read_text(encoding="utf-8"))["repositories"]


def _extra(path: str | None) -> dict:
    if not path:
        return {}
    from harness.core.jsonl import read_json
    data = read_json(Path(path))
    repos = data.get("repositories") if isinstance(data, dict) else None
    if not isinstance(repos, dict):
        raise InputError(f"{path}: expected {{\"repositories\": {{owner/name: {{\"versions\": {{...}}}}}}}}")
    return repos


def spec_for(repo: str, version: str | None, extra_file: str | None = None, where: str = "") -> EnvSpec:
    """The spec of a repository at a version: a run's own file first, then SWE-bench's; InputError naming
    the instance where there is none."""
    table = {**_shipped(), **_extra(extra_file)}
    entry = table.get(repo)
    if entry is None:
        raise InputError(f"{where}: no environment specification for repository {repo} (SWE-bench's specs name "
                         f"{len(_shipped())} repositories; add one with --repo-specs)")
    versions = entry.get("versions") or {}
    if version not in versions:
        raise InputError(f"{where}: no environment specification for {repo} version {version!r} "
                         f"(known: {', '.join(list(versions)[:12])}{'…' if len(versions) > 12 else ''})")
    raw = versions[version]
    if not isinstance(raw, dict) or not isinstance(raw.get("python"), str):
        raise InputError(f"{where}: the specification of {repo} {version} has no python")

    def strings(key) -> tuple:
        value = raw.get(key) or ()
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise InputError(f"{where}: the specification of {repo} {version}: {key} must be a list of strings")
        return tuple(value)
    return EnvSpec(repo=repo, version=version, python=raw["python"], packages=str(raw.get("packages") or ""),
                   pip_packages=strings("pip_packages"), pre_install=strings("pre_install"),
                   install=str(raw.get("install") or ""), test_cmd=str(raw.get("test_cmd") or ""),
                   eval_commands=strings("eval_commands"),
                   parser=str(entry.get("parser") or BY_REPOSITORY.get(repo) or ""),
                   requirements_paths=tuple(entry.get("requirements_paths") or ()),
                   source="swebench" if repo in _shipped() and repo not in _extra(extra_file) else str(extra_file))


def supported() -> list[tuple[str, str, str | None]]:
    """[(repository, version, why not buildable or None)] of every shipped spec."""
    out = []
    for repo, entry in _shipped().items():
        for version in entry.get("versions", {}):
            out.append((repo, version, spec_for(repo, version).unbuildable()))
    return out
