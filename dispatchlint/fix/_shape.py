"""How the executors of a table take the model's arguments, so that a wrapper can repair them in place.

A wrapper must hand the repaired mapping to the executor exactly where the executor expects it: at a position
(``_plan(agent, args, ctx)``, ``run(args)``) or as keyword arguments (``web_search(query, max_results=5)``,
``tool(**kwargs)``). Every dispatch site of a table calls its values the same way, so the executors agree; the
shape is read from their signatures (lambdas, functions, closures made by a factory), and only when none of them
can be found, from the dispatch calls themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from dispatchlint.analysis import _syntax as syn
from dispatchlint.analysis.facts import Span
from dispatchlint.analysis.index import _RUNNERS_FIRST, _RUNNERS_SECOND
from dispatchlint.analysis.link import RAW, RAW_WEAK, LinkedEntry, LinkedTable, Project
from dispatchlint.fix._source import Sources

#: Names the generated wrapper binds itself; an executor parameter of the same name is renamed in the wrapper.
RESERVED = frozenset({"name", "executor", "call", "run", "run_async", "rest", "kwargs", "functools", "inspect"})


@dataclass(frozen=True)
class Signature:
    """What a wrapper needs to know about one executor's parameters."""

    #: Positional parameter names, without the ``self``/``cls`` of a bound method.
    positional: Tuple[str, ...]
    #: No defaults, no ``*args``/``**kwargs``, no keyword-only parameters: a wrapper may mirror it exactly.
    plain: bool
    #: ``async def``.
    is_async: bool


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


def signature_of(node: Union[cst.FunctionDef, cst.Lambda], bound: bool) -> Signature:
    params = node.params
    positional = [param.name.value for param in list(params.posonly_params) + list(params.params)]
    if bound and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    has_defaults = any(param.default is not None for param in list(params.posonly_params) + list(params.params))
    plain = not (
        has_defaults or params.kwonly_params or params.star_kwarg is not None or isinstance(params.star_arg, cst.Param)
    )
    is_async = isinstance(node, cst.FunctionDef) and node.asynchronous is not None
    return Signature(tuple(positional), plain, is_async)


def table_shape(project: Project, sources: Sources, table: LinkedTable) -> Union[CallShape, str]:
    """The call shape of a table's executors, or why it cannot be told."""
    signatures: List[Tuple[Signature, Set[str]]] = []
    unknown = False
    for entry in table.entries:
        found = list(_entry_signatures(project, sources, table, entry))
        unknown = unknown or not found
        declared = _declared_properties(project, entry.key)
        signatures.extend((signature, declared) for signature in found)
    if not signatures:
        return _site_shape(project, sources, table)
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
        if name in syn.ARGS_NAMES and name not in declared:
            return index
    return None


def _declared_properties(project: Project, tool: Optional[str]) -> Set[str]:
    """Property names the tool's schema declares: a parameter so named is a tool parameter, not the mapping."""
    if tool is None:
        return set()
    return {name for _, schema in project.catalog.schemas.get(tool, []) for name, _ in schema.properties}


def _entry_signatures(
    project: Project, sources: Sources, table: LinkedTable, entry: LinkedEntry
) -> Iterable[Signature]:
    """The signature of the callable an entry stores: its lambda, or the functions the linker resolved."""
    value = entry_value(sources, entry)
    if isinstance(value, cst.Lambda):
        yield signature_of(value, bound=False)
        return
    for qualified in entry.executors or _bound_method(project, table, value):
        found = project.graph.function(qualified)
        if found is None:
            continue
        module, definition = found
        node = sources.get(module.path).node_at(definition.span, cst.Name)
        parent = sources.get(module.path).parent(node) if node is not None else None
        if isinstance(parent, cst.FunctionDef):
            yield signature_of(parent, bound=bool(definition.class_name))


def _bound_method(project: Project, table: LinkedTable, value: Optional[cst.BaseExpression]) -> Tuple[str, ...]:
    """``self._read_doc`` in a class's own table: the method it names."""
    dotted = syn.dotted_name(value) if value is not None else None
    owner = table.definition.owner if table.definition.scope in ("class", "instance") else ""
    if dotted is None or not owner or not dotted.startswith(("self.", "cls.")):
        return ()
    resolved = project.graph.resolve(table.module, dotted, "", owner)
    return (resolved,) if resolved is not None else ()


def entry_value(sources: Sources, entry: LinkedEntry) -> Optional[cst.BaseExpression]:
    """The expression stored by a literal entry (``"k": value``), an ``.update`` or an item assignment."""
    source = sources.get(entry.module.path)
    key = source.expression_at(entry.span)
    parent = source.parent(key) if key is not None else None
    if isinstance(parent, cst.DictElement) and parent.key is key:
        return parent.value
    if isinstance(parent, cst.Arg) and parent.keyword is key:
        return parent.value
    assign = source.node_at(entry.span, cst.Assign)
    return assign.value if assign is not None else None


def _site_shape(project: Project, sources: Sources, table: LinkedTable) -> Union[CallShape, str]:
    """The shape read from the dispatch calls, when no executor's signature is known."""
    shapes: Set[Tuple[Optional[int], Tuple[str, ...]]] = set()
    for site in project.dispatches.sites_of(table):
        if not site.tool_like or site.arm is not None:
            continue
        shape = _dispatch_shape(project, sources, site.module.path, site.span, site.function)
        if shape is not None:
            shapes.add(shape)
    if len(shapes) != 1:
        return "its executors cannot be found, and its dispatch calls do not show how they take the arguments"
    index, params = shapes.pop()
    return CallShape(index, params, False, None)


def _dispatch_shape(
    project: Project, sources: Sources, path: str, span: Span, function: str
) -> Optional[Tuple[Optional[int], Tuple[str, ...]]]:
    module = next((m for m in project.modules if m.path == path), None)
    dispatch = next((d for d in module.dispatches if d.span == span), None) if module is not None else None
    call = sources.get(path).node_at(span, cst.Call) if dispatch is not None else None
    if module is None or dispatch is None or call is None:
        return None
    # A runner (``pool.submit(T[k], agent, args)``) passes the arguments after the callable it is given.
    offset = 1 if dispatch.via in _RUNNERS_FIRST else 2 if dispatch.via in _RUNNERS_SECOND else 0
    args: Sequence[cst.Arg] = call.args[offset:]
    raw = [
        i for i, flow in enumerate(dispatch.args) if project.taint.evaluate(flow, module, function) in (RAW, RAW_WEAK)
    ]
    if len(raw) != 1 or raw[0] >= len(args) or args[raw[0]].keyword is not None or args[raw[0]].star == "*":
        return None
    if args[raw[0]].star == "**":
        return None, ()
    before = args[: raw[0] + 1]
    if any(arg.star or arg.keyword is not None for arg in before):
        return None
    names = tuple(
        arg.value.value if isinstance(arg.value, cst.Name) else f"arg{position}" for position, arg in enumerate(before)
    )
    return raw[0], _unreserved(names if len(set(names)) == len(names) else tuple(f"arg{i}" for i in range(len(names))))


def _unreserved(names: Sequence[str]) -> Tuple[str, ...]:
    """Parameter names for the wrapper that do not shadow the names the wrapper itself binds."""
    return tuple(f"{name}_" if name in RESERVED else name for name in names)
