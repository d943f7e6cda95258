"""DL101 fix for a name-test chain: repair the arguments once, ahead of the chain.

``if function_name == "todo": ... else: return handle_function_call(function_name, function_args)``: the arms
read pieces of ``function_args`` raw while the fallback repairs them. One statement ahead of the chain,
``function_args = coerce_tool_args(function_name, function_args)``, makes every arm read repaired arguments; the
fallback repairs them again, which changes nothing (a gate leaves valid arguments as they are).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Set, Union

import libcst as cst

from dispatchlint.analysis import _syntax as syn
from dispatchlint.analysis.facts import NameChain
from dispatchlint.analysis.link import Project, Site
from dispatchlint.fix import _codegen
from dispatchlint.fix._imports import Import, clashes, imports_module
from dispatchlint.fix._plan import ProjectPlan
from dispatchlint.fix._source import Sources
from dispatchlint.fix._wrapping import gate_import


@dataclass(frozen=True)
class ChainFix:
    site: Site
    gate: Import
    #: The chain's first ``if`` statement, in the original tree.
    statement: cst.If
    #: The tool-name expression and the arguments variable, as the chain writes them.
    name: str
    args: str
    #: The gate's module imports the chain's module: import the gate where the chain runs.
    lazy: bool

    @property
    def label(self) -> str:
        return f"`{self.gate.name}`"

    def apply(self, plan: ProjectPlan) -> None:
        file = plan.file(self.site.module)
        if self.lazy:
            gate, lines = self.gate.name, [file.import_statement(self.gate)]
        else:
            gate, lines = file.imported(self.gate), []
        lines.append(f"{self.args} = {gate}({self.name}, {self.args})")

        def insert(updated: cst.CSTNode) -> "cst.FlattenSentinel[cst.BaseStatement]":
            assert isinstance(updated, cst.If)
            added: List[cst.BaseStatement] = [_codegen.statement(file.tree, line) for line in lines]
            added[0] = added[0].with_changes(leading_lines=updated.leading_lines)
            return cst.FlattenSentinel([*added, updated.with_changes(leading_lines=[])])

        file.replace(self.statement, insert)
        where = f"in `{self.site.function}`" if self.site.function else "at module level"
        file.note(f"coerce `{self.args}` with {self.label} ahead of the `{self.site.key}` chain {where}")


def ladder_statement(sources: Sources, site: Site, chain: NameChain) -> Optional[cst.If]:
    """The ``if`` statement that starts the ladder ``chain`` is part of: a chain that resumes after an arm of
    another kind (``elif self.manager.has_tool(name): ... elif name == "clarify":``) starts in an ``elif``, and
    one coercion ahead of the whole statement serves every chain in it."""
    source = sources.get(site.module.path)
    test = source.expression_at(chain.span)
    statement = source.parent(test) if test is not None else None
    if not isinstance(statement, cst.If):
        return None
    parent = source.parent(statement)
    while isinstance(parent, cst.If) and parent.orelse is statement:
        statement, parent = parent, source.parent(parent)
    return statement


def chain_fix(project: Project, sources: Sources, site: Site, chain: NameChain) -> Union[ChainFix, str]:
    """Coerce ahead of ``chain`` (the ladder ``site``'s arm belongs to), with the gate its fallback calls."""
    source = sources.get(site.module.path)
    statement = ladder_statement(sources, site, chain)
    fallback = source.node_at(site.fallback_span, cst.Call) if site.fallback_span is not None else None
    if not isinstance(statement, cst.If) or fallback is None:
        return "the chain's code cannot be found"
    passed = [
        arg.value.value
        for arg in fallback.args
        if isinstance(arg.value, cst.Name) and arg.value.value != chain.variable and not arg.star
    ]
    if len(passed) != 1:
        # The arguments are what the fallback is handed and the arms read pieces of; the fallback may also get
        # copies only (``_tn, _ta = tool_name, args`` for a lambda): then what the arms read.
        read = _mappings_read_by_arms(statement)
        passed = sorted(read & set(passed)) or sorted(read)
    if len(passed) != 1:
        return "the arguments the arms read are not one variable"
    gate = gate_import(project, [site.fallback])
    if isinstance(gate, str):
        return gate
    lazy = gate.module != site.module.module and imports_module(project, gate.module, site.module.module)
    clash = "" if lazy else clashes(site.module, source.tree, gate)
    if clash:
        return clash
    return ChainFix(site, gate, statement, chain.variable, passed[0], lazy)


def _mappings_read_by_arms(chain: cst.If) -> Set[str]:
    """Names the chain's arms read arguments from: ``args["x"]``, ``args.get("x")``, ``**args``."""
    read: Set[str] = set()
    current: Optional[cst.If] = chain
    while current is not None:
        for node in syn.walk(current.body):
            if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                read.add(node.value.value)
            elif isinstance(node, cst.Arg) and node.star == "**" and isinstance(node.value, cst.Name):
                read.add(node.value.value)
            elif isinstance(node, cst.Call):
                pair = syn.get_call(node)
                if pair is not None and isinstance(pair[0], cst.Name):
                    read.add(pair[0].value)
        current = current.orelse if isinstance(current.orelse, cst.If) else None
    return read
