"""Every shipped problem set (one per format) run on the real engine: each candidate gets the label its
kind says (correct: passed; wrong, syntax: failed; loop: timed_out), through the channel its problem's
format chooses. This is also what `scripts/demo.sh --all` runs."""

import collections

import pytest

from harness.execution.evaluator import Evaluator
from harness.execution.jobs import Job
from harness.inputs.problems import load_problems
from harness.inputs.samples import SampleOptions, load_samples

from .conftest import ROOT
from .test_formats import SETS

EXPECTED = {"correct": "passed", "correct_trailing_space": "passed", "correct_lowercase": "passed",
            "correct_open_zero": "passed", "wrong": "failed", "syntax": "failed", "loop": "timed_out",
            # what APPS's grader does to these two (it runs stdin programs in its own process): rule apps
            "apps_main_guard": "failed", "apps_stdin_buffer": "failed"}


def _kind(sample):
    if "kinds" in sample.extra:   # LiveCodeBench rows: one kind per code_list entry
        return sample.extra["kinds"][sample.sample_index]
    return sample.extra.get("kind")   # the HumanEval demo set's rows say none


@pytest.fixture(scope="module")
def results():
    jobs = []
    for name, (problems_file, samples_file, _) in SETS.items():
        problems = load_problems(ROOT / "problems" / name / problems_file)
        options = SampleOptions(stop_tokens=(name == "multipl-e"))
        for s in load_samples(ROOT / "problems" / name / samples_file, problems, options=options):
            jobs.append(((name, s.task_id, s.sample_index, _kind(s)), Job(problems[s.task_id], s)))
    with Evaluator(timeout_s=2.0, workers=2) as ev:
        return dict(ev.stream_jobs(jobs))


@pytest.mark.parametrize("name", sorted(SETS))
def test_each_candidate_of_a_shipped_set_gets_the_label_of_its_kind(results, name):
    rows = {key: row for key, row in results.items() if key[0] == name}
    assert rows and (name == "demo" or all(key[3] in EXPECTED for key in rows))
    wrong = [(key, row.status, row.reason, row.detail) for key, row in rows.items()
             if key[3] in EXPECTED and row.status != EXPECTED[key[3]]]
    assert not wrong
    labels = collections.Counter(row.status for row in rows.values())
    assert labels["passed"] and labels["failed"] and labels["timed_out"] and not labels["error"]
    assert all(row.verdict_channel in ("proxy", "io", "in_process") for row in rows.values())


def test_apps_runs_a_stdin_program_as_its_grader_does(results):
    # Under APPS's grader the program is the body of code() in a module named tmp_sol (a __main__ block
    # does not run: nothing is printed) and sys.stdin is a StringIO (no .buffer); open(0) is a mock of
    # the input. A plain process passed the first two, which APPS's published numbers count as failures.
    rows = {key[3]: row for key, row in results.items() if key[0] == "apps" and key[1] == "APPS/5000"}
    assert (rows["apps_main_guard"].status, rows["apps_main_guard"].reason) == ("failed", "wrong_answer")
    assert (rows["apps_stdin_buffer"].status, rows["apps_stdin_buffer"].reason) == ("failed", "runtime_error")
    assert "AttributeError" in rows["apps_stdin_buffer"].detail
    assert rows["correct_open_zero"].status == rows["correct"].status == "passed"
    assert {row.channel_detail.get("runner") for row in rows.values()} == {"apps_stdin"}


def test_io_rows_name_their_rule_and_the_first_failing_test(results):
    io_rows = [row for key, row in results.items() if row.verdict_channel == "io"]
    assert {row.channel_detail.get("compare") for row in io_rows} >= {"apps", "codecontests", "livecodebench", "strict"}
    wrong = [row for row in io_rows if row.reason == "wrong_answer"]
    assert wrong and all(row.channel_detail["failed_test"] == int(row.detail.split(":")[0].split()[1]) for row in wrong)
