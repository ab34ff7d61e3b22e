"""Agents in passk's environments (harness/sessions): the Docker command line's parts without the engine."""

import json
import time

import pytest

from harness.sessions.images import Catalog, bare_name

from .conftest import ROOT


ROWS = [{"instance_id": "pytest-dev__pytest-7373", "repo": "pytest-dev/pytest"},
        {"instance_id": "sympy__sympy-20590", "repo": "sympy/sympy", "image_name": "my.registry:5000/team/sym:v3"}]


def test_an_image_name_finds_its_instance_in_every_form_the_harnesses_ask_by():
    cat = Catalog(ROWS)
    for ref in ("docker.io/swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-7373:latest",
                "swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-7373",
                "sweb.eval.x86_64.pytest-dev_1776_pytest-7373:v1",
                "docker.io/xingyaoww/sweb.eval.x86_64.pytest-dev_s_pytest-7373:latest",
                "SWEB.EVAL.X86_64.PYTEST-DEV_1776_PYTEST-7373", "sweb.eval.x86_64.pytest-dev__pytest-7373"):
        assert cat.find(ref)["instance_id"] == "pytest-dev__pytest-7373", ref
    assert cat.find("my.registry:5000/team/sym:v3")["instance_id"] == "sympy__sympy-20590"
    assert bare_name("my.registry:5000/team/sym@sha256:" + "0" * 64) == "sym"


def test_an_image_passk_does_not_know_or_cannot_be_a_name_finds_nothing():
    cat = Catalog(ROWS)
    for ref in ("sweb.eval.x86_64.pytest-dev_1776_pytest-7374", "ubuntu:22.04", "", "a b", "../../etc",
                "sweb.eval.x86_64.pytest-dev__pytest-7373\n", "x" * 600):
        assert cat.find(ref) is None, ref


def test_rows_by_id_take_the_first_of_each_and_name_what_no_file_has(tmp_path):
    from harness.core.errors import InputError
    from harness.sessions.rows import pick
    a, b = tmp_path / "a.jsonl", tmp_path / "b.json"
    a.write_text(json.dumps({"instance_id": "x__y-1", "n": 1}) + "\n\n" + json.dumps({"instance_id": "x__y-2"}) + "\n")
    b.write_text(json.dumps([{"instance_id": "x__y-1", "n": 2}, {"instance_id": "x__y-3"}]))
    got = pick([str(a), str(b)], ["x__y-3", "x__y-1"])
    assert list(got) == ["x__y-3", "x__y-1"] and got["x__y-1"]["n"] == 1
    with pytest.raises(InputError, match="x__y-9: no such instance in .*a.jsonl"):
        pick([str(a), str(b)], ["x__y-1", "x__y-9"])
    (tmp_path / "bad.jsonl").write_text('{"instance_id": "x__y-1"}\nnot json\n')
    with pytest.raises(InputError, match="bad.jsonl:2"):
        pick([str(tmp_path / "bad.jsonl")], ["x__y-1"])


def test_docker_run_and_exec_read_as_docker_reads_them():
    from harness.integrations.passk_docker import env_pairs, parse
    c = parse(["run", "-d", "--name", "minisweagent-1a2b3c4d", "-w", "/testbed", "--rm",
               "docker.io/swebench/sweb.eval.x86_64.a_1776_b-1:latest", "sleep", "2h"])
    assert c.command == "run" and c.options == {"detach": True, "name": "minisweagent-1a2b3c4d", "workdir": "/testbed",
                                                "rm": True}
    assert c.args == ["docker.io/swebench/sweb.eval.x86_64.a_1776_b-1:latest", "sleep", "2h"]
    c = parse(["exec", "-w", "/testbed", "-e", "PAGER=cat", "--env=BASH_ENV=/root/.bashrc", "abc123", "bash", "-c",
               "ls -la && echo -e x"])
    assert c.options == {"workdir": "/testbed", "env": ["PAGER=cat", "BASH_ENV=/root/.bashrc"]}
    assert c.args == ["abc123", "bash", "-c", "ls -la && echo -e x"]      # flags after the container are its command
    assert env_pairs(c.options["env"]) == {"PAGER": "cat", "BASH_ENV": "/root/.bashrc"}
    assert parse(["run", "-dit", "-wCWD", "img"]).options == {"detach": True, "interactive": True, "tty": True,
                                                              "workdir": "CWD"}
    assert parse(["run", "-de=K=V", "img"]).options == {"detach": True, "env": ["K=V"]}
    assert parse(["rm", "-f", "abc"]).options == {"force": True} and parse(["stop", "abc", "-t", "3"]).args == ["abc"]
    assert parse(["run", "--rm=false", "img"]).options == {"rm": False}
    assert parse(["--version"]).command == "version"


def test_what_docker_refuses_is_refused_with_its_status_and_what_passk_does_not_give_is_named():
    import pytest
    from harness.integrations.passk_docker import UsageError, env_pairs, parse
    for argv, status, says in ((["run", "--bogus", "img"], 125, "unknown flag: --bogus"),
                               (["run", "-dZ", "img"], 125, "unknown shorthand flag: 'Z' in -dZ"),
                               (["run", "-d"], 125, "requires at least 1 argument"),
                               (["exec", "abc"], 125, "requires at least 2 arguments"),
                               (["run", "--name"], 125, "flag needs an argument: --name"),
                               (["run", "--rm=maybe", "img"], 125, "invalid argument"),
                               (["frobnicate"], 1, "is not a docker command"),
                               (["run", "-v", "/:/host", "img"], 125, "a volume from the host"),
                               (["run", "--privileged", "img"], 125, "a privileged container"),
                               (["run", "-p", "80:80", "img"], 125, "published port"),
                               ([], 125, "Usage")):
        with pytest.raises(UsageError) as e:
            parse(argv)
        assert e.value.status == status and says in str(e.value), (argv, str(e.value))
    assert parse(["rm", "-v", "abc"]).options == {"volumes": True}          # rm's -v is not run's
    with pytest.raises(UsageError):
        env_pairs(["=x"])
    assert env_pairs(["ONLY_NAME"]) == {}                                   # the caller's own value: not passed


@pytest.mark.docker
def test_an_agent_sandbox_is_the_instance_set_up_as_its_user_and_a_command_dies_with_its_caller(tmp_path):
    """The agent's sandbox of a repository instance, against the real engine: the tree at its base commit
    with its install done (no test patch), editable by the agent's unprivileged user, the environment's
    Python first on PATH for bash -c with mini-swe-agent's BASH_ENV and for bash -lc, no network; a command
    past its time, or whose caller was killed, ends with its whole process group; removal is idempotent."""
    import subprocess
    import sys
    from harness.sessions import sandbox
    from .repo_fixtures import write_task
    t = write_task(tmp_path, [None])
    row = json.loads(t["rows"].read_text())
    p = sandbox.prepare(row, str(t["repos"]), specs=str(t["specs"]))
    cid = sandbox.start(p, lifetime_s=600)
    try:
        def sh(cmd, **kw):
            code, out = sandbox.run(cid, ["bash", "-c", cmd], env={"BASH_ENV": "/root/.bashrc"}, **kw)
            return code, out.decode()
        code, out = sh("id -u; python -c 'import sys, tinycalc; print(tinycalc.__file__, sys.prefix)'; pwd")
        assert code == 0 and out.split() == ["10001", "/testbed/tinycalc/__init__.py", "/venv", "/testbed"], out
        code, out = sandbox.run(cid, ["bash", "-lc", "command -v python pytest"])
        assert code == 0 and out.decode().split() == ["/venv/bin/python", "/venv/bin/pytest"], out
        code, out = sh("grep -c test_mean_of_nothing tests/test_calc.py; git log --oneline | wc -l")
        assert out.split()[0] == "0", out                                  # the test patch is not there
        code, out = sh("printf '\\n# edited\\n' >> tinycalc/__init__.py && git status --short && pytest -q 2>&1 | tail -1")
        assert code == 0 and "M tinycalc/__init__.py" in out and "2 passed" in out, out
        code, out = sh("python -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), timeout=3)'")
        assert code != 0 and ("unreachable" in out or "Errno" in out), out
        code, out = sh("exit 7")
        assert code == 7
        t0 = time.monotonic()
        code, _ = sh("sleep 300 & sleep 301", timeout_s=2)
        assert code == 137 and time.monotonic() - t0 < 60
        caller = subprocess.Popen([sys.executable, "-c", "import sys; from harness.sessions.sandbox import run; "
                                   "run(sys.argv[1], ['bash', '-c', 'sleep 302 & sleep 303'])", cid], cwd=ROOT)
        time.sleep(3)
        caller.kill()                                                       # as mini-swe-agent's timeout does
        caller.wait()
        for _ in range(50):
            code, out = sh("python -c \"import glob; print(sum(open(f, 'rb').read().startswith(b'sleep\\\\x0030') "
                           "for f in glob.glob('/proc/[0-9]*/cmdline')))\"")
            if out.strip() == "0":
                break
            time.sleep(0.2)
        assert out.strip() == "0", out                                      # every group killed
    finally:
        assert sandbox.remove(cid) is True
    assert sandbox.remove(cid) is False


@pytest.mark.docker
def test_passk_docker_answers_the_four_calls_mini_swe_agent_makes(tmp_path):
    """passk-docker as mini-swe-agent's DockerEnvironment calls it (minisweagent/environments/docker.py):
    `run -d --name N -w CWD --rm IMAGE sleep 2h` prints the id within its 120 s; `exec -w CWD -e K=V... ID
    bash -c CMD` gives the command's output and status; `stop ID`, then `rm -f ID`, both succeed twice; an
    image it does not know is Docker's error shape and status, naming what it knows."""
    import os
    import subprocess
    import sys
    from .repo_fixtures import write_task
    t = write_task(tmp_path, [None])
    env = {**os.environ, "PASSK_ROWS": str(t["rows"]), "PASSK_REPOS": str(t["repos"]),
           "PASSK_REPO_SPECS": str(t["specs"])}

    def docker(*args, timeout=120):
        return subprocess.run([sys.executable, "-m", "harness.integrations.passk_docker", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
    r = docker("run", "-d", "--name", "minisweagent-" + os.urandom(4).hex(), "-w", "/testbed", "--rm",
               "docker.io/swebench/sweb.eval.x86_64.passk-tests_1776_tinycalc-1:latest", "sleep", "2h")
    assert r.returncode == 0, r.stderr
    cid = r.stdout.strip()
    assert len(cid) == 64 and all(c in "0123456789abcdef" for c in cid), r.stdout
    try:
        r = docker("exec", "-w", "/testbed", "-e", "PAGER=cat", "-e", "BASH_ENV=/root/.bashrc", cid, "bash", "-c",
                   "echo $PAGER; python -c 'import tinycalc; print(tinycalc.mean([2, 4]))'; echo to-stderr >&2; exit 3")
        assert r.returncode == 3 and r.stdout.split() == ["cat", "3.0", "to-stderr"], (r.stdout, r.stderr)
        r = docker("exec", "-w", "/testbed", cid, "bash", "-c",
                   "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff")
        assert r.returncode == 0 and r.stdout.startswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    finally:
        for args in (("stop", cid), ("stop", cid), ("rm", "-f", cid), ("rm", "-f", cid)):
            r = docker(*args)
            assert r.returncode == 0 and r.stdout.strip() == cid, (args, r.stderr)
    r = docker("exec", cid, "true")
    assert r.returncode == 1 and "No such container" in r.stderr
    # a burst beyond PASSK_WORKERS waits, bounded, and then says why
    env.update(PASSK_WORKERS="1", PASSK_QUEUE_S="2")
    image = "sweb.eval.x86_64.passk-tests_1776_tinycalc-1"
    first = docker("run", "-d", image, "sleep", "600").stdout.strip()
    try:
        t0 = time.monotonic()
        r = docker("run", "-d", image, "sleep", "600")
        assert r.returncode == 125 and "the most PASSK_WORKERS allows (1)" in r.stderr and "waited 2 s" in r.stderr
        assert 2 <= time.monotonic() - t0 < 60
    finally:
        docker("rm", "-f", first)
    r = docker("run", "-d", "sweb.eval.x86_64.nobody_1776_nothing-1", "sleep", "1h")
    assert r.returncode == 125 and "Error response from daemon" in r.stderr and "sweb.eval.x86_64." in r.stderr


@pytest.mark.docker
def test_images_build_rows_makes_every_environment_and_snapshot_ready_and_names_what_it_cannot(tmp_path):
    import subprocess
    import sys
    from .repo_fixtures import row, write_task
    t = write_task(tmp_path, [None])
    rows = tmp_path / "two.jsonl"
    rows.write_text(t["rows"].read_text() + json.dumps(row(t["base"], "passk-tests__tinycalc-2", "7.7")) + "\n")
    r = subprocess.run([sys.executable, "-m", "harness.cli", "images", "build", "--rows", str(rows), "--repos",
                        str(t["repos"]), "--repo-specs", str(t["specs"])], cwd=ROOT, capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 1, r.stderr
    ready = [line for line in r.stdout.splitlines() if line.startswith("passk-tests__tinycalc-1 ")]
    assert len(ready) == 1 and "passk-repo-env-passk-tests-tinycalc" in ready[0] and " snapshot " in ready[0]
    assert "passk-tests__tinycalc-2" in r.stderr and "7.7" in r.stderr and "1 of 2 instances ready" in r.stderr


@pytest.mark.docker
def test_a_sandbox_past_its_lifetime_or_idle_is_swept_and_a_live_one_is_not(tmp_path):
    from harness.sessions import sandbox
    from .repo_fixtures import write_task
    t = write_task(tmp_path, [None])
    p = sandbox.prepare(json.loads(t["rows"].read_text()), str(t["repos"]), specs=str(t["specs"]))
    cid = sandbox.start(p, lifetime_s=600)
    try:
        assert cid not in {c["id"] for c in sandbox.sweep()}                       # live: kept
        mine = [c for c in sandbox.listing() if c["id"] == cid]
        assert mine and mine[0]["instance"] == "passk-tests__tinycalc-1" and 590 <= mine[0]["seconds_left"] <= 600
        assert cid not in {c["id"] for c in sandbox.sweep(idle_s=3600, now=time.time() + 300)}
        assert cid in {c["id"] for c in sandbox.sweep(idle_s=60, now=time.time() + 300)}  # idle 300 s > 60
    finally:
        sandbox.remove(cid)
    cid = sandbox.start(p, lifetime_s=600)
    try:
        assert cid in {c["id"] for c in sandbox.sweep(idle_s=10 ** 6, now=time.time() + 601)}   # its lifetime is over
    finally:
        sandbox.remove(cid)


@pytest.mark.docker
def test_a_sessions_files_and_diff_come_from_passks_own_copy_of_the_trees_history(tmp_path):
    """Files in and out of an agent's sandbox as its user, and the diff of /testbed against the instance as
    it was set up, read through passk's read-only copy of .git: an agent that commits its change (or rewrites
    /testbed/.git) still shows it in the diff, and the diff applies as evaluate applies a patch."""
    from harness.core.errors import InputError
    from harness.sessions.local import LocalSessions
    from harness.sessions import sandbox
    from .repo_fixtures import write_task
    t = write_task(tmp_path, [None])
    row = json.loads(t["rows"].read_text())
    sessions = LocalSessions([row], lambda r: sandbox.prepare(r, str(t["repos"]), specs=str(t["specs"])))
    sid = sessions.create("sweb.eval.x86_64.passk-tests_1776_tinycalc-1:latest", lifetime_s=600)
    try:
        assert sessions.diff(sid) == ""
        original = sessions.read_file(sid, "/testbed/tinycalc/__init__.py")
        assert b"def mean" in original
        sessions.write_file(sid, "/testbed/notes/new.txt", b"\x00\xffbinary and new\n")
        assert sessions.read_file(sid, "/testbed/notes/new.txt") == b"\x00\xffbinary and new\n"
        with pytest.raises(InputError, match="No such file"):
            sessions.read_file(sid, "/testbed/absent.py")
        with pytest.raises(InputError, match="Read-only|Permission"):
            sessions.write_file(sid, "/etc/passk-was-here", b"x")
        with pytest.raises(InputError, match="absolute"):
            sessions.write_file(sid, "relative.txt", b"x")
        sessions.write_file(sid, "/testbed/tinycalc/__init__.py", original.replace(b"return sum(xs) / len(xs)",
                                                                                  b"return sum(xs) / max(1, len(xs))"))
        code, out = sessions.exec(sid, ["bash", "-c", "git -c user.name=a -c user.email=a@b commit -qam forged && "
                                        "git status --short | wc -l && git diff HEAD~1 --stat | tail -1"])
        assert code == 0 and out.split()[0] == b"1", out                    # the agent's own git sees it committed
        patch = sessions.diff(sid)
        assert "max(1, len(xs))" in patch and "notes/new.txt" in patch and "GIT binary patch" in patch
        code, out = sessions.exec(sid, ["bash", "-c", "rm -rf .git && echo gone"])
        assert code == 0
        assert sessions.diff(sid) == patch                                  # the agent's .git is not what is read
        assert sessions.find(sid[:12]).instance == "passk-tests__tinycalc-1"
    finally:
        assert sessions.remove(sid)
    assert sessions.find(sid) is None and not sessions.remove(sid)
    # what evaluate makes of the diff: the instance's tests pass with it
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"instance_id": row["instance_id"], "model_patch": patch}) + "\n")
    from harness.cli import main
    assert main(["evaluate", "--problems", str(t["rows"]), "--samples", str(preds), "--repos", str(t["repos"]),
                 "--repo-specs", str(t["specs"]), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    got = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert [(g["status"], g["reason"]) for g in got] == [("passed", "resolved")], got


@pytest.mark.docker
def test_passk_serve_sessions_and_passk_docker_through_them(tmp_path):
    """Sessions over HTTP: one per instance asked for, exec, files, diff, grade (as /v1/evaluate grades), the
    capacity's 429 with Retry-After, and passk-docker with PASSK_URL driving the same service; nothing left
    when the service stops."""
    import os
    import subprocess
    import sys
    import urllib.error
    from harness.core.errors import HarnessError
    from harness.sessions import sandbox
    from harness.sessions.remote import RemoteSessions
    from tests.test_serve import Server
    from .repo_fixtures import write_task
    t = write_task(tmp_path, [None])
    s = Server("--workers", "1", "--problems", str(t["rows"]), "--repos", str(t["repos"]), "--repo-specs",
               str(t["specs"]), "--sessions", "1", token="sesame")
    try:
        remote = RemoteSessions(s.url, "sesame", queue_s=0)
        sid = remote.create("docker.io/swebench/sweb.eval.x86_64.passk-tests_1776_tinycalc-1:latest", 600)
        with pytest.raises(HarnessError, match="capacity of sessions"):
            remote.create("passk-tests__tinycalc-1", 600)
        with pytest.raises(urllib.error.HTTPError) as refused:
            s.post("/v1/sessions", {"instance_id": "passk-tests__tinycalc-1"})
        assert refused.value.code == 429 and int(refused.value.headers["Retry-After"]) >= 1
        with pytest.raises(urllib.error.HTTPError) as unknown:
            s.post("/v1/sessions/" + "f" * 64 + "/exec", {"command": "true"})
        assert unknown.value.code == 404
        code, out = remote.exec(sid, ["bash", "-c", "id -u; exit 7"])
        assert (code, out) == (7, b"10001\n")
        with pytest.raises(urllib.error.HTTPError) as as_root:      # root only in a gVisor sandbox
            s.post(f"/v1/sessions/{sid}/exec", {"command": "id -u", "root": True})
        assert as_root.value.code == 400 and "gVisor" in as_root.value.read().decode()
        got = s.post(f"/v1/sessions/{sid}/exec", {"command": "sleep 300", "timeout_s": 2})
        assert got["exit_code"] == 137 and got["timed_out"] is True
        remote.write_file(sid, "/testbed/tinycalc/__init__.py", remote.read_file(sid, "/testbed/tinycalc/__init__.py")
                          .replace(b"return sum(xs) / len(xs)", b"return sum(xs) / len(xs) if xs else 0.0"))
        env = {**os.environ, "PASSK_URL": s.url, "PASSK_TOKEN": "sesame", "PYTHONPATH": ROOT}
        docker = [sys.executable, "-m", "harness.integrations.passk_docker"]
        r = subprocess.run([*docker, "exec", "-w", "/testbed", sid[:12], "bash", "-lc", "git status --short"],
                           capture_output=True, env=env, timeout=120)
        assert (r.returncode, r.stdout) == (0, b" M tinycalc/__init__.py\n"), r
        assert "if xs else 0.0" in remote.diff(sid)
        graded = remote.grade(sid, "binary")
        assert (graded["status"], graded["reason"], graded["reward"]) == ("passed", "resolved", 1.0), graded
        r = subprocess.run([*docker, "rm", "-f", sid], capture_output=True, env=env, timeout=120)
        assert r.returncode == 0 and remote.find(sid) is None
        r = subprocess.run([*docker, "run", "-d", "--name", "m1", "-w", "/testbed", "sweb.eval.x86_64.nothing_1776_here",
                            "sleep", "2h"], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 125 and "Unable to find image" in r.stderr, r.stderr
        r = subprocess.run([*docker, "run", "-d", "--name", "m1", "-w", "/testbed",
                            "sweb.eval.x86_64.passk-tests_1776_tinycalc-1", "sleep", "2h"],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0 and len(r.stdout.strip()) == 64, r.stderr
        r = subprocess.run([*docker, "exec", "m1", "bash", "-c", "pwd"], capture_output=True, env=env, timeout=120)
        assert r.stdout == b"/testbed\n"
        caller = subprocess.Popen([*docker, "exec", "m1", "bash", "-c", "sleep 302 & sleep 303"], env=env)
        time.sleep(3)
        caller.kill()                                  # as mini-swe-agent's timeout does: the service ends it
        caller.wait()
        count = ("python -c \"import glob; print(sum(open(f, 'rb').read().startswith(b'sleep\\x0030') "
                 "for f in glob.glob('/proc/[0-9]*/cmdline')))\"")
        for _ in range(50):
            r = subprocess.run([*docker, "exec", "m1", "bash", "-c", count], capture_output=True, env=env, timeout=120)
            if r.stdout.strip() == b"0":
                break
            time.sleep(0.2)
        assert r.stdout.strip() == b"0", r
    finally:
        s.stop()
    assert not [c for c in sandbox.listing() if c["instance"] == "passk-tests__tinycalc-1"]


@pytest.mark.docker
def test_a_plain_environments_session_over_http_needs_no_rows_and_has_nothing_to_grade(tmp_path):
    """A session of a plain environment (passk's Python image, an empty /testbed): a service with no rows
    offers it; commands run as passk's user with no network; files go both ways; diff and grade are refused
    (400), an unknown language is 400 naming it; nothing is left when the service stops."""
    import urllib.error
    from harness.sessions import sandbox
    from tests.test_serve import Server
    s = Server("--workers", "1", "--sessions", "1")
    try:
        made = s.post("/v1/sessions", {"language": "python", "lifetime_s": 600})
        sid = made["id"]
        assert made["instance_id"] == "plain:python"
        got = s.post(f"/v1/sessions/{sid}/exec", {"command": "id -u; pwd; ls -A /testbed | wc -l; "
                                                  "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)'"})
        assert got["exit_code"] != 0 and got["output"].startswith("10001\n/testbed\n0\n"), got
        assert "Network is unreachable" in got["output"] or "OSError" in got["output"], got
        s.request("PUT", f"/v1/sessions/{sid}/files", {"path": "/testbed/a.py", "content": "print(6 * 7)\n"})
        got = s.post(f"/v1/sessions/{sid}/exec", {"argv": ["python3", "a.py"]})
        assert (got["exit_code"], got["output"]) == (0, "42\n"), got
        for route, call in (("diff", lambda: s.get(f"/v1/sessions/{sid}/diff")),
                            ("grade", lambda: s.post(f"/v1/sessions/{sid}/grade", {"reward": "binary"}))):
            with pytest.raises(urllib.error.HTTPError) as refused:
                call()
            assert refused.value.code == 400 and "plain environment" in refused.value.read().decode(), route
        with pytest.raises(urllib.error.HTTPError) as unknown:
            s.post("/v1/sessions", {"language": "no-such-language"})
        assert unknown.value.code == 400 and "no-such-language" in unknown.value.read().decode()
        with pytest.raises(urllib.error.HTTPError) as both:
            s.post("/v1/sessions", {"language": "python", "instance_id": "x"})
        assert both.value.code == 400
    finally:
        s.stop()
    assert not [c for c in sandbox.listing() if c["instance"] == "plain:python"]


MINI_SWE_AGENT = "mini-swe-agent==2.4.6"


def _mini_swe_agent() -> str:
    """mini-swe-agent from PyPI in a venv of its own, made once and kept in passk's cache: its mini-extra."""
    import subprocess
    import sys
    from harness.core.paths import cache_root
    venv = cache_root("test-tools") / MINI_SWE_AGENT.replace("==", "-")
    mini = venv / "bin" / "mini-extra"
    if not mini.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        got = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", MINI_SWE_AGENT], capture_output=True,
                             text=True, timeout=900)
        assert got.returncode == 0, got.stderr[-2000:]
    return str(mini)


@pytest.mark.docker
@pytest.mark.parametrize("remote", [False, True], ids=["local", "through-passk-serve"])
def test_mini_swe_agents_own_batch_runner_unchanged_on_passk(tmp_path, remote):
    """mini-swe-agent from PyPI, its own `mini-extra swebench` and swebench.yaml, its scripted model, with
    MSWEA_DOCKER_EXECUTABLE=passk-docker (locally, or through passk serve's sessions with no engine on the
    agent's side): the rollout that fixes tinycalc is graded resolved by passk evaluate, the one that does
    nothing is not, and no sandbox is left."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("drill", str(ROOT / "scripts" / "agents" / "mini_swe_agent_drill.py"))
    drill = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drill)
    lines = []
    got = drill.drill(_mini_swe_agent(), tmp_path, remote=remote, log=lines.append)
    assert got["verdicts"] == {"passk-tests__tinycalc-1": ("passed", "resolved"),
                               "passk-tests__tinycalc-2": ("failed", "empty_patch")}, "\n".join(lines)
    assert got["exits"] == {"passk-tests__tinycalc-1": "Submitted", "passk-tests__tinycalc-2": "Submitted"}
    assert got["left"] == 0


@pytest.mark.docker
def test_an_agents_hostile_commands_are_contained(tmp_path):
    """The hostile table for agents (tests/agent_attacks.py) under runc: every row holds; under gVisor it
    runs in scripts/attacks/agent_attacks.py."""
    from .agent_attacks import run_table
    got = run_table(tmp_path, "runc")
    assert [o.name for o in got if not o.ok] == [], [(o.name, o.detail) for o in got if not o.ok]
