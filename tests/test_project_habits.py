"""The repository's own habits, run for real: plain ``ruff check`` and ``mypy`` check what pyproject.toml says
(dispatchlint, tests and bench; the package strictly typed), .pre-commit-config.yaml runs them before a commit
without the network, and .ci/run runs them after the tests and fails on a failing test or check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stubs and .ci/run are shell scripts")

TOOLS = Path(sys.executable).parent  # ruff, mypy and pre-commit come with the test extra

#: A copy of the repository's settings with one problem in each folder: only the folders they name are checked.
LAYOUT = {
    "dispatchlint/__init__.py": '"""A package."""\n',
    "dispatchlint/long.py": f"# {'x' * 116}\n# {'x' * 120}\n",  # 118 and 122 characters: one too long at 120
    "dispatchlint/untyped.py": "def identity(value):\n    return value\n",  # ruff accepts it, mypy --strict does not
    "bench/defaults.py": "def collect(into=[]):\n    return into\n",
    "tests/test_unused.py": "import os\n",
    "fixtures/project/unused.py": "import os\n",
    "scripts/unused.py": "import os\n",
}
#: What ruff finds in ``LAYOUT``.
RUFF_FINDINGS = [("bench/defaults.py", "B006"), ("dispatchlint/long.py", "E501"), ("tests/test_unused.py", "F401")]


def _environment(home: Path) -> Dict[str, str]:
    return {**os.environ, "PATH": f"{TOOLS}{os.pathsep}{os.environ['PATH']}", "PRE_COMMIT_HOME": str(home)}


def _run(command: List[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=_environment(home), capture_output=True, text=True, timeout=300)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository with this one's pyproject.toml and .pre-commit-config.yaml and the files of ``LAYOUT``."""
    root = tmp_path / "checkout"
    for relative, text in LAYOUT.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    for name in ("pyproject.toml", ".pre-commit-config.yaml"):
        shutil.copy(REPO / name, root / name)
    return root


def _ruff_findings(output: str, root: Path) -> List[tuple]:
    return sorted((Path(item["filename"]).relative_to(root).as_posix(), item["code"]) for item in json.loads(output))


def test_plain_ruff_check_checks_the_configured_folders_with_the_configured_rules(checkout: Path) -> None:
    result = _run([str(TOOLS / "ruff"), "check", "--no-cache", "--output-format", "json"], checkout, checkout)
    assert result.returncode == 1, result.stderr
    assert _ruff_findings(result.stdout, checkout.resolve()) == RUFF_FINDINGS


def test_plain_mypy_checks_the_package_strictly(checkout: Path, tmp_path: Path) -> None:
    result = _run([str(TOOLS / "mypy"), "--cache-dir", str(tmp_path / "cache")], checkout, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "dispatchlint/untyped.py:1: error: Function is missing a type annotation" in result.stdout
    assert "checked 3 source files" in result.stdout  # the package, not bench or tests


def test_the_pre_commit_hooks_run_ruff_and_mypy_without_the_network(checkout: Path, tmp_path: Path) -> None:
    home = tmp_path / "pre-commit-home"
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(command, cwd=checkout, check=True, capture_output=True)
    environment = {**_environment(home), "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    command = [str(TOOLS / "pre-commit"), "run", "--all-files", "--color", "never"]
    failing = subprocess.run(command, cwd=checkout, env=environment, capture_output=True, text=True, timeout=300)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    for path, code in RUFF_FINDINGS:
        assert f"{path}:" in failing.stdout and code in failing.stdout, failing.stdout
    assert "dispatchlint/untyped.py:1: error" in failing.stdout
    assert "fixtures/" not in failing.stdout and "scripts/" not in failing.stdout
    for path in ("dispatchlint/long.py", "dispatchlint/untyped.py", "bench/defaults.py", "tests/test_unused.py"):
        (checkout / path).unlink()
    subprocess.run(["git", "add", "-A"], cwd=checkout, check=True, capture_output=True)
    passing = subprocess.run(command, cwd=checkout, env=environment, capture_output=True, text=True, timeout=300)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "ruff check" in passing.stdout and "mypy --strict" in passing.stdout


#: Each tool of the fake virtual environment .ci/run creates: it records how it was called and fails when that is
#: the call named by ``FAIL``.
_STUB = """#!/bin/sh
call="$(basename "$0") $*"
call="${call% }"
echo "$call" >> "$CALLS"
[ "$call" != "$FAIL" ]
"""
_PYTHON3 = """#!/bin/sh
echo "python3 $*" >> "$CALLS"
mkdir -p .venv/bin
for tool in pip python ruff mypy; do cp "$STUB" ".venv/bin/$tool"; done
"""
_CI_CALLS = [
    "python3 -m venv .venv",
    "pip install -q -e .[test]",
    "python -m pytest -q",
    "python -m pytest -q -m slow",
    "ruff check",
    "mypy",
]


@pytest.mark.parametrize("failing", [None, *_CI_CALLS[2:]])
def test_ci_runs_the_tests_then_ruff_and_mypy_and_fails_when_any_fails(failing: str, tmp_path: Path) -> None:
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name, text in (("stub", _STUB), ("python3", _PYTHON3)):
        (stubs / name).write_text(text, encoding="utf-8")
        (stubs / name).chmod(0o755)
    calls = tmp_path / "calls"
    environment = {
        **os.environ,
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "CALLS": str(calls),
        "STUB": str(stubs / "stub"),
        "FAIL": failing or "",
    }
    result = subprocess.run(["bash", ".ci/run"], cwd=tmp_path, env=environment, capture_output=True, timeout=60)
    made = calls.read_text(encoding="utf-8").splitlines()
    if failing is None:
        assert result.returncode == 0 and made == _CI_CALLS, made
    else:
        assert result.returncode != 0 and made == _CI_CALLS[: _CI_CALLS.index(failing) + 1], made
