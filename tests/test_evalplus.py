"""EvalPlus's HumanEval+ and MBPP+: reading its files, its comparison rule, the limits it derives from the
ground truth, base and plus scores (pure, no Docker); and on the real engine, the shipped sets' every
candidate, a ground truth that cannot be judged, resume, reproduce and the audit's relaxed limits."""

import gzip
import json
import random

import pytest

from harness.cli import main
from harness.inputs.config import EvalPlusSettings
from harness.core.errors import InputError
from harness.inputs.problems import load_problems
from harness.records.results import ResultRow
from harness.scoring.score import score_rows

from .conftest import ROOT, write_jsonl

HEP = ROOT / "problems" / "humanevalplus"
MBPPP = ROOT / "problems" / "mbppplus"


def record(**over):
    base = {"task_id": "HumanEval/0", "prompt": "def f(x):\n", "entry_point": "f", "canonical_solution": "    return x\n",
            "contract": "", "base_input": [[1]], "plus_input": [[2], [3]], "atol": 0}
    base.update(over)
    return base


# ------------------------------------------------------------------------------------------ reading
def test_an_evalplus_file_is_read_as_evalplus_never_as_humaneval_or_mbpp(tmp_path):
    he = write_jsonl(tmp_path / "he.jsonl", [record(test="def check(candidate):\n    assert candidate(1) == 1\n")])
    p = load_problems(he)["HumanEval/0"]
    assert p.format == "humaneval+" and p.runner == "evalplus" and p.channel == "proxy"
    assert p.differential.base == ((1,),) and p.differential.plus == ((2,), (3,))
    mb = write_jsonl(tmp_path / "mb.jsonl", [record(task_id="Mbpp/3", assertion="assert f(1) == 1\n")])
    assert load_problems(mb)["Mbpp/3"].format == "mbpp+"
    for forced in ("humaneval", "mbpp"):   # before: read as plain HumanEval, the plus inputs lost in silence
        with pytest.raises(InputError, match=r"an EvalPlus record .* read it as humaneval\+"):
            load_problems(he, forced)
    # --channel in_process would move the comparison into the candidate's process: it stays proxy
    assert load_problems(he, channel="in_process")["HumanEval/0"].channel == "proxy"


def test_gzip_and_the_shipped_sets_load(tmp_path):
    path = tmp_path / "HumanEvalPlus-Mini.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(record()) + "\n")
    assert list(load_problems(path)) == ["HumanEval/0"]
    assert len(load_problems(HEP / "problems.jsonl")) == 8 and len(load_problems(MBPPP / "problems.jsonl")) == 11


@pytest.mark.parametrize("field, value, message", [
    ("plus_input", None, "missing field 'plus_input'"),
    ("base_input", "x", "field 'base_input' must be a list"),
    ("base_input", [1], "field 'base_input': input 0 must be a list of arguments"),
    ("atol", -1, "field 'atol' must be a number ≥ 0"),
    ("entry_point", "not ok", "is not a Python identifier"),
    ("canonical_solution", None, "missing field 'canonical_solution'"),
])
def test_a_bad_row_names_file_line_and_field_and_exits_2(tmp_path, capsys, field, value, message):
    rows = [record(), record(task_id="HumanEval/1")]
    if value is None:
        del rows[1][field]
    else:
        rows[1][field] = value
    path = write_jsonl(tmp_path / "p.jsonl", rows)
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": "    return x\n"}])
    fmt = ["--format", "humaneval+"] if field == "plus_input" else []
    assert main(["evaluate", "--problems", str(path), "--samples", str(samples), "--out", str(tmp_path / "o"), *fmt]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]   # (after "building image", the first time)
    assert err.startswith(f"passk: {path}:2: ") and message in err


def test_mbpp_plus_inputs_take_the_types_evalplus_gives_them(tmp_path):
    rows = [record(task_id="Mbpp/2", entry_point="similar_elements", base_input=[[[3, 4], [4, 5]]], plus_input=[]),
            record(task_id="Mbpp/115", entry_point="empty_dit", base_input=[[[[1, 2], []]]], plus_input=[]),
            record(task_id="Mbpp/252", entry_point="convert", base_input=[["(1+2j)"]], plus_input=[]),
            record(task_id="Mbpp/124", entry_point="angle_complex", base_input=[["0", "1j"]], plus_input=[]),
            record(task_id="Mbpp/580", entry_point="f", base_input=[[[1, [2, 3]]]], plus_input=[]),
            record(task_id="Mbpp/9", entry_point="g", base_input=[[[1, 2]]], plus_input=[])]
    got = {t: p.differential.base[0] for t, p in load_problems(write_jsonl(tmp_path / "m.jsonl", rows)).items()}
    assert got["Mbpp/2"] == ((3, 4), (4, 5)) and type(got["Mbpp/2"][0]) is tuple
    assert got["Mbpp/115"] == ([{1, 2}, {}],) and type(got["Mbpp/115"][0][1]) is dict   # EvalPlus's empty *dict*
    assert got["Mbpp/252"] == (1 + 2j,) and got["Mbpp/124"] == (0.0, 1j)
    assert got["Mbpp/580"] == ((1, (2, 3)),)
    assert got["Mbpp/9"] == ([1, 2],) and type(got["Mbpp/9"][0]) is list   # a task EvalPlus does not convert
    oracles = {p.entry_point: p.differential.oracle for p in load_problems(MBPPP / "problems.jsonl").values()}
    assert oracles == {"similar_elements": "set_equal", "is_not_prime": "equal", "max_difference": "equal",
                       "empty_dit": "equal", "angle_complex": "equal", "are_equivalent": "always", "convert": "equal",
                       "sum_div": "or_zero", "digit_distance_nums": "digit_distance", "surface_Area": "surface_area",
                       "check_str": "not_none"}


# ------------------------------------------------------------------------------------ the comparison
@pytest.fixture(scope="module")
def rule(box):
    from harness.containers.box.channels import differential
    return differential


@pytest.mark.parametrize("oracle, dataset, out, exp, atol, args, ok, atol_after", [
    ("equal", "humaneval", 3, 3, 0.0, (), True, 0.0),
    ("equal", "humaneval", [1, 2], (1, 2), 0.0, (), False, 0.0),          # a list is not a tuple
    ("equal", "humaneval", 0.1 + 0.2, 0.3, 0.0, (), True, 1e-6),          # a float expected: atol 1e-6 from here on
    ("equal", "humaneval", 1, 1.0000001, 0.0, (), False, 1e-6),           # ... and the types must be the same
    ("equal", "humaneval", [1.0, 2.0000001], [1.0, 2.0], 0.0, (), True, 1e-6),
    ("equal", "humaneval", [1.0, 2.1], [1.0, 2.0], 0.0, (), False, 1e-6),
    ("equal", "humaneval", [1.0], [1.0, 2.0], 0.0, (), False, 1e-6),      # lengths first
    ("equal", "humaneval", float("nan"), float("nan"), 0.0, (), False, 1e-6),
    ("equal", "humaneval", float("inf"), float("inf"), 0.0, (), True, 1e-6),
    ("equal", "humaneval", 5, 6, 2.0, (), True, 2.0),                     # a task's own atol, ints too
    ("equal", "humaneval", "a", "b", 1.0, (), False, 1.0),                # allclose on text raises: a failure
    ("find_zero", "humaneval", -0.5, 0.0, 1e-6, ([1, 2],), True, 1e-6),   # |poly(xs, x)| <= atol
    ("find_zero", "humaneval", 0.5, 0.0, 1e-6, ([1, 2],), False, 1e-6),
    ("find_zero", "mbpp", -0.5, 9.0, 1e-6, ([1, 2],), False, 1e-6),       # only HumanEval's
    ("set_equal", "mbpp", (5, 4), (4, 5), 0.0, (), True, 0.0),
    ("set_equal", "mbpp", [4, 5, 5], (4, 5), 0.0, (), True, 0.0),
    ("set_equal", "humaneval", (5, 4), (4, 5), 0.0, (), False, 0.0),      # MBPP+'s special cases only there
    ("not_none", "mbpp", "match", True, 0.0, (), True, 0.0),
    ("not_none", "mbpp", None, True, 0.0, (), False, 0.0),
    ("not_none", "mbpp", False, True, 0.0, (), False, 0.0),               # a bool is compared as a bool
    ("always", "mbpp", "anything", 1, 0.0, (), True, 0.0),
    ("or_zero", "mbpp", 0, 7, 0.0, (), True, 0.0),
    ("surface_area", "mbpp", 35, 33, 0.0, (3, 4), True, 0.0),             # its own oracle: round(34.63)
    ("surface_area", "mbpp", 34, 33, 0.0, (3, 4), False, 0.0),
    ("digit_distance", "mbpp", 3, 1, 0.0, (123, 256), False, 0.0),
    ("digit_distance", "mbpp", 7, 1, 0.0, (123, 256), True, 0.0),     # 1 + 3 + 3, digit by digit
])
def test_each_input_is_judged_by_evalplus_rule(rule, oracle, dataset, out, exp, atol, args, ok, atol_after):
    assert rule.matches(oracle, dataset, out, exp, atol, args) == (ok, atol_after)


def test_a_candidate_object_held_by_handle_is_equal_only_to_itself(rule):
    from harness.containers.box.channels.proxy import Handle, TestNamespace
    h = Handle(TestNamespace(None), 0, "Match", False)
    assert rule.matches("not_none", "mbpp", h, True, 0.0, ()) == (True, 0.0)   # not None: what MBPP+ checks there
    assert rule.matches("equal", "humaneval", h, 5, 0.0, ())[0] is False      # its own __eq__ never runs


def _values(rng, depth=0):
    kind = rng.randrange(7 if depth < 2 else 5)
    if kind == 0:
        return rng.choice([0.0, 1.5, -2.25, 1e-9, 1e12, float("inf"), float("-inf"), float("nan")]) * rng.choice([1, 1 + 1e-8, 1.01])
    if kind == 1:
        return rng.randint(-5, 5)
    if kind == 2:
        return rng.choice([True, False])
    if kind == 3:
        return complex(rng.uniform(-2, 2), rng.uniform(-2, 2))
    if kind == 4:
        return rng.choice(["a", None, 2 ** 70])
    n = rng.randrange(0, 3)
    shape = [_values(rng, depth + 1) for _ in range(n)]
    return shape if rng.random() < 0.5 else tuple(shape)


def test_allclose_is_numpys_on_plain_data(rule):
    np = pytest.importorskip("numpy")
    rng = random.Random(7)
    checked = 0
    for _ in range(3000):
        a = _values(rng)
        b = _values(rng) if rng.random() < 0.3 else (a if rng.random() < 0.5 else _values(rng))
        atol = rng.choice([0.0, 1e-6, 0.5])
        try:
            want = bool(np.allclose(a, b, rtol=1e-07, atol=atol))
        except Exception:
            want = "raises"
        try:
            got = rule.allclose(a, b, rtol=1e-07, atol=atol)
        except (TypeError, ValueError, OverflowError):
            got = "raises"
        assert got == want, (a, b, atol)
        checked += want != "raises"
    assert checked > 300


# ---------------------------------------------------------------------------- limits and scores
def test_limits_are_evalplus_formula():
    from harness.execution.groundtruth import input_limits, phase_cap
    ev = EvalPlusSettings()
    assert input_limits([0.001, 0.3, 2.0], ev) == [1.0, pytest.approx(1.2), 8.0]
    assert phase_cap([1.0] * 5, ev) == 7.0                    # min(60, 5) + 2
    assert phase_cap([1.0] * 500, ev) == 62.0                 # min(60, 500) + 2
    assert input_limits([0.001], EvalPlusSettings(min_time_limit_s=0.05, gt_time_limit_factor=2), factor=2) == [0.1]


def _row(task, i, status, base, reason="tests_completed"):
    return ResultRow(task, i, status, reason=reason, base_status=base)


def test_base_and_plus_are_scored_side_by_side(tmp_path, capsys):
    rows = [_row("a", 0, "passed", "passed"), _row("a", 1, "failed", "passed", "wrong_answer"),
            _row("b", 0, "failed", "failed", "wrong_answer"), _row("b", 1, "timed_out", "passed", "wall_time_limit")]
    score = score_rows(rows, ks=(1, 2))
    assert score["pass_at_k_exact"] == {"1": "1/4", "2": "1/2"}
    assert score["base"]["pass_at_k_exact"] == {"1": "3/4", "2": "1"}
    assert score["base"]["labels"] == {"passed": 3, "failed": 1, "timed_out": 0}
    path = write_jsonl(tmp_path / "r.jsonl", [{"task_id": r.task_id, "sample_index": r.sample_index, "status": r.status,
                                              "base_status": r.base_status} for r in rows])
    assert main(["score", str(path), "--k", "1", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(",score") and lines[1].startswith("1,0.250000,1/4") and lines[1].endswith(",plus")
    assert lines[2].startswith("1,0.750000,3/4") and lines[2].endswith(",base")
    assert main(["score", str(path), "--k", "1"]) == 0
    table = capsys.readouterr().out
    assert "plus" in table and "base" in table and "3/4" in table
    # rows of another format carry no base verdict and get no base score
    assert "base" not in score_rows([ResultRow("a", 0, "passed")], ks=(1,))


def test_compare_puts_a_humaneval_run_beside_humaneval_plus_base_and_plus(tmp_path, capsys):
    plain = write_jsonl(tmp_path / "he.jsonl", [{"task_id": "t", "sample_index": i, "status": s}
                                                for i, s in enumerate(["passed", "passed", "failed"])])
    plus = write_jsonl(tmp_path / "hep.jsonl", [{"task_id": "t", "sample_index": i, "status": s, "base_status": b}
                                                for i, (s, b) in enumerate([("passed", "passed"), ("failed", "passed"),
                                                                            ("failed", "failed")])])
    assert main(["compare", str(plain), str(plus), "--format", "json", "--k", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == [str(plain), str(plus), f"{plus} [base]"]
    assert out["pass_at_k"]["1"]["exact"] == {str(plain): "2/3", str(plus): "1/3", f"{plus} [base]": "2/3"}


# --------------------------------------------------------------------------- on the real engine
# kind -> (status, reason, base_status): what EvalPlus's rule gives each of the shipped sets' candidates
# (tests/test_evalplus.py's peer check is scripts/peers/evalplus_peer.py: EvalPlus itself agrees on every one
# but the lying __eq__ objects, which it passes, and find_zero, which it never passes).
KINDS = {
    "correct": ("passed", "tests_completed", "passed"),
    "correct_float_noise": ("passed", "tests_completed", "passed"),      # within EvalPlus's 1e-6 on floats
    "correct_newton": ("passed", "tests_completed", "passed"),           # find_zero judged by |poly(x)| <= atol
    "correct_mutating": ("passed", "tests_completed", "passed"),         # mutates its input: judged on the output
    "correct_zip": ("passed", "tests_completed", "passed"),
    "prints": ("passed", "tests_completed", "passed"),
    "plus_wrong": ("failed", "wrong_answer", "passed"),
    "base_wrong": ("failed", "wrong_answer", "failed"),
    "lying_eq": ("failed", "wrong_answer", "failed"),                    # an int subclass whose __eq__ lies
    "lying_object": ("failed", "wrong_answer", "failed"),                # an object whose __eq__ lies
    "syntax": ("failed", "syntax_error", "failed"),
    "loop_at_import": ("timed_out", "wall_time_limit", "timed_out"),    # EvalPlus's per-check cap
    "raises": ("failed", "exception:", "failed"),
    "exits": ("failed", "exited_early", "failed"),
    "wrong_type": ("failed", "wrong_answer", "failed"),
    "wrong_container": ("failed", "wrong_answer", "failed"),
    "lists_not_tuples": ("failed", "wrong_answer", "failed"),
    "slow": ("failed", "input_time_limit", "passed"),                    # past the ground-truth-relative limit
    "sleeps_once": ("failed", "input_time_limit", "passed"),
    "correct_other_order": ("passed", "tests_completed", "passed"),      # MBPP+ compares these as sets
    "correct_list": ("passed", "tests_completed", "passed"),
    "wrong": ("failed", "wrong_answer", "failed"),
    "needs_tuples": ("passed", "tests_completed", "passed"),             # MBPP+'s inputs as tuples
    "needs_sets_and_dicts": ("passed", "tests_completed", "passed"),
    "wrong_but_always_accepted": ("passed", "tests_completed", "passed"),   # Mbpp/164: EvalPlus accepts anything
    "correct_noise": ("passed", "tests_completed", "passed"),
    "list_not_tuple": ("failed", "wrong_answer", "failed"),
    "zero_accepted": ("passed", "tests_completed", "passed"),            # Mbpp/295 accepts 0
    "padding_oracle": ("passed", "tests_completed", "passed"),           # Mbpp/558's oracle
    "slant_oracle": ("passed", "tests_completed", "passed"),             # Mbpp/581's oracle
    "bool": ("passed", "tests_completed", "passed"),                     # check_str: not None, or the bool
    "wrong_bool": ("failed", "wrong_answer", "failed"),
    "match_object_wrong": ("failed", "wrong_answer", "failed"),
}


def _kinds(samples_path):
    counts, out = {}, {}
    for line in open(samples_path):
        obj = json.loads(line)
        t = obj["task_id"] if str(obj["task_id"]).startswith(("PlusDemo", "Mbpp")) else f"Mbpp/{obj['task_id']}"
        out[(t, counts.get(t, 0))] = obj["kind"]
        counts[t] = counts.get(t, 0) + 1
    return out


def _evaluate(problems, samples, out, **limits):
    from harness.inputs.config import Limits, RunConfig, SandboxSettings
    from harness.run.runner import evaluate
    cfg = RunConfig(problems=str(problems), samples=str(samples), out=str(out), k=(1,),
                    limits=Limits(**limits), sandbox=SandboxSettings(workers=2))
    return evaluate(cfg, progress="quiet")


@pytest.fixture(scope="module")
def shipped_runs(tmp_path_factory):
    out = {}
    for name, where in (("humanevalplus", HEP), ("mbppplus", MBPPP)):
        run = tmp_path_factory.mktemp(name) / "run"
        _evaluate(where / "problems.jsonl", where / "samples.jsonl", run)
        out[name] = run
    return out


@pytest.mark.docker
@pytest.mark.parametrize("name", ["humanevalplus", "mbppplus"])
def test_each_shipped_candidate_gets_evalplus_verdicts_base_and_plus(shipped_runs, name):
    from harness.records.results import read_rows
    run = shipped_runs[name]
    kinds = _kinds((HEP if name == "humanevalplus" else MBPPP) / "samples.jsonl")
    rows = read_rows(run / "results.jsonl")
    assert len(rows) == len(kinds)
    wrong = []
    for r in rows:
        status, reason, base = KINDS[kinds[(r.task_id, r.sample_index)]]
        if (r.status, r.base_status) != (status, base) or not r.reason.startswith(reason):
            wrong.append((r.task_id, r.sample_index, kinds[(r.task_id, r.sample_index)], r.status, r.reason,
                          r.base_status, r.detail))
        assert r.verdict_channel == "proxy" and r.channel_detail["runner"] == "evalplus"
        ep = r.limits["evalplus"]
        assert ep["rule"] == "evalplus-0.3.1" and ep["min_time_limit_s"] == 1.0 and ep["gt_time_limit_factor"] == 4.0
        assert r.limits["timeout_s"] == pytest.approx(sum(ep[ph]["cap_s"] for ph in ("base", "plus") if ep[ph]["inputs"]))
    assert not wrong
    score = json.loads((run / "score.json").read_text())
    assert score["base"]["pass_at_k"]["1"] >= score["pass_at_k"]["1"] > 0
    manifest = json.loads((run / "manifest.json").read_text())
    gt = manifest["ground_truth"]
    assert gt["rule"] == "evalplus-0.3.1" and gt["tasks"] == len({r.task_id for r in rows})
    assert (run / "groundtruth.json.gz").exists()
    assert all(r.limits["evalplus"]["ground_truth_sha256"] == gt["sha256"] for r in rows)


@pytest.mark.docker
def test_the_failing_input_and_its_limit_are_in_the_row(shipped_runs):
    from harness.records.results import read_rows
    rows = {(r.task_id, r.sample_index): r for r in read_rows(shipped_runs["humanevalplus"] / "results.jsonl")}
    kinds = _kinds(HEP / "samples.jsonl")
    by_kind = {(t, kinds[(t, i)]): r for (t, i), r in rows.items()}
    slow = by_kind[("PlusDemo/4", "sleeps_once")]
    assert slow.channel_detail["failed_phase"] == "plus" and slow.channel_detail["failed_input"] == 5
    assert slow.channel_detail["input_limit_s"] == 1.0 and slow.channel_detail["input_s"] > 1.0
    assert slow.channel_detail["rerun"] == "plus"   # the batch could not prove its inputs in time: one by one
    wrong = by_kind[("PlusDemo/0", "plus_wrong")]
    assert "plus input 0: (1000000000000, 1): expected 1000000000001, got 0" in wrong.detail
    lying = by_kind[("PlusDemo/0", "lying_object")]
    assert "<candidate Anything object>" in lying.detail


def _problem_file(tmp_path, canonical, plus=((1,), (0,), (2,))):
    rows = [record(task_id="HumanEval/7", prompt="def f(x):\n", canonical_solution=canonical, base_input=[[1]],
                   plus_input=[list(p) for p in plus])]
    return write_jsonl(tmp_path / "bad.jsonl", [record(), *rows])


@pytest.mark.docker
@pytest.mark.parametrize("canonical, why", [
    ("    return 1 // x\n", "plus input 1 .*ZeroDivisionError"),
    ("    return object()\n", "not plain data"),
])
def test_a_ground_truth_that_cannot_be_judged_stops_the_run_naming_it(tmp_path, capsys, canonical, why):
    problems = _problem_file(tmp_path, canonical)
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": "    return x\n"}])
    assert main(["evaluate", "--problems", str(problems), "--samples", str(samples), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"passk: {problems}:2: the ground truth of task 'HumanEval/7'")
    import re
    assert re.search(why, err), err
    assert not (tmp_path / "o").exists()   # nothing written: the run never started


@pytest.mark.docker
def test_resume_keeps_the_ground_truth_and_refuses_a_changed_one(tmp_path, capsys):
    from harness.records.results import read_rows
    samples = write_jsonl(tmp_path / "s.jsonl", [json.loads(line) for line in open(HEP / "samples.jsonl")][:10])
    out = tmp_path / "run"
    _evaluate(HEP / "problems.jsonl", samples, out)
    first = json.loads((out / "manifest.json").read_text())["ground_truth"]
    more = write_jsonl(tmp_path / "s.jsonl", [json.loads(line) for line in open(HEP / "samples.jsonl")][:10])
    assert more == samples
    # resumed: nothing rerun, the same ground truth
    outcome = _evaluate(HEP / "problems.jsonl", samples, out)
    assert outcome.ran == 0 and outcome.reused == 10
    assert json.loads((out / "manifest.json").read_text())["ground_truth"]["sha256"] == first["sha256"]
    # a ground truth that is not the one the run was judged by is refused, not used
    from harness.execution import groundtruth as gt
    truth = gt.read(out / "groundtruth.json.gz")
    task = next(iter(truth.tasks))
    truth.tasks[task]["base"]["times"][0] += 1.0
    gt.write(out / "groundtruth.json.gz", truth)
    (out / "results.jsonl").write_text("".join(line for line in open(out / "results.jsonl").readlines()[:5]))
    with pytest.raises(InputError, match="the ground truth this run was judged by"):
        _evaluate(HEP / "problems.jsonl", samples, out)
    assert len(read_rows(out / "results.jsonl")) == 5   # nothing lost either


@pytest.mark.docker
def test_reproduce_judges_by_the_original_ground_truth(shipped_runs, tmp_path):
    from harness.run.reproduce import reproduce
    run = shipped_runs["mbppplus"]
    result = reproduce(run, tmp_path / "again")
    assert result["identical"] == result["total"], result["changed"]
    before = json.loads((run / "manifest.json").read_text())["ground_truth"]
    after = json.loads((tmp_path / "again" / "manifest.json").read_text())["ground_truth"]
    assert after["sha256"] == before["sha256"]


@pytest.mark.docker
def test_audit_reruns_what_a_ground_truth_limit_decided_at_relaxed_factors(shipped_runs, tmp_path):
    import shutil
    from harness.run.audit import audit
    run = tmp_path / "run"
    shutil.copytree(shipped_runs["humanevalplus"], run)
    result = audit(run, factors=(1.0, 2.0))
    # the limits decided the two slow candidates and the one looping at import
    assert result["limit_decided"] == 3
    by_factor = {rel["factor"]: rel for rel in result["relaxed"]}
    assert by_factor[1.0]["plus_flips"] == 0                            # the same limits: the same verdicts
    flipped = {(f["task_id"], f["to"]) for f in by_factor[2.0]["flips"]}
    assert flipped == {("PlusDemo/4", "passed")}                         # 1.6 s of sleep on a 1 s limit, x2 = 2 s
    assert by_factor[2.0]["plus_flips"] == 1 and by_factor[2.0]["base_flips"] == 0
    assert result["margins"]["passed"] > 0 and result["margins"]["max"] < 1.0


@pytest.mark.docker
def test_the_api_measures_the_ground_truth_itself(tmp_path):
    from harness.execution.evaluator import Evaluator
    problems = load_problems(HEP / "problems.jsonl")
    p = problems["PlusDemo/0"]
    with Evaluator(workers=1) as ev:
        rows = ev.evaluate([(p, p.prompt + "    return a + b\n"), (p, p.prompt + "    return a * b if a > 99 else a + b\n")])
    assert [(r.status, r.base_status) for r in rows] == [("passed", "passed"), ("failed", "passed")]


FORGER = """import os, socket, struct

def add(a, b):
    if a == 10**12:   # the first plus input: answers to the calls not yet made, written on the tests' channel
        chan = socket.socket(fileno=os.dup(3))
        for value in (10**12 + 1, -15, 1111111110, 2**61, -5, 100):
            data = ('{"ok": %d}' % value).encode()
            chan.sendall(struct.pack(">I", len(data)) + data)
    return a + b
"""


@pytest.mark.docker
def test_answers_sent_ahead_of_their_calls_are_not_answers(tmp_path):
    from harness.execution.evaluator import Evaluator
    p = load_problems(HEP / "problems.jsonl")["PlusDemo/0"]
    with Evaluator(workers=1) as ev:
        row = ev.evaluate([(p, FORGER)])[0]
    assert row.status == "failed" and row.reason == "protocol_violation", (row.reason, row.detail)


def test_samples_as_evalplus_writes_them(tmp_path):
    from harness.inputs.samples import SampleOptions, load_samples
    problems = load_problems(HEP / "problems.jsonl")
    # its codegen's directory: DIR/<task id, / as _>/<n>.py, each a whole program, in numeric order
    for task in ("PlusDemo_0", "PlusDemo_1"):
        (tmp_path / "d" / task).mkdir(parents=True)
        for n in (0, 1, 10, 2):
            (tmp_path / "d" / task / f"{n}.py").write_text(f"# sample {n}\n")
    samples = load_samples(tmp_path / "d", problems)
    assert [(s.task_id, s.sample_index, s.program) for s in samples if s.task_id == "PlusDemo/0"] == [
        ("PlusDemo/0", i, f"# sample {n}\n") for i, n in enumerate((0, 1, 2, 10))]
    # its samples.jsonl: `solution` (whole programs) or `completion` (after the prompt)
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "PlusDemo/0", "solution": "def add(a, b):\n    return a + b\n"},
                                              {"task_id": "PlusDemo/0", "completion": "    return a + b\n"}])
    s = load_samples(path, problems)
    assert s[0].program == "def add(a, b):\n    return a + b\n" and s[1].program == problems["PlusDemo/0"].prompt + "    return a + b\n"
    # a chat model's raw answer (its .raw.jsonl): the code of the last fenced block, as --extract-code takes it
    raw = write_jsonl(tmp_path / "raw.jsonl", [{"task_id": "PlusDemo/0", "solution": "Sure:\n```python\ndef add(a, b):\n"
                                                "    return a + b\n```\nDone."}])
    s = load_samples(raw, problems, options=SampleOptions(extract_code=True))
    assert s[0].program == "def add(a, b):\n    return a + b\n" and "Sure" in s[0].raw


def test_inputs_cross_as_the_codec_s_data_and_come_back_equal_with_their_types():
    from harness.containers.box.codec import Decoder
    from harness.execution.groundtruth import encode_args
    shared = [1, 2]
    for args in [(1, 2.5, "x"), ((1, 2), {3, 4}, {"a": [None]}), (1 + 2j, 2 ** 70, [shared, shared]), ({}, [], ())]:
        dec = Decoder()
        back = tuple(dec.dec(a) for a in json.loads(encode_args(args)))
        assert back == args and [type(a) for a in back] == [type(a) for a in args]
        if args[2] == [shared, shared]:
            assert back[2][0] is back[2][1]   # aliasing crosses as aliasing


def test_the_report_shows_base_and_plus_side_by_side(tmp_path):
    from harness.scoring.report import write_report
    rows = [{"task_id": t, "sample_index": i, "status": s, "base_status": b, "reason": "tests_completed"
             if s == "passed" else "wrong_answer", "limits": {"timeout_s": 5.0}}
            for t, i, s, b in [("a", 0, "passed", "passed"), ("a", 1, "failed", "passed"), ("b", 0, "failed", "failed"),
                               ("b", 1, "passed", "passed")]]
    write_jsonl(tmp_path / "results.jsonl", rows)
    md, html = write_report(tmp_path)
    text = md.read_text()
    assert "| k | base pass@k | plus pass@k |" in text and "| 1 | 0.7500 | 0.5000 |" in text
    assert "| task | n | c (plus) | c (base) |" in text
    assert "base pass@k" in html.read_text() and "base (dashed)" in html.read_text()
