import harness


def test_public_names_are_exactly_all():
    for name in harness.__all__:   # imported when first used: each one resolves
        getattr(harness, name)
    public = {name for name in vars(harness) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(harness, name)).__name__ == "module"}
    assert set(harness.__all__) == (public - modules) | {"__version__"}
    assert set(dir(harness)) == set(harness.__all__)


def test_importing_harness_imports_no_stage():
    """passk-docker runs once per agent command: `import harness` must not import the stages behind the
    public names (the executor, the runner, Docker's SDK) until one is used."""
    import subprocess
    import sys
    code = ("import sys, harness.integrations.passk_docker; "
            "print(sorted(m for m in sys.modules if m.startswith(('harness.execution', 'harness.run', 'docker'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_the_wheel_holds_every_file_the_images_are_built_from(tmp_path):
    """An installed passk builds its images from the package: a file of containers/ left out of the
    wheel (package-data) is an image that cannot build (the Java compile server's source was one)."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path), str(root)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("passk-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {"harness/containers/" + str(p.relative_to(root / "containers")) for p in (root / "containers").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    assert not wanted - names, sorted(wanted - names)
    modules = {str(p.relative_to(root)) for p in (root / "harness").rglob("*.py") if "__pycache__" not in p.parts}
    assert "harness/execution/ray_executor.py" in modules
    assert not modules - names, sorted(modules - names)   # every stage's package is in the wheel
    # and the data the package reads (regression: SWE-bench's specs and official pins were left out)
    data = {str(p.relative_to(root)) for p in (root / "harness").rglob("*") if p.is_file() and p.suffix != ".py"
            and "__pycache__" not in p.parts}
    assert "harness/inputs/repos/specs.json" in data
    assert not data - names, sorted(data - names)
