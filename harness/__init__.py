"""passk: run generated code in hardened containers, label every candidate, score pass@k honestly.

The public names below are imported when first used (PEP 562), so that a command that needs little of passk
(passk-docker, run once per agent command) does not pay for all of it."""

from importlib import import_module as _import_module

from harness.core.version import __version__  # noqa: F401 - in __all__

_WHERE = {
    "BigCodeBenchSettings": "harness.inputs.config", "EvalPlusSettings": "harness.inputs.config",
    "Limits": "harness.inputs.config", "RunConfig": "harness.inputs.config", "SandboxSettings": "harness.inputs.config",
    "HarnessError": "harness.core.errors", "InputError": "harness.core.errors", "PasskError": "harness.core.errors",
    "SandboxUnavailableError": "harness.core.errors",
    "Evaluator": "harness.execution.evaluator",
    "Checker": "harness.inputs.judge", "Group": "harness.inputs.judge", "JudgeSpec": "harness.inputs.judge",
    "JudgeTest": "harness.inputs.judge",
    "Problem": "harness.inputs.problem",
    "load_problems": "harness.inputs.problems",
    "RayExecutor": "harness.execution.ray_executor",   # imports Ray only when one is made
    "ResultRow": "harness.records.results", "read_rows": "harness.records.results",
    "evaluate": "harness.run.runner",
    "Sample": "harness.inputs.samples", "load_samples": "harness.inputs.samples",
    "pass_at_k": "harness.scoring.score", "pass_at_k_exact": "harness.scoring.score",
    "score_counts": "harness.scoring.score", "score_rows": "harness.scoring.score",
}

__all__ = ["BigCodeBenchSettings", "Checker", "EvalPlusSettings", "Evaluator", "Group", "HarnessError", "InputError",
           "JudgeSpec", "JudgeTest", "Limits", "PasskError", "Problem", "RayExecutor", "ResultRow", "RunConfig",
           "Sample", "SandboxSettings", "SandboxUnavailableError", "__version__", "evaluate", "load_problems",
           "load_samples", "pass_at_k", "pass_at_k_exact", "read_rows", "score_counts", "score_rows"]


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(_import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


def __dir__():
    return __all__
