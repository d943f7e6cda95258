"""Suppression comments through the real command: the three spellings, prefixes, files, codes that name no rule,
comments that are really strings, and DL002 for suppressions that hide nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example"
LOOP_DISPATCH = ("DL101", "taskbot/loop.py:26")
POOL_DISPATCH = ("DL101", "taskbot/pool.py:21")


def _example(tmp_path: Path) -> Path:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    return project


def _append_to_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[number - 1] = lines[number - 1].rstrip("\n") + text + "\n"
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize(
    "comment",
    ["  # dispatchlint: ignore[DL101]", "  # noqa: DL101", "  # noqa: E501, DL101", "  # noqa: DL1", "  # noqa"],
)
def test_a_line_suppression_in_any_spelling_hides_the_finding(tmp_path: Path, run_cli, comment: str) -> None:
    project = _example(tmp_path)
    _append_to_line(project / "taskbot" / "loop.py", 26, comment)
    result = run_cli(project, "--format", "json")
    assert LOOP_DISPATCH not in result.locations() and POOL_DISPATCH in result.locations()


def test_a_noqa_for_another_tool_only_hides_nothing(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    _append_to_line(project / "taskbot" / "loop.py", 26, "  # noqa: E501")
    assert LOOP_DISPATCH in run_cli(project, "--format", "json").locations()


def test_a_file_suppression_hides_its_codes_in_the_whole_file(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    loop = project / "taskbot" / "loop.py"
    loop.write_text("# dispatchlint: ignore-file[DL1]\n" + loop.read_text(encoding="utf-8"), encoding="utf-8")
    builtin = project / "taskbot" / "builtin.py"
    builtin.write_text(builtin.read_text(encoding="utf-8") + "# dispatchlint: ignore-file[DL101]\n", "utf-8")
    locations = run_cli(project, "--format", "json").locations()
    assert not any(path.startswith("taskbot/loop.py") for _, path in locations)
    assert POOL_DISPATCH in locations and ("DL201", "taskbot/builtin.py:13") in locations


def test_a_directive_inside_a_string_is_not_a_comment(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    loop = project / "taskbot" / "loop.py"
    text = loop.read_text(encoding="utf-8")
    text = text.replace("        return fn(agent, args, ctx)\n", '        return fn(agent, args, ctx) or "# noqa"\n')
    loop.write_text(text + 'HELP = """\n# dispatchlint: ignore-file\n"""\n', encoding="utf-8")
    locations = run_cli(project, "--format", "json").locations()
    assert LOOP_DISPATCH in locations


def test_an_unknown_code_in_a_suppression_is_reported(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    _append_to_line(project / "taskbot" / "loop.py", 26, "  # dispatchlint: ignore[DL1O1]")
    result = run_cli(project, "--format", "json")
    assert "taskbot/loop.py:26:" in result.stderr and "unknown rule code 'DL1O1'" in result.stderr
    assert LOOP_DISPATCH in result.locations() and result.exit_code == 1


def test_an_unknown_code_in_per_file_ignores_is_a_configuration_error(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[tool.dispatchlint.per-file-ignores]\n"taskbot/loop.py" = ["DL9"]\n')
    result = run_cli(project)
    assert result.exit_code == 2 and "per-file-ignores" in result.stderr and "'DL9'" in result.stderr


def test_dl002_reports_suppressions_that_hide_nothing(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    loop = project / "taskbot" / "loop.py"
    _append_to_line(loop, 26, "  # noqa: DL101, DL201")  # DL101 is used, DL201 hides nothing
    _append_to_line(loop, 24, "  # dispatchlint: ignore")  # nothing is reported on line 24
    _append_to_line(loop, 27, "  # noqa")  # another linter's as much as ours: never judged
    default = run_cli(project, "--format", "json")
    assert not any(f["code"] == "DL002" for f in default.findings()), "DL002 is opt-in"
    result = run_cli(project, "--format", "json", "--extend-select", "DL002")
    idle = [(f["line"], f["message"]) for f in result.findings() if f["code"] == "DL002"]
    assert [line for line, _ in idle] == [24, 26]
    assert "`DL201` in this suppression hides nothing" in idle[1][1]
    assert LOOP_DISPATCH not in result.locations() and POOL_DISPATCH in result.locations()


def test_dl002_keeps_a_suppression_of_a_rule_not_enabled_in_this_run(tmp_path: Path, run_cli) -> None:
    """DL201 is not selected, but it does report line 13: the suppression is not idle."""
    project = _example(tmp_path)
    _append_to_line(project / "taskbot" / "builtin.py", 13, "  # dispatchlint: ignore[DL201]")
    result = run_cli(project, "--format", "json", "--select", "DL002")
    assert result.findings() == [] and result.exit_code == 0


def test_a_lone_carriage_return_ends_a_line_for_suppressions_as_it_does_for_python(tmp_path: Path, run_cli) -> None:
    """Line 3 ends with a lone CR: Python (and every finding) counts it as a line, so a ``# noqa`` on the line
    after the dispatch stays there, and hides nothing; one on the dispatch's own line still hides it."""
    project = _example(tmp_path)
    loop = project / "taskbot" / "loop.py"
    text = loop.read_text(encoding="utf-8").replace("import json\n", "import json\r", 1)
    for line, hidden in ((27, False), (26, True)):  # 27: `return handle_function_call(name, args)`
        lines = text.split("\n")
        lines[line - 2] += "  # noqa"  # line 3 ends with no newline: one line fewer in the list
        loop.write_bytes("\n".join(lines).encode("utf-8"))
        assert (LOOP_DISPATCH not in run_cli(project, "--format", "json").locations()) is hidden, line
