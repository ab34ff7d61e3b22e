"""A repository task made ready to run: its row (rows.RepoTask), its environment (specs.py, environment.py)
and its tree (trees.py), with the test command the harness would run and what a candidate's patch is
checked against. prepare() is called once per run, before anything starts: a repository, a commit or a
spec that is missing here is one line naming the instance (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.core.errors import InputError
from harness.inputs.repos.recipes import RepoEnvironment, recipe
from harness.inputs.repos.patches import directives, modified_files
from harness.inputs.repos.rows import RepoTask
from harness.inputs.repos.specs import EnvSpec, spec_for
from harness.inputs.repos.trees import Tree, requirements_text, tree


@dataclass(frozen=True)
class PreparedTask:
    task: RepoTask
    spec: EnvSpec
    env: RepoEnvironment
    tree: Tree
    strict: bool = False
    limits: object = None            # config.Limits: one candidate's whole evaluation
    repos_dir: str | None = None     # where the repositories are (the environment resolves from one)
    snapshots: bool = True           # each instance set up once and copied per candidate (environments/instances.py)
    known_differences: bool = True   # PASS_TO_PASS tests that cannot pass in the sandbox set aside (known.json)

    @property
    def test_files(self) -> list[str]:
        return modified_files(self.task.test_patch)

    @property
    def directives(self) -> list[str]:
        return directives(self.task.test_patch)

    @property
    def junit(self) -> bool:
        """Whether the test command is pytest's, which writes a JUnit report where passk asks."""
        return self.spec.parser.startswith("pytest") and self.spec.test_cmd.split()[:1] == ["pytest"]

    def job_part(self, tree_b64: str | None = None, instance: str | None = None, mode: str | None = None) -> dict:
        """What the container's repo channel takes (containers/box/repo.py): the instance's snapshot by name,
        or its tree with the steps that set it up. The pre-install steps are the spec's less its apt-get
        steps, which the environment's image ran (specs.EnvSpec.setup_steps)."""
        env = {"SETUPTOOLS_SCM_PRETEND_VERSION": self.tree.scm_version} if self.tree.scm_version else {}
        return {**({"instance": instance} if instance else {"tree_b64": tree_b64}), **({"mode": mode} if mode else {}),
                "base": self.tree.base, "pre_install": list(self.spec.setup_steps()),
                "install": self.spec.install, "eval_commands": list(self.spec.eval_commands),
                "test_patch": self.task.test_patch, "test_files": self.test_files, "directives": self.directives,
                "test_cmd": self.spec.test_cmd, "junit": self.junit, "env": env, "services": list(self.env.standins)}


def prepare(problems: dict, settings, base_limits) -> dict:
    """The run's problems with every repository task made ready (`settings`: config.RepoSettings, on the
    run's `base_limits`); other problems as they are."""
    out = {}
    requirements_of: dict = {}
    for task_id, problem in problems.items():
        task = problem.repo
        if not isinstance(task, RepoTask):
            out[task_id] = problem
            continue
        where = f"{problem.notes['where']} ({task.instance_id})" if problem.notes.get("where") else task.instance_id
        spec = spec_for(task.repo, task.version, settings.specs, where)
        why = spec.unbuildable()
        if why:
            raise InputError(f"{where}: {task.repo} {task.version}'s environment cannot be built here: {why}")
        t = tree(settings.dir, task.repo, task.base_commit, task.instance_id, where)
        requirements = None
        setup_commit = task.environment_setup_commit or task.base_commit
        if spec.reads_requirements:
            key = (task.repo, setup_commit)
            if key not in requirements_of:
                requirements_of[key] = requirements_text(settings.dir, task.repo, setup_commit,
                                                         spec.requirements_paths or ("requirements.txt",), where)
            requirements = requirements_of[key]
        env = recipe(spec, task.instance_id, requirements, setup_commit, official=settings.pins == "official")
        why = env.unbuildable()
        if why:
            raise InputError(f"{where}: {task.repo} {task.version}'s environment cannot be built here: {why}")
        out[task_id] = replace(problem, repo=PreparedTask(task, spec, env, t, bool(settings.strict_tests),
                                                           settings.limits(base_limits), settings.dir,
                                                           bool(settings.snapshots), bool(settings.known_differences)))
    # each environment's wheels must serve every instance's tree that uses it (one base commit may need what
    # another does not): the environment carries them all
    commits: dict = {}
    for p in out.values():
        if isinstance(p.repo, PreparedTask):
            # the tree with the steps its install runs after (a version's sed steps change its setup.py's needs)
            # and the extras it installs (`.[test]`)
            # and with its gold patch applied: the harness installs again after the patch, with the index to
            # hand, so a fix that adds a dependency (pylint's appdirs) finds it; here the wheels must hold it
            commits.setdefault(p.repo.env.key, {})[(p.repo.task.base_commit, p.repo.spec.setup_steps(),
                                                    p.repo.spec.install, p.repo.task.patch)] = None
    for task_id, p in out.items():
        if isinstance(p.repo, PreparedTask):
            env = replace(p.repo.env, projects=tuple(commits[p.repo.env.key]))
            out[task_id] = replace(p, repo=replace(p.repo, env=env))
    return out


def environments(problems: dict) -> dict[str, RepoEnvironment]:
    """The distinct environments the run's repository tasks need, by key."""
    out = {}
    for p in problems.values():
        if isinstance(p.repo, PreparedTask):
            out.setdefault(p.repo.env.key, p.repo.env)
    return out
