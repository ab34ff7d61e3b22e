"""Names that more than one module needs: labels, file names of a run directory, Docker labels.
The run-directory layout is written down here and nowhere else."""

SCHEMA_VERSION = 1

# Labels of a candidate. `error` is never a verdict on the candidate: it is a harness or
# infrastructure fault, retried, and never counted as failed.
PASSED = "passed"
FAILED = "failed"
TIMED_OUT = "timed_out"
ERROR = "error"
LABELS = (PASSED, FAILED, TIMED_OUT, ERROR)
VERDICTS = (PASSED, FAILED, TIMED_OUT)

# Reasons the harness itself assigns (the supervisor assigns the others; see README).
REASON_INFRASTRUCTURE = "infrastructure"
# `error` reasons that a rerun cannot change: the problem, not the sandbox, is at fault. Such a row is
# final (a resume does not rerun it) and blocks pass@k like any error until the problem is fixed or the
# run is scored with --exclude-errors.
PERMANENT_ERRORS = ("unsupported_test_argument", "problem_error")

# Run directory layout.
RESULTS_FILE = "results.jsonl"
SCORE_FILE = "score.json"
MANIFEST_FILE = "manifest.json"

# Docker objects.
IMAGE_REPOSITORY = "passk-sandbox"
DEFAULT_BASE_IMAGE = "passk-base:bookworm"
LABEL_MANAGED = "org.passk.managed"
LABEL_RUN = "org.passk.run"
LABEL_OWNER_PID = "org.passk.owner-pid"
LABEL_OWNER_HOST = "org.passk.owner-host"
LABEL_SOURCE_HASH = "org.passk.source-sha256"

DEFAULT_K = (1, 10, 100)
ISOLATIONS = ("pooled", "fresh")
RUNTIMES = ("runc", "runsc")
