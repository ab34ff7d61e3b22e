"""The repo channel: a patch to a repository, judged by the repository's own tests, as SWE-bench's harness
runs them, step for step, in a fresh container of the repository's environment image (one image per
environment, shared by every instance and candidate; the container is thrown away after the job).

Every step runs as the candidate's user, through the forkserver, with the job's limits and what is left
of the job's wall clock; nothing of the repository's or the patch's runs as root. The steps, and what
each records:

    tree      the instance as the harness's instance image has it. From its snapshot (`instance`: the tree
              set up and installed once, environments/instances.py), copied by the supervisor out of the
              read-only, root-only /opt/passk/instances; or, without one, the base commit's tree (a fresh
              repository of one commit: no later commits, tags or reflog) unpacked into /testbed and the
              environment's venv copied to /venv, then `setup`. Both are tmpfs: what an install or a
              patch writes is thrown away with the container
    setup     (no snapshot) the spec's pre-install steps and install, then `git commit` of what they
              changed; a failure here is the environment's, never the candidate's
    apply     the candidate's patch: `git apply --verbose`, then `--reject`, then `patch --batch
              --fuzz=5 -p1` (the harness's chain); the command that worked is recorded, and what it
              changed is read from the file system (every path under /testbed, .git included, before and
              after: `changed`), never from the patch's text
    prepare   the spec's eval commands, the install again where the patch changed what it installs (an
              editable install of Python code sees a change of a module at once: `reinstalled` says why),
              the test files reset to the base commit, the test patch applied. passk's own git commands
              use a copy of the tree's .git taken before the patch (hooks off, no configuration the patch
              can write): a patch that writes into .git cannot make them run anything
    test      the test command on the test patch's files; its exit status comes from the forkserver,
              not from anything the tests print; pytest also writes a JUnit report outside the tree

A snapshot job (`mode: snapshot`) runs tree and setup only, then the supervisor copies /testbed and what
the install changed in /venv into /opt/passk/snapshot-out (the host's staging directory, root-only).

The result carries the log in the harness's shape (its markers around the test output, the exit status
after them), the JUnit report (bounded) and each step's facts. The host parses and grades
(harness/inputs/repos): the supervisor decides only what a step's own end decides (a patch that does not
apply, a limit)."""

import base64
import os
import re
import shlex
import shutil
import stat
import subprocess
import time

from .files import _private_dir, _write_file
from .layout import CANDIDATE_UID
from .text import clean_text

TESTBED = "/testbed"
VENV = "/venv"
PRISTINE_VENV = "/opt/passk/venv"
INSTANCES = "/opt/passk/instances"            # the environment's snapshots (read-only, root-only)
SNAPSHOT_OUT = "/opt/passk/snapshot-out"      # a snapshot job's staging directory (root-only)
VENV_DELETED = "venv-deleted"                 # in a snapshot: what the install removed from the venv (NUL-separated)
START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
TEST_EXIT_CODE = ">>>>> Test Exit Code"
APPLY_COMMANDS = (("git", "apply", "--verbose"), ("git", "apply", "--verbose", "--reject"),
                  ("patch", "--batch", "--fuzz=5", "-p1", "-i"))
MAX_JUNIT = 16 << 20
STEP_LOG = 1 << 20          # what is kept of a setup or prepare step's output
MAX_CHANGED = 2000          # changed paths a result lists (all are counted)
MAX_ENTRIES = 500_000       # entries of a tree the walk reads before it says it stopped
_NAME = re.compile(r"^[0-9a-f]{16,64}$")
# what an editable install is rebuilt from: anything of these changed, and the install runs again
_BUILD_FILES = re.compile(r"(^|/)(setup\.py|setup\.cfg|pyproject\.toml|MANIFEST\.in|meson\.build|CMakeLists\.txt"
                          r"|requirements[^/]*\.txt)$|\.(c|h|cc|cpp|cxx|hpp|pyx|pxd|pxi|f|f90|rs|go|so)$")
_ROOT_DOCS = re.compile(r"^(CHANGES|CHANGELOG|AUTHORS|README|NEWS|HISTORY|CONTRIBUTING|LICENSE)([._-][A-Za-z0-9.]*)?$"
                        r"|\.(rst|md)$")


class RepoJob:
    def __init__(self, sup, job):
        self.sup, self.job = sup, job
        self.spec = job["repo"]
        self.limits = job["limits"]
        self.start = time.monotonic()
        self.facts = {}
        self.jobdir = sup._new_jobdir()
        self.x_dir = os.path.join(self.jobdir, "x")      # the patches, passk's git directory, the report
        _private_dir(self.x_dir, CANDIDATE_UID)
        self.env = {"PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": VENV, "HOME": self.x_dir,
                    "TMPDIR": "/tmp", "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1",
                    "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/opt/passk/wheels", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                    "PIP_NO_CACHE_DIR": "1", "PYTHONDONTWRITEBYTECODE": "",
                    **{str(k): str(v) for k, v in (self.spec.get("env") or {}).items()}}
        self.env.pop("PYTHONDONTWRITEBYTECODE")
        self.gitdir = os.path.join(self.x_dir, "git")
        self.clean = True
        self.last = None
        self.current = "tree"

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
        self.facts[f"{name}_s"] = round(self.facts.get(f"{name}_s", 0) + max(0.0, report["end"] - report["start"]), 3)
        self.facts[f"{name}_exit"] = report["exit_code"] if report["signal"] is None else report["signal"]
        self.last = report
        return report

    def bash(self, name, script, cap=None):
        return self.step(name, ["bash", "-c", script + "\n"], cap=cap)

    def git_argv(self):
        """passk's own git command: its copy of the tree's .git, hooks off, no fsmonitor."""
        return ["git", f"--git-dir={self.gitdir}", f"--work-tree={TESTBED}", "-c", "core.hooksPath=/dev/null",
                "-c", "core.fsmonitor=false"]

    def git(self):
        """The same, as a shell command line."""
        return " ".join(shlex.quote(a) for a in self.git_argv())

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

    def as_root(self, name, argv, timeout):
        """A command of the supervisor's own (copying a snapshot in or out), as root, bounded in time;
        None when it worked, else why (one line)."""
        t0 = time.monotonic()
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            return f"{name}: did not finish in {timeout:.0f} s"
        finally:
            self.facts[f"{name}_s"] = round(self.facts.get(f"{name}_s", 0) + time.monotonic() - t0, 3)
        if proc.returncode != 0:
            return f"{name}: exit {proc.returncode}: " + clean_text(proc.stdout[-400:].decode("utf-8", "replace"), 400)
        return None

    # -- the job ---------------------------------------------------------------------------------------
    def run(self):
        s = self.spec
        for d in (TESTBED, VENV):
            if not os.path.isdir(d) or os.lstat(d).st_uid != CANDIDATE_UID or os.listdir(d):
                return self.error("environment_error", f"{d} is not an empty directory of the candidate's: this "
                                  "container is not a repo environment's")
        if s.get("instance"):
            why = self.restore(s["instance"])
            if why:
                return self.error("environment_error", "the instance's snapshot did not copy: " + why)
        else:
            failed = self.set_up()
            if failed:
                return failed
            if s.get("mode") == "snapshot":
                return self.save()
        # passk's own copy of the tree's .git, before the patch can write into it
        r = self.step("gitdir", ["cp", "-a", TESTBED + "/.git", self.gitdir])
        if self.ended_badly(r) or r["exit_code"] != 0:
            return self.error("environment_error", "the tree's .git did not copy: " + self.tail(r))
        before, _ = tree_state(TESTBED)
        # the candidate's patch
        self.current = "apply"
        patch_file = os.path.join(self.x_dir, "patch.diff")
        _write_file(patch_file, self.job["code"], CANDIDATE_UID)
        applied, outputs = None, []
        for argv in APPLY_COMMANDS:
            # git's apply with passk's .git (its configuration, not the tree's)
            run = [*self.git_argv(), *argv[1:]] if argv[0] == "git" else list(argv)
            r = self.step("apply", [*run, patch_file])
            bad = self.ended_badly(r)
            if bad:
                return self.finish(*bad)
            outputs.append(self.tail(r))
            if r["exit_code"] == 0:
                applied = " ".join(argv)
                break
        self.facts["applied_with"] = applied or "none"
        after, truncated = tree_state(TESTBED)
        changed = changed_paths(before, after)
        self.facts["changed_count"] = len(changed)
        self.changed = changed[:MAX_CHANGED]
        if truncated:
            self.facts["changed_walk"] = f"stopped after {MAX_ENTRIES} entries"
        if applied is None:
            return self.finish("failed", "patch_apply_failed", "the patch does not apply (git apply, git apply "
                               "--reject, patch --fuzz=5): " + outputs[-1])
        # the harness's eval script, before the tests
        self.current = "prepare"
        reinstall, why = install_needed(changed, before, s.get("install") or "")
        self.facts["reinstalled"] = ("yes: " if reinstall else "no: ") + why
        files = " ".join(shlex.quote(f) for f in s.get("test_files") or ())
        reset = f"{self.git()} checkout {shlex.quote(s['base'])} -- {files}" if files else ":"
        test_patch = os.path.join(self.x_dir, "test.diff")
        _write_file(test_patch, s.get("test_patch") or "", CANDIDATE_UID)
        prepare = ("set -uo pipefail\n" + "".join(f"{c}\n" for c in s.get("eval_commands") or ()) +
                   (f"{s['install']}\n" if s.get("install") and reinstall else "") +
                   f"{reset}\n{self.git()} apply -v {shlex.quote(test_patch)}\n")
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
        r = self.bash("test", "exec 2>&1\n" + services(s.get("services")) + command)
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

    def set_up(self):
        """The base commit's tree, the environment's venv, the spec's pre-install and install (the harness's
        instance image); a failed row, or None."""
        s = self.spec
        tree = base64.b64decode(s["tree_b64"])
        r = self.step("tree", ["tar", "-xzf", "-", "-C", TESTBED], stdin=tree)
        if self.ended_badly(r) or r["exit_code"] != 0:
            return self.error("environment_error", "the tree did not unpack: " + self.tail(r))
        why = self.copy_venv()
        if why:
            return self.error("environment_error", why)
        self.current = "setup"
        setup = "exec 2>&1\nset -euo pipefail\n" + "".join(f"{c}\n" for c in s.get("pre_install") or ()) + \
            (f"{s['install']}\n" if s.get("install") else "") + \
            "git -c user.email=setup@passk -c user.name=passk -c core.hooksPath=/dev/null commit -q -a " \
            "--allow-empty --no-verify -m passk-setup"
        r = self.bash("setup", setup, cap=STEP_LOG * 8)
        self.setup_log = (r or {}).get("stdout") or b""
        bad = self.ended_badly(r)
        if bad:   # an install that does not finish in the job's time is the environment's, not the patch's
            return self.error("environment_error", bad[2])
        if r["exit_code"] != 0:
            return self.error("environment_error", "the repository's install failed before any patch: " + self.tail(r))
        return None

    def copy_venv(self):
        """The environment's pristine venv into /venv, as the candidate's user; why it failed, or None."""
        r = self.step("venv", ["cp", "-a", PRISTINE_VENV + "/.", VENV + "/"])
        if self.ended_badly(r) or r["exit_code"] != 0:
            return "the environment did not copy: " + self.tail(r)
        return None

    def restore(self, name):
        """The instance's snapshot into /testbed and /venv (the supervisor copies, as root, out of the
        directory the candidate cannot read); why it failed, or None."""
        if not isinstance(name, str) or not _NAME.match(name):
            return "not a snapshot's name"
        src = os.path.join(INSTANCES, name)
        if not os.path.isdir(os.path.join(src, "testbed")):
            return f"{name} is not among this environment's snapshots"
        why = self.as_root("tree", ["cp", "-a", "--", src + "/testbed/.", TESTBED + "/"], self.left_s())
        if why:
            return why
        why = self.copy_venv()
        if why:
            return why
        if os.path.isdir(os.path.join(src, "venv")):
            why = self.as_root("venv_delta", ["cp", "-a", "--", src + "/venv/.", VENV + "/"], self.left_s())
            if why:
                return why
        try:
            with open(os.path.join(src, VENV_DELETED), "rb") as f:
                doomed = [p for p in f.read().split(b"\0") if p]
        except FileNotFoundError:
            doomed = []
        for rel in doomed:
            rel = os.fsdecode(rel)
            if rel.startswith("/") or ".." in rel.split("/"):
                return "a deleted path outside the venv"
            path = os.path.join(VENV, rel)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
        return None

    def save(self):
        """A snapshot job's end: /testbed and what the install changed in the venv, copied (as root, owners
        kept) into the staging directory; the result says how long the set-up took."""
        self.current = "snapshot"
        if not os.path.isdir(SNAPSHOT_OUT) or os.lstat(SNAPSHOT_OUT).st_uid != 0 or os.listdir(SNAPSHOT_OUT):
            return self.error("environment_error", f"{SNAPSHOT_OUT} is not an empty directory of root's")
        why = self.as_root("save", ["cp", "-a", "--", TESTBED, os.path.join(SNAPSHOT_OUT, "testbed")], self.left_s())
        if why:
            return self.error("environment_error", "the set-up tree did not copy out: " + why)
        pristine, _ = tree_state(PRISTINE_VENV)
        now, _ = tree_state(VENV)
        changed = [p for p in sorted(now) if p not in pristine or _differs(pristine[p], now[p])]
        deleted = [p for p in sorted(pristine) if p not in now]
        out = os.path.join(SNAPSHOT_OUT, "venv")
        _dir_like(VENV, out)

        def parents(rel):   # every directory above `rel`, as /venv has it (owner and mode: the copy keeps them)
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                here = os.path.join(out, *parts[:i])
                if not os.path.isdir(here):
                    _dir_like(os.path.join(VENV, *parts[:i]), here)

        for rel in changed:
            src, dst = os.path.join(VENV, rel), os.path.join(out, rel)
            st = os.lstat(src)
            parents(rel)
            if stat.S_ISDIR(st.st_mode):
                if not os.path.isdir(dst):
                    os.mkdir(dst)
            else:
                if stat.S_ISLNK(st.st_mode):
                    os.symlink(os.readlink(src), dst)
                elif stat.S_ISREG(st.st_mode):
                    shutil.copy2(src, dst, follow_symlinks=False)
                else:
                    continue
            os.chown(dst, st.st_uid, st.st_gid, follow_symlinks=False)
            if not stat.S_ISLNK(st.st_mode):
                os.chmod(dst, stat.S_IMODE(st.st_mode))
        for rel in changed:   # directories' own modes and times once their files are in
            st = os.lstat(os.path.join(VENV, rel))
            if stat.S_ISDIR(st.st_mode):
                os.chmod(os.path.join(out, rel), stat.S_IMODE(st.st_mode))
        with open(os.path.join(SNAPSHOT_OUT, VENV_DELETED), "wb") as f:
            f.write(b"\0".join(os.fsencode(p) for p in deleted))
        self.facts["venv_changed"] = len(changed)
        self.facts["venv_deleted"] = len(deleted)
        self.result_extra = {"setup_log_b64": base64.b64encode(self.setup_log[-STEP_LOG:]).decode()}
        return self.finish("passed", "snapshot_saved", "the instance is set up")

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
                  **({"changed": self.changed} if hasattr(self, "changed") else {}),
                  # a repo container is never used again: what the job wrote lives in its tmpfs
                  "healthy": False, "leftover_paths": []}
        return result


# Stand-ins for network services the tests reach, started before the tests as the candidate's user on the
# container's own loopback (it has no other network); (the stand-in's start, its port, the environment the
# tests get). httpbin: requests' older suites read HTTPBIN_URL (its newer ones serve pytest-httpbin's own).
SERVICES = {
    "httpbin": ("/opt/passk/standins/httpbin/bin/python -c 'from werkzeug.serving import run_simple; "
                "from httpbin import app; run_simple(\"127.0.0.1\", 8765, app, threaded=True)'", 8765,
                {"HTTPBIN_URL": "http://127.0.0.1:8765/"}),
}


def services(names):
    """The test step's lines that start the named stand-ins and wait (at most 20 s) until each answers."""
    out = ""
    for name in names or ():
        if name not in SERVICES:
            continue
        start, port, env = SERVICES[name]
        out += (f"{start} >/tmp/passk-{name}.log 2>&1 &\n"
                f"for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done\n"
                + "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()))
    return out


def _dir_like(src, dst):
    """A directory at `dst` with the owner and mode of `src` (a snapshot's copy of /venv's directories: the
    candidate's own, which a later install writes into)."""
    st = os.lstat(src)
    os.mkdir(dst)
    os.chown(dst, st.st_uid, st.st_gid)
    os.chmod(dst, stat.S_IMODE(st.st_mode))


def tree_state(root):
    """({relative path: what decides whether it changed}, whether the walk stopped early) of every entry
    under `root`, .git included, never following a link: a file by its type, mode, size, times, inode
    and (a link) target; a directory by its type and mode only (its times move with its entries)."""
    out, stack = {}, [""]
    while stack:
        rel = stack.pop()
        try:
            entries = os.scandir(os.path.join(root, rel) if rel else root)
        except OSError:
            continue
        with entries:
            for e in entries:
                path = f"{rel}/{e.name}" if rel else e.name
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                kind = stat.S_IFMT(st.st_mode)
                if kind == stat.S_IFDIR:
                    out[path] = (kind, stat.S_IMODE(st.st_mode))
                    stack.append(path)
                else:
                    link = os.readlink(e.path) if kind == stat.S_IFLNK else None
                    out[path] = (kind, stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                 st.st_ino, link)
                if len(out) >= MAX_ENTRIES:
                    return out, True
    return out, False


def _differs(a, b):
    """Whether a venv entry changed since it was copied (a copy keeps the type, mode, size, modification time
    and link target of each file; its inode and change time are new)."""
    if a[0] != b[0] or len(a) != len(b):
        return True
    return a[:4] + a[6:] != b[:4] + b[6:] if len(a) > 2 else a != b


def changed_paths(before, after):
    """Every path added, removed or changed between two tree_state walks, sorted."""
    return sorted({p for p in after if before.get(p) != after[p]} | {p for p in before if p not in after})


def install_needed(changed, before, install):
    """(whether the spec's install runs again after the patch, why). The harness's eval script installs
    again every time; passk does where that could change anything: always for an install that is not
    editable (`pip install .` copies the code), else where the patch changed what an editable install is
    built from (its build files, compiled sources, a module at the repository's root or a new top-level
    package, which an editable install's finder does not see)."""
    if not install.strip():
        return False, "the spec has no install"
    words = install.split()
    if "-e" not in words and "--editable" not in words:
        return True, "the install is not editable: it copies the code"
    tops = {p.split("/", 1)[0] for p in before if "/" not in p and before[p][0] == stat.S_IFDIR}
    for path in changed:
        if path == ".git" or path.startswith(".git/"):
            continue
        if _BUILD_FILES.search(path):
            return True, f"the patch changed {path[:200]}"
        if "/" not in path:
            if _ROOT_DOCS.search(path):
                continue
            return True, f"the patch changed {path[:200]} at the repository's root"
        if path.split("/", 1)[0] not in tops:
            return True, f"the patch added the top-level directory of {path[:200]}"
    return False, "an editable install, and the patch changed only its modules (or documentation)"


def _signum(name):
    import signal
    try:
        return int(getattr(signal, name))
    except (AttributeError, TypeError):
        return 0


def run_repo(sup, job):
    return RepoJob(sup, job).run()
