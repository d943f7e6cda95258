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
    """The decoder of ``cls``, compiled from its annotations (never from anything an entry holds): each field
    checked inline where its type is a string, a number, a flag or a tuple of strings, by its type's decoder
    otherwise. A warm run decodes a million records; a call per field and per string was most of that time.

    Every field is checked here, so the record is filled in directly: a frozen dataclass's ``__init__`` would
    set each field again. The fields' decoders are looked up on first use: a dataclass may hold its own type.
    """
    if getattr(cls, "__slots__", None) is not None or hasattr(cls, "__post_init__"):
        raise TypeError(f"the facts codec fills in records directly, which {cls.__name__} does not allow")
    if _all_int(cls):
        return _int_record_decoder(cls)
    fields = _field_types(cls)
    name = cls.__name__
    lines = [
        "def decode(data):",
        "    if not resolved:",
        "        resolve()",
        f"    if data.__class__ is not dict or data.get({_TAG!r}) != {name!r}:",
        f"        raise InvalidFacts({f'not a {name}'!r})",
        f"    if len(data) != {len(fields) + 1}:",
        f"        raise InvalidFacts({f'a {name} with missing or unknown fields'!r})",
    ]
    if fields:
        lines += [
            "    try:",
            *(f"        v{number} = data[{field!r}]" for number, (field, _) in enumerate(fields)),
            "    except KeyError as missing:",
            f"        raise InvalidFacts(f{f'a {name} without {{missing}}'!r}) from None",
        ]
    decoders: Dict[str, Any] = {}
    for number, (_, hint) in enumerate(fields):
        lines += _field_check(f"v{number}", hint, decoders)
    lines += ["    record = new(cls)", "    values = record.__dict__"]
    lines += [f"    values[{field!r}] = v{number}" for number, (field, _) in enumerate(fields)]
    lines.append("    return record")
    namespace: Dict[str, Any] = {"InvalidFacts": InvalidFacts, "new": object.__new__, "cls": cls, "resolved": False}

    def resolve() -> None:
        namespace.update((key, _decoder(hint)) for key, hint in decoders.items())
        namespace["resolved"] = True

    namespace["resolve"] = resolve
    exec("\n".join(lines), namespace)  # source made above from the class's own annotations, never from an entry
    return cast(_Decoder, namespace["decode"])


#: The types a field is checked against inline, by their exact class (what ``json.loads`` makes has no other).
_INLINE = {str: "str", int: "int", bool: "bool"}


def _field_check(value: str, hint: Any, decoders: Dict[str, Any]) -> List[str]:
    """The lines that check (and, for a tuple or a record, convert) the field held in the variable ``value``."""
    if hint in _INLINE:
        return [
            f"    if {value}.__class__ is not {_INLINE[hint]}:",
            f"        raise InvalidFacts(f'{{{value}!r}} is not a {_INLINE[hint]}')",
        ]
    members = typing.get_args(hint)
    if (
        typing.get_origin(hint) is typing.Union
        and len(members) == 2
        and members[1] is _NONE_TYPE
        and members[0] in _INLINE
    ):
        kind = _INLINE[members[0]]
        return [
            f"    if {value} is not None and {value}.__class__ is not {kind}:",
            f"        raise InvalidFacts(f'{{{value}!r}} is not a {kind} or null')",
        ]
    if typing.get_origin(hint) is tuple and len(members) == 2 and members[1] is Ellipsis and members[0] is str:
        return [
            f"    if {value}.__class__ is not list:",
            "        raise InvalidFacts('not a list')",
            f"    for item in {value}:",
            "        if item.__class__ is not str:",
            "            raise InvalidFacts(f'{item!r} is not a str')",
            f"    {value} = tuple({value})",
        ]
    decoder = f"decode_{value}"
    if typing.get_origin(hint) is tuple and len(members) == 2 and members[1] is Ellipsis:
        decoders[decoder] = members[0]
        return [
            f"    if {value}.__class__ is not list:",
            "        raise InvalidFacts('not a list')",
            f"    {value} = tuple([{decoder}(item) for item in {value}]) if {value} else ()",
        ]
    decoders[decoder] = hint
    return [f"    {value} = {decoder}({value})"]


def _int_record_decoder(cls: type) -> _Decoder:
    """The decoder of a record of integers (a span), stored as the list of its values: compiled as the records'
    decoder is, each value checked inline."""
    names = [name for name, _ in _field_types(cls)]
    values = [f"v{number}" for number in range(len(names))]
    lines = [
        "def decode(data):",
        f"    if data.__class__ is not list or len(data) != {len(names)}:",
        f"        raise InvalidFacts({f'not a {cls.__name__}'!r})",
        f"    {', '.join(values)}, = data",
        f"    if {' or '.join(f'{value}.__class__ is not int' for value in values)}:",
        f"        raise InvalidFacts(f'{{data!r}} is not a {cls.__name__}')",
        "    record = new(cls)",
        "    fields = record.__dict__",
        *(f"    fields[{name!r}] = {value}" for name, value in zip(names, values)),
        "    return record",
    ]
    namespace: Dict[str, Any] = {"InvalidFacts": InvalidFacts, "new": object.__new__, "cls": cls}
    exec("\n".join(lines), namespace)  # source made above from the class's own annotations, never from an entry
    return cast(_Decoder, namespace["decode"])


def _union_decoder(members: Tuple[Any, ...]) -> _Decoder:
    optional = _NONE_TYPE in members
    classes = {
        member.__name__: member for member in members if isinstance(member, type) and dataclasses.is_dataclass(member)
    }
    others = [member for member in members if member is not _NONE_TYPE]
    # The members' decoders, looked up on first use (a member may hold this union).
    by_tag: Dict[str, _Decoder] = {}
    in_order: List[_Decoder] = []

    def decode(data: Any) -> Any:
        if data is None:
            if optional:
                return None
            raise InvalidFacts("null where a value is required")
        if data.__class__ is dict:
            tag = data.get(_TAG)
            if tag.__class__ is not str:
                raise InvalidFacts(f"{tag!r} is none of the union's classes")
            decode_member = by_tag.get(tag)
            if decode_member is None:
                member = classes.get(tag)
                if member is None:
                    raise InvalidFacts(f"{tag!r} is none of the union's classes")
                decode_member = by_tag[tag] = _decoder(member)
            return decode_member(data)
        if len(in_order) < len(others):
            in_order[:] = [_decoder(member) for member in others]
        for decode_member in in_order:
            try:
                return decode_member(data)
            except InvalidFacts:
                continue
        raise InvalidFacts(f"{data!r} is none of the union's types")

    return decode


def _tuple_decoder(items: Tuple[Any, ...]) -> _Decoder:
    variadic = len(items) == 2 and items[1] is Ellipsis
    if variadic and items[0] in _INLINE or not variadic and all(item in _INLINE for item in items):
        return _inline_tuple_decoder(items, variadic)
    # The items' decoders, looked up on first use (an item may hold this tuple's type).
    decoders: List[_Decoder] = []

    def decode_all(data: Any) -> Tuple[Any, ...]:
        if data.__class__ is not list:
            raise InvalidFacts("not a list")
        if not decoders:
            decoders.append(_decoder(items[0]))
        decode_item = decoders[0]
        return tuple([decode_item(item) for item in data])

    def decode_each(data: Any) -> Tuple[Any, ...]:
        if data.__class__ is not list:
            raise InvalidFacts("not a list")
        if len(data) != len(items):
            raise InvalidFacts(f"a list of {len(data)} where {len(items)} values are declared")
        if not decoders:
            decoders.extend(_decoder(hint) for hint in items)
        return tuple([decode_item(item) for decode_item, item in zip(decoders, data)])

    return decode_all if variadic else decode_each


def _inline_tuple_decoder(items: Tuple[Any, ...], variadic: bool) -> _Decoder:
    """A tuple of strings, numbers or flags (names, a name and its target), checked by their exact class."""
    kinds = items[:1] if variadic else items

    def decode(data: Any) -> Tuple[Any, ...]:
        if data.__class__ is not list:
            raise InvalidFacts("not a list")
        if variadic:
            kind = kinds[0]
            for item in data:
                if item.__class__ is not kind:
                    raise InvalidFacts(f"{item!r} is not a {kind.__name__}")
            return tuple(data)
        if len(data) != len(kinds):
            raise InvalidFacts(f"a list of {len(data)} where {len(kinds)} values are declared")
        for item, kind in zip(data, kinds):
            if item.__class__ is not kind:
                raise InvalidFacts(f"{item!r} is not a {kind.__name__}")
        return tuple(data)

    return decode
