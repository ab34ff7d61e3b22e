"""The language benchmark's own parts, without Docker: the mix of passing programs is written from each
test as its tests spell it, and the peer waits for a step as MultiPL-E's safe_subprocess does."""

import json
import sys

import pytest

from scripts.inputs import language_passing
from scripts.peers import multiple_peer

PROBLEMS = language_passing.language_samples.SHARED


@pytest.mark.skipif(not PROBLEMS.is_dir(), reason="needs ../shared/data/multipl-e")
@pytest.mark.parametrize("language", sorted(language_passing.language_samples.FILES))
def test_nearly_every_problem_gets_one_expected_value_per_test(language):
    name = language_passing.language_samples.FILES[language]
    problems = [json.loads(line) for line in (PROBLEMS / f"{name}.jsonl").read_text().splitlines()]
    parsed = 0
    for p in problems:
        values = language_passing.expected_values(language, p)
        if values is None:
            continue
        parsed += 1
        tests = p.get("tests") or p["test"]
        assert len(values) == tests.count("candidate(") or language == "java", p["name"]
        assert all(v and v.count("(") == v.count(")") for v in values), (p["name"], values)
    assert parsed >= 0.95 * len(problems)


def test_an_expected_value_is_cut_where_its_call_closes_not_at_a_bracket_in_a_string():
    problem = {"prompt": "fn f(s: &str) -> String {\n",
               "test": 'fn main() {\n    assert_eq!(candidate(")", 1), String::from("a, b)"));\n}\n'}
    assert language_passing.expected_values("rust", problem) == ['String::from("a, b)")']


def test_the_peer_polls_a_step_as_multipl_e_does():
    # (the time it took is not asserted: a program that ends before the first poll is seen at once, and
    # one that ends later at the next poll; an assertion that it took at least one poll failed on a fast day)
    timed_out, code, out, err, cpu = multiple_peer.safe_run(["true"], 15)
    assert (timed_out, code) == (False, 0)
    timed_out, code, *_ = multiple_peer.safe_run(["sh", "-c", "sleep 0.3; exit 3"], 15)
    assert (timed_out, code) == (False, 3)   # seen at a later poll, its exit code kept
    timed_out, code, out, err, cpu = multiple_peer.safe_run([sys.executable, "-c", "print('x' * 5000)"], 15)
    assert not timed_out and code == 0 and len(out) <= multiple_peer.KEEP_BYTES + multiple_peer.READ_BYTES
    timed_out, code, *_ = multiple_peer.safe_run(["sleep", "5"], 0.3)
    assert timed_out and code == -1
