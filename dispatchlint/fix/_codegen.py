"""Generated code, written in the style of the module it goes into, and the way ``ruff format`` writes it.

Templates here are written with four-space indents and ``\\n``; :func:`statement` and :func:`expression` turn
them into nodes that print with the module's own indentation and newline (a CRLF module stays CRLF), so the
only bytes that change are the ones the fix means to add. Long lines are split as ruff (and black) split them,
at the project's own line length, so that formatting a fixed project leaves the generated code as it is; and the
wrappers are annotated, so that a project ``mypy --strict`` accepted is still accepted after the fix.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import libcst as cst

from dispatchlint.fix._shape import CallShape
from dispatchlint.fix._source import Statement
from dispatchlint.runtime import contract

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the backport, on older Pythons
    import tomli as tomllib

#: ruff's and black's line length when a project sets none.
DEFAULT_LINE_LENGTH = 88
_TEMPLATE_INDENT = "    "
_PLACEHOLDER = "__dispatchlint_table__"
#: The wrapped executor, as a callable the type checker lets the wrapper call.
CALL = "call"


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


# ---------------------------------------------------------------------------------------------- layout


def line_length(path: Path, read: Optional[Dict[Path, Optional[Dict[str, Any]]]] = None) -> int:
    """The line length the project's formatter applies to ``path``.

    As ruff finds its settings: the nearest ``.ruff.toml``, ``ruff.toml`` or ``pyproject.toml`` with a
    ``[tool.ruff]`` table, walking up from the file; else black's ``[tool.black]`` in the nearest
    ``pyproject.toml``; else 88. ``read`` keeps the files read, for the next call (they can be large).
    """
    cache: Dict[Path, Optional[Dict[str, Any]]] = {} if read is None else read

    def toml(file: Path) -> Optional[Dict[str, Any]]:
        if file not in cache:
            cache[file] = _toml(file)
        return cache[file]

    black: Optional[int] = None
    for folder in path.resolve().parents:
        for name in (".ruff.toml", "ruff.toml"):
            ruff = toml(folder / name)
            if ruff is not None:
                return _length(ruff.get("line-length"))
        pyproject = toml(folder / "pyproject.toml")
        if pyproject is None:
            continue
        tool = pyproject.get("tool")
        tables: Dict[str, Any] = tool if isinstance(tool, dict) else {}
        ruff, black_table = tables.get("ruff"), tables.get("black")
        if isinstance(ruff, dict):
            return _length(ruff.get("line-length"))
        if black is None and isinstance(black_table, dict):
            black = _length(black_table.get("line-length"))
    return black or DEFAULT_LINE_LENGTH


def _toml(path: Path) -> Optional[Dict[str, Any]]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _length(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_LINE_LENGTH


@dataclass(frozen=True)
class Group:
    """A bracketed group inside another one: ``head`` + items + ``tail`` (``gate(name, args)``)."""

    head: str
    items: Sequence[Union[str, "Group"]]
    tail: str

    def flat(self) -> str:
        return self.head + ", ".join(_flat(item) for item in self.items) + self.tail


def _flat(item: Union[str, Group]) -> str:
    return item if isinstance(item, str) else item.flat()


@dataclass(frozen=True)
class Layout:
    """Where a bracketed group is split, as ruff splits it: not at all, its contents on one line of their own,
    or one element per line (with a trailing comma, except in a comprehension), each element split in turn."""

    width: int

    def bracketed(
        self, indent: str, head: str, items: Sequence[Union[str, Group]], tail: str, comprehension: bool = False
    ) -> str:
        joined = (" " if comprehension else ", ").join(_flat(item) for item in items)
        flat = f"{indent}{head}{joined}{tail}"
        if len(flat) <= self.width:
            return flat
        inner = indent + _TEMPLATE_INDENT
        if len(inner + joined) <= self.width:
            return f"{indent}{head}\n{inner}{joined}\n{indent}{tail}"
        last = "" if comprehension else ","
        lines = [self._element(inner, item, last) for item in items]
        return f"{indent}{head}\n" + "\n".join(lines) + f"\n{indent}{tail}"

    def _element(self, indent: str, item: Union[str, Group], comma: str) -> str:
        if isinstance(item, str) or len(indent + item.flat() + comma) <= self.width:
            return indent + _flat(item) + comma
        return self.bracketed(indent, item.head, item.items, item.tail + comma)


# ---------------------------------------------------------------------------------------------- wrappers


@dataclass(frozen=True)
class Typing:
    """The module's local names for what the wrappers' annotations use."""

    any: str
    callable: str
    cast: str
    #: The wrapper's type variable (``_Executor``): the wrapper returns the type of what it wraps. Not bound to
    #: ``Callable``: a table of sync and async functions is a ``dict[str, function]``, which such a bound refuses.
    executor: str


def type_variable(executor: str, type_var: str) -> str:
    """``_Executor = TypeVar("_Executor")``."""
    return f'{executor} = {type_var}("{executor}")\n'


def gate_wrapper(
    name: str, shape: CallShape, gate: str, lazy_import: Optional[str], typing: Typing, layout: Layout
) -> str:
    """``def _coerced(name, executor)``: the wrapper of ``docs/defect.md``, for the executors' call shape."""
    if shape.asynchronous is None:
        inner = _run(shape, gate, lazy_import, True, "run_async", typing, layout, "        ")
        body = (
            "    if inspect.iscoroutinefunction(executor):\n\n"
            + inner
            + f"\n\n        return {typing.cast}({typing.executor}, run_async)\n\n"
            + _run(shape, gate, lazy_import, False, "run", typing, layout, "    ")
        )
    else:
        body = _run(shape, gate, lazy_import, shape.asynchronous, "run", typing, layout, "    ")
    signature = _signature(name, typing.executor, layout)
    function = layout.bracketed(
        "    ", f"{CALL} = {typing.cast}(", [f"{typing.callable}[..., {typing.any}]", "executor"], ")"
    )
    function += "\n\n"
    return f"{signature}\n{function}{body}\n\n    return {typing.cast}({typing.executor}, run)\n"


def runtime_wrapper(
    name: str, coerced: str, schemas: str, args_at: Optional[int], executor: str, layout: Layout
) -> str:
    """A single-executor wrapper over the bundled coercer, for values that enter a table one by one."""
    arguments = ["name", schemas] + ([] if args_at is None else [f"{contract.ARGS_AT}={args_at}"])
    call = layout.bracketed("    ", f"return {coerced}(", arguments, ")(executor)")
    return f"{_signature(name, executor, layout)}\n{call}\n"


def _signature(name: str, executor: str, layout: Layout) -> str:
    return layout.bracketed("", f"def {name}(", ["name: str", f"executor: {executor}"], f") -> {executor}:")


def _run(
    shape: CallShape,
    gate: str,
    lazy_import: Optional[str],
    asynchronous: bool,
    function: str,
    typing: Typing,
    layout: Layout,
    indent: str,
) -> str:
    passed: List[Union[str, Group]]
    if shape.index is None:
        params, passed = ["*args", "**kwargs"], ["*args", Group(f"**{gate}(", ["name", "kwargs"], ")")]
    else:
        params = list(shape.params)
        passed = list(params)
        passed[shape.index] = Group(f"{gate}(", ["name", params[shape.index]], ")")
        if not shape.exact:
            params += ["*rest", "**kwargs"]
            passed += ["*rest", "**kwargs"]
    annotated = [f"{param}: {typing.any}" for param in params]
    prefix = "async def" if asynchronous else "def"
    awaited = "await " if asynchronous else ""
    lines = [f"{indent}@functools.wraps({CALL})"]
    lines.append(layout.bracketed(indent, f"{prefix} {function}(", annotated, f") -> {typing.any}:"))
    body = indent + _TEMPLATE_INDENT
    if lazy_import:
        lines.append(f"{body}{lazy_import}\n")
    lines.append(layout.bracketed(body, f"return {awaited}{CALL}(", passed, ")"))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- tables


def wrapped_comprehension(
    tree: cst.Module, wrapper: str, table: cst.BaseExpression, split: Optional[bool]
) -> cst.DictComp:
    """``{name: wrapper(name, executor) for name, executor in <table>.items()}``, ``table`` kept as written.

    ``split``: None keeps it on one line; False puts its contents on a line of their own; True splits them
    before ``for``, each part on its own line (the table is then indented with them).
    """
    pair = f"name: {wrapper}(name, executor)"
    loop = f"for name, executor in {_PLACEHOLDER}.items()"
    if split is None:
        source = f"{{{pair} {loop}}}"
    else:
        inner = f"{pair} {loop}" if split is False else f"{pair}\n    {loop}"
        source = f"{{\n    {inner}\n}}".replace("\n", tree.default_newline).replace("    ", tree.default_indent)
        table = reindented(tree, table)
    parsed = expression(tree, source)
    assert isinstance(parsed, cst.DictComp)
    return parsed.visit(_Substitute(table))  # type: ignore[return-value]


def comprehension_split(header: str, wrapper: str, table: str, layout: Layout) -> Optional[bool]:
    """How ruff lays out ``<header>{name: wrapper(...) for ... in table.items()}`` (see ``wrapped_comprehension``)."""
    items = [f"name: {wrapper}(name, executor)", f"for name, executor in {table}.items()"]
    text = layout.bracketed("", header + "{", items, "}", comprehension=True)
    lines = text.count("\n")
    return None if lines == 0 else lines == 3


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
