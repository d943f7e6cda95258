"""How the executors of a table take the model's arguments, so that a wrapper can repair them in place.

A wrapper must hand the repaired mapping to the executor exactly where the executor expects it: at a position
(``_plan(agent, args, ctx)``, ``run(args)``) or as keyword arguments (``web_search(query, max_results=5)``,
``tool(**kwargs)``). Every dispatch site of a table calls its values the same way, so the executors agree; the
shape is read from their signatures (lambdas, functions, closures made by a factory), and only when none of them
can be found, from the dispatch calls themselves. Signatures and calls are read from the shapes recorded at index
time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Set, Tuple, Union

from dispatchlint.indexing.annotations import ARGS_NAMES
from dispatchlint.indexing.facts import ModuleFacts, Signature, Span, StoredValue
from dispatchlint.linking import RAW, RAW_WEAK, LinkedEntry, LinkedTable
from dispatchlint.fix._context import Context

#: Names the generated wrapper binds itself; an executor parameter of the same name is renamed in the wrapper.
RESERVED = frozenset({"name", "executor", "call", "run", "run_async", "rest", "kwargs", "functools", "inspect"})


@dataclass(frozen=True)
class CallShape:
    """Where the arguments mapping goes: position ``index`` of ``params``, or keyword arguments (index None)."""

    index: Optional[int]
    #: The wrapper's positional parameters (up to the mapping; all of them when ``exact``).
    params: Tuple[str, ...]
    #: The wrapper mirrors the executors' parameters; otherwise it passes ``*rest, **kwargs`` through.
    exact: bool
    #: True: every executor is async; False: none is; None: mixed or unknown (decided at run time).
    asynchronous: Optional[bool]


def _bound(signature: Signature, bound: bool) -> Signature:
    """A method's signature as callers see it: without its ``self``/``cls``."""
    positional = signature.positional
    if bound and positional and positional[0] in ("self", "cls"):
        return Signature(positional[1:], signature.plain, signature.is_async)
    return signature


def table_shape(context: Context, table: LinkedTable) -> Union[CallShape, str]:
    """The call shape of a table's executors, or why it cannot be told."""
    signatures: List[Tuple[Signature, Set[str]]] = []
    unknown = False
    for entry in table.entries:
        found = list(_entry_signatures(context, table, entry))
        unknown = unknown or not found
        declared = _declared_properties(context, table.module, entry.key)
        signatures.extend((signature, declared) for signature in found)
    if not signatures:
        return _site_shape(context, table)
    indexes = {_mapping_index(signature, declared) for signature, declared in signatures}
    if len(indexes) != 1:
        return "its executors take the arguments in different ways (some by position, some as keywords)"
    index = indexes.pop()
    kinds = {signature.is_async for signature, _ in signatures}
    asynchronous = kinds.pop() if len(kinds) == 1 and not unknown else None
    first = signatures[0][0]
    exact = (
        index is not None
        and not unknown
        and all(signature.plain and signature.positional == first.positional for signature, _ in signatures)
    )
    if index is None:
        return CallShape(None, (), False, asynchronous)
    params = first.positional if exact else first.positional[: index + 1]
    return CallShape(index, _unreserved(params), exact, asynchronous)


def _mapping_index(signature: Signature, declared: Set[str]) -> Optional[int]:
    """The position of the parameter that receives the arguments mapping (None: keyword arguments)."""
    for index, name in enumerate(signature.positional):
        if name in ARGS_NAMES and name not in declared:
            return index
    return None


def _declared_properties(context: Context, near: ModuleFacts, tool: Optional[str]) -> Set[str]:
    """Property names the tool's schema declares (as the table's module sees them): a parameter so named is a
    tool parameter, not the mapping."""
    if tool is None:
        return set()
    return {name for _, schema in context.project.catalog.schemas_of(tool, near) for name, _ in schema.properties}


def _entry_signatures(context: Context, table: LinkedTable, entry: LinkedEntry) -> Iterable[Signature]:
    """The signature of the callable an entry stores: its lambda, or the functions the linker resolved."""
    value = context.shapes(entry.module).stored.get(entry.span)
    if value is not None and value.lambda_signature is not None:
        yield value.lambda_signature
        return
    for qualified in entry.executors or _bound_method(context, table, value):
        found = context.project.graph.function(qualified)
        if found is None:
            continue
        module, definition = found
        signature = context.shapes(module).signatures.get(definition.span)
        if signature is not None:
            yield _bound(signature, bound=bool(definition.class_name))


def _bound_method(context: Context, table: LinkedTable, value: Optional[StoredValue]) -> Tuple[str, ...]:
    """``self._read_doc`` in a class's own table: the method it names."""
    dotted = value.dotted if value is not None else ""
    owner = table.definition.owner if table.definition.scope in ("class", "instance") else ""
    if not dotted or not owner or not dotted.startswith(("self.", "cls.")):
        return ()
    resolved = context.project.graph.resolve(table.module, dotted, "", owner)
    return (resolved,) if resolved is not None else ()


def _site_shape(context: Context, table: LinkedTable) -> Union[CallShape, str]:
    """The shape read from the dispatch calls, when no executor's signature is known."""
    shapes: Set[Tuple[Optional[int], Tuple[str, ...]]] = set()
    for site in context.project.dispatches.sites_of(table):
        if not site.tool_like:
            continue
        shape = _dispatch_shape(context, site.module.path, site.span, site.function)
        if shape is not None:
            shapes.add(shape)
    if len(shapes) != 1:
        return "its executors cannot be found, and its dispatch calls do not show how they take the arguments"
    index, params = shapes.pop()
    return CallShape(index, params, False, None)


def _dispatch_shape(
    context: Context, path: str, span: Span, function: str
) -> Optional[Tuple[Optional[int], Tuple[str, ...]]]:
    module = context.module(path)
    dispatch = next((d for d in module.dispatches if d.span == span), None) if module is not None else None
    args = context.shapes(module).dispatch_args.get(span) if module is not None and dispatch is not None else None
    if module is None or dispatch is None or args is None:
        return None
    taint = context.project.taint
    raw = [i for i, flow in enumerate(dispatch.args) if taint.evaluate(flow, module, function) in (RAW, RAW_WEAK)]
    if len(raw) != 1 or raw[0] >= len(args) or args[raw[0]].keyword or args[raw[0]].star == "*":
        return None
    if args[raw[0]].star == "**":
        return None, ()
    before = args[: raw[0] + 1]
    if any(arg.star or arg.keyword for arg in before):
        return None
    names = tuple(arg.name or f"arg{position}" for position, arg in enumerate(before))
    return raw[0], _unreserved(names if len(set(names)) == len(names) else tuple(f"arg{i}" for i in range(len(names))))


def _unreserved(names: Sequence[str]) -> Tuple[str, ...]:
    """Parameter names for the wrapper that do not shadow the names the wrapper itself binds."""
    return tuple(f"{name}_" if name in RESERVED else name for name in names)
