#!/usr/bin/env python3
"""SWE-bench's environment specifications, as data passk reads: from `swebench` 4.1.0's own constants
(harness/constants/python.py: MAP_REPO_VERSION_TO_SPECS_PY, MAP_REPO_TO_REQS_PATHS, MAP_REPO_TO_ENV_YML_PATHS;
5.x moved them into a task repository that is not reachable here) into harness/inputs/repos/specs.json.
Only what an environment needs is kept, per repository and version: the Python, the packages (conda's
names, or `requirements.txt` / `environment.yml` read from the repository), the pip packages, the
pre-install steps, the install and test commands and the eval commands. Rerun it to follow another
release; never edit the JSON by hand.

    pip download --no-deps swebench==4.1.0 -d /tmp/swb
    python3 scripts/inputs/repos_specs.py /tmp/swb/swebench-4.1.0-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "harness" / "inputs" / "repos" / "specs.json"
KEPT = ("python", "packages", "pip_packages", "pre_install", "install", "test_cmd", "eval_commands", "no_use_env")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheel", help="swebench-4.1.0-py3-none-any.whl")
    args = ap.parse_args()
    wheel = Path(args.wheel)
    with zipfile.ZipFile(wheel) as z:
        source = z.read("swebench/harness/constants/python.py").decode()
        version = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = z.read(version).decode()
    release = next(line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Version:"))
    # the module is constants only (strings, lists, dicts): run it alone, nothing else of the package
    ns: dict = {}
    exec(compile(source, "swebench/harness/constants/python.py", "exec"), ns)   # noqa: S102 - a pinned release's data
    specs = ns["MAP_REPO_VERSION_TO_SPECS_PY"]
    repos = {}
    for repo in sorted(specs):
        versions = {}
        for v in sorted(specs[repo], key=lambda s: [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in s.split(".")]):
            versions[v] = {k: specs[repo][v][k] for k in KEPT if k in specs[repo][v]}
        repos[repo] = {"versions": versions,
                       "requirements_paths": ns["MAP_REPO_TO_REQS_PATHS"].get(repo, []),
                       "environment_yml_paths": ns["MAP_REPO_TO_ENV_YML_PATHS"].get(repo, []),
                       "install_first": ns.get("MAP_REPO_TO_INSTALL_PY", {}).get(repo)}
    data = {"source": f"swebench {release}, swebench/harness/constants/python.py (MIT, (c) 2023 the SWE-bench "
                      "authors): MAP_REPO_VERSION_TO_SPECS_PY, MAP_REPO_TO_REQS_PATHS, MAP_REPO_TO_ENV_YML_PATHS",
            "written_by": "scripts/inputs/repos_specs.py", "repositories": repos}
    OUT.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(repos)} repositories, "
          f"{sum(len(r['versions']) for r in repos.values())} versions, from swebench {release}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
