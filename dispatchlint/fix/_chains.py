"""DL101 fix for a name-test chain: repair the arguments once, ahead of the chain.

``if function_name == "todo": ... else: return handle_function_call(function_name, function_args)``: the arms
read pieces of ``function_args`` raw while the fallback repairs them. One statement ahead of the chain,
``function_args = coerce_tool_args(function_name, function_args)``, makes every arm read repaired arguments; the
fallback repairs them again, which changes nothing (a gate leaves valid arguments as they are).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from dispatchlint.indexing.facts import ModuleFacts, NameChain, Span
from dispatchlint.linking import ChainSite, Site
from dispatchlint.fix._context import Context
from dispatchlint.fix._wrapping import Import, clashes, gate_import, imports_module


@dataclass(frozen=True)
class ChainFix:
    site: Site
    gate: Import
    #: Where the chain's first ``if`` statement starts.
    statement: Span
    #: The tool-name expression and the arguments variable, as the chain writes them.
    name: str
    args: str
    #: The gate's module imports the chain's module: import the gate where the chain runs.
    lazy: bool
    #: Why coercing ahead changes what an arm does beyond repairing its arguments ('' when it does not).
    unsafe: str = ""

    @property
    def label(self) -> str:
        return f"`{self.gate.name}`"


def outermost_chain(module: ModuleFacts, chain: NameChain) -> NameChain:
    """The chain that starts the if/elif ladder this chain's arms belong to (one coercion serves them all)."""
    first = chain.arms[0].span
    ladder = [
        other
        for other in module.chains
        if other.function == chain.function
        and other.variable == chain.variable
        and any(arm.span == first for arm in other.arms)
    ]
    return min(ladder, key=lambda other: (other.span.line, other.span.column))


def chain_fix(context: Context, site: ChainSite, chain: NameChain) -> Union[ChainFix, str]:
    """Coerce ahead of ``chain`` (the ladder ``site``'s arm belongs to), with the gate its fallback calls."""
    shapes = context.shapes(site.module)
    ladder = shapes.ladders.get(chain.span)
    fallback = shapes.fallback_args.get(site.fallback_span)
    if ladder is None or fallback is None:
        return "the chain's code cannot be found"
    passed = [arg.name for arg in fallback if arg.name and arg.name != chain.variable and not arg.star]
    if len(passed) != 1:
        # The arguments are what the fallback is handed and the arms read pieces of; the fallback may also get
        # copies only (``_tn, _ta = tool_name, args`` for a lambda): then what the arms read.
        read = set(ladder.reads)
        passed = sorted(read & set(passed)) or sorted(read)
    if len(passed) != 1:
        return "the arguments the arms read are not one variable"
    gate = gate_import(context, [site.fallback])
    if isinstance(gate, str):
        return gate
    lazy = gate.module != site.module.module and imports_module(context, gate.module, site.module.module)
    clash = "" if lazy else clashes(site.module, gate)
    if clash:
        return clash
    return ChainFix(site, gate, ladder.span, chain.variable, passed[0], lazy)
