"""passk: run generated code in hardened containers, label every candidate, score pass@k honestly."""

from harness.core.version import __version__
from harness.inputs.config import BigCodeBenchSettings, EvalPlusSettings, Limits, RunConfig, SandboxSettings
from harness.core.errors import HarnessError, InputError, PasskError, SandboxUnavailableError
from harness.execution.evaluator import Evaluator
from harness.inputs.judge import Checker, Group, JudgeSpec, JudgeTest
from harness.inputs.problem import Problem
from harness.inputs.problems import load_problems
from harness.execution.ray_executor import RayExecutor  # imports Ray only when one is made
from harness.records.results import ResultRow, read_rows
from harness.run.runner import evaluate
from harness.inputs.samples import Sample, load_samples
from harness.scoring.score import pass_at_k, pass_at_k_exact, score_counts, score_rows

__all__ = [
    "BigCodeBenchSettings",
    "Checker",
    "EvalPlusSettings",
    "Evaluator",
    "Group",
    "HarnessError",
    "InputError",
    "JudgeSpec",
    "JudgeTest",
    "Limits",
    "PasskError",
    "Problem",
    "RayExecutor",
    "ResultRow",
    "RunConfig",
    "Sample",
    "SandboxSettings",
    "SandboxUnavailableError",
    "__version__",
    "evaluate",
    "load_problems",
    "load_samples",
    "pass_at_k",
    "pass_at_k_exact",
    "read_rows",
    "score_counts",
    "score_rows",
]
