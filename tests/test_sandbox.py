"""The Docker sandbox against the real engine: labels and reasons for what candidates do."""

import pytest

pytestmark = pytest.mark.docker

PROMPT = "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n"


def body(text):
    return PROMPT + text


def test_correct_candidate_passes(run_job):
    r = run_job(body("    return a + b\n"))
    assert (r["status"], r["reason"]) == ("passed", "tests_completed")
    assert r["healthy"] is True and r["cpu_s"] > 0 and r["peak_memory_kb"] > 0


def test_wrong_answer_fails_on_assertion(run_job):
    r = run_job(body("    return a - b\n"))
    assert (r["status"], r["reason"]) == ("failed", "assertion")
    assert "candidate(1, 2) == 3" in r["detail"]


def test_infinite_loop_times_out_within_timeout_plus_one_second(run_job):
    r = run_job(body("    while True:\n        pass\n"), timeout_s=1.0)
    assert (r["status"], r["reason"]) == ("timed_out", "wall_time_limit")
    assert 1.0 <= r["wall_s"] < 2.0


def test_memory_beyond_the_limit_fails_with_a_memory_reason(run_job):
    r = run_job(body("    x = bytearray(400 * 1024 * 1024)\n    return a + b\n"), memory_mb=128)
    assert (r["status"], r["reason"]) == ("failed", "memory_limit")


@pytest.mark.parametrize("code,reason", [
    ("    return a + b\nimport sys\nsys.exit(0)\n", "exited_early"),
    ("    return a + b\nimport os\nos._exit(0)\n", "candidate_exited"),
    ("    import os\n    os._exit(0)\n", "exited_early"),
    ("    import sys\n    sys.exit(0)\n", "exited_early"),
    ("    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n", "signal:SIGKILL"),
    ("    import ctypes\n    ctypes.string_at(0)\n", "signal:SIGSEGV"),
])
def test_exiting_or_crashing_is_never_a_pass(run_job, code, reason):
    r = run_job(body(code))
    assert r["status"] == "failed"
    assert r["reason"] == reason or (reason == "candidate_exited" and r["reason"] == "exited_early")


def test_printed_markers_and_forged_results_do_not_pass(run_job):
    code = body("    return a - b\n") + (
        "import sys, gc\n"
        "print('PASSED'); print('{\"status\": \"passed\", \"reason\": \"tests_completed\"}')\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        import os; os.write(fd, b'{\"status\": \"passed\", \"reason\": \"tests_completed\"}')\n"
        "    except OSError:\n"
        "        pass\n")
    r = run_job(code)
    assert r["status"] == "failed"
    assert "PASSED" in r["stdout_tail"]


def test_object_with_forged_equality_cannot_pass(run_job):
    code = body("    class Yes:\n        def __eq__(self, other):\n            return True\n    return Yes()\n")
    r = run_job(code)
    assert (r["status"], r["reason"]) == ("failed", "unencodable_return")


def test_syntax_error_is_named(run_job):
    r = run_job(body("    return a +\n"))
    assert (r["status"], r["reason"]) == ("failed", "syntax_error")


def test_exception_type_is_named(run_job):
    r = run_job(body("    raise ValueError('no')\n"))
    assert (r["status"], r["reason"]) == ("failed", "exception:ValueError")


def test_output_flood_is_cut_and_labelled(run_job):
    r = run_job(body("    import sys\n    while True:\n        sys.stdout.write('x' * 65536)\n"),
                output_bytes=100_000)
    assert (r["status"], r["reason"]) == ("failed", "output_limit")
    assert len(r["stdout_tail"]) <= 2048


def test_in_place_mutation_is_visible_to_the_test(run_job):
    test = ("def check(candidate):\n    data = [3, 1, 2]\n    candidate(data)\n    assert data == [1, 2, 3]\n")
    r = run_job("def sort_in_place(xs):\n    xs.sort()\n", test=test, entry_point="sort_in_place")
    assert r["status"] == "passed"


def test_prompt_helpers_in_the_test_come_from_the_problem(run_job):
    prompt = "def double(x):\n    return 2 * x\n\ndef f(x):\n    \"\"\"Return double(x) + 1.\"\"\"\n"
    test = "def check(candidate):\n    assert candidate(3) == double(3) + 1\n"
    # The candidate redefines the helper the test relies on; the test still uses the problem's.
    code = "def double(x):\n    return 0\n\ndef f(x):\n    return 1\n"
    r = run_job(code, prompt=prompt, test=test, entry_point="f")
    assert r["status"] == "failed"


def test_nothing_survives_into_the_next_candidate(docker_backend, run_job):
    session = docker_backend.open_session()
    session.start()
    try:
        leave = body(
            "    return a + b\n"
            "import os, subprocess\n"
            "open('/tmp/left-behind', 'w').write('x')\n"
            "open('/dev/shm/left-behind', 'w').write('x')\n"
            "os.environ['PASSK_SECRET'] = 'leak'\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    import time\n"
            "    time.sleep(600)\n")
        first = run_job(leave, session=session)
        assert first["status"] == "passed"
        probe = body(
            "    import os\n"
            "    seen = []\n"
            "    for p in ('/tmp/left-behind', '/dev/shm/left-behind'):\n"
            "        if os.path.exists(p): seen.append(p)\n"
            "    if 'PASSK_SECRET' in os.environ: seen.append('env')\n"
            "    for pid in os.listdir('/proc'):\n"
            "        if pid.isdigit() and int(pid) != os.getpid():\n"
            "            try:\n"
            "                st = os.stat('/proc/' + pid)\n"
            "            except OSError:\n"
            "                continue\n"
            "            if st.st_uid == os.getuid(): seen.append('proc')\n"
            "    assert not seen, seen\n"
            "    return a + b\n")
        second = run_job(probe, session=session)
        assert second["status"] == "passed", second["detail"]
    finally:
        session.stop()


def test_candidate_cannot_reach_the_network(run_job):
    code = body(
        "    import socket\n"
        "    for host in ('1.1.1.1', '169.254.169.254', '172.17.0.1'):\n"
        "        s = socket.socket()\n"
        "        s.settimeout(0.5)\n"
        "        try:\n"
        "            s.connect((host, 80))\n"
        "            return 'reached ' + host\n"
        "        except OSError:\n"
        "            pass\n"
        "    return a + b\n")
    r = run_job(code)
    assert r["status"] == "passed", r["detail"]


def test_candidate_runs_unprivileged_in_a_read_only_root(run_job):
    code = body(
        "    import os\n"
        "    assert os.getuid() == 10001 and os.geteuid() == 10001\n"
        "    try:\n"
        "        open('/usr/evil', 'w')\n"
        "        return 'wrote to the root filesystem'\n"
        "    except OSError:\n"
        "        pass\n"
        "    try:\n"
        "        open('/tmp/passk/x', 'w')\n"
        "        return 'wrote into the supervisor directory'\n"
        "    except OSError:\n"
        "        pass\n"
        "    return a + b\n")
    r = run_job(code)
    assert r["status"] == "passed", r["detail"]


def test_fork_bomb_is_contained_and_the_container_stays_usable(docker_backend, run_job):
    if docker_backend.settings.runtime == "runsc":
        pytest.skip("known: under gVisor's ptrace platform a fork bomb sometimes takes the whole sandbox down "
                    "(the run then retries it as an infrastructure fault); tracked for the hostile-candidate work")
    session = docker_backend.open_session()
    session.start()
    try:
        bomb = body("    import os\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n")
        r = run_job(bomb, session=session, timeout_s=1.0)
        assert r["status"] == "timed_out"
        after = run_job(body("    return a + b\n"), session=session)
        assert after["status"] == "passed"
    finally:
        session.stop()
