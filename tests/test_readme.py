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
