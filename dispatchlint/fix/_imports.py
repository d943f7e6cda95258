"""Where the imports generated code needs go, and in which form (what to import is decided in ``_wrapping``).

A new import follows the module's own habits (relative when the module imports its package relatively) and is
placed where isort would roughly put it: a plain ``import functools`` among the module's other outside imports,
a project import after the project imports that sort before it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import sysconfig
from dataclasses import dataclass
from typing import List, Optional, Sequence, Set, Tuple

import libcst as cst

from dispatchlint.indexing import syntax as syn
from dispatchlint.indexing.facts import ModuleFacts
from dispatchlint.fix._source import Statement
from dispatchlint.fix._wrapping import Import


def import_source(facts: ModuleFacts, tree: cst.Module, wanted: Import) -> str:
    """The import statement for ``wanted`` as this module would write it."""
    if not wanted.name:
        return f"import {wanted.module}"
    return f"from {_module_reference(facts, tree, wanted.module)} import {wanted.name}"


def _module_reference(facts: ModuleFacts, tree: cst.Module, target: str) -> str:
    if not any(isinstance(node, cst.ImportFrom) and node.relative for node in _top_level_smalls(tree)):
        return target
    package = facts.module.split(".") if facts.is_package else facts.module.split(".")[:-1]
    parts = target.split(".")
    common = 0
    while common < min(len(package), len(parts)) and package[common] == parts[common]:
        common += 1
    if common == 0:
        return target
    return "." * (len(package) - common + 1) + ".".join(parts[common:])


def _top_level_smalls(tree: cst.Module) -> List[cst.BaseSmallStatement]:
    return [
        small for statement in tree.body if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
    ]


def drop_unused_import(tree: cst.Module, module: str) -> cst.Module:
    """Remove a top-level ``import module`` that nothing in the module uses any more."""
    used = any(
        isinstance(node, cst.Name) and node.value == module
        for statement in tree.body
        if not _is_import_line(statement)
        for node in syn.walk(statement)
    )
    if used:
        return tree
    body: List[Statement] = list(tree.body)
    for index, statement in enumerate(body):
        if _is_import_line(statement) and _plain_import_of(statement) == module:
            if index + 1 < len(body):
                body[index + 1] = body[index + 1].with_changes(leading_lines=statement.leading_lines)
            del body[index]
            return tree.with_changes(body=body)
    return tree


def _is_import_line(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _plain_import_of(statement: cst.BaseStatement) -> Optional[str]:
    """``json`` for the line ``import json`` (one name, no alias)."""
    assert isinstance(statement, cst.SimpleStatementLine)
    small = statement.body[0]
    if len(statement.body) != 1 or not isinstance(small, cst.Import) or len(small.names) != 1:
        return None
    alias = small.names[0]
    return alias.name.value if alias.asname is None and isinstance(alias.name, cst.Name) else None


# ---------------------------------------------------------------------------------------------- placement


_STDLIB_PATH = os.path.normcase(sysconfig.get_paths()["stdlib"])


@functools.lru_cache(maxsize=None)
def _is_stdlib(top: str) -> bool:
    """Whether a top-level module is the standard library's: Python 3.10+ lists them; older ones are asked where
    the module would load from (finding a top-level spec imports nothing)."""
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return top in names
    if top in sys.builtin_module_names:
        return True
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    origin = spec.origin if spec is not None else None
    if origin is None:
        return False
    if origin in ("built-in", "frozen"):
        return True
    return os.path.normcase(origin).startswith(_STDLIB_PATH) and "site-packages" not in origin


_STANDARD, _THIRD_PARTY, _PROJECT = range(3)


@dataclass(frozen=True)
class _Placed:
    index: int
    group: int
    plain: bool
    key: str


def add_import(
    tree: cst.Module, statement: cst.SimpleStatementLine, project_packages: Set[str], width: int
) -> cst.Module:
    """Insert one import statement into the module's import block, where isort would roughly put it.

    Imports form three groups (standard library, third party, the project: relative imports and imports of
    ``project_packages``); within its group a new import goes before the first one that sorts after it (plain
    ``import x`` before ``from x import``), and a group of its own is opened with a blank line.
    """
    body: List[Statement] = list(tree.body)
    start = _prelude_end(body)
    block = _import_block(body, start, project_packages)
    small = statement.body[0]
    merged = _merged(tree, body, _module_imports(body, project_packages), small, width)
    if merged is not None:
        return tree.with_changes(body=merged)
    key = _sort_key(small)
    plain = isinstance(small, cst.Import)
    group = _group(small, project_packages)
    same = [placed for placed in block if placed.group == group]
    later = [placed for placed in block if placed.group > group]
    before = next(
        (placed for placed in same if (not placed.plain and plain) or (placed.plain == plain and placed.key > key)),
        None,
    )
    if before is not None:
        body[before.index : before.index + 1] = _insert_before(body[before.index], statement)
    elif same:
        body.insert(same[-1].index + 1, statement)
    elif later:  # a new group, ahead of the groups that come after it
        new, first = _insert_before(body[later[0].index], statement)
        body[later[0].index : later[0].index + 1] = [new, first.with_changes(leading_lines=[cst.EmptyLine()])]
    elif block:
        body.insert(block[-1].index + 1, statement.with_changes(leading_lines=[cst.EmptyLine()]))
    else:
        body[start:start] = [statement.with_changes(leading_lines=[cst.EmptyLine()] if start else [])]
        if start + 1 < len(body) and not body[start + 1].leading_lines:
            body[start + 1] = body[start + 1].with_changes(leading_lines=[cst.EmptyLine()])
    return tree.with_changes(body=body)


def _merged(
    tree: cst.Module, body: List[Statement], block: Sequence[_Placed], small: cst.BaseSmallStatement, width: int
) -> Optional[List[Statement]]:
    """``from .gate import SCHEMAS`` + ``from .gate import coerce_tool_args``: one import, laid out as ruff lays it
    out (one line when it fits, else one name per line with a trailing comma). Imports with comments are kept."""
    if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
        return None
    for placed in block:
        line = body[placed.index]
        assert isinstance(line, cst.SimpleStatementLine)
        existing = line.body[0]
        if (
            len(line.body) == 1
            and isinstance(existing, cst.ImportFrom)
            and not isinstance(existing.names, cst.ImportStar)
            and _sort_key(existing) == _sort_key(small)
            and "#" not in tree.code_for_node(existing)
        ):
            names = _with_names(list(existing.names), list(small.names))
            merged = list(body)
            merged[placed.index] = line.with_changes(body=[_import_from(tree, existing, names, width)])
            return merged
    return None


def _import_from(
    tree: cst.Module, existing: cst.ImportFrom, names: List[cst.ImportAlias], width: int
) -> cst.ImportFrom:
    marker = "__dispatchlint_name__"
    alias = cst.ImportAlias(cst.Name(marker))
    head = tree.code_for_node(existing.with_changes(names=[alias], lpar=None, rpar=None)).split(marker)[0]
    aliases = [tree.code_for_node(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for alias in names]
    flat = head + ", ".join(aliases)
    assert not isinstance(existing.names, cst.ImportStar)
    # ruff's magic trailing comma: an import written one name per line stays that way
    exploded = existing.lpar is not None and isinstance(existing.names[-1].comma, cst.Comma)
    newline, indent = tree.default_newline, tree.default_indent
    if exploded or len(flat) > width:
        text = f"{head}({newline}" + "".join(f"{indent}{alias},{newline}" for alias in aliases) + f"){newline}"
    else:
        text = flat + newline
    parsed = cst.parse_statement(text, config=tree.config_for_parsing)
    assert isinstance(parsed, cst.SimpleStatementLine) and isinstance(parsed.body[0], cst.ImportFrom)
    return parsed.body[0]


def _with_names(names: List[cst.ImportAlias], new: Sequence[cst.ImportAlias]) -> List[cst.ImportAlias]:
    """``names`` with ``new`` added: each in its place when ``names`` are in isort's order, else at the end."""
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    ordered = [_name_order(alias) for alias in names] == sorted(_name_order(alias) for alias in names)
    for alias in new:
        at = len(names)
        if ordered:
            at = next((i for i, placed in enumerate(names) if _name_order(placed) > _name_order(alias)), at)
        names.insert(at, alias)
    return [alias.with_changes(comma=comma) for alias in names[:-1]] + [
        names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    ]


def _name_order(alias: cst.ImportAlias) -> Tuple[int, str]:
    """isort's ``order-by-type``: constants, then classes, then functions (``Any, TypeVar, cast``)."""
    name = cst.Module([]).code_for_node(alias.name)
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name


def _insert_before(existing: Statement, statement: cst.SimpleStatementLine) -> List[Statement]:
    """The new statement takes over the blank lines and comments that opened the existing one's group."""
    return [statement.with_changes(leading_lines=existing.leading_lines), existing.with_changes(leading_lines=[])]


def _prelude_end(body: Sequence[Statement]) -> int:
    """The index after the docstring and the ``from __future__`` imports."""
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_future(body[index]):
        index += 1
    return index


def _import_block(body: Sequence[Statement], start: int, project_packages: Set[str]) -> List[_Placed]:
    placed = []
    for index in range(start, len(body)):
        statement = body[index]
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)
        ):
            break
        small = statement.body[0]
        placed.append(_Placed(index, _group(small, project_packages), isinstance(small, cst.Import), _sort_key(small)))
    return placed


def _module_imports(body: Sequence[Statement], project_packages: Set[str]) -> List[_Placed]:
    """Every import line at module level, also those after code (``logger = ...`` between imports): a new name
    from a module already imported joins that line wherever it is."""
    return [
        _Placed(
            index,
            _group(statement.body[0], project_packages),
            isinstance(statement.body[0], cst.Import),
            _sort_key(statement.body[0]),
        )
        for index, statement in enumerate(body)
        if isinstance(statement, cst.SimpleStatementLine)
        and statement.body
        and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)
    ]


def _group(small: cst.BaseSmallStatement, project_packages: Set[str]) -> int:
    if isinstance(small, cst.ImportFrom) and small.relative:
        return _PROJECT
    top = _sort_key(small).split(".")[0]
    if top in project_packages:
        return _PROJECT
    return _STANDARD if _is_stdlib(top) else _THIRD_PARTY


def _sort_key(small: cst.BaseSmallStatement) -> str:
    empty = cst.Module([])
    if isinstance(small, cst.Import):
        return empty.code_for_node(small.names[0].name)
    assert isinstance(small, cst.ImportFrom)
    module = empty.code_for_node(small.module) if small.module is not None else ""
    return "." * len(small.relative) + module


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_future(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.ImportFrom)
        and isinstance(statement.body[0].module, cst.Name)
        and statement.body[0].module.value == "__future__"
    )
