"""The io channel, as a judge runs it: a program in any language passk runs reads each test's input (stdin,
or input.txt in file mode) and its output is judged where the candidate cannot reach: compared here by the
problem's rule, or by the problem's checker (checkers.py) run as CHECKER_UID after every process of the
candidate's is gone. Another language's program is compiled once (the compile step's limits apart from
the run's), then its binary is run once per test, in the same warm container.

The runner records facts (CPU and wall time, peak memory, exit status or signal, bytes written) per test;
the verdict is a function of them, the limits and the checker's answer (labels.py, judged_label below).
A job's `judge` block (absent for today's io formats, whose labels are as before) holds the problem's own
limits and checker:

    time_limit_s   CPU seconds per test (time_limit when a test used more; the wall-clock backstop,
                   timeout_s of the run's limits, is recorded beside it)
    checker        {protocol, flags, program: {path, run argv}}: checkers.py's protocols
    file_io        {input, output}: the program reads and writes these files in its directory instead
    groups         [{on_reject}]: a test's `group` indexes it; "break" skips the rest of that group
                   after a rejected test, "continue" runs them; without groups the first rejected test ends
    stop           "first" (pass-fail: the first rejected test decides) or "groups" (every group is judged)
    capture        N bytes: no checker; each test's stdout (its first N bytes) and stderr tail come back in the
                   result's `captured` (passk serve's /run_code: the caller compares, not the judge)

Every test's result is kept (bounded) in the result's `tests`; the host aggregates groups and scores."""

import base64
import hashlib
import os
import stat
import time

from .checkers import by_rule, default_validator, program_verdict
from .interact import interact
from .cleanup import remove_tree
from .files import _private_dir, _write_file
from .labels import _io_label, _native_label
from .layout import CANDIDATE_UID, CHECKER_UID, WORK_ROOT
from .procs import _uid_pids, kill_uid
from .protocol import COMPARE_RULES, IO_RUNNER_FILE, IO_TOTAL_FACTOR
from .text import clean_text
from .verdicts import FINAL, REJECTIONS, feedback_files, judged_label, stall_detail, stalled

MAX_TESTS_KEPT = 2000        # per-test results kept whole in one row (the rest: verdict and score)
EMIT_LIMIT = 64 << 20        # a compiled checker's size
CHECKER_DIR = os.path.join(WORK_ROOT, "checkers")   # checkers by content hash, kept for the container's life
class IoJob:
    """One candidate's io job: its directory, its compiled program, then its tests."""

    def __init__(self, sup, job):
        self.sup, self.job = sup, job
        self.limits = job["limits"]
        self.judge = job.get("judge")
        self.build = job.get("build")
        self.tests = job.get("tests") or []
        self.rule = job.get("compare", "strict")
        if self.rule not in COMPARE_RULES:
            raise ValueError(f"unknown comparison rule {self.rule!r}")
        self.jobdir = sup._new_jobdir()
        self.p_dir = os.path.join(self.jobdir, "p")
        _private_dir(self.p_dir, CANDIDATE_UID)
        self.detail = {"compare": self.rule}
        self.clean = True
        self.program = None   # (argv, env) of a compiled or interpreted program; None: Python's io run
        self.runner = "script"
        self.captured = []    # capture mode: what the program printed, per test

    # -- the program -------------------------------------------------------------------------------
    def prepare(self):
        """Write the program and compile it once. A result dict when it does not compile, else None."""
        job = self.job
        if self.build is None:
            _write_file(os.path.join(self.p_dir, "program.py"), job["code"], CANDIDATE_UID)
            # an io program runs as a script, or as APPS's grader runs it
            self.runner = "apps_stdin" if job.get("runner") == "apps_stdin" else "script"
            if self.runner != "script":
                _write_file(os.path.join(self.p_dir, IO_RUNNER_FILE), '{"runner": "apps_stdin"}', CANDIDATE_UID)
            self.detail["runner"] = self.runner
            return None
        build = self.build
        self.detail["language"] = clean_text(build.get("language", ""), 40)
        _write_file(os.path.join(self.p_dir, build["source"]), job["code"], CANDIDATE_UID)
        for name, text in (build.get("files") or {}).items():   # headers, other sources, include/ files
            _write_file(self._place(name), text, CANDIDATE_UID)
        env = {str(k): str(v).replace("{dir}", self.p_dir) for k, v in (build.get("env") or {}).items()}
        *compile_steps, run = build["steps"]
        for index, step in enumerate(compile_steps):
            limits = step.get("limits") or self.limits
            name = step.get("step", f"step{index}")
            with open(os.devnull, "wb") as null:
                report = self.sup.watcher.run(self.p_dir, limits, "exec", program=(list(step["argv"]), env),
                                              marker_fd=os.dup(null.fileno()))[0]
            self.clean = self.clean and bool(report["clean"])
            self.detail[f"{name}_s"] = round(max(0.0, report["end"] - report["start"]), 3)
            self.detail[f"{name}_cpu_s"] = report["cpu_s"]
            status, reason, text = _native_label(report, limits, name, False, False, build.get("language"))
            if status != "passed":
                if self.judge is not None and reason != "machine_stall":   # a judge's name for any compile that did not make a program
                    status, text = "failed", f"{reason}: {text}" if reason != "compile_error" else text
                    reason = "compile_error"
                return self._result(status, reason, text, report, [])
        self.program = (list(run["argv"]), env)
        return None

    def _place(self, name):
        """Where a file of the build goes: a relative path inside the program's directory (its directories
        made, the candidate's), never out of it."""
        parts = name.split("/") if isinstance(name, str) else []
        if not parts or any(p in ("", ".", "..") or p.startswith(".") for p in parts) or len(parts) > 8:
            raise ValueError(f"bad file name {str(name)[:80]!r}")
        where = self.p_dir
        for part in parts[:-1]:
            where = os.path.join(where, part)
            if not os.path.isdir(where):
                _private_dir(where, CANDIDATE_UID)
        return os.path.join(where, parts[-1])

    # -- one test ----------------------------------------------------------------------------------
    def run_test(self, case):
        """Run the program on one test: the watcher's report and the program's output (bytes)."""
        limits = self.limits
        file_io = (self.judge or {}).get("file_io")
        stdin = case.get("input", "")
        if file_io:
            self._reset_files(file_io)
            _write_file(os.path.join(self.p_dir, file_io["input"]), stdin, CANDIDATE_UID)
            stdin = ""
        if self.program is None:
            report = self.sup.watcher.run(self.p_dir, limits, "io", stdin=stdin)[0]
            report["python"] = True
        else:
            report = self.sup.watcher.run(self.p_dir, limits, "exec_io", stdin=stdin, program=self.program)[0]
            report["python"] = False
        self.clean = self.clean and bool(report["clean"])
        self._no_leftovers(report)
        output = report["stdout"] or b""
        if file_io:
            output = self._read_output(file_io["output"], limits["output_bytes"])
            if output is None:
                output = b""
                report["missing_output"] = True
        return report, output

    def _no_leftovers(self, report):
        """Nothing of one test's run may live into the next test's (a daemon that writes the next output):
        the forkserver kills what it knows of, and this makes sure, by uid (a scan of /proc, most of a tiny
        test's own cost), unless the forkserver proved it under runc's kernel: it reaped the program as its
        subreaper and had no child left ("alone"). Under gVisor (limits' nproc) an orphan can be reparented
        after its parent's end was reported, so the scan always runs. A process that cannot be killed ends
        the job: the container is replaced and the candidate run again."""
        if report.get("alone") and not self.limits.get("nproc"):
            return
        if _uid_pids(CANDIDATE_UID) and not kill_uid(CANDIDATE_UID):
            raise RuntimeError("a candidate's process outlived its test and could not be killed")

    def _reset_files(self, file_io):
        """In file mode no test sees what an earlier one left: every file the program wrote beside its own is
        removed, and the test's input written anew."""
        keep = self._program_files
        for entry in os.listdir(self.p_dir):
            if entry not in keep:
                remove_tree(os.path.join(self.p_dir, entry), time.monotonic() + 2.0)

    def _read_output(self, name, limit):
        """The output file the program wrote (a regular file of the candidate's, never a link), bounded."""
        try:
            fd = os.open(os.path.join(self.p_dir, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != CANDIDATE_UID:
                return None
            return os.read(fd, limit + 1)
        finally:
            os.close(fd)

    def _read_tree(self, limit):
        """{relative path: bytes} of the regular files (never links) under the program's directory, at
        most `limit` bytes together and 256 files; None past that."""
        out, total = {}, 0
        for top, dirs, names in os.walk(self.p_dir):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d))]
            for name in names:
                rel = os.path.relpath(os.path.join(top, name), self.p_dir)
                data = self._read_output(rel, limit - total)
                if data is None:
                    continue
                total += len(data)
                if total > limit or len(out) >= 256:
                    return None
                out[rel] = data
        return out

    # -- checking ----------------------------------------------------------------------------------
    def check(self, case, output):
        """(verdict, detail, score, feedback) of a test's output."""
        checker = (self.judge or {}).get("checker")
        answer = case.get("output", "")
        answer_b = answer.encode("utf-8", "surrogateescape") if isinstance(answer, str) else answer
        if checker is None or checker.get("protocol") == "rule":
            return by_rule((checker or {}).get("rule", self.rule), output, answer_b) + ({},)
        protocol = checker["protocol"]
        if protocol == "default":
            try:
                return default_validator(output, answer_b, list(checker.get("flags") or ()) + list(case.get("flags") or ())) + ({},)
            except ValueError as e:
                return "judge_error", f"the default validator's flags: {e}", None, {}
        return self._run_checker(checker, case, output, answer_b)

    def _run_checker(self, checker, case, output, answer):
        """A checker program of the problem's, as CHECKER_UID, in a directory only it can enter."""
        program = self._checker_program(checker)
        if isinstance(program, str):
            return "judge_error", program, None, {}
        paths, feedback = self._checker_dir(case.get("input", ""), answer, output)
        c_dir = os.path.dirname(paths["input"])
        protocol = checker["protocol"]
        flags = [str(f) for f in (checker.get("flags") or ())] + [str(f) for f in (case.get("flags") or ())]
        if protocol == "kattis":
            args, stdin = [paths["input"], paths["answer"], feedback + "/", *flags], output
        elif protocol == "testlib":
            args, stdin = [paths["input"], paths["output"], paths["answer"]], b""
        else:   # python (open-r1's rows): input, the correct output, the solution's output
            args, stdin = [paths["input"], paths["answer"], paths["output"]], b""
        argv, env = program
        limits = dict(checker.get("limits") or self.limits)
        report = self.sup.watcher.run(c_dir, limits, "exec_io", stdin=stdin, program=(argv + args, env),
                                      uid=CHECKER_UID)[0]
        self.clean = self.clean and bool(report["clean"])
        files = feedback_files(feedback)
        if stalled(report):
            return "machine_stall", stall_detail(report, "the checker"), None, files
        if report["timed_out"] or report["signal"] == "SIGXCPU":
            return "judge_error", "the checker ran out of time", None, files
        if report.get("memory_exceeded") or report["memory_pressure"]:
            return "judge_error", "the checker ran out of memory", None, files
        if report["output_exceeded"]:
            return "judge_error", "the checker wrote more than its output limit", None, files
        verdict, detail, score = program_verdict(protocol, report["exit_code"], report["signal"],
                                                 report["stdout"] or b"", report["stderr_tail"], files)
        return verdict, detail, score, files

    def _checker_dir(self, input_text, answer, output):
        """A fresh directory only CHECKER_UID may enter, with the test's input, answer and the candidate's
        output (when there is one), and an empty feedback directory."""
        c_dir = os.path.join(self.jobdir, "c")
        if os.path.isdir(c_dir):
            remove_tree(c_dir, time.monotonic() + 2.0)
        _private_dir(c_dir, CHECKER_UID)
        feedback = os.path.join(c_dir, "feedback")
        _private_dir(feedback, CHECKER_UID)
        paths = {}
        for name, data in (("input", input_text), ("answer", answer), ("output", output)):
            if data is None:
                continue
            paths[name] = os.path.join(c_dir, name)
            _write_file(paths[name], data, CHECKER_UID, 0o400)
        return paths, feedback

    def interactive_test(self, case):
        """One test of an interactive problem (interact.py): (report, verdict, detail, score, feedback)."""
        checker = self.judge["checker"]
        answer = case.get("output", "")
        paths, feedback = self._checker_dir(case.get("input", ""), answer, None)
        report, verdict, detail, score, files, facts = interact(self, case, checker, paths, feedback)
        if report is not None:
            self.clean = self.clean and bool(report["clean"])
            report.update(facts)
        return report, verdict, detail, score, files

    def _checker_program(self, checker):
        """(argv, env) of the checker, its files written once per container (by content hash, readable by
        CHECKER_UID alone); a string when it cannot run here (a judge error)."""
        spec = checker.get("program") or {}
        files = spec.get("files") or {}
        digest = spec.get("sha256") or hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()
        where = os.path.join(CHECKER_DIR, digest[:32])
        if not os.path.isdir(where):
            if not os.path.isdir(CHECKER_DIR):
                os.mkdir(CHECKER_DIR, 0o755)
            os.mkdir(where, 0o750)
            os.chown(where, 0, CHECKER_UID)
            for name, value in files.items():
                parts = name.split("/") if isinstance(name, str) else []
                if not parts or len(parts) > 8 or any(p in ("", ".", "..") for p in parts):
                    return "the checker names a bad file"
                place = where
                for part in parts[:-1]:
                    place = os.path.join(place, part)
                    if not os.path.isdir(place):
                        os.mkdir(place, 0o750)
                        os.chown(place, 0, CHECKER_UID)
                data = base64.b64decode(value) if spec.get("base64") else value
                _write_file(os.path.join(place, parts[-1]), data, 0, 0o750)
                os.chown(os.path.join(place, parts[-1]), 0, CHECKER_UID)
        argv = [a.replace("{dir}", where) for a in spec.get("argv") or ()]
        if not argv:
            return "the checker has no command"
        return argv, {}

    # -- the job -----------------------------------------------------------------------------------
    def run(self):
        failed = self.prepare()
        if failed is not None:
            return failed
        if (self.judge or {}).get("emit"):   # a checker's build: the compiled program, not a run
            if self.judge["emit"] == "*":     # a build/run directory: every file the build left
                files = self._read_tree(EMIT_LIMIT)
                if files is None:
                    return self._result("failed", "compile_error", "the build left more than the limit", None, [])
                result = self._result("passed", "compiled", f"{len(files)} files", None, [])
                result["artifact_files_b64"] = {k: base64.b64encode(v).decode() for k, v in files.items()}
                return result
            data = self._read_output(self.judge["emit"], EMIT_LIMIT)
            if data is None or len(data) > EMIT_LIMIT:
                return self._result("failed", "compile_error", "the compile made no program", None, [])
            result = self._result("passed", "compiled", f"{len(data)} bytes", None, [])
            result["artifact_b64"] = base64.b64encode(data).decode()
            return result
        self._program_files = set(os.listdir(self.p_dir))
        if not self.tests:
            return self._result("error", "problem_error", "an io problem with no tests", None, [])
        judged = self.judge is not None
        time_limit = float((self.judge or {}).get("time_limit_s") or self.limits["timeout_s"])
        groups = (self.judge or {}).get("groups") or [{"on_reject": "break"}]
        stop = (self.judge or {}).get("stop", "first")
        total_limit = IO_TOTAL_FACTOR * self.limits["timeout_s"] * (max(1, len(self.tests)) if judged else 1)
        results, wall, first_bad, partial, skip_group = [], 0.0, None, None, set()
        captured = self.captured
        report = None
        for index, case in enumerate(self.tests):
            group = case.get("group", 0) if isinstance(case.get("group", 0), int) else 0
            if group in skip_group:
                results.append({"i": index, "verdict": "skipped", "group": group,
                                **({"name": clean_text(case["name"], 80)} if case.get("name") else {})})
                continue
            if wall >= total_limit:   # each test has its limits; all of them together, this many
                verdict, detail = ("time_limit" if judged else "wall_time_limit"), \
                    f"test {index}: the tests together ran past {total_limit:g} s"
                results.append({"i": index, "verdict": verdict, "group": group})
                first_bad = first_bad or (index, verdict, detail, None)
                break
            if (self.judge or {}).get("interactive"):
                report, verdict, detail, score, feedback = self.interactive_test(case)
                if report is None:   # the interactor cannot run here: nothing of the candidate's ran
                    results.append({"i": index, "group": group, "verdict": verdict, "detail": clean_text(detail, 300)})
                    first_bad = first_bad or (index, verdict, detail, None)
                    break
            else:
                report, output = self.run_test(case)
            wall += report["end"] - report["start"]
            entry = {"i": index, "group": group, "time_s": report["cpu_s"],
                     "wall_s": round(max(0.0, report["end"] - report["start"]), 4),
                     "memory_kb": max(report.get("job_memory_peak_kb") or 0, report.get("peak_memory_kb") or 0)}
            if case.get("name"):
                entry["name"] = clean_text(case["name"], 80)
            if (self.judge or {}).get("interactive"):
                if feedback:
                    entry["feedback"] = {clean_text(k, 40): clean_text(v.decode("utf-8", "replace"), 500)
                                         for k, v in list(feedback.items())[:4]}
                for key in ("interactor_cpu_s", "interactor_exit", "interactor_signal"):
                    if report.get(key) is not None:
                        entry[key] = report[key]
            elif judged:
                verdict, detail = judged_label(report, self.limits, time_limit)
                if self.judge.get("capture"):
                    captured.append(_captured(report, output, int(self.judge["capture"])))
                if verdict == "ok" and report.get("missing_output"):
                    verdict, detail = "wrong_answer", f"no {self.judge['file_io']['output']} written"
            else:   # today's io formats: their labels and rules, as before
                status, reason, detail = _io_label(report, self.limits, output, case, self.rule, index)
                verdict = "ok" if status == "passed" else reason
            score = score if (self.judge or {}).get("interactive") else None
            if judged and verdict == "ok" and not self.judge.get("interactive") and not self.judge.get("capture"):
                verdict, detail, score, feedback = self.check(case, output)
                if feedback:
                    entry["feedback"] = {clean_text(k, 40): clean_text(v.decode("utf-8", "replace"), 500)
                                         for k, v in list(feedback.items())[:4]}
            entry["verdict"] = verdict
            if score is not None:
                entry["score"] = score
            if detail and verdict != "ok":
                entry["detail"] = clean_text(detail, 300)
            results.append(entry)
            if verdict == "ok" or (verdict == "points" and score is not None and score >= 1):
                continue
            if verdict == "points":   # accepted with part of the test's points: not a full pass
                partial = partial or (index, "partial_score", f"{score:g} of the test's points", report)
                if stop != "first":
                    continue
                verdict, detail = "partial_score", f"{score:g} of the test's points"
            if first_bad is None:
                first_bad = (index, verdict, detail, report)
            if verdict in FINAL or stop == "first":
                break
            if (groups[group] if group < len(groups) else groups[-1]).get("on_reject", "break") == "break":
                skip_group.add(group)
        first_bad = first_bad or partial
        if first_bad is None:
            return self._result("passed", "tests_completed", f"{len(self.tests)} of {len(self.tests)} tests", report,
                                results)
        index, verdict, detail, bad_report = first_bad
        if judged:
            status = REJECTIONS.get(verdict, "failed")
            text = f"test {index}" + (f" ({clean_text(self.tests[index].get('name'), 80)})" if self.tests[index].get("name") else "") \
                + f": {detail}"
        else:
            status = "timed_out" if verdict in ("wall_time_limit", "cpu_time_limit") else \
                "error" if verdict == "machine_stall" else "failed"
            text = detail
        self.detail["failed_test"] = index
        return self._result(status, verdict, text, bad_report or report, results)

    def _result(self, status, reason, detail, report, results):
        passed = sum(1 for r in results if r.get("verdict") == "ok")
        cpu = sum(r.get("time_s") or 0.0 for r in results)
        wall = sum(r.get("wall_s") or 0.0 for r in results)
        peak = max((r.get("memory_kb") or 0 for r in results), default=0)
        self.detail.update(tests_passed=passed, tests_total=len(self.tests))
        if self.judge is not None:
            self.detail["time_limit_s"] = self.judge.get("time_limit_s")
            checker = self.judge.get("checker") or {}
            self.detail["checker"] = checker.get("protocol", "rule")
        report = report or {"exit_code": None, "signal": None, "stdout_tail": b"", "stderr_tail": b"",
                            "stdout_bytes": 0, "stderr_bytes": 0, "clean": True, "cleanup_s": 0.0,
                            "memory_pressure": False}
        result = {"status": status, "reason": reason, "detail": clean_text(detail), "wall_s": round(wall, 6),
                  "cpu_s": round(cpu, 6), "test_cpu_s": None, "peak_memory_kb": peak,
                  "exit_code": report["exit_code"], "signal": report["signal"],
                  "stdout_tail": report["stdout_tail"].decode("utf-8", errors="replace"),
                  "stderr_tail": report["stderr_tail"].decode("utf-8", errors="replace"),
                  "stdout_bytes": report["stdout_bytes"], "stderr_bytes": report["stderr_bytes"],
                  "verdict_channel": "io", "channel_detail": self.detail}
        if self.judge is not None or self.build is not None:
            # Past the first MAX_TESTS_KEPT, each test keeps only what its group's verdict and score are
            # made of: a package of 3,000 tests had its last 1,000 graded as never run (a skipped group).
            result["tests"] = results[:MAX_TESTS_KEPT] + [
                {k: r[k] for k in ("i", "group", "verdict", "score") if k in r} for r in results[MAX_TESTS_KEPT:]]
        if self.captured:
            result["captured"] = self.captured[:MAX_TESTS_KEPT]
        return self.sup._finish(result, dict(report, clean=self.clean and bool(report.get("clean", True))),
                                self.jobdir)


def _captured(report, output, limit):
    """What a program printed on one test, for a caller that compares it itself: the first `limit` bytes of
    its output and the tail of its stderr, as base64 (bytes stay bytes), with its exit."""
    return {"stdout_b64": base64.b64encode(output[:limit]).decode(), "stdout_bytes": report["stdout_bytes"],
            "stderr_b64": base64.b64encode(report["stderr_tail"]).decode(), "stderr_bytes": report["stderr_bytes"],
            "exit_code": report["exit_code"], "signal": report["signal"], "cpu_s": report.get("cpu_s"),
            "wall_s": round(max(0.0, report["end"] - report["start"]), 4)}


def run_io(sup, job):
    return IoJob(sup, job).run()
