"""The repo channel: a patch to a repository, judged by the repository's own tests, as SWE-bench's harness
runs them, step for step, in a fresh container of the repository's environment image (one image per
environment, shared by every instance and candidate; the container is thrown away after the job).

Every step runs as the candidate's user, through the forkserver, with the job's limits and what is left
of the job's wall clock; nothing of the repository's or the patch's runs as root. The steps, and what
each records:

    tree      the base commit's tree (with a fresh repository of one commit: no later commits, tags or
              reflog) unpacked into /testbed; the environment's pristine venv copied to /venv (both
              tmpfs: what the install writes is thrown away with the container)
    setup     the spec's pre-install steps and install, then `git commit` of what they changed (the
              harness's instance image); a failure here is the environment's, never the candidate's
    apply     the candidate's patch: `git apply --verbose`, then `--reject`, then `patch --batch
              --fuzz=5 -p1` (the harness's chain); the command that worked is recorded
    prepare   the spec's eval commands, the install again, the test files reset to the base commit,
              the test patch applied (the harness's eval script; it goes on whatever fails)
    test      the test command on the test patch's files; its exit status comes from the forkserver,
              not from anything the tests print; pytest also writes a JUnit report outside the tree

The result carries the log in the harness's shape (its markers around the test output, the exit status
after them), the JUnit report (bounded) and each step's facts. The host parses and grades
(harness/inputs/repos): the supervisor decides only what a step's own end decides (a patch that does not
apply, a limit)."""

import base64
import os
import shlex
import stat
import time

from .files import _private_dir, _write_file
from .layout import CANDIDATE_UID
from .text import clean_text

TESTBED = "/testbed"
VENV = "/venv"
PRISTINE_VENV = "/opt/passk/venv"
START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
TEST_EXIT_CODE = ">>>>> Test Exit Code"
APPLY_COMMANDS = (("git", "apply", "--verbose"), ("git", "apply", "--verbose", "--reject"),
                  ("patch", "--batch", "--fuzz=5", "-p1", "-i"))
MAX_JUNIT = 16 << 20
STEP_LOG = 1 << 20          # what is kept of a setup or prepare step's output


class RepoJob:
    def __init__(self, sup, job):
        self.sup, self.job = sup, job
        self.spec = job["repo"]
        self.limits = job["limits"]
        self.start = time.monotonic()
        self.facts = {}
        self.jobdir = sup._new_jobdir()
        self.x_dir = os.path.join(self.jobdir, "x")      # the patches and the report: outside the tree
        _private_dir(self.x_dir, CANDIDATE_UID)
        self.env = {"PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": VENV, "HOME": self.x_dir,
                    "TMPDIR": "/tmp", "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1",
                    "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/opt/passk/wheels", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                    "PIP_NO_CACHE_DIR": "1", "PYTHONDONTWRITEBYTECODE": "",
                    **{str(k): str(v) for k, v in (self.spec.get("env") or {}).items()}}
        self.env.pop("PYTHONDONTWRITEBYTECODE")
        self.clean = True
        self.last = None

    # -- running a step ------------------------------------------------------------------------------
    def left_s(self):
        return self.limits["timeout_s"] - (time.monotonic() - self.start)

    def step(self, name, argv, stdin=b"", cwd=TESTBED, cap=None):
        """Run argv as the candidate with what is left of the job's limits; its report, its output
        (stdout and stderr as one stream where argv says 2>&1) recorded under `name`."""
        left = self.left_s()
        if left <= 0:
            return None
        limits = dict(self.limits, timeout_s=left, cpu_time_s=max(1, int(left) + 1),
                      output_bytes=cap or self.limits["output_bytes"])
        report = self.sup.watcher.run(cwd, limits, "exec_io", program=(list(argv), self.env), stdin=stdin)[0]
        self.clean = self.clean and bool(report.get("clean"))
        self.facts[f"{name}_s"] = round(max(0.0, report["end"] - report["start"]), 3)
        self.facts[f"{name}_exit"] = report["exit_code"] if report["signal"] is None else report["signal"]
        self.last = report
        return report

    def bash(self, name, script, cap=None):
        return self.step(name, ["bash", "-c", script + "\n"], cap=cap)

    def ended_badly(self, report):
        """The label when a step was stopped by a limit (not by its own exit), else None."""
        if report is None or report["timed_out"]:
            return "timed_out", "time_limit", (f"the job's {self.limits['timeout_s']:g} s of wall clock ran out "
                                               f"(in step {self.current})")
        if report["memory_exceeded"] or report["memory_pressure"]:
            return "failed", "memory_limit", f"more than {self.limits['memory_mb']} MB (in step {self.current})"
        if report["output_exceeded"]:
            return "failed", "output_limit", (f"more than {self.limits['output_bytes']} bytes of output "
                                              f"(in step {self.current})")
        return None

    # -- the job ---------------------------------------------------------------------------------------
    def run(self):
        s = self.spec
        self.current = "tree"
        for d in (TESTBED, VENV):
            if not os.path.isdir(d) or os.lstat(d).st_uid != CANDIDATE_UID or os.listdir(d):
                return self.error("environment_error", f"{d} is not an empty directory of the candidate's: this "
                                  "container is not a repo environment's")
        tree = base64.b64decode(s["tree_b64"])
        r = self.step("tree", ["tar", "-xzf", "-", "-C", TESTBED], stdin=tree)
        bad = self.ended_badly(r)
        if bad or r["exit_code"] != 0:
            return self.error("environment_error", "the tree did not unpack: " + self.tail(r))
        r = self.step("venv", ["cp", "-a", PRISTINE_VENV + "/.", VENV + "/"])
        if self.ended_badly(r) or r["exit_code"] != 0:
            return self.error("environment_error", "the environment did not copy: " + self.tail(r))
        self.current = "setup"
        setup = "exec 2>&1\nset -euo pipefail\n" + "".join(f"{c}\n" for c in s.get("pre_install") or ()) + \
            (f"{s['install']}\n" if s.get("install") else "") + \
            "git -c user.email=setup@passk -c user.name=passk commit -q -a " \
            "--allow-empty --no-verify -m passk-setup"
        r = self.bash("setup", setup, cap=STEP_LOG * 8)
        bad = self.ended_badly(r)
        if bad:   # an install that does not finish in the job's time is the environment's, not the patch's
            return self.error("environment_error", bad[2])
        if r["exit_code"] != 0:
            return self.error("environment_error", "the repository's install failed before any patch: " + self.tail(r))
        # the candidate's patch
        self.current = "apply"
        patch_file = os.path.join(self.x_dir, "patch.diff")
        _write_file(patch_file, self.job["code"], CANDIDATE_UID)
        applied, outputs = None, []
        for argv in APPLY_COMMANDS:
            r = self.step("apply", [*argv, patch_file])
            bad = self.ended_badly(r)
            if bad:
                return self.finish(*bad)
            outputs.append(self.tail(r))
            if r["exit_code"] == 0:
                applied = " ".join(argv)
                break
        self.facts["applied_with"] = applied or "none"
        if applied is None:
            return self.finish("failed", "patch_apply_failed", "the patch does not apply (git apply, git apply "
                               "--reject, patch --fuzz=5): " + outputs[-1])
        # the harness's eval script, before the tests
        self.current = "prepare"
        files = " ".join(shlex.quote(f) for f in s.get("test_files") or ())
        reset = f"git checkout {shlex.quote(s['base'])} {files}" if files else ":"
        test_patch = os.path.join(self.x_dir, "test.diff")
        _write_file(test_patch, s.get("test_patch") or "", CANDIDATE_UID)
        prepare = ("set -uo pipefail\n" + "".join(f"{c}\n" for c in s.get("eval_commands") or ()) +
                   (f"{s['install']}\n" if s.get("install") else "") +
                   f"{reset}\ngit apply -v {shlex.quote(test_patch)}\n")
        r = self.bash("prepare", "exec 2>&1\n" + prepare, cap=STEP_LOG * 8)
        bad = self.ended_badly(r)
        if bad:
            return self.finish(*bad)
        prepare_log = r["stdout"] or b""
        # the tests
        self.current = "test"
        junit = os.path.join(self.x_dir, "junit.xml")
        command = s["test_cmd"] + (f" --junitxml={shlex.quote(junit)}" if s.get("junit") else "") + \
            "".join(" " + shlex.quote(d) for d in s.get("directives") or ())
        r = self.bash("test", "exec 2>&1\n" + command)
        bad = self.ended_badly(r)
        test_log = (r or {}).get("stdout") or b""
        code = None if r is None else (r["exit_code"] if r["signal"] is None else 128 + _signum(r["signal"]))
        log = (prepare_log[-STEP_LOG:] + f"\n: '{START_TEST_OUTPUT}'\n".encode() + test_log +
               f"\n: '{END_TEST_OUTPUT}'\n{TEST_EXIT_CODE}: {code}\n".encode())
        self.result_extra = {"repo_log_b64": base64.b64encode(log).decode(), "test_exit_code": code,
                             "junit_b64": self.read_junit(junit)}
        if bad:
            return self.finish(*bad)
        return self.finish("passed", "tests_ran", "the tests ran: the host grades their log")

    def read_junit(self, path):
        """The JUnit report the test process wrote (a regular file, never a link), bounded; None if none."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = os.read(fd, MAX_JUNIT + 1)
            return None if len(data) > MAX_JUNIT else base64.b64encode(data).decode()
        finally:
            os.close(fd)

    @staticmethod
    def tail(report, n=700):   # within the row's detail (1,000 characters, the head kept) with its lead
        if report is None:
            return "(no time left)"
        text = ((report.get("stdout") or b"")[-n:] + (report.get("stderr_tail") or b"")[-n:]).decode("utf-8", "replace")
        return clean_text(text[-n:], n)   # the end: where a failing step says why

    def error(self, reason, detail):
        return self.finish("error", reason, detail)

    def finish(self, status, reason, detail):
        extra = getattr(self, "result_extra", {})
        r = self.last or {}
        result = {"status": status, "reason": reason, "detail": clean_text(detail, 2000),
                  "wall_s": round(time.monotonic() - self.start, 6), "cpu_s": r.get("cpu_s"), "test_cpu_s": None,
                  "peak_memory_kb": max(r.get("job_memory_peak_kb") or 0, r.get("peak_memory_kb") or 0) or None,
                  "exit_code": extra.get("test_exit_code"), "signal": r.get("signal"),
                  "stdout_tail": "", "stderr_tail": "", "stdout_bytes": r.get("stdout_bytes"),
                  "stderr_bytes": r.get("stderr_bytes"), "verdict_channel": "repo",
                  "channel_detail": {**self.facts, "step": self.current}, **extra,
                  # a repo container is never used again: what the job wrote lives in its tmpfs
                  "healthy": False, "leftover_paths": []}
        return result


def _signum(name):
    import signal
    try:
        return int(getattr(signal, name))
    except (AttributeError, TypeError):
        return 0


def run_repo(sup, job):
    return RepoJob(sup, job).run()
