"""sanitize_schema and unrename_args: provider-safe names at every level, and back."""

from __future__ import annotations

import copy
import re
from typing import Any, Dict

import pytest

from dispatchlint.runtime import coerce_args, sanitize_schema, unrename_args

PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
INTEGER = {"type": "integer"}


def obj(**properties: Any) -> Dict[str, Any]:
    return {"type": "object", "properties": properties}


def names(schema: Dict[str, Any]) -> list:
    return list(schema["properties"])


RENAMES = [
    pytest.param(["$top"], ["_top"], id="dollar"),
    pytest.param(["filters[]"], ["filters__"], id="brackets"),
    pytest.param(["first name"], ["first_name"], id="space"),
    pytest.param(["caf\u00e9"], ["caf_"], id="non-ASCII"),
    pytest.param([""], ["_"], id="empty"),
    pytest.param(["x" * 70], ["x" * 64], id="too long"),
    pytest.param(["from", "to-do", "a_1"], ["from", "to-do", "a_1"], id="valid names are kept"),
]


@pytest.mark.parametrize("original, sanitized", RENAMES)
def test_sanitized_names(original: list, sanitized: list) -> None:
    schema = {"type": "object", "properties": {name: INTEGER for name in original}}
    assert names(sanitize_schema(schema)) == sanitized


def test_an_alias_never_takes_a_valid_name() -> None:
    renamed = names(sanitize_schema(obj(**{"a b": INTEGER, "a_b": INTEGER})))
    assert renamed[1] == "a_b" and renamed[0].startswith("a_b_") and PROVIDER_NAME.fullmatch(renamed[0])


def test_two_names_with_one_readable_alias_get_distinct_aliases() -> None:
    renamed = names(sanitize_schema(obj(**{"a b": INTEGER, "a.b": INTEGER})))
    assert len(set(renamed)) == 2 and all(PROVIDER_NAME.fullmatch(name) for name in renamed)


def test_aliases_do_not_depend_on_declaration_order() -> None:
    forward = sanitize_schema(obj(**{"a b": INTEGER, "a.b": INTEGER}))["properties"]
    backward = sanitize_schema(obj(**{"a.b": INTEGER, "a b": INTEGER}))["properties"]
    assert sorted(forward) == sorted(backward)


def test_long_colliding_names_stay_within_64_characters() -> None:
    renamed = names(sanitize_schema(obj(**{"y" * 64: INTEGER, "y" * 63 + "!": INTEGER, "y" * 63 + "?": INTEGER})))
    assert len(set(renamed)) == 3 and all(PROVIDER_NAME.fullmatch(name) for name in renamed)


NESTED = {
    "type": "object",
    "properties": {
        "$filter": {"type": "object", "properties": {"from address": {"type": "string"}}, "required": ["from address"]},
        "items[]": {"type": "array", "items": {"$ref": "#/$defs/item"}},
        "choice": {"anyOf": [obj(**{"a b": INTEGER}), {"type": "null"}]},
        "extra": {"type": "object", "additionalProperties": obj(**{"x.y": INTEGER})},
    },
    "required": ["$filter", "choice"],
    "$defs": {"item": obj(**{"@id": {"type": "string"}, "count": INTEGER})},
}


def test_every_object_level_is_sanitized() -> None:
    sanitized = sanitize_schema(NESTED)
    properties = sanitized["properties"]
    assert list(properties) == ["_filter", "items__", "choice", "extra"]
    assert sanitized["required"] == ["_filter", "choice"]
    assert names(properties["_filter"]) == ["from_address"]
    assert properties["_filter"]["required"] == ["from_address"]
    assert names(properties["choice"]["anyOf"][0]) == ["a_b"]
    assert names(properties["extra"]["additionalProperties"]) == ["x_y"]
    assert names(sanitized["$defs"]["item"]) == ["_id", "count"]
    assert properties["items__"]["items"] == {"$ref": "#/$defs/item"}


def test_sanitize_is_pure_and_shares_what_it_does_not_rename() -> None:
    original = copy.deepcopy(NESTED)
    sanitized = sanitize_schema(NESTED)
    assert original == NESTED
    assert sanitized["$defs"]["item"]["properties"]["count"] is NESTED["$defs"]["item"]["properties"]["count"]
    valid = obj(a=INTEGER, b={"type": "array", "items": obj(c=INTEGER)})
    assert sanitize_schema(valid) is valid


@pytest.mark.parametrize(
    "schema", [None, [], "x", 5, True, {"properties": [1]}, {"properties": {1: INTEGER}}], ids=repr
)
def test_sanitize_leaves_what_is_not_a_schema(schema: Any) -> None:
    assert sanitize_schema(schema) is schema


def test_unrename_inverts_sanitize_at_every_level() -> None:
    args = {
        "$filter": {"from address": "ann@example.com"},
        "items[]": [{"@id": "1", "count": 2}],
        "choice": {"a b": 1},
        "extra": {"k": {"x.y": 3}},
    }
    as_sent = {
        "_filter": {"from_address": "ann@example.com"},
        "items__": [{"_id": "1", "count": 2}],
        "choice": {"a_b": 1},
        "extra": {"k": {"x_y": 3}},
    }
    assert unrename_args(NESTED, as_sent) == args
    assert unrename_args(NESTED, args) is args


def test_a_registry_name_is_never_renamed() -> None:
    schema = obj(**{"a b": INTEGER, "a_b": INTEGER})
    alias = names(sanitize_schema(schema))[0]
    assert unrename_args(schema, {"a_b": 1}) == {"a_b": 1}
    assert unrename_args(schema, {alias: 1}) == {"a b": 1}


def test_when_both_names_are_present_both_are_kept() -> None:
    schema = obj(**{"$top": INTEGER})
    args = {"_top": 1, "$top": 2}
    assert unrename_args(schema, args) is args


def test_unrename_keeps_key_order_and_values() -> None:
    schema = obj(**{"$top": INTEGER, "q": {"type": "string"}})
    assert list(unrename_args(schema, {"q": "x", "_top": "5"}).items()) == [("q", "x"), ("$top", "5")]


def test_coerce_restores_names_before_repairing_by_key() -> None:
    schema = {"type": "object", "properties": {"$top": INTEGER, "filters[]": {"type": "array", "items": INTEGER}}}
    assert coerce_args(schema, {"_top": "10", "filters__": "[1, 2]"}) == {"$top": 10, "filters[]": [1, 2]}


def test_unrename_accepts_tool_definitions_and_odd_input() -> None:
    tool = {"type": "function", "function": {"name": "mail", "parameters": obj(**{"$top": INTEGER})}}
    assert unrename_args(tool, {"_top": 1}) == {"$top": 1}
    for args in (None, "x", [1], {1: 2}):
        assert unrename_args(tool, args) is args
