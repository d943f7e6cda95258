"""What a wrap (or a coercion ahead of a chain) changes besides the arguments the tools receive, decided before
the fix is offered.

A wrap hands each tool the arguments its schema declares: an array where the model sent ``'["a"]'``, a number for
``"5"``. An executor that takes such a parameter for a string breaks on it: ``json.loads(steps)`` raises
``TypeError``, ``steps.strip()`` raises ``AttributeError``, ``steps[1:]`` drops a step instead of a bracket. The
analysis recorded those uses (``StringUse``: not those under ``isinstance(x, str)``, which handle both); here each
one the wrap makes wrong is either a hand-rolled parse the same fix deletes (the gate now parses, on every path),
or a reason the fix is unsafe, said in its finding.

Code that reads what the table's values are, rather than calling them (``fn.__code__.co_varnames``, ``fn is
other``, ``inspect.getfullargspec(fn)``: ``IdentityRead``), sees a wrapper, another function: the wrap is then
unsafe too, and says where.
"""

from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet, List, Optional, Sequence, Tuple

from dispatchlint.indexing.facts import ChainArm, ModuleFacts, NameChain, Span, StringUse
from dispatchlint.linking import LinkedTable
from dispatchlint.fix._chains import ChainFix, ClosureFix
from dispatchlint.fix._context import Context
from dispatchlint.fix._parses import TableFixer, parse_fix
from dispatchlint.fix._tables import ParseFix
from dispatchlint.fix._tables import TableFix


def with_effects(context: Context, fix: TableFix, fixer: TableFixer) -> TableFix:
    """``fix`` with the parses it must delete to keep its tools working, and why it is unsafe when some use of a
    parameter it cannot take along would change."""
    deletes: List[ParseFix] = []
    broken: List[Tuple[ModuleFacts, StringUse, str]] = []
    for module, use, declared in _retyped_string_uses(context, fix):
        where = f"{module.path}:{use.span.line}"
        parse = next((p for p in module.json_parses if p.span == use.span), None)
        if parse is None:
            reason = (
                f"`{use.function}` takes `{use.parameter}` for a string ({use.operation}, {where}), and after the "
                f"wrap it gets the `{declared}` its schema declares"
            )
            broken.append((module, use, reason))
            continue
        tools = context.project.dispatches.executor_tools().get(f"{module.module}.{parse.function}", set())
        made = parse_fix(context, module, parse, tools, fixer, wrapping=fix.table)
        if isinstance(made, ParseFix):
            deletes.append(made)
        else:
            reason = f"`{use.function}` parses `{use.parameter}` by hand ({where}), and after the wrap the parse fails"
            broken.append((module, use, f"{reason}, but it cannot be deleted: {made}"))
    removed = [(d.module.path, d.parse.span) for d in deletes]
    reasons = _identity_reads(context, fix.table)
    reasons += [t.unsafe for d in deletes for t in d.requires if isinstance(t, TableFix) and t.unsafe]
    reasons += [reason for module, use, reason in broken if not any(_within(module, use, *at) for at in removed)]
    if not deletes and not reasons:
        return fix
    return replace(fix, deletes=tuple(deletes), unsafe=reasons[0] if reasons else "")


def with_chain_effects(context: Context, fix: ChainFix, chain: NameChain) -> ChainFix:
    """``fix``, unsafe when an arm of its ladder takes a piece of the arguments for a string where the arm's tool
    declares it something else (which the coercion ahead makes of the model's string)."""
    module = fix.site.module
    arms = [arm for other in module.chains if other.function == chain.function for arm in other.arms if arm.body]
    reason = _retyped_arm_use(context, module, {chain.function}, arms, "coercion")
    return replace(fix, unsafe=reason) if reason else fix


def with_closure_effects(context: Context, fix: ClosureFix) -> ClosureFix:
    """``fix``, unsafe when a closure it repairs takes a piece of its arguments for a string where the arm's tool
    declares it something else."""
    site = fix.site
    reason = _retyped_arm_use(context, site.module, set(site.arm.closures), [site.arm], "repair")
    return replace(fix, unsafe=reason) if reason else fix


def _retyped_arm_use(
    context: Context, module: ModuleFacts, functions: AbstractSet[str], arms: Sequence[ChainArm], repair: str
) -> str:
    """Why repairing the arguments changes what one of ``arms`` does: code of ``functions`` in an arm's body takes
    a piece of them for a string where the arm's tool declares something else ('' when none does)."""
    catalog = context.project.catalog
    for use in module.string_uses:
        if use.function not in functions:
            continue
        for arm in arms:
            if arm.body is None or not _inside(use.span, arm.body):
                continue
            for tool in arm.names:
                declared = catalog.declared_types(tool, use.parameter, module)
                if declared and "string" not in declared:
                    where = f"{module.path}:{use.span.line}"
                    return (
                        f"the `{tool}` arm takes `{use.parameter}` for a string ({use.operation}, {where}), and "
                        f"after the {repair} it gets the `{'|'.join(sorted(declared))}` its schema declares"
                    )
    return ""


def _identity_reads(context: Context, table: LinkedTable) -> List[str]:
    """Why the wrap changes code that reads what the table's values are (their code, defaults, source or
    identity), directly or through a parameter a value of the table is handed to: a wrapper is another object."""
    project = context.project
    catalog = project.catalog
    reasons = []
    for module in project.modules:
        for read in module.identity_reads:
            where = f"{module.path}:{read.span.line}"
            if read.table and _is(catalog.table_for(module, read.table, read.function), table):
                reasons.append(
                    f"`{read.function}` reads {read.read} of what it takes from `{table.display_name}` ({where}), "
                    "and a wrapper is another function"
                )
                continue
            handed = _handed_by(context, module, read.function, read.parameter, table) if read.parameter else None
            if handed:
                reasons.append(
                    f"`{read.function}` reads {read.read} of its parameter `{read.parameter}` ({where}), which "
                    f"{handed} hands a value of `{table.display_name}`, and a wrapper is another function"
                )
    return reasons


def _handed_by(context: Context, module: ModuleFacts, function: str, parameter: str, table: LinkedTable) -> str:
    """Where a caller of ``function`` hands its ``parameter`` a value looked up in ``table`` ('' if none does)."""
    project = context.project
    located = project.graph.function(f"{module.module}.{function}")
    if located is None:
        return ""
    definition = located[1]
    params = list(definition.params)
    if definition.class_name and params and params[0] in ("self", "cls"):
        params = params[1:]  # called bound
    for caller_module, call in project.graph.callers(f"{module.module}.{function}", definition):
        for slot, written, _, _, _ in call.looked_up:
            name = params[int(slot)] if slot.isdigit() and int(slot) < len(params) else slot
            found = project.catalog.table_for(caller_module, written, call.function) if written else None
            if name == parameter and _is(found, table):
                return f"`{call.function or caller_module.module}` ({caller_module.path}:{call.span.line})"
    return ""


def _is(found: Optional[LinkedTable], table: LinkedTable) -> bool:
    return found is not None and found.qualname == table.qualname


def _retyped_string_uses(context: Context, fix: TableFix) -> List[Tuple[ModuleFacts, StringUse, str]]:
    """Each use of a tool's parameter as a string where the tool's schema declares it something else (which the
    wrap turns the model's string into), with the declared types (``array``, ``integer|null``)."""
    project = context.project
    found = []
    seen = set()
    for entry in fix.table.entries:
        if entry.key is None:
            continue
        for executor in entry.executors:
            located = project.graph.function(executor)
            if located is None:
                continue
            module = located[0]
            for use in module.string_uses:
                if f"{module.module}.{use.function}" != executor or (module.path, use.span) in seen:
                    continue
                declared = project.catalog.declared_types(entry.key, use.parameter, module)
                if declared and "string" not in declared:
                    seen.add((module.path, use.span))
                    found.append((module, use, "|".join(sorted(declared))))
    return found


def _within(module: ModuleFacts, use: StringUse, path: str, span: Span) -> bool:
    """The use is part of the code a deletion at ``span`` removes (``steps.strip()`` in ``json.loads(...)``)."""
    return module.path == path and _inside(use.span, span)


def _inside(inner: Span, outer: Span) -> bool:
    starts_after = (inner.line, inner.column) >= (outer.line, outer.column)
    return starts_after and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)
