"""Edits collected per file, then applied in one libcst pass per file.

Every fix kind registers its edits here against nodes of the *original* tree (found by the analyzer's positions),
so edits never have to find each other after the tree changed: one transformer applies them all bottom-up, each
builder receiving the node with its children already rewritten. Wrapper definitions and imports are shared by
the edits of one module: a wrapper is defined once, just before the first top-level statement that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from dispatchlint.indexing.facts import ModuleFacts
from dispatchlint.linking import Project
from dispatchlint.fix import _codegen
from dispatchlint.fix._imports import add_import, drop_unused_import, import_source
from dispatchlint.fix._source import FixError, SourceFile, Sources, Statement, check_module
from dispatchlint.fix._wrapping import (
    COERCED,
    RUNTIME,
    GateWrapping,
    Import,
    RuntimeWrapping,
    Wrapping,
    local_name_of,
)

Built = Union[cst.CSTNode, "cst.FlattenSentinel[cst.CSTNode]", cst.RemovalSentinel]
Builder = Callable[[cst.CSTNode], Built]
#: A module-level statement split in two, with the module's new wrapper definitions going in between.
Splitter = Callable[[Statement], Tuple[List[Statement], List[Statement]]]


@dataclass
class FilePlan:
    """The edits for one file, and the shared definitions and imports they need."""

    source: SourceFile
    facts: ModuleFacts
    project_packages: Set[str]
    edits: Dict[int, Builder] = field(default_factory=dict)
    splits: Dict[int, Splitter] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    #: wrapping -> (wrapper name, its definitions, the top-level statements that use it)
    _wrappers: Dict[Wrapping, Tuple[str, List[Statement], List[Statement]]] = field(default_factory=dict)
    _imports: List[Import] = field(default_factory=list)
    _bound: Optional[Set[str]] = None
    _defs_before: Dict[int, List[Statement]] = field(default_factory=dict)
    #: Modules imported for code the edits delete (``json`` of a deleted parse): dropped when unused after.
    _maybe_unused: Set[str] = field(default_factory=set)
    _layout: _codegen.Layout = _codegen.Layout(_codegen.DEFAULT_LINE_LENGTH)

    @property
    def tree(self) -> cst.Module:
        return self.source.tree

    @property
    def layout(self) -> _codegen.Layout:
        """How generated lines are split: at the line length the project formats this file with."""
        return self._layout

    def replace(self, node: cst.CSTNode, builder: Builder) -> None:
        if id(node) in self.edits:
            line = self.source.line_of(node)
            raise FixError(f"{self.source.relative}: two fixes rewrite the same code (line {line})")
        self.edits[id(node)] = builder

    def replace_expression(
        self, node: cst.BaseExpression, build: Callable[[cst.BaseExpression], cst.BaseExpression]
    ) -> None:
        def builder(updated: cst.CSTNode) -> Built:
            assert isinstance(updated, cst.BaseExpression)
            return build(updated)

        self.replace(node, builder)

    def split(self, statement: Statement, splitter: Splitter) -> None:
        self.splits[id(statement)] = splitter

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # ------------------------------------------------------------------------------------------ names

    def _names(self) -> Set[str]:
        if self._bound is None:
            self._bound = set(self.facts.shapes.top_level_names)
        return self._bound

    def fresh_name(self, wanted: str) -> str:
        """``wanted``, or ``wanted_2``... when the module already binds it."""
        candidate, number = wanted, 1
        while candidate in self._names():
            number += 1
            candidate = f"{wanted}_{number}"
        self._names().add(candidate)
        return candidate

    def imported(self, wanted: Import) -> str:
        """The local name of ``wanted``, importing it at the top of the module if it is not there yet."""
        if wanted.name and wanted.module == self.facts.module:
            return wanted.name
        existing = local_name_of(self.facts, wanted)
        if existing is not None:
            return existing
        local = wanted.name or wanted.module
        if wanted not in self._imports:
            if local in self._names():
                raise FixError(f"{self.source.relative}: `{local}` already names something else in this module")
            self._imports.append(wanted)
            self._names().add(local)
        return local

    @property
    def imports_runtime(self) -> bool:
        """The edits import ``dispatchlint.runtime`` into this file: a dependency the project must declare."""
        return any(wanted.module == RUNTIME for wanted in self._imports)

    def drop_if_unused(self, module: str) -> None:
        self._maybe_unused.add(module)

    def import_statement(self, wanted: Import) -> str:
        return import_source(self.facts, self.tree, wanted)

    # ------------------------------------------------------------------------------------------ wrappers

    def wrapper(self, wrapping: Wrapping, anchor: cst.CSTNode) -> str:
        """The module's wrapper for ``wrapping``, defined before the first top-level statement that uses it."""
        top = self.source.top_level_statement(anchor)
        known = self._wrappers.get(wrapping)
        if known is None:
            name = self.fresh_name("_coerced")
            known = self._wrappers[wrapping] = (name, self._definition(wrapping, name), [])
        known[2].append(top)
        return known[0]

    def _definition(self, wrapping: Wrapping, name: str) -> List[Statement]:
        """The wrapper's type variable and its ``def``, each after two blank lines (as ruff spaces them)."""
        executor = self.fresh_name("_Executor")
        type_var = self.imported(Import("typing", "TypeVar"))
        if isinstance(wrapping, RuntimeWrapping):
            coerced, schemas = self.imported(COERCED), self.imported(wrapping.schemas)
            source = _codegen.runtime_wrapper(name, coerced, schemas, wrapping.args_at, executor, self.layout)
        else:
            source = self._gate_wrapper(wrapping, name, self._typing(executor))
        return [
            _codegen.statement(self.tree, text).with_changes(leading_lines=_codegen.blank_lines(2))
            for text in (_codegen.type_variable(executor, type_var), source)
        ]

    def _typing(self, executor: str) -> _codegen.Typing:
        callable_ = local_name_of(self.facts, Import("collections.abc", "Callable"))
        return _codegen.Typing(
            any=self.imported(Import("typing", "Any")),
            callable=callable_ or self.imported(Import("typing", "Callable")),
            cast=self.imported(Import("typing", "cast")),
            executor=executor,
        )

    def _gate_wrapper(self, wrapping: GateWrapping, name: str, typing: _codegen.Typing) -> str:
        self.imported(Import("functools"))
        if wrapping.shape.asynchronous is None:
            self.imported(Import("inspect"))
        if wrapping.lazy:
            lazy: Optional[str] = self.import_statement(wrapping.gate)
            gate = wrapping.gate.name
        else:
            lazy, gate = None, self.imported(wrapping.gate)
        return _codegen.gate_wrapper(name, wrapping.shape, gate, lazy, typing, self.layout)

    # ------------------------------------------------------------------------------------------ rendering

    def render(self) -> bytes:
        self._defs_before = self._definitions_before()
        tree = self.tree.visit(_Apply(self))
        assert isinstance(tree, cst.Module)
        for module in sorted(self._maybe_unused):
            tree = drop_unused_import(tree, module)
        for wanted in self._imports:
            statement = _codegen.statement(tree, self.import_statement(wanted))
            assert isinstance(statement, cst.SimpleStatementLine)
            tree = add_import(tree, statement, self.project_packages, self.layout.width)
        data = tree.bytes
        check_module(data, self.source.data, self.source.relative)
        return data

    def _definitions_before(self) -> Dict[int, List[Statement]]:
        placed: Dict[int, List[Statement]] = {}
        for _, definitions, users in self._wrappers.values():
            first = min(users, key=self.source.line_of)
            placed.setdefault(id(first), []).extend(definitions)
        return placed

    def statements_around(self, original: cst.CSTNode, updated: Statement) -> Optional[List[Statement]]:
        """A top-level statement with the wrapper definitions placed before it (or inside its split)."""
        defs = self._defs_before.get(id(original), [])
        splitter = self.splits.get(id(original))
        if not defs and splitter is None:
            return None
        before, after = splitter(updated) if splitter is not None else ([], [updated])
        if defs and after:
            after[0] = after[0].with_changes(leading_lines=_at_least_two_blank_lines(after[0].leading_lines))
        return before + defs + after


def _at_least_two_blank_lines(lines: Sequence[cst.EmptyLine]) -> List[cst.EmptyLine]:
    blank = 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    return _codegen.blank_lines(max(0, 2 - blank)) + list(lines)


class _Apply(cst.CSTTransformer):
    """Apply a file's edits bottom-up; an emptied block gets ``pass``."""

    def __init__(self, plan: FilePlan) -> None:
        super().__init__()
        self.plan = plan

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Built:  # type: ignore[override]
        updated: Built = super().on_leave(original_node, updated_node)
        builder = self.plan.edits.get(id(original_node))
        if builder is not None and isinstance(updated, cst.CSTNode):
            updated = builder(updated)
        if isinstance(updated, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and isinstance(
            self.plan.source.parent(original_node), cst.Module
        ):
            around = self.plan.statements_around(original_node, updated)
            if around is not None:
                return cst.FlattenSentinel(around)
        return updated

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if updated_node.body:
            return updated_node
        return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])


@dataclass
class ProjectPlan:
    """Every file's plan, created on first use."""

    project: Project
    sources: Sources
    files: Dict[str, FilePlan] = field(default_factory=dict)
    #: Folder -> the line length its files are formatted with, and the configuration files read to know it
    #: (each read once: they can be large).
    _line_lengths: Dict[Path, int] = field(default_factory=dict)
    _configurations: Dict[Path, Optional[Dict[str, Any]]] = field(default_factory=dict)

    def file(self, module: ModuleFacts) -> FilePlan:
        plan = self.files.get(module.path)
        if plan is None:
            packages = {name.split(".")[0] for name in self.project.graph.module_names}
            source = self.sources.get(module.path)
            folder = source.path.parent
            if folder not in self._line_lengths:
                self._line_lengths[folder] = _codegen.line_length(source.path, self._configurations)
            layout = _codegen.Layout(self._line_lengths[folder])
            plan = self.files[module.path] = FilePlan(source, module, packages, _layout=layout)
        return plan

    def render(self) -> Dict[str, Tuple[bytes, bytes]]:
        """Path -> (original bytes, new bytes) for every file that changes."""
        changed = {}
        for path, plan in sorted(self.files.items()):
            try:
                data = plan.render()
            except FixError:
                raise
            except Exception as error:  # noqa: BLE001 - a bug of ours: named with its file, nothing is written
                raise FixError(
                    f"{path}: internal error while rendering the fix ({type(error).__name__}: {error}); "
                    "no file was changed; please report it"
                ) from error
            if data != plan.source.data:
                changed[path] = (plan.source.data, data)
        return changed
