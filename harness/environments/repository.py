"""A repository's environment, built offline: one image per environment, keyed by what it holds (a spec's
Python, its Debian packages and its Python packages: inputs/repos/recipes.py), so that every version and
instance that holds the same shares the image; never one per instance (an instance's install is its
snapshot: instances.py).

- The base: Debian whose python3 is the spec's Python (bullseye 3.9, bookworm 3.11; bootstrapped offline as
  `passk-base:<suite>`), passk's sandbox image on it, and git, patch, venv and a C toolchain with Python's
  headers (astropy's extensions compile in its install) from Debian's packages.
- The Debian packages a spec's apt-get step names (graphviz, enchant), from Debian's packages.
- The Python packages, resolved on the host with pip for that Python (the image build cannot reach the
  package index): SWE-bench's official pins where it exported the instance's environment (installed
  exactly, without resolving again), else the spec's packages (conda's names, taken as pip's, at the
  newest release pip finds for the Python), its pip packages and the repository's requirements file where
  the spec reads one; and what the repository itself needs to install at each instance's commit (its
  install requirements and its build system's), with pip, setuptools and wheel. Every file's sha256 is in
  the lock; the lock is cached by the environment's key.
- The image: a venv at /venv with the packages installed, kept at /opt/passk/venv (each candidate gets its
  own copy in a tmpfs at /venv, so what an install or a patch writes there is thrown away) and the wheels
  at /opt/passk/wheels (the repository's install finds what it needs there: PIP_NO_INDEX, PIP_FIND_LINKS).

The manifest records, per environment, where each package's pin came from and every difference from the
official environment (recipes.RepoEnvironment.sources and differences)."""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.core.errors import HarnessError, InputError, UnbuildableEnvironment
from harness.environments.as_of import BoundedIndex
from harness.environments.bases import INSTALLER, build, pip_lines, run_pip, cache_root as _cache_root, commit_lock, link_wheels, platforms, probe_image, sha256
from harness.inputs.libraries import canonical_name
from harness.inputs.repos.recipes import STANDIN_PACKAGES, RepoEnvironment

LOCK_FORMAT = 1
BUILD_TOOLS = ("setuptools", "wheel")    # what a legacy setup.py project is built with, offline
REPOSITORY = "passk-repo-env"
LABEL_KEY = "org.passk.repo-environment"
LABEL_LOCK = "org.passk.repo-environment-lock"


def cache_root() -> Path:
    return _cache_root("repos/environments")


_INDEX: contextvars.ContextVar[BoundedIndex | None] = contextvars.ContextVar("passk_index", default=None)


def _pip(args: list[str], what: str, check: bool = True) -> subprocess.CompletedProcess:
    # a setuptools_scm project's metadata builds without its history (its version does not decide its needs)
    env = {**os.environ, "SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0"}
    index = _INDEX.get()
    if index is not None and args and args[0] == "download":   # as of a day: that index and nothing else
        args, env = [args[0], *index.pip_args, *args[1:]], index.pip_env(env)
    proc = run_pip(args, env=env)
    if check and proc.returncode != 0:
        raise _unresolved(proc, what)
    return proc


def _unresolved(proc: subprocess.CompletedProcess, what: str) -> UnbuildableEnvironment:
    """The error of a pip command that failed: pip's own ERROR lines first, else its last words."""
    lines = [ln for ln in pip_lines(proc.stdout) if "is ignored: it is neither a file nor a directory" not in ln
             and "Ignored the following versions" not in ln and "━━" not in ln]
    errors = [ln for ln in lines if ln.startswith("ERROR:")]   # pip's own words first: what it could not find
    return UnbuildableEnvironment(f"{what}: pip could not resolve it for this environment (exit "
                                  f"{proc.returncode}):\n  " + "\n  ".join(ln[:500] for ln in (errors or lines)[-6:]))


def _target_args(target: dict) -> list[str]:
    plats = [a for t in platforms(target) for a in ("--platform", t)]
    return ["--only-binary=:all:", "--python-version", target["tag"][2:], "--implementation", "cp",
            "--abi", target["tag"], "--abi", "abi3", "--abi", "none", *plats, "--platform", "any"]


def resolve(env: RepoEnvironment, target: dict, projects: dict | None = None, log=None, check=None,
            build=None) -> dict:
    """_resolve, as of the environment's day where it has one (recipes.RepoEnvironment.as_of: pip sees no
    release uploaded after it); where nothing that old fits, at today's releases, and the lock says so."""
    if not env.as_of:
        return _resolve(env, target, projects, log, check, build)
    with BoundedIndex(env.as_of) as index:
        token = _INDEX.set(index)
        try:
            return _resolve(env, target, projects, log, check, build)
        except UnbuildableEnvironment as e:
            failed = str(e).splitlines()[-1].strip()
        finally:
            _INDEX.reset(token)
    (log or (lambda msg: print(f"passk: {msg}", file=sys.stderr)))(
        f"repository environment {env.key}: nothing released by {env.as_of} fits ({failed}); resolving at today's releases")
    return _resolve(env, target, projects, log, check, build,
                    note=f"resolved at today's releases: as of {env.as_of}, pip found no fit ({failed[:300]})")


def _resolve(env: RepoEnvironment, target: dict, projects: dict | None = None, log=None, check=None,
             build=None, note: str | None = None) -> dict:
    """The environment's lock for the image's Python (`target`: environments.probe_image's facts): its
    wheels, downloaded on the host (the image build cannot reach the index) and cached with every file's
    sha256. `projects` ({commit: a function that exports the repository's tree at it into a directory}):
    the trees whose installs the wheels must serve (the environment's commit's and every instance's: a base
    commit may need what the environment's commit did not, pytest 4.6's importlib-metadata); each is checked
    once and recorded in the lock, which grows (and the image with it) when a run brings a new one.
    `check(wheels, requirements, project)`: pip's resolution by the image's own Python, offline, from the
    wheels (None, or what it could not find): pip on the host reads a dependency's markers for the host's
    Python (`python_version < "3.11"`), so what only the image's needs is found there and downloaded."""
    log = log or (lambda msg: print(f"passk: {msg}", file=sys.stderr))
    projects = projects or {}
    where = cache_root() / env.key
    lock_path = where / "lock.json"
    final = where / "wheels"
    lock = None
    if lock_path.exists():
        lock = json.loads(lock_path.read_text())
        bad = [p["file"] for p in lock["files"] if not (final / p["file"]).is_file()
               or sha256(final / p["file"]) != p["sha256"]]
        if bad:
            log(f"repository environment {env.key}: {len(bad)} cached wheel(s) changed or missing; resolving again")
            lock = None
        elif {project_key(p) for p in projects} <= set(lock.get("projects", [])):
            return {**lock, "wheels": str(final)}
    where.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="resolve-", dir=where))
    try:
        wheels = work / "wheels"
        target_args = _target_args(target)
        requested = env.packages()
        notes = list(lock.get("notes", [])) if lock else []
        if note and note not in notes:
            notes.append(note)
        done = list(lock.get("projects", [])) if lock else []
        if lock is not None:
            shutil.copytree(final, wheels)
        else:
            wheels.mkdir()
            req_file = work / "requirements.txt"
            # the build tools first (the spec's or the official pins where they name them): a package with no
            # wheel is built from its sdist with them (`build`, offline, from these wheels)
            tools = [next((r for r in requested if r.lower().startswith(t + "==")), t) for t in ("pip", *BUILD_TOOLS)]
            _download(tools, target_args, wheels, work, f"environment {env.key}", notes)   # with what they need
            if env.pinned:   # the official environment's exact pins: each as it is, nothing resolved again
                log(f"repository environment {env.key}: downloading SWE-bench's {len(requested)} official pins for "
                    f"Python {target['python']} with pip on the host")
                names = {re.split(r"==", r)[0].lower() for r in requested}
                req_file.write_text("\n".join([*(r for r in (INSTALLER, *BUILD_TOOLS) if r.split("==")[0] not in names),
                                               *requested]) + "\n")
                _download(["--no-deps", "-r", str(req_file)], target_args, wheels, work, f"environment {env.key}", notes,
                          build)
            else:
                log(f"repository environment {env.key}: resolving {len(requested)} packages for Python "
                    f"{target['python']} with pip on the host")
                req_file.write_text("\n".join([INSTALLER, *BUILD_TOOLS, *requested]) + "\n")
                _download(["-r", str(req_file)], target_args, wheels, work, f"environment {env.key}", notes, build)
        seen = set(lock.get("declarations", [])) if lock else set()
        for key, export in projects.items():
            commit, steps, install, gold = key
            pkey = project_key(key)
            if pkey in done:
                continue
            project = export(str(work / f"p-{pkey.replace(':', '-')}"))
            _apply_gold(project, gold)
            _apply_declaration_edits(project, steps)
            declared = _declarations(project, steps, install)
            if declared in seen:   # what it declares it needs is what an earlier tree declared: already served
                done.append(pkey)
                shutil.rmtree(project, ignore_errors=True)
                continue
            # its build system's requirements and its own, for the image's Python: on the host first (what
            # pip finds there), then what the image's Python still misses
            build_reqs = _build_requirements(project)
            if build_reqs:
                _download(build_reqs, target_args, wheels, work, f"environment {env.key}: build system", notes,
                          build)
            extras = install_extras(install)   # what `.[test]` adds (sphinx 3.x's typed_ast), resolved with it
            try:
                _download([str(project) + (f"[{extras}]" if extras else "")], target_args, wheels, work,
                          f"environment {env.key}", [])
            except InputError:
                pass   # an old project's metadata that does not build on the host's Python: the image's decides
            if check is not None:
                wanted = [INSTALLER, *BUILD_TOOLS, *requested, *build_reqs]
                for _ in range(16):
                    missing = check(wheels, wanted, project, steps, install)
                    if missing is None:
                        break
                    log(f"repository environment {env.key}: the tree at {commit[:12]} also needs {missing}")
                    _download([missing], target_args, wheels, work, f"environment {env.key}", notes, build)
                else:
                    raise UnbuildableEnvironment(f"environment {env.key}: the tree at {commit[:12]} still misses a "
                                                 "package after 16 rounds")
            done.append(pkey)
            seen.add(declared)
            shutil.rmtree(project, ignore_errors=True)
        for stray in [p for p in wheels.iterdir() if not p.name.endswith(".whl")]:
            stray.unlink()      # a local project pip packed while downloading: never installed from here
        files = [{"file": p.name, "sha256": sha256(p)} for p in sorted(wheels.glob("*.whl"))]
        lock = {"format": LOCK_FORMAT, "key": env.key, "python": target["python"], "abi": target["tag"],
                "requested": requested, "as_of": lock.get("as_of") if lock else (None if note else env.as_of), "pinned": env.pinned, "installer": INSTALLER, "files": files, "notes": notes,
                "projects": done,
                "declarations": sorted(seen),
                "sha256": hashlib.sha256("\n".join(f"{f['file']} {f['sha256']}" for f in files).encode()).hexdigest()}
        return commit_lock(wheels, final, lock_path, lock)
    finally:
        shutil.rmtree(work, ignore_errors=True)


_NO_WHEEL = re.compile(r"No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._-]*(?:==[^\s;]+)?)")


def _download(what: list, target_args: list, wheels: Path, work: Path, label: str, notes: list, build=None) -> None:
    """pip download of `what` for the environment's Python into `wheels`. A package that publishes no wheel
    for it (wrapt 1.12.1, atomicwrites 1.4.1: an sdist only) is built into one from its sdist by `build`
    (in the environment's base image: its Python, glibc and compiler, never the host's) and the download
    tried again (at most 8 times), each such build noted in the lock. UnbuildableEnvironment, with pip's
    last words, for what cannot be had."""
    for built in range(9):
        proc = _pip(["download", *target_args, "--find-links", str(wheels), "-d", str(wheels), *what], label, check=False)
        if proc.returncode == 0:
            return
        if built == 8:
            break
        missing = _NO_WHEEL.search(proc.stdout)
        spec = missing.group(1) if missing else _unbuilt_dependency(proc.stdout, wheels)
        if spec is None or build is None:
            break
        sources = work / "sources"
        shutil.rmtree(sources, ignore_errors=True)
        got = _pip(["download", "--no-deps", "--no-binary", ":all:", "-d", str(sources), spec], label, check=False)
        sdists = sorted(sources.iterdir()) if sources.is_dir() else []
        if got.returncode != 0 or not sdists:
            break
        new = build(sdists[-1], wheels)
        shutil.rmtree(sources, ignore_errors=True)
        if not new:
            break
        notes.append(f"{spec}: no wheel published for this Python; built from its sdist in the environment's base "
                     f"image ({', '.join(new)})")
    raise _unresolved(proc, label)   # the last download's own failure: it is not run again to say so


_DEPENDS = re.compile(r"depends on ([A-Za-z0-9][A-Za-z0-9._-]*)((?:[<>=!~]=?[A-Za-z0-9.*+!_-]+,?)*)")


def _unbuilt_dependency(output: str, wheels: Path) -> str | None:
    """In pip's ResolutionImpossible, a dependency it found no wheel of (docopt for coveralls: an sdist only,
    which a download of binary wheels cannot see), as a requirement to build; None if there is none."""
    if "ResolutionImpossible" not in output:
        return None
    have = {canonical_name(w.name.split("-")[0]) for w in wheels.glob("*.whl")}
    for name, spec in _DEPENDS.findall(output):
        if canonical_name(name) not in have:
            return name + spec.rstrip(",")
    return None


def _build_in_image(client, image: str, sdist: Path, wheels: Path) -> list[str]:
    """A wheel of `sdist` built in `image` (the repository base: the environment's Python, its glibc and a C
    toolchain), offline, its build requirements from `wheels`; the new wheels' names (none if it failed)."""
    import docker.errors
    with tempfile.TemporaryDirectory(prefix="passk-sdist-") as out:
        # the environment's own pip (Debian's venv brings an old one), then pip's isolated build from the wheels
        script = ("python3 -m venv /tmp/v && /tmp/v/bin/python -m pip install -q --no-index $(ls /w/pip-*.whl | tail -n 1) && "
                  "/tmp/v/bin/python -m pip wheel -q --no-deps --no-index --find-links /w "
                  f"-w /o /s/{shlex.quote(sdist.name)}")
        try:
            client.containers.run(image, ["-c", script], entrypoint="/bin/sh", network_disabled=True, remove=True,
                                  volumes={str(wheels): {"bind": "/w", "mode": "ro"},
                                           str(sdist.parent): {"bind": "/s", "mode": "ro"}, out: {"bind": "/o", "mode": "rw"}},
                                  environment={"HOME": "/tmp", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        except docker.errors.ContainerError:
            return []
        new = []
        for whl in Path(out).glob("*.whl"):
            shutil.copy2(whl, wheels / whl.name)
            new.append(whl.name)
        return new


def project_key(project: tuple) -> str:
    """A tree the wheels serve, as the lock records it: its commit, and the hash of its steps, its install
    and its gold patch (and, where its steps edit what it declares, that the host's resolution saw them:
    a lock made before it did is resolved again for those trees)."""
    commit, steps, install, gold = project
    seen = [list(steps), install, gold] + _edits_seen(steps)
    return f"{commit}:{hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:12]}"


# a spec's step that edits what a tree declares it needs, as SWE-bench's specs write them: sed's substitution in
# place on setup.py, setup.cfg or pyproject.toml (sphinx 3.0 to 4.4 pin Jinja2<3.0 and sphinxcontrib-* so)
_SED_STEP = re.compile(r"^sed -i (['\"])s(.)(.*?)\2(.*?)\2(g?)\1 ((?:setup\.py|setup\.cfg|pyproject\.toml))$")


def _declaration_edits(steps) -> list[tuple[str, str, str, bool]]:
    """The steps' edits of a tree's declarations that the host can make itself: (file, pattern, replacement,
    every match on a line); of `a || b`, the first (b runs only where a cannot)."""
    out = []
    for step in steps:
        m = _SED_STEP.match(step.split(" || ")[0].strip())
        text = m.group(3) + m.group(4) if m else ""
        # nothing escaped, and in double quotes nothing the shell would expand: the forms the specs use
        if m and "\\" not in text and not (m.group(1) == '"' and any(c in text for c in '$`"')):
            out.append((m.group(6), m.group(3), m.group(4), m.group(5) == "g"))
    return out


# what a lock key and a tree's declarations carry where the host makes the steps' edits (its number changes
# when how it makes them does, so that those trees are resolved again)
EDITS_ON_HOST = "steps-on-host-3"


def _edits_seen(steps) -> list[str]:
    return [EDITS_ON_HOST] if _declaration_edits(steps) else []


def _bre(pattern: str) -> str:
    """A sed basic regular expression as Python's (no backslashes in it: _declaration_edits): in a BRE, `+`,
    `?`, `(`, `)`, `{`, `}` and `|` are themselves."""
    return "".join("\\" + c if c in "+?(){}|" else c for c in pattern)


def _apply_declaration_edits(project: Path, steps) -> None:
    """The steps' sed edits of setup.py, setup.cfg or pyproject.toml made on the host's copy of the tree, line
    by line as sed makes them (`&` is the match), so that the host's pip resolves what the edited tree asks
    for (sphinx 4.1 with `sphinxcontrib-applehelp<=1.0.7`: the version that still takes Sphinx 4, not 1.0.7,
    which needs Sphinx 5). Nothing of the step runs; a file that is not there is left alone."""
    for name, pattern, replacement, every in _declaration_edits(steps):
        path = project / name
        if not path.is_file() or path.is_symlink():
            continue
        try:
            rx = re.compile(_bre(pattern))
        except re.error:
            continue
        repl = replacement.replace("&", "\\g<0>")
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
        path.write_text("\n".join(rx.sub(repl, line, count=0 if every else 1) for line in lines),
                        encoding="utf-8", errors="surrogateescape")


def _apply_gold(project: Path, patch: str) -> None:
    """The instance's gold patch applied to the exported tree (git apply, which writes nothing outside it and
    runs nothing), so that what it declares it needs is served too; a patch that does not apply is left
    out, and the tree stays as it was."""
    if not patch:
        return
    subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=project, input=patch.encode("utf-8", "replace"),
                   capture_output=True, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_DIR": "/nonexistent"})


_EXTRAS = re.compile(r"(?:^|\s)\.\[([A-Za-z0-9_,.-]+)\]")


def install_extras(install: str) -> str:
    """The extras an install command asks for (`pip install -e .[test]` -> "test"), or ""."""
    m = _EXTRAS.search(install or "")
    return m.group(1) if m else ""


def _declarations(project: Path, steps=(), install: str = "") -> str:
    """The hash of the files in which a project declares what it needs to build and install (setup.py,
    setup.cfg, pyproject.toml, requirements*.txt at its root), of the steps that change them before its
    install, and of the extras it installs: two trees alike in these need the same wheels."""
    h = hashlib.sha256(json.dumps([list(steps), install_extras(install)] + _edits_seen(steps)).encode())
    found = [project / n for n in sorted(os.listdir(project))
             if n in ("setup.py", "setup.cfg", "pyproject.toml") or (n.startswith("requirements") and n.endswith(".txt"))]
    if (project / "requirements").is_dir():   # a requirements/ directory (setup.py often reads one)
        found += sorted((project / "requirements").glob("*.txt"))
    for path in found:
        if path.is_file() and not path.is_symlink():
            h.update(path.relative_to(project).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _build_requirements(project: Path) -> list[str]:
    """The `[build-system] requires` of a project's pyproject.toml (setuptools' own when it has none)."""
    pyproject = project / "pyproject.toml"
    if not pyproject.is_file():
        return []
    try:
        import tomllib
        data = tomllib.loads(pyproject.read_text(encoding="utf-8", errors="replace"))
    except (ValueError, OSError):
        return []
    reqs = (data.get("build-system") or {}).get("requires") or []
    return [r for r in reqs if isinstance(r, str) and r.strip()]


_MISSING = re.compile(r"No matching distribution found for ([^\n]+)")


def _missing_in_image(client, image: str, wheels: Path, requirements: list, project: Path | None, steps=(),
                      install: str = "") -> str | None:
    """What the image's Python cannot find among `wheels` to install `requirements` and the project (pip's
    resolution, offline, no network, as the candidate's install will be: after the spec's pre-install steps,
    with the extras its install asks for, as the candidate's user): one requirement without its marker, or
    None when nothing is missing."""
    import docker.errors
    installer = next(wheels.glob("pip-*.whl"), None)
    if installer is None:
        return INSTALLER
    with tempfile.TemporaryDirectory(prefix="passk-check-") as tmp:
        os.chmod(tmp, 0o755)   # the check runs as the candidate's user
        Path(tmp, "r.txt").write_text("\n".join(requirements) + "\n")
        volumes = {str(wheels): {"bind": "/w", "mode": "ro"}, tmp: {"bind": "/r", "mode": "ro"}}
        args = ["-r", "/r/r.txt"]
        if project is not None:
            volumes[str(project)] = {"bind": "/p", "mode": "ro"}
            args.append("/p")
        extras = install_extras(install)
        target = "/tmp/p" + (f"[{extras}]" if extras else "")
        # a setup.py whose setup_requires its own setup() fetches when a build command runs (astropy 3.x's
        # cython): pip's download does not run it; the spec's install does, in the environment, offline, as
        # the candidate's user, long enough to ask for them (then it is ended: what it compiles is not needed)
        legacy = project is not None and (project / "setup.py").is_file() and \
            b"setup_requires" in (project / "setup.py").read_bytes()[:1 << 20] and install.strip()
        probe = ("; /tmp/v/bin/python -m pip install -q --no-index --find-links /w -r /r/r.txt >/dev/null 2>&1; "
                 f"cd /tmp/p && PATH=/tmp/v/bin:$PATH PIP_NO_INDEX=1 PIP_FIND_LINKS=/w timeout 180 {install} 2>&1 "
                 "| grep -E 'No matching distribution found' | head -n 3") if legacy else ""
        # the spec's steps (its sed lines) run on the tree's copy, as its set-up runs them before the install
        prepare = "".join(f"({step}) >/dev/null 2>&1; " for step in steps)
        script = (f"cp -r /p /tmp/p 2>/dev/null; cd /tmp/p 2>/dev/null && {{ {prepare}true; }}; cd /tmp; "
                  f"python3 -m venv /tmp/v && /tmp/v/bin/python -m pip install -q "
                  f"--no-index /w/{installer.name} && /tmp/v/bin/python -m pip download --no-index --find-links /w "
                  f"-d /tmp/d {' '.join(a if a != '/p' else shlex.quote(target) for a in args)} 2>&1{probe}; true")
        try:
            out = client.containers.run(image, ["-c", script], entrypoint="/bin/bash", network_disabled=True,
                                        remove=True, user="10001", volumes=volumes,
                                        environment={"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0",
                                                     "HOME": "/tmp"}).decode("utf-8", "replace")
        except docker.errors.ContainerError as e:
            out = (e.stderr or b"").decode("utf-8", "replace")
    m = _MISSING.search(out)
    return None if m is None else m.group(1).split(";")[0].strip().strip('"')


# Every repository environment of a Debian release starts from this: passk's sandbox image with what a
# repository's install and tests need of Debian (git, patch, a venv, a C toolchain and Python's headers for
# the extensions an install compiles), from Debian's packages.
_BASE_DOCKERFILE = """\
# passk's repository base: passk's sandbox image, with git, patch, Python's venv, a C toolchain and Python's
# headers from Debian's packages.
ARG SANDBOX_IMAGE
FROM ${SANDBOX_IMAGE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \\
      git patch python3-venv python3-distutils python3-dev gcc g++ make libc6-dev ca-certificates >/dev/null \\
 && rm -rf /var/lib/apt/lists/*
# A link to the environment's python is the environment's python, as a link to a conda environment's is
# (tox-current-env links .tox/<env>/bin/python to the python that runs tox: sphinx's tests run through
# it). Python finds a venv from the path it was started by, not the link's target: this makes it look at
# the target too, only when it was started through a link into a venv.
COPY passk_venv_link.py /usr/local/lib/passk/passk_venv_link.py
RUN site=$(python3 -c 'import site; print(site.getsitepackages()[0])') && mkdir -p "$site" \\
 && cp /usr/local/lib/passk/passk_venv_link.py "$site/" && echo 'import passk_venv_link' > "$site/passk-venv-link.pth"
"""
_VENV_LINK = """\
# passk: a link to a virtual environment's python runs that environment (as a link to a conda environment's
# python does): loaded by the base Python's site directory, where only a python that found no venv reads it.
import os
import sys


def _adopt():
    if sys.prefix != sys.base_prefix or not sys.executable:
        return
    real = os.path.realpath(sys.executable)
    if real == os.path.abspath(sys.executable):
        return
    home = os.path.dirname(os.path.dirname(real))
    site_dir = os.path.join(home, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    if not os.path.isfile(os.path.join(home, "pyvenv.cfg")) or not os.path.isdir(site_dir):
        return
    import site
    sys.prefix = sys.exec_prefix = home
    sys.path[:] = [p for p in sys.path if not p.endswith("dist-packages")]
    site.addsitedir(site_dir)


_adopt()
"""


def base_tag(sandbox: dict) -> str:
    """The tag of the repository base image on `sandbox`."""
    return f"passk-repo-base:{hashlib.sha256((sandbox['image_id'] + _BASE_DOCKERFILE + _VENV_LINK).encode()).hexdigest()[:12]}"


def base_image(client, sandbox: dict, log=None) -> str:
    """The repository base image on `sandbox` (built once per sandbox image): its tag."""
    import docker.errors
    tag = base_tag(sandbox)
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    (log or (lambda m: print(f"passk: {m}", file=sys.stderr)))(f"building image {tag} (git, patch, venv and a C "
                                                              "toolchain from Debian)")
    with tempfile.TemporaryDirectory(prefix="passk-repo-base-") as ctx:
        Path(ctx, "Dockerfile").write_text(_BASE_DOCKERFILE)
        Path(ctx, "passk_venv_link.py").write_text(_VENV_LINK)
        build(client, ctx, tag, {"SANDBOX_IMAGE": sandbox["image"]})
    return tag


_DOCKERFILE = """\
# passk repository environment {key}: {repo} (Python {python}), its packages installed offline into a venv.
ARG REPO_BASE
FROM ${{REPO_BASE}}{apt}
COPY wheels /opt/passk/wheels
RUN python3 -m venv --copies /venv \\
 && /venv/bin/python -m pip install -q --no-index --find-links /opt/passk/wheels {installer} \\
 && /venv/bin/python -m pip install -q --no-index {no_deps}--find-links /opt/passk/wheels {packages} \\
 && /venv/bin/python -m pip freeze --all > /opt/passk/venv-freeze.txt \\
 && cp -a /venv /opt/passk/venv && rm -rf /venv && mkdir /venv /testbed \\
 && chmod -R a+rX /opt/passk && chown 10001:10001 /venv /testbed
COPY standins /opt/passk/standin-wheels{standins}
RUN rm -rf /opt/passk/standin-wheels
LABEL {label_key}="{key}" {label_lock}="{lock}"
"""
# a stand-in for a network service the tests reach, in a venv of its own (never the environment's)
_STANDIN_STEP = """
RUN python3 -m venv /opt/passk/standins/{name} \\
 && /opt/passk/standins/{name}/bin/python -m pip install -q --no-index --find-links /opt/passk/standin-wheels/{name} \\
      {pins} \\
 && chmod -R a+rX /opt/passk/standins"""
_APT_STEP = """
# the spec's apt-get step, from Debian's packages, here rather than in each instance's set-up
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \\
      {packages} >/dev/null \\
 && rm -rf /var/lib/apt/lists/*"""


def image_tag(env: RepoEnvironment, sandbox: dict, lock: dict) -> str:
    h = hashlib.sha256(f"{sandbox['image_id']}\0{lock['sha256']}\0{env.key}\0{' '.join(env.apt)}\0"
                       f"{_BASE_DOCKERFILE}{_VENV_LINK}{_DOCKERFILE}{_APT_STEP}{_STANDIN_STEP}".encode()).hexdigest()
    return f"{REPOSITORY}-{env.key}:{h[:12]}"


def ensure_image(client, sandbox: dict, env: RepoEnvironment, projects: dict | None = None, log=None) -> dict:
    """The environment's image on passk's sandbox image for its Python, built if missing: the sandbox facts
    for it, with `repo_environment` (what the manifest records: key, spec, Python, every package's version)."""
    import docker.errors
    log = log or (lambda msg: print(f"passk: {msg}", file=sys.stderr))
    t0, cached = time.monotonic(), (cache_root() / env.key / "lock.json").exists()
    target = probe_image(client, sandbox["image"])
    if target["python"].rsplit(".", 1)[0] != env.spec.python:
        raise HarnessError(f"{sandbox['image']} has Python {target['python']}, not the {env.spec.python} "
                           f"{env.spec.repo} {env.spec.version} asks for")
    repo_base = base_image(client, sandbox, log)
    lock = resolve(env, target, projects, log,
                   check=lambda w, r, p, steps, install: _missing_in_image(client, repo_base, w, r, p, steps, install),
                   build=lambda sdist, w: _build_in_image(client, repo_base, sdist, w))
    standins = _standin_locks(env, target, log)
    tag = image_tag(env, sandbox, {**lock, "sha256": hashlib.sha256(
        (lock["sha256"] + "".join(f"{n}:{sl['sha256']}" for n, sl in standins.items())).encode()).hexdigest()})
    facts = {**sandbox, "image": tag, "sandbox_image": sandbox["image"], "sandbox_image_id": sandbox["image_id"]}
    try:
        img = client.images.get(tag)
    except docker.errors.ImageNotFound:
        size = sum(Path(lock["wheels"], f["file"]).stat().st_size for f in lock["files"])
        log(f"building image {tag} (repository environment {env.key}: {len(lock['files'])} wheels, {size / 1e6:.0f} MB, "
            "installed offline)")
        with tempfile.TemporaryDirectory(prefix="passk-repo-env-") as ctx:
            link_wheels(lock["wheels"], [f["file"] for f in lock["files"]], Path(ctx, "wheels"))
            Path(ctx, "standins").mkdir()
            for name, sl in standins.items():
                link_wheels(sl["wheels"], [p["file"] for p in sl["packages"] + [sl["installer"]]],
                            Path(ctx, "standins", name))
            packages = lock["requested"] if env.pinned else [*BUILD_TOOLS, *lock["requested"]]
            Path(ctx, "Dockerfile").write_text(_DOCKERFILE.format(
                key=env.key, repo=env.spec.repo, python=env.spec.python, installer=INSTALLER,
                packages=" ".join(shlex.quote(p) for p in packages), no_deps="--no-deps " if env.pinned else "",
                apt=_APT_STEP.format(packages=" ".join(env.apt)) if env.apt else "",   # names checked (specs.apt_step)
                standins="".join(_STANDIN_STEP.format(name=n, pins=" ".join(shlex.quote(p) for p in STANDIN_PACKAGES[n]))
                                 for n in standins),
                label_key=LABEL_KEY, label_lock=LABEL_LOCK, lock=lock["sha256"]))
            img = build(client, ctx, tag, {"REPO_BASE": repo_base})
        record_build(env.key, tag, time.monotonic() - t0, cached)
    freeze = client.containers.run(tag, ["/opt/passk/venv-freeze.txt"], entrypoint="/bin/cat", network_disabled=True,
                                   remove=True).decode("utf-8", "replace").split()
    return {**facts, "image_id": img.id,
            "repo_environment": {"key": env.key, "repo": env.spec.repo, "spec": env.spec.to_dict(),
                                 "python": lock["python"], "lock": lock["sha256"], "image": tag, "image_id": img.id,
                                 "packages": freeze, "notes": lock.get("notes", []), "apt": list(env.apt),
                                 "pins": "official" if env.pinned else "spec",
                                 "official": None if env.official is None else env.official.id,
                                 "sources": env.sources(), "differences": env.differences(lock["python"]) +
                                 pin_differences(env, freeze),
                                 "requirements_sha256": hashlib.sha256((env.requirements or "").encode()).hexdigest()
                                 if env.requirements else None,
                                 "standins": {n: [f"{p['name']}=={p['version']}" for p in sl["packages"]]
                                              for n, sl in standins.items()}}}


def _build_record_path(key: str, tag: str) -> Path:
    return cache_root() / key / f"built-{tag.rsplit(':', 1)[-1]}.json"


def record_build(key: str, tag: str, seconds: float, wheels_cached: bool) -> None:
    """What building this image took, kept beside the environment's wheels: the seconds from asking for it
    to its image (the lock's resolution, with its downloads unless `wheels_cached`, and the repository base
    image's build when it was missing), so that a benchmark can report minutes from nothing for an image a
    run built earlier."""
    path = _build_record_path(key, tag)
    path.write_text(json.dumps({"image": tag, "seconds": round(seconds, 1), "wheels_cached": wheels_cached,
                                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")


def build_record(key: str, tag: str) -> dict | None:
    """record_build's record of this image, or None (built before records were kept, or elsewhere)."""
    try:
        data = json.loads(_build_record_path(key, tag).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("image") == tag else None


def _standin_locks(env: RepoEnvironment, target: dict, log) -> dict:
    """Each stand-in's lock (a pinned package and what it needs, resolved for the image's Python as a
    library environment is: library.resolve), by name."""
    if not env.standins:
        return {}
    from harness.environments import library
    from harness.inputs.libraries import Environment
    return {name: library.resolve(Environment(f"standin-{name}", STANDIN_PACKAGES[name]), target, log)
            for name in env.standins}


def pin_differences(env: RepoEnvironment, freeze: list[str]) -> list[str]:
    """The official pins the image's venv does not hold as pinned (`pip freeze` beside the pins)."""
    if env.official is None:
        return []
    have = {}
    for line in freeze:
        name, sep, version = line.partition("==")
        if sep:
            have[canonical_name(name)] = version
    out = []
    for name, version, _source in env.official.packages:
        got = have.get(name)
        if got != version:
            out.append(f"{name}: {version} pinned, {got or 'absent'} installed")
    return out
