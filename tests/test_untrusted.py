"""A package, a row or a file it names is untrusted data (harness/inputs/untrusted.py): the package attack
table (tests/package_attacks.py) and the module's own rules. Pure: nothing here runs a container."""

from __future__ import annotations

import pytest

from harness.core.errors import InputError
from harness.inputs.untrusted import Ceilings, load_yaml, number
from tests.package_attacks import HOST_MARKERS, PACKAGE_ATTACKS, outcome_of, remove_tree


@pytest.mark.parametrize("attack", PACKAGE_ATTACKS, ids=[a.name for a in PACKAGE_ATTACKS])
def test_a_hostile_package_gets_its_written_outcome(tmp_path, attack):
    try:
        outcome, line = outcome_of(attack, tmp_path / "a")
    finally:
        remove_tree(tmp_path / "a")
    assert outcome == attack.outcome, line
    for fragment in attack.says:
        assert fragment in line, line
    assert not any(marker in line for marker in HOST_MARKERS), line
    if outcome == "refused":
        assert not (tmp_path / "a" / "out").exists()   # nothing was started, no run directory was made


def test_a_refused_value_is_shown_bounded_on_one_line():
    with pytest.raises(InputError) as e:
        number("p.yaml", "limits.memory", "x" * 10_000 + "\n" + "y", 10)
    assert "\n" not in str(e.value) and len(str(e.value)) < 200


def test_ceilings_are_checked_and_parsed():
    assert Ceilings.parse(["time_limit_s=120"]).time_limit_s == 120
    for bad in (["time_limit_s=inf"], ["time_limit_s=-1"], ["nope=1"], ["memory_mb=lots"]):
        with pytest.raises(InputError):
            Ceilings.parse(bad)
    with pytest.raises(InputError, match="ceiling"):
        number("p.yaml", "limits.time_limit", 61, Ceilings().time_limit_s)
    assert number("p.yaml", "limits.time_limit", "2.5", 60) == 2.5


def test_a_recursive_yaml_document_is_refused(tmp_path):
    with pytest.raises(InputError, match="recursive|alias"):
        load_yaml(tmp_path / "p.yaml", b"a: &a [*a]\n")


def test_a_packages_hash_reads_no_file_off_the_package_and_any_depth(tmp_path):
    # regression (issue 43): the run's input hash followed a package's links off it (it read /etc/shadow and
    # /proc/self/environ before the loader refused them) and recursed once per directory (RecursionError at
    # 1,100 levels, a traceback instead of the loader's one line)
    from harness.core.jsonl import sha256_path
    outside = tmp_path / "outside.txt"
    outside.write_text("one")
    pkg = tmp_path / "pkg"
    deep = pkg
    for _ in range(1100):
        deep = deep / "g"
        deep.mkdir(parents=True)
    (pkg / "link").symlink_to(outside)
    before = sha256_path(pkg)
    outside.write_text("two")
    assert sha256_path(pkg) == before
    (pkg / "link").unlink()
    (pkg / "link").symlink_to(tmp_path / "elsewhere")
    assert sha256_path(pkg) != before    # the link itself is part of the package
    remove_tree(pkg)
