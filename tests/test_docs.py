"""The documentation holds: every Python example of a docs page prints what the page says it prints (run
as written, from outside the checkout), and every relative link of the README and the changelog points
at a file that exists. `mkdocs build --strict` (scripts/test.sh) checks the links between docs pages."""

import re
import subprocess
import sys

import pytest

from .conftest import ROOT

EXAMPLE = re.compile(r"```python\n(.*?)```\s*\nprints\n\n```\n(.*?)```", re.S)


def examples():
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for i, m in enumerate(EXAMPLE.finditer(page.read_text(encoding="utf-8"))):
            needs_docker = "Evaluator" in m.group(1) or "evaluate(" in m.group(1)
            found.append(pytest.param(m.group(1), m.group(2), id=f"{page.name}#{i}",
                                      marks=[pytest.mark.docker] if needs_docker else []))
    return found


def test_the_api_page_has_examples_with_their_output():
    assert len([p for p in examples() if p.id.startswith("api.md")]) >= 2


@pytest.mark.parametrize("code, expected", examples())
def test_a_docs_example_prints_what_its_page_says(code, expected, tmp_path):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == expected


@pytest.mark.parametrize("name", ["README.md", "CHANGELOG.md"])
def test_relative_links_point_at_files_that_exist(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    links = [link.split("#", 1)[0] for link in re.findall(r"\]\(([^)\s]+)\)", text)
             if not re.match(r"[a-z]+:", link) and not link.startswith("#")]
    missing = [link for link in links if link and not (ROOT / link).exists()]
    assert not missing, missing
