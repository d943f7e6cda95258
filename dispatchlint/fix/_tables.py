"""DL101/DL102 fix for tables: wrap every value where it enters the table, so every reader is guarded.

- A module-level literal or comprehension ``NAME = {...}`` becomes ``_RAW_NAME = {...}`` followed by the wrapped
  table ``NAME = {name: _coerced(name, executor) for name, executor in _RAW_NAME.items()}`` (``docs/defect.md``),
  or ``NAME = wrap_table(_RAW_NAME, SCHEMAS)`` in a project with no gate. Readers in every module keep reading
  ``NAME`` and get the wrapped executors; no dispatch path changes.
- A class or instance attribute (``self.tools = {...}``) or a function-local table is wrapped in place.
- Values that enter later (``TOOLS[name] = fn`` in a registering decorator or a loop, ``TOOLS.update({...})``)
  are wrapped at that assignment: ``TOOLS[name] = _coerced(name, fn)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Tuple, Union

from dispatchlint.indexing.facts import Definition, FillNode, JsonParse, ModuleFacts, ParseEdit, TableFill
from dispatchlint.linking import GATED, LinkedTable
from dispatchlint.fix._context import Context
from dispatchlint.fix._retarget import RetargetFix
from dispatchlint.fix._shape import table_shape
from dispatchlint.fix._wrapping import (
    COERCED,
    WRAP_TABLE,
    GateWrapping,
    Wrapping,
    clashes,
    gate_wrapping,
    runtime_wrapping,
)


@dataclass(frozen=True)
class Fill:
    """A place where values enter the table after its definition."""

    module: ModuleFacts
    fill: TableFill
    #: What stores the value(s) that get wrapped: the item assignment, or the ``.update`` element or keyword.
    node: FillNode


@dataclass(frozen=True)
class TableFix:
    """Wrap ``table`` at its definition (when it holds values there) and at each of its fills."""

    table: LinkedTable
    #: How values are wrapped, per module that gets a wrapper (imports and cycles differ per module).
    wrappings: Tuple[Tuple[str, Wrapping], ...]
    at_definition: bool
    fills: Tuple[Fill, ...]
    #: Hand-rolled parses the wrap makes wrong, deleted with it (``_effects``).
    deletes: Tuple["ParseFix", ...] = ()
    #: Why the wrap changes what some tool does beyond repairing its arguments ('' when it does not).
    unsafe: str = ""

    def wrapping(self, module: ModuleFacts) -> Wrapping:
        return dict(self.wrappings)[module.module]

    @property
    def label(self) -> str:
        return self.wrappings[0][1].label


_DEFINITION_REASONS = {
    Definition.NOT_ASSIGNMENT: "the definition of `{}` is not a plain assignment",
    Definition.SHARED_LINE: "the definition of `{}` shares its line with other assignments",
    Definition.IN_BLOCK: "`{}` is defined inside a block",
    Definition.NOT_LITERAL: "the definition of `{}` is not a literal or a comprehension",
}


@dataclass(frozen=True)
class ParseFix:
    """A hand-rolled parse deleted because the gate now parses on every path (decided in ``_parses``); here
    beside :class:`TableFix`, which deletes such parses with its wrap."""

    module: ModuleFacts
    parse: JsonParse
    #: Delete the parsing statement, or replace the parsing call by its argument.
    edit: ParseEdit
    #: Wraps this deletion depends on (a table read raw today).
    requires: Tuple[Union[TableFix, RetargetFix], ...]


def table_fix(context: Context, table: LinkedTable) -> Union[TableFix, str]:
    """The fix for a table, or why there is none."""
    project = context.project
    if table.holds_objects:
        return "the table holds tool objects, whose methods run the tools; repair the arguments before the call"
    if project.catalog.holds_tool_objects(table):
        return (
            f"the values of `{table.display_name}` are no functions the fix can see (objects, or callables its "
            f"callers hand in); repair the arguments before the call"
        )
    definition = context.shapes(table.module).tables.get(table.definition.span)
    if definition is None or definition.definition is not Definition.PLAIN:
        kind = definition.definition if definition is not None else Definition.NOT_ASSIGNMENT
        return _DEFINITION_REASONS[kind].format(table.display_name)
    fills = list(_fills(context, table))
    missing = next((fill for fill in fills if fill.node is FillNode.NONE), None)
    if missing is not None:
        return f"{missing.module.path}:{missing.fill.span.line}: cannot find the value stored in `{missing.fill.table}`"
    at_definition = definition.holds_values
    if not at_definition and not fills:
        return "no values enter the table where the fix can see them"
    shape = table_shape(context, table)
    if isinstance(shape, str):
        return shape
    modules = [table.module] * at_definition + [fill.module for fill in fills]
    hints = [
        f"{site.module.module}.{site.function}" for site in project.dispatches.sites_of(table) if site.verdict == GATED
    ]
    wrappings: Dict[str, Wrapping] = {}
    for module in modules:
        if module.module in wrappings:
            continue
        if project.gate_reaches(table.module):
            found: Union[Wrapping, str] = gate_wrapping(context, shape, module, hints)
        else:
            found = runtime_wrapping(context, module, sorted(table.keys), table.definition.span.line, shape)
        if isinstance(found, str):
            return found
        clash = _clash(context, module, found)
        if clash:
            return clash
        wrappings[module.module] = found
    return TableFix(table, tuple(wrappings.items()), at_definition, tuple(fills))


def _clash(context: Context, module: ModuleFacts, wrapping: Wrapping) -> str:
    """A name the generated code would import that the module already uses for something else."""
    if isinstance(wrapping, GateWrapping):
        wanted = [] if wrapping.lazy else [wrapping.gate]
    else:
        wanted = [wrapping.schemas, WRAP_TABLE, COERCED]
    return next((found for found in (clashes(module, item) for item in wanted) if found), "")


def _fills(context: Context, table: LinkedTable) -> Iterable[Fill]:
    for module, fill in context.fills_of(table):
        yield Fill(module, fill, context.shapes(module).fills.get(fill.span, FillNode.NONE))
