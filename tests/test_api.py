"""``dispatchlint.api``: check and fix from Python, with the command line's answers; the fix loop converges or
says it did not."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, subprocess_env, write_project
from dispatchlint import api
from dispatchlint.plan import RunOptions
from fixproject import copy_project, python_sources
from test_fix_passes import GATE, LOOP, TODO

NO_CACHE = RunOptions(use_cache=False)


def _two_pass_project(root: Path) -> Path:
    """A project whose second fix (deleting a hand-rolled parse) is possible only once the first (coercing a
    chain's arguments) is made."""
    return write_project(
        root, {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/todo.py": TODO, "agent/loop.py": LOOP}
    )


def test_check_reports_what_the_command_line_reports(run_cli) -> None:
    example = FIXTURES / "example"
    result = api.check(example, settings=NO_CACHE, cwd=example)
    command = run_cli(example, "--format", "json")
    assert {(f.code, f"{f.path}:{f.span.line}") for f in result.findings} == command.locations()
    assert [project.root for project in result.projects] == [example]
    assert result.errors == () and result.seconds > 0


def test_check_names_paths_relative_to_the_folder_given() -> None:
    example = FIXTURES / "example"
    result = api.check([str(example / "taskbot" / "loop.py")], settings=NO_CACHE, cwd=FIXTURES)
    assert {f.path for f in result.findings} == {"example/taskbot/loop.py"}


def test_check_reads_unsaved_contents_in_place_of_the_file(tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    loop = project / "taskbot" / "loop.py"
    on_disk = loop.read_text(encoding="utf-8")
    gated = on_disk.replace("return fn(agent, args, ctx)", "return fn(agent, coerce_tool_args(name, args), ctx)")
    gated = gated.replace("from .gate import tool_definitions", "from .gate import coerce_tool_args, tool_definitions")
    settings = RunOptions(use_cache=False, contents={loop: gated.encode("utf-8")})
    before = {(f.code, f.path) for f in api.check(project, settings=NO_CACHE, cwd=project).findings}
    after = {(f.code, f.path) for f in api.check(project, settings=settings, cwd=project).findings}
    assert ("DL101", "taskbot/loop.py") in before and ("DL101", "taskbot/loop.py") not in after
    assert ("DL101", "taskbot/pool.py") in after
    assert loop.read_text(encoding="utf-8") == on_disk


def test_check_refuses_a_path_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(api.UsageError, match="no such file or directory"):
        api.check(tmp_path / "missing", settings=NO_CACHE)


def test_fix_without_writing_gives_what_the_command_line_writes(tmp_path: Path, run_cli) -> None:
    preview = copy_project(FIXTURES / "example", tmp_path / "preview")
    written = copy_project(FIXTURES / "example", tmp_path / "written")
    untouched = python_sources(preview)

    outcome = api.fix(preview, settings=NO_CACHE, write=False, cwd=preview)
    assert python_sources(preview) == untouched and not outcome.written
    assert outcome.converged and outcome.warnings == ()
    assert run_cli(written, "--fix").exit_code == 0
    assert {path.relative_to(preview).as_posix(): new for path, (_, new) in outcome.changes.items()} == {
        name: data for name, data in python_sources(written).items() if data != untouched[name]
    }
    assert {path: old for path, (old, _) in outcome.changes.items()} == {
        path: path.read_bytes() for path in outcome.changes
    }
    assert len(outcome.before.findings) == 3 and outcome.after.findings == ()
    assert all(outcome.notes[path] for path in outcome.changes)


def test_fix_writes_every_pass_once_and_a_second_fix_changes_nothing(tmp_path: Path) -> None:
    project = _two_pass_project(tmp_path)
    outcome = api.fix(project, settings=NO_CACHE, cwd=project)
    assert outcome.written and outcome.converged
    assert len(outcome.passes) == 3  # the code as given, after the chain's fix, after the parse's deletion
    assert {(f.code, f.path) for f in outcome.before.findings} == {
        ("DL101", "agent/loop.py"),
        ("DL201", "agent/todo.py"),
    }
    assert outcome.after.findings == ()
    assert {path: new for path, (_, new) in outcome.changes.items()} == {
        path: path.read_bytes() for path in outcome.changes
    }
    again = api.fix(project, settings=NO_CACHE, cwd=project)
    assert again.changes == {} and not again.written and len(again.passes) == 1


def test_fixes_that_do_not_converge_are_kept_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _two_pass_project(tmp_path)
    monkeypatch.setattr(api, "MAX_FIX_PASSES", 1)
    outcome = api.fix(project, settings=NO_CACHE, write=False, cwd=project)
    assert not outcome.converged
    assert outcome.warnings and "did not converge" in outcome.warnings[0]
    assert len(outcome.passes) == 2
    assert [(f.code, f.path) for f in outcome.after.findings] == [("DL201", "agent/todo.py")]
    loop = project / "agent" / "loop.py"
    assert set(outcome.changes) == {loop}  # the first pass's fix, which the second would have built on


def test_the_command_line_warns_when_fixes_do_not_converge(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _two_pass_project(tmp_path)
    monkeypatch.setattr(api, "MAX_FIX_PASSES", 1)
    fixed = run_cli(project, "--fix")
    assert fixed.exit_code == 1
    assert "warning: the fixes did not converge in 1 pass: the code they made would change again" in fixed.stderr
    assert "Rewriting agent/loop.py" in fixed.stderr
    assert "agent/todo.py:7:17: DL201" in fixed.stdout
    monkeypatch.setattr(api, "MAX_FIX_PASSES", 4)
    finished = run_cli(project, "--fix")
    assert finished.exit_code == 0 and "did not converge" not in finished.stderr
    assert "Rewriting agent/todo.py" in finished.stderr


def test_diff_shows_every_pass_of_the_fix(tmp_path: Path, run_cli) -> None:
    project = _two_pass_project(tmp_path)
    before = python_sources(project)
    diff = run_cli(project, "--diff")
    assert diff.exit_code == 1 and python_sources(project) == before
    assert "+    args = coerce_tool_args(tool_name, args)" in diff.stdout  # the first pass
    assert "-        todos = json.loads(todos)" in diff.stdout  # the pass the first one made possible
    assert "2 files would be rewritten" in diff.stderr


def test_the_readme_example_runs_as_it_says(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use from Python\n", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert example is not None
    before = python_sources(FIXTURES / "example")
    done = subprocess.run(
        [sys.executable, "-c", example.group(1)],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    *findings, fixed = done.stdout.splitlines()
    assert [line.split(": ")[:2] for line in findings] == [
        [
            "fixtures/example/taskbot/builtin.py:13",
            "DL201 `_plan` (tool `plan`) parses `steps` by hand, a second source of truth",
        ],
        ["fixtures/example/taskbot/loop.py:26", 'DL101 `limit` (integer) reaches `_recall` raw if sent as a string'],
        ["fixtures/example/taskbot/pool.py:21", 'DL101 `limit` (integer) reaches `_recall` raw if sent as a string'],
    ]
    assert fixed == "True ['builtin.py'] 0"
    assert python_sources(FIXTURES / "example") == before  # write=False wrote nothing
