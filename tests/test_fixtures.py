"""Run the real command on every fixture project and compare with the findings written beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, read_expected

FIXTURE_DIRS = sorted(path for path in FIXTURES.iterdir() if (path / "expected.txt").is_file())


@pytest.mark.parametrize("fixture", FIXTURE_DIRS, ids=[path.name for path in FIXTURE_DIRS])
def test_fixture_findings_and_exit_code(fixture: Path, run_cli) -> None:
    expected, args = read_expected(fixture)
    result = run_cli(fixture, "--format", "json", *args)
    assert result.stderr == ""
    found = sorted((f["code"], f"{f['path']}:{f['line']}") for f in result.findings())
    assert found == sorted(expected), "findings differ (or one is reported twice)"
    assert result.exit_code == (1 if expected else 0)


def test_there_are_at_least_ten_fixture_projects() -> None:
    assert len(FIXTURE_DIRS) >= 10


@pytest.mark.parametrize("fixture", ["no_gate_project", "fw_no_gate_tables"])
def test_a_project_without_a_gate_reports_nothing_by_default(fixture: str, run_cli) -> None:
    """The same projects that give DL102 when asked: without a gate there is no inconsistency to report."""
    result = run_cli(FIXTURES / fixture, "--format", "json")
    assert result.findings() == [] and result.exit_code == 0
