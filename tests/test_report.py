"""report.md and report.html: what a candidate chose to call its exception is data, never structure."""

import json

from harness.scoring.report import write_report
from harness.records.results import ResultRow, ResultStore


def _run_dir(tmp_path, reason):
    store = ResultStore(tmp_path / "results.jsonl")
    store.append(ResultRow("T/0", 0, "passed", reason="tests_completed"))
    store.append(ResultRow("T/0", 1, "failed", reason=reason, detail="x"))
    store.append(ResultRow("T/1\n## pass@k", 0, "failed", reason="assertion"))
    store.close()
    (tmp_path / "score.json").write_text(json.dumps({"scoring": {"ks": [1, 5]}}))
    return tmp_path


FORGED = ("exception:X\n\n## pass@k\n\n| k | pass@k |\n|---|---|\n| 1 | 1.0000 |\n\x1b[2J\x00"
          "<script>alert(1)</script>")


def test_a_forged_pass_at_k_table_in_a_reason_stays_a_cell(tmp_path):
    """Regression: a class name holding a Markdown pass@k table added a second, fake pass@k section to
    report.md and report.html, the only one shown when the real pass@k was omitted."""
    md_path, html_path = write_report(_run_dir(tmp_path, FORGED))
    md, page = md_path.read_text(encoding="utf-8"), html_path.read_text(encoding="utf-8")
    assert md.count("\n## pass@k\n") == 1 and page.count("<h2>pass@k</h2>") == 1
    assert "omitted pass@5" in md  # the real pass@k is omitted here: the forged one must not stand in
    assert "<script" not in page and "&lt;script&gt;" in page
    assert "\x1b" not in md + page and "\x00" not in md + page
    # Every table row has the table's number of cells: no text became a row or a column.
    for table in md.split("\n\n"):
        lines = [line for line in table.splitlines() if line.startswith("|")]
        if lines:
            widths = {line.replace("\\|", "").count("|") for line in lines}
            assert len(widths) == 1, table


def test_each_task_opens_to_its_candidates_failures_first_with_their_code(tmp_path):
    from .conftest import write_jsonl
    problems = write_jsonl(tmp_path / "p.jsonl", [
        {"task_id": f"T/{i}", "prompt": "def f(x):\n", "test": "def check(c):\n    assert c(1) == 1\n", "entry_point": "f"}
        for i in range(2)])
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "T/0", "completion": "    return x\n"},
        {"task_id": "T/0", "completion": "    return '</pre><script>x</script>'\n"},
        {"task_id": "T/1", "completion": "    return x\n"}])
    from harness.inputs.samples import load_samples
    from harness.inputs.problems import load_problems
    sha = {(s.task_id, s.sample_index): s.sha256 for s in load_samples(samples, load_problems(problems))}
    run = tmp_path / "run"
    run.mkdir()
    store = ResultStore(run / "results.jsonl")
    store.append(ResultRow("T/0", 0, "passed", reason="tests_completed", candidate_sha256=sha[("T/0", 0)]))
    store.append(ResultRow("T/0", 1, "failed", reason="assertion", detail="test assertion failed at test line 2",
                           stdout_tail="printed\x1b[31m", candidate_sha256=sha[("T/0", 1)]))
    store.append(ResultRow("T/1", 0, "passed", reason="tests_completed", candidate_sha256=sha[("T/1", 0)]))
    store.close()
    (run / "manifest.json").write_text(json.dumps({"inputs": {"problems": {"path": str(problems)},
                                                             "samples": {"path": str(samples)}}}))
    md_path, html_path = write_report(run)
    page = html_path.read_text(encoding="utf-8")
    # worst task first, its failure first, with detail, output and code, all escaped
    assert page.index("<summary><code>T/0</code>") < page.index("<summary><code>T/1</code>")
    t0 = page[page.index("<summary><code>T/0</code>"):page.index("<summary><code>T/1</code>")]
    assert t0.index("#1 <strong>failed") < t0.index("#0 <strong>passed")
    assert "return &#x27;&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;&#x27;" in t0 and "<script>" not in page
    assert "printed\\x1b[31m" in t0 and "\x1b" not in page
    assert "failed assertion" in page and "T/0 #1: test assertion failed at test line 2" in page
    assert "<details" not in md_path.read_text(encoding="utf-8")


def test_a_repository_tasks_drill_down_lists_its_tests_failing_first():
    from harness.records.results import ResultRow
    from harness.scoring.report import Doc, _judged
    row = ResultRow("i-1", 0, "failed", "tests_failed", verdict_channel="repo",
                    tests=[{"name": "t.py::ok", "list": "PASS_TO_PASS", "status": "PASSED"},
                           {"name": "t.py::new", "list": "FAIL_TO_PASS", "status": "FAILED"}])
    doc = Doc()
    _judged(doc, row)
    (kind, headers, rows), = doc.blocks
    assert headers == ["test", "list", "status"] and rows[0] == ["t.py::new", "FAIL_TO_PASS", "FAILED"]
