"""SWE-bench's rows (JSON Lines or a JSON array), read unchanged (inputs/repos/rows.py): each row is a
repository task, judged on the repo channel by the repository's own tests. Its environment and its tree
come from the run's settings (--repos, --repo-specs): the runner attaches them (inputs/repos/tasks.py)."""

from __future__ import annotations

from harness.inputs.formats.base import Format, add, register
from harness.inputs.problem import Problem
from harness.inputs.repos.rows import is_row, task_of


def load(path, records, ceilings=None) -> dict:
    problems: dict = {}
    for where, obj in records:
        task = task_of(where, obj)
        add(problems, where, Problem(task.instance_id, "", "", None, task.patch, channel="repo", format="swe-bench",
                                     solution_is="patch", repo=task,
                                     notes={"repo": task.repo, "version": task.version, "where": where}))
    return problems


register(Format("swe-bench", "SWE-bench rows (repository tasks)", is_row, load,
                "instance_id, repo, base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS, version"))
