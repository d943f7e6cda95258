"""What deciding a fix reads: the linked project, and each module's recorded shapes by the span they describe.

Deciding parses nothing: the shapes were recorded when the file was indexed (``indexing/fix_shapes.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from dispatchlint.indexing.facts import (
    ArgShape,
    BodyStep,
    FillNode,
    Ladder,
    ModuleFacts,
    ParseEdit,
    Signature,
    Span,
    StoredValue,
    TableFill,
    TableShape,
)
from dispatchlint.linking import LinkedTable, Project


@dataclass(frozen=True)
class ModuleShapes:
    top_level_names: FrozenSet[str]
    signatures: Dict[Span, Signature]
    stored: Dict[Span, StoredValue]
    tables: Dict[Span, TableShape]
    fills: Dict[Span, FillNode]
    dispatch_args: Dict[Span, Tuple[ArgShape, ...]]
    ladders: Dict[Span, Ladder]
    fallback_args: Dict[Span, Tuple[ArgShape, ...]]
    parses: Dict[Span, ParseEdit]
    bodies: Dict[Span, Tuple[BodyStep, ...]]


class Context:
    """The project a run decides fixes for, with each module's shapes looked up by span (built on first use)."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._shapes: Dict[str, ModuleShapes] = {}
        self._modules = {module.path: module for module in project.modules}

        self._import_graph: Optional[Dict[str, Set[str]]] = None
        self._fills: Optional[Dict[str, List[Tuple[ModuleFacts, TableFill]]]] = None

    def module(self, path: str) -> Optional[ModuleFacts]:
        return self._modules.get(path)

    def import_graph(self) -> Dict[str, Set[str]]:
        """Project module -> the project modules it imports (loading it also loads its packages first)."""
        if self._import_graph is None:
            names = self.project.graph.module_names
            graph: Dict[str, Set[str]] = {}
            for module in self.project.modules:
                edges = graph.setdefault(module.module, set())
                for _, target in module.imports:
                    parts = target.split(".")
                    for depth in range(len(parts), 0, -1):
                        prefix = ".".join(parts[:depth])
                        if prefix in names:
                            edges.add(prefix)
                            break
            self._import_graph = graph
        return self._import_graph

    def fills_of(self, table: LinkedTable) -> List[Tuple[ModuleFacts, TableFill]]:
        """The places where values enter ``table`` after its definition (every table's, found in one pass)."""
        if self._fills is None:
            self._fills = {}
            catalog = self.project.catalog
            for module in self.project.modules:
                for fill in module.fills:
                    filled = catalog.table_for(module, fill.table, fill.function)
                    if filled is not None:
                        self._fills.setdefault(filled.qualname, []).append((module, fill))
        return self._fills.get(table.qualname, [])

    def shapes(self, module: ModuleFacts) -> ModuleShapes:
        found = self._shapes.get(module.path)
        if found is None:
            recorded = module.shapes
            found = self._shapes[module.path] = ModuleShapes(
                frozenset(recorded.top_level_names),
                dict(recorded.signatures),
                dict(recorded.stored),
                dict(recorded.tables),
                dict(recorded.fills),
                dict(recorded.dispatch_args),
                dict(recorded.ladders),
                dict(recorded.fallback_args),
                dict(recorded.parses),
                dict(recorded.bodies),
            )
        return found
