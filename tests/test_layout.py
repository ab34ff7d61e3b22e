"""The package's layout is its pipeline: every module of harness/ belongs to a stage, a stage imports only
the stages before it, and no module imports another that (directly or not) imports it back. Read from the
source with `ast`, every import counted wherever it is (in a function too), so that an import moved into
a function cannot hide a cycle."""

import ast
from pathlib import Path

import pytest

from .conftest import ROOT

PACKAGE = ROOT / "harness"
# In import order: a module may import its own stage and the stages before it. containers is the
# in-container package (standard library only); the public API (harness/__init__.py) and the CLI are on top.
STAGES = ("containers", "core", "inputs", "records", "scoring", "environments", "execution", "run", "sessions", "serve",
          "integrations", "top")
TOP = {"harness", "harness.cli"}


def stage_of(module: str) -> str:
    if module in TOP:
        return "top"
    part = module.split(".")[1]
    if part not in STAGES[:-1]:
        raise AssertionError(f"{module} is in no stage; put it in one of harness/{{{', '.join(STAGES[1:-1])}}}/")
    return part


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """harness's own modules (not the in-container package), by dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[1:2] == ["containers"]:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(module: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(imported harness module, line) for every import in the file, wherever it is."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "harness"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "harness":
                continue
            for alias in node.names:   # `from harness.inputs import languages` imports the module languages
                sub = f"{target}.{alias.name}"
                out.append((sub if sub in known else target, node.lineno))
    return out


def graph() -> dict[str, list[tuple[str, int]]]:
    found = modules()
    known = set(found)
    return {m: [(t, line) for t, line in imports(m, p, known) if t != m] for m, p in found.items()}


def upward_imports(edges) -> list[str]:
    bad = []
    for module, targets in edges.items():
        for target, line in targets:
            target_stage = "containers" if target.startswith("harness.containers") else stage_of(target)
            if STAGES.index(target_stage) > STAGES.index(stage_of(module)):
                bad.append(f"{module}:{line} imports {target}: stage {stage_of(module)} may not import the later "
                           f"stage {target_stage}")
    return bad


def cycles(edges) -> list[list[str]]:
    """Each cycle found by a depth-first walk, as the modules around it."""
    found, state, stack = [], {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for target, _ in edges.get(m, ()):
            if target not in edges:
                continue
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def test_every_module_is_in_a_stage_and_imports_only_earlier_stages():
    edges = graph()
    assert len(edges) > 30   # the walk found the package
    bad = upward_imports(edges)
    assert not bad, "\n".join(bad)


def test_no_module_imports_itself_back_through_others():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_check_sees_a_cycle_hidden_in_a_function_and_an_upward_import(tmp_path):
    """The check itself: a cycle through an import inside a function, and a scoring module importing the
    sandbox, are both found."""
    pkg = tmp_path / "harness"
    for rel, source in {
        "__init__.py": "",
        "scoring/__init__.py": "",
        "scoring/score.py": "from harness.scoring import compare\n",
        "scoring/compare.py": "def f():\n    from harness.scoring.score import g\n",
        "execution/__init__.py": "",
        "execution/sandbox.py": "",
        "scoring/report.py": "from harness.execution import sandbox\n",
    }.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(source)
    found = modules(pkg)
    edges = {m: [(t, line) for t, line in imports(m, p, set(found)) if t != m] for m, p in found.items()}
    assert cycles(edges) == [["harness.scoring.compare", "harness.scoring.score", "harness.scoring.compare"]]
    assert upward_imports(edges) == ["harness.scoring.report:1 imports harness.execution.sandbox: stage scoring "
                                     "may not import the later stage execution"]
    with pytest.raises(AssertionError, match="in no stage"):
        stage_of("harness.misc")
