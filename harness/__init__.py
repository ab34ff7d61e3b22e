"""passk: run generated code in hardened containers, label every candidate, score pass@k honestly."""

__version__ = "0.1.0"

from .config import BigCodeBenchSettings, EvalPlusSettings, Limits, RunConfig, SandboxSettings  # noqa: E402
from .errors import HarnessError, InputError, PasskError, SandboxUnavailableError  # noqa: E402
from .evaluator import Evaluator  # noqa: E402
from .problems import Problem, load_problems  # noqa: E402
from .ray_executor import RayExecutor  # noqa: E402  (imports Ray only when one is made)
from .results import ResultRow, read_rows  # noqa: E402
from .runner import evaluate  # noqa: E402
from .samples import Sample, load_samples  # noqa: E402
from .scoring import pass_at_k, pass_at_k_exact, score_counts, score_rows  # noqa: E402

__all__ = [
    "BigCodeBenchSettings",
    "EvalPlusSettings",
    "Evaluator",
    "HarnessError",
    "InputError",
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
