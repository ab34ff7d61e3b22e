"""The project channel: a small project (an Exercism exercise, as aider's polyglot benchmark runs it) built
and tested by its language's own tools, in the language's project image (containers/projects/<language>/).

The job carries the whole tree the run starts from (the exercise, the candidate's solution files over it,
the tests restored: the host assembles it, harness/inputs/polyglot.py) and one test command. The
supervisor writes the tree into a fresh directory of the candidate's, the test files read-only and
root's, then runs the command as the candidate, through the forkserver, with the job's limits and wall
clock (aider's 180 s by default), its output (stdout and stderr as one stream) kept up to the job's
output limit. The runner's own report, where the command writes one (pytest's and JUnit's XML, jest's
JSON), is written under $PASSK_REPORTS, a directory of the job's outside the tree, and sent back bounded.

The supervisor decides only what a limit decides (time, memory, output) and the command's exit status
(the forkserver's, not a printed line). The host judges the rest (harness/inputs/projects.py): exit 0 and
the runner's report showing every test the exercise declares run and passed.

The container takes the next job: what the job wrote is removed with its directory and /tmp's scrub,
a process it left is killed, and a container that could not be cleaned is replaced."""

import base64
import hashlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
import time

from .files import _private_dir, _write_file
from .layout import CANDIDATE_UID, WORK_ROOT
from .text import clean_text

MAX_FILES = 400
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
MAX_REPORT = 4 << 20     # a report file sent back, at most
MAX_REPORTS = 4
PREBUILT_DIR = os.path.join(WORK_ROOT, "prebuilt")   # root's; WORK_ROOT outlives the jobs (cleanup.scrub)
PREBUILT_TIMEOUT_S = 120
NOBODY = 65534


class ProjectJob:
    def __init__(self, sup, job):
        self.sup, self.job = sup, job
        self.spec = job["project"]
        self.limits = job["limits"]
        self.start = time.monotonic()
        self.jobdir = sup._new_jobdir()
        # named as the exercise (C++'s CMakeLists.txt names its sources after its directory)
        name = str(self.spec.get("name") or "p")
        self.tree = os.path.join(self.jobdir, name if _NAME.fullmatch(name) and name != "x" else "p")
        self.x_dir = os.path.join(self.jobdir, "x")
        _private_dir(self.tree, CANDIDATE_UID)
        _private_dir(self.x_dir, CANDIDATE_UID)
        for sub in ("home", "reports"):
            _private_dir(os.path.join(self.x_dir, sub), CANDIDATE_UID)
        self.facts = {}
        self.env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.path.join(self.x_dir, "home"),
                    "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PASSK_REPORTS": os.path.join(self.x_dir, "reports"),
                    **{str(k): str(v).replace("{x}", self.x_dir) for k, v in (self.spec.get("env") or {}).items()}}

    def write_tree(self):
        """The exercise's tree, the candidate's solution files over it (only the files it may write; never a
        test), the tests read-only and root's."""
        files = self.spec["files_b64"]
        readonly = set(self.spec.get("readonly") or ())
        if not isinstance(files, dict) or len(files) > MAX_FILES:
            raise ValueError("a project's tree must be an object of at most %d files" % MAX_FILES)
        files = {k: base64.b64decode(v) for k, v in files.items()}
        try:
            code = json.loads(self.job.get("code") or "{}")
        except ValueError:
            code = {}
        editable = set(self.spec.get("editable") or ())
        if editable and isinstance(code, dict):   # a reference's job (no editable file) takes nothing
            for name, text in code.items():
                # a solution file, or a new file the host let through (never a file of the exercise's)
                if isinstance(text, str) and name not in readonly and (name in editable or name not in files):
                    files[name] = text.encode("utf-8", "surrogateescape")
                if len(files) > MAX_FILES:
                    raise ValueError("a project's tree must be an object of at most %d files" % MAX_FILES)
        made = {""}
        for name in sorted(files):
            norm = posixpath.normpath(name) if isinstance(name, str) else ""
            parts = norm.split("/")
            if (not norm or norm.startswith("/") or norm != name or ".." in parts or "\0" in norm
                    or any(p in ("", ".") for p in parts)):
                raise ValueError(f"bad file name {str(name)[:80]!r}")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in made:
                    path = os.path.join(self.tree, d)
                    os.mkdir(path, 0o755)
                    os.chown(path, CANDIDATE_UID, CANDIDATE_UID)
                    made.add(d)
            path = os.path.join(self.tree, norm)
            data = files[name]
            if norm in readonly:   # the tests: root's, readable; what the command writes beside them is its own
                _write_file(path, data, 0, 0o444)
            else:
                _write_file(path, data, CANDIDATE_UID, 0o755 if norm.endswith((".sh", "gradlew")) else 0o644)
        return files

    def prebuild(self, files):
        """A part of the build that is the same for every candidate of the exercise, made once per container
        (C++: Catch's main, most of a build's time), as another user than the candidate's, from the exercise's
        own files: its output is root's, read-only to candidates; the command's build takes it where its
        compile is the same (containers/projects/cpp/cxx-launch). The job's clock starts after it."""
        pb = self.spec.get("prebuilt")
        if not isinstance(pb, dict):
            return
        names, flags = [n for n in pb.get("inputs") or () if n in files], list(pb.get("flags") or ())
        if not names or names[0] != (pb.get("inputs") or [None])[0] or not all(isinstance(f, str) for f in flags):
            return
        h = hashlib.sha256(json.dumps([pb.get("compiler"), flags]).encode())
        for n in names:
            h.update(n.encode() + b"\0" + hashlib.sha256(files[n]).digest())
        obj = os.path.join(PREBUILT_DIR, h.hexdigest()[:32] + ".o")
        t0 = time.monotonic()
        made = "reused"
        if not os.path.isfile(obj):
            made = "made" if self._compile(pb, names, flags, files, obj) else "failed"
        self.facts["prebuilt"] = made
        self.facts["prebuilt_s"] = round(time.monotonic() - t0, 3)
        if made != "failed":
            self.env["PASSK_PREBUILT_OBJ"] = obj
            self.env["PASSK_PREBUILT_FLAGS"] = json.dumps(flags)

    def _compile(self, pb, names, flags, files, obj):
        os.makedirs(PREBUILT_DIR, 0o755, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=WORK_ROOT)
        try:
            os.chown(tmp, NOBODY, NOBODY)
            for n in names:
                path = os.path.join(tmp, n)
                if os.path.dirname(n) and not os.path.isdir(os.path.dirname(path)):
                    os.makedirs(os.path.dirname(path), 0o755)
                    os.chown(os.path.dirname(path), NOBODY, NOBODY)
                _write_file(path, files[n], NOBODY, 0o644)
            argv = [str(pb.get("compiler") or "c++"), *flags, "-c", names[0], "-o", "prebuilt.o"]
            r = subprocess.run(argv, cwd=tmp, user=NOBODY, group=NOBODY, extra_groups=[], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=PREBUILT_TIMEOUT_S,
                               env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tmp, "LANG": "C.UTF-8"})
            if r.returncode != 0:
                return False
            staged = obj + ".part"
            shutil.copyfile(os.path.join(tmp, "prebuilt.o"), staged)
            os.chmod(staged, 0o644)
            os.rename(staged, obj)
            return True
        except (OSError, subprocess.SubprocessError):
            return False
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def run(self):
        files = self.write_tree()
        self.prebuild(files)
        self.start = time.monotonic()
        left = self.limits["timeout_s"] - (time.monotonic() - self.start)
        # the job's CPU limit as it is (the host sets it above what the wall clock lets the cores use: a build's
        # or a test binary's threads must meet the wall clock first, as under aider's runner, which has none)
        limits = dict(self.limits, timeout_s=max(0.1, left))
        argv = ["bash", "-c", "exec 2>&1\n" + self.spec["command"] + "\n"]
        report = self.sup.watcher.run(self.tree, limits, "exec_io", program=(argv, self.env), stdin=b"")[0]
        output = report.get("stdout") or b""
        code = report["exit_code"] if report["signal"] is None else None
        if report["timed_out"]:
            status, reason, detail = "timed_out", "time_limit", f"the test command ran past {self.limits['timeout_s']:g} s"
        elif report["memory_exceeded"] or report["memory_pressure"]:
            status, reason, detail = "failed", "memory_limit", f"more than {self.limits['memory_mb']} MB"
        elif report["output_exceeded"]:
            status, reason, detail = "failed", "output_limit", f"more than {self.limits['output_bytes']} bytes of output"
        elif code == 0:
            status, reason, detail = "passed", "exit_0", "the test command exited 0: the host reads the runner's report"
        elif code is None:
            status, reason, detail = "failed", f"signal:{report['signal']}", f"the test command died of {report['signal']}"
        else:
            status, reason, detail = "failed", "tests_failed", f"the test command exited {code}"
        result = {"status": status, "reason": reason, "detail": clean_text(detail, 2000),
                  "wall_s": round(max(0.0, report["end"] - report["start"]), 6), "cpu_s": report["cpu_s"],
                  "test_cpu_s": None,
                  "peak_memory_kb": max(report.get("job_memory_peak_kb") or 0, report["peak_memory_kb"] or 0) or None,
                  "exit_code": report["exit_code"], "signal": report["signal"],
                  "stdout_tail": "", "stderr_tail": "", "stdout_bytes": report["stdout_bytes"], "stderr_bytes": 0,
                  "verdict_channel": "project",
                  "channel_detail": {**self.facts, "language": clean_text(str(self.spec.get("language", "")), 40),
                                     "test_exit": code if code is not None else report["signal"]},
                  "project_output_b64": base64.b64encode(output).decode(), "project_dir": self.tree,
                  "project_x_dir": self.x_dir,
                  "project_reports_b64": self.reports()}
        return self.sup._finish(result, report, self.jobdir)

    def reports(self):
        """The runner's report files (names the host asked for, under $PASSK_REPORTS), bounded; a file that
        is not a regular file of the job's is not read."""
        out = {}
        base = os.path.join(self.x_dir, "reports")
        for name in list(self.spec.get("reports") or ())[:MAX_REPORTS]:
            if not isinstance(name, str) or "/" in name or name.startswith("."):
                continue
            path = os.path.join(base, name)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                if not stat_is_regular(fd):
                    continue
                data = b""
                while len(data) <= MAX_REPORT:
                    chunk = os.read(fd, MAX_REPORT + 1 - len(data))
                    if not chunk:
                        break
                    data += chunk
            finally:
                os.close(fd)
            out[name] = base64.b64encode(data[:MAX_REPORT]).decode()
        return out


def stat_is_regular(fd):
    import stat
    return stat.S_ISREG(os.fstat(fd).st_mode)


def run_project(sup, job):
    return ProjectJob(sup, job).run()
