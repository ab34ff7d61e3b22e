#!/usr/bin/env python3
"""SWE-bench's official environments, pinned, as data passk reads: the exported conda environment of every
instance SWE-bench publishes one for (`swebench/resources/swebench-og/<repo>/<number>/environment.yml` in
SWE-bench's git history at tag v4.1.0; the PyPI wheel does not ship them) into
harness/inputs/repos/official.json. The harness of that release builds an instance's environment from this
file where it has one (`conda env create`); passk installs the same versions with pip:

- the `pip:` section's pins as they are;
- conda's Python packages (a build string that starts with `py`) under their PyPI names (a few differ:
  CONDA_TO_PYPI), at the same version;
- conda's own runtime (python itself, libgcc, openssl, sqlite, ...: every other entry) is not a Python
  package: it is kept as a record only (the Debian base gives its own, and the manifest says so);
- a conda Python package that has no PyPI release (CONDA_ONLY) is kept by name, so that an environment that
  needs one is refused by name rather than approximated.

Environments are stored once each, by the sha256 of what they pin; instances name theirs. Rerun it to follow
another release; never edit the JSON by hand.

    # the search tool's fetch brings SWE-bench's repository as a bare mirror
    python3 scripts/inputs/repos_pins.py /work/.mirror/SWE-bench+SWE-bench/repo --tag v4.1.0
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.inputs.libraries import canonical_name  # noqa: E402

OUT = ROOT / "harness" / "inputs" / "repos" / "official.json"
PREFIX = "swebench/resources/swebench-og/"
# conda's name -> PyPI's, where they differ by more than PEP 503's normalisation
CONDA_TO_PYPI = {
    "antlr-python-runtime": "antlr4-python3-runtime", "brotli-python": "brotli", "iris": "scitools-iris",
    "matplotlib-base": "matplotlib", "msgpack-python": "msgpack", "nbconvert-core": "nbconvert",
    "pyqt": "pyqt5", "pyqt5-sip": "pyqt5-sip", "python-eccodes": "eccodes",
    "python-fastjsonschema": "fastjsonschema", "python-tzdata": "tzdata", "python-xxhash": "xxhash",
    "seaborn-base": "seaborn",
}
# conda's packages that are parts of another (its pip name is the other's): not installed twice
CONDA_PARTS = {"numpy-base": "numpy", "pyarrow-core": "pyarrow", "pybind11-global": "pybind11"}
# conda Python packages with no release on PyPI (CDAT's): an environment that needs one is refused by name
CONDA_ONLY = {"cdat_info", "cdms2", "cdtime", "esmpy", "libcf"}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$")
_CONDA = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9._-]*)=([^=]+)=([^=]+)$")


def read_environment(text: str, where: str) -> dict:
    """One environment.yml: {python, packages: [[pip name, version, source]], runtime: ["name=version"],
    conda_only: [names]}. Only the lines SWE-bench's exports have are read; anything else stops the script."""
    packages, runtime, conda_only, python = {}, [], [], None
    in_pip = False
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or line.startswith(("name:", "channels:", "dependencies:", "prefix:")) or \
                stripped in ("- defaults", "- conda-forge"):
            continue
        if stripped == "- pip:":
            in_pip = True
            continue
        if not stripped.startswith("- "):
            raise SystemExit(f"{where}: unexpected line {line!r}")
        entry = stripped[2:]
        if in_pip and line.startswith("      - "):
            m = _PIN.match(entry)
            if m is None:
                raise SystemExit(f"{where}: a pip line that is not a pin: {entry!r}")
            packages[canonical_name(m.group(1))] = [canonical_name(m.group(1)), m.group(2), "official pip"]
            continue
        m = _CONDA.match(entry)
        if m is None:
            raise SystemExit(f"{where}: a conda line that is not name=version=build: {entry!r}")
        name, version, build = m.groups()
        if name == "python":
            python = version
        elif not build.startswith("py"):
            runtime.append(f"{name}={version}")
        elif name in CONDA_ONLY:
            conda_only.append(f"{name}={version}")
        elif name in CONDA_PARTS:
            continue
        else:
            pip_name = canonical_name(CONDA_TO_PYPI.get(name, name))
            packages.setdefault(pip_name, [pip_name, version, f"official conda ({name})"])
    if python is None:
        raise SystemExit(f"{where}: no python")
    return {"python": python, "packages": sorted(packages.values()), "runtime": sorted(runtime),
            "conda_only": sorted(conda_only)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repository", help="SWE-bench's git repository (a bare mirror or a clone)")
    ap.add_argument("--tag", default="v4.1.0")
    args = ap.parse_args()
    commit = subprocess.run(["git", "--git-dir", args.repository, "rev-parse", f"{args.tag}^{{commit}}"],
                            capture_output=True, text=True, check=True).stdout.strip()
    archive = subprocess.run(["git", "--git-dir", args.repository, "archive", "--format=tar", commit, PREFIX],
                             capture_output=True, check=True).stdout
    environments, instances = {}, {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not member.isfile() or not member.name.endswith("/environment.yml"):
                continue
            repo_dir, number = member.name[len(PREFIX):].split("/")[:2]
            env = read_environment(tar.extractfile(member).read().decode("utf-8"), member.name)
            key = hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()[:16]
            environments.setdefault(key, env)
            instances[f"{repo_dir}-{number}"] = key
    data = {"source": f"SWE-bench (MIT, (c) 2023 the SWE-bench authors), git tag {args.tag} ({commit}): "
                      f"{PREFIX}<repo>/<number>/environment.yml, the exported conda environment of each instance",
            "written_by": "scripts/inputs/repos_pins.py", "conda_to_pypi": CONDA_TO_PYPI,
            "environments": dict(sorted(environments.items())), "instances": dict(sorted(instances.items()))}
    OUT.write_text(json.dumps(data, indent=0, sort_keys=False) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(instances)} instances, {len(environments)} distinct environments, "
          f"from SWE-bench {args.tag} ({commit[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
