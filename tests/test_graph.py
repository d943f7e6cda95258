"""``--graph`` on a monorepo: one flowchart, one subgraph per project, node ids kept apart."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import FIXTURES


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
