"""The contract between the host and the supervisor, written down once: both sides read these names
(the host imports this file as harness.containers.box.protocol). The supervisor's `ready` message
carries VERSION; the host refuses an image that speaks another.

A job (one JSON line to the supervisor: on the host's socket, or on its stdin):
    id, code (the program), limits (supervisor_limits on the host), channel, and per channel:
      proxy       prompt, test, entry_point (or null), runner
      in_process  test, entry_point (or null), runner
      io          tests ([{input, output, name, group, flags}]), compare (a rule of COMPARE_RULES), and
                  optionally build (a program in another language: compiled once, its run step once per
                  test) and judge (a judged problem's limits, checker, groups: box/judge.py); a result
                  then carries `tests` (each test's verdict, CPU and wall time, memory)
      repo        repo: the instance (`instance`, a snapshot's name under /opt/passk/instances, or `tree_b64`
                  with the spec's `pre_install` and `install` to set it up), `mode` ("snapshot": set up and
                  save the instance only), `base`, `install`, `eval_commands`, `test_patch`, `test_files`,
                  `directives`, `test_cmd`, `junit`, `env`; a result then carries `repo_log_b64`,
                  `test_exit_code`, `junit_b64` and `changed` (the paths the patch changed: box/repo.py)
    and for a program in another language (in_process): language, test (with MARKER_PLACEHOLDER where the
    end of the tests writes the job's nonce on fd 3), build {language, source (file name), files (more
    files), env ("{dir}" is the job's directory), steps [{step, argv, limits}] (a compile, then the run;
    a step without limits has the job's)}
A result (one JSON line on its stdout): event "result" (or "fault"), id, status, reason, detail,
verdict_channel, channel_detail, and the measurements (wall_s, cpu_s, ...; see docs/output-and-scoring.md)."""

VERSION = 9   # 3: transport credit ("credit" messages, "extend", transport_s in results); 4: host socket;
              # 5: programs in other languages (build steps, the completion marker); 6: the judge (io in
              # any language, checkers, per-test results); 7: the repo channel (box/repo.py); 8: its
              # instance snapshots (repo.instance, repo.mode "snapshot") and the paths a patch changed; 9: the
              # project channel (box/project.py)

# In a program of another language, where its tests' end writes the job's nonce (32 hex characters).
MARKER_PLACEHOLDER = "@@PASSK_MARKER@@"

# Where the supervisor finds the host's unix socket (a path inside the container), when the host listens
# on one; without it, jobs come on stdin and results go to stdout (Docker's attach stream).
HOST_SOCKET_ENV = "PASSK_HOST_SOCKET"
# The memory limit (MB) the host's jobs will carry, when it knows it: the tester starts with the container.
TESTER_MEMORY_ENV = "PASSK_TESTER_MEMORY_MB"

PASSED, FAILED, TIMED_OUT, ERROR = "passed", "failed", "timed_out", "error"
STATUSES = (PASSED, FAILED, TIMED_OUT, ERROR)

# Who decides a verdict:
#   proxy       the problem's tests run in a test worker (uid 10002); the candidate's functions are
#               called through a socket with plain data; the verdict is given there. Unforgeable.
#   in_process  the tests run in the candidate's own process and it reports; forgeable by deliberate
#               code (as in every in-process harness), never by exit code 0, output or an early exit.
#   io          the program reads each test's input on stdin; the supervisor (root) compares its
#               stdout with the expected output, which no process of the candidate's ever holds.
#   repo        a patch to a repository, judged by the repository's own tests (box/repo.py): the tests run
#               in the patched code's process, so a patch can reach what they report; the exit status comes
#               from the forkserver, and the host grades the log against it and the runner's own report.
#   project     a small project (an Exercism exercise) built and tested by its language's own tools
#               (box/project.py): the candidate's code runs in the tests' process; the exit status comes
#               from the forkserver, and the host asks the runner's own report for every declared test.
CHANNELS = ("proxy", "in_process", "io", "repo", "project")

# How the tests of the proxy and in_process channels start:
#   check     the test code defines check(candidate); it is called with the entry point (HumanEval)
#   script    the test code checks by itself when it runs: asserts, or test_check() (MBPP, MultiPL-E)
#   unittest  the test code defines unittest.TestCase classes; they are run
#   bigcodebench  BigCodeBench's rule (in_process): program and test exec'd as one module named __test__
#             (os, sys and environ in its globals; exit and quit None), then its TestCases class run in a
#             fresh temporary directory, with TZ=UTC, OMP_NUM_THREADS=1, matplotlib's Agg backend and
#             plt.close('all') first, stdout and stderr discarded and stdin unreadable (candidate.run_bigcodebench)
# and how an io program runs:
#   script      a fresh process runs it as __main__ for each test (CodeContests, LiveCodeBench, native)
#   apps_stdin  as APPS's grader runs a stdin program: its lines inside `def code():` of a module named
#               tmp_sol, called with sys.stdin a StringIO of the input, open() a mock of it, and stdout
#               captured (candidate.run_apps_stdin)
#   evalplus    (proxy) EvalPlus's differential tests: the entry point called on each input, its return
#               compared with the ground truth's by EvalPlus's rule (channels/differential.py); a
#               job runs one phase (base or plus inputs) per candidate process
RUNNERS = ("check", "script", "unittest", "apps_stdin", "evalplus", "bigcodebench")
# The sidecar file of an io job's program that names a runner other than `script` (in its directory).
IO_RUNNER_FILE = "io.json"

# How the io channel compares a program's output with the expected one (channels/io.py):
COMPARE_RULES = ("strict", "apps", "codecontests", "livecodebench")

# The exit code of an io program that does not compile (it never ran: failed syntax_error).
SYNTAX_ERROR_EXIT = 97

# proxy: passk's own transport between the tests and the candidate is not charged to the wall-clock limit
# (channels/proxy.py TransportClock); the credit is at most this many times the limit. A call costs 0.1 to
# 0.5 ms of transport on the 2-core VM passk is tested on (its wake-ups vary from day to day), so 100,000
# calls, an honest test under a 3 s limit, needed 27-70 s: 10x cut them. The credit never exceeds the
# calls' elapsed time, so the cap bounds only how long a job may hold its worker.
TRANSPORT_CAP = 30

# io: all tests of one candidate together get this many times the wall-clock limit (the host's wait for a
# job is derived from it: harness/execute.py host_wait_s).
IO_TOTAL_FACTOR = 10

# The test process's address space beyond the candidate's memory limit: room for three copies (frame,
# text, parsed value) of a value at the 64 MiB message cap (framing.MAX_MESSAGE) while it crosses, so that
# receiving what an honest candidate returned never depends on what the test process held before.
TEST_TRANSPORT_MB = 192

# `error` reasons that a rerun cannot change: the problem, not the sandbox, is at fault.
PERMANENT_ERRORS = ("unsupported_test_argument", "problem_error", "judge_error")
