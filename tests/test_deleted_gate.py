"""A CI gate that deleting the gate cannot fool: a configured gate that is gone while tools run raw is DL003, at
the entry in the configuration, in every format, from a warm cache too."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import valid_sarif, write_project

GATES = {"gates": ["agent.validation.repair_arguments"]}

VALIDATION = """
def repair_arguments(tool_name, args):
    return dict(args)
"""

#: One path through the configured gate, one past it (DL101).
GATED = """
import json

from agent.validation import repair_arguments


def plan(steps: list) -> list:
    return list(steps)


TOOLS = {"plan": plan}


def run(tool_call):
    args = repair_arguments(tool_call.name, json.loads(tool_call.arguments))
    return TOOLS[tool_call.name](**args)


def run_again(tool_call):
    return TOOLS[tool_call.name](**json.loads(tool_call.arguments))
"""

#: The same module once the gate is deleted: both paths raw alike, nothing for DL101 to compare.
UNGATED = """
import json


def plan(steps: list) -> list:
    return list(steps)


TOOLS = {"plan": plan}


def run(tool_call):
    return TOOLS[tool_call.name](**json.loads(tool_call.arguments))


def run_again(tool_call):
    return TOOLS[tool_call.name](**json.loads(tool_call.arguments))
"""

MESSAGE = (
    "2 tool calls run with the model's raw arguments: configured gate `agent.validation.repair_arguments` is "
    "neither defined nor called in the project; restore it on the tools' paths, or remove it from `gates` if the "
    "project gave it up"
)


def _project(tmp_path: Path) -> Path:
    """The project with its gate (pyproject.toml: ``gates = [...]`` on line 4)."""
    files = {"agent/__init__.py": "", "agent/validation.py": VALIDATION, "agent/tools.py": GATED}
    (tmp_path / "project").mkdir()
    return write_project(tmp_path / "project", files, GATES)


def _delete_the_gate(project: Path) -> None:
    (project / "agent" / "validation.py").unlink()
    (project / "agent" / "tools.py").write_text(UNGATED, encoding="utf-8")


def test_deleting_the_configured_gate_fails_the_run_at_the_gates_entry(tmp_path: Path, run_cli) -> None:
    project = _project(tmp_path)
    assert run_cli(project, "--format", "json").locations() == {("DL101", "agent/tools.py:20")}
    _delete_the_gate(project)
    text = run_cli(project)
    assert text.exit_code == 1 and "All checks passed!" not in text.stdout
    assert text.stdout.startswith(f"pyproject.toml:4:10: DL003 {MESSAGE}\n")
    assert '4 | gates = ["agent.validation.repair_arguments"]' in text.stdout
    (finding,) = run_cli(project, "--format", "json").findings()
    assert (finding["code"], finding["name"], finding["path"], finding["line"]) == (
        "DL003",
        "missing-gate",
        "pyproject.toml",
        4,
    )
    assert (finding["column"], finding["end_column"]) == (10, 45)  # the quoted name
    assert [(item["path"], item["line"], item["message"]) for item in finding["related"]] == [
        ("agent/tools.py", 13, "a tool runs in `run` with raw arguments"),
        ("agent/tools.py", 17, "a tool runs in `run_again` with raw arguments"),
    ]
    assert finding["fixable"] is False and finding["url"].endswith("/docs/rules.md#dl003-missing-gate")


def test_a_deleted_gate_is_annotated_in_github_and_sarif(tmp_path: Path, run_cli) -> None:
    project = _project(tmp_path)
    _delete_the_gate(project)
    github = run_cli(project, "--format", "github")
    config = project.resolve() / "pyproject.toml"
    assert github.exit_code == 1
    where = "line=4,col=10,endLine=4,endColumn=45"
    assert github.stdout.startswith(f"::error file={config},{where},title=DL003 missing-gate::DL003 2 tool calls")
    sarif = run_cli(project, "--format", "sarif")
    (result,) = valid_sarif(sarif.stdout)["runs"][0]["results"]
    assert result["ruleId"] == "DL003" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pyproject.toml"
    assert [item["physicalLocation"]["region"]["startLine"] for item in result["relatedLocations"]] == [13, 17]


def test_a_deleted_gate_is_reported_for_the_files_it_leaves_raw_and_from_a_sub_folder(
    tmp_path: Path, run_cli
) -> None:
    """The pre-commit hook names the changed modules: the finding concerns the raw dispatches it points at."""
    project = _project(tmp_path)
    _delete_the_gate(project)
    assert run_cli(project, "--format", "json", "agent/tools.py").locations() == {("DL003", "pyproject.toml:4")}
    below = run_cli(project / "agent", "--format", "json")
    assert below.exit_code == 1 and below.locations() == {("DL003", "../pyproject.toml:4")}
    assert run_cli(project / "agent").stdout.startswith("../pyproject.toml:4:10: DL003")


def test_a_deleted_gate_is_reported_from_stored_results_and_where_the_entry_moved(tmp_path: Path, run_cli) -> None:
    project = _project(tmp_path)
    _delete_the_gate(project)
    assert run_cli(project, cache=True).stdout.startswith("pyproject.toml:4:10: DL003")
    warm = run_cli(project, "-v", cache=True)
    assert warm.exit_code == 1 and "stored results" in warm.stderr
    assert warm.stdout.startswith("pyproject.toml:4:10: DL003")
    config = project / "pyproject.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("[tool.dispatchlint]\n", "[tool.dispatchlint]\n\n"))
    assert run_cli(project, cache=True).stdout.startswith("pyproject.toml:5:10: DL003")


def test_a_deleted_gate_configured_in_another_file_is_reported_there(tmp_path: Path, run_cli) -> None:
    project = _project(tmp_path)
    (project / "pyproject.toml").write_text('[project]\nname = "example"\n', encoding="utf-8")
    settings = tmp_path / "settings" / "dispatchlint.toml"
    settings.parent.mkdir()
    settings.write_text('gates = [\n  "agent.other",\n  "agent.validation.repair_arguments",\n]\n', "utf-8")
    _delete_the_gate(project)
    result = run_cli(project, "--config", str(settings), "--format", "json")
    assert result.exit_code == 1
    lines = sorted((f["path"], f["line"], f["column"]) for f in result.findings())
    assert lines == [("../settings/dispatchlint.toml", 2, 3), ("../settings/dispatchlint.toml", 3, 3)]


def test_a_deleted_gate_can_be_recorded_in_a_baseline(tmp_path: Path, run_cli) -> None:
    """A project that accepts the deletion for now records it: one finding per gate, not one per call."""
    project = _project(tmp_path)
    _delete_the_gate(project)
    baseline = tmp_path / "baseline.json"
    assert run_cli(project, "--baseline", str(baseline), "--update-baseline").exit_code == 0
    assert [entry["code"] for entry in json.loads(baseline.read_text(encoding="utf-8"))["findings"]] == ["DL003"]
    assert run_cli(project, "--baseline", str(baseline)).exit_code == 0
