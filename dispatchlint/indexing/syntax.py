"""Small, pure helpers over libcst expression nodes."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Dict, Iterator, List, Optional, Tuple

import libcst as cst

from dispatchlint.indexing.annotations import ARGS_NAMES as ARGS_NAMES
from dispatchlint.indexing.annotations import annotated_class as annotated_class
from dispatchlint.indexing.annotations import mapping_value_class as mapping_value_class
from dispatchlint.indexing.annotations import sequence_element_class as sequence_element_class

#: Names that, as a dispatch key, say "this is a tool's name".
_TOOL_KEY_WORDS = frozenset({"tool", "tool_id", "function", "func", "fn", "tool_type", "tool_key"})

#: Calls that read a key by name: ``call.get("name")``, a match's ``found.group("name")``.
_KEY_READS = frozenset({"get", "group"})
_UNKNOWN_LITERAL = object()


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def callee_name(node: cst.BaseExpression) -> Optional[str]:
    """What a call calls, as written: ``a.b.c``, or ``f().attr`` for an attribute of what a call without
    arguments returns (``_ra().handle_function_call``, a lazily imported module's function)."""
    dotted = dotted_name(node)
    if dotted is not None or not isinstance(node, cst.Attribute):
        return dotted
    inner = node.value
    if isinstance(inner, cst.Call) and not inner.args:
        head = dotted_name(inner.func)
        if head is not None:
            return f"{head}().{node.attr.value}"
    return None


def string_value(node: Optional[cst.BaseExpression]) -> Optional[str]:
    """The value of a plain (non f-) string literal, else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


#: String methods that normalise a name without changing what it names.
_CASE_FOLDS = frozenset(("lower", "upper", "casefold", "strip", "lstrip", "rstrip"))


def is_tool_name_key(node: cst.BaseExpression) -> bool:
    """Whether a dispatch key expression reads like a tool's name (``name``, ``call.function.name``...)."""
    word: Optional[str] = None
    if isinstance(node, cst.Name):
        word = node.value
    elif isinstance(node, cst.Attribute):
        word = node.attr.value
    elif isinstance(node, cst.Subscript):
        word = subscript_key(node)
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _KEY_READS:
        word = string_value(node.args[0].value) if node.args else None
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CASE_FOLDS:
        return not node.args and is_tool_name_key(node.func.value)  # ``name.lower()``: the name, normalised
    if word is None:
        return False
    word = word.lower()
    return "name" in word or word in _TOOL_KEY_WORDS


def subscript_key(node: cst.Subscript) -> Optional[str]:
    """The string key of ``x["key"]``."""
    if len(node.slice) != 1:
        return None
    element = node.slice[0].slice
    if isinstance(element, cst.Index):
        return string_value(element.value)
    return None


def subscript_index(node: cst.Subscript) -> Optional[cst.BaseExpression]:
    """The index expression of ``x[expr]`` (no slices, no tuples)."""
    if len(node.slice) != 1:
        return None
    element = node.slice[0].slice
    return element.value if isinstance(element, cst.Index) else None


#: Methods only strings have: called on a parameter, they take it for a string (an array or a number a gate
#: makes of it has none of them). ``count`` and ``index``, which lists have too, are not among them.
STRING_METHODS = frozenset(
    (
        "capitalize casefold center encode endswith expandtabs find format format_map isalnum isalpha isascii "
        "isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper join ljust lower "
        "lstrip partition removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip split "
        "splitlines startswith strip swapcase title translate upper zfill"
    ).split()
)
#: What a parse of a parameter may strip first: JSON and Python literals ignore the whitespace anyway.
_WHITESPACE_STRIPS = ("strip", "lstrip", "rstrip")


def whitespace_stripped(node: cst.BaseExpression) -> cst.BaseExpression:
    """What ``node`` strips the whitespace of (``steps`` for ``steps.strip()``), else ``node`` itself."""
    while (
        isinstance(node, cst.Call)
        and not node.args
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in _WHITESPACE_STRIPS
    ):
        node = node.func.value
    return node


def get_call(node: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``(mapping, key)`` for ``mapping.get(key, ...)``."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "get"
        and node.args
        and node.args[0].keyword is None
        and not node.args[0].star
    ):
        return node.func.value, node.args[0].value
    return None


class Literals:
    """The JSON-like values of a module's literals (dicts, lists, strings, numbers, True/False/None), its
    constants followed. Parts that are not literals become ``_UNKNOWN_LITERAL`` so that the known parts can still
    be used.

    A constant is evaluated once for each depth it is reached at, not once per path: constants built from
    constants (``A2 = {"a": A1, "b": A1}``, and so on) cost their size, where following every reference anew costs
    the number of paths through them, exponential in the length of the chain.
    """

    def __init__(self, constants: Dict[str, cst.BaseExpression]) -> None:
        self.constants = constants
        self._constant_values: Dict[Tuple[str, int], Any] = {}

    def value(self, node: cst.BaseExpression, depth: int = 0) -> Any:
        if depth > 50:
            return _UNKNOWN_LITERAL
        if isinstance(node, cst.Dict):
            result: Dict[Any, Any] = {}
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    key = string_value(element.key)
                    if key is not None:
                        result[key] = self.value(element.value, depth + 1)
            return result
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return [self.value(el.value, depth + 1) for el in node.elements if isinstance(el, cst.Element)]
        text = string_value(node)
        if text is not None:
            return text
        if isinstance(node, cst.Integer):
            return int(node.evaluated_value)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.value]
            if node.value in self.constants:
                reached = (node.value, depth + 1)
                if reached not in self._constant_values:
                    self._constant_values[reached] = self.value(self.constants[node.value], depth + 1)
                return self._constant_values[reached]
        return _UNKNOWN_LITERAL


def schema_properties(parameters: Any) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """``(property, declared JSON types)`` pairs of a parameters schema (types empty when not stated)."""
    if not isinstance(parameters, dict):
        return ()
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        return ()
    return tuple((name, _declared_types(spec)) for name, spec in properties.items())


def _declared_types(spec: Any) -> Tuple[str, ...]:
    if not isinstance(spec, dict):
        return ()
    declared = spec.get("type")
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list):
        return tuple(t for t in declared if isinstance(t, str))
    types: List[str] = []
    for union in ("anyOf", "oneOf"):
        for branch in spec.get(union) or ():
            types.extend(_declared_types(branch))
    return tuple(dict.fromkeys(types))


_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}
_IS_NODE: Dict[type, bool] = {}


#: Node types that never contain a call, a name or a literal: walks do not descend into them.
_TRIVIA = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
    cst.Comma,
    cst.Dot,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.AssignEqual,
    cst.Colon,
    cst.Semicolon,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
)


def _is_node(value: object) -> bool:
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = issubclass(kind, cst.CSTNode) and not issubclass(kind, _TRIVIA)
    return known


def _may_hold_node(annotation: object) -> bool:
    """Whether a field declared with ``annotation`` can hold a node that walks look at (not only whitespace,
    punctuation, operators, strings or ``MaybeSentinel``); an annotation not understood counts as one that can."""
    if isinstance(annotation, type):
        return issubclass(annotation, cst.CSTNode) and not issubclass(annotation, _TRIVIA)
    if typing.get_origin(annotation) is typing.Literal:
        return False
    arguments = typing.get_args(annotation)
    return any(_may_hold_node(argument) for argument in arguments) if arguments else True


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """A node's child nodes in source order, without whitespace, punctuation and operators.

    ``CSTNode.children`` runs a visitor per call; reading the dataclass fields directly is many times faster,
    which matters because the indexer walks every expression. Only the fields whose declared type can hold such
    a node are read (a call's ``func`` and ``args``, not its parentheses and whitespace).
    """
    names = _CHILD_FIELDS.get(type(node))
    if names is None:
        fields = dataclasses.fields(node)
        names = _CHILD_FIELDS[type(node)] = tuple(f.name for f in fields if _may_hold_node(f.type))
    found: List[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if _is_node(value):
            found.append(value)
        elif type(value) in (list, tuple):
            found.extend([item for item in value if _is_node(item)])
    return found


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node``, pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def calls_and_lambdas(node: cst.CSTNode) -> Tuple[List[cst.Call], List[cst.Lambda]]:
    """The calls under ``node`` that run where it is evaluated, and the lambdas that hold the others (each
    lambda is a function of its own), in source order; nested definitions are not entered."""
    calls: List[cst.Call] = []
    lambdas: List[cst.Lambda] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Lambda):
            lambdas.append(current)
            continue
        if isinstance(current, cst.Call):
            calls.append(current)
        if current is not node and isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            continue
        stack.extend(reversed(children(current)))
    return calls, lambdas


def definitions_in(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The ``def`` and ``lambda`` nodes under ``node``, not those nested inside them."""
    stack: List[cst.CSTNode] = list(reversed(children(node)))
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.Lambda)):
            yield current.name if isinstance(current, cst.FunctionDef) else current
            continue
        if isinstance(current, cst.ClassDef):
            continue
        stack.extend(reversed(children(current)))


def iter_calls(node: cst.CSTNode, into_functions: bool = False) -> Iterator[cst.Call]:
    """Every call under ``node`` (pre-order), not descending into nested class bodies, nor into nested function
    bodies unless ``into_functions`` (the closures a block defines and hands on run its calls later)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            yield current
        if current is not node and (
            isinstance(current, cst.ClassDef) or (isinstance(current, cst.FunctionDef) and not into_functions)
        ):
            continue
        stack.extend(reversed(children(current)))
