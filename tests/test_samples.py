import pytest

from harness.core.errors import InputError
from harness.inputs.problems import load_problems
from harness.inputs.samples import load_samples

from .conftest import write_jsonl

PROBLEMS = [
    {"task_id": "T/0", "prompt": "def f(x):\n", "test": "def check(c):\n    pass\n", "entry_point": "f"},
    {"task_id": "T/1", "prompt": "def g(x):\n", "test": "def check(c):\n    pass\n", "entry_point": "g"},
]


@pytest.fixture
def problems(tmp_path):
    return load_problems(write_jsonl(tmp_path / "problems.jsonl", PROBLEMS))


def test_index_is_position_within_task_and_duplicates_are_kept(tmp_path, problems):
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "T/0", "completion": "    return 1\n"},
        {"task_id": "T/1", "solution": "def g(x):\n    return 2\n"},
        {"task_id": "T/0", "completion": "    return 1\n"},
    ])
    samples = load_samples(path, problems)
    assert [(s.task_id, s.sample_index) for s in samples] == [("T/0", 0), ("T/1", 0), ("T/0", 1)]
    assert samples[0].program == "def f(x):\n    return 1\n"
    assert samples[1].program == "def g(x):\n    return 2\n"
    assert samples[0].sha256 == samples[2].sha256  # identical, still two candidates


def test_directory_layout_uses_natural_order(tmp_path, problems):
    d = tmp_path / "sols" / "T_0"
    d.mkdir(parents=True)
    for name in ("10.py", "2.py", "1.py"):
        (d / name).write_text(f"# {name}\ndef f(x):\n    return x\n")
    samples = load_samples(tmp_path / "sols", problems)
    assert [s.extra["file"] for s in samples] == ["1.py", "2.py", "10.py"]
    assert [s.sample_index for s in samples] == [0, 1, 2]


@pytest.mark.parametrize("row,fragment", [
    ({"task_id": "T/9", "completion": ""}, "unknown task_id 'T/9'"),
    ({"task_id": "T/0"}, "needs exactly one of 'completion' or 'solution'"),
    ({"task_id": "T/0", "completion": "x", "solution": "y"}, "needs exactly one of"),
    ({"task_id": "T/0", "completion": 5}, "field 'completion' must be a string"),
    ({"completion": "x"}, "missing or non-string field 'task_id'"),
])
def test_bad_sample_rows_name_file_and_line(tmp_path, problems, row, fragment):
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "T/0", "completion": "ok"}, row])
    with pytest.raises(InputError) as e:
        load_samples(path, problems)
    assert f"{path}:2:" in str(e.value) and fragment in str(e.value)


def test_anything_in_a_samples_directory_that_is_not_a_sample_is_ignored_and_listed(tmp_path, problems):
    """Regression: stray files were dropped in silence while `.ipynb_checkpoints/` stopped the run."""
    root = tmp_path / "sols"
    (root / "T_0" / ".ipynb_checkpoints").mkdir(parents=True)
    (root / "Nope_3").mkdir()
    (root / "T_0" / "0.py").write_text("def f(x):\n    return x\n")
    (root / "T_0" / "0.json").write_text("{}")
    (root / "T_0" / "notes.txt").write_text("x")
    (root / "T_0" / "orphan.json").write_text("{}")
    (root / "README.md").write_text("x")
    samples = load_samples(root, problems)
    assert [s.sample_index for s in samples] == [0]
    assert samples.ignored == ["Nope_3/", "README.md", "T_0/.ipynb_checkpoints/", "T_0/notes.txt", "T_0/orphan.json"]


def test_a_directory_with_no_task_directories_is_refused(tmp_path, problems):
    (tmp_path / "sols" / "Nope_3").mkdir(parents=True)
    with pytest.raises(InputError, match="no task directories"):
        load_samples(tmp_path / "sols", problems)


def test_directory_metadata_from_generation_json_and_sidecars(tmp_path, problems):
    d = tmp_path / "sols" / "T_0"
    d.mkdir(parents=True)
    (tmp_path / "sols" / "generation.json").write_text('{"model": "m", "temperature": 0.2}')
    (d / "0.py").write_text("def f(x):\n    return x\n")
    (d / "1.py").write_text("def f(x):\n    return x\n")
    (d / "1.json").write_text('{"logprob": -1.5, "generation": {"kind": "repair"}}')
    a, b = load_samples(tmp_path / "sols", problems)
    assert a.row_fields() == {"generation": {"model": "m", "temperature": 0.2}, "file": "0.py"}
    assert b.row_fields() == {"generation": {"kind": "repair"}, "file": "1.py", "logprob": -1.5}
    (d / "1.json").write_text("[1]")
    with pytest.raises(InputError, match=r"1\.json: expected a JSON object"):
        load_samples(tmp_path / "sols", problems)


def test_a_configs_generation_is_the_default_under_each_samples_own(tmp_path, problems):
    config_gen = {"kind": "repair", "model": "m"}
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "T/0", "completion": "    return 1\n"},
        {"task_id": "T/0", "completion": "    return 2\n", "generation": {"kind": "independent"}},
    ])
    assert [s.extra["generation"] for s in load_samples(path, problems, config_gen)] == [
        config_gen, {"kind": "independent"}]
    assert "generation" not in load_samples(path, problems)[0].extra
    d = tmp_path / "sols" / "T_0"
    d.mkdir(parents=True)
    (d / "0.py").write_text("def f(x):\n    return x\n")
    assert load_samples(tmp_path / "sols", problems, config_gen)[0].extra["generation"] == config_gen
    (tmp_path / "sols" / "generation.json").write_text('{"kind": "independent", "temperature": 0.8}')
    assert load_samples(tmp_path / "sols", problems, config_gen)[0].extra["generation"] == {
        "kind": "independent", "temperature": 0.8}
