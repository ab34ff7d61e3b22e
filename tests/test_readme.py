"""The README's Python API example runs as written, from outside the checkout, and prints what the
README says it prints."""

import subprocess
import sys

import pytest

from .conftest import ROOT


@pytest.mark.docker
def test_the_python_api_example_prints_what_the_readme_says(tmp_path):
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Python API", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    expected = section.split("prints\n\n```\n", 1)[1].split("```", 1)[0]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == expected


@pytest.mark.docker
def test_the_cli_example_prints_what_the_readme_says(tmp_path):
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Command line", 1)[1]
    command = section.split("```\n", 1)[1].split("```", 1)[0].replace("\\\n", " ").split()
    expected = section.split("prints", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    assert command[:2] == ["passk", "evaluate"]
    out = command.index("--out") + 1
    command[out] = str(tmp_path / "hep")
    proc = subprocess.run([sys.executable, "-m", "harness.cli", *command[1:]], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == expected.replace("runs/hep", str(tmp_path / "hep"))
