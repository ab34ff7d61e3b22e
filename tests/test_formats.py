"""Problem formats and sample layouts: detection, loading, refusals. Pure: no Docker.
The shipped sets under problems/ are loaded here; tests/test_sets.py runs them."""

import base64
import gzip
import json
import pickle
import zlib
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.errors import InputError
from harness.inputs.formats.competitive import decode_private_tests
from harness.inputs.problems import load_problems
from harness.inputs.samples import SampleOptions, extract_code, load_samples

from .conftest import ROOT

SHARED = ROOT.parent / "shared" / "data"
SETS = {  # set -> (problems, samples, format)
    "demo": ("problems.jsonl", "samples.jsonl", "humaneval"),
    "mbpp": ("problems.jsonl", "samples.jsonl", "mbpp"),
    "multipl-e": ("problems.jsonl", "samples.jsonl", "multipl-e"),
    "apps": ("problems.jsonl", "samples.jsonl", "apps"),
    "codecontests": ("problems.jsonl", "samples.jsonl", "codecontests"),
    "livecodebench": ("problems.jsonl", "samples.json", "livecodebench"),
    "bigcodebench": ("problems.jsonl", "samples.jsonl", "bigcodebench"),
    "native": ("problems", "samples", "native"),
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_each_shipped_set_is_read_as_its_format(name):
    problems_file, samples_file, fmt = SETS[name]
    problems = load_problems(ROOT / "problems" / name / problems_file)
    assert 10 <= len(problems) <= 20
    assert {p.format for p in problems.values()} == {fmt}
    samples = load_samples(ROOT / "problems" / name / samples_file, problems)
    assert {s.task_id for s in samples} == set(problems)   # every task has candidates
    if name not in ("livecodebench", "multipl-e"):   # their files carry no solutions
        assert all(p.canonical_program for p in problems.values()), "a reference solution per task"


def test_channels_follow_the_documented_rule():
    mbpp = load_problems(ROOT / "problems" / "mbpp" / "problems.jsonl")
    # proxy unless test_setup_code defines something the tests pass to the candidate
    assert {p.channel for p in mbpp.values() if not p.notes.get("setup")} >= {"proxy"}
    assert any(p.channel == "in_process" for p in mbpp.values())
    apps = load_problems(ROOT / "problems" / "apps" / "problems.jsonl")
    assert {p.channel for p in apps.values()} == {"io", "proxy"}   # stdin programs; fn_name calls
    assert {p.compare for p in apps.values() if p.channel == "io"} == {"apps"}
    bcb = load_problems(ROOT / "problems" / "bigcodebench" / "problems.jsonl")
    assert {(p.channel, p.runner) for p in bcb.values()} == {("in_process", "bigcodebench")}
    forced = load_problems(ROOT / "problems" / "apps" / "problems.jsonl", channel="in_process")
    assert {p.channel for p in forced.values()} == {"io", "in_process"}   # io stays io


@pytest.mark.skipif(not (SHARED / "mbpp").exists(), reason="shared MBPP data not present")
def test_both_mbpp_releases_load_unchanged():
    original = load_problems(SHARED / "mbpp" / "mbpp.jsonl")
    sanitized = load_problems(SHARED / "mbpp" / "sanitized-mbpp.json")
    assert len(original) == 974 and len(sanitized) == 427
    assert {p.format for p in original.values()} == {"mbpp"} == {p.format for p in sanitized.values()}
    # the tasks whose setup code defines what the tests use run in process; the rest by proxy
    in_process = [t for t, p in original.items() if p.channel == "in_process"]
    assert 0 < len(in_process) < 20 and original["Mbpp/11"].channel == "proxy"
    assert original["Mbpp/11"].aliases == ("11",)


@pytest.mark.skipif(not (SHARED / "multipl-e").exists(), reason="shared MultiPL-E data not present")
def test_multipl_e_loads_every_language_passk_runs_and_wraps_every_test(tmp_path):
    files = sorted((SHARED / "multipl-e").glob("*.jsonl"))
    py = [f for f in files if "-py" in f.name]
    assert py, files
    problems = load_problems(py[0])
    assert len(problems) > 300 and {p.language for p in problems.values()} == {"python"}
    assert all(p.stop_tokens for p in problems.values())
    seen = set()
    for f in files:
        if f in py:
            continue
        problems = load_problems(f)   # every problem's tests are wrapped with the completion marker here
        (language,) = {p.language for p in problems.values()}
        assert len(problems) > 100 and {p.channel for p in problems.values()} == {"in_process"}
        seen.add(language)
    assert seen == {"cpp", "rust", "go", "java", "javascript", "typescript"}


def test_multipl_e_refuses_a_language_passk_does_not_run_and_a_file_that_mixes_languages(jsonl):
    row = {"name": "t", "prompt": "x", "tests": "y", "stop_tokens": []}
    with pytest.raises(InputError, match=r"p.jsonl:1: 't': language 'jl' is not one passk runs"):
        load_problems(jsonl("p.jsonl", [{**row, "language": "jl"}]))
    js = {**row, "language": "js", "tests": "test();"}
    with pytest.raises(InputError, match=r"m.jsonl:2: 'u' is in typescript.*one language per problem file"):
        load_problems(jsonl("m.jsonl", [js, {**js, "name": "u", "language": "ts"}]))


def test_tests_passk_cannot_wrap_with_its_completion_marker_are_refused(jsonl):
    row = {"name": "t", "prompt": "fn f() {\n", "tests": "}\nfn helper() {}\n", "stop_tokens": [], "language": "rs"}
    with pytest.raises(InputError, match=r"t: the Rust tests do not define exactly one `fn main\(\)`"):
        load_problems(jsonl("p.jsonl", [row]))


def test_an_unknown_shape_names_its_fields_and_the_known_formats(jsonl):
    path = jsonl("p.jsonl", [{"id": 1, "question": "x"}])
    with pytest.raises(InputError) as e:
        load_problems(path)
    msg = str(e.value)
    assert f"{path}:1" in msg and "id, question" in msg
    for name in ("humaneval", "mbpp", "multipl-e", "apps", "codecontests", "livecodebench", "bigcodebench"):
        assert name in msg


MBPP = {"task_id": 1, "text": "t", "code": "def f(x):\n    return x\n", "test_list": ["assert f(1) == 1"],
        "test_setup_code": "", "challenge_test_list": []}
MULTIPLE = {"name": "m_1", "language": "py", "prompt": "def f(x):\n", "tests": "def check(candidate):\n"
            "    assert candidate(1) == 1\n\ndef test_check():\n    check(f)\n\ntest_check()\n", "stop_tokens": ["\ndef"]}
APPS = {"problem_id": 7, "question": "q", "input_output": json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]}),
        "solutions": json.dumps(["print(input())"])}
CC = {"name": "cc", "public_tests": {"input": ["1\n"], "output": ["1\n"]}, "private_tests": {"input": [], "output": []},
      "generated_tests": {"input": [], "output": []}}
LCB = {"question_id": "q1", "public_test_cases": json.dumps([{"input": "1\n", "output": "1\n", "testtype": "stdin"}]),
       "private_test_cases": "[]", "metadata": "{}"}
BCB = {"task_id": "B/0", "complete_prompt": "def task_func():\n", "test": "import unittest\n", "entry_point": "task_func"}


@pytest.mark.parametrize("row,drop,fragment", [
    (MBPP, "test_list", "field 'test_list'"),
    (MULTIPLE, "tests", "field 'tests'"),
    (APPS, "input_output", "field 'input_output'"),
    (CC, "name", "missing field 'name'"),
    (LCB, "question_id", "missing field 'question_id'"),
    (BCB, "entry_point", "missing field 'entry_point'"),
])
def test_a_missing_field_is_named_with_file_and_line(jsonl, row, drop, fragment):
    fmt = {id(MBPP): "mbpp", id(MULTIPLE): "multipl-e", id(APPS): "apps", id(CC): "codecontests",
           id(LCB): "livecodebench", id(BCB): "bigcodebench"}[id(row)]
    assert load_problems(jsonl("ok.jsonl", [row]))   # the complete row is accepted
    path = jsonl("p.jsonl", [row, {k: v for k, v in row.items() if k != drop}])
    with pytest.raises(InputError) as e:
        load_problems(path, fmt)
    assert f"{path}:2" in str(e.value) and fragment in str(e.value)


def _blob(obj) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(obj))).decode()


class _Boom:
    def __reduce__(self):
        import os
        return (os.system, ("touch /tmp/passk-pickle-ran",))


def test_livecodebench_private_tests_are_decoded_without_running_code(tmp_path):
    cases = [{"input": "2\n", "output": "2\n", "testtype": "stdin"}]
    assert decode_private_tests("w", _blob(json.dumps(cases))) == cases
    Path("/tmp/passk-pickle-ran").unlink(missing_ok=True)
    with pytest.raises(InputError, match="refused a global"):
        decode_private_tests("w", _blob(_Boom()))
    assert not Path("/tmp/passk-pickle-ran").exists()
    with pytest.raises(InputError, match="pickled list, not a string"):
        decode_private_tests("w", _blob(cases))
    with pytest.raises(InputError, match="neither JSON nor base64"):
        decode_private_tests("w", "not base64 at all!")


def test_bad_input_per_format_is_one_line_naming_the_file_and_exit_2(tmp_path, jsonl, capsys):
    samples = jsonl("s.jsonl", [{"task_id": "q1", "solution": "print(1)"}])
    lcb = jsonl("lcb.jsonl", [{**LCB, "private_test_cases": _blob({"a": 1})}])
    cases = [
        (lcb, samples, "pickled dict, not a string"),
        (jsonl("mbpp.jsonl", [{k: v for k, v in MBPP.items() if k != "code"}]), samples, "missing field 'code'"),
    ]
    gen = tmp_path / "generations.json"
    gen.write_text(json.dumps([["print(1)"], ["print(2)"]]))
    cases.append((jsonl("lcb2.jsonl", [LCB]), gen, "2 lists for 1 problems"))
    for problems, samples_path, fragment in cases:
        out = tmp_path / ("out-" + problems.stem)
        code = main(["evaluate", "--problems", str(problems), "--samples", str(samples_path), "--out", str(out)])
        err = capsys.readouterr().err.strip()
        assert code == 2, err
        assert err.count("\n") == 0 and fragment in err, err
        assert (str(problems) in err) or (str(samples_path) in err), err
        assert not out.exists()


def test_sample_layouts(tmp_path, jsonl):
    problems = load_problems(jsonl("p.jsonl", [MULTIPLE, {**MULTIPLE, "name": "m_2"}]))
    # MultiPL-E rows keyed by name, with a completions list
    rows = load_samples(jsonl("s.jsonl", [{"name": "m_1", "completions": ["    return x\n", "    return 0\n"]}]), problems)
    assert [(s.task_id, s.sample_index, s.program) for s in rows] == [
        ("m_1", 0, "def f(x):\n    return x\n"), ("m_1", 1, "def f(x):\n    return 0\n")]
    # MultiPL-E completion files: one per problem in a directory
    d = tmp_path / "completions"
    d.mkdir()
    (d / "m_1.json").write_text(json.dumps({"name": "m_1", "language": "py", "prompt": "def f(x):\n",
                                            "tests": "...", "completions": ["    return x\n"]}))
    with gzip.open(d / "m_2.json.gz", "wt") as f:
        f.write(json.dumps({"name": "m_2", "completions": ["    return x\n", "    return x\n"]}))
    rows = load_samples(d, problems)
    assert [(s.task_id, s.sample_index) for s in rows] == [("m_1", 0), ("m_2", 0), ("m_2", 1)]
    assert "prompt" not in rows[0].extra   # the problem's own fields are not sample metadata
    # bigcode generations.json: lists in problem order, whole programs; duplicates kept
    gen = tmp_path / "generations.json"
    gen.write_text(json.dumps([["def f(x): return x"], ["def f(x): return x", "def f(x): return x"]]))
    rows = load_samples(gen, problems)
    assert [(s.task_id, s.sample_index, s.kind) for s in rows] == [
        ("m_1", 0, "solution"), ("m_2", 0, "solution"), ("m_2", 1, "solution")]


def test_livecodebench_output_rows(tmp_path):
    problems = load_problems(Path(ROOT / "problems" / "livecodebench" / "problems.jsonl"))
    qid = next(iter(problems))
    out = tmp_path / "out.json"
    out.write_text(json.dumps([{"question_id": qid, "code_list": ["print(1)", "print(2)"], "pass1": 0.5}]))
    rows = load_samples(out, problems)
    assert [(s.sample_index, s.kind, s.extra.get("pass1")) for s in rows] == [(0, "solution", 0.5), (1, "solution", 0.5)]


def test_stop_tokens_and_code_extraction_are_options(jsonl):
    problems = load_problems(jsonl("p.jsonl", [MULTIPLE]))
    text = "    return x\n\ndef g():\n    pass\n"
    path = jsonl("s.jsonl", [{"name": "m_1", "completion": text}])
    assert load_samples(path, problems)[0].program == "def f(x):\n" + text
    cut = load_samples(path, problems, options=SampleOptions(stop_tokens=True))[0]
    assert cut.program == "def f(x):\n    return x\n" and cut.raw == text
    chat = "Here:\n```python\nprint(1)\n```\nand better:\n```\nprint(2)\n```\nDone."
    assert extract_code(chat) == "print(2)\n"
    assert extract_code("no fence here") is None
    rows = load_samples(jsonl("c.jsonl", [{"name": "m_1", "solution": chat}, {"name": "m_1", "solution": "prose"}]),
                        problems, options=SampleOptions(extract_code=True))
    assert rows[0].program == "print(2)\n"
    assert rows[1].program is None and rows[1].raw == "prose"   # kept: it becomes failed no_code


def test_samples_keyed_by_a_plain_mbpp_number(jsonl):
    problems = load_problems(jsonl("p.jsonl", [MBPP]))
    rows = load_samples(jsonl("s.jsonl", [{"task_id": 1, "solution": "x"}, {"task_id": "Mbpp/1", "solution": "y"}]),
                        problems)
    assert [(s.task_id, s.sample_index) for s in rows] == [("Mbpp/1", 0), ("Mbpp/1", 1)]


def test_apps_stdin_programs_are_rewritten_as_apps_grader_rewrites_them():
    from harness.inputs.problem import apps_stdin_program
    program = "import sys\nfrom math import gcd\nn = int(input())\nimport os\nif __name__ == '__main__':\n    print(n)"
    assert apps_stdin_program(program) == (
        "import sys\nfrom math import gcd\nstdin = sys.stdin\nstdout = sys.stdout\ndef code():\n"
        "\tn = int(input())\n\timport os\n\tif __name__ == '__main__':\n\t    print(n)\n")
    problems = load_problems(ROOT / "problems" / "apps" / "problems.jsonl")
    stdin = [p for p in problems.values() if p.channel == "io"]
    assert stdin and {p.runner for p in stdin} == {"apps_stdin"}
    text = stdin[0].program_text("print(1)\n")
    assert text.startswith(stdin[0].header) and text.endswith("def code():\n\tprint(1)\n\t\n")
    called = [p for p in problems.values() if p.channel != "io"][0]
    assert called.program_text("x = 1\n") == called.header + "x = 1\n"   # call-based programs run as written
