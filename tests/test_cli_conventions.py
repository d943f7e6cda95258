"""Ruff's conventions, through the real command line: colour, output format and file, settings file, quiet and
verbose, extend-select and extend-exclude, stdin, show-files and show-settings, conflicting options, machine
output for every mode, and what a run says when there is nothing to check or a setting names nothing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, relative_findings, subprocess_env, valid_sarif, write_project
from dispatchlint.rules import RULES

EXAMPLE = FIXTURES / "example"
ANSI = "\x1b["


def _example(tmp_path: Path) -> Path:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    return project


# ------------------------------------------------------------------------------------------------- colour


@pytest.mark.parametrize(
    "environment, arguments, coloured",
    [
        ({}, [], False),  # not a terminal
        ({"FORCE_COLOR": "1"}, [], True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, [], True),
        ({"NO_COLOR": "1"}, ["--color", "always"], True),
        ({"FORCE_COLOR": "1"}, ["--color", "never"], False),
        ({"FORCE_COLOR": "0"}, [], False),
    ],
)
def test_colour_follows_the_option_then_the_environment(
    run_cli, monkeypatch: pytest.MonkeyPatch, environment: dict, arguments: list, coloured: bool
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    result = run_cli(EXAMPLE, *arguments)
    assert (ANSI in result.stdout) is coloured and "DL101" in result.stdout


def test_machine_output_is_never_coloured(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert len(run_cli(EXAMPLE, "--color", "always", "--output-format", "json").findings()) == 3


# --------------------------------------------------------------------------------------- format and file


def test_output_format_and_its_alias_format_agree(run_cli) -> None:
    assert run_cli(EXAMPLE, "--output-format", "json").stdout == run_cli(EXAMPLE, "--format", "json").stdout


def test_output_file_receives_the_report(tmp_path: Path, run_cli) -> None:
    target = tmp_path / "reports" / "dispatchlint.sarif"
    result = run_cli(EXAMPLE, "--output-format", "sarif", "-o", str(target))
    assert result.exit_code == 1 and result.stdout == ""
    assert len(valid_sarif(target.read_text(encoding="utf-8"))["runs"][0]["results"]) == 3
    text = tmp_path / "report.txt"
    run_cli(EXAMPLE, "--output-file", str(text))
    assert "Found 3 findings." in text.read_text(encoding="utf-8") and ANSI not in text.read_text(encoding="utf-8")
    run_cli(EXAMPLE, "--output-file", str(text), "--color", "always")
    assert ANSI in text.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------- settings


def test_config_file_replaces_the_projects_settings(tmp_path: Path, run_cli) -> None:
    settings = tmp_path / "dispatchlint.toml"
    settings.write_text('select = ["DL201"]\n', encoding="utf-8")
    result = run_cli(EXAMPLE, "--format", "json", "--config", str(settings))
    assert result.locations() == {("DL201", "taskbot/builtin.py:13")}
    shared = tmp_path / "shared" / "pyproject.toml"
    shared.parent.mkdir()
    shared.write_text('[tool.dispatchlint]\nignore = ["DL2"]\n', encoding="utf-8")
    assert {code for code, _ in run_cli(EXAMPLE, "--format", "json", "--config", str(shared)).locations()} == {"DL101"}
    assert run_cli(EXAMPLE, "--config", str(tmp_path / "missing.toml")).exit_code == 2


def test_extend_select_adds_to_the_selection(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    builtin = project / "taskbot" / "builtin.py"  # a tool without a schema, for DL401
    builtin.write_text(
        builtin.read_text("utf-8").replace('"recall": _recall,', '"recall": _recall, "scratch": _recall,')
    )
    default = {code for code, _ in run_cli(project, "--format", "json").locations()}
    extended = {code for code, _ in run_cli(project, "--format", "json", "--extend-select", "DL401").locations()}
    assert "DL401" not in default and extended == default | {"DL401"}
    narrowed = run_cli(project, "--format", "json", "--select", "DL201", "--extend-select", "DL401").locations()
    assert {code for code, _ in narrowed} == {"DL201", "DL401"}
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[tool.dispatchlint]\nextend-select = ["DL401"]\n')
    assert "DL401" in {code for code, _ in run_cli(project, "--format", "json").locations()}


def _opt_in_commands() -> list:
    """Each place the rule reference tells how to turn an opt-in rule on: (the rule, the options it gives)."""
    reference = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    return re.findall(r"[Oo]pt-in \(`(--[a-z-]+ (DL\d{3}))`\)", reference)


def test_the_rule_reference_turns_opt_in_rules_on_without_dropping_the_defaults(run_cli) -> None:
    """``--select DL102`` would run DL102 alone (the example's DL101 findings gone); the reference says
    ``--extend-select``, which keeps the default rules."""
    commands = _opt_in_commands()
    opt_in = {code for code, entry in RULES.items() if not entry.default}
    assert {code for _, code in commands} == opt_in and len(commands) > len(opt_in)  # the table and the texts
    default = [code for code, entry in RULES.items() if entry.default]
    reported = {code for code, _ in run_cli(EXAMPLE, "--format", "json").locations()}
    for command, code in commands:
        options = command.split()
        settings = json.loads(run_cli(EXAMPLE, "--show-settings", "--output-format", "json", *options).stdout)
        assert settings["projects"][0]["rules"] == sorted(default + [code]), command
        found = {found_code for found_code, _ in run_cli(EXAMPLE, "--format", "json", *options).locations()}
        assert reported <= found, command


def test_extend_exclude_from_the_settings_and_the_command_line(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    from_cli = run_cli(project, "--format", "json", "--extend-exclude", "taskbot/pool.py")
    assert {path for _, path in from_cli.locations()} == {"taskbot/builtin.py:13", "taskbot/loop.py:26"}
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[tool.dispatchlint]\nexclude = ["taskbot/pool.py"]\nextend-exclude = ["taskbot/loop.py"]\n')
    assert run_cli(project, "--format", "json").locations() == {("DL201", "taskbot/builtin.py:13")}


def test_show_settings_prints_every_resolved_key(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[tool.dispatchlint]\ngates = ["taskbot.gate.coerce_tool_args"]\nextend-select = ["DL4"]\n')
    text = run_cli(project, "--show-settings")
    assert text.exit_code == 0
    assert f'root = "{project.resolve()}"' in text.stdout and 'gates = ["taskbot.gate.coerce_tool_args"]' in text.stdout
    (machine,) = json.loads(run_cli(project, "--show-settings", "--output-format", "json").stdout)["projects"]
    assert machine["config"] == str((project / "pyproject.toml").resolve())
    assert "DL401" in machine["rules"] and machine["extend-select"] == ["DL4"]
    assert machine["cache"] is None  # the tests run with --no-cache
    for key in ("gates", "sanitizers", "tables", "schemas", "exclude", "select", "ignore", "per-file-ignores"):
        assert key in machine


def test_show_files_lists_what_is_analysed_and_what_is_reported(run_cli) -> None:
    text = run_cli(EXAMPLE, "--show-files", "taskbot/pool.py")
    lines = text.stdout.splitlines()
    assert "taskbot/pool.py" in lines and "taskbot/loop.py  (analysed, not reported)" in lines and len(lines) == 7
    machine = json.loads(run_cli(EXAMPLE, "--show-files", "--format", "json").stdout)["files"]
    assert len(machine) == 7 and all(item["reported"] for item in machine)


# ------------------------------------------------------------------------------------------ quiet, verbose


def test_quiet_prints_the_findings_and_nothing_else(tmp_path: Path, run_cli) -> None:
    result = run_cli(EXAMPLE, "-q")
    assert "DL101" in result.stdout and "Found" not in result.stdout and result.exit_code == 1
    write_project(tmp_path, {"a.py": "x = 1\n"})
    clean = run_cli(tmp_path, "--quiet")
    assert clean.stdout == "" and clean.exit_code == 0


def test_verbose_adds_each_files_timing(run_cli) -> None:
    result = run_cli(EXAMPLE, "-v")
    timed = [line for line in result.stderr.splitlines() if line.startswith("timing: taskbot/")]
    assert len(timed) == 7 and all(line.endswith(" ms") for line in timed)
    assert "trace:" in result.stdout
    assert result.stderr.splitlines()[-2].startswith("timing: 7 files (0 from the cache); link ")
    assert result.stderr.splitlines()[-1].startswith("timing: total ")


def test_verbose_counts_the_files_the_cache_served_and_times_only_those_it_indexed(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    run_cli(project, cache=True)
    (project / "taskbot" / "loop.py").write_text((project / "taskbot" / "loop.py").read_text() + "\n# edited\n")
    warm = run_cli(project, "-v", cache=True)
    timed = [line for line in warm.stderr.splitlines() if line.startswith("timing: taskbot/")]
    assert len(timed) == 1 and timed[0].startswith("timing: taskbot/loop.py: indexed in ")
    assert "timing: 7 files (6 from the cache); " in warm.stderr


# ----------------------------------------------------------------------------------------------- stdin


def _stdin_run(cwd: Path, text: str, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dispatchlint", "--no-cache", *arguments],
        cwd=cwd,
        input=text,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def test_stdin_is_checked_as_the_named_file_in_its_project(tmp_path: Path) -> None:
    loop = (EXAMPLE / "taskbot" / "loop.py").read_text(encoding="utf-8")
    edited = loop.replace(
        "    fn = BUILTIN_EXECUTORS.get(name)\n", "    # the lookup\n    fn = BUILTIN_EXECUTORS.get(name)\n"
    )
    completed = _stdin_run(EXAMPLE, edited, "--format", "json", "--stdin-filename", "taskbot/loop.py")
    assert completed.returncode == 1, completed.stderr
    findings = relative_findings(completed.stdout, EXAMPLE)
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [("DL101", "taskbot/loop.py", 27)]
    fixed = loop.replace(
        "        return fn(agent, args, ctx)\n", "        return fn(agent, coerce_tool_args(name, args), ctx)\n"
    )
    fixed = fixed.replace("import json\n", "import json\nfrom .gate import coerce_tool_args\n", 1)
    clean = _stdin_run(EXAMPLE, fixed, "--stdin-filename", "taskbot/loop.py")
    assert clean.returncode == 0 and "All checks passed!" in clean.stdout, clean.stdout + clean.stderr
    text = _stdin_run(EXAMPLE, edited, "--stdin-filename", "taskbot/loop.py", "-")
    assert "27 |         return fn(agent, args, ctx)" in text.stdout
    new_file = _stdin_run(
        EXAMPLE,
        "from .builtin import BUILTIN_EXECUTORS\n\ndef again(agent, tool_call, ctx):\n"
        "    import json\n    args = json.loads(tool_call.function.arguments)\n"
        "    return BUILTIN_EXECUTORS[tool_call.function.name](agent, args, ctx)\n",
        "--format",
        "json",
        "--stdin-filename",
        "taskbot/extra.py",
    )
    assert [f["path"] for f in relative_findings(new_file.stdout, EXAMPLE)] == ["taskbot/extra.py"], new_file.stderr


def test_stdin_with_paths_is_a_usage_error(run_cli) -> None:
    result = run_cli(EXAMPLE, "--stdin-filename", "taskbot/loop.py", "taskbot")
    assert result.exit_code == 2 and "--stdin-filename" in result.stderr
    dash = run_cli(EXAMPLE, "-", "taskbot")
    assert dash.exit_code == 2 and "`-` checks stdin: give no other PATHS" in dash.stderr


def _files(project: Path) -> dict:
    return {path: path.read_bytes() for path in project.rglob("*") if path.is_file()}


def test_stdin_fix_prints_the_whole_fixed_text_and_writes_nothing(tmp_path: Path) -> None:
    """As Ruff's: the fixed text on stdout (what ``--fix`` would write to the file), the report on stderr, every
    file on disk untouched; here the findings of other modules whose table the file defines are fixed too."""
    project = _example(tmp_path)
    before = _files(project)
    builtin = (project / "taskbot" / "builtin.py").read_text(encoding="utf-8")
    completed = _stdin_run(project, builtin, "--stdin-filename", "taskbot/builtin.py", "--fix")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == (FIXTURES / "fix_example" / "expected_fixed" / "taskbot" / "builtin.py").read_text()
    assert "Fixing stdin (taskbot/builtin.py): wrap `BUILTIN_EXECUTORS` with `coerce_tool_args`" in completed.stderr
    assert completed.stderr.endswith("Found 3 findings (3 fixed, 0 remaining).\n"), completed.stderr
    assert _files(project) == before


def test_stdin_fix_leaves_out_a_fix_that_edits_another_file(tmp_path: Path) -> None:
    """The fix of ``loop.py``'s finding wraps the table in ``builtin.py``: a fix of stdin writes no file, so it is
    left out whole (never half-made in the text alone), stderr says so, and the finding remains (exit 1)."""
    project = _example(tmp_path)
    before = _files(project)
    loop = (project / "taskbot" / "loop.py").read_text(encoding="utf-8")
    completed = _stdin_run(project, loop, "--stdin-filename", "taskbot/loop.py", "--fix")
    assert completed.returncode == 1 and completed.stdout == loop, completed.stderr
    assert (
        "note: taskbot/loop.py:26:16: DL101 not fixed: its fix edits taskbot/builtin.py, and a fix of stdin writes "
        "no file (run dispatchlint --fix on the saved files)\n"
    ) in completed.stderr
    assert "taskbot/loop.py:26:16: DL101 [*]" in completed.stderr and "Found 1 finding." in completed.stderr
    as_json = _stdin_run(project, loop, "--stdin-filename", "taskbot/loop.py", "--fix", "--format", "json")
    report = json.loads(as_json.stderr[as_json.stderr.index("{") :])
    assert as_json.stdout == loop and [finding["line"] for finding in report["findings"]] == [26]
    assert _files(project) == before


_LOCAL_TABLE = """import json

from taskbot.gate import coerce_tool_args


def _echo(args):
    return " ".join(args["words"])


TOOLS = {"echo": _echo}


def gated(name, raw):
    return TOOLS[name](coerce_tool_args(name, json.loads(raw)))


def ungated(name, raw):
    return TOOLS[name](json.loads(raw))
"""


def test_a_dash_reads_stdin_as_the_file_named_dash(tmp_path: Path) -> None:
    """``-`` without ``--stdin-filename``: the text is a file of the working folder's project named ``-``."""
    project = _example(tmp_path)
    before = _files(project)
    checked = _stdin_run(project, _LOCAL_TABLE, "-")
    assert checked.returncode == 1 and "-:18:12: DL101 [*] " in checked.stdout, checked.stderr
    assert "18 |     return TOOLS[name](json.loads(raw))" in checked.stdout
    as_json = _stdin_run(project, _LOCAL_TABLE, "-", "--format", "json")
    assert [finding["path"] for finding in json.loads(as_json.stdout)["findings"]] == ["-"]
    fixed = _stdin_run(project, _LOCAL_TABLE, "-", "--fix")
    assert fixed.returncode == 0, fixed.stderr
    assert "_RAW_TOOLS = {" in fixed.stdout and fixed.stdout.endswith("    return TOOLS[name](json.loads(raw))\n")
    assert "Fixing stdin (-): wrap `TOOLS` with `coerce_tool_args`" in fixed.stderr
    assert "Found 1 finding (1 fixed, 0 remaining)." in fixed.stderr
    diff = _stdin_run(project, _LOCAL_TABLE, "-", "--diff")
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/-\n+++ b/-\n"), diff.stderr
    assert _files(project) == before


@pytest.mark.parametrize("name", [".", "..", "taskbot", "taskbot/"])
def test_stdin_named_as_a_folder_is_a_usage_error(run_cli, name: str) -> None:
    result = run_cli(EXAMPLE, "--stdin-filename", name)
    assert result.exit_code == 2 and result.stdout == ""
    assert "--stdin-filename names the file stdin holds, not a folder" in result.stderr


@pytest.mark.parametrize(
    "arguments",
    [
        ["--fix", "-o", "taskbot/loop.py"],
        ["-o", "taskbot/loop.py"],
        ["--format", "json", "--output-file", "taskbot/../taskbot/pool.py"],
        ["--show-files", "-o", "taskbot/loop.py"],
        ["--baseline", "taskbot/builtin.py", "--update-baseline"],
        ["-o", "link.py"],
    ],
)
def test_an_output_file_that_is_an_analysed_source_is_refused(tmp_path: Path, run_cli, arguments: list) -> None:
    """The report would replace the module (after ``--fix`` had written it: "All checks passed!" in its place);
    a link to one is the module too."""
    project = _example(tmp_path)
    (project / "link.py").symlink_to(project / "taskbot" / "loop.py")
    before = {path: path.read_bytes() for path in project.rglob("*.py")}
    result = run_cli(project, *arguments)
    assert result.exit_code == 2 and result.stdout == ""
    assert "is one of the files analysed: writing there would replace it" in result.stderr
    assert {path: path.read_bytes() for path in project.rglob("*.py")} == before


# ------------------------------------------------------------------------------ conflicts, machine output


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--graph", "--fix"], "--graph cannot be combined with --fix"),
        (["--graph", "--format", "json"], "--graph prints text, not --output-format json"),
        (["--statistics", "--diff"], "--statistics cannot be combined with --diff"),
        (["--statistics", "--format", "sarif"], "--statistics prints text or json"),
        (["--diff", "--format", "json"], "--diff prints text"),
        (["--list-rules", "--format", "github"], "--list-rules prints text or json"),
        (["--show-files", "--fix"], "--show-files cannot be combined with --fix"),
        (["-q", "-v"], "--quiet cannot be combined with --verbose"),
    ],
)
def test_conflicting_options_are_usage_errors(tmp_path: Path, run_cli, arguments: list, message: str) -> None:
    project = _example(tmp_path)
    before = {path: path.read_bytes() for path in project.rglob("*.py")}
    result = run_cli(project, *arguments)
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""
    assert {path: path.read_bytes() for path in project.rglob("*.py")} == before


def test_statistics_list_rules_and_explain_print_json(run_cli) -> None:
    statistics = json.loads(run_cli(EXAMPLE, "--statistics", "--format", "json").stdout)["statistics"]
    assert statistics == [
        {"code": "DL101", "name": "unguarded-dispatch", "count": 2, "fixable": 2},
        {"code": "DL201", "name": "handrolled-json-parse", "count": 1, "fixable": 1},
    ]
    rules = json.loads(run_cli(EXAMPLE, "--list-rules", "--format", "json").stdout)["rules"]
    assert [rule["code"] for rule in rules][:4] == ["DL001", "DL002", "DL003", "DL101"]
    assert all(rule["summary"] and isinstance(rule["default"], bool) for rule in rules)
    explained = json.loads(run_cli(EXAMPLE, "--explain", "DL101", "--format", "json").stdout)
    assert explained["name"] == "unguarded-dispatch" and "## Why is this bad?" in explained["documentation"]


# ----------------------------------------------------------------------------- nothing found, names nothing


def test_no_python_files_is_said(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {"README.md": "# nothing\n"})
    result = run_cli(tmp_path)
    assert result.exit_code == 0 and "No Python files found" in result.stderr
    docs = _example(tmp_path / "project")
    (docs / "docs").mkdir()
    assert "No Python files found" in run_cli(docs, "docs").stderr
    assert "No Python files found" not in run_cli(docs, "taskbot").stderr


def test_configured_names_that_resolve_to_nothing_are_warned_about(tmp_path: Path, run_cli) -> None:
    project = _example(tmp_path)
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write(
            "\n[tool.dispatchlint]\n"
            'gates = ["taskbot.gate.coerce_tool_args", "taskbot.gate.repair_argz"]\n'
            'sanitizers = ["taskbot.naming.unrename"]\n'
            'tables = ["taskbot.builtin.BUILTIN_EXECUTORS", "taskbot.builtin.EXTRA"]\n'
            'schemas = "taskbot.schemaz:SCHEMAS"\n'
        )
    result = run_cli(project, "--format", "json")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 4, result.stderr
    assert "'taskbot.gate.repair_argz'" in warnings[0] and "'taskbot.naming.unrename'" in warnings[1]
    assert "'taskbot.builtin.EXTRA'" in warnings[2] and "'taskbot.schemaz'" in warnings[3]
    assert len([f for f in result.findings() if f["code"] == "DL101"]) == 2 and result.exit_code == 1
    assert "warning:" not in run_cli(project, "-q").stderr


def test_show_settings_prints_each_project_of_a_monorepo(tmp_path: Path, run_cli) -> None:
    for name, gate in (("alpha", "alpha.gate.fix_args"), ("beta", "beta.gate.repair")):
        (tmp_path / name).mkdir()
        write_project(tmp_path / name, {f"{name}/__init__.py": ""}, {"gates": [gate]})
    projects = json.loads(run_cli(tmp_path, "--show-settings", "--format", "json", "alpha", "beta").stdout)["projects"]
    assert [(Path(p["root"]).name, p["gates"]) for p in projects] == [
        ("alpha", ["alpha.gate.fix_args"]),
        ("beta", ["beta.gate.repair"]),
    ]
    text = run_cli(tmp_path, "--show-settings", "alpha", "beta").stdout
    assert text.count("root = ") == 2


def test_explain_takes_a_rules_code_or_its_name(run_cli) -> None:
    by_code = run_cli(EXAMPLE, "--explain", "dl101")
    by_name = run_cli(EXAMPLE, "--explain", "unguarded-dispatch")
    assert by_code.exit_code == by_name.exit_code == 0
    assert by_name.stdout == by_code.stdout and by_name.stdout.startswith("# DL101 unguarded-dispatch")
    unknown = run_cli(EXAMPLE, "--explain", "unguarded")
    assert unknown.exit_code == 2 and "unknown rule: 'unguarded', neither a code nor a name" in unknown.stderr


def test_help_lists_options_under_their_groups_and_paths_only_in_the_usage(run_cli) -> None:
    text = run_cli(EXAMPLE, "--help").stdout
    information = text[text.index("Information:") :]
    assert "[PATHS]" not in information and "-V, --version" in information
    assert text.startswith("Usage: ") and "[PATHS]..." in text.splitlines()[0]

