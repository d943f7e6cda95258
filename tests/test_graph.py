"""``--graph``: one flowchart, one subgraph per project of a monorepo with node ids kept apart; only tool paths;
a legend that names every kind of edge."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import FIXTURES
from dispatchlint.report.graph import EdgeKind


def test_a_monorepo_is_one_flowchart_with_a_subgraph_per_project(tmp_path: Path, run_cli) -> None:
    for name in ("alpha", "beta"):
        shutil.copytree(FIXTURES / "example", tmp_path / name)
        with (tmp_path / name / "pyproject.toml").open("a", encoding="utf-8") as handle:
            handle.write("\n[tool.dispatchlint]\n")
    result = run_cli(tmp_path, "--graph", "alpha", "beta")
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and lines.count("flowchart LR") == 1
    assert '    subgraph p0_project ["alpha"]' in lines and '    subgraph p1_project ["beta"]' in lines
    nodes = [line for line in lines if re.match(r"\s+p\d_n\d", line) and "-->" not in line]
    declared = [re.split(r"[\[({]", line.strip())[0] for line in nodes]
    assert len(declared) == len(set(declared)) == 14
    edges = [line for line in lines if "-->" in line]
    assert len(edges) == 16 and all(edge.strip().split()[0][:3] == edge.split("| ")[1][:3] for edge in edges)


_STATUS_BAR = '''"""The status bar: what each tool shows while it runs."""

from typing import Any, Callable, Dict


def _plan_status(progress: Dict[str, Any]) -> str:
    return f"planning ({progress['done']} steps)"


def _recall_status(progress: Dict[str, Any]) -> str:
    return f"searching memory ({progress['done']} hits)"


TOOL_STATUS: Dict[str, Callable[[Dict[str, Any]], str]] = {"plan": _plan_status, "recall": _recall_status}


def status_line(name: str, progress: Dict[str, Any]) -> str:
    return TOOL_STATUS[name](progress)


def preview(name: str, sample: Dict[str, Any]) -> str:
    from .builtin import BUILTIN_EXECUTORS

    return BUILTIN_EXECUTORS[name](None, sample, None)
'''


def test_only_tool_paths_are_drawn(tmp_path: Path, run_cli) -> None:
    """A map of functions by tool name that no dispatch of the model's arguments reads (what the status bar shows
    for each tool) is no tool path: neither it nor the function reading it is drawn. A read of a tool table with
    arguments that cannot be traced is on a tool path, and is drawn."""
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    (project / "taskbot" / "status.py").write_text(_STATUS_BAR, encoding="utf-8")
    result = run_cli(project, "--graph")
    assert result.exit_code == 0, result.stderr
    graph = result.stdout
    assert "TOOL_STATUS" not in graph and "status_line" not in graph and "status.py:18" not in graph
    drawn = set(re.findall(r"^\s+n\d+_(\w+)[\[({]", graph, re.MULTILINE))  # the nodes declared
    assert {"BUILTIN_EXECUTORS", "REGISTRY", "execute_tool", "handle_function_call", "preview"} <= drawn
    assert re.search(r'n\d+_preview -->\|"unknown · taskbot/status.py:24"\| n\d+_BUILTIN_EXECUTORS', graph), graph


def test_the_legend_names_every_kind_of_edge(tmp_path: Path, run_cli) -> None:
    """Each kind, by the label its edges carry, with its look and what it means; the fixed example draws a wrap."""
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    assert run_cli(project, "--fix").exit_code == 0
    graph = run_cli(project, "--graph").stdout
    [legend] = [line for line in graph.splitlines() if line.strip().startswith("legend_edges[")]
    entries = legend.strip()[len('legend_edges["') : -len('"]')].split("<br/>")
    assert [entry.split(" (")[0] for entry in entries[:-1]] == [kind.value for kind in EdgeKind]
    assert all(re.fullmatch(r"[a-z ]+ \((red|green|green, dashed|plain)\): \S.+", entry) for entry in entries[:-1])
    assert entries[-1] == "each edge: file:line where it is written"
    labels = {match.split(" · ")[0] for match in re.findall(r'-->\|"([^"]+)"\|', graph)}
    assert EdgeKind.WRAPS.value in labels and labels <= {kind.value for kind in EdgeKind}
