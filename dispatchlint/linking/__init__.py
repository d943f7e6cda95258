"""Link per-module facts into one project model, as a taint analysis in stages.

Names written in one module (``from m import T as X``, ``mm.T``, ``self.tools``) are resolved to qualified names
through imports, aliases, class hierarchies and enclosing functions. Then, in order, each stage built on the
ones before it:

1. :class:`CallGraph` (``callgraph``): who calls whom, functions handed on as values included;
2. :class:`Gates` (``gates``): the sanitizers: gates, gated entries, property-name sanitizers, tool types that
   validate their own arguments; and :class:`Specification` (``specification``): the sources the project's gated
   path declares (the parameters of callbacks handed where a gated callback is handed);
3. :class:`Taint` (``taint``): per-function summaries of what parameters and return values carry (the model's
   raw arguments, gated ones, or neither), computed on demand and memoised, and the traces of raw values;
4. :class:`Catalog` (``catalog``): the executor tables (the sinks) and tool schemas;
5. :class:`Dispatches` (``sites``): every place a tool runs, with the verdict on what it is handed.

:func:`link_project` builds them; :class:`Project` holds them. Rules only read this model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, List, Sequence

from dispatchlint.indexing.facts import ModuleFacts
from dispatchlint.linking.callgraph import CallGraph
from dispatchlint.linking.catalog import Catalog
from dispatchlint.linking.gates import Gates
from dispatchlint.linking.model import (
    DEFAULT_GATE,
    FRAMEWORK_PACKAGES,
    GATED,
    NOT_MODEL,
    RAW,
    RAW_WEAK,
    RUNTIME_PACKAGE,
    UNKNOWN,
    CallSite,
    ChainSite,
    LinkedEntry,
    LinkedTable,
    Site,
    TableSite,
    Verdict,
    combine,
    display_function,
    table_of,
)
from dispatchlint.linking.sites import Dispatches
from dispatchlint.linking.specification import Specification
from dispatchlint.linking.taint import Taint
from dispatchlint.config import Config


@dataclass(frozen=True)
class Project:
    """The whole project's facts, linked: every stage's output, and two conclusions drawn from all of them."""

    graph: CallGraph
    gates: Gates
    taint: Taint
    catalog: Catalog
    dispatches: Dispatches
    #: The parts of the program (:meth:`CallGraph.part_of`) that repair tool arguments somewhere: a function
    #: passes its arguments through a gate, a table is wrapped, or a tool runs with gated arguments. A function
    #: that merely looks like a gate (it reads a schema's ``properties``) but never sits on a tool's path does
    #: not count.
    gated_parts: FrozenSet[int]
    #: The parts whose tools validate their own arguments somewhere (tool classes whose public entry does, a
    #: framework's included), or that have a gate: not ungated code (DL102 stays silent there).
    validated_parts: FrozenSet[int]
    #: The modules that make a framework's validating tools by a call, and those that import one of them.
    validated_modules: FrozenSet[str]

    @property
    def has_gate(self) -> bool:
        """Some part of the project has a gate."""
        return bool(self.gated_parts)

    def gate_reaches(self, module: ModuleFacts) -> bool:
        """The part of the program ``module`` belongs to has a gate: its raw paths are inconsistent with it."""
        return self.graph.part_of(module) in self.gated_parts

    def validation_reaches(self, module: ModuleFacts) -> bool:
        """The part ``module`` belongs to has a gate or tool classes that validate their own arguments, or the
        module makes (or imports a module that makes) a framework's validating tools."""
        return self.graph.part_of(module) in self.validated_parts or module.module in self.validated_modules

    @property
    def config(self) -> Config:
        return self.graph.config

    @property
    def modules(self) -> List[ModuleFacts]:
        """The modules that parsed."""
        return self.graph.modules

    @property
    def broken(self) -> List[ModuleFacts]:
        """The modules that did not parse."""
        return self.graph.broken

    @property
    def sites(self) -> List[Site]:
        return self.dispatches.sites


def link_project(modules: Sequence[ModuleFacts], config: Config) -> Project:
    """Link every module's facts, stage after stage (each reads only the ones before it)."""
    graph = CallGraph(modules, config)
    gates = Gates(graph)
    taint = Taint(graph, gates, Specification(graph, gates))
    catalog = Catalog(graph, gates)
    dispatches = Dispatches(graph, gates, taint, catalog)
    gating = (
        [located[0] for located in map(graph.function, gates.gated_entries) if located is not None]
        + [table.module for table in catalog.tables.values() if table.wrapped]
        + [site.module for site in dispatches.sites if site.tool_like and _gates(taint, site)]
        + [module for module, _ in dispatches.gating_dispatches]
    )
    gated_parts = frozenset(graph.part_of(module) for module in gating)
    validated_parts = gated_parts | {graph.part_of(module) for module in gates.validating_tool_modules}
    makers = gates.framework_tool_makers
    validated_modules = frozenset(
        module.module
        for module in graph.modules
        if module.module in makers
        or any(target in makers or target.rpartition(".")[0] in makers for _, target in module.imports)
    )
    return Project(graph, gates, taint, catalog, dispatches, gated_parts, validated_parts, validated_modules)


def _gates(taint: Taint, site: Site) -> bool:
    """A tool runs here with the gate's output, on some path at least: the project repairs its arguments."""
    return site.verdict == GATED or any(
        taint.may_carry_gated(flow, site.module, function) for function, flow in site.flows
    )


__all__ = [
    "DEFAULT_GATE",
    "FRAMEWORK_PACKAGES",
    "GATED",
    "NOT_MODEL",
    "RAW",
    "RAW_WEAK",
    "RUNTIME_PACKAGE",
    "UNKNOWN",
    "CallGraph",
    "Catalog",
    "Dispatches",
    "Gates",
    "LinkedEntry",
    "LinkedTable",
    "Project",
    "Site",
    "TableSite",
    "ChainSite",
    "CallSite",
    "table_of",
    "Taint",
    "Verdict",
    "combine",
    "display_function",
    "link_project",
]
