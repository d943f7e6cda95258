"""DL101 fix for a name-test chain: repair the arguments once, ahead of the chain.

``if function_name == "todo": ... else: return handle_function_call(function_name, function_args)``: the arms
read pieces of ``function_args`` raw while the fallback repairs them. One statement ahead of the chain,
``function_args = coerce_tool_args(function_name, function_args)``, makes every arm read repaired arguments; the
fallback repairs them again, which changes nothing (a gate leaves valid arguments as they are).

Arms that bind closures run later (``def _execute(next_args): return todo(todos=next_args.get("todos"))``, handed
to a middleware that calls it with what it chooses to pass on) read what the closure is handed, not what the chain
had: there the closure's parameter is repaired, first thing in its body, with the same gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple, Union

from dispatchlint.indexing.facts import ModuleFacts, NameChain, Span, params_in
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


@dataclass(frozen=True)
class RepairedClosure:
    """A closure an arm binds: where its ``def`` names it, and the parameter its calls read the arguments from."""

    name: Span
    parameter: str


@dataclass(frozen=True)
class ClosureFix:
    site: ChainSite
    gate: Import
    closures: Tuple[RepairedClosure, ...]
    #: The tool-name expression, as the chain writes it (the closures see the chain function's variables).
    name: str
    #: The gate's module imports the chain's module: import the gate inside each closure.
    lazy: bool
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


def closure_fix(context: Context, site: ChainSite) -> Union[ClosureFix, str]:
    """Repair the parameter of each closure ``site``'s arm binds, with the gate its chain's fallback calls."""
    module = site.module
    functions = {function.qualname: function for function in module.functions}
    closures: List[RepairedClosure] = []
    for qualname in site.arm.closures:
        closure = functions.get(qualname)
        if closure is None or closure.name.startswith("<lambda"):
            return "the arm hands on a lambda, with no body to repair the arguments in; repair them where it is called"
        read = {param.name for function, flow in site.flows if function == qualname for param in params_in(flow)}
        own = [name for name in closure.params if name not in ("self", "cls")]
        parameter = [name for name in own if name in read] or (own if len(own) == 1 else [])
        if len(parameter) != 1:
            return f"the arguments `{closure.name}` reads are not one of its parameters"
        if site.chain.variable in closure.params:
            return f"`{closure.name}` takes its own `{site.chain.variable}`, so the tool's name is not known in it"
        closures.append(RepairedClosure(closure.span, parameter[0]))
    gate = gate_import(context, [site.fallback])
    if isinstance(gate, str):
        return gate
    lazy = gate.module != module.module and imports_module(context, gate.module, module.module)
    clash = "" if lazy else clashes(module, gate)
    if clash:
        return clash
    return ClosureFix(site, gate, tuple(closures), site.chain.variable, lazy)
