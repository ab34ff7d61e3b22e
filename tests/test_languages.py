"""Candidates in every language passk runs besides Python (C++, Rust, Go, Java, JavaScript, TypeScript and
MultiPL-E's fifteen others): the wrapping of their tests (pure), then through the real Docker engine and
each language's image, the demo sets' exact labels, what every row records, and the hostile programs of
tests/language_attacks.py."""

import json

import docker
import pytest

from harness.inputs import languages
from harness.inputs.config import Limits, RunConfig, SandboxSettings
from harness.core.constants import LABEL_RUN, MARKER_PLACEHOLDER
from harness.core.errors import InputError
from harness.run.runner import evaluate
from harness.inputs.samples import SampleOptions

from .conftest import ROOT, write_jsonl
from .language_attacks import ATTACKS, EXPECTED, TIMEOUT_S, rows as attack_rows

LANGUAGES = ("cpp", "rust", "go", "java", "javascript", "typescript", "lua", "ruby", "php", "perl", "r", "bash",
             "racket", "scala", "csharp", "d", "elixir", "clojure", "haskell", "ocaml", "ada")


def test_every_language_has_a_demo_set_an_image_and_attacks():
    assert set(languages.LANGUAGES) == set(LANGUAGES) == set(ATTACKS)
    for name in LANGUAGES:
        assert (ROOT / "problems" / f"lang-{name}" / "problems.jsonl").is_file()
        assert (ROOT / "containers" / "languages" / name / "Dockerfile").is_file()


def test_multipl_e_names_map_to_passk_languages_and_python_stays_python():
    assert languages.canonical("rs") == "rust" and languages.canonical("go_test.go") == "go"
    assert languages.canonical("js") == "javascript" and languages.canonical("ts") == "typescript"
    assert languages.canonical("py") == "python" and languages.find("python") is None
    assert languages.canonical("rb") == "ruby" and languages.canonical("cs") == "csharp"
    assert languages.canonical("rkt") == "racket" and languages.canonical("ml") == "ocaml"
    assert languages.canonical("sh") == "bash" and languages.canonical("pl") == "perl"
    for refused in ("jl", "julia", "swift", "dart"):   # no toolchain in Debian's archive (docs/languages.md)
        with pytest.raises(InputError, match=f"'{refused}' is not one passk runs"):
            languages.canonical(refused)
    assert SandboxSettings(language="rs").language == "rust"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_marker_is_written_after_the_tests_and_never_in_the_candidates_code(language):
    problem = json.loads((ROOT / "problems" / f"lang-{language}" / "problems.jsonl").read_text().splitlines()[0])
    test, files = languages.glue(language, problem["name"], problem["prompt"], problem["tests"])
    text = test + "".join(files.values())
    # written once (the marker's literal); Go's counted tests carry it in names only passk's text has
    assert text.count(f'"{MARKER_PLACEHOLDER}"') + text.count(f"'{MARKER_PLACEHOLDER}'") == 1
    assert MARKER_PLACEHOLDER not in problem["prompt"]
    if not files:   # the marker's statement comes after the tests' last call of demo_add's function
        literal = max(test.find(f'"{MARKER_PLACEHOLDER}"'), test.find(f"'{MARKER_PLACEHOLDER}'"))
        assert problem["name"] == "demo_add"
        assert literal > max(test.lower().rfind(word) for word in ("add", "candidate")) > 0


def _config(tmp_path, language, samples, workers=2, **limits):
    limits = {"timeout_s": 2.0, **limits}
    return RunConfig(problems=str(ROOT / "problems" / f"lang-{language}" / "problems.jsonl"), samples=str(samples),
                     out=str(tmp_path / "run"), k=(1,), limits=Limits(**limits),
                     sandbox=SandboxSettings(workers=workers), sample_options=SampleOptions(stop_tokens=True))


def _rows(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _no_container_left(run_id):
    left = docker.from_env().containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})
    assert not left, [c.name for c in left]


@pytest.mark.docker
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_demo_set_gets_its_exact_labels_and_rows_record_the_toolchain(tmp_path, language):
    samples = ROOT / "problems" / f"lang-{language}" / "samples.jsonl"
    expected = [json.loads(line) for line in samples.read_text().splitlines()]
    outcome = evaluate(_config(tmp_path, language, samples, timeout_s=TIMEOUT_S.get(language, 2.0)), progress=False)
    rows = _rows(outcome.out_dir)
    assert len(rows) == len(expected)
    by_task: dict = {}
    for e in expected:
        by_task.setdefault(e["name"], []).append(e["expected"])
    for row in rows:
        want = by_task[row["task_id"]][row["sample_index"]]
        got = row["status"] if row["status"] == "passed" else f"{row['status']} {row['reason']}"
        assert got == want, (row["task_id"], row["sample_index"], row["detail"])
        assert row["verdict_channel"] == "in_process" and row["channel_detail"]["language"] == language
        detail = row["channel_detail"]   # each step's CPU: what an audit (and scripts/speed/bench.py) splits by phase
        if "compile_s" in detail:   # a warm compile server rejects a syntax error within a clock tick
            assert detail["compile_cpu_s"] > 0 or (detail.get("compiled_by") == "server" and detail["compile_cpu_s"] == 0
                                                   and row["reason"] == "compile_error"), detail
        if "run_s" in detail:
            assert isinstance(detail["run_cpu_s"], (int, float)) and detail["run_cpu_s"] >= 0, detail
        limits = row["limits"]
        assert limits["language"] == language and limits["toolchain"] and "cgroup" in limits["memory_enforced"]
        assert limits["compile_timeout_s"] == 30.0 and limits["compile_memory_mb"] == 1024
        assert limits["image"].startswith(f"passk-{language}:")
    manifest = json.loads((outcome.out_dir / "manifest.json").read_text())
    assert manifest["sandbox"]["language"] == language and manifest["sandbox"]["toolchain"]
    assert outcome.score["labels"]["passed"] == sum(e["expected"] == "passed" for e in expected)
    _no_container_left(manifest["run_id"])


@pytest.mark.docker
@pytest.mark.parametrize("language", LANGUAGES)
def test_hostile_programs_get_their_labels_and_leave_nothing_for_the_next(tmp_path, language):
    samples = write_jsonl(tmp_path / "attacks.jsonl", attack_rows(language))
    # one worker: each program runs after the one before it, in the same warm container where it can
    outcome = evaluate(_config(tmp_path, language, samples, workers=1, timeout_s=TIMEOUT_S.get(language, 2.0)),
                       progress=False)
    rows = sorted(_rows(outcome.out_dir), key=lambda r: r["sample_index"])
    got = {r["sample"]["attack"]: (r["status"] if r["status"] == "passed" else f"{r['status']} {r['reason']}")
           for r in rows}
    for attack, label in got.items():
        assert label in EXPECTED[attack], (attack, label, [r["detail"] for r in rows if r["sample"]["attack"] == attack])
    assert set(got) == set(ATTACKS[language])
    _no_container_left(json.loads((outcome.out_dir / "manifest.json").read_text())["run_id"])


@pytest.mark.docker
def test_a_run_refuses_problems_in_another_language_than_its_sandbox(tmp_path):
    samples = ROOT / "problems" / "lang-rust" / "samples.jsonl"
    cfg = _config(tmp_path, "rust", samples)
    from dataclasses import replace
    cfg = replace(cfg, sandbox=SandboxSettings(workers=1, language="cpp"))
    with pytest.raises(InputError, match="its problems are in rust, the run's sandbox is set to cpp"):
        evaluate(cfg, progress=False)
    assert not (tmp_path / "run").exists()


def test_commands_default_to_multipl_e_s_and_a_config_can_change_them():
    assert languages.commands("cpp") == {"compile": ["g++", "main.cpp", "-o", "main", "-std=c++17"], "run": ["./main"]}
    assert languages.commands("javascript")["compile"] is None
    flags = {"cpp": {"compile": ["g++", "main.cpp", "-o", "main", "-std=c++17", "-O2"]}}
    assert languages.commands("cpp", flags)["compile"][-1] == "-O2"
    assert languages.commands("rust", flags) == languages.commands("rust")
    for bad in ({"julia": {"run": ["julia"]}}, {"cpp": {"link": ["ld"]}}, {"cpp": {"run": "./main"}}, {"cpp": {"run": []}}):
        with pytest.raises(InputError, match="sandbox.commands"):
            SandboxSettings(commands=bad)


@pytest.mark.docker
def test_changed_compiler_flags_apply_and_every_row_records_them(tmp_path):
    from dataclasses import replace
    flags = ["g++", "main.cpp", "-o", "main", "-std=c++17", "-O2", "-DPASSK_FLAGS_APPLIED"]
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"name": "demo_add", "completion": "#ifdef PASSK_FLAGS_APPLIED\n    return a + b;\n#else\n    return 0;\n#endif\n}\n"}])
    cfg = _config(tmp_path, "cpp", samples, workers=1)
    cfg = replace(cfg, sandbox=SandboxSettings(workers=1, commands={"cpp": {"compile": flags}}))
    outcome = evaluate(cfg, progress=False)
    (row,) = _rows(outcome.out_dir)
    assert row["status"] == "passed", row["detail"]
    assert row["limits"]["commands"] == {"compile": flags, "run": ["./main"]}


def _report(**kw):
    base = {"output_exceeded": False, "memory_exceeded": False, "memory_pressure": False, "timed_out": False,
            "signal": None, "exit_code": 0, "stdout_tail": b"", "stderr_tail": b""}
    return {**base, **kw}


LIMITS = {"timeout_s": 2.0, "cpu_time_s": 3, "output_bytes": 1 << 20, "job_memory_kb": 512 * 1024}


@pytest.mark.parametrize("report, last, marked, want", [
    (_report(), True, True, ("passed", "tests_completed")),
    (_report(), True, False, ("failed", "exited_early")),
    (_report(exit_code=1, stderr_tail=b"AssertionError [ERR_ASSERTION]: 1 == 2"), True, False, ("failed", "assertion")),
    (_report(signal="SIGABRT", exit_code=None, stderr_tail=b"main: main.cpp:9: Assertion `x' failed."), True, False,
     ("failed", "assertion")),
    (_report(signal="SIGABRT", exit_code=None, stderr_tail=b"terminate called after throwing std::out_of_range"), True,
     False, ("failed", "signal:SIGABRT")),
    (_report(exit_code=2, stdout_tail=b"--- FAIL: TestX\npanic: runtime error: index out of range"), True, False,
     ("failed", "runtime_error")),
    (_report(exit_code=1, stderr_tail=b'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space',
             job_memory_peak_kb=300 * 1024), True, False, ("failed", "memory_limit")),
    (_report(memory_exceeded=True, exit_code=None, signal="SIGKILL"), True, False, ("failed", "memory_limit")),
    (_report(memory_exceeded=True, exit_code=None, signal="SIGKILL"), False, False, ("failed", "compile_memory_limit")),
    (_report(timed_out=True, exit_code=None, signal="SIGKILL"), False, False, ("timed_out", "compile_time_limit")),
    (_report(timed_out=True, exit_code=None, signal="SIGKILL"), True, False, ("timed_out", "wall_time_limit")),
    (_report(exit_code=1, stderr_tail=b"main.cpp:3:5: error: 'retrun' was not declared"), False, False,
     ("failed", "compile_error")),
    (_report(), False, False, ("passed", "compiled")),
    (_report(), True, "0/1", ("failed", "no_tests")),   # the tests' main ended, but not every test ran (Go)
    (_report(output_exceeded=True), True, True, ("failed", "output_limit")),
    # an exit code 0 with the marker but output over the limit is still the limit's
    (_report(exit_code=3, stdout_tail=b"x"), True, True, ("failed", "runtime_error")),
])
def test_a_step_is_labelled_from_how_it_ended(box, report, last, marked, want):
    from harness.containers.box.labels import _native_label
    assert _native_label(report, LIMITS, "run" if last else "compile", last, marked)[:2] == want


@pytest.mark.parametrize("language, report, want", [
    # Racket and Scala: MultiPL-E fails a run that wrote to stderr, however it ended
    ("racket", _report(stderr_bytes=6, stderr_tail=b"debug\n"), ("failed", "output_rule")),
    ("racket", _report(), ("passed", "tests_completed")),
    ("scala", _report(stderr_bytes=1, stderr_tail=b"w"), ("failed", "output_rule")),
    # Perl: "ERROR" anywhere in the output; PHP: a parse error on stdout; C#: a failed Debug.Assert's listener
    ("perl", _report(stdout_tail=b"ok!ERROR: x"), ("failed", "output_rule")),
    ("perl", _report(stdout_tail=b"ok!ok!"), ("passed", "tests_completed")),
    ("php", _report(stdout_tail=b"PHP Parse error: x"), ("failed", "output_rule")),
    ("php", _report(stderr_tail=b"PHP Parse error: x", stderr_bytes=18), ("passed", "tests_completed")),
    ("csharp", _report(stderr_tail=b"at System.Diagnostics.DefaultTraceListener.Fail", stderr_bytes=48),
     ("failed", "output_rule")),
    ("lua", _report(stderr_tail=b"anything", stderr_bytes=8), ("passed", "tests_completed")),
])
def test_multipl_e_s_output_rule_applies_on_top_of_the_marker(box, language, report, want):
    """A run with exit code 0 and the completion marker still fails where MultiPL-E's evaluator reads its
    output and fails it (Language.rule, which the run step carries)."""
    from harness.containers.box.labels import _native_label
    rule = languages.LANGUAGES[language].rule
    step = languages.steps(language, None, {"timeout_s": 2.0})[-1]
    assert step.get("rule") == (rule or None)
    assert _native_label(report, LIMITS, "run", True, True, language, step.get("rule"))[:2] == want


def test_multipl_e_s_other_languages_wrap_their_tests_against_what_a_candidate_can_do():
    """The tests' checks, renamed or qualified so that the candidate's definitions do not take them
    (harness/inputs/glue_more.py)."""
    def glued(language):
        problem = json.loads((ROOT / "problems" / f"lang-{language}" / "problems.jsonl").read_text().splitlines()[0])
        return languages.glue(language, problem["name"], problem["prompt"], problem["tests"])[0]
    assert "_root_.scala.Predef.assert(add(" in glued("scala") and "def main(args" not in glued("scala").split("object PasskMain")[0]
    assert "Debug.Assert" not in glued("csharp") and "throw new global::System.Exception" in glued("csharp")
    assert "unittest" not in glued("d") and "throw new AssertError" in glued("d")
    assert "CORE::exit(1)" in glued("perl") and "base::stopifnot(base::isTRUE(base::all.equal(" in glued("r")
    assert f"passk_failed_{MARKER_PLACEHOLDER}=1" in glued("bash")
    assert "runSuite('--output', 'text')" in glued("lua") and "AutoRunner.run(false, nil, [])" in glued("ruby")
    assert f"(passk_{MARKER_PLACEHOLDER}:parameterize ([passk_{MARKER_PLACEHOLDER}:current-check-handler" in glued("racket")
    assert f"main = passk_tests_{MARKER_PLACEHOLDER} >>" in glued("haskell")
    for language, tests in (("lua", "lu = require('luaunit')\n"), ("racket", "(require rackunit)\n"),
                            ("clojure", "(deftest t)\n"), ("d", "void main(){}\n"), ("ada", "begin\nnull;\n"),
                            ("scala", "object Problem {}\n"), ("csharp", "class Problem {}\n"), ("bash", "set -e\n")):
        with pytest.raises(InputError, match="tests"):
            languages.glue(language, "t", "", tests)


def test_a_go_panic_is_a_runtime_error_however_long_its_message(box):
    from harness.containers.box.labels import _native_label
    long_panic = _report(exit_code=2, stdout_tail=b"y" * 1800 + b"\n--- FAIL: TestAdd (0.00s)\nFAIL\n")
    assert _native_label(long_panic, LIMITS, "run", True, False, "go")[:2] == ("failed", "runtime_error")
    failed = _report(exit_code=1, stdout_tail=b"--- FAIL: TestAdd (0.00s)\n    x_test.go:9: expected 3\nFAIL\n")
    assert _native_label(failed, LIMITS, "run", True, False, "go")[:2] == ("failed", "assertion")


def test_the_marker_says_whether_every_test_ran(box):
    from harness.containers.box.labels import _marked
    nonce = "ab" * 16
    assert _marked(b"", nonce) is False and _marked(b"cd" * 16, nonce) is False
    assert _marked(nonce.encode(), nonce) is True
    assert _marked(nonce.encode() + b":no_tests:0/3", nonce) == "0/3"
    assert _marked(nonce.encode() + b":no_tests:\x1b[2J9/9", nonce) == "29/9"   # digits and / only


def test_a_syntax_error_is_what_passk_s_preload_says_not_what_the_program_prints(box):
    """Regression (issue 24, item 7): a JavaScript program that printed "SyntaxError" and exited 1 chose
    its own reason, `syntax_error`; the reason now comes from the marker passk's preload writes when the
    program does not parse."""
    from harness.containers.box.labels import SYNTAX_ERROR_MARK, _native_label
    report = _report(exit_code=1, stderr_tail=b"SyntaxError: Unexpected token ';'")
    assert _native_label(report, LIMITS, "run", True, SYNTAX_ERROR_MARK)[:2] == ("failed", "syntax_error")
    assert _native_label(report, LIMITS, "run", True, False)[:2] == ("failed", "runtime_error")


def test_an_allocation_failure_is_the_memory_limit_s_only_near_the_limit(box):
    """Regression (issue 24, item 7): "std::bad_alloc" (or any runtime's out-of-memory words) printed by a
    program that held almost nothing was `memory_limit`, so the audit blamed the limit."""
    from harness.containers.box.labels import _native_label
    words = b"terminate called after throwing an instance of 'std::bad_alloc'"
    small = _report(signal="SIGABRT", exit_code=None, stderr_tail=words, job_memory_peak_kb=3000)
    assert _native_label(small, LIMITS, "run", True, False)[:2] == ("failed", "runtime_error")
    near = _report(signal="SIGABRT", exit_code=None, stderr_tail=words, job_memory_peak_kb=400 * 1024)
    assert _native_label(near, LIMITS, "run", True, False)[:2] == ("failed", "memory_limit")


SERVER_VS_TSC = r'''
import json, os, subprocess, sys, tempfile
programs = json.loads(sys.argv[1])
server = subprocess.Popen(["node", "/opt/passk/tsc_server.js"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
assert json.loads(server.stdout.readline())["ready"]
out = []
for source in programs:
    server.stdin.write(json.dumps({"args": ["--target", "esnext"], "file": "main.ts", "source": source}) + "\n")
    server.stdin.flush()
    got = json.loads(server.stdout.readline())
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "main.ts"), "w") as f:
        f.write(source)
    cli = subprocess.run(["tsc", "--target", "esnext", "main.ts"], cwd=d, capture_output=True, text=True)
    js = os.path.join(d, "main.js")
    out.append({"server": [got["exit_code"], got["output"], got["files"].get("main.js")],
                "tsc": [cli.returncode, cli.stdout, open(js).read() if os.path.exists(js) else None],
                "library_checked": got.get("library_checked")})
print(json.dumps(out))
'''


@pytest.mark.docker
def test_the_typescript_compile_server_gives_what_tsc_gives(tmp_path):
    """Exit status, diagnostics and emitted JavaScript, program by program, against the tsc command in the
    same image, including programs whose global names meet the standard library's (checked in full)."""
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import ensure_image, ensure_language_image
    client = connect()
    image = ensure_language_image(client, ensure_image(client), "typescript")["image"]
    problem = json.loads((ROOT / "problems" / "lang-typescript" / "problems.jsonl").read_text().splitlines()[0])
    bodies = ["  return a + b;\n}\n", "  return 'x';\n}\n", "  return a +;\n}\n", "  return a + b;\n}\nlet q: number = 'no';\n",
              "  return a + b;\n}\ninterface String { length: string }\n", "  return a + b;\n}\nvar name: number = 3;\n",
              "  return a + b;\n}\nfunction escape(x: number) { return x; }\n",
              "  return a + b;\n}\nexport {};\ndeclare global { interface Array<T> { length: string } }\n",
              "  return (a as any).foo.bar;\n}\n", "  return a + b;\n}\nimport * as fs from 'fs';\n"]
    programs = [problem["prompt"] + b + "\n" + problem["tests"] for b in bodies]
    # Regression (issue 24, item 5): a triple-slash library reference that conflicts with the default
    # libraries (TS2403) passed through the server, which skipped the library check; tsc exits 2
    bodies.append("(reference lib webworker)")
    programs.append('/// <reference lib="webworker" />\n' + problem["prompt"] + bodies[0] + "\n" + problem["tests"])
    out = client.containers.run(image, ["-c", SERVER_VS_TSC, json.dumps(programs)], entrypoint="passk-python",
                                network_mode="none", remove=True, user="0")
    results = json.loads(out.decode().strip().splitlines()[-1])
    assert len(results) == len(programs)
    for body, r in zip(bodies, results):
        assert r["server"] == r["tsc"], (body, r)
    assert [r["server"][0] == 0 for r in results] == [True, False, False, False, False, False, False, False, True, False,
                                                      False]
    assert [r["library_checked"] for r in results][4:8] == [True, True, True, True]
    assert results[-1]["library_checked"] is True and results[-1]["tsc"][0] == 2


@pytest.mark.docker
@pytest.mark.parametrize("language", ["java", "rust"])
def test_the_demo_set_gets_its_exact_labels_under_gvisor(tmp_path, language):
    """Under runsc a pipe cannot be given to the candidate (the marker goes through a FIFO of its own), and
    a compile step can leave memory behind; neither may change a label (a regression: a Java compile that
    left something ended the job as `passed compiled`, its program never run)."""
    from dataclasses import replace
    from .conftest import _registered_runtimes
    if "runsc" not in _registered_runtimes():
        pytest.skip("runtime runsc is not registered with this Docker engine")
    samples = ROOT / "problems" / f"lang-{language}" / "samples.jsonl"
    expected = [json.loads(line) for line in samples.read_text().splitlines()]
    cfg = replace(_config(tmp_path, language, samples), sandbox=SandboxSettings(workers=2, runtime="runsc"))
    rows = _rows(evaluate(cfg, progress=False).out_dir)
    by_task: dict = {}
    for e in expected:
        by_task.setdefault(e["name"], []).append(e["expected"])
    for row in rows:
        got = row["status"] if row["status"] == "passed" else f"{row['status']} {row['reason']}"
        assert got == by_task[row["task_id"]][row["sample_index"]], (row["task_id"], row["sample_index"], row["detail"])


@pytest.mark.parametrize("source, used", [
    ("#include<assert.h>\n#include<bits/stdc++.h>\nlong f() {\n", True),                  # MultiPL-E's prompts
    ("// a comment\n\n#include <vector>\n#  include <bits/stdc++.h>  // all\nint x;\n", True),
    ("#include<assert.h>\nlong f() {\n", False),                                          # not included
    ("#define NDEBUG\n#include<assert.h>\n#include<bits/stdc++.h>\n", False),             # a macro first
    ("#include<assert.h>\n#define private public\n#include<bits/stdc++.h>\n", False),
    ("// continued \\\n#include<bits/stdc++.h>\n", False),                                # a comment's continuation
    ("/* x */\n#include<bits/stdc++.h>\n", False),
    ('#include "bits/stdc++.h"\n', False),
    ("int x;\n#include<bits/stdc++.h>\n", False),
])
def test_the_precompiled_header_is_used_only_where_the_program_starts_by_including_it(box, source, used):
    pch = {"header": "bits/stdc++.h", "args": ["-include", "/opt/passk/pch/stdc++.h"]}
    argv, applied = box.build.compile_argv(["g++", "main.cpp", "-o", "main"], pch, source)
    assert applied is used
    assert argv == (["g++", "-include", "/opt/passk/pch/stdc++.h", "main.cpp", "-o", "main"] if used
                    else ["g++", "main.cpp", "-o", "main"])
    assert box.build.compile_argv(["g++", "main.cpp"], None, source) == (["g++", "main.cpp"], False)


PCH_VS_GXX = r'''
import json, os, subprocess, sys
out = []
for i, program in enumerate(json.loads(sys.argv[1])):
    open("/tmp/p.cpp", "w").write(program)
    got = []
    for extra in ([], ["-include", "/opt/passk/pch/stdc++.h", "-H"]):
        c = subprocess.run(["g++", *extra, "/tmp/p.cpp", "-o", "/tmp/p", "-std=c++17"], capture_output=True, text=True)
        r = subprocess.run(["/tmp/p"], capture_output=True, text=True) if c.returncode == 0 else None
        errors = [l for l in c.stderr.splitlines() if "error:" in l]
        got.append([c.returncode, errors, r and [r.returncode, r.stdout]])
        if os.path.exists("/tmp/p"):
            os.remove("/tmp/p")
    out.append({"plain": got[0], "pch": got[1], "used": "! /opt/passk/pch/stdc++.h.gch" in c.stderr})
print(json.dumps(out))
'''


@pytest.mark.docker
def test_the_precompiled_header_is_valid_for_the_default_flags_and_changes_no_outcome(tmp_path):
    """In the C++ image: g++ takes the precompiled header (it is not silently ignored for a flag mismatch),
    and programs that start the way MultiPL-E's do compile to the same errors and run to the same exit
    code and output with it as without it, with the same compile errors; then through passk, the row
    says whether it was used."""
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import ensure_image, ensure_language_image
    client = connect()
    image = ensure_language_image(client, ensure_image(client), "cpp")["image"]
    head = "#include<assert.h>\n#include<bits/stdc++.h>\n"
    bodies = ["int main() { std::vector<int> v{3, 1, 2}; std::sort(v.begin(), v.end()); printf(\"%d\\n\", v[0]); }\n",
              "int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }\nint main() { printf(\"%d\\n\", gcd(12, 18)); }\n",
              "using namespace std;\nint count = 3;\nint main() { assert(count == 4); }\n",
              "int main() { std::vector<int> v = 3; }\n",
              "int main() { assert(1 + 1 == 2); std::cout << std::gcd(4, 6) << std::endl; return 7; }\n"]
    programs = [head + b for b in bodies]
    out = client.containers.run(image, ["-c", PCH_VS_GXX, json.dumps(programs)], entrypoint="passk-python",
                                network_mode="none", remove=True, user="0")
    results = json.loads(out.decode().strip().splitlines()[-1])
    assert all(r["used"] for r in results), results
    for body, r in zip(bodies, results):
        assert r["plain"][0] == r["pch"][0] and r["plain"][2] == r["pch"][2], (body, r)
        assert [e.split("error:")[-1] for e in r["plain"][1]] == [e.split("error:")[-1] for e in r["pch"][1]], (body, r)
    assert [r["plain"][0] == 0 for r in results] == [True, True, False, False, True]
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"name": "demo_add", "completion": "    return a + b;\n}\n"},
        {"name": "demo_add", "solution": "#define PASSK_FIRST 1\n#include<assert.h>\n#include<bits/stdc++.h>\n"
                                         "long add(long a, long b) {\n    return a + b;\n"}])   # the tests close it
    outcome = evaluate(_config(tmp_path, "cpp", samples, workers=1), progress=False)
    rows = _rows(outcome.out_dir)
    assert [(r["status"], r["channel_detail"].get("precompiled_header")) for r in rows] == [
        ("passed", "used"), ("passed", "not_used")], rows
    assert rows[0]["limits"]["commands"]["precompiled_header"] == {
        "when_included": "bits/stdc++.h", "compile_args": ["-include", "/opt/passk/pch/stdc++.h"]}


SERVER_VS_COMMAND = r'''
import base64, json, os, subprocess, sys, tempfile
spec = json.loads(sys.argv[1])
os.makedirs("/tmp/w", exist_ok=True)
server = subprocess.Popen(spec["server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
assert json.loads(server.stdout.readline())["ready"]
out = []
for program in spec["programs"]:
    server.stdin.write(json.dumps({"args": spec["args"], "file": spec["file"], "source_b64": program}) + "\n")
    server.stdin.flush()
    got = json.loads(server.stdout.readline())
    d = tempfile.mkdtemp()
    with open(os.path.join(d, spec["file"]), "wb") as f:
        f.write(base64.b64decode(program))
    cli = subprocess.run(spec["command"], cwd=d, capture_output=True, text=True, env={**os.environ, **spec["env"]})
    files = {}
    for root, _, names in os.walk(d):
        for n in names:
            if n != spec["file"]:
                path = os.path.join(root, n)
                files[os.path.relpath(path, d)] = base64.b64encode(open(path, "rb").read()).decode()
    out.append({"server": [got["exit_code"], got["output"], got["files_b64"]],
                "command": [cli.returncode, cli.stderr + cli.stdout, files]})
print(json.dumps(out))
'''


def _server_vs_command(language, programs, same_bytes=True):
    """Each program through the language's compile server (as the supervisor starts it, its arguments as
    the supervisor sends them) and through the compile command, in the same image: [(server, command)],
    each [exit status, output, {file: base64}] (without the bytes where a compiler's output is not
    reproducible: mcs writes a new module id each time)."""
    import base64
    from harness.execution.sandbox.docker import connect
    from harness.execution.sandbox.images import ensure_image, ensure_language_image
    client = connect()
    image = ensure_language_image(client, ensure_image(client), language)["image"]
    lang = languages.LANGUAGES[language]
    spec = {"server": [a.replace("{workdir}", "/tmp/w").replace("{memory_mb}", "1024") for a in lang.server],
            "args": list(lang.compile[1:-1]) + list(lang.server_args), "file": lang.source,
            "command": list(lang.compile), "env": lang.env,
            "programs": [base64.b64encode(p).decode() for p in programs]}
    out = client.containers.run(image, ["-c", SERVER_VS_COMMAND, json.dumps(spec)], entrypoint="passk-python",
                                network_mode="none", remove=True, user="0")
    results = json.loads(out.decode().strip().splitlines()[-1])
    assert len(results) == len(programs)
    if not same_bytes:
        for r in results:
            for side in ("server", "command"):
                r[side][2] = sorted(r[side][2])
    return results


def _bodies_in(language, bodies, glued=False):
    """demo_add of the language's demo set with each body; `glued`: with its tests as passk glues them."""
    problem = json.loads((ROOT / "problems" / f"lang-{language}" / "problems.jsonl").read_text().splitlines()[0])
    tests = problem["tests"]
    if glued:
        tests = languages.glue(language, problem["name"], problem["prompt"], tests)[0].replace(MARKER_PLACEHOLDER, "0" * 32)
    return [(problem["prompt"] + b + tests).encode() for b in bodies]


@pytest.mark.docker
def test_the_java_compile_server_gives_what_javac_gives():
    """Exit status, diagnostics and class files (byte for byte), program by program, against the javac
    command in the same image: compile errors, warnings, inner and extra classes, a package, bytes that are
    not UTF-8, a program that uses javatuples."""
    problem = json.loads((ROOT / "problems" / "lang-java" / "problems.jsonl").read_text().splitlines()[0])
    programs = _bodies_in("java", [
        "        return a + b;\n", "        return a +;\n", "        return \"x\";\n",
        "        List l = new ArrayList(); l.add(1); return a + b;\n",             # unchecked: a note, exit 0
        "        Runnable r = () -> {}; class In { int v = 1; } return a + b + new In().v - 1;\n",
        "        Pair<Long, Long> p = Pair.with(a, b); return p.getValue0() + p.getValue1();\n",
        "        String s = \"caf\u00e9 \\u00e9\"; return a + b;\n",
        "        return a + b; } static int x() { return undefined_name;\n"])
    programs.append(b"package p;\nclass Problem { public static void main(String[] a) {} }\n")
    programs.append((problem["prompt"] + "        String s = \"").encode() + b"\xff\xfe" + (
        "\"; return a + b;\n" + problem["tests"]).encode())                                 # not UTF-8: an error
    results = _server_vs_command("java", programs)
    for program, r in zip(programs, results):
        assert r["server"] == r["command"], (program[-300:], r["server"][:2], r["command"][:2])
    assert [r["server"][0] == 0 for r in results] == [True, False, False, True, True, True, True, False, True, False]
    assert "p/Problem.class" in results[8]["server"][2]


@pytest.mark.docker
def test_the_scala_compile_server_gives_what_scalac_gives():
    """The same for Scala's server against the scalac command: errors, a warning, extra and inner classes, a
    package, a program the standard library's collections and BigInt serve, bytes that are not UTF-8."""
    problem = json.loads((ROOT / "problems" / "lang-scala" / "problems.jsonl").read_text().splitlines()[0])
    programs = _bodies_in("scala", [
        "        a + b\n", "        a +\n", "        \"x\"\n",
        "        val xs = scala.collection.mutable.ArrayBuffer(a, b); BigInt(xs.sum).toLong\n",
        "        case class P(x: Long); def f(p: Any) = p match { case P(v) => v }; f(P(a)) + b\n",
        "        1 match { case _: Int => }; a + b\n",
        "        undefined_name + a\n"])
    programs.append(b"package p\nobject Problem { def main(a: Array[String]): Unit = () }\n")
    programs.append((problem["prompt"] + "        val s = \"").encode() + b"\xff\xfe" + ("\"; a + b\n" + problem["tests"]).encode())
    results = _server_vs_command("scala", programs)
    for program, r in zip(programs, results):
        assert r["server"] == r["command"], (program[-300:], r["server"][:2], r["command"][:2])
    assert [r["server"][0] == 0 for r in results] == [True, False, False, True, True, True, False, True, False]
    assert "p/Problem.class" in results[7]["server"][2]


@pytest.mark.docker
def test_the_csharp_compile_server_gives_what_mcs_gives():
    """The same for C#'s server against the mcs command (output file names, not bytes: mcs writes a new
    module id each time): errors, a warning, LINQ and BigInteger, bad arguments' absence of a Main."""
    programs = _bodies_in("csharp", [
        "        return a + b;\n", "        return a +;\n", "        return \"x\";\n",
        "        int unused = 0; return a + b;\n",
        "        return new List<long> { a, b }.Select(x => (long) new BigInteger(x)).Sum();\n",
        "        return undefined_name + a;\n"], glued=True)
    programs.append(b"class Problem { static void Main() {} }\n")                  # no PasskMain: an error
    results = _server_vs_command("csharp", programs, same_bytes=False)
    for program, r in zip(programs, results):
        assert r["server"] == r["command"], (program[-300:], r["server"][:2], r["command"][:2])
    assert [r["server"][0] == 0 for r in results] == [True, False, False, True, True, False, False]
    assert results[0]["server"][2] == ["main.exe"]


_GO_WRONG = "func add(a int, b int) int {\n    return a - b\n}\n"
_GO_SKIPPERS = {
    "appends -test.run=^$ to os.Args in init()":
        "package add_test\n\nimport (\n    \"os\"\n    \"testing\"\n    \"fmt\"\n)\n\n"
        "func init() {\n    os.Args = append(os.Args, \"-test.run=^$\")\n}\n\n" + _GO_WRONG,
    "appends -test.list=X to os.Args in init()":
        "package add_test\n\nimport (\n    \"os\"\n    \"testing\"\n    \"fmt\"\n)\n\n"
        "func init() {\n    os.Args = append(os.Args, \"-test.list=X\")\n}\n\n" + _GO_WRONG,
    "calls testing.Init() and flag.Set(\"test.run\", \"^$\") in init()":
        "package add_test\n\nimport (\n    \"flag\"\n    \"testing\"\n    \"fmt\"\n)\n\n"
        "func init() {\n    testing.Init()\n    flag.Set(\"test.run\", \"^$\")\n}\n\n" + _GO_WRONG,
    "keeps setting test.run from a goroutine":
        "package add_test\n\nimport (\n    \"flag\"\n    \"testing\"\n    \"fmt\"\n)\n\n"
        "func init() {\n    testing.Init()\n    go func() {\n        for {\n            flag.Set(\"test.run\", \"^$\")\n"
        "        }\n    }()\n}\n\n" + _GO_WRONG,
}


@pytest.mark.docker
def test_a_go_panic_longer_than_the_kept_tail_is_a_runtime_error(tmp_path):
    """Regression (issue 24, item 7): a panic whose message is longer than the 2 KB tail that is kept
    pushed `panic: ` out of it, and the `--- FAIL` left in it made the label `assertion`."""
    code = ("package add_test\n\nimport (\n    \"strings\"\n    \"testing\"\n    \"fmt\"\n)\n\n"
            "func add(a int, b int) int {\n    panic(strings.Repeat(\"y\", 5000))\n}\n")
    rows = [{"name": "demo_add", "solution": code}]
    outcome = evaluate(_config(tmp_path, "go", write_jsonl(tmp_path / "s.jsonl", rows), workers=1), progress=False)
    row = _rows(outcome.out_dir)[0]
    assert (row["status"], row["reason"]) == ("failed", "runtime_error"), row["detail"][:200]


@pytest.mark.docker
def test_go_passes_only_when_its_tests_ran(tmp_path):
    """Regression (issue 24, item 1): a wrong Go program that made the test binary run no test (a filter
    appended to os.Args, or set with flag.Set, in init()) was `passed`: m.Run() returned 0 and the marker
    was written. The tests' functions are now counted under names the candidate cannot know, and the test
    flags reset before they run: each of these fails, and an honest program still passes."""
    honest = "package add_test\n\nimport (\n    \"testing\"\n    \"fmt\"\n)\n\nfunc add(a int, b int) int {\n    return a + b\n}\n"
    rows = [{"name": "demo_add", "solution": honest, "attack": "honest"}] + \
           [{"name": "demo_add", "solution": code, "attack": name} for name, code in _GO_SKIPPERS.items()]
    outcome = evaluate(_config(tmp_path, "go", write_jsonl(tmp_path / "s.jsonl", rows), workers=1), progress=False)
    got = {r["sample"]["attack"]: (r["status"], r["reason"], r["detail"]) for r in _rows(outcome.out_dir)}
    assert got.pop("honest")[:2] == ("passed", "tests_completed")
    for name, (status, reason, detail) in got.items():
        assert status == "failed" and reason in ("no_tests", "assertion"), (name, status, reason, detail)


_TS_ADD = "function add(a: number, b: number): number {\n"


@pytest.mark.docker
def test_the_typescript_server_carries_no_memory_to_the_next_candidate(tmp_path):
    """Regression (issue 24, item 3): a correct program with a 2.1M-element array literal compiled within
    its limits but left the compile server holding ~1 GB, and the next candidate, which passes alone, was
    killed by the container's OOM killer at ~220 MB of its own: `failed memory_limit`. A server holding
    more than it may keep is now replaced after the compile, and the container has room for what it keeps."""
    literal = "const passkBig: number[] = [" + "0," * 2_100_000 + "];\n"
    big = _TS_ADD + "  return a + b + passkBig.length * 0;\n}\n" + literal
    holds = _TS_ADD + "  const keep: any[] = [];\n  for (let i = 0; i < 380; i++) keep.push(new Uint8Array(1 << 20).fill(1));\n" \
                      "  return a + b + keep.length * 0;\n}\n"
    rows = [{"name": "demo_add", "solution": big}, {"name": "demo_add", "solution": holds}]
    outcome = evaluate(_config(tmp_path, "typescript", write_jsonl(tmp_path / "s.jsonl", rows), workers=1,
                               compile_timeout_s=60.0), progress=False)
    got = [(r["status"], r["reason"], r["detail"][:200]) for r in sorted(_rows(outcome.out_dir), key=lambda r: r["sample_index"])]
    assert [g[:2] for g in got] == [("passed", "tests_completed")] * 2, got


@pytest.mark.docker
def test_a_compile_output_larger_than_the_jobs_space_is_the_candidates_failure(tmp_path):
    """Regression (issue 24, item 4): a TypeScript program whose `const enum` inlines into more JavaScript
    than the job's /tmp holds made writing it fail with ENOSPC: `error infrastructure` on every attempt.
    It is now the compile's failure (as tsc's own write would be), and the next candidate passes."""
    uses = ", ".join(["E.A"] * 12_000)
    inlined = _TS_ADD + "  return a + b + passkUses.length * 0;\n}\nconst enum E { A = \"" + "x" * 1000 + "\" }\n" \
        f"const passkUses = [{uses}];\n"
    honest = _TS_ADD + "  return a + b;\n}\n"
    rows = [{"name": "demo_add", "solution": inlined}, {"name": "demo_add", "solution": honest}]
    outcome = evaluate(_config(tmp_path, "typescript", write_jsonl(tmp_path / "s.jsonl", rows), workers=1,
                               tmpfs_mb=8), progress=False)
    got = [(r["status"], r["reason"], r["detail"][:300]) for r in sorted(_rows(outcome.out_dir), key=lambda r: r["sample_index"])]
    assert got[0][:2] == ("failed", "compile_error") and "space" in got[0][2], got
    assert got[1][:2] == ("passed", "tests_completed"), got


def test_the_tests_checks_are_ones_the_candidates_code_cannot_reach():
    """What the glue makes of the tests' checks (issue 24, item 2): Java's asserts as explicit throws (none
    a class's assertion status can switch off), only where the statement is one parenthesised expression;
    Rust's assertion macros by their path in std; node's assert by passk's preload's name."""
    java, _ = languages.glue("java", "t", "class Problem {\n", "    public static void main(String[] args) {\n"
                             "    assert(f((\"a)\")) == (1l));\n    assert (a) == (b);\n"
                             "    assert(x == 1) : \"m\";\n    assert(g(':'));\n    }\n}\n")
    assert java.splitlines()[1:5] == ['    if (!(f(("a)")) == (1l))) throw new java.lang.AssertionError();',
                                      "    assert (a) == (b);", '    assert(x == 1) : "m";',
                                      "    if (!(g(':'))) throw new java.lang.AssertionError();"]
    rust, _ = languages.glue("rust", "t", "", "}\nfn main() {\n    assert_eq!(f(1), 2);\n    assert!(g());\n"
                                             "    ::std::assert_ne!(1, 2);\n}\n")
    assert "    ::std::assert_eq!(f(1), 2);" in rust and "    ::std::assert!(g());" in rust
    assert "::std::::std::" not in rust and "fn main() {\n    passk_tests_" in rust
    js, _ = languages.glue("javascript", "t", "", "const assert = require('node:assert');\ntest();\n")
    name = f"passk$assert${MARKER_PLACEHOLDER}"
    assert js.startswith(f"const assert = (typeof {name} === 'undefined' ? require('node:assert') : {name});")
    ts, _ = languages.glue("typescript", "t", "", "declare var require: any;\nconst assert = require(\"assert\");\n")
    assert ts.startswith(f"declare var {name}: any;\n") and f": {name});" in ts


@pytest.mark.docker
@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_node_starts_from_its_snapshot_and_the_program_sees_what_plain_node_shows(tmp_path, language):
    """The run step starts node from the image's start-up snapshot (issue 25): the program is still the main
    module under its own name, node's preload still ran first, and each run draws its own random numbers
    (a snapshot that froze Math.random's state would give every candidate the same ones)."""
    body = ("  if (require.main !== module || !process.argv[1].endsWith('main.js')) throw new Error('not its own view');\n"
            "  if (!process.execArgv.includes('--snapshot-blob')) throw new Error('not from the snapshot');\n"
            "  if (!Object.getOwnPropertyNames(globalThis).some(n => n.startsWith('passk$assert$'))) "
            "throw new Error('no preload');\n"
            "  console.log('random ' + Math.random());\n  return a + b;\n}\n")
    if language == "typescript":
        code = "declare var require: any;\ndeclare var module: any;\ndeclare var process: any;\n" + _TS_ADD + body
    else:
        code = "function add(a, b) {\n" + body
    prompt_free = [{"name": "demo_add", "solution": code}] * 2
    outcome = evaluate(_config(tmp_path, language, write_jsonl(tmp_path / "s.jsonl", prompt_free), workers=1),
                       progress=False)
    rows = _rows(outcome.out_dir)
    assert [(r["status"], r["reason"]) for r in rows] == [("passed", "tests_completed")] * 2, [r["detail"] for r in rows]
    assert rows[0]["limits"]["commands"]["run"][:3] == ["node", "--snapshot-blob", "/opt/passk/node-startup.blob"]
    draws = {r["stdout_tail"].strip() for r in rows}
    assert len(draws) == 2 and all(d.startswith("random 0.") for d in draws), draws


def test_elixirs_scheduler_options_apply_under_gvisor_only():
    """+sbwt none saves the BEAM's spinning where every spin is a trapped syscall (gVisor); under runc the
    command runs as MultiPL-E runs it: each runtime's jobs get their own environment, in MultiPL-E's channel
    and the io channel."""
    from harness.inputs import judge
    elixir = languages.LANGUAGES["elixir"]
    assert "ELIXIR_ERL_OPTIONS" not in languages.run_env(elixir, "runc")
    assert languages.run_env(elixir, "runsc")["ELIXIR_ERL_OPTIONS"].startswith("+sbwt none")
    assert "ELIXIR_ERL_OPTIONS" not in judge.io_build("elixir", "IO.puts 1", {}, 1.0, 256)["env"]
    assert "ELIXIR_ERL_OPTIONS" in judge.io_build("elixir", "IO.puts 1", {}, 1.0, 256, runtime="runsc")["env"]
    assert languages.run_env(languages.LANGUAGES["csharp"], "runsc") == {"MONO_TRACE_LISTENER": "Console.Error"}


def test_elixirs_tests_run_once():
    """ExUnit.start() also runs the suite as the program exits: passk's glue starts it without that run, so
    its own ExUnit.run() is the only one (before, a second, empty run followed every passing program)."""
    problem = json.loads((ROOT / "problems" / "lang-elixir" / "problems.jsonl").read_text().splitlines()[0])
    tests, _ = languages.glue("elixir", problem["name"], problem["prompt"], problem["tests"])
    assert tests.count("ExUnit.start(autorun: false)") == 1 and "ExUnit.start()" not in tests
    assert tests.count("ExUnit.run()") == 1
