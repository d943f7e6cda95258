"""The command's contract: exit codes, formats, filters, configuration errors, bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dispatchlint import __version__

from conftest import FIXTURES, REPO, subprocess_env, valid_sarif, write_project

EXAMPLE = FIXTURES / "example"


def test_json_output_shape(run_cli) -> None:
    result = run_cli(EXAMPLE, "--format", "json")
    data = json.loads(result.stdout)
    assert data["version"] == 1
    finding = data["findings"][0]
    assert set(finding) == {
        "code",
        "name",
        "message",
        "fix_help",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "fixable",
        "fix_safety",
        "url",
        "fingerprint",
        "edits",
        "related",
        "trace",
    }
    assert set(data) == {"version", "findings", "errors"} and data["errors"] == []
    dl101 = [f for f in data["findings"] if f["code"] == "DL101"]
    assert dl101 and all(f["name"] == "unguarded-dispatch" for f in dl101)
    related = {item["message"] for item in dl101[0]["related"]}
    assert "table `BUILTIN_EXECUTORS`" in related and "gate `coerce_tool_args`" in related
    assert data["findings"] == sorted(data["findings"], key=lambda f: (f["path"], f["line"], f["column"], f["code"]))


def test_paths_are_relative_to_the_working_directory(run_cli) -> None:
    result = run_cli(FIXTURES, "--format", "json", "example")
    assert {f["path"].split("/")[0] for f in result.findings()} == {"example"}
    assert result.exit_code == 1


def test_one_file_gives_the_same_findings_as_the_whole_project(run_cli) -> None:
    whole = run_cli(EXAMPLE, "--format", "json").findings()
    one = run_cli(EXAMPLE, "--format", "json", "taskbot/pool.py").findings()
    assert one == [f for f in whole if f["path"] == "taskbot/pool.py"]
    assert one


def test_text_output_has_location_code_and_caret(run_cli) -> None:
    result = run_cli(EXAMPLE)
    assert result.exit_code == 1
    assert "taskbot/loop.py:26:16: DL101" in result.stdout
    assert "^^^^" in result.stdout
    assert result.stdout.rstrip().endswith("Found 3 findings.\n[*] 3 fixable with --fix.")


def test_github_annotations(run_cli) -> None:
    result = run_cli(EXAMPLE, "--format", "github")
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"::error file={EXAMPLE}/taskbot/builtin.py,line=13,col=17,")


def test_select_ignore_exit_zero_statistics(run_cli) -> None:
    assert run_cli(EXAMPLE, "--select", "DL201", "--format", "json").locations() == {("DL201", "taskbot/builtin.py:13")}
    ignored = run_cli(EXAMPLE, "--ignore", "DL1,DL201", "--format", "json")
    assert ignored.findings() == [] and ignored.exit_code == 0
    assert run_cli(EXAMPLE, "--exit-zero").exit_code == 0
    stats = run_cli(EXAMPLE, "--statistics")
    assert "2  DL101  [*] unguarded-dispatch" in stats.stdout and "1  DL201  [*] handrolled-json-parse" in stats.stdout


def test_unknown_rule_code_is_a_usage_error(run_cli) -> None:
    result = run_cli(EXAMPLE, "--select", "DL999")
    assert result.exit_code == 2
    assert "unknown rule code" in result.stderr and "Traceback" not in result.stderr


def test_list_rules_and_explain(run_cli) -> None:
    listed = run_cli(EXAMPLE, "--list-rules")
    assert listed.exit_code == 0 and "DL101  unguarded-dispatch" in listed.stdout
    explained = run_cli(EXAMPLE, "--explain", "dl101")
    assert explained.exit_code == 0 and "## Why is this bad?" in explained.stdout
    assert run_cli(EXAMPLE, "--explain", "DL999").exit_code == 2


def test_missing_path_is_a_usage_error(run_cli) -> None:
    result = run_cli(EXAMPLE, "no/such/file.py")
    assert result.exit_code == 2 and "no such file" in result.stderr


def test_broken_pyproject_is_a_clear_error(tmp_path: Path, run_cli) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.dispatchlint\n", encoding="utf-8")
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    result = run_cli(tmp_path)
    assert result.exit_code == 2
    assert "pyproject.toml" in result.stderr and "invalid TOML" in result.stderr


def test_unknown_config_key_is_a_clear_error(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {"a.py": "x = 1\n"}, {"gatez": ["x"]})
    result = run_cli(tmp_path)
    assert result.exit_code == 2 and "gatez" in result.stderr


def _documented_list_keys() -> list:
    """The keys docs/configuration.md's table types as a list (``list of ...``)."""
    table = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8").split("## Keys", 1)[1]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| `")]
    return [row[1].strip().strip("`") for row in rows if row[2].strip().startswith("list of")]


def test_every_documented_list_key_is_checked_as_one() -> None:
    assert set(_documented_list_keys()) == {
        "gates", "sanitizers", "tables", "tool-types", "sources", "sinks", "exclude", "extend-exclude",
        "test-paths", "select", "extend-select", "ignore",
    }  # fmt: skip


@pytest.mark.parametrize("key", _documented_list_keys())
def test_a_bare_string_for_a_list_key_is_a_configuration_error(tmp_path: Path, run_cli, key: str) -> None:
    """``select = "DL101"`` is not read as a list of one: the docs say a value of the wrong type stops the run."""
    write_project(tmp_path, {"a.py": "x = 1\n"}, {key: "DL101"})
    result = run_cli(tmp_path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert f"pyproject.toml: [tool.dispatchlint] {key} must be a list of strings, not a string" in result.stderr
    assert '["DL101"]' in result.stderr


def test_a_bare_string_for_per_file_ignores_codes_is_a_configuration_error(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {"a.py": "x = 1\n"})
    with (tmp_path / "pyproject.toml").open("a", encoding="utf-8") as pyproject:
        pyproject.write('[tool.dispatchlint.per-file-ignores]\n"a.py" = "DL101"\n')
    result = run_cli(tmp_path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "pyproject.toml: per-file-ignores 'a.py' must be a list of strings, not a string" in result.stderr


def test_a_bare_string_in_a_config_file_is_a_configuration_error(tmp_path: Path, run_cli) -> None:
    """``--config FILE`` with the keys at its top level is held to the same types."""
    write_project(tmp_path, {"a.py": "x = 1\n"})
    (tmp_path / "lint.toml").write_text('extend-select = "DL002"\n', encoding="utf-8")
    result = run_cli(tmp_path, "--config", "lint.toml")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "lint.toml: [tool.dispatchlint] extend-select must be a list of strings, not a string" in result.stderr


def test_a_list_of_one_string_is_accepted(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {"a.py": "x = 1\n"}, {"select": ["DL101"], "exclude": ["b.py"]})
    assert run_cli(tmp_path).exit_code == 0


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file_is_reported_and_the_run_goes_on(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    secret = project / "taskbot" / "secret.py"
    secret.write_text("x = 1\n", encoding="utf-8")
    secret.chmod(0)
    try:
        result = run_cli(project, "--format", "json")
    finally:
        secret.chmod(0o644)
    assert result.exit_code == 2
    assert "taskbot/secret.py: cannot read" in result.stderr
    assert len(result.findings()) == 3


def test_unreadable_file_via_fault(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same contract where the test runs as root: a read that fails names the file and exits 2."""
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    from dispatchlint.discovery import files

    original = files.os.open

    def failing(path, flags, *args):  # type: ignore[no-untyped-def]
        if Path(path).name == "pool.py":
            raise PermissionError(13, "Permission denied")
        return original(path, flags, *args)

    monkeypatch.setattr(files.os, "open", failing)
    result = run_cli(project, "--format", "json")
    assert result.exit_code == 2
    assert "taskbot/pool.py: cannot read: Permission denied" in result.stderr
    assert {f["path"] for f in result.findings()} == {"taskbot/builtin.py", "taskbot/loop.py"}


def test_suppression_comment(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    loop = project / "taskbot" / "loop.py"
    lines = loop.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[25] = lines[25].rstrip("\n") + "  # dispatchlint: ignore[DL101]\n"
    loop.write_text("".join(lines), encoding="utf-8")
    result = run_cli(project, "--format", "json")
    assert ("DL101", "taskbot/loop.py:26") not in result.locations()
    assert ("DL101", "taskbot/pool.py:21") in result.locations()


def test_module_entry_point_never_imports_the_projects_own_modules(tmp_path: Path) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    for shadow in ("typing", "json", "click", "libcst", "enum", "dataclasses"):
        (project / f"{shadow}.py").write_text(f"raise SystemExit('the project\'s {shadow}.py was imported')\n")
    completed = subprocess.run(
        [sys.executable, "-m", "dispatchlint", "--format", "json", "--no-cache", "taskbot"],
        cwd=project,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "was imported" not in completed.stderr + completed.stdout
    assert completed.returncode == 1 and len(json.loads(completed.stdout)["findings"]) == 3, completed.stderr


def test_module_entry_point() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "dispatchlint", "--format", "json", "--no-cache"],
        cwd=EXAMPLE,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert len(json.loads(completed.stdout)["findings"]) == 3
    version = subprocess.run(
        [sys.executable, "-m", "dispatchlint", "--version"], env=subprocess_env(), capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout == f"dispatchlint {__version__}\n"
    short = subprocess.run([sys.executable, "-m", "dispatchlint", "-V"], env=subprocess_env(), capture_output=True)
    assert short.returncode == 0 and short.stdout.decode() == version.stdout


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    blocks = [block.split("```")[0].strip() for block in readme.split("```bash")[1:3]]
    assert len(blocks) == 2
    assert blocks[1] in ci
    assert ci.index(blocks[1]) < ci.index(".venv/bin/python -m pytest -q -m slow")


def test_cache_gives_the_same_findings_and_follows_edits(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    cold = run_cli(project, "--format", "json", cache=True)
    assert not (project / ".dispatchlint_cache").exists()  # the cache is the user's, never the project's
    warm = run_cli(project, "--format", "json", cache=True)
    assert warm.findings() == cold.findings() and len(cold.findings()) == 3
    loop = project / "taskbot" / "loop.py"
    loop.write_text(loop.read_text(encoding="utf-8").replace("return fn(agent, args, ctx)", "return None"), "utf-8")
    edited = run_cli(project, "--format", "json", cache=True)
    assert ("DL101", "taskbot/loop.py:26") not in edited.locations() and len(edited.findings()) == 2


def test_corrupt_cache_entries_are_ignored(tmp_path: Path, run_cli, monkeypatch) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    monkeypatch.setenv("DISPATCHLINT_CACHE_DIR", str(tmp_path / "cache"))
    run_cli(project, "--format", "json", cache=True)
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert entries
    for entry in entries:
        entry.write_bytes(b"not json")
    assert len(run_cli(project, "--format", "json", cache=True).findings()) == 3


def test_parallel_indexing_gives_the_same_facts(tmp_path: Path) -> None:
    from dispatchlint.indexing.facts_cache import read_files
    from dispatchlint.indexing.project import index_read
    from dispatchlint.discovery.files import Ignores, discover

    for number in range(70):  # enough files to use worker processes
        (tmp_path / f"m{number}.py").write_text(f"TOOLS = {{'t{number}': print}}\n", encoding="utf-8")
    read = read_files(discover(tmp_path, Ignores(tmp_path, ())).files, None, max_bytes=10_000).files
    serial = index_read(read, None, jobs=1).modules
    parallel = index_read(read, None, jobs=2).modules
    assert serial == parallel and len(serial) == 70


def test_sarif_output_has_rules_results_and_related_locations(run_cli) -> None:
    result = run_cli(EXAMPLE, "--format", "sarif")
    log = valid_sarif(result.stdout)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["DL001", "DL002", "DL003", "DL101", "DL102", "DL201", "DL301", "DL401"]
    results = run["results"]
    assert len(results) == 3 and result.exit_code == 1
    for item in results:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        region = item["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    dl101 = next(item for item in results if item["ruleId"] == "DL101")
    assert {loc["message"]["text"] for loc in dl101["relatedLocations"]} == {
        "table `BUILTIN_EXECUTORS`",
        "gate `coerce_tool_args`",
    }


def test_baseline_records_then_reports_only_new_findings(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    baseline = tmp_path / "baseline.json"
    recorded = run_cli(project, "--baseline", str(baseline), "--update-baseline", "--format", "json")
    assert recorded.exit_code == 0 and "Recorded 3 findings" in recorded.stderr
    assert run_cli(project, "--baseline", str(baseline), "--format", "json").findings() == []

    loop = project / "taskbot" / "loop.py"  # lines move: old findings stay recognised
    loop.write_text("# a comment that moves every line down\n" + loop.read_text(encoding="utf-8"), "utf-8")
    pool = project / "taskbot" / "pool.py"  # a new bypass: reported
    pool.write_text(
        pool.read_text(encoding="utf-8")
        + "\n\ndef again(agent, tool_call, ctx):\n"
        + "    arguments = json.loads(tool_call.function.arguments)\n"
        + "    return BUILTIN_EXECUTORS[tool_call.function.name](agent, arguments, ctx)\n",
        "utf-8",
    )
    later = run_cli(project, "--baseline", str(baseline), "--format", "json")
    assert [(f["code"], f["path"]) for f in later.findings()] == [("DL101", "taskbot/pool.py")]
    assert later.exit_code == 1


def test_a_broken_baseline_is_a_clear_error(tmp_path: Path, run_cli) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text("{not json", encoding="utf-8")
    result = run_cli(EXAMPLE, "--baseline", str(baseline))
    assert result.exit_code == 2 and "not a dispatchlint baseline" in result.stderr


def test_graph_starts_at_the_model_and_shows_every_path_with_its_file(run_cli) -> None:
    result = run_cli(EXAMPLE, "--graph")
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and lines[0] == "flowchart LR"
    names = {}
    for line in lines:
        if line.startswith("    n") and "-->" not in line:
            node, label = line.strip().split('"')[0:2]
            names[node.rstrip("[({")] = label
    edges = []
    for line in lines:
        if "-->" in line:
            source, rest = line.strip().split(" -->|")
            label, target = rest.split("| ")
            edges.append((names[source], label.strip('"'), names[target]))
    assert ("the model's tool call", "arrives · taskbot/loop.py:23", "execute_tool") in edges
    assert ("the model's tool call", "arrives · taskbot/pool.py:12", "run_tool_calls_concurrently") in edges
    assert ("execute_tool", "raw · taskbot/loop.py:26", "BUILTIN_EXECUTORS") in edges
    assert ("run_tool_calls_concurrently", "raw · taskbot/pool.py:21", "BUILTIN_EXECUTORS") in edges
    # the sequential and the concurrent dispatcher hand the other tools to the gated entry
    assert ("execute_tool", "other tools · taskbot/loop.py:27", "handle_function_call") in edges
    assert ("run_tool_calls_concurrently", "other tools · taskbot/pool.py:23", "handle_function_call") in edges
    assert ("handle_function_call", "repairs · taskbot/registry.py:55", "gate coerce_tool_args") in edges
    assert ("handle_function_call", "gated · taskbot/registry.py:60", "REGISTRY") in edges
    assert len(edges) == 8, edges
    raw = "raw (red): a tool runs with the model's raw arguments"
    assert "    subgraph legend [Legend]" in lines and any(raw in line for line in lines)
    styled = [line.split()[1] for line in lines if line.strip().startswith("linkStyle")]
    red = [str(number) for number, (_, label, _) in enumerate(edges) if label.startswith("raw")]
    assert set(red) <= set(styled) and len(styled) == 6  # the two arrivals keep the default style


def test_a_file_the_indexer_fails_on_is_reported_and_the_run_goes_on(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dispatchlint.indexing import indexer

    original = indexer.index_source

    def failing(path: str, *job):  # type: ignore[no-untyped-def]
        if path.endswith("pool.py"):
            raise ValueError("unexpected shape")
        return original(path, *job)

    monkeypatch.setattr(indexer, "index_source", failing)
    result = run_cli(EXAMPLE, "--format", "json")
    assert result.exit_code == 2
    assert "taskbot/pool.py: internal error while indexing (ValueError: unexpected shape)" in result.stderr
    assert {f["path"] for f in result.findings()} == {"taskbot/builtin.py", "taskbot/loop.py"}


def test_dl401_sees_the_schemas_passed_to_a_registering_decorator(run_cli) -> None:
    """The example's registry tools are registered as ``@register("read_file", {...schema...})``."""
    result = run_cli(EXAMPLE, "--format", "json", "--select", "DL401")
    assert result.findings() == [] and result.exit_code == 0


def test_messages_state_the_concrete_effect_first_then_the_fix(run_cli) -> None:
    messages = {(f["code"], f["path"]): f["message"] for f in run_cli(EXAMPLE, "--format", "json").findings()}
    dl101 = messages[("DL101", "taskbot/loop.py")]
    assert dl101.startswith('`limit` (integer) reaches `_recall` raw if sent as a string: ')
    assert dl101.endswith("wrap the table once where it is defined (`taskbot.builtin`, line 28)")
    dl201 = messages[("DL201", "taskbot/builtin.py")]
    assert dl201.startswith("`_plan` (tool `plan`) parses `steps` by hand") and dl201.endswith(
        "delete the `json.loads`"
    )
    assert all(len(message) < 220 for message in messages.values())  # they were up to 260


def test_readme_example_output_is_what_the_command_prints(run_cli) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = readme.split("## What the example run shows\n\n```text\n")[1].split("```")[0]
    assert run_cli(REPO, "fixtures/example", "--color", "never").stdout == shown
