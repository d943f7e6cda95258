"""A typed, formatted project stays typed and formatted: ``mypy --strict`` and ``ruff format`` accept each typed
fix fixture before the fix, and again after it (the generated code is annotated and laid out as ruff lays it out,
at the project's line length).

mypy and ruff are test extras (``pip install -e .[test]``); without them these tests skip, saying which is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from conftest import REPO
from fixproject import copy_project, fix_cases

TYPED = {case.name: case for case in fix_cases() if case.name in ("fix_typed", "fix_contract")}


def _tool(module: str) -> List[str]:
    """The command running ``module`` from this interpreter's environment; skips when it is not installed."""
    if module == "ruff":
        found = shutil.which("ruff", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
        if found is None:
            pytest.skip("ruff is not installed (pip install -e .[test])")
        return [found]
    pytest.importorskip(module, reason=f"{module} is not installed (pip install -e .[test])")
    return [sys.executable, "-m", module]


def _mypy(project: Path, package: str, cache: Path) -> subprocess.CompletedProcess[str]:
    command = _tool("mypy") + ["--strict", "--cache-dir", str(cache), package]
    # dispatchlint itself is found on MYPYPATH, whether or not it is installed.
    env = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)


def _ruff_format(project: Path, package: str) -> subprocess.CompletedProcess[str]:
    command = _tool("ruff") + ["format", "--diff", package]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=60)


def _fixed(name: str, target: Path, run_cli, line_length: int = 0) -> Path:
    case = TYPED[name]
    project = copy_project(case.before, target)
    if line_length:
        pyproject = project / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8").replace("line-length = 79", f"line-length = {line_length}")
        pyproject.write_text(text, encoding="utf-8")
    return project


@pytest.mark.parametrize("name", sorted(TYPED))
def test_mypy_strict_accepts_the_project_before_and_after_the_fix(name: str, run_cli, tmp_path: Path) -> None:
    case = TYPED[name]
    project = _fixed(name, tmp_path / "project", run_cli)
    package = next(path.parent.name for path in sorted(project.glob("*/__init__.py")))
    before = _mypy(project, package, tmp_path / "cache")
    assert before.returncode == 0, before.stdout
    assert run_cli(project, *case.args, "--fix").exit_code == 0
    after = _mypy(project, package, tmp_path / "cache")
    assert after.returncode == 0, after.stdout


@pytest.mark.parametrize("name", sorted(TYPED))
def test_ruff_format_leaves_the_fixed_project_as_it_is_and_ruff_check_finds_nothing(
    name: str, run_cli, tmp_path: Path
) -> None:
    case = TYPED[name]
    project = _fixed(name, tmp_path / "project", run_cli)
    package = next(path.parent.name for path in sorted(project.glob("*/__init__.py")))
    assert _ruff_format(project, package).returncode == 0
    assert run_cli(project, *case.args, "--fix").exit_code == 0
    after = _ruff_format(project, package)
    assert after.returncode == 0, after.stdout
    # and nothing generated is unused or undefined
    lint = subprocess.run(
        _tool("ruff") + ["check", "--select", "F", package], cwd=project, capture_output=True, text=True, timeout=60
    )
    assert lint.returncode == 0, lint.stdout


@pytest.mark.parametrize("line_length", [40, 60, 120])
def test_generated_lines_are_split_as_ruff_splits_them(line_length: int, run_cli, tmp_path: Path) -> None:
    """A project formatted at 40 columns gets every generated group one element per line; at 60, a group's
    contents on a line of their own; at 120, nothing split. ruff finds nothing to change in any of them."""
    project = _fixed("fix_typed", tmp_path / "project", run_cli, line_length)
    subprocess.run(_tool("ruff") + ["format", "ledger"], cwd=project, capture_output=True, check=True, timeout=60)
    assert run_cli(project, *TYPED["fix_typed"].args, "--fix").exit_code == 0
    after = _ruff_format(project, "ledger")
    assert after.returncode == 0, after.stdout
    assert "def _coerced(" in (project / "ledger" / "tools.py").read_text(encoding="utf-8")
