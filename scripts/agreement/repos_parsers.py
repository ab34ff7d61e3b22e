#!/usr/bin/env python3
"""passk's log parsers against SWE-bench's own (swebench 5.0.2's harness/log_parsers) on real evaluation logs:
a public SWE-bench Lite submission that kept the log of every instance it ran (NL2Code/CodeR:
`logs/<instance>.20240604_CodeR.eval.log`, 283 logs of all twelve repositories, django's runner among them).
For each log, the repository's parser in passk and in swebench read the whole log; the two maps of
{test: status} must be equal. Every difference is printed by log and test.

    pip download --no-deps swebench==5.0.2 -d /tmp/swb && (cd /tmp/swb && unzip -q -o swebench-5.0.2-*.whl -d v5)
    pip install unidiff                # imported by swebench's log_parsers package
    # the search tool's fetch brings NL2Code/CodeR as a bare mirror
    python3 scripts/agreement/repos_parsers.py --swebench /tmp/swb/v5 --logs /work/.mirror/NL2Code+CodeR/repo \\
        [--write-docs]
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

_NAME = re.compile(r"^logs/(?P<repo>[A-Za-z0-9_.-]+?)__(?P<name>[A-Za-z0-9_.-]+?)-\d+\..*\.eval\.log$")


def logs_of(source: Path):
    """(repository, instance, text) of every evaluation log in a git repository (bare or not) or a directory."""
    if (source / "logs").is_dir():
        for path in sorted((source / "logs").glob("*.eval.log")):
            m = _NAME.match("logs/" + path.name)
            if m:
                yield f"{m['repo']}/{m['name']}", path.name.split(".")[0], path.read_text(errors="replace")
        return
    archive = subprocess.run(["git", "--git-dir", str(source), "archive", "--format=tar", "HEAD", "logs"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            m = _NAME.match(member.name)
            if member.isfile() and m:
                text = tar.extractfile(member).read().decode("utf-8", "replace")
                yield f"{m['repo']}/{m['name']}", member.name.split("/")[1].split(".")[0], text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--swebench", required=True, help="an unpacked swebench 5.0.2 wheel")
    ap.add_argument("--logs", required=True, help="the submission's repository (its logs/ folder)")
    ap.add_argument("--write-docs", action="store_true", help="write docs/figures/repos-parsers.md")
    args = ap.parse_args()
    from scripts.peers.repos_grading_peer import load_swebench   # its harness modules alone, not its __init__
    MAP_REPO_TO_PARSER_PY = load_swebench(Path(args.swebench))[0].MAP_REPO_TO_PARSER_PY
    from harness.inputs.repos.parsers import BY_REPOSITORY, parse   # noqa: E402
    per_repo = defaultdict(lambda: [0, 0, 0, set()])   # logs, tests, logs whose maps are equal, passk's parser
    differences = []
    for repo, instance, text in logs_of(Path(args.logs)):
        theirs = MAP_REPO_TO_PARSER_PY[repo](text, None)
        ours = parse(BY_REPOSITORY[repo], text)
        c = per_repo[repo]
        c[0] += 1
        c[1] += len(theirs)
        c[2] += ours == theirs
        c[3].add(BY_REPOSITORY[repo])
        if ours != theirs:
            keys = sorted(set(ours) | set(theirs), key=str)
            diff = [k for k in keys if ours.get(k) != theirs.get(k)]
            differences.append(f"{instance}: {len(diff)} tests differ, e.g. "
                               + "; ".join(f"{k!r}: passk {ours.get(k)}, swebench {theirs.get(k)}" for k in diff[:3]))
    from scripts.lib import figures
    rows = [[repo, "/".join(sorted(c[3])), MAP_REPO_TO_PARSER_PY[repo].__name__, c[0], c[1], c[2]]
            for repo, c in sorted(per_repo.items())]
    total = [sum(c[i] for c in per_repo.values()) for i in range(3)]
    rows.append(["all", "", "", *total])
    body = figures.table(["repository", "passk's parser", "swebench 5.0.2's", "logs", "tests (swebench's map)",
                          "logs with equal maps"], rows)
    body += "\n\nDifferences:\n\n" + ("\n".join(f"- {d}" for d in differences) if differences else "- none") + "\n"
    return figures.finish("repos-parsers", body, args.write_docs, len(differences))


if __name__ == "__main__":
    sys.exit(main())
