"""Generated code, written in the style of the module it goes into.

Templates here are written with four-space indents and ``\\n``; :func:`statement` and :func:`expression` turn
them into nodes that print with the module's own indentation and newline (a CRLF module stays CRLF), so the
only bytes that change are the ones the fix means to add.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from dispatchlint.fix._shape import CallShape
from dispatchlint.fix._source import Statement

#: Longest generated line that stays on one line (longer ones are split the way black would).
MAX_LINE = 99
_TEMPLATE_INDENT = "    "
_PLACEHOLDER = "__dispatchlint_table__"


def statement(tree: cst.Module, source: str) -> Statement:
    """A statement from template text, in ``tree``'s indentation and newline."""
    lines = []
    for line in source.strip("\n").split("\n"):
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // len(_TEMPLATE_INDENT)
        lines.append(tree.default_indent * depth + stripped)
    text = tree.default_newline.join(lines) + tree.default_newline
    parsed = cst.parse_statement(text, config=tree.config_for_parsing)
    assert isinstance(parsed, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return parsed


def expression(tree: cst.Module, source: str) -> cst.BaseExpression:
    return cst.parse_expression(source, config=tree.config_for_parsing)


def blank_lines(count: int) -> List[cst.EmptyLine]:
    return [cst.EmptyLine() for _ in range(count)]


def fits(*parts: str) -> bool:
    return sum(len(part) for part in parts) <= MAX_LINE


# ---------------------------------------------------------------------------------------------- wrappers


def gate_wrapper(name: str, shape: CallShape, gate: str, lazy_import: Optional[str]) -> str:
    """``def _coerced(name, executor)``: the wrapper of ``docs/defect.md``, for the executors' call shape."""
    if shape.asynchronous is None:
        inner = _run(shape, gate, lazy_import, asynchronous=True, function="run_async")
        body = (
            "    if inspect.iscoroutinefunction(executor):\n\n"
            + _indent(inner, 2)
            + "\n\n        return run_async\n\n"
            + _indent(_run(shape, gate, lazy_import, asynchronous=False, function="run"), 1)
        )
    else:
        body = _indent(_run(shape, gate, lazy_import, asynchronous=shape.asynchronous, function="run"), 1)
    return f"def {name}(name, executor):\n{body}\n\n    return run\n"


def runtime_wrapper(name: str, schemas: str) -> str:
    """A single-executor wrapper over the bundled coercer, for values that enter a table one by one."""
    return f"def {name}(name, executor):\n    return coerced(name, {schemas})(executor)\n"


def _run(shape: CallShape, gate: str, lazy_import: Optional[str], asynchronous: bool, function: str) -> str:
    if shape.index is None:
        params, call = "*args, **kwargs", f"*args, **{gate}(name, kwargs)"
    else:
        names = list(shape.params)
        passed = [f"{gate}(name, {param})" if i == shape.index else param for i, param in enumerate(names)]
        if not shape.exact:
            names += ["*rest", "**kwargs"]
            passed += ["*rest", "**kwargs"]
        params, call = ", ".join(names), ", ".join(passed)
    prefix = "async def" if asynchronous else "def"
    awaited = "await " if asynchronous else ""
    lines = ["@functools.wraps(executor)", f"{prefix} {function}({params}):"]
    if lazy_import:
        lines.append(f"    {lazy_import}")
    lines.append(f"    return {awaited}executor({call})")
    return "\n".join(lines)


def _indent(text: str, depth: int) -> str:
    return "\n".join(_TEMPLATE_INDENT * depth + line if line else line for line in text.split("\n"))


# ---------------------------------------------------------------------------------------------- tables


def wrapped_comprehension(tree: cst.Module, wrapper: str, table: cst.BaseExpression, multiline: bool) -> cst.DictComp:
    """``{name: wrapper(name, executor) for name, executor in <table>.items()}``, ``table`` kept as written."""
    pair = f"name: {wrapper}(name, executor)"
    loop = f"for name, executor in {_PLACEHOLDER}.items()"
    source = f"{{\n    {pair}\n    {loop}\n}}" if multiline else f"{{{pair} {loop}}}"
    if multiline:
        source = source.replace("\n", tree.default_newline).replace("    ", tree.default_indent)
        table = reindented(tree, table)
    parsed = expression(tree, source)
    assert isinstance(parsed, cst.DictComp)
    return parsed.visit(_Substitute(table))  # type: ignore[return-value]


class _Substitute(cst.CSTTransformer):
    def __init__(self, replacement: cst.BaseExpression) -> None:
        super().__init__()
        self.replacement = replacement

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.replacement if original_node.value == _PLACEHOLDER else updated_node


def reindented(tree: cst.Module, node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` one indentation level deeper: its continuation lines and comment lines move right."""
    return node.visit(_Reindent(tree.default_indent))  # type: ignore[return-value]


class _Reindent(cst.CSTTransformer):
    def __init__(self, indent: str) -> None:
        super().__init__()
        self.indent = indent

    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        if not updated_node.indent:
            return updated_node
        return updated_node.with_changes(last_line=cst.SimpleWhitespace(self.indent + updated_node.last_line.value))

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.EmptyLine:
        if not updated_node.indent:
            return updated_node
        return updated_node.with_changes(whitespace=cst.SimpleWhitespace(self.indent + updated_node.whitespace.value))
