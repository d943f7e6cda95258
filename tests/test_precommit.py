"""pre-commit for real (slow: each hook environment is a fresh virtualenv with this package installed).

The hook repository is a git repository made from this checkout's files and tagged with the version the package
declares, so that the README's snippet is exercised as a user would paste it, only with a local path for the URL.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import FIXTURES, REPO

from dispatchlint import __version__

pytestmark = pytest.mark.slow

EXAMPLE = FIXTURES / "example"
_COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", ".dispatchlint_cache", ".hypothesis", ".*_cache", "build"
)


def _environment(home: Path) -> Dict[str, str]:
    """The hook must run from its own environment, not from this checkout on the path."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PRE_COMMIT_HOME=str(home), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid")
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    return env


def _git(folder: Path, env: Dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True, text=True)
    return done.stdout


def _pre_commit(folder: Path, env: Dict[str, str], *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, object]:
    """A tagged hook repository made from this checkout, and a pre-commit home shared by the tests."""
    pytest.importorskip("pre_commit")
    base = tmp_path_factory.mktemp("precommit")
    env = _environment(base / "home")
    repository = base / "dispatchlint"
    shutil.copytree(REPO, repository, ignore=_COPY_IGNORE)
    _git(repository, env, "init", "-q")
    _git(repository, env, "add", "-A")
    _git(repository, env, "commit", "-q", "-m", "dispatchlint")
    _git(repository, env, "tag", f"v{__version__}")
    return {"repository": repository, "env": env}


def _readme_snippet() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"## pre-commit\n.*?```yaml\n(?P<yaml>.*?)```", text, re.DOTALL)
    assert match, "the README has a pre-commit snippet"
    return match.group("yaml")


def _project(tmp_path: Path, hooks: Dict[str, object], hook_id: str = "dispatchlint") -> Path:
    """The example project as a git repository whose .pre-commit-config.yaml is the README's snippet, pointed
    at the local hook repository (and with ``hook_id`` enabled)."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    snippet = _readme_snippet()
    url = re.search(r"repo: (\S+)", snippet)
    assert url is not None
    config = snippet.replace(url.group(1), str(hooks["repository"]))
    if hook_id != "dispatchlint":
        config = config.replace("- id: dispatchlint ", f"- id: {hook_id} ")
    (project / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    env = hooks["env"]
    assert isinstance(env, dict)
    _git(project, env, "init", "-q")
    _git(project, env, "add", "-A")
    _git(project, env, "commit", "-q", "-m", "example")
    return project


def test_the_readme_snippet_names_the_declared_version_and_both_hooks() -> None:
    snippet = _readme_snippet()
    assert f"rev: v{__version__}" in snippet
    assert "id: dispatchlint " in snippet and "id: dispatchlint-fix" in snippet


def test_the_readme_snippet_runs_and_fails_on_the_example(tmp_path: Path, hooks: Dict[str, object]) -> None:
    project = _project(tmp_path, hooks)
    result = _pre_commit(project, hooks["env"], "run", "--all-files")  # type: ignore[arg-type]
    assert result.returncode == 1, result.stdout + result.stderr
    assert "taskbot/loop.py:26:16: DL101" in result.stdout and "Found 3 findings." in result.stdout


def test_a_commit_that_unwraps_a_table_fails_on_the_sites_it_reopens(tmp_path: Path, hooks: Dict[str, object]) -> None:
    env = hooks["env"]
    assert isinstance(env, dict)
    project = _project(tmp_path, hooks)
    builtin = project / "taskbot" / "builtin.py"
    raw = builtin.read_text(encoding="utf-8")
    builtin.write_text((FIXTURES / "fix_example" / "expected_fixed" / "taskbot" / "builtin.py").read_text("utf-8"))
    _git(project, env, "commit", "-q", "-am", "wrap the table")
    clean = _pre_commit(project, env, "try-repo", str(hooks["repository"]), "dispatchlint", "--all-files")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    builtin.write_text(raw, encoding="utf-8")  # the commit undoes the wrapping, and touches only builtin.py
    _git(project, env, "add", "taskbot/builtin.py")
    staged: List[str] = _git(project, env, "diff", "--cached", "--name-only").split()
    assert staged == ["taskbot/builtin.py"]
    result = _pre_commit(project, env, "try-repo", str(hooks["repository"]), "dispatchlint")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "taskbot/loop.py:26:16: DL101" in result.stdout and "taskbot/pool.py:21:32: DL101" in result.stdout


def test_an_excluded_file_passes_the_hook(tmp_path: Path, hooks: Dict[str, object]) -> None:
    env = hooks["env"]
    assert isinstance(env, dict)
    project = _project(tmp_path, hooks)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text("utf-8") + '\n[tool.dispatchlint]\nexclude = ["taskbot/pool.py"]\n')
    (project / ".gitignore").write_text("taskbot/loop.py\n", encoding="utf-8")
    _git(project, env, "add", "-A")
    _git(project, env, "commit", "-q", "-m", "exclude")
    result = _pre_commit(project, env, "run", "--files", "taskbot/pool.py", "taskbot/loop.py")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_fix_hook_rewrites_the_table_where_it_is_defined(tmp_path: Path, hooks: Dict[str, object]) -> None:
    env = hooks["env"]
    assert isinstance(env, dict)
    project = _project(tmp_path, hooks, "dispatchlint-fix")
    first = _pre_commit(project, env, "run", "--files", "taskbot/pool.py")
    assert first.returncode == 1, first.stdout + first.stderr  # pre-commit fails a hook that changed files
    assert "Rewriting taskbot/builtin.py" in first.stdout  # not a file it was given: the table lives there
    assert "_RAW_BUILTIN_EXECUTORS" in (project / "taskbot" / "builtin.py").read_text("utf-8")
    assert _git(project, env, "diff", "--name-only").split() == ["taskbot/builtin.py"]
    second = _pre_commit(project, env, "run", "--files", "taskbot/pool.py")
    assert second.returncode == 0, second.stdout + second.stderr
