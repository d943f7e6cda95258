"""``--graph``: the project's tool-call paths as a Mermaid flowchart.

The picture starts at the model's tool call and goes to each entry point that dispatches tools (the functions
nothing else in the picture calls); from there, to the tables it reads tools from, to the gated entry it hands
the other tools to, and from the gated entry to the gate. Only tool paths are drawn: a table is in the picture
when some dispatch hands its tools the model's arguments (raw or repaired), so that the other maps of functions
a large project keeps by tool name (what the status bar shows for each tool) stay out. Tables are cylinders,
gates hexagons, entry points boxes. Each edge names the file and line where it is written; red edges carry the
model's raw arguments to a tool, green ones arguments the gate repaired. The legend names every kind of edge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from dispatchlint.indexing.facts import Call, ModuleFacts, Span
from dispatchlint.linking import GATED, RAW, ChainSite, Project, Site, table_of
from dispatchlint.report._visible import visible


class EdgeKind(str, Enum):
    """What an edge stands for (its label); how it is drawn and what the legend says of it: :data:`_DRAWN`."""

    START = "arrives"
    RAW = "raw"
    GATED = "gated"
    UNKNOWN = "unknown"
    HANDS_ON = "other tools"
    CALLS = "calls"
    REPAIRS = "repairs"
    WRAPS = "wraps"


@dataclass(frozen=True)
class _Drawn:
    """How an edge kind is drawn, and the legend's words for it."""

    meaning: str
    #: Mermaid's ``linkStyle`` ('' for the default line), and its look in the legend's words.
    style: str = ""
    look: str = "plain"


_RED = "stroke:#d33,stroke-width:2px,color:#d33"
_GREEN = "stroke:#2a2,stroke-width:2px"
_DRAWN = {
    EdgeKind.START: _Drawn("the model's tool call reaches an entry point"),
    EdgeKind.RAW: _Drawn("a tool runs with the model's raw arguments", _RED, "red"),
    EdgeKind.GATED: _Drawn("a tool runs with arguments the gate repaired", _GREEN, "green"),
    EdgeKind.UNKNOWN: _Drawn("a tool of the table runs with arguments that cannot be traced"),
    EdgeKind.HANDS_ON: _Drawn(
        "hands the other tools to the gated entry", "stroke:#2a2,stroke-dasharray:4 3", "green, dashed"
    ),
    EdgeKind.CALLS: _Drawn("an entry point calls another"),
    EdgeKind.REPAIRS: _Drawn("the gated entry repairs the arguments with the gate", _GREEN, "green"),
    EdgeKind.WRAPS: _Drawn("the table is wrapped where it is defined, each tool behind the gate", _GREEN, "green"),
}
_START = ("start", "the model's tool call")
_SHAPES = {"entry": ("[", "]"), "table": ("[(", ")]"), "gate": ("{{", "}}"), "tools": ("([", "])")}


@dataclass(frozen=True)
class _Link:
    source: str
    target: str
    kind: EdgeKind
    where: str

    @property
    def label(self) -> str:
        return f"{self.kind.value} · {self.where}" if self.where else self.kind.value


class _Picture:
    """Nodes with stable, Mermaid-safe ids (declared once), and edges (each drawn once)."""

    def __init__(self, prefix: str = "") -> None:
        #: Keeps the ids of several projects' pictures apart in one flowchart.
        self.prefix = prefix
        self.ids: Dict[str, str] = {}
        self.nodes: List[str] = []
        self.links: List[_Link] = []

    def node(self, key: str, label: str, shape: str) -> str:
        if key not in self.ids:
            self.ids[key] = (
                f"{self.prefix}n{len(self.ids)}_{re.sub(r'[^A-Za-z0-9_]', '_', re.split(r'[.:]', key)[-1])[:40]}"
            )
            opening, closing = _SHAPES[shape] if shape in _SHAPES else ("([", "])")
            self.nodes.append(f'    {self.ids[key]}{opening}"{_text(label)}"{closing}')
        return self.ids[key]

    def link(self, source: str, target: str, kind: EdgeKind, where: str = "") -> None:
        """Draw an edge, once: a second call of the same kind between the same nodes adds nothing."""
        if not any((e.source, e.target, e.kind) == (source, target, kind) for e in self.links):
            self.links.append(_Link(source, target, kind, where))


def _text(label: str) -> str:
    return visible(label).replace('"', "'").replace("<", "&lt;").replace(">", "&gt;")


def _where(module: ModuleFacts, span: Span) -> str:
    return f"{module.path}:{span.line}"


def _hands_model_arguments(site: Site) -> bool:
    """The site hands a tool the model's arguments, repaired or raw (as a finding would call them raw)."""
    return site.verdict in (GATED, RAW) or site.unguarded


def _tool_sites(project: Project) -> List[Site]:
    """The sites on the project's tool paths, outside its tests: those that hand a tool the model's arguments, and
    the other sites of the tables those read (a tool of the table runs there too)."""
    drawable = [
        site
        for site in project.sites
        if site.tool_like and (table_of(site) or isinstance(site, ChainSite)) and not project.graph.is_test(site.module)
    ]
    read = {table.qualname for site in drawable if _hands_model_arguments(site) for table in [table_of(site)] if table}
    return [
        site
        for site in drawable
        if _hands_model_arguments(site) or any(table.qualname in read for table in [table_of(site)] if table)
    ]


def _site_kind(site: Site) -> EdgeKind:
    if site.unguarded:
        return EdgeKind.RAW
    return EdgeKind.GATED if site.verdict == GATED else EdgeKind.UNKNOWN


def render_graph(projects: Sequence[Tuple[str, Project]]) -> str:
    """One flowchart; with several projects (a monorepo), each is a subgraph named by its ``label``."""
    pictures = [
        _picture(project, f"p{number}_" if len(projects) > 1 else "") for number, (_, project) in enumerate(projects)
    ]
    return _mermaid([(label, picture) for (label, _), picture in zip(projects, pictures)])


def _picture(project: Project, prefix: str) -> _Picture:
    picture = _Picture(prefix)
    start = picture.node(*_START, "start")
    entries: Dict[str, Tuple[ModuleFacts, str]] = {}

    def entry(module: ModuleFacts, qualname: str) -> str:
        key = f"{module.module}.{qualname}" if qualname else module.module
        entries.setdefault(key, (module, qualname))
        return picture.node(f"fn:{key}", qualname or f"<module> of {module.path}", "entry")

    gates = _draw_gates(project, picture)
    for site in _tool_sites(project):
        table = table_of(site)
        caller = entry(site.module, site.function)
        if table is not None:
            target = picture.node(f"table:{table.qualname}", table.display_name, "table")
            if table.wrapped and gates:
                picture.link(
                    target, next(iter(gates.values())), EdgeKind.WRAPS, _where(table.module, table.definition.span)
                )
        else:
            assert isinstance(site, ChainSite)
            arm_key = f"arm:{site.module.module}.{site.function}:{site.span.line}"
            target = picture.node(arm_key, " / ".join(site.arm.names), "tools")
        picture.link(caller, target, _site_kind(site), _where(site.module, site.span))
    called = _draw_hand_ons(project, picture, entries, entry)
    for qualified in sorted(project.gates.gated_entries & set(entries)):
        module, _ = entries[qualified]
        _draw_gate_calls(project, picture, picture.ids[f"fn:{qualified}"], module, qualified, gates)
    arrivals = []
    for key, (module, _) in sorted(entries.items()):
        if key not in called:
            found = project.graph.function(key)
            where = _where(module, found[1].span) if found is not None else module.path
            arrivals.append(_Link(start, picture.ids[f"fn:{key}"], EdgeKind.START, where))
    picture.links[:0] = arrivals
    return picture


def _draw_gates(project: Project, picture: _Picture) -> Dict[str, str]:
    """A node for each gate the project defines, by qualified name."""
    drawn = {}
    for module, function in project.gates.gate_locations(top_level_only=True):
        qualified = f"{module.module}.{function.qualname}"
        drawn[qualified] = picture.node(f"gate:{qualified}", f"gate {function.name}", "gate")
    return drawn


def _draw_gate_calls(
    project: Project, picture: _Picture, source: str, module: ModuleFacts, qualified: str, gates: Dict[str, str]
) -> None:
    """A gated entry's edges to the gates it calls (the first gate drawn when the call resolves to none)."""
    for call_module, call in project.graph.calls_in(qualified, nested=True):
        if not project.gates.is_gate_callee(call_module, call.callee, call.function):
            continue
        resolved = project.graph.resolve(call_module, call.callee, call.function)
        target = gates.get(resolved or "") or next(iter(gates.values()), None)
        if target is None:
            target = picture.node(f"gate:{call.callee}", f"gate {call.callee.split('.')[-1]}", "gate")
        picture.link(source, target, EdgeKind.REPAIRS, _where(call_module, call.span))


def _draw_hand_ons(
    project: Project,
    picture: _Picture,
    entries: Dict[str, Tuple[ModuleFacts, str]],
    entry: Callable[[ModuleFacts, str], str],
) -> Set[str]:
    """Edges from entry points to the entry points and gated entries they call or hand on
    (``pool.submit(handle_function_call, ...)``): the sequential and concurrent paths give the other tools to the
    gated entry. A gated entry reached so is drawn too. The entries called."""
    called: Set[str] = set()
    gated = project.gates.gated_entries
    pending = sorted(key for key, (_, qualname) in entries.items() if qualname)
    while pending:
        key = pending.pop(0)
        for call_module, call in project.graph.calls_in(key, nested=True):
            for target in _callees(project, call_module, call):
                found = project.graph.function(target) if target in gated else None
                if target not in entries and found is not None and not project.graph.is_test(found[0]):
                    entry(found[0], found[1].qualname)
                    pending.append(target)
                if target == key or target not in entries:
                    continue
                called.add(target)
                kind = EdgeKind.HANDS_ON if target in gated else EdgeKind.CALLS
                picture.link(
                    picture.ids[f"fn:{key}"], picture.ids[f"fn:{target}"], kind, _where(call_module, call.span)
                )
    return called


def _callees(project: Project, module: ModuleFacts, call: Call) -> List[str]:
    """The project functions a call runs: its callee, and functions it is handed by name."""
    class_name = project.graph.class_of(module, call.function)
    written = [call.callee] + [value for _, kind, value in call.literals if kind == "ref"]
    found: List[str] = []
    for name in written:
        resolved: Optional[str] = project.graph.resolve(module, name, call.function, class_name)
        if resolved is not None and resolved not in found:
            found.append(resolved)
    return found


def _mermaid(pictures: Sequence[Tuple[str, _Picture]]) -> str:
    lines = ["flowchart LR"]
    links: List[_Link] = []
    for label, picture in pictures:
        if len(pictures) > 1:
            lines.append(f'    subgraph {picture.prefix}project ["{_text(label)}"]')
            lines += ["    " + node for node in picture.nodes] + ["    end"]
        else:
            lines += picture.nodes
        links += picture.links
    styles = []
    for number, edge in enumerate(links):
        lines.append(f'    {edge.source} -->|"{_text(edge.label)}"| {edge.target}')
        style = _DRAWN[edge.kind].style
        if style:
            styles.append(f"    linkStyle {number} {style}")
    edges = "<br/>".join(_text(f"{kind.value} ({_DRAWN[kind].look}): {_DRAWN[kind].meaning}") for kind in EdgeKind)
    lines += [
        "    subgraph legend [Legend]",
        "        direction TB",
        '        legend_start(["the model\'s tool call: where arguments arrive"])',
        '        legend_entry["entry point: a function that runs tools"]',
        '        legend_table[("tool table: read on a path of the model\'s arguments")]',
        '        legend_gate{{"gate: repairs arguments against the schema"}}',
        f'        legend_edges["{edges}<br/>each edge: file:line where it is written"]',
        "    end",
    ]
    return "\n".join(lines + styles) + "\n"
