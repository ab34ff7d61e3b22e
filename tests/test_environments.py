"""Environments (harness/inputs/libraries.py reads a list, harness/environments/library.py builds it) and BigCodeBench's rule (runner bigcodebench): the list's checks
and the lock's identity without Docker; images, rows and manifests against the real engine."""

import json
import subprocess
import sys

import pytest

from harness.environments import library as environments
from harness.inputs import libraries
from harness.core.errors import InputError

from .conftest import ROOT, write_jsonl

LIBS = ROOT / "problems" / "bigcodebench-libs"


def _req(tmp_path, text, name="reqs.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_list_of_exact_pins_is_an_environment_with_its_own_lines(tmp_path):
    env = libraries.parse_requirements(_req(tmp_path, "# passk: name: small\n# passk: allow-source: Foo_Bar\n"
                                                          "# passk: deviation: x -> y\nsix==1.16.0  # why\nFoo_Bar==2.0\n"))
    assert env.name == "small" and env.requirements == ("six==1.16.0", "Foo_Bar==2.0")
    assert env.allow_source == ("foo-bar",) and env.deviations == ("x -> y",)
    assert env.pins() == {"six": "1.16.0", "foo-bar": "2.0"}


@pytest.mark.parametrize("text, message", [
    ("numpy>=1.0\n", ":1: 'numpy>=1.0' is not an exact pin"),
    ("six==1.16.0\nnumpy\n", ":2: 'numpy' is not an exact pin"),
    ("six==1.16.0\nSix==1.15.0\n", ":2: Six is pinned twice"),
    ("# passk: allow-source: numpy\nsix==1.16.0\n", "allow-source names numpy, which the file does not pin"),
    ("# passk: colour: blue\nsix==1.16.0\n", ":1: unknown passk line 'colour'"),
    ("# only a comment\n", "no packages"),
])
def test_a_bad_list_names_file_and_line_and_exits_2(tmp_path, text, message):
    path = _req(tmp_path, text)
    with pytest.raises(InputError) as e:
        libraries.parse_requirements(path)
    assert str(path) in str(e.value) and message in str(e.value)
    # refused before any image is looked at or built (a base image that is nowhere would be reported first)
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "images", "build", "--requirements", str(path),
                           "--base-image", "passk-no-such-base:none"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr and proc.stderr.count("\n") == 1


def test_the_shipped_bigcodebench_list_is_pinned_and_says_where_it_departs():
    env = libraries.load("bigcodebench")
    assert len(env.requirements) == 70 and all("==" in r for r in env.requirements)
    pins = env.pins()
    assert pins["numpy"] == "1.23.5" and pins["pandas"] == "2.0.3" and pins["tensorflow"] == "2.12.0"
    for moved in ("numpy", "scipy", "numba", "scikit-image", "networkx", "tensorflow", "keras", "selenium"):
        assert any(d.startswith(moved + " ") for d in env.deviations), moved
    assert any("nltk" in d for d in env.data)
    assert libraries.load("none") is None and libraries.load("auto") is None
    with pytest.raises(InputError, match="neither a requirements file nor one passk ships"):
        libraries.load("no-such-environment")


def test_bigcodebench_tasks_that_import_libraries_get_its_environment_by_default():
    from harness.inputs.problems import load_problems
    assert libraries.auto_for(load_problems(LIBS / "problems.jsonl")) == "bigcodebench"
    assert libraries.auto_for(load_problems(ROOT / "problems" / "bigcodebench" / "problems.jsonl")) is None
    assert libraries.third_party("['pandas', 'os', 'matplotlib.pyplot', 'random']") == ["matplotlib.pyplot", "pandas"]


def test_the_image_tag_follows_the_lock_and_a_changed_package_is_named():
    pkg = [{"name": "six", "version": "1.16.0", "sha256": "a" * 64}]
    inst = {"name": "pip", "version": "24.2", "sha256": "b" * 64}
    lock = {"python": "3.11.2", "sha256": environments.lock_sha256(pkg, inst)}
    env = libraries.Environment("small", ("six==1.16.0",))
    sandbox = {"image_id": "sha256:1"}
    assert environments.image_tag(env, sandbox, lock) == environments.image_tag(env, sandbox, dict(lock))
    other = {**lock, "sha256": environments.lock_sha256([{**pkg[0], "version": "1.17.0"}], inst)}
    assert environments.image_tag(env, sandbox, other) != environments.image_tag(env, sandbox, lock)
    assert environments.image_tag(env, {"image_id": "sha256:2"}, lock) != environments.image_tag(env, sandbox, lock)
    odd = libraries.Environment("My..Env_1", ("six==1.16.0",))
    assert environments.image_tag(odd, sandbox, lock).startswith("passk-env-my-env-1:")
    before = {"name": "small", "python": "3.11.2", "lock": pkg}
    now = {"name": "small", "python": "3.11.2", "lock": [{**pkg[0], "version": "1.17.0"}]}
    assert environments.lock_differences(before, now) == ["six: 1.16.0 then, 1.17.0 now"]
    assert environments.lock_differences(before, None) == ["environment: small then, none now"]


def test_reproduce_refuses_a_list_that_changed_and_names_the_pin(tmp_path):
    from harness.run.reproduce import _check_environment
    path = _req(tmp_path, "six==1.16.0\ntabulate==0.9.0\n")
    recorded = {"name": "reqs", "spec_sha256": libraries.parse_requirements(path).spec_sha256,
                "requirements": ["six==1.16.0", "tabulate==0.9.0"]}
    _check_environment(tmp_path, recorded, str(path))   # the same list: no complaint
    path.write_text("six==1.16.0\ntabulate==0.8.10\n")
    with pytest.raises(InputError, match=r"tabulate==0.9.0 then, tabulate==0.8.10 now"):
        _check_environment(tmp_path, recorded, str(path))


# ------------------------------------------------------------------------------------------------
# Against the real engine.
# ------------------------------------------------------------------------------------------------
SMALL = "# passk: name: small\nsix==1.16.0\ntabulate==0.9.0\n"


def _task(tid, body, test, libs="['tabulate', 'six']"):
    return {"task_id": tid, "complete_prompt": "import tabulate\nimport six\n\ndef task_func(x):\n",
            "code_prompt": "import tabulate\nimport six\n\ndef task_func(x):\n", "canonical_solution": body,
            "test": test, "entry_point": "task_func", "libs": libs}


def _evaluate(problems, samples, out, *extra):
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(problems), "--samples",
                           str(samples), "--out", str(out), "--k", "1", "--no-progress", "--bigcodebench-timeout-s", "3",
                           *extra], cwd=ROOT, capture_output=True, text=True)
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()] if (out / "results.jsonl").exists() else []
    return proc, {(r["task_id"], r["sample_index"]): r for r in rows}


@pytest.mark.docker
def test_a_requirements_file_gives_its_libraries_and_every_row_names_the_environment(tmp_path):
    problems = write_jsonl(tmp_path / "p.jsonl", [_task(
        "Small/0", "    return tabulate.tabulate([[x]], tablefmt='plain') + six.text_type('')\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_0(self):\n"
        "        self.assertEqual(task_func(7), '7')\n")])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "Small/0", "completion": "    return str(x)\n"},
                                                 {"task_id": "Small/0", "completion": "    return tabulate.tabulate([[x]], tablefmt='plain')\n"}])
    reqs = _req(tmp_path, SMALL)
    proc, rows = _evaluate(problems, samples, tmp_path / "with", "--requirements", str(reqs))
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "with" / "manifest.json").read_text())
    env = manifest["sandbox"]["environment"]
    assert env["name"] == "small" and env["python"].startswith("3.")
    assert {p["name"]: p["version"] for p in env["lock"]} == {"six": "1.16.0", "tabulate": "0.9.0"}
    assert all(len(p["sha256"]) == 64 for p in env["lock"]) and manifest["sandbox"]["image_id"] == env["image_id"]
    assert manifest["config"]["limits"]["timeout_s"] == 4.0 and manifest["config"]["limits"]["memory_mb"] == 30720
    for r in rows.values():
        assert r["status"] == "passed", r
        assert r["limits"]["environment"] == {"name": "small", "sha256": env["sha256"]}
        assert r["limits"]["rule"]["name"] == "bigcodebench-0.2.5" and r["limits"]["rule"]["calibrated"] is True
    # the same list again: the same image, not a new one
    proc, _ = _evaluate(problems, samples, tmp_path / "again", "--requirements", str(reqs))
    assert json.loads((tmp_path / "again" / "manifest.json").read_text())["sandbox"]["image_id"] == env["image_id"]
    # without it: the module is missing, and the row says where libraries come from
    proc, rows = _evaluate(problems, samples, tmp_path / "without", "--environment", "none")
    assert {r["reason"] for r in rows.values()} == {"exception:ModuleNotFoundError"}
    assert all("not in the run's environment (none)" in r["detail"] and "environment" not in r["limits"]
               for r in rows.values())


def _expected():
    """What each shipped BigCodeBench-library candidate gets, by its note (problems/bigcodebench-libs)."""
    rules = [("another correct", "passed", ""), ("correct, but nltk", "failed", "exception:LookupError"),
             ("correct", "passed", ""), ("forgets", "passed", ""), ("calls plt.show", "passed", ""),
             ("Student's", "passed", ""), ("counts without nltk", "passed", ""), ("a __main__ block", "passed", ""),
             ("never returns", "timed_out", "wall_time_limit"), ("imports a module", "failed", "exception:ModuleNotFoundError"),
             ("reads stdin", "failed", "exception:OSError"), ("calls exit", "failed", "exception:TypeError"),
             ("ends its process", "failed", "exited_early"), ("wrong", "failed", "assertion")]
    out, counts = {}, {}
    for line in (LIBS / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        i = counts.get(s["task_id"], 0)
        counts[s["task_id"]] = i + 1
        out[(s["task_id"], i)] = next((st, rs) for key, st, rs in rules if s["note"].startswith(key))
    return out


@pytest.mark.docker
def test_bigcodebench_tasks_run_in_its_environment_by_its_rule(tmp_path):
    """The shipped BigCodeBench-library set in BigCodeBench's environment (built here if missing: minutes,
    once; then cached): every candidate's label, and the ground truth's check."""
    proc, rows = _evaluate(LIBS / "problems.jsonl", LIBS / "samples.jsonl", tmp_path / "run", "--check-ground-truth")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ground truth: 8/9 pass" in proc.stderr and "GROUND TRUTH FAILS PasskLib/7" in proc.stderr
    assert "\x1b" not in proc.stderr   # nltk's coloured message is escaped on the terminal
    wrong = [(k, r["status"], r["reason"], r["detail"][:200]) for k, r in rows.items()
             if (r["status"], r["reason"][:len(_expected()[k][1])]) != _expected()[k]]
    assert not wrong
    nltk = rows[("PasskLib/7", 0)]
    assert nltk["detail"].startswith("[nltk data is not in the run's environment (bigcodebench)")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["sandbox"]["environment"] == "bigcodebench"   # chosen by the tasks' libs
    check = manifest["ground_truth_check"]
    assert check["pass_rate"] == pytest.approx(8 / 9) and not check["per_task"]["PasskLib/7"]["passed"]
    assert {p["name"] for p in manifest["sandbox"]["environment"]["lock"]} >= {"numpy", "pandas", "scikit-learn"}


@pytest.mark.docker
def test_not_calibrated_a_program_that_forgets_its_imports_fails(tmp_path):
    samples = [json.loads(x) for x in (LIBS / "samples.jsonl").read_text().splitlines()]
    chosen = write_jsonl(tmp_path / "s.jsonl", [s for s in samples if s["task_id"] in ("PasskLib/0", "PasskLib/3")])
    problems = write_jsonl(tmp_path / "p.jsonl", [json.loads(x) for x in (LIBS / "problems.jsonl").read_text().splitlines()
                                                  if json.loads(x)["task_id"] in ("PasskLib/0", "PasskLib/3")])
    proc, rows = _evaluate(problems, chosen, tmp_path / "run", "--bigcodebench-original")
    assert rows[("PasskLib/3", 0)]["status"] == "passed"
    assert rows[("PasskLib/3", 3)]["reason"] == "exception:NameError"     # without the code_prompt, no imports
    assert rows[("PasskLib/3", 3)]["limits"]["rule"]["calibrated"] is False
    # the test module's own `import pandas as pd` is in the same module's globals: BigCodeBench passes it too
    assert rows[("PasskLib/0", 1)]["status"] == "passed"


@pytest.mark.docker
def test_what_the_forkserver_preloads_carries_nothing_from_one_candidate_to_the_next(tmp_path):
    """BigCodeBench's candidates start with the environment's numpy, pandas and matplotlib already loaded
    (containers/box/layout.py ENV_PRELOAD_FILE): a candidate that changes their state leaves nothing for
    the next one in the same container."""
    prompt = "import numpy\nimport pandas\n\ndef task_func():\n"
    problems = write_jsonl(tmp_path / "p.jsonl", [{
        "task_id": "Fresh/0", "complete_prompt": prompt, "code_prompt": prompt, "entry_point": "task_func",
        "canonical_solution": "    numpy.passk_mark = 1\n    pandas.set_option('display.max_rows', 3)\n    return True\n",
        "libs": "['numpy', 'pandas']",
        "test": "import unittest\nimport sys\n\nclass TestCases(unittest.TestCase):\n    def test_fresh(self):\n"
                "        import numpy, pandas\n        self.assertIn('matplotlib.pyplot', sys.modules)\n"
                "        self.assertFalse(hasattr(numpy, 'passk_mark'))\n"
                "        self.assertEqual(pandas.get_option('display.max_rows'), 60)\n"
                "        self.assertTrue(task_func())\n        self.assertTrue(hasattr(numpy, 'passk_mark'))\n"}])
    body = "    numpy.passk_mark = 1\n    pandas.set_option('display.max_rows', 3)\n    return True\n"
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "Fresh/0", "completion": body}] * 6)
    proc, rows = _evaluate(problems, samples, tmp_path / "run", "--workers", "1")
    assert len(rows) == 6 and {r["status"] for r in rows.values()} == {"passed"}, \
        [(r["reason"], r["detail"][:200]) for r in rows.values()]


@pytest.mark.docker
def test_a_bigcodebench_reason_comes_from_the_exception_never_from_its_message(tmp_path):
    """Regression (issue 24, item 7): the unittest runner took a failing test's reason from the last line of
    its traceback, which a candidate's exception message can write: a ValueError whose message ends in a
    line `KeyError: forged` was labelled exception:KeyError. The reason is the exception's own class."""
    prompt = "def task_func():\n"
    problems = write_jsonl(tmp_path / "p.jsonl", [{
        "task_id": "Msg/0", "complete_prompt": prompt, "code_prompt": prompt, "entry_point": "task_func",
        "canonical_solution": "    return 1\n", "libs": "[]",
        "test": "import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_0(self):\n"
                "        self.assertEqual(task_func(), 1)\n"}])
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "Msg/0", "completion": "    raise ValueError('boom\\nTraceback (most recent call last):\\nKeyError: forged')\n"},
        {"task_id": "Msg/0", "completion": "    raise AssertionError('\\n' * 50 + 'OK')\n"}])
    proc, rows = _evaluate(problems, samples, tmp_path / "run", "--environment", "none")
    assert rows[("Msg/0", 0)]["reason"] == "exception:ValueError", rows[("Msg/0", 0)]
    # an AssertionError a test meets is unittest's failure, whatever its message says
    assert (rows[("Msg/0", 1)]["status"], rows[("Msg/0", 1)]["reason"]) == ("failed", "assertion")
