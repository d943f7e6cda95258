"""Which files a run covers, as pre-commit calls it: findings that a changed file causes elsewhere, excludes and
git's ignore files applied to named paths, and monorepos analysed one project at a time."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import FIXTURES, write_project

EXAMPLE = FIXTURES / "example"


def _example(tmp_path: Path) -> Path:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    return project


def test_a_changed_table_reports_the_dispatch_sites_it_opens_elsewhere(run_cli) -> None:
    result = run_cli(EXAMPLE, "--format", "json", "taskbot/builtin.py")
    assert result.locations() == {
        ("DL201", "taskbot/builtin.py:13"),
        ("DL101", "taskbot/loop.py:26"),  # the table, defined in builtin.py, is the related location
        ("DL101", "taskbot/pool.py:21"),
    }
    assert result.exit_code == 1
    # a file that neither holds a finding nor a place one refers to reports nothing
    assert run_cli(EXAMPLE, "--format", "json", "taskbot/context.py").findings() == []


def test_a_changed_gate_reports_the_findings_that_name_it(run_cli) -> None:
    result = run_cli(EXAMPLE, "--format", "json", "taskbot/gate.py")
    assert ("DL101", "taskbot/loop.py:26") in result.locations()


def test_force_exclude_leaves_out_named_paths_that_exclude_covers(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + '\n[tool.dispatchlint]\nexclude = ["taskbot/pool.py"]\n', "utf-8"
    )
    named = run_cli(project, "--format", "json", "taskbot/pool.py")
    assert ("DL101", "taskbot/pool.py:21") in named.locations()  # named explicitly: checked, as Ruff does
    forced = run_cli(project, "--format", "json", "--force-exclude", "taskbot/pool.py")
    assert forced.findings() == [] and forced.exit_code == 0


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def test_nested_gitignore_and_info_exclude_are_honoured(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    _git(project, "init", "-q")
    (project / "taskbot" / ".gitignore").write_text("pool.py\n", encoding="utf-8")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("/taskbot/loop.py\n", encoding="utf-8")
    whole = run_cli(project, "--format", "json")
    assert whole.locations() == {("DL201", "taskbot/builtin.py:13")}
    forced = run_cli(project, "--format", "json", "--force-exclude", "taskbot/pool.py", "taskbot/loop.py")
    assert forced.findings() == []
    (project / ".gitignore").write_text("pool.py\n", encoding="utf-8")
    (project / "taskbot" / ".gitignore").write_text("!pool.py\n", encoding="utf-8")  # the deeper file wins
    assert run_cli(project, "--format", "json").locations() == {
        ("DL201", "taskbot/builtin.py:13"),
        ("DL101", "taskbot/pool.py:21"),
    }


def test_a_parent_folders_gitignore_applies_to_a_project_below_it(tmp_path: Path, run_cli) -> None:
    _git(tmp_path, "init", "-q")
    project = _example(tmp_path)
    (tmp_path / ".gitignore").write_text("example/taskbot/pool.py\n", encoding="utf-8")
    assert ("DL101", "taskbot/pool.py:21") not in run_cli(project, "--format", "json").locations()


_GATED = {
    "__init__.py": "",
    "gate.py": "def coerce_tool_args(name, args):\n    return args\n",
    "tools.py": (
        "import json\n"
        "from .gate import coerce_tool_args\n\n"
        "def search(query):\n    return query\n\n"
        "TOOLS = {'search': search}\n\n"
        "def handle(name, raw):\n"
        "    args = coerce_tool_args(name, json.loads(raw))\n"
        "    return TOOLS[name](**args)\n\n"
        "def fast(tool_call):\n"
        "    args = json.loads(tool_call.function.arguments)\n"
        "    return TOOLS[tool_call.function.name](**args)\n"
    ),
}


def _subproject(folder: Path, package: str, config: dict) -> None:
    folder.mkdir(parents=True)
    write_project(folder, {f"{package}/{name}": source for name, source in _GATED.items()}, config)


def test_monorepo_projects_are_analysed_and_configured_on_their_own(tmp_path: Path, run_cli) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _subproject(repo / "alpha", "alpha", {"ignore": ["DL101"]})
    _subproject(repo / "beta", "beta", {"select": ["DL1"]})
    whole = run_cli(repo, "--format", "json")
    # alpha ignores DL101 in its own configuration; beta reports it; neither sees the other's modules
    assert whole.locations() == {("DL101", "beta/beta/tools.py:15")}
    named = run_cli(repo, "--format", "json", "alpha/alpha/tools.py", "beta/beta/tools.py")
    assert named.locations() == whole.locations()
    sarif = run_cli(repo, "--format", "sarif")
    assert '"uri": "beta/beta/tools.py"' in sarif.stdout


def test_a_monorepo_root_without_configuration_still_reports_its_own_files(tmp_path: Path, run_cli) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _subproject(repo / "alpha", "alpha", {"ignore": ["DL101"]})
    for name, source in _GATED.items():
        (repo / "shared" / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "shared" / name).write_text(source, encoding="utf-8")
    assert run_cli(repo, "--format", "json").locations() == {("DL101", "shared/tools.py:15")}
