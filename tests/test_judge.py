"""The judge: io programs in any language, the problem's own limits, checkers outside the candidate's reach,
groups and scores, Kattis packages, Codeforces and Code-Contests-Plus rows. The pure parts (the default
validator, the checkers' protocol tables, grading, the format readers, verify's rules) run without Docker;
the rest against the real engine."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.errors import InputError
from harness.containers.box.checkers import default_validator, parse_default_flags, program_verdict
from harness.inputs.judge import Checker, Group, JudgeSpec, JudgeTest, io_build, io_language, java_main_class
from harness.inputs.grading import grade

ROOT = Path(__file__).resolve().parent.parent
KATTIS = ROOT / "problems" / "kattis"


# ---------------------------------------------------------------------------------------------------------
# the default validator (Kattis's), on whatever a candidate writes
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("output, answer, flags, verdict", [
    (b"Hello, World!\n", b"Hello, World!\n", (), "ok"),
    (b"  hello,   WORLD!", b"Hello, World!\n", (), "ok"),                       # whitespace and ASCII case
    (b"ZO\xc3\x8b", "Zoë".encode(), (), "wrong_answer"),                           # case is ASCII's A-Z only
    (b"hello", b"Hello", ("case_sensitive",), "wrong_answer"),
    (b"1 2", b"1  2", ("space_change_sensitive",), "wrong_answer"),
    (b"1  2\n", b"1  2\n", ("space_change_sensitive",), "ok"),
    (b"1 2 3", b"1 2", (), "wrong_answer"),                                        # more tokens
    (b"1", b"1 2", (), "wrong_answer"),
    (b"0.3333334", b"0.333333333", ("float_tolerance", "1e-6"), "ok"),
    (b"0.334", b"0.333333333", ("float_tolerance", "1e-6"), "wrong_answer"),
    (b"1000001", b"1000000", ("float_relative_tolerance", "1e-6"), "ok"),
    (b"nan", b"nan", ("float_tolerance", "1e-6"), "wrong_answer"),                # NaN is within nothing
    (b"inf", b"1e308", ("float_tolerance", "1e-6"), "wrong_answer"),
    (b"inf", b"inf", ("float_tolerance", "1e-6"), "ok"),
    (b"0x1p-2", b"0.25", ("float_tolerance", "1e-6"), "wrong_answer"),            # not a decimal
    (b"\x00\xff\xfe garbage", b"1", (), "wrong_answer"),                          # binary output
    (b"42", b"42\n", (), "ok"),                                                    # no trailing newline
    (b"", b"", (), "ok"),
])
def test_default_validator(output, answer, flags, verdict):
    assert default_validator(output, answer, flags)[0] == verdict


def test_default_validator_flags_that_are_wrong_are_named():
    for flags in (("float_tolerance",), ("float_tolerance", "x"), ("bogus",),
                  ("float_tolerance", "1", "float_absolute_tolerance", "1")):
        with pytest.raises(ValueError):
            parse_default_flags(flags)


def test_default_validator_on_a_large_output_is_bounded_and_linear():
    big = b"7 " * 2_000_000
    assert default_validator(big, b"7", ())[0] == "wrong_answer"


# ---------------------------------------------------------------------------------------------------------
# the checker protocols' tables
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol, code, stdout, stderr, feedback, expected", [
    ("kattis", 42, b"", b"", {}, ("ok", None)),
    ("kattis", 43, b"", b"", {"judgemessage.txt": b"no"}, ("wrong_answer", None)),
    ("kattis", 0, b"", b"", {}, ("judge_error", None)),                    # 0 is not a verdict
    ("kattis", 1, b"", b"Traceback", {}, ("judge_error", None)),
    ("kattis", 42, b"", b"", {"score.txt": b"17.5\n"}, ("ok", 17.5)),
    ("kattis", 43, b"", b"", {"score.txt": b"1"}, ("judge_error", None)),  # a score on a wrong answer
    ("testlib", 0, b"", b"ok", {}, ("ok", None)),
    ("testlib", 1, b"", b"wrong answer", {}, ("wrong_answer", None)),
    ("testlib", 2, b"", b"", {}, ("presentation_error", None)),
    ("testlib", 3, b"", b"FAIL", {}, ("judge_error", None)),
    ("testlib", 7, b"", b"points 0.25 half", {}, ("points", 0.25)),
    ("testlib", 7, b"", b"nothing", {}, ("judge_error", None)),
    ("testlib", 139, b"", b"", {}, ("judge_error", None)),
    ("python", 0, b"1\n", b"", {}, ("ok", None)),
    ("python", 0, b"0\n", b"", {}, ("wrong_answer", None)),
    ("python", 0, b"0.5\n", b"", {}, ("points", 0.5)),
    ("python", 0, b"yes\n", b"", {}, ("judge_error", None)),
    ("python", 1, b"1\n", b"", {}, ("judge_error", None)),
])
def test_checker_protocols(protocol, code, stdout, stderr, feedback, expected):
    verdict, _, score = program_verdict(protocol, code, None, stdout, stderr, feedback)
    assert (verdict, score) == expected


def test_a_checker_killed_by_a_signal_is_a_judge_error():
    assert program_verdict("kattis", None, "SIGSEGV", b"", b"", {})[0] == "judge_error"


# ---------------------------------------------------------------------------------------------------------
# groups and scores: a pure function of the recorded tests
# ---------------------------------------------------------------------------------------------------------
def _spec(groups, per_group, scoring=True):
    tests = tuple(JudgeTest("", "", f"{g}/{i}", g) for g, n in enumerate(per_group) for i in range(n))
    return JudgeSpec(tests, 1.0, groups=tuple(groups), scoring=scoring)


def test_grading_legacy_min_groups_with_accept_scores():
    spec = _spec([Group("sample", sample=True), Group("s1", aggregation="min", accept_score=40),
                  Group("s2", aggregation="min", accept_score=60)], [1, 2, 2])
    tests = [{"group": 0, "verdict": "ok"}, {"group": 1, "verdict": "ok"}, {"group": 1, "verdict": "ok"},
             {"group": 2, "verdict": "ok"}, {"group": 2, "verdict": "time_limit"}]
    score, groups = grade(spec, tests)
    assert score == 0.4
    assert [g["verdict"] for g in groups] == ["ok", "ok", "time_limit"]
    assert groups[1]["score"] == 40 and groups[2]["score"] == 0 and "score" not in groups[0]


def test_grading_2023_sum_min_pass_fail_and_require_pass():
    spec = _spec([Group("g1", aggregation="pass-fail", max_score=20),
                  Group("g2", aggregation="sum", max_score=30),
                  Group("g3", aggregation="min", max_score=50, require_pass=("g1",))], [1, 3, 1])
    tests = [{"group": 0, "verdict": "wrong_answer"}, {"group": 1, "verdict": "ok"}, {"group": 1, "verdict": "ok"},
             {"group": 1, "verdict": "points", "score": 0.5}, {"group": 2, "verdict": "ok"}]
    score, groups = grade(spec, tests)
    assert groups[0]["score"] == 0 and groups[1]["score"] == 25 and groups[2]["score"] == 0   # g1 failed
    assert score == 0.25


def test_grading_skipped_tests_count_as_rejected_and_pass_fail_has_no_score():
    spec = _spec([Group("g", aggregation="sum", max_score=100)], [4])
    assert grade(spec, [{"group": 0, "verdict": "ok"}, {"group": 0, "verdict": "wrong_answer"}])[0] == 0.25
    plain = _spec([Group("secret")], [2], scoring=False)
    assert grade(plain, [{"group": 0, "verdict": "ok"}])[0] is None


def test_grading_a_validators_raw_scores_without_a_maximum_are_not_normalised():
    spec = _spec([Group("g", aggregation="sum")], [2])
    score, groups = grade(spec, [{"group": 0, "verdict": "ok", "score": 3.0}, {"group": 0, "verdict": "ok", "score": 4.0}])
    assert score is None and groups[0]["score"] == 7.0 and groups[0]["max"] is None


# ---------------------------------------------------------------------------------------------------------
# languages, formats, verify
# ---------------------------------------------------------------------------------------------------------
def test_io_languages_and_builds():
    assert io_language("C++") == "cpp" and io_language("gnu c") == "c" and io_language("PyPy3") == "pypy"
    with pytest.raises(InputError, match="not one passk runs"):
        io_language("cobol")
    assert java_main_class("import x;\npublic class Solve {\n public static void main(String[] a) {}\n}") == "Solve"
    assert java_main_class("class A {}\nclass B {\n  public static void main(String[] a) {}\n}") == "B"
    build = io_build("java", "public class Solve {}", {"timeout_s": 30}, 1.0, 256)
    assert build["source"] == "Solve.java" and "-Xss256m" in build["steps"][-1]["argv"]
    assert io_build("python", "print(1)", {}, 1.0, 256) is None
    assert "-DONLINE_JUDGE" in io_build("cpp", "", {}, 1.0, 256)["steps"][0]["argv"]


def test_kattis_packages_are_read_unchanged():
    from harness.inputs.problems import load_problems, peek_format
    assert peek_format(KATTIS) == "kattis"
    problems = load_problems(KATTIS)
    assert set(problems) == {"hello", "mean", "anypair", "guess", "triangle"}
    assert problems["guess"].judge.interactive and problems["guess"].judge.checker.protocol == "kattis"
    hello, mean, anypair, triangle = (problems[t].judge for t in ("hello", "mean", "anypair", "triangle"))
    assert (hello.time_limit_s, hello.time_source, hello.memory_mb, hello.output_mb) == (1.0, ".timelimit", 256, 8)
    assert hello.checker.protocol == "default" and [g.name for g in hello.groups] == ["sample", "secret"]
    assert mean.time_source == "problem.yaml time_limit" and mean.tests[-1].flags == ("float_tolerance", "1e-6")
    assert anypair.checker.protocol == "kattis" and anypair.checker.language == "python"
    assert triangle.scoring and triangle.time_source == "inferred"
    assert [(g.name, g.aggregation, g.accept_score) for g in triangle.groups[1:]] == \
        [("secret/1-small", "min", 40.0), ("secret/2-large", "min", 60.0)]


def test_a_kattis_package_is_told_apart_from_passks_layout(tmp_path):
    from harness.inputs.problems import load_problems, peek_format
    assert peek_format(ROOT / "problems" / "native" / "problems") == "native"
    broken = tmp_path / "pkg"
    (broken / "data" / "secret").mkdir(parents=True)
    (broken / "problem.yaml").write_text("limits: [1\n")
    with pytest.raises(InputError, match=r"problem.yaml:\d+: invalid YAML"):
        load_problems(broken)
    (broken / "problem.yaml").write_text("name: x\nvalidation: custom interactive\n")
    with pytest.raises(InputError, match="no output_validators/ directory"):
        load_problems(broken)
    (broken / "problem.yaml").write_text("problem_format_version: 2023-07-draft\nname: x\ntype: multi-pass\n")
    with pytest.raises(InputError, match="multi-pass"):
        load_problems(broken)
    (broken / "problem.yaml").write_text("name: x\n")
    with pytest.raises(InputError, match="no tests"):
        load_problems(broken)


def test_kattis_submissions_are_samples_with_their_expected_verdict():
    from harness.inputs.problems import load_problems
    from harness.inputs.samples import load_samples
    samples = load_samples(KATTIS, load_problems(KATTIS))
    hello = {s.extra["file"]: s for s in samples if s.task_id == "hello"}
    assert hello["hello/submissions/accepted/Hello.java"].language == "java"
    assert hello["hello/submissions/accepted/hello.c"].language == "c"
    assert hello["hello/submissions/time_limit_exceeded/spin.py"].extra["expected"] == "time_limit_exceeded"


def test_codeforces_and_code_contests_plus_rows():
    from harness.inputs.problems import load_problems
    cf = load_problems(ROOT / "problems" / "codeforces" / "problems.jsonl")
    assert cf["9001/A"].format == "codeforces" and cf["9001/A"].judge.checker.protocol == "python"
    assert cf["9001/B"].judge.file_io == ("input.txt", "output.txt")
    assert cf["9001/C"].judge.checker.flags == ("case_sensitive",)
    cc = load_problems(ROOT / "problems" / "code-contests-plus" / "problems.jsonl")
    assert cc["CCP-1"].judge.time_limit_s == 1.0 and cc["CCP-1"].judge.checker.protocol == "testlib"


def test_a_testlib_checker_without_its_header_is_refused_by_name(jsonl, monkeypatch):
    from harness.inputs.problems import load_problems
    monkeypatch.delenv("PASSK_TESTLIB", raising=False)
    path = jsonl("cc.jsonl", [{"id": "x", "time_limit": 1000, "memory_limit": 256, "test_cases": [{"input": "1", "output": "1"}],
                               "checker": '#include "testlib.h"\nint main() {}\n'}])
    with pytest.raises(InputError, match="PASSK_TESTLIB"):
        load_problems(path)


def test_sample_languages(jsonl):
    from harness.inputs.problems import load_problems
    from harness.inputs.samples import load_samples
    problems = load_problems(ROOT / "problems" / "codecontests" / "problems.jsonl")
    task = next(iter(problems))
    path = jsonl("s.jsonl", [{"task_id": task, "solution": "x", "language": 2}, {"task_id": task, "solution": "x", "language": 4},
                             {"task_id": task, "solution": "x", "language": "Rust"}, {"task_id": task, "solution": "x"}])
    assert [s.language for s in load_samples(path, problems)] == ["cpp", "java", "rust", None]
    bad = jsonl("b.jsonl", [{"task_id": task, "solution": "x", "language": 1}])
    with pytest.raises(InputError, match="language code 1"):
        load_samples(bad, problems)


def test_verify_rules():
    from harness.records.results import ResultRow
    from harness.scoring.verify import check

    def row(expected, status, reason, score=None):
        return ResultRow("t", 0, status, reason, sample={"expected": expected, "file": "f"}, score=score)
    cases = [row("accepted", "passed", "tests_completed"), row("accepted", "passed", "tests_completed", 0.5),
             row("wrong_answer", "failed", "wrong_answer"), row("wrong_answer", "timed_out", "time_limit"),
             row("time_limit_exceeded", "timed_out", "time_limit"), row("run_time_error", "failed", "memory_limit"),
             row("partially_accepted", "failed", "wrong_answer", 0.4), row("partially_accepted", "failed", "wrong_answer", 0.0)]
    assert [e["agrees"] for e in check(cases)] == [True, False, True, False, True, True, True, False]


def test_judge_limits_and_run_limits():
    from harness.execution.jobs import judge_limits, run_limits
    from harness.inputs.config import Limits
    from harness.inputs.problem import Problem
    spec = JudgeSpec((JudgeTest("1", "1"),), 1.5, memory_mb=768, output_mb=16)
    limits = judge_limits(Limits(), spec)
    assert (limits.cpu_time_s, limits.timeout_s, limits.memory_mb, limits.output_bytes) == (3, 4.0, 768, 16 << 20)
    base = run_limits(Limits(memory_mb=256), [Problem("t", "", "", None, channel="io", judge=spec)])
    assert base.memory_mb == 768 and base.output_bytes == 16 << 20


# ---------------------------------------------------------------------------------------------------------
# against the real engine
# ---------------------------------------------------------------------------------------------------------
def _run(problem, programs, **options):
    import harness
    from harness.execution.jobs import Job
    from harness.inputs.samples import Sample
    with harness.Evaluator(workers=2, **options) as ev:
        futures = [ev.submit_job(Job(problem, Sample(problem.task_id, i, code, "solution", "test", language=lang)))
                   for i, (lang, code) in enumerate(programs)]
        return [f.result() for f in futures]


def _problem(tests, **spec):
    from harness.inputs.problem import Problem
    return Problem("judged", "", "", None, channel="io", format="test",
                   judge=JudgeSpec(tuple(JudgeTest(i, o, f"t{n}") for n, (i, o) in enumerate(tests)), **spec))


SUM = [("1 2\n", "3\n"), ("10 -4\n", "6\n"), ("0 0\n", "0\n")]
CPP_SUM = "#include <cstdio>\nint main() { long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a + b); }\n"


@pytest.mark.docker
def test_io_in_every_language_with_the_problems_limits():
    rows = _run(_problem(SUM, time_limit_s=1.0, memory_mb=256), [
        ("python", "a, b = map(int, input().split())\nprint(a + b)\n"),
        ("cpp", CPP_SUM),
        ("c", "#include <stdio.h>\nint main(void) { long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a + b); return 0; }\n"),
        ("java", "import java.util.*;\npublic class Sum {\n  public static void main(String[] x) {\n    Scanner s = new Scanner(System.in);\n"
                 "    System.out.println(s.nextLong() + s.nextLong());\n  }\n}\n"),
        ("cpp", "int main() { this does not compile }\n"),
        ("python", "while True:\n    pass\n"),
        ("cpp", "#include <vector>\nint main() { std::vector<char> v; while (true) v.resize(v.size() + (64 << 20), 1); }\n"),
        ("python", "a, b = map(int, input().split())\nprint(a - b)\n"),
        ("cpp", "#include <cstdio>\nint main() { for (;;) puts(\"flood flood flood flood\"); }\n"),
        ("python", "import time\ntime.sleep(30)\n"),
    ])
    got = [(r.status, r.reason, r.language) for r in rows]
    assert got == [("passed", "tests_completed", "python"), ("passed", "tests_completed", "cpp"),
                   ("passed", "tests_completed", "c"), ("passed", "tests_completed", "java"),
                   ("failed", "compile_error", "cpp"), ("timed_out", "time_limit", "python"),
                   ("failed", "memory_limit", "cpp"), ("failed", "wrong_answer", "python"),
                   ("failed", "output_limit", "cpp"), ("timed_out", "time_limit", "python")]
    passed = rows[1]
    assert [t["verdict"] for t in passed.tests] == ["ok", "ok", "ok"] and all("time_s" in t for t in passed.tests)
    assert passed.limits["time_limit_s"] == 1.0 and passed.limits["wall_limit_s"] == 3.0
    assert passed.limits["commands"]["compile"][0] == "g++" and passed.limits["stack_mb"] == 256
    assert rows[5].tests[0]["time_s"] > 1.0          # CPU time decided it, past the limit
    assert rows[9].tests[0]["time_s"] < 0.5          # a program that waits: the wall-clock backstop


# A sum on stdin and stdout in each of MultiPL-E's other languages (issue 35), run in its own image
SUM_IN = {
    "lua": "local a, b = io.read('n', 'n')\nprint(a + b)\n",
    "ruby": "a, b = gets.split.map(&:to_i)\nputs a + b\n",
    "php": "<?php\n[$a, $b] = array_map('intval', preg_split('/\\s+/', trim(fgets(STDIN))));\necho $a + $b, \"\\n\";\n",
    "perl": "my ($a, $b) = split ' ', <STDIN>;\nprint $a + $b, \"\\n\";\n",
    "r": "x <- scan(file('stdin'), quiet = TRUE)\ncat(x[1] + x[2], '\\n', sep = '')\n",
    "bash": "read a b\necho $((a + b))\n",
    "racket": "#lang racket\n(define a (read))\n(define b (read))\n(displayln (+ a b))\n",
    "scala": "object Sum {\n  def main(args: Array[String]): Unit = {\n"
             "    val Array(a, b) = scala.io.StdIn.readLine().trim.split(\" +\").map(_.toLong)\n    println(a + b)\n  }\n}\n",
    "csharp": "using System;\nclass P { static void Main() { var t = Console.ReadLine().Split(' '); "
              "Console.WriteLine(long.Parse(t[0]) + long.Parse(t[1])); } }\n",
    "d": "import std.stdio;\nvoid main() { long a, b; readf(\" %d %d\", a, b); writeln(a + b); }\n",
    "elixir": "[a, b] = IO.read(:stdio, :line) |> String.split() |> Enum.map(&String.to_integer/1)\nIO.puts(a + b)\n",
    "clojure": "(let [[a b] (map #(Long/parseLong %) (clojure.string/split (clojure.string/trim (read-line)) #\" +\"))]\n"
               "  (println (+ a b)))\n",
    "haskell": "main :: IO ()\nmain = do\n  [a, b] <- fmap (map read . words) getLine :: IO [Integer]\n  print (a + b)\n",
    "ocaml": "let () = Scanf.scanf \" %d %d\" (fun a b -> print_int (a + b); print_newline ())\n",
    "ada": "with Ada.Text_IO; use Ada.Text_IO;\nwith Ada.Long_Long_Integer_Text_IO; use Ada.Long_Long_Integer_Text_IO;\n"
           "procedure Main is\n   A, B : Long_Long_Integer;\nbegin\n   Get (A);\n   Get (B);\n   Put (A + B, Width => 0);\n"
           "   New_Line;\nend Main;\n",
}


def test_every_language_passk_runs_has_an_io_build():
    from harness.inputs import judge, languages
    assert set(languages.LANGUAGES) <= set(judge.IO_LANGUAGES)
    for name in SUM_IN:
        build = judge.io_build(name, SUM_IN[name], {}, 1.0, 256)
        assert build["language"] == name and build["steps"][-1]["step"] == "run"
    assert judge.io_build("scala", SUM_IN["scala"], {}, 1.0, 256)["steps"][-1]["argv"][-1] == "Sum"


@pytest.mark.docker
@pytest.mark.parametrize("language", sorted(SUM_IN))
def test_io_in_multipl_e_s_other_languages(language):
    # room for the slowest start (Clojure's JVM and its core, ~1.5 s of CPU) on a loaded day
    rows = _run(_problem(SUM, time_limit_s=6.0, memory_mb=512), [(language, SUM_IN[language]),
                                                                (language, SUM_IN[language].replace("+", "-", 1))])
    got = [(r.status, r.reason, r.language) for r in rows]
    assert got[0] == ("passed", "tests_completed", language), rows[0].detail
    assert got[1][:2] in (("failed", "wrong_answer"), ("failed", "compile_error"), ("failed", "runtime_error")), got


@pytest.mark.docker
def test_a_recursive_solution_that_needs_a_deep_stack_is_accepted():
    deep = ("#include <bits/stdc++.h>\nstd::vector<std::vector<int>> kids;\nint depth(int v) { int best = 0;\n"
            "  for (int c : kids[v]) best = std::max(best, depth(c));\n  return best + 1; }\n"
            "int main() { int n; scanf(\"%d\", &n); kids.assign(n, {});\n"
            "  for (int i = 0; i + 1 < n; i++) kids[i].push_back(i + 1);\n  printf(\"%d\\n\", depth(0)); }\n")
    rows = _run(_problem([("1000000\n", "1000000\n")], time_limit_s=2.0, memory_mb=256), [("cpp", deep)])
    assert (rows[0].status, rows[0].reason) == ("passed", "tests_completed"), rows[0].detail


@pytest.mark.docker
def test_checker_programs_run_outside_the_candidates_reach():
    pair = ("import sys\nn = int(open(sys.argv[1]).read())\nt = sys.stdin.read().split()\n"
            "ok = len(t) == 2 and all(x.isdigit() for x in t) and int(t[0]) + int(t[1]) == n and min(map(int, t)) > 0\n"
            "open(sys.argv[3] + 'judgemessage.txt', 'w').write('fine' if ok else 'not a pair')\nsys.exit(42 if ok else 43)\n")
    kattis = Checker("kattis", language="python", files=(("v.py", pair),))
    tests = [("5\n", "1 4\n"), ("9\n", "1 8\n")]
    rows = _run(_problem(tests, time_limit_s=1.0, checker=kattis), [
        ("python", "n = int(input())\nprint(2, n - 2)\n"),
        ("python", "n = int(input())\nprint(0, n)\n"),
        # the candidate cannot reach the checker's files or its feedback directory
        ("python", "import glob, os\nn = int(input())\nseen = glob.glob('/tmp/passk/*/c/*') + glob.glob('/tmp/passk/checkers/*/*')\n"
                   "print(*((2, n - 2) if not seen and not os.access('/tmp/passk', os.W_OK) else (0, n)))\n"),
    ])
    assert [(r.status, r.reason) for r in rows] == [("passed", "tests_completed"), ("failed", "wrong_answer"),
                                                   ("passed", "tests_completed")]
    assert rows[1].tests[0]["feedback"]["judgemessage.txt"] == "not a pair"
    crashing = Checker("kattis", language="python", files=(("v.py", "raise SystemExit(1)\n"),))
    slow = Checker("kattis", language="python", files=(("v.py", "while True:\n    pass\n"),), time_s=1.0)
    for checker in (crashing, slow):
        row = _run(_problem(tests, time_limit_s=1.0, checker=checker), [("python", "print(1, 4)\n")])[0]
        assert (row.status, row.reason) == ("error", "judge_error"), row.detail


@pytest.mark.docker
def test_a_testlib_checker_is_compiled_once_and_runs_in_any_image():
    checker = ("#include <cstdio>\nint main(int argc, char** argv) {\n  FILE* o = fopen(argv[2], \"r\"); FILE* a = fopen(argv[3], \"r\");\n"
               "  long long x, y; if (fscanf(o, \"%lld\", &x) != 1) return 2; fscanf(a, \"%lld\", &y);\n"
               "  if (x == y) return 0;\n  if (x == y - 1) { fprintf(stderr, \"points 0.5 close\\n\"); return 7; }\n  return 1; }\n")
    testlib = Checker("testlib", language="cpp", files=(("checker.cpp", checker),))
    rows = _run(_problem(SUM, time_limit_s=1.0, checker=testlib, scoring=True,
                         groups=(Group("all", aggregation="sum", max_score=100),)), [
        ("python", "a, b = map(int, input().split())\nprint(a + b)\n"),
        ("cpp", CPP_SUM),
        ("python", "a, b = map(int, input().split())\nprint(a + b - 1)\n"),
        ("python", "print('words')\n"),
    ])
    assert [(r.status, r.reason) for r in rows] == [("passed", "tests_completed"), ("passed", "tests_completed"),
                                                   ("failed", "partial_score"), ("failed", "presentation_error")]
    assert rows[2].score == 0.5 and rows[0].score == 1.0
    assert rows[0].limits["checker"]["protocol"] == "testlib"


@pytest.mark.docker
def test_a_package_of_more_tests_than_a_row_keeps_whole_is_graded_on_all_of_them():
    # regression: a 3,000-test package's last 1,000 were graded as never run (its group 'skipped', a score
    # counting them rejected) because a row kept only 2,000 tests
    from harness.inputs.judge import MAX_TESTS_KEPT
    n = MAX_TESTS_KEPT + 100
    tests = [(f"{i} {i}\n", f"{2 * i}\n") for i in range(n)]
    rows = _run(_problem(tests, time_limit_s=1.0, scoring=True, groups=(Group("all", aggregation="sum", max_score=100),)), [
        ("cpp", CPP_SUM),
        ("cpp", CPP_SUM.replace("a + b);", f"a + b + (a == {n - 1}));")),   # wrong on the last test only
    ])
    assert [r.status for r in rows] == ["passed", "failed"]
    assert rows[0].score == 1.0 and rows[0].groups[0]["verdict"] == "ok" and rows[0].groups[0]["accepted"] == n
    assert rows[1].score == round((n - 1) / n, 6) and rows[1].groups[0]["accepted"] == n - 1
    assert len(rows[0].tests) == n and set(rows[0].tests[-1]) <= {"i", "group", "verdict", "score"}


@pytest.mark.docker
def test_file_mode_cleans_up_between_tests():
    tests = [("1\n", "1\n"), ("2\n", "2\n")]
    rows = _run(_problem(tests, time_limit_s=1.0, file_io=("input.txt", "output.txt")), [
        ("python", "open('output.txt', 'w').write(open('input.txt').read())\n"),
        # a program that reads what an earlier test left beside it: it is gone
        ("python", "import os\nopen('output.txt', 'w').write(open('input.txt').read())\n"
                   "if os.path.exists('seen'):\n    open('output.txt', 'w').write('leaked')\nopen('seen', 'w').write('x')\n"),
        ("python", "import os\nos.symlink('/etc/passwd', 'output.txt')\n"),
    ])
    assert [(r.status, r.reason) for r in rows] == [("passed", "tests_completed"), ("passed", "tests_completed"),
                                                   ("failed", "wrong_answer")]


@pytest.mark.docker
def test_pypy_runs_python_programs_when_asked():
    rows = _run(_problem(SUM, time_limit_s=1.0), [("python", "import sys\na, b = map(int, input().split())\n"
                                                             "print(a + b if 'PyPy' in sys.version else 'cpython')\n")],
                python="pypy")
    assert (rows[0].status, rows[0].language) == ("passed", "pypy")


@pytest.mark.docker
def test_passk_verify_agrees_with_every_kattis_submissions_directory(tmp_path):
    out = tmp_path / "verify"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "verify", str(KATTIS), "--out", str(out), "--quiet",
                           "--k", "1", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    entries = json.loads(proc.stdout)   # --json: the JSON alone on stdout, the run's summary on stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(entries) == 31 and all(e["agrees"] for e in entries)
    assert all(e["agrees"] for e in entries if e["file"].startswith("guess/"))   # the interactive package
    score = json.loads((out / "score.json").read_text())
    assert score["score"]["per_task"]["triangle"]["mean"] == pytest.approx((2 + 2 * 41 / 101) / 5)   # the sample scores 1, as in problemtools
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["time_limits"]["triangle"]["time_limit_s"] == 1.0


@pytest.mark.docker
@pytest.mark.parametrize("runtime, isolation", [("runc", "pooled"), ("runc", "fresh"), ("runsc", "fresh")])
def test_the_judges_hostile_table(runtime, isolation):
    # regressions: a flooding interactive candidate that died writing to the pipe its interactor had closed was
    # labelled by its own crash (the two exits were seen in the other order); a daemon of one test's program
    # must not live into the next test of the job (the judge kills by uid between tests)
    from harness.execution.sandbox.docker import connect
    if runtime not in {"runc", *(connect().info().get("Runtimes") or {})}:
        pytest.skip(f"runtime {runtime} is not registered with this Docker engine")
    from tests.judge_attacks import JUDGE_ATTACKS
    sys.path.insert(0, str(ROOT))
    from scripts.attacks.judge_attacks import run
    got = [(a.name, (row.status, row.reason)) for a, row in run(runtime, isolation)]
    assert got == [(a.name, a.expected(runtime)) for a in JUDGE_ATTACKS]


def test_a_problem_file_is_parsed_once_on_the_way_to_the_jobs(tmp_path, monkeypatch):
    # the run reads a file's format and language from its first record, then loads it: a JSON file was parsed
    # three times (peek_format, peek_language, the load)
    from harness.inputs import formats
    from harness.inputs.problems import load_problems, peek_format, peek_language
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"task_id": "t/0", "prompt": "def f():\n", "test": "def check(c):\n    pass\n",
                                 "entry_point": "f"}]))
    parsed = []
    real = formats.read_json
    monkeypatch.setattr(formats, "read_json", lambda p: parsed.append(p) or real(p))
    assert peek_format(path) == "humaneval" and peek_language(path) == "python"
    assert list(load_problems(path)) == ["t/0"]
    assert len(parsed) == 1


@pytest.mark.docker
def test_audit_reruns_what_a_judged_problems_limits_decided(tmp_path):
    # a program that needs about 1.5 s of CPU under a 1 s limit: timed out; with the limits x3 it passes
    pkg = tmp_path / "slow"
    (pkg / "data" / "secret").mkdir(parents=True)
    (pkg / "problem.yaml").write_text("name: Slow\n")
    (pkg / ".timelimit").write_text("1\n")
    (pkg / "data" / "secret" / "1.in").write_text("1\n")
    (pkg / "data" / "secret" / "1.ans").write_text("1\n")
    (pkg / "submissions" / "time_limit_exceeded").mkdir(parents=True)
    (pkg / "submissions" / "time_limit_exceeded" / "slow.py").write_text(
        "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end:\n    pass\nprint(input())\n")
    out = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "harness.cli", "evaluate", "--problems", str(pkg), "--out", str(out), "--quiet",
                    "--k", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    row = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
    assert (row["status"], row["reason"], row["limits"]["time_limit_s"]) == ("timed_out", "time_limit", 1.0)
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "audit", str(out), "--factors", "3", "--format", "json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    audit = json.loads(proc.stdout)
    flips = audit["relaxed"][0]["flips"]
    assert audit["limit_decided"] == 1 and [(f["from"], f["to"]) for f in flips] == [("timed_out", "passed")], proc.stderr


DEEP_VALIDATOR = r"""
#include <stdio.h>
#include <stdlib.h>
/* a validator that recurses 400,000 deep (about 40 MB of stack) before it judges, as NWERC 2023's
   higherarithmetic's does: it needs a stack as large as its memory, not the 8 MB default */
static long deep(long k) { volatile char pad[64]; pad[0] = (char)k; if (k == 0) return 0; return deep(k - 1) + (pad[0] & 1); }
int main(int argc, char **argv) {
    long n, a, b; FILE *in = fopen(argv[1], "r");
    if (!in || fscanf(in, "%ld", &n) != 1) return 1;
    if (deep(400000) < 0) return 1;
    if (scanf("%ld %ld", &a, &b) != 2 || a < 1 || b < 1 || a + b != n) return 43;
    return 42;
}
"""


@pytest.mark.docker
def test_a_build_run_validator_is_run_as_problemtools_runs_it(tmp_path):
    # regressions (NWERC 2023's higherarithmetic): a package's files arrive without their modes, so a `run`
    # the package ships was not executable after the build ('the build script made no executable run', the
    # package refused); and a validator that recursed deeper than 8 MB of stack crashed with SIGSEGV, which
    # made every submission judge_error
    import shutil
    package = tmp_path / "anypair"
    shutil.copytree(KATTIS / "anypair", package)
    shutil.rmtree(package / "output_validators" / "pair")
    validator = package / "output_validators" / "deep"
    validator.mkdir()
    (validator / "deep.c").write_text(DEEP_VALIDATOR)
    (validator / "build").write_text("#!/bin/sh\ngcc -O2 -o deep deep.c\n")
    (validator / "run").write_text('#!/bin/sh\nexec "${0%/*}/deep" "$@"\n')
    for name in ("build", "run", "deep.c"):
        (validator / name).chmod(0o644)
    out = tmp_path / "verify"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "verify", str(package), "--out", str(out), "--quiet",
                           "--k", "1", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = json.loads(proc.stdout)
    assert len(entries) == 4 and all(e["agrees"] for e in entries), entries
