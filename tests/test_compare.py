from fractions import Fraction

import pytest

from harness.scoring.compare import compare_runs, format_comparison
from harness.core.errors import InputError
from harness.records.results import ResultRow


def rows_for(counts):
    return [ResultRow(t, i, "passed" if i < c else "failed") for t, (n, c) in counts.items() for i in range(n)]


def test_seed_reversal_between_k1_and_k3():
    a = rows_for({"x": (10, 5), "y": (10, 0)})
    b = rows_for({"x": (10, 2), "y": (10, 2)})
    result = compare_runs({"A": a, "B": b}, ks=(1, 3))
    assert result["pass_at_k"]["1"]["exact"] == {"A": "1/4", "B": "1/5"}
    assert result["pass_at_k"]["3"]["exact"] == {"A": "11/24", "B": "8/15"}
    assert len(result["order_changes"]) == 1
    line = result["order_changes"][0]
    assert "A leads at k=1 (1/4 vs 1/5)" in line and "B leads at k=3 (11/24 vs 8/15)" in line
    assert "ORDER CHANGES" in format_comparison(result)
    diff = result["pass_at_k"]["3"]["differences"]["B - A"]["mean"]
    assert abs(diff - float(Fraction(8, 15) - Fraction(11, 24))) < 1e-15


def test_default_ks_cover_every_common_k_and_tasks_outside_are_named():
    a = rows_for({"x": (4, 1), "z": (4, 4)})
    b = rows_for({"x": (4, 2)})
    result = compare_runs({"A": a, "B": b})
    assert result["ks"] == ["1", "2", "3", "4"] and result["common_tasks"] == 1
    assert result["tasks_not_in_every_run"] == {"A": ["z"]}
    assert result["order_changes"] == []


def test_runs_with_errors_are_refused():
    a = rows_for({"x": (2, 1)}) + [ResultRow("x", 2, "error")]
    with pytest.raises(InputError, match="status error"):
        compare_runs({"A": a, "B": rows_for({"x": (2, 1)})})
