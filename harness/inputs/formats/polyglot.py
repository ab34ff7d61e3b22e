"""Exercism exercises (aider's polyglot benchmark): a directory, read by harness/inputs/polyglot.py; each
exercise a problem of the project channel, judged by its language's own build and tests
(harness/inputs/projects.py) in its language's project image."""

from __future__ import annotations

from pathlib import Path

from harness.inputs import polyglot
from harness.inputs.config import Limits
from harness.inputs.formats.base import Format, register
from harness.inputs.problem import Problem


def is_polyglot_dir(path: Path) -> bool:
    """Whether a directory is an exercise, a track's exercises/practice/ or a track, or holds tracks."""
    path = Path(path)
    if polyglot.is_exercise(path) or (path / "exercises" / "practice").is_dir():
        return True
    if path.name == "practice" and path.parent.name == "exercises":
        return True
    try:
        return any((p / "exercises" / "practice").is_dir() for p in path.iterdir() if p.is_dir())
    except OSError:
        return False


def load(path, records=(), ceilings=None, base_limits: Limits | None = None) -> dict:
    from harness.inputs.projects import ProjectTask, project_limits
    limits = project_limits(base_limits or Limits())
    out = {}
    for ex in polyglot.exercises(Path(path), ceilings):
        stub = {p: ex.tree[p].decode("utf-8", "replace") for p in ex.editable}
        reference = ({p: v.decode("utf-8", "surrogateescape") for p, v in ex.example.items() if p in ex.editable}
                     if ex.example else None)
        # the canonical solution: the reference's files (--check-ground-truth runs them as the reference's own
        # tree, its manifest included: inputs/projects.py job_part)
        canonical = polyglot.candidate_text(ex.example) if ex.example else None
        out[ex.task_id] = Problem(ex.task_id, "", "", None, canonical, channel="project", format="polyglot",
                                  language=ex.language, solution_is="program",
                                  project=ProjectTask(ex, limits),
                                  notes={"where": ex.origin, "editable": list(ex.editable), "stub_files": stub,
                                         "reference_files": reference})
    return out


register(Format("polyglot", "Exercism exercises (aider's polyglot benchmark): a directory", lambda first: False, load,
                "a directory: .meta/config.json files.solution, files.test, files.example"))
