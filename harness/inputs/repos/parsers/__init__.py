"""Log parsers, one module per test runner: each turns a test run's log into {test name: status}, with
the statuses SWE-bench's grading knows (PASSED, FAILED, SKIPPED, ERROR, XFAIL). A name is what the
runner prints, split as SWE-bench's own parser for that repository splits it, because the rows'
FAIL_TO_PASS and PASS_TO_PASS lists were made by those parsers: a name passk split otherwise would be a
test that never ran. The log is a candidate's output (its code runs inside the test process): it is
read as bounded text and only ever becomes keys of a dict; it never decides anything by itself (the
grading cross-checks it against the run's exit status and, where the runner writes one, its own
structured report).

PARSERS maps a parser's name to its function; BY_REPOSITORY is the parser SWE-bench names for each
repository it knows (its harness/log_parsers, version 5.0.2)."""

from __future__ import annotations

from harness.inputs.repos.parsers import django as _django
from harness.inputs.repos.parsers import pytest as _pytest
from harness.inputs.repos.parsers import seaborn as _seaborn
from harness.inputs.repos.parsers import sympy as _sympy

STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")
MAX_LOG_CHARS = 64 << 20          # a log beyond this is cut before it is parsed (the rest is not read)

PARSERS = {
    "pytest": _pytest.parse,
    "pytest_options": _pytest.parse_with_options,
    "pytest_v2": _pytest.parse_v2,
    "pytest_matplotlib": _pytest.parse_matplotlib,
    "seaborn": _seaborn.parse,
    "django": _django.parse,
    "sympy": _sympy.parse,
}

BY_REPOSITORY = {
    "astropy/astropy": "pytest_v2",
    "django/django": "django",
    "matplotlib/matplotlib": "pytest_matplotlib",
    "mwaskom/seaborn": "seaborn",
    "marshmallow-code/marshmallow": "pytest",
    "pallets/flask": "pytest",
    "psf/requests": "pytest_options",
    "pvlib/pvlib-python": "pytest",
    "pydata/xarray": "pytest",
    "pydicom/pydicom": "pytest_options",
    "pylint-dev/astroid": "pytest",
    "pylint-dev/pylint": "pytest_options",
    "pytest-dev/pytest": "pytest",
    "pyvista/pyvista": "pytest",
    "scikit-learn/scikit-learn": "pytest_v2",
    "sphinx-doc/sphinx": "pytest_v2",
    "sqlfluff/sqlfluff": "pytest",
    "sympy/sympy": "sympy",
}


def parse(parser: str, log: str) -> dict[str, str]:
    """{test: status} of a log by the named parser (KeyError names an unknown parser)."""
    return PARSERS[parser](log[:MAX_LOG_CHARS])
