"""DL101/DL102 fix for a table that is already the raw half of a wrap: its readers read the wrapped table.

After ``--fix``, ``_RAW_TOOLS = {...}`` holds the executors and ``TOOLS = {name: _coerced(name, executor) for
name, executor in _RAW_TOOLS.items()}`` (or ``TOOLS = wrap_table(_RAW_TOOLS, SCHEMAS)``) the wrappers. New code that
reads ``_RAW_TOOLS`` raw is not fixed by wrapping it again (``_RAW__RAW_TOOLS``, and ``TOOLS`` coercing twice): the
reader is pointed at ``TOOLS``, where it is written. A module that imports the raw table imports the wrapped one
under the same local name instead; a reader in the table's own module, or one reaching it as ``module._RAW_TOOLS``,
names the wrapped table at the reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from dispatchlint.indexing.facts import FunctionDef, ModuleFacts, ValueKind
from dispatchlint.linking import GATED, LinkedTable
from dispatchlint.fix._context import Context
from dispatchlint.fix._wrapping import Import, local_name_of


@dataclass(frozen=True)
class Reader:
    """A function that reads the raw table, and how it writes it (``_RAW_TOOLS``, ``builtin._RAW_TOOLS``)."""

    module: ModuleFacts
    function: FunctionDef
    written: str


@dataclass(frozen=True)
class RetargetFix:
    """Point every raw reader of ``raw`` at ``wrapped``, the table the project already wraps it into."""

    raw: LinkedTable
    wrapped: LinkedTable
    readers: Tuple[Reader, ...]

    @property
    def label(self) -> str:
        return f"`{self.wrapped.display_name}`"


def wrapped_rebuild(context: Context, table: LinkedTable) -> Optional[LinkedTable]:
    """The module-level table of its own module that wraps ``table`` (``TOOLS`` for ``_RAW_TOOLS``), if any."""
    if table.definition.scope != "module":
        return None
    graph = context.project.graph
    for other in context.project.catalog.tables.values():
        definition = other.definition
        if other is table or other.module is not table.module or definition.scope != "module" or not other.wrapped:
            continue
        source = definition.source
        rebuilt_by = definition.comprehension
        if not source and rebuilt_by is not None and rebuilt_by.kind is ValueKind.CALL and rebuilt_by.call_args:
            source = rebuilt_by.call_args[0]  # wrap_table(_RAW_TOOLS, SCHEMAS)
        if source and graph.resolve(table.module, source) == table.qualname:
            return other
    return None


def retarget_fix(context: Context, raw: LinkedTable, wrapped: LinkedTable) -> Union[RetargetFix, str]:
    """Point the raw readers of ``raw`` at ``wrapped``, or why they cannot be."""
    project = context.project
    if context.fills_of(raw):
        return f"values enter `{raw.display_name}` after `{wrapped.display_name}` wraps it: wrap them where they enter"
    readers: List[Reader] = []
    for site in project.dispatches.sites_of(raw):
        if not site.tool_like or site.verdict == GATED:
            continue
        dispatch = next((d for d in site.module.dispatches if d.span == site.span), None)
        function = next((f for f in site.module.functions if f.qualname == site.function), None)
        where = f"{site.module.path}:{site.span.line}"
        if dispatch is None or not dispatch.table or function is None:
            return f"the read of `{raw.display_name}` at {where} is not by its name in a function"
        if dispatch.table.split(".")[-1] != raw.definition.name and site.module is raw.module:
            return f"the read of `{raw.display_name}` at {where} is not by its name"
        taken = site.module is not raw.module and wrapped.definition.name in site.module.shapes.top_level_names
        if taken and local_name_of(site.module, Import(raw.module.module, wrapped.definition.name)) is None:
            return f"`{wrapped.definition.name}` already names something else in `{site.module.module}`"
        readers.append(Reader(site.module, function, dispatch.table))
    if not readers:
        return f"no raw read of `{raw.display_name}` is in a function"
    return RetargetFix(raw, wrapped, tuple(readers))
