import pytest

from harness.core.errors import InputError
from harness.records.results import ResultRow, ResultStore, read_rows


def test_store_appends_and_resumes(tmp_path):
    path = tmp_path / "results.jsonl"
    store = ResultStore(path)
    store.append(ResultRow("t", 0, "passed"))
    store.append(ResultRow("t", 1, "error", reason="infrastructure"))
    store.close()
    again = ResultStore(path)
    assert again.finished() == {("t", 0)}  # the error row is not final: it will be retried
    again.close()


def test_torn_last_line_is_dropped_on_resume(tmp_path):
    path = tmp_path / "results.jsonl"
    good = ResultRow("t", 0, "passed").to_json() + "\n"
    path.write_text(good + '{"task_id": "t", "sample_ind')
    store = ResultStore(path)
    assert store.finished() == {("t", 0)}
    store.append(ResultRow("t", 1, "failed"))
    store.close()
    assert [r.sample_index for r in read_rows(path)] == [0, 1]


def test_a_verdict_delivered_twice_is_kept_once(tmp_path):
    """A cluster delivers at least once: a second verdict for a candidate is not written (the first stands),
    and a file that holds the same verdict twice still reads."""
    path = tmp_path / "results.jsonl"
    store = ResultStore(path)
    assert store.append(ResultRow("t", 0, "error", reason="infrastructure"))
    assert store.append(ResultRow("t", 0, "passed", attempt=2))
    assert not store.append(ResultRow("t", 0, "failed", attempt=3))
    store.close()
    assert [r.status for r in read_rows(path)] == ["error", "passed"]
    path.write_text(ResultRow("t", 0, "passed").to_json() + "\n" + ResultRow("t", 0, "passed", attempt=2).to_json() + "\n")
    assert {k: (r.status, r.attempt) for k, r in ResultStore(path).rows.items()} == {("t", 0): ("passed", 1)}


def test_two_verdicts_for_one_candidate_are_refused(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(ResultRow("t", 0, "passed").to_json() + "\n" + ResultRow("t", 0, "failed").to_json() + "\n")
    with pytest.raises(InputError, match="two verdicts"):
        ResultStore(path)


def test_minimal_rows_are_accepted_and_bad_status_named(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"task_id": "a", "sample_index": 0, "status": "passed"}\n'
                    '{"task_id": "a", "sample_index": 1, "status": "ok"}\n')
    with pytest.raises(InputError, match=r"r\.jsonl:2: field 'status' must be one of"):
        read_rows(path)


def test_rows_with_lone_surrogates_are_written_and_read_back(tmp_path):
    """Regression: a lone surrogate (from JSON input or a message) killed the run at its row, and every
    resume. The store writes it as its JSON escape, which reads back as the same string."""
    path = tmp_path / "results.jsonl"
    store = ResultStore(path)
    store.append(ResultRow("t\ud800", 0, "failed", reason="exception:ValueError", detail="bad \udfff",
                           sample={"note": "\ud83d"}))
    store.close()
    (row,) = read_rows(path)
    assert (row.task_id, row.detail, row.sample) == ("t\ud800", "bad \udfff", {"note": "\ud83d"})
    assert ResultStore(path).finished() == {("t\ud800", 0)}
