"""Library lists: the libraries a benchmark's tests need, as data, read and checked here. A list is exact
pins (`name==version`), optionally named; harness/environments/library.py resolves it and builds its image
(the environments stage). Shipped lists live in containers/environments/NAME.txt.

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
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.core.errors import HarnessError, InputError

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
