"""Benchmark figures into the docs. A benchmark script run with --write-docs writes its latest figures
into docs/figures/NAME.md (a table, the machine, the command, the date, passk's commit), which
docs/performance.md includes; and, where it has one, its headline into the README between the markers
<!-- figures:NAME --> and <!-- /figures:NAME -->. The files say which command wrote them: to update a
figure, rerun that command, never edit the file."""

from __future__ import annotations

import datetime
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "figures"


def machine_facts() -> str:
    from harness.records.manifest import host_facts
    host = host_facts()
    docker = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True,
                            text=True).stdout.strip()
    return (f"{host['cpu_count']} cores ({host['cpu_model']}), {host['memory_mb'] / 1024:.0f} GiB, "
            f"kernel {os.uname().release}, Docker {docker}")


def command() -> str:
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return "python3 " + " ".join(shlex.quote(a) for a in [str(shown), *sys.argv[1:]] if a != "--write-docs")


def commit() -> str:
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", "harness",
                            "containers"], capture_output=True, text=True).stdout.strip()
    return (rev.stdout.strip() or "unknown") + (" with uncommitted changes to harness/ or containers/" if dirty else "")


def median(values):
    """The median of the values that are not None (the mean of the middle two of an even count); None if none."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def table(header: list[str], rows: list[list]) -> str:
    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    return "\n".join(lines)


def write(name: str, body: str, headline: str | None = None) -> Path:
    """docs/figures/NAME.md: the measurement's provenance, then `body` (tables and notes in Markdown).
    `headline`: what the README shows between its figures:NAME markers (left alone if it has none)."""
    today = datetime.date.today().isoformat()
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.md"
    provenance = (f"<!-- written by scripts/lib/figures.py for `{command()}`: rerun it, do not edit -->\n"
                  f"Measured {today} with `{command()}`, passk {commit()}; machine: {machine_facts()}.\n")
    path.write_text(provenance + "\n" + body.strip() + "\n", encoding="utf-8")
    if headline is not None:
        readme = ROOT / "README.md"
        text = readme.read_text(encoding="utf-8")
        start, end = f"<!-- figures:{name} -->", f"<!-- /figures:{name} -->"
        if start in text and end in text:
            before, rest = text.split(start, 1)
            after = rest.split(end, 1)[1]
            block = f"{start}\n{headline.strip()}\n\n(measured {today}: [docs/performance.md](docs/performance.md))\n{end}"
            readme.write_text(before + block + after, encoding="utf-8")
    print(f"figures written to {path.relative_to(ROOT)}")
    return path


def finish(name: str, body: str, write_docs: bool, unexpected: int = 0) -> int:
    """The end every table script shares: print the body, write docs/figures/NAME.md when asked, and exit 1
    when the table holds an unexpected row (0 otherwise)."""
    print(body)
    if write_docs:
        write(name, body)
    return 1 if unexpected else 0
