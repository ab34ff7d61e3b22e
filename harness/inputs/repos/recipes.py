"""A repository environment's recipe: what its image must hold, as plain data derived from the rows and
specs a run is given. Building it is the environments stage's (harness/environments/repository.py); an
executor's settings carry it as data (to_settings), so that a Ray node builds the same image from the same
recipe.

What an image holds decides its key, not who asked for it: the spec's Python, the Debian packages its
pre-install steps name, and its Python packages: SWE-bench's official, exported pins where it published the
instance's environment (official.py), else the spec's packages, its pip packages and the repository's
requirements file where the spec reads one. Two versions or instances that hold the same share one image;
the install and the pre-install steps are the instance's own (its snapshot, environments/instances.py)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.inputs.libraries import canonical_name
from harness.inputs.repos.official import OfficialEnvironment, exported_on, for_instance
from harness.inputs.repos.specs import DEBIAN_PYTHON, EnvSpec


# Stand-ins for what a repository's tests reach over the network, served inside the sandbox (which has no
# network out): requests' suites fetch from httpbin (HTTPBIN_URL in older versions; the pytest-httpbin
# fixture of newer ones serves itself). Each is a pinned package set installed into a venv of its own in
# the environment's image, started by the test step (containers/box/repo.py SERVICES).
STANDINS = {"psf/requests": ("httpbin",)}
STANDIN_PACKAGES = {"httpbin": ("httpbin==0.10.4", "importlib-metadata==8.5.0")}   # the second: flask's on Python < 3.10


def _name(requirement: str) -> str:
    """A requirement's package, by PEP 503's name ("MarkupSafe>=2.0; python_version<'3.10'" -> "markupsafe")."""
    return canonical_name(re.split(r"[<>=!~\[; ]", requirement.strip())[0])


@dataclass(frozen=True)
class RepoEnvironment:
    spec: EnvSpec
    requirements: str | None = None       # the repository's requirements file (spec packages: requirements.txt)
    commit: str | None = None             # the commit the environment is set up from (environment_setup_commit)
    # the instances' trees its wheels must serve: (base commit, the pre-install steps, the install command, the
    # gold patch)
    projects: tuple = field(default=(), compare=False)
    official: OfficialEnvironment | None = None           # SWE-bench's exported pins, where it published them

    @property
    def pinned(self) -> bool:
        """Whether the packages are the official environment's exact pins (installed as they are, no
        resolution) rather than the spec's requests (resolved by pip)."""
        return self.official is not None

    @property
    def as_of(self) -> str | None:
        """The day a spec-resolved environment resolves as of (the newest the official exports record:
        official.exported_on): pip sees no release uploaded after it, as SWE-bench's harness saw none when
        it built the official images. None for the official pins (exact versions, nothing resolved)."""
        return None if self.official is not None else exported_on()

    @property
    def apt(self) -> tuple[str, ...]:
        return self.spec.apt_packages()

    @property
    def standins(self) -> tuple[str, ...]:
        return STANDINS.get(self.spec.repo, ())

    def _requests(self) -> tuple[list[str], list[str], tuple[str, ...]]:
        """The spec's requests: (its packages' words, the requirements file's lines, its pip packages). The
        harness installs the pip packages after the others, so a package they name is theirs: the same
        package from the spec's packages or the requirements file is left out (flask 2.0's requirements pin
        MarkupSafe 2.0.1, its pip packages 2.1.3; resolved together they conflicted and nothing installed)."""
        pip = self.spec.pip_packages
        theirs = {_name(p) for p in pip}
        words = [] if self.spec.reads_requirements else self.spec.packages.split()
        lines = [ln.strip() for ln in (self.requirements or "").splitlines() if ln.strip() and not ln.startswith("-")]
        return [w for w in words if _name(w) not in theirs], [ln for ln in lines if _name(ln) not in theirs], pip

    def packages(self) -> list[str]:
        """What pip installs into the environment: the official pins, or the spec's requirements."""
        if self.official is not None:
            return self.official.pins()
        words, lines, pip = self._requests()
        return [*words, *lines, *pip]

    def holds(self) -> dict:
        """What the image holds, and so what its key hashes."""
        return {"python": self.spec.python, "apt": sorted(self.apt), "pinned": self.pinned,
                **({"standins": {n: list(STANDIN_PACKAGES[n]) for n in self.standins}} if self.standins else {}),
                **({"as_of": self.as_of} if self.as_of else {}),
                "packages": sorted(self.packages(), key=lambda r: (_name(r), r))}

    @property
    def key(self) -> str:
        h = hashlib.sha256(json.dumps(self.holds(), sort_keys=True).encode()).hexdigest()
        slug = re.sub(r"[^a-z0-9]+", "-", self.spec.repo.lower()).strip("-")
        return f"{slug}-py{self.spec.python.replace('.', '')}-{h[:10]}"

    @property
    def suite(self) -> str:
        return DEBIAN_PYTHON[self.spec.python]

    @property
    def base_image(self) -> str:
        return f"passk-base:{self.suite}"

    def sources(self) -> list[dict]:
        """Where each requested package's pin or requirement came from."""
        if self.official is not None:
            return [{"package": n, "version": v, "source": s} for n, v, s in self.official.packages]
        words, lines, pip = self._requests()
        return ([{"package": w, "source": "spec packages (conda's name, resolved by pip)"} for w in words] +
                [{"package": ln, "source": "the repository's requirements file"} for ln in lines] +
                [{"package": p, "source": "spec pip_packages"} for p in pip])

    def differences(self, python: str | None = None) -> list[str]:
        """How this environment differs from the official one, as far as the recipe knows (the image's
        Python is known once it is built: `python`)."""
        if self.official is None:
            return ["SWE-bench published no exported environment for this instance: the spec's packages, "
                    f"resolved by pip at the newest release that fits as of {self.as_of or 'today'}, where the "
                    "harness's conda resolved its own"]
        out = []
        if python and python != self.official.python:
            out.append(f"python {self.official.python} (conda's) -> {python} (Debian's)")
        if self.official.runtime:
            out.append(f"conda's runtime ({len(self.official.runtime)} packages: {', '.join(self.official.runtime[:6])}"
                       f"{', ...' if len(self.official.runtime) > 6 else ''}) -> Debian's libraries")
        if self.apt:
            out.append(f"apt-get install {' '.join(self.apt)}: from Debian's packages when the image is built "
                       "(the official image ran it from Ubuntu's)")
        return out

    def unbuildable(self) -> str | None:
        """Why this machine cannot build the environment (one line), or None."""
        if self.official is not None:
            if self.official.conda_only:
                return ("the official environment needs conda packages with no PyPI release ("
                        + ", ".join(self.official.conda_only) + ")")
            if self.official.python.rsplit(".", 1)[0] != self.spec.python:
                return f"the official environment's Python {self.official.python} is not the spec's {self.spec.python}"
        return None


def recipe(spec: EnvSpec, instance_id: str, requirements: str | None, commit: str | None,
           official: bool = True) -> RepoEnvironment:
    """An instance's recipe: the official pins where SWE-bench published them (unless `official` is off),
    else the spec's packages."""
    pins = for_instance(instance_id) if official else None
    return RepoEnvironment(spec, None if pins else requirements, commit, official=pins)


def to_settings(env: RepoEnvironment, repos_dir: str | None, snapshots: bool = True) -> dict:
    """The environment as an executor's settings carry it (SandboxSettings.repo_environment): plain data, so
    that a Ray node builds the same image from the same recipe (and, with `snapshots`, keeps each
    instance's snapshot on the node: environments/instances.py)."""
    return {"key": env.key, "spec": env.spec.to_dict(), "requirements": env.requirements, "commit": env.commit,
            "projects": [[c, list(steps), install, gold] for c, steps, install, gold in env.projects], "repos": repos_dir,
            "snapshots": bool(snapshots),
            "official": None if env.official is None else {"id": env.official.id, "python": env.official.python,
                                                           "packages": [list(p) for p in env.official.packages],
                                                           "runtime": list(env.official.runtime),
                                                           "conda_only": list(env.official.conda_only)}}


def from_settings(data: dict):
    """(RepoEnvironment, {(commit, steps, install, gold patch): a function that exports the repository at the commit into a
    directory and returns its path}) from to_settings' data: the trees whose installs the environment's wheels
    must serve, each with the pre-install steps and the install command it runs."""
    spec = dict(data["spec"])
    for key in ("pip_packages", "pre_install", "eval_commands", "requirements_paths"):
        spec[key] = tuple(spec.get(key) or ())
    off = data.get("official")
    official = None if not off else OfficialEnvironment(off["id"], off["python"], tuple(tuple(p) for p in off["packages"]),
                                                        tuple(off["runtime"]), tuple(off["conda_only"]))
    projects = tuple((c, tuple(steps), install, gold) for c, steps, install, gold in data.get("projects") or ())
    env = RepoEnvironment(EnvSpec(**spec), data.get("requirements"), data.get("commit"), projects, official)
    repos = data.get("repos")
    if not repos:
        return env, {}

    def exporter(commit):
        def export_into(tmp: str) -> Path:
            from harness.inputs.repos.trees import export
            return export(repos, env.spec.repo, commit, Path(tmp))
        return export_into
    own = [(env.commit, env.spec.setup_steps(), env.spec.install, "")] if env.commit else []
    wanted = dict.fromkeys([*own, *env.projects])
    return env, {p: exporter(p[0]) for p in wanted}
