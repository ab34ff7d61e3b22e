"""The benchmark scripts' figure helpers (scripts/lib/figures.py): pure logic, no engine."""

from scripts.lib import figures


def test_median_of_an_even_count_is_the_mean_of_the_middle_two():
    # bench_ray.py once took the upper middle: rounds 0.90 and 0.96 were reported as "median 0.96"
    assert abs(figures.median([0.96, 0.90]) - 0.93) < 1e-12
    assert figures.median([3, 1, 2]) == 2
    assert figures.median([None, 5, None]) == 5
    assert figures.median([None]) is None


def test_a_table_cell_cannot_become_structure():
    text = figures.table(["a", "b"], [["x|y", "two\nlines"]])
    assert text.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | two lines |"]
