"""JSON kinds of Python values, and the strict JSON literals a string may be turned into.

The coercer reasons in JSON Schema types, not Python types: ``True`` is a boolean and never an integer, ``3.0``
is a number, a tuple is an array. A string becomes another value only through that value's exact JSON literal,
so that nothing is guessed (``"1"`` is not a boolean, ``"1,2"`` is not a list, ``"NaN"`` is not a number).
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

NULL = "null"
BOOLEAN = "boolean"
INTEGER = "integer"
NUMBER = "number"
STRING = "string"
ARRAY = "array"
OBJECT = "object"
JSON_TYPES: FrozenSet[str] = frozenset({NULL, BOOLEAN, INTEGER, NUMBER, STRING, ARRAY, OBJECT})
#: The kinds other than string that a string can be the JSON literal of (containers aside).
LITERAL_KINDS: FrozenSet[str] = frozenset({NULL, BOOLEAN, INTEGER, NUMBER})

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

# The kind of each exact Python type. Reversed, so that "integer" overwrites "number" for int.
_KIND_OF_TYPE: Dict[type, str] = {
    python_type: kind for kind, python_types in reversed(PYTHON_TYPES.items()) for python_type in python_types
}
_NUMERIC = (INTEGER, NUMBER)

# The JSON grammar, ASCII digits only: int() and float() alone would also take "1_000", "+5", "inf" and "٣".
_NUMBER_HEADS = frozenset("-0123456789")
FRACTIONAL_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)")
_BOOLEAN_LITERALS = {"true": True, "false": False}
# Longer number literals are kept as strings: CPython's own default bound on int() (a guard against quadratic
# conversion), applied to every number so that the answer is the same on every Python.
MAX_NUMBER_LENGTH = 4300
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
        value = number_literal(text)
    elif text == "null":
        return None
    else:
        value = boolean_literal(text)
    return MISSING if value is text else value


# The converters below give back ``text`` itself when it is not the literal (whitespace around ignored), so
# that a place admitting one scalar kind repairs a string with one call.


def integer_literal(text: str) -> Any:
    """The integer ``text`` is the JSON literal of, or ``text``."""
    stripped = text.strip()
    unsigned = stripped[1:] if stripped[:1] == "-" else stripped
    if len(stripped) > MAX_NUMBER_LENGTH or not (unsigned.isdigit() and unsigned.isascii()):
        return text
    if unsigned[0] == "0" and len(unsigned) > 1:
        return text
    try:
        return int(stripped)
    except ValueError:  # a process that lowered sys.set_int_max_str_digits() below our bound
        return text


def number_literal(text: str) -> Any:
    """The finite number ``text`` is the JSON literal of (an int when it is an integer literal), or ``text``."""
    integer = integer_literal(text)
    if integer is not text:
        return integer
    stripped = text.strip()
    if len(stripped) > MAX_NUMBER_LENGTH or not FRACTIONAL_LITERAL.fullmatch(stripped):
        return text
    number = float(stripped)
    return number if math.isfinite(number) else text


def boolean_literal(text: str) -> Any:
    """The boolean ``text`` is the JSON literal of, in any letter case, or ``text``."""
    stripped = text.strip()
    literal = _BOOLEAN_LITERALS.get(stripped.lower()) if len(stripped) <= 5 else None
    return text if literal is None else literal


def strict_json(text: Any) -> Any:
    """The value ``text`` (a str or bytes) is strict JSON for, or MISSING.

    Strict: ``NaN``, ``Infinity`` and numbers too large to be finite (``1e999``) are refused, wherever they are,
    as are nesting deeper than the parser's stack and integers longer than ``MAX_NUMBER_LENGTH`` digits (on
    every Python, and whatever ``sys.set_int_max_str_digits`` says: converting them takes quadratic time).
    """
    try:
        if isinstance(text, (bytes, bytearray)):  # as json.loads reads bytes
            text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
        return _decoder().decode(text)
    except (ValueError, TypeError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
        return MISSING


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is not a finite number")
    return number


def _bounded_integer(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_NUMBER_LENGTH:
        raise ValueError("an integer literal longer than the bound")
    return int(text)


# Built once (``json.loads`` with hooks builds a decoder on every call). Where Python's own bound on int() is
# at most ours (its default), int() enforces it in C; only a process that lifted it needs the slower hook.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
_STRICT_BOUNDED = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_integer
)
_INT_DIGITS_BOUND = getattr(sys, "get_int_max_str_digits", None)  # Python 3.9.14 and later


def _decoder() -> json.JSONDecoder:
    bound = _INT_DIGITS_BOUND() if _INT_DIGITS_BOUND is not None else 0
    return _STRICT if 0 < bound <= MAX_NUMBER_LENGTH else _STRICT_BOUNDED


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
