"""The findings do not depend on the interpreter that runs dispatchlint: a project's target version (``[project]
requires-python``, or ``target-version``) decides which grammar judges a file the interpreter's compiler
rejects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from fixproject import copy_project

EXAMPLE_FINDINGS = {
    ("DL201", "taskbot/builtin.py:13"),
    ("DL101", "taskbot/loop.py:26"),
    ("DL101", "taskbot/pool.py:21"),
}
#: Valid from Python 3.12 (PEP 701: an f-string's expression may hold its own quotes and a backslash).
NESTED_QUOTES = 'LABELS = ["a", "b"]\nBANNER = f"{"\\n".join(LABELS)}"\n'
#: No grammar accepts it.
BROKEN = "def broken(:\n    pass\n"
#: Whether this interpreter's compiler accepts :data:`NESTED_QUOTES`.
COMPILER_KNOWS_PEP_701 = sys.version_info >= (3, 12)


def _example(tmp_path: Path, requires_python: str, extra: str = "") -> Path:
    """The example project, with ``requires-python`` set and a module in the newer syntax beside its tools."""
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    text = text.replace('requires-python = ">=3.9"', f"requires-python = {requires_python!r}")
    pyproject.write_text(text + extra, encoding="utf-8")
    (project / "taskbot" / "banner.py").write_text(NESTED_QUOTES, encoding="utf-8")
    return project


@pytest.mark.parametrize("requires_python", [">=3.12", "~=3.12", ">=3.10, >=3.12", "==3.13.*"])
def test_a_project_on_a_newer_python_is_analysed_whatever_the_interpreter(
    run_cli, tmp_path: Path, requires_python: str
) -> None:
    result = run_cli(_example(tmp_path, requires_python), "--format", "json")
    assert result.exit_code == 1, result.stderr
    assert result.locations() == EXAMPLE_FINDINGS


def test_target_version_says_it_where_requires_python_does_not(run_cli, tmp_path: Path) -> None:
    project = _example(tmp_path, ">=3.9", '\n[tool.dispatchlint]\ntarget-version = "py312"\n')
    assert run_cli(project, "--format", "json").locations() == EXAMPLE_FINDINGS


def test_a_project_on_an_older_python_is_judged_by_the_interpreter(run_cli, tmp_path: Path) -> None:
    """Without a newer target, what this interpreter's compiler rejects is a syntax error (DL001): a project
    that runs on 3.9 cannot hold 3.12's f-strings."""
    result = run_cli(_example(tmp_path, ">=3.9"), "--format", "json")
    parse_errors = set() if COMPILER_KNOWS_PEP_701 else {("DL001", "taskbot/banner.py:2")}
    assert result.locations() == EXAMPLE_FINDINGS | parse_errors


def test_a_file_no_grammar_accepts_is_a_parse_error_under_the_newest_one(run_cli, tmp_path: Path) -> None:
    project = _example(tmp_path, ">=3.12")
    (project / "taskbot" / "broken.py").write_text(BROKEN, encoding="utf-8")
    result = run_cli(project, "--format", "json")
    assert result.locations() == EXAMPLE_FINDINGS | {("DL001", "taskbot/broken.py:1")}


def test_the_cache_is_keyed_by_the_target_version(run_cli, tmp_path: Path) -> None:
    """The same bytes judged under another grammar are not served the facts stored under the first."""
    project = _example(tmp_path, ">=3.9")
    older = run_cli(project, "--format", "json", cache=True).locations()
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8").replace(">=3.9", ">=3.12"), encoding="utf-8")
    newer = run_cli(project, "--format", "json", cache=True).locations()
    assert newer == EXAMPLE_FINDINGS
    assert older == EXAMPLE_FINDINGS | (set() if COMPILER_KNOWS_PEP_701 else {("DL001", "taskbot/banner.py:2")})


def test_fix_rewrites_a_module_written_in_the_newer_syntax(run_cli, tmp_path: Path) -> None:
    """The rewritten module is checked with the grammar it was analysed with: a module of a 3.12 project that
    the running compiler rejects is still fixed, and what the fix writes parses."""
    import libcst

    project = _example(tmp_path, ">=3.12")
    loop = project / "taskbot" / "loop.py"
    loop.write_text(loop.read_text(encoding="utf-8") + "\n" + NESTED_QUOTES, encoding="utf-8")
    fixed = run_cli(project, "--fix", "--format", "json")
    assert ("DL101", "taskbot/loop.py:26") not in fixed.locations(), fixed.stderr
    assert "does not parse" not in fixed.stderr
    text = loop.read_text(encoding="utf-8")
    assert text.endswith(NESTED_QUOTES)
    libcst.parse_module(text)


@pytest.mark.parametrize("value", ["3.12", "py2", 312, "py3"])
def test_a_target_version_that_is_not_py3n_is_a_configuration_error(run_cli, tmp_path: Path, value: object) -> None:
    literal = f'"{value}"' if isinstance(value, str) else str(value)
    project = _example(tmp_path, ">=3.9", f"\n[tool.dispatchlint]\ntarget-version = {literal}\n")
    result = run_cli(project)
    assert result.exit_code == 2
    assert 'target-version must be "py3N"' in result.stderr and "pyproject.toml" in result.stderr
