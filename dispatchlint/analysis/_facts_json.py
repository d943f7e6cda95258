"""Facts as JSON, and back, validated against the dataclasses' own annotations.

The cache stores facts in a format that cannot run code when it is read (JSON, never pickle), and believes an
entry only when it is exactly what the indexer would have produced: every dataclass tagged with its name and
holding every one of its fields, each value of the annotated type (a string where a string is declared, one of
the union's members, an enum's value). Anything else is :class:`InvalidFacts`, which the cache treats as a miss.
The codec follows the annotations, so a new field or fact class needs no change here.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from enum import Enum
from functools import lru_cache
from typing import Any, Dict, Tuple

from dispatchlint.analysis import facts as facts_module
from dispatchlint.analysis.facts import ModuleFacts

_TAG = "@"
_NONE_TYPE = type(None)


class InvalidFacts(ValueError):
    """A stored entry that is not a well-formed :class:`ModuleFacts`."""


def dumps(facts: ModuleFacts) -> str:
    return json.dumps(_encode(facts), separators=(",", ":"), ensure_ascii=True)


def loads(text: str) -> ModuleFacts:
    """The facts ``text`` holds; raise :class:`InvalidFacts` unless every part of it has its declared type."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InvalidFacts(f"not JSON: {error}") from error
    decoded = _decode(data, ModuleFacts)
    assert isinstance(decoded, ModuleFacts)
    return decoded


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        encoded: Dict[str, Any] = {_TAG: type(value).__name__}
        for item in dataclasses.fields(value):
            encoded[item.name] = _encode(getattr(value, item.name))
        return encoded
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    if value is None or isinstance(value, (str, int)):
        return value
    raise TypeError(f"facts hold a {type(value).__name__}, which the cache cannot store")


@lru_cache(maxsize=None)
def _field_types(cls: type) -> Tuple[Tuple[str, Any], ...]:
    hints = typing.get_type_hints(cls, vars(facts_module))
    return tuple((item.name, hints[item.name]) for item in dataclasses.fields(cls))


def _decode(data: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return _decode_union(data, typing.get_args(hint))
    if origin is tuple:
        return _decode_tuple(data, typing.get_args(hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(data, hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(data)
        except ValueError as error:
            raise InvalidFacts(f"{data!r} is not a {hint.__name__}") from error
    if hint is bool:
        if isinstance(data, bool):
            return data
    elif hint is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
    elif hint is str:
        if isinstance(data, str):
            return data
    else:
        raise TypeError(f"the facts codec does not know the type {hint!r}")
    raise InvalidFacts(f"{data!r} is not a {hint.__name__}")


def _decode_dataclass(data: Any, cls: type) -> Any:
    if not isinstance(data, dict) or data.get(_TAG) != cls.__name__:
        raise InvalidFacts(f"not a {cls.__name__}")
    types = _field_types(cls)
    if len(data) != len(types) + 1:
        raise InvalidFacts(f"a {cls.__name__} with missing or unknown fields")
    values = {}
    for name, hint in types:
        if name not in data:
            raise InvalidFacts(f"a {cls.__name__} without {name}")
        values[name] = _decode(data[name], hint)
    return cls(**values)


def _decode_union(data: Any, members: Tuple[Any, ...]) -> Any:
    if data is None:
        if _NONE_TYPE in members:
            return None
        raise InvalidFacts("null where a value is required")
    if isinstance(data, dict):
        tag = data.get(_TAG)
        for member in members:
            if isinstance(member, type) and dataclasses.is_dataclass(member) and member.__name__ == tag:
                return _decode_dataclass(data, member)
        raise InvalidFacts(f"{tag!r} is none of the union's classes")
    for member in members:
        if member is not _NONE_TYPE:
            try:
                return _decode(data, member)
            except InvalidFacts:
                continue
    raise InvalidFacts(f"{data!r} is none of the union's types")


def _decode_tuple(data: Any, items: Tuple[Any, ...]) -> Tuple[Any, ...]:
    if not isinstance(data, list):
        raise InvalidFacts("not a list")
    if len(items) == 2 and items[1] is Ellipsis:
        return tuple(_decode(item, items[0]) for item in data)
    if len(data) != len(items):
        raise InvalidFacts(f"a list of {len(data)} where {len(items)} values are declared")
    return tuple(_decode(item, hint) for item, hint in zip(data, items))
