import gzip
import json

import pytest

from harness.core.errors import InputError
from harness.inputs.problems import load_problems

from .conftest import DEMO_PROBLEMS, HUMANEVAL

GOOD = {"task_id": "T/0", "prompt": "def f(x):\n", "test": "def check(c):\n    assert c(1)\n", "entry_point": "f"}


def test_demo_set_loads_in_file_order():
    problems = load_problems(DEMO_PROBLEMS)
    assert 10 <= len(problems) <= 20
    assert list(problems)[0] == "Demo/0"
    assert all(p.canonical_solution for p in problems.values())


def test_gzip_humaneval_loads():
    if not HUMANEVAL.exists():
        pytest.skip("shared HumanEval data not present")
    problems = load_problems(HUMANEVAL)
    assert len(problems) == 164 and problems["HumanEval/0"].entry_point == "has_close_elements"


@pytest.mark.parametrize("rows,fragment", [
    ([GOOD, GOOD], ":2: duplicate task_id"),
    ([{**GOOD, "test": 3}], ":1: field 'test' must be a string"),
    ([{k: v for k, v in GOOD.items() if k != "entry_point"}], ":1: missing field 'entry_point'"),
    ([{**GOOD, "entry_point": "not valid"}], "is not a Python identifier"),
])
def test_bad_problem_rows_name_file_and_line(jsonl, rows, fragment):
    path = jsonl("p.jsonl", rows)
    with pytest.raises(InputError) as e:
        load_problems(path)
    assert str(path) in str(e.value) and fragment in str(e.value)


def test_malformed_json_names_the_line(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(InputError, match=r"p\.jsonl:2: malformed JSON"):
        load_problems(path)


def test_non_utf8_and_empty_and_missing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"task_id": "\xff"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1: not valid UTF-8"):
        load_problems(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="empty problem file"):
        load_problems(empty)
    with pytest.raises(InputError, match="no such file"):
        load_problems(tmp_path / "missing.jsonl")


def test_gzip_is_read(tmp_path):
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(GOOD) + "\n")
    assert list(load_problems(path)) == ["T/0"]


def test_a_test_that_does_not_compile_is_refused_naming_the_task(jsonl):
    path = jsonl("p.jsonl", [GOOD, {**GOOD, "task_id": "T/1", "test": "def check(c):\n    assert (\n"}])
    with pytest.raises(InputError, match=r"p\.jsonl:2: the test code of 'T/1' does not compile"):
        load_problems(path)
