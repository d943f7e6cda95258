"""The libcst edits of each fix kind, registered on a file's plan against nodes of the original tree.

A fix was decided from the facts; here the files it rewrites are parsed (``_source``) and the nodes it edits are
found by the positions the facts recorded. ``_apply`` applies every file's edits in one pass.
"""

from __future__ import annotations

import functools
from typing import List, Tuple, Type, TypeVar, Union

import libcst as cst

from dispatchlint.indexing import syntax as syn
from dispatchlint.linking import LinkedTable
from dispatchlint.fix import _codegen
from dispatchlint.fix._chains import ChainFix, ClosureFix
from dispatchlint.fix._tables import ParseFix
from dispatchlint.fix._apply import FilePlan, ProjectPlan
from dispatchlint.fix._reorder import ReorderFix
from dispatchlint.fix._retarget import Reader, RetargetFix
from dispatchlint.fix._source import FixError, SourceFile, Statement
from dispatchlint.fix._tables import Fill, TableFix
from dispatchlint.fix._wrapping import WRAP_TABLE, GateWrapping, Import, RuntimeWrapping, Wrapping
from dispatchlint.runtime import contract

Fix = Union[TableFix, ChainFix, ClosureFix, ParseFix, ReorderFix, RetargetFix]
_VALUE = "__dispatchlint_value__"
_Node = TypeVar("_Node", bound=cst.CSTNode)


def apply_fix(plan: ProjectPlan, fix: Fix) -> None:
    """Register ``fix``'s edits on the plans of the files it rewrites."""
    if isinstance(fix, TableFix):
        _apply_table(plan, fix)
    elif isinstance(fix, ChainFix):
        _apply_chain(plan, fix)
    elif isinstance(fix, ClosureFix):
        _apply_closures(plan, fix)
    elif isinstance(fix, ParseFix):
        _apply_parse(plan, fix)
    elif isinstance(fix, RetargetFix):
        _apply_retarget(plan, fix)
    else:
        _apply_reorder(plan, fix)


# ---------------------------------------------------------------------------------------------- tables


def _apply_table(plan: ProjectPlan, fix: TableFix) -> None:
    table = fix.table
    if fix.at_definition:
        file = plan.file(table.module)
        wrapping = fix.wrapping(table.module)
        if table.definition.scope == "module":
            _wrap_module_table(file, table, wrapping)
        else:
            _wrap_in_place(file, table, wrapping)
        file.note(f"wrap `{table.display_name}` with {wrapping.label}")
    for fill in fix.fills:
        file = plan.file(fill.module)
        _wrap_fill(file, _fill_node(file.source, fill), fix.wrapping(fill.module))
        file.note(f"wrap the values entering `{table.display_name}` with {fix.wrapping(fill.module).label}")


def _fill_node(source: SourceFile, fill: Fill) -> cst.CSTNode:
    assign = source.node_at(fill.fill.span, cst.Assign)
    if assign is not None:
        return assign
    key = source.expression_at(fill.fill.span)
    parent = source.parent(key) if key is not None else None
    if isinstance(parent, (cst.DictElement, cst.Arg)):
        return parent
    raise FixError(f"{fill.module.path}:{fill.fill.span.line}: cannot find the value stored in `{fill.fill.table}`")


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


# ---------------------------------------------------------------------------------------------- readers of a raw table


def _apply_retarget(plan: ProjectPlan, fix: RetargetFix) -> None:
    raw, wrapped = fix.raw.definition.name, fix.wrapped.definition.name
    imports_renamed = set()
    for reader in fix.readers:
        file = plan.file(reader.module)
        if "." in reader.written:  # builtin._RAW_TOOLS: the module's attribute, in the reader
            for attribute in _nodes_in(file, reader, cst.Attribute):
                if attribute.attr.value == raw and syn.dotted_name(attribute) == reader.written:
                    file.replace(attribute.attr, lambda updated: cst.Name(wrapped))
        elif reader.module is fix.raw.module:  # the table's own module: the reads in the reader
            for name in _nodes_in(file, reader, cst.Name):
                if name.value == raw and _is_reference(file.source, name):
                    file.replace(name, lambda updated: cst.Name(wrapped))
        elif reader.module.path not in imports_renamed:  # the module imports the wrapped table instead
            imports_renamed.add(reader.module.path)
            _import_instead(file, fix, reader.written)
        where = f"in `{reader.function.name}`"
        file.note(f"read `{wrapped}` (which wraps `{raw}`) {where}")


def _nodes_in(file: FilePlan, reader: Reader, kind: Type[_Node]) -> List[_Node]:
    name = file.source.node_at(reader.function.span, cst.Name)
    function = file.source.parent(name)
    if not isinstance(function, cst.FunctionDef):
        raise FixError(f"{file.source.relative}:{reader.function.span.line}: cannot find `{reader.function.name}`")
    return [node for node in syn.walk(function) if isinstance(node, kind)]


def _import_instead(file: FilePlan, fix: RetargetFix, local: str) -> None:
    """``from .tools import _RAW_TOOLS`` becomes ``from .tools import TOOLS``, and the module's reads of
    ``_RAW_TOOLS`` read ``TOOLS`` (with ``as NAME``, the reads stay: ``NAME`` names the wrapped table)."""
    raw, wrapped = fix.raw.definition.name, fix.wrapped.definition.name
    found = False
    for node in syn.walk(file.tree):
        if not isinstance(node, cst.ImportAlias) or not isinstance(node.name, cst.Name) or node.name.value != raw:
            continue
        bound = node.asname.name.value if node.asname is not None and isinstance(node.asname.name, cst.Name) else raw
        if bound == local:
            found = True
            file.replace(node.name, lambda updated: cst.Name(wrapped))
    if not found:
        raise FixError(f"{file.source.relative}: cannot find the import of `{raw}`")
    if local == raw:
        for node in syn.walk(file.tree):
            if isinstance(node, cst.Name) and node.value == raw and _is_reference(file.source, node):
                file.replace(node, lambda updated: cst.Name(wrapped))


def _is_reference(source: SourceFile, node: cst.Name) -> bool:
    """A read or write of the name itself: not an attribute's name, a keyword, or an imported name."""
    parent = source.parent(node)
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return False
    return not isinstance(parent, (cst.ImportAlias, cst.AsName, cst.FunctionDef, cst.ClassDef, cst.Param))


# ---------------------------------------------------------------------------------------------- chains


def _apply_chain(plan: ProjectPlan, fix: ChainFix) -> None:
    file = plan.file(fix.site.module)
    statement = file.source.node_at(fix.statement, cst.If)
    if statement is None:
        raise FixError(f"{file.source.relative}:{fix.statement.line}: cannot find the chain's `if` statement")
    gate, lines = _gate_reference(file, fix.gate, fix.lazy)
    lines.append(f"{fix.args} = {gate}({fix.name}, {fix.args})")

    def insert(updated: cst.CSTNode) -> "cst.FlattenSentinel[cst.BaseStatement]":
        assert isinstance(updated, cst.If)
        added: List[cst.BaseStatement] = [_codegen.statement(file.tree, line) for line in lines]
        added[0] = added[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([*added, updated.with_changes(leading_lines=[])])

    file.replace(statement, insert)
    where = f"in `{fix.site.function}`" if fix.site.function else "at module level"
    file.note(f"coerce `{fix.args}` with {fix.label} ahead of the `{fix.site.key}` chain {where}")


def _apply_closures(plan: ProjectPlan, fix: ClosureFix) -> None:
    file = plan.file(fix.site.module)
    for closure in fix.closures:
        definition = file.source.parent(file.source.node_at(closure.name, cst.Name))
        if not isinstance(definition, cst.FunctionDef) or not isinstance(definition.body, cst.IndentedBlock):
            raise FixError(f"{file.source.relative}:{closure.name.line}: cannot find the closure the arm binds")
        gate, lines = _gate_reference(file, fix.gate, fix.lazy)
        lines.append(f"{closure.parameter} = {gate}({fix.name}, {closure.parameter})")
        file.replace(definition, functools.partial(_prepended, file, lines=lines))
    names = ", ".join(sorted({f"`{closure.parameter}`" for closure in fix.closures}))
    arm = ", ".join(f"`{name}`" for name in fix.site.arm.names)
    file.note(f"coerce {names} with {fix.label} in what the {arm} arm of `{fix.site.function}` binds")


def _gate_reference(file: FilePlan, gate: Import, lazy: bool) -> Tuple[str, List[str]]:
    """The name to call the gate by where the coercion goes, and the statements to put before it: an import right
    there when the gate's module imports this one (``lazy``), else none (the gate is imported at the top)."""
    if lazy:
        return gate.name, [file.import_statement(gate)]
    return file.imported(gate), []


def _prepended(file: FilePlan, updated: cst.CSTNode, lines: List[str]) -> cst.CSTNode:
    """The function with ``lines`` as the first statements of its body, after its docstring."""
    assert isinstance(updated, cst.FunctionDef) and isinstance(updated.body, cst.IndentedBlock)
    body = list(updated.body.body)
    at = 1 if body and _is_docstring(body[0]) else 0
    added = [_codegen.statement(file.tree, line) for line in lines]
    return updated.with_changes(body=updated.body.with_changes(body=[*body[:at], *added, *body[at:]]))


def _is_docstring(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))


# ---------------------------------------------------------------------------------------------- parses


def _apply_parse(plan: ProjectPlan, fix: ParseFix) -> None:
    file = plan.file(fix.module)
    node = file.source.parsing_node(fix.parse.span)
    if node is None:
        raise FixError(f"{file.source.relative}:{fix.parse.span.line}: cannot find the parsing to delete")
    if isinstance(node, cst.Call):
        argument = syn.whitespace_stripped(node.args[0].value)  # the gate parses what JSON would strip
        file.replace(node, lambda updated: argument.deep_clone())
        verb = "unwrap"
    else:
        file.replace(node, lambda updated: cst.RemovalSentinel.REMOVE)
        verb = "delete"
    parse = fix.parse
    parser = "ast.literal_eval" if parse.parser.endswith("literal_eval") else "json.loads"
    file.drop_if_unused(parse.parser.split(".")[0])
    file.note(f"{verb} the hand-rolled `{parser}` of `{parse.parameter}` in `{parse.function}`")


# ---------------------------------------------------------------------------------------------- gates


def _apply_reorder(plan: ProjectPlan, fix: ReorderFix) -> None:
    file = plan.file(fix.module)
    name = file.source.node_at(fix.function.span, cst.Name)
    node = file.source.parent(name)
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        raise FixError(f"{file.source.relative}:{fix.function.span.line}: cannot find the gate `{fix.function.name}`")
    body = list(node.body.body)
    restore = body[fix.restore]
    assert isinstance(restore, cst.SimpleStatementLine)
    small = restore.body[0]
    assert isinstance(small, (cst.Return, cst.Assign)) and isinstance(small.value, cst.Call)
    call = small.value
    restoring_call = call.with_changes(
        args=[
            arg.with_changes(value=cst.Name(fix.args)) if _is_name(arg.value, fix.repaired) else arg
            for arg in call.args
        ]
    )
    restoring = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(fix.args))], restoring_call)])
    file.replace(body[fix.before], lambda updated: cst.FlattenSentinel([restoring, updated]))

    def without_restoring(updated: cst.CSTNode) -> Union[cst.CSTNode, cst.RemovalSentinel]:
        assert isinstance(updated, cst.SimpleStatementLine)
        small = updated.body[0]
        if isinstance(small, cst.Return):
            return updated.with_changes(body=[small.with_changes(value=cst.Name(fix.repaired))])
        assert isinstance(small, cst.Assign)
        target = small.targets[0].target
        if isinstance(target, cst.Name) and target.value == fix.repaired:
            return cst.RemovalSentinel.REMOVE
        return updated.with_changes(body=[small.with_changes(value=cst.Name(fix.repaired))])

    file.replace(restore, without_restoring)
    file.note(f"restore names before repairing them in `{fix.function.name}`")


def _is_name(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name
