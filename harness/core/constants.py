"""Names that more than one module needs: labels, file names of a run directory, Docker labels.
The run-directory layout is written down here and nowhere else."""

import re

SCHEMA_VERSION = 5  # 2: rows carry verdict_channel and channel_detail; 3: base_status (EvalPlus's base verdict);
                    # 4: language, score, groups and tests (the judge); 5: feedback (a failed project's output)

# Labels of a candidate, and the verdict channels, as the container's contract defines them (one
# definition, read by both sides). `error` is never a verdict on the candidate: it is a harness or
# infrastructure fault, retried, and never counted as failed.
from harness.containers.box.protocol import (CHANNELS, COMPARE_RULES, ERROR, FAILED, PASSED, PERMANENT_ERRORS,  # noqa: F401
                                             RUNNERS, STATUSES as LABELS, TIMED_OUT)
from harness.containers.box.protocol import MARKER_PLACEHOLDER, HOST_SOCKET_ENV, TEST_TRANSPORT_MB, TESTER_MEMORY_ENV  # noqa: E402, F401
from harness.containers.box.protocol import VERSION as PROTOCOL_VERSION  # noqa: E402, F401

VERDICTS = (PASSED, FAILED, TIMED_OUT)

# Reasons the harness itself assigns (the supervisor assigns the others; see docs/limits-and-labels.md).
REASON_INFRASTRUCTURE = "infrastructure"

# Run directory layout.
RESULTS_FILE = "results.jsonl"
SCORE_FILE = "score.json"
MANIFEST_FILE = "manifest.json"
GROUND_TRUTH_FILE = "groundtruth.json.gz"   # EvalPlus problems: the ground truth's outputs and times
LOGS_DIR = "logs"                           # repository tasks: each candidate's test log, logs/<task>/<index>.log

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
# gVisor under another name registered with Docker (scripts/install_runsc.sh: runsc-systrap, runsc-ptrace)
GVISOR_RUNTIME = re.compile(r"runsc(-[a-z0-9]{1,20})?")


def runtime_ok(name: str) -> bool:
    """runc, or gVisor's runsc under its own name or a variant's (runsc-systrap)."""
    return name == "runc" or bool(GVISOR_RUNTIME.fullmatch(name or ""))


def runtime_arg(name: str) -> str:
    """--runtime's type: one of runc, runsc or runsc-<variant>."""
    import argparse
    if not runtime_ok(name):
        raise argparse.ArgumentTypeError(f"{name!r}: runc, runsc or runsc-<variant> (a gVisor runtime registered "
                                         "with Docker, e.g. runsc-systrap)")
    return name
TRANSPORTS = ("auto", "socket", "attach")
PIN_CPUS = ("auto", "off")
EXECUTORS = ("local", "ray")
