"""``--graph``: the project's tool-call paths as a Mermaid flowchart.

Tables are cylinders, gates hexagons, dispatching functions boxes; an edge from a function to a table is a
dispatch, labelled and coloured by what it passes (red: the model's raw arguments reach the tools; green:
repaired by a gate). Name-test chains appear as their function with one edge per arm.
"""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

from dispatchlint.analysis.link import GATED, Project, Site

_RAW_STYLE = "stroke:#d33,stroke-width:2px,color:#d33"
_GATED_STYLE = "stroke:#2a2,stroke-width:2px"


class _Nodes:
    """Stable, Mermaid-safe node ids, declared once."""

    def __init__(self) -> None:
        self.ids: Dict[str, str] = {}
        self.lines: List[str] = []

    def node(self, key: str, label: str, shape: Tuple[str, str]) -> str:
        if key not in self.ids:
            self.ids[key] = f"n{len(self.ids)}_{re.sub(r'[^A-Za-z0-9_]', '_', key)[-40:]}"
            text = label.replace('"', "'")
            self.lines.append(f'    {self.ids[key]}{shape[0]}"{text}"{shape[1]}')
        return self.ids[key]


def _label(site: Site) -> str:
    if site.unguarded:
        return "raw"
    return "gated" if site.verdict == GATED else "unknown"


def render_graph(project: Project) -> str:
    nodes = _Nodes()
    edges: List[Tuple[str, str, str]] = []
    for module, function in project.gates.gate_locations():
        nodes.node(f"gate:{module.module}.{function.qualname}", f"gate {function.name}<br/>{module.path}", ("{{", "}}"))
    for site in project.sites:
        if not site.tool_like:
            continue
        caller = nodes.node(
            f"fn:{site.module.module}.{site.function}",
            f"{site.function or '&lt;module&gt;'}<br/>{site.module.path}",
            ("[", "]"),
        )
        label = _label(site)
        if site.table is not None:
            table = site.table
            target = nodes.node(
                f"table:{table.qualname}", f"{table.display_name}<br/>{table.module.path}", ("[(", ")]")
            )
            edges.append((caller, target, f"{label} L{site.span.line}"))
        elif site.arm is not None:
            tools = nodes.node(
                f"arm:{site.module.module}.{site.function}:{site.span.line}", " / ".join(site.arm.names), ("([", "])")
            )
            edges.append((caller, tools, f"{label} L{site.span.line}"))
    for entry in sorted(project.gates.gated_entries):
        found = project.graph.function(entry)
        if found is None:
            continue
        module, function = found
        source = nodes.node(f"fn:{entry}", f"{function.qualname}<br/>{module.path}", ("[", "]"))
        for gate_module, gate in project.gates.gate_locations():
            gate_id = nodes.ids.get(f"gate:{gate_module.module}.{gate.qualname}")
            if gate_id is not None:
                edges.append((source, gate_id, "repairs"))
                break
    lines = ["flowchart LR"] + nodes.lines
    styles = []
    for number, (source, target, label) in enumerate(edges):
        lines.append(f"    {source} -->|{label}| {target}")
        if label.startswith("raw"):
            styles.append(f"    linkStyle {number} {_RAW_STYLE}")
        elif label.startswith(("gated", "repairs")):
            styles.append(f"    linkStyle {number} {_GATED_STYLE}")
    return "\n".join(lines + styles) + "\n"
