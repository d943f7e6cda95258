"""DL101/DL102 fix for tables: wrap every value where it enters the table, so every reader is guarded.

- A module-level literal or comprehension ``NAME = {...}`` becomes ``_RAW_NAME = {...}`` followed by the wrapped
  table ``NAME = {name: _coerced(name, executor) for name, executor in _RAW_NAME.items()}`` (``docs/defect.md``),
  or ``NAME = wrap_table(_RAW_NAME, SCHEMAS, args_at=N)`` in a project with no gate. Readers in every module keep
  reading ``NAME`` and get the wrapped executors; no dispatch path changes.
- A class or instance attribute (``self.tools = {...}``) or a function-local table is wrapped in place.
- Values that enter later (``TOOLS[name] = fn`` in a registering decorator or a loop, ``TOOLS.update({...})``)
  are wrapped at that assignment: ``TOOLS[name] = _coerced(name, fn)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Tuple, Union

import libcst as cst

from dispatchlint.analysis import _syntax as syn
from dispatchlint.analysis.facts import ModuleFacts, TableFill
from dispatchlint.analysis.link import GATED, LinkedTable, Project
from dispatchlint.fix import _codegen
from dispatchlint.fix._imports import clashes
from dispatchlint.fix._plan import FilePlan, ProjectPlan
from dispatchlint.fix._shape import table_shape
from dispatchlint.fix._source import FixError, Sources, Statement
from dispatchlint.fix._wrapping import (
    COERCED,
    WRAP_TABLE,
    GateWrapping,
    RuntimeWrapping,
    Wrapping,
    gate_wrapping,
    runtime_wrapping,
)
from dispatchlint.runtime import contract

_TABLE_VALUES = (cst.Dict, cst.DictComp, cst.Call)
_VALUE = "__dispatchlint_value__"


@dataclass(frozen=True)
class _Fill:
    """A place where values enter the table after its definition: the node whose value(s) get wrapped."""

    module: ModuleFacts
    #: The item assignment (``T[k] = v``), or the ``.update`` element / keyword holding one value.
    node: cst.CSTNode


@dataclass(frozen=True)
class TableFix:
    """Wrap ``table`` at its definition (when it holds values there) and at each of its fills."""

    table: LinkedTable
    #: How values are wrapped, per module that gets a wrapper (imports and cycles differ per module).
    wrappings: Tuple[Tuple[str, Wrapping], ...]
    at_definition: bool
    fills: Tuple[_Fill, ...]

    def wrapping(self, module: ModuleFacts) -> Wrapping:
        return dict(self.wrappings)[module.module]

    @property
    def label(self) -> str:
        return self.wrappings[0][1].label

    def apply(self, plan: ProjectPlan) -> None:
        table = self.table
        if self.at_definition:
            file = plan.file(table.module)
            wrapping = self.wrapping(table.module)
            if table.definition.scope == "module":
                _wrap_module_table(file, table, wrapping)
            else:
                _wrap_in_place(file, table, wrapping)
            file.note(f"wrap `{table.display_name}` with {wrapping.label}")
        for fill in self.fills:
            file = plan.file(fill.module)
            _wrap_fill(file, fill.node, self.wrapping(fill.module))
            file.note(f"wrap the values entering `{table.display_name}` with {self.wrapping(fill.module).label}")


def table_fix(project: Project, sources: Sources, table: LinkedTable) -> Union[TableFix, str]:
    """The fix for a table, or why there is none."""
    if project.catalog.holds_tool_objects(table):
        return "the table holds tool objects, whose methods run the tools; repair the arguments before the call"
    value = _definition_value(sources, table)
    if isinstance(value, str):
        return value
    fills = list(_fills(project, sources, table))
    at_definition = _holds_values(value)
    if not at_definition and not fills:
        return "no values enter the table where the fix can see them"
    shape = table_shape(project, sources, table)
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
        if project.has_gate:
            found: Union[Wrapping, str] = gate_wrapping(project, shape, module, hints)
        else:
            found = runtime_wrapping(project, sources, module, sorted(table.keys), table.definition.span.line, shape)
        if isinstance(found, str):
            return found
        clash = _clash(sources, module, found)
        if clash:
            return clash
        wrappings[module.module] = found
    return TableFix(table, tuple(wrappings.items()), at_definition, tuple(fills))


def _clash(sources: Sources, module: ModuleFacts, wrapping: Wrapping) -> str:
    """A name the generated code would import that the module already uses for something else."""
    if isinstance(wrapping, GateWrapping):
        wanted = [] if wrapping.lazy else [wrapping.gate]
    else:
        wanted = [wrapping.schemas, WRAP_TABLE, COERCED]
    tree = sources.get(module.path).tree
    return next((found for found in (clashes(module, tree, item) for item in wanted) if found), "")


def _definition_value(sources: Sources, table: LinkedTable) -> Union[cst.BaseExpression, str]:
    source = sources.get(table.module.path)
    definition = table.definition
    small = source.node_at(definition.span, cst.Assign) or source.node_at(definition.span, cst.AnnAssign)
    line = source.parent(small) if small is not None else None
    if small is None or not isinstance(line, cst.SimpleStatementLine):
        return f"the definition of `{table.display_name}` is not a plain assignment"
    if len(line.body) != 1 or (isinstance(small, cst.Assign) and len(small.targets) != 1):
        return f"the definition of `{table.display_name}` shares its line with other assignments"
    if definition.scope == "module" and not isinstance(source.parent(line), cst.Module):
        return f"`{table.display_name}` is defined inside a block"
    if small.value is None or not isinstance(small.value, _TABLE_VALUES):
        return f"the definition of `{table.display_name}` is not a literal or a comprehension"
    return small.value


def _holds_values(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Dict):
        return bool(value.elements)
    if isinstance(value, cst.Call):
        return bool(value.args)
    return True


def _fills(project: Project, sources: Sources, table: LinkedTable) -> Iterable[_Fill]:
    for module in project.modules:
        for fill in module.fills:
            if project.catalog.table_for(module, fill.table, fill.function) is table:
                yield _Fill(module, _fill_node(sources, module, fill))


def _fill_node(sources: Sources, module: ModuleFacts, fill: TableFill) -> cst.CSTNode:
    source = sources.get(module.path)
    assign = source.node_at(fill.span, cst.Assign)
    if assign is not None:
        return assign
    key = source.expression_at(fill.span)
    parent = source.parent(key) if key is not None else None
    if isinstance(parent, (cst.DictElement, cst.Arg)):
        return parent
    raise FixError(f"{module.path}:{fill.span.line}: cannot find the value stored in `{fill.table}`")


# ---------------------------------------------------------------------------------------------- edits


def _wrap_module_table(file: FilePlan, table: LinkedTable, wrapping: Wrapping) -> None:
    source = file.source
    small = source.node_at(table.definition.span, cst.Assign) or source.node_at(table.definition.span, cst.AnnAssign)
    line = source.parent(small)
    assert isinstance(line, cst.SimpleStatementLine)
    name = table.definition.name
    raw = file.fresh_name(f"_RAW_{name}")
    assert small is not None and small.value is not None
    # The target and annotation as written, ahead of the new value: where ruff would split the line.
    header = file.tree.code_for_node(small.with_changes(value=cst.Name(_VALUE))).split(_VALUE)[0].lstrip()
    if isinstance(wrapping, GateWrapping):
        wrapper = file.wrapper(wrapping, line)
        layout = _codegen.comprehension_split(header, wrapper, raw, file.layout)
        value: cst.BaseExpression = _codegen.wrapped_comprehension(file.tree, wrapper, cst.Name(raw), layout)
    else:
        value = _runtime_table(file, wrapping, raw, header)

    def split(updated: Statement) -> Tuple[List[Statement], List[Statement]]:
        assert isinstance(updated, cst.SimpleStatementLine)
        assignment = updated.body[0]
        assert isinstance(assignment, (cst.Assign, cst.AnnAssign))
        renamed = _retarget(assignment, cst.Name(raw))
        wrapped = assignment.with_changes(value=value)
        return (
            [updated.with_changes(body=[renamed])],
            [cst.SimpleStatementLine([wrapped])],
        )

    file.split(line, split)


def _retarget(assignment: Union[cst.Assign, cst.AnnAssign], target: cst.Name) -> Union[cst.Assign, cst.AnnAssign]:
    if isinstance(assignment, cst.Assign):
        return assignment.with_changes(targets=[assignment.targets[0].with_changes(target=target)])
    return assignment.with_changes(target=target)


def _wrap_in_place(file: FilePlan, table: LinkedTable, wrapping: Wrapping) -> None:
    source = file.source
    small = source.node_at(table.definition.span, cst.Assign) or source.node_at(table.definition.span, cst.AnnAssign)
    assert small is not None and small.value is not None
    if isinstance(wrapping, GateWrapping):
        wrapper = file.wrapper(wrapping, small)
        file.replace_expression(
            small.value, lambda updated: _codegen.wrapped_comprehension(file.tree, wrapper, updated, True)
        )
    else:
        file.replace_expression(small.value, lambda updated: _runtime_call(file, wrapping, updated))


def _runtime_table(file: FilePlan, wrapping: RuntimeWrapping, table: str, header: str) -> cst.BaseExpression:
    """``wrap_table(TABLE, SCHEMAS, args_at=N)``, laid out as ruff would after ``header`` (``NAME = ``)."""
    arguments = [table, file.imported(wrapping.schemas)]
    if wrapping.args_at is not None:
        arguments.append(f"{contract.ARGS_AT}={wrapping.args_at}")
    source = file.layout.bracketed("", f"{header}{file.imported(WRAP_TABLE)}(", arguments, ")")
    tree = file.tree
    call = source[len(header) :].replace("\n", tree.default_newline).replace("    ", tree.default_indent)
    return _codegen.expression(tree, call)


def _runtime_call(file: FilePlan, wrapping: RuntimeWrapping, table: cst.BaseExpression) -> cst.Call:
    """``wrap_table(<table as written>, SCHEMAS, args_at=N)`` in place of a table's value."""
    arguments = [cst.Arg(table, comma=_comma()), cst.Arg(cst.Name(file.imported(wrapping.schemas)))]
    if wrapping.args_at is not None:
        arguments[-1] = arguments[-1].with_changes(comma=_comma())
        arguments.append(
            cst.Arg(
                cst.Integer(str(wrapping.args_at)),
                keyword=cst.Name(contract.ARGS_AT),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
        )
    return cst.Call(cst.Name(file.imported(WRAP_TABLE)), arguments)


def _wrap_fill(file: FilePlan, node: cst.CSTNode, wrapping: Wrapping) -> None:
    wrapper = file.wrapper(wrapping, node)
    if isinstance(node, cst.Assign):
        target = node.targets[0].target
        key = syn.subscript_index(target) if isinstance(target, cst.Subscript) else None
        if key is None:
            where = f"{file.source.relative}:{file.source.line_of(node)}"
            raise FixError(f"{where}: cannot read the key of this assignment")
        file.replace_expression(node.value, lambda updated: _wrapped_value(wrapper, key, updated))
    elif isinstance(node, cst.DictElement):
        file.replace_expression(node.value, lambda updated: _wrapped_value(wrapper, node.key, updated))
    elif isinstance(node, cst.Arg) and node.keyword is not None:
        literal = cst.SimpleString(f'"{node.keyword.value}"')  # an identifier: nothing to escape
        file.replace_expression(node.value, lambda updated: _wrapped_value(wrapper, literal, updated))


def _wrapped_value(wrapper: str, key: cst.BaseExpression, value: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Name(wrapper), [cst.Arg(key.deep_clone(), comma=_comma()), cst.Arg(value)])


def _comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
