"""``--fix`` on every fix fixture gives the expected files byte for byte, changes nothing else, leaves nothing to
report, and a second run changes nothing; ``--diff`` shows the same change and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES
from fixproject import FixCase, copy_project, fix_cases, python_sources

CASES = fix_cases()
IDS = [case.name for case in CASES]


def test_every_fix_kind_has_a_fixture() -> None:
    assert {"fix_example", "fix_registered", "fix_chains", "fix_async_attrs", "fix_no_gate", "fix_unrename"} <= set(IDS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_finding_of_a_fix_fixture_is_fixable(case: FixCase, run_cli, tmp_path: Path) -> None:
    project = copy_project(case.before, tmp_path / "project")
    check_args = [arg for arg in case.args if arg != "--unsafe-fixes"]  # a check rates fixes; it applies none
    findings = run_cli(project, "--format", "json", *check_args).findings()
    assert findings
    unsafe = "--unsafe-fixes" in case.args
    assert all(f["fixable"] and f["fix_safety"] == ("unsafe" if unsafe else "safe") for f in findings), findings


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fix_rewrites_exactly_the_expected_files(case: FixCase, run_cli, tmp_path: Path) -> None:
    project = copy_project(case.before, tmp_path / "project")
    before = python_sources(project)
    found = len(run_cli(project, *[arg for arg in case.args if arg != "--unsafe-fixes"], "--format", "json").findings())
    result = run_cli(project, *case.args, "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.strip() == f"Found {found} finding{'s' if found != 1 else ''} ({found} fixed, 0 remaining)."
    after = python_sources(project)
    expected = case.expected_files()
    assert {path for path in after if after[path] != before[path]} == set(expected)
    for path, data in expected.items():
        assert after[path] == data, path
    rewritten = sorted(line.split(":")[0] for line in result.stderr.splitlines() if line.startswith("Rewriting "))
    assert rewritten == sorted(f"Rewriting {path}" for path in expected)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_second_fix_changes_nothing(case: FixCase, run_cli, tmp_path: Path) -> None:
    project = copy_project(case.before, tmp_path / "project")
    run_cli(project, *case.args, "--fix")
    fixed = python_sources(project)
    again = run_cli(project, *case.args, "--fix")
    assert again.exit_code == 0
    assert "Rewriting" not in again.stderr
    assert python_sources(project) == fixed


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_diff_shows_the_fix_and_writes_nothing(case: FixCase, run_cli, tmp_path: Path) -> None:
    project = copy_project(case.before, tmp_path / "project")
    before = python_sources(project)
    result = run_cli(project, *case.args, "--diff")
    assert result.exit_code == 1
    assert python_sources(project) == before
    shown = sorted(line[len("+++ b/") :] for line in result.stdout.splitlines() if line.startswith("+++ b/"))
    assert shown == sorted(case.expected_files())


def test_diff_output_of_the_example(run_cli, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    result = run_cli(project, "--diff")
    assert result.stdout == (FIXTURES / "fix_example" / "expected.diff").read_text(encoding="utf-8")
    assert result.stderr == "1 file would be rewritten\n"


def test_diff_exits_zero_when_there_is_nothing_to_fix(run_cli, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "not_tool_tables", tmp_path / "project")
    result = run_cli(project, "--diff")
    assert (result.exit_code, result.stdout) == (0, "")
