"""JSON kinds of Python values, and the strict JSON literals a string may be turned into.

The coercer reasons in JSON Schema types, not Python types: ``True`` is a boolean and never an integer, ``3.0``
is a number, a tuple is an array. A string becomes another value only through that value's exact JSON literal,
so that nothing is guessed (``"1"`` is not a boolean, ``"1,2"`` is not a list, ``"NaN"`` is not a number).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

NULL = "null"
BOOLEAN = "boolean"
INTEGER = "integer"
NUMBER = "number"
STRING = "string"
ARRAY = "array"
OBJECT = "object"
JSON_TYPES: FrozenSet[str] = frozenset({NULL, BOOLEAN, INTEGER, NUMBER, STRING, ARRAY, OBJECT})
SCALAR_KINDS: FrozenSet[str] = frozenset({NULL, BOOLEAN, INTEGER, NUMBER})

#: The Python types whose values are, exactly, each JSON kind (``int`` is both an integer and a number).
PYTHON_TYPES: Dict[str, Tuple[type, ...]] = {
    NULL: (type(None),),
    BOOLEAN: (bool,),
    INTEGER: (int,),
    NUMBER: (int, float),
    STRING: (str,),
    ARRAY: (list, tuple),
    OBJECT: (dict,),
}


class _Missing:
    """The absence of a value where ``None`` is a value (JSON null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

_KIND_OF_TYPE: Dict[type, str] = {
    type(None): NULL,
    bool: BOOLEAN,
    int: INTEGER,
    float: NUMBER,
    str: STRING,
    list: ARRAY,
    tuple: ARRAY,
    dict: OBJECT,
}
_NUMERIC = (INTEGER, NUMBER)

# The JSON grammar, ASCII digits only: int() and float() alone would also take "1_000", "+5", "inf" and "٣".
_NUMBER_HEADS = frozenset("-0123456789")
_FRACTIONAL_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)")
_BOOLEAN_LITERALS = {"true": True, "false": False}
# Longer number literals are kept as strings: CPython's own default bound on int() (a guard against quadratic
# conversion), applied to every number so that the answer is the same on every Python.
_MAX_NUMBER_LENGTH = 4300
# Separators and brackets: a string holding one of them may be a list written as text, never one value.
_LIST_MARKS = re.compile(r"[,;|\n\[\]{}]")


def json_kind(value: Any) -> Optional[str]:
    """The JSON Schema type of ``value``, or None for a Python value JSON has no kind for."""
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is not None:
        return kind
    # Subclasses (IntEnum, OrderedDict, ...). bool is tested before int because it is one.
    if isinstance(value, bool):
        return BOOLEAN
    for kind in (INTEGER, NUMBER, STRING, ARRAY, OBJECT):
        if isinstance(value, PYTHON_TYPES[kind]):
            return kind
    return None


def scalar_literal(text: str) -> Any:
    """The null, boolean or finite number that ``text`` (already trimmed) is the JSON literal of, or MISSING.

    Booleans are taken in any letter case; integers are exact, up to 4300 characters.
    """
    if text[:1] in _NUMBER_HEADS:
        return _number(text)
    if text == "null":
        return None
    return _boolean(text)


def _integer(text: str) -> Any:
    unsigned = text[1:] if text[:1] == "-" else text
    if len(text) > _MAX_NUMBER_LENGTH or not (unsigned.isdigit() and unsigned.isascii()):
        return MISSING
    if unsigned[0] == "0" and len(unsigned) > 1:
        return MISSING
    try:
        return int(text)
    except ValueError:  # a process that lowered sys.set_int_max_str_digits() below our bound
        return MISSING


def _number(text: str) -> Any:
    integer = _integer(text)
    if integer is not MISSING or len(text) > _MAX_NUMBER_LENGTH or not _FRACTIONAL_LITERAL.fullmatch(text):
        return integer
    number = float(text)
    return number if math.isfinite(number) else MISSING


def _boolean(text: str) -> Any:
    return _BOOLEAN_LITERALS.get(text.lower(), MISSING) if len(text) <= 5 else MISSING


# Converters for places that admit one scalar kind and no string: each gives back ``text`` itself when it is
# not the literal, so that the common case costs one call.


def integer_literal(text: str) -> Any:
    """The integer ``text`` is the JSON literal of (whitespace around ignored), or ``text`` itself."""
    integer = _integer(text.strip())
    return text if integer is MISSING else integer


def number_literal(text: str) -> Any:
    """The finite number ``text`` is the JSON literal of (whitespace around ignored), or ``text`` itself."""
    number = _number(text.strip())
    return text if number is MISSING else number


def boolean_literal(text: str) -> Any:
    """The boolean ``text`` is the JSON literal of (any letter case, whitespace ignored), or ``text`` itself."""
    literal = _boolean(text.strip())
    return text if literal is MISSING else literal


def json_container(text: str) -> Any:
    """The array or object that ``text`` (trimmed, starting with a bracket) is strict JSON for, or MISSING."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
        return MISSING


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def is_ambiguous_single(text: str) -> bool:
    """Whether a string may mean something else than one list element.

    Separators or brackets may make it a list written as text; an empty string or ``null`` may mean no list.
    """
    stripped = text.strip()
    return not stripped or stripped == "null" or _LIST_MARKS.search(stripped) is not None


def json_equal(first: Any, second: Any) -> bool:
    """Equality as JSON sees it: ``1 == 1.0`` but ``True != 1``; iterative, so any depth is safe."""
    pending: List[Tuple[Any, Any]] = [(first, second)]
    while pending:
        left, right = pending.pop()
        if left is right:
            continue
        left_kind, right_kind = json_kind(left), json_kind(right)
        if left_kind in _NUMERIC and right_kind in _NUMERIC:
            if left != right:
                return False
        elif left_kind != right_kind:
            return False
        elif left_kind == ARRAY:
            if len(left) != len(right):
                return False
            pending.extend(zip(left, right))
        elif left_kind == OBJECT:
            if left.keys() != right.keys():
                return False
            pending.extend((left[key], right[key]) for key in left)
        elif left != right:
            return False
    return True
