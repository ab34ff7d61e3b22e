"""The CLI's contract: exit codes, one-line errors, JSON shape. `passk score` needs no Docker."""

import json
import subprocess
import sys

import pytest

from harness.cli import main

from .conftest import ROOT, write_jsonl


def rows(task, n, c):
    return [{"task_id": task, "sample_index": i, "status": "passed" if i < c else "failed"} for i in range(n)]


def test_score_json_on_declared_labels(tmp_path, capsys):
    path = write_jsonl(tmp_path / "results.jsonl", rows("t", 10, 2))
    assert main(["score", str(path), "--k", "1,3,5", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pass_at_k_exact"] == {"1": "1/5", "3": "8/15", "5": "7/9"}
    assert abs(out["pass_at_k"]["3"] - 8 / 15) < 1e-15
    assert out["per_task"]["t"]["n"] == 10 and out["num_tasks"] == 1


def test_score_omits_k_beyond_the_smallest_n(tmp_path, capsys):
    path = write_jsonl(tmp_path / "results.jsonl", rows("a", 10, 2) + rows("b", 2, 0))
    assert main(["score", str(path), "--k", "1,5", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "5" not in out["pass_at_k"] and "5" in out["omitted_k"]


def test_score_refuses_while_errors_remain(tmp_path, capsys):
    data = rows("t", 3, 1) + [{"task_id": "t", "sample_index": 3, "status": "error"}]
    path = write_jsonl(tmp_path / "results.jsonl", data)
    assert main(["score", str(path), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["pass_at_k"] == {}
    assert main(["score", str(path), "--format", "json", "--exclude-errors", "--k", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["pass_at_k_exact"] == {"1": "1/3"}


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"task_id": "t", "sample_index": 0, "status": "passed"}\nnot json\n')
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "score", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and f"{path}:2:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["score", str(tmp_path / "r.jsonl"), "--k", "0"]) == 2
    assert main(["evaluate", "--problems", "x"]) == 2
    assert main(["evaluate", "--problems", "p", "--samples", "s", "--out", "o", "--timeout-s", "-1"]) == 2


def test_compare_prints_the_order_change(tmp_path, capsys):
    a = write_jsonl(tmp_path / "a.jsonl", rows("x", 10, 5) + rows("y", 10, 0))
    b = write_jsonl(tmp_path / "b.jsonl", rows("x", 10, 2) + rows("y", 10, 2))
    assert main(["compare", str(a), str(b), "--k", "1,3"]) == 0
    out = capsys.readouterr().out
    assert "ORDER CHANGES" in out and "11/24" in out and "8/15" in out


def test_report_writes_markdown_and_html(tmp_path, capsys):
    write_jsonl(tmp_path / "results.jsonl", rows("x", 4, 1) + rows("y", 4, 3))
    assert main(["report", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    assert "| 2 | 0.7500 |" in md  # the curve: pass@2 = (1/2 + 1) / 2
    assert page.startswith("<!doctype html>") and "<svg" in page
    assert "src=" not in page and "<link" not in page and "<script" not in page  # self-contained


def test_version_and_every_option_has_help(capsys):
    import pytest

    from harness import __version__
    from harness.cli import build_parser
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"passk {__version__}"
    parser = build_parser()
    for sub in parser._subparsers._group_actions[0].choices.values():
        for action in sub._actions:
            assert action.help, (sub.prog, action.dest)


def test_score_as_csv_and_markdown_for_papers(tmp_path, capsys):
    import csv
    import io
    path = write_jsonl(tmp_path / "r.jsonl", rows("x", 4, 1) + rows("y", 4, 3))
    assert main(["score", str(path), "--k", "1,2,8", "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["k"], r["exact"], r["of_tasks"]) for r in table] == [("1", "1/2", "1/2"), ("2", "3/4", "1.50/2"),
                                                                     ("8", "", "")]
    assert "needs n ≥ 8" in table[2]["note"]
    assert main(["score", str(path), "--k", "1", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| k | pass@k | exact | of tasks |") and "| 1 | 0.500000 | 1/2 | 1/2 |" in out


def test_a_run_that_is_mostly_syntax_errors_gets_a_hint(tmp_path, capsys):
    data = [{"task_id": "x", "sample_index": i, "status": "failed", "reason": "syntax_error"} for i in range(3)]
    path = write_jsonl(tmp_path / "r.jsonl", data + rows("y", 1, 1))
    assert main(["score", str(path), "--k", "1"]) == 0
    assert "hint: 3 of 4 candidates are syntax errors" in capsys.readouterr().out


def test_permanent_errors_are_named_and_not_retried(tmp_path, capsys):
    from harness.records.results import ResultRow, ResultStore
    store = ResultStore(tmp_path / "results.jsonl")
    store.append(ResultRow("x", 0, "error", reason="unsupported_test_argument"))
    store.append(ResultRow("x", 1, "error", reason="infrastructure"))
    store.append(ResultRow("x", 2, "passed", reason="tests_completed"))
    store.close()
    assert ResultStore(tmp_path / "results.jsonl").finished() == {("x", 0), ("x", 2)}  # the transient one reruns
    assert main(["score", str(tmp_path), "--k", "1"]) == 1
    err = capsys.readouterr().err
    assert "2 candidates have status 'error'" in err and "1 of them permanent" in err


@pytest.mark.docker
def test_evaluate_takes_the_transport_and_records_it(tmp_path, jsonl):
    problems = jsonl("p.jsonl", [{"task_id": "t/0", "prompt": "def f():\n",
                                  "test": "def check(candidate):\n    assert candidate() == 1\n", "entry_point": "f"}])
    samples = jsonl("s.jsonl", [{"task_id": "t/0", "completion": "    return 1\n"}])
    out = tmp_path / "run"
    assert main(["evaluate", "--problems", str(problems), "--samples", str(samples), "--out", str(out),
                 "--transport", "attach", "--workers", "1", "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sandbox"]["transport"] == "attach" and manifest["config"]["sandbox"]["transport"] == "attach"
    assert main(["evaluate", "--problems", str(problems), "--samples", str(samples), "--out", str(out),
                 "--transport", "tcp"]) == 2


@pytest.mark.parametrize("which", ["samples", "problems"])
def test_a_missing_input_file_is_one_line_and_exit_2_not_a_traceback(tmp_path, which):
    # the run hashed its inputs before checking they exist: a traceback and exit 1
    files = {"problems": str(ROOT / "problems" / "demo" / "problems.jsonl"),
             "samples": str(ROOT / "problems" / "demo" / "samples.jsonl")}
    files[which] = "nosuch.jsonl"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", files["problems"],
                           "--samples", files["samples"], "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "passk: nosuch.jsonl: no such file"
    assert not (tmp_path / "run").exists()
