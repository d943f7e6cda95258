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
import sys
import typing
from enum import Enum
from functools import lru_cache
from typing import Any, Callable, Dict, Hashable, List, Tuple, Type, TypeVar, cast

_TAG = "@"
_NONE_TYPE = type(None)
_Decoder = Callable[[Any], Any]
_Record = TypeVar("_Record")


class InvalidFacts(ValueError):
    """A stored entry that is not exactly a well-formed record of the class asked for."""


def dumps(record: Any) -> str:
    """``record`` (a dataclass) as ASCII JSON: a lone surrogate in a string literal must not fail the write."""
    return json.dumps(_encode(record), separators=(",", ":"), ensure_ascii=True)


def loads_record(text: str, cls: Type[_Record]) -> _Record:
    """The ``cls`` record ``text`` holds (any dataclass of the analysis, annotated with the types this codec
    knows: the run cache stores findings this way); raise :class:`InvalidFacts` unless every part of it has its
    declared type."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InvalidFacts(f"not JSON: {error}") from error
    decoded = _decoder(cast(Hashable, cls))(data)
    assert isinstance(decoded, cls)
    return decoded


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if _all_int(type(value)):
            return [getattr(value, name) for name, _ in _field_types(type(value))]
        encoded: Dict[str, Any] = {_TAG: type(value).__name__}
        for name, _ in _field_types(type(value)):
            encoded[name] = _encode(getattr(value, name))
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
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return tuple((item.name, hints[item.name]) for item in dataclasses.fields(cls))


@lru_cache(maxsize=None)
def _all_int(cls: type) -> bool:
    """A record of integers only (a span): stored as the list of its values, the most frequent record by far."""
    types = _field_types(cls)
    return bool(types) and all(hint is int for _, hint in types)


@lru_cache(maxsize=None)
def _decoder(hint: Any) -> _Decoder:
    """The function that decodes and checks a value of type ``hint``, built once per type (a warm run decodes
    every module's facts: following the annotations anew for each value would be most of its time)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return _union_decoder(typing.get_args(hint))
    if origin is tuple:
        return _tuple_decoder(typing.get_args(hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_decoder(hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum_decoder(hint)
    if hint is bool:
        return _decode_bool
    if hint is int:
        return _decode_int
    if hint is str:
        return _decode_str
    raise TypeError(f"the facts codec does not know the type {hint!r}")


def _decode_bool(data: Any) -> Any:
    if isinstance(data, bool):
        return data
    raise InvalidFacts(f"{data!r} is not a bool")


def _decode_int(data: Any) -> Any:
    if isinstance(data, int) and not isinstance(data, bool):
        return data
    raise InvalidFacts(f"{data!r} is not a int")


def _decode_str(data: Any) -> Any:
    if isinstance(data, str):
        return data
    raise InvalidFacts(f"{data!r} is not a str")


def _enum_decoder(enum: Type[Enum]) -> _Decoder:
    def decode(data: Any) -> Any:
        try:
            return enum(data)
        except ValueError as error:
            raise InvalidFacts(f"{data!r} is not a {enum.__name__}") from error

    return decode


def _dataclass_decoder(cls: type) -> _Decoder:
    # The fields' decoders are looked up on first use: a dataclass may hold its own type. Every field is checked
    # here, so the record is filled in directly: a frozen dataclass's __init__ would set each field again, and
    # that was most of a warm run's decoding.
    if getattr(cls, "__slots__", None) is not None or hasattr(cls, "__post_init__"):
        raise TypeError(f"the facts codec fills in records directly, which {cls.__name__} does not allow")
    new = object.__new__
    if _all_int(cls):
        return _int_record_decoder(cls)
    fields: List[Tuple[str, _Decoder]] = []
    resolved = False

    def decode(data: Any) -> Any:
        nonlocal resolved
        if not resolved:
            fields.extend((name, _decoder(hint)) for name, hint in _field_types(cls))
            resolved = True
        if not isinstance(data, dict) or data.get(_TAG) != cls.__name__:
            raise InvalidFacts(f"not a {cls.__name__}")
        if len(data) != len(fields) + 1:
            raise InvalidFacts(f"a {cls.__name__} with missing or unknown fields")
        record: Any = new(cls)
        values = record.__dict__
        for name, decode_field in fields:
            if name not in data:
                raise InvalidFacts(f"a {cls.__name__} without {name}")
            values[name] = decode_field(data[name])
        return record

    return decode


def _int_record_decoder(cls: type) -> _Decoder:
    names = [name for name, _ in _field_types(cls)]
    new = object.__new__

    def decode(data: Any) -> Any:
        if not isinstance(data, list) or len(data) != len(names):
            raise InvalidFacts(f"not a {cls.__name__}")
        for value in data:
            if not isinstance(value, int) or isinstance(value, bool):
                raise InvalidFacts(f"{value!r} is not a int")
        record: Any = new(cls)
        record.__dict__.update(zip(names, data))
        return record

    return decode


def _union_decoder(members: Tuple[Any, ...]) -> _Decoder:
    optional = _NONE_TYPE in members
    classes = {
        member.__name__: member for member in members if isinstance(member, type) and dataclasses.is_dataclass(member)
    }
    others = [member for member in members if member is not _NONE_TYPE]

    def decode(data: Any) -> Any:
        if data is None:
            if optional:
                return None
            raise InvalidFacts("null where a value is required")
        if isinstance(data, dict):
            tag = data.get(_TAG)
            member = classes.get(tag) if isinstance(tag, str) else None
            if member is None:
                raise InvalidFacts(f"{tag!r} is none of the union's classes")
            return _decoder(member)(data)
        for member in others:
            try:
                return _decoder(member)(data)
            except InvalidFacts:
                continue
        raise InvalidFacts(f"{data!r} is none of the union's types")

    return decode


def _tuple_decoder(items: Tuple[Any, ...]) -> _Decoder:
    if len(items) == 2 and items[1] is Ellipsis:
        item_hint = items[0]

        def decode_all(data: Any) -> Tuple[Any, ...]:
            if not isinstance(data, list):
                raise InvalidFacts("not a list")
            decode_item = _decoder(item_hint)
            return tuple([decode_item(item) for item in data])

        return decode_all

    def decode_each(data: Any) -> Tuple[Any, ...]:
        if not isinstance(data, list):
            raise InvalidFacts("not a list")
        if len(data) != len(items):
            raise InvalidFacts(f"a list of {len(data)} where {len(items)} values are declared")
        return tuple([_decoder(hint)(item) for item, hint in zip(data, items)])

    return decode_each
