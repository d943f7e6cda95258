"""Hostile input: no exception, no RecursionError, and the run completes (time is linear; not asserted).

These tests call the plan directly as well as ``coerce_args``: ``coerce_args`` would hide an exception behind
its never-raise guarantee, and the point is that nothing needs hiding.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Tuple

import pytest

from dispatchlint.runtime import coerce_args, sanitize_schema, unrename_args
from dispatchlint.runtime._cache import apply_schema

DEEP = 100_000
BIG = 10 * 1024 * 1024

INTEGER = {"type": "integer"}
TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"v": INTEGER, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
    "$ref": "#/$defs/node",
}
SCHEMAS = [
    pytest.param({"type": "array", "items": INTEGER}, id="array"),
    pytest.param({"type": "object", "additionalProperties": INTEGER}, id="object"),
    pytest.param({"type": "integer"}, id="integer"),
    pytest.param({"type": "number"}, id="number"),
    pytest.param({"type": "boolean"}, id="boolean"),
    pytest.param({"type": ["null", "array"]}, id="null or array"),
    pytest.param({"type": "array", "items": {"type": "string"}}, id="array of strings"),
    pytest.param({"anyOf": [{"type": "array"}, {"type": "object"}, INTEGER]}, id="union"),
    pytest.param(TREE, id="recursive $ref"),
    pytest.param({"$ref": "#"}, id="$ref to itself"),
]


def repaired(schema: Any, value: Any) -> Any:
    """The plan run directly, so that an exception would surface instead of being absorbed by coerce_args."""
    return apply_schema(schema, value, True)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_json_nested_100_000_levels(schema: Any) -> None:
    for text in ("[" * DEEP + "]" * DEEP, '{"a":' * DEEP + "1" + "}" * DEEP):
        assert repaired(schema, text) is text
        assert repaired(schema, {"v": text, "kids": text}) is not None


@pytest.mark.parametrize("schema", SCHEMAS)
def test_ten_megabyte_strings(schema: Any) -> None:
    for text in ("x" * BIG, "1" * BIG, " " * BIG + "true", "-" + "9" * BIG, "[" * BIG, "a," * (BIG // 2)):
        repaired(schema, text)


def test_ten_megabyte_json_list_is_repaired() -> None:
    text = "[" + '"1",' * (BIG // 4) + '"1"]'
    result = coerce_args({"type": "array", "items": INTEGER}, text)
    assert len(result) == BIG // 4 + 1 and result[0] == 1 and result[-1] == 1


def _nested(depth: int, make: Any) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = make(value)
    return value


@functools.lru_cache(maxsize=None)
def _deep_native_values() -> Tuple[Any, ...]:
    """Built once for all the schemas below (immutable in use: the coercer never mutates its input)."""
    return _nested(DEEP, lambda inner: [inner]), _nested(DEEP, lambda inner: {"v": "1", "kids": [inner]})


@pytest.mark.parametrize("schema", SCHEMAS)
def test_native_values_nested_100_000_levels(schema: Any) -> None:
    for value in _deep_native_values():
        repaired(schema, value)


def test_recursive_schema_repairs_within_the_depth_bound() -> None:
    tree = {"v": "1", "kids": [{"v": "2", "kids": [{"v": "3"}]}]}
    assert repaired(TREE, tree) == {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}


def test_mutually_recursive_references() -> None:
    schema = {
        "$defs": {
            "a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}, "n": INTEGER}},
            "b": {"$ref": "#/$defs/a"},
        },
        "$ref": "#/$defs/b",
    }
    assert repaired(schema, {"n": "1", "b": {"n": "2"}}) == {"n": 1, "b": {"n": 2}}


def test_cyclic_python_schema() -> None:
    schema: Dict[str, Any] = {"type": "object", "properties": {"n": INTEGER}}
    schema["properties"]["child"] = schema
    schema["additionalProperties"] = schema
    assert repaired(schema, {"n": "1", "child": {"n": "2"}}) == {"n": 1, "child": {"n": 2}}
    assert sanitize_schema(schema) is schema


def test_schema_nested_100_000_levels() -> None:
    schema: Any = INTEGER
    for _ in range(DEEP):
        schema = {"type": "object", "properties": {"a b": schema}}
    repaired(schema, {"a b": {"a b": "1"}})
    unrename_args(schema, {"a_b": {"a_b": 1}})
    sanitize_schema(schema)


def test_shared_subschemas_are_compiled_once() -> None:
    # 2**60 paths through 60 shared levels: compiling or sanitizing per path would never end.
    schema: Any = INTEGER
    for _ in range(60):
        schema = {"type": "object", "properties": {"a": schema, "b c": schema}}
    repaired(schema, {"a": {"a": "1"}})
    sanitize_schema(schema)


def test_overlapping_recursive_unions_stop_at_the_budget() -> None:
    # Two branches that both admit arrays, at every level: the union rules would be exponential in the depth.
    schema = {
        "$defs": {
            "t": {
                "anyOf": [
                    {"type": "array", "items": {"$ref": "#/$defs/t"}},
                    {"type": "array", "items": {"$ref": "#/$defs/t"}, "maxItems": 9},
                ]
            }
        },
        "$ref": "#/$defs/t",
    }
    value = _nested(40, lambda inner: [inner, inner])
    repaired(schema, value)


@pytest.mark.parametrize("schema", [None, [], [INTEGER], "object", 5, 1.5, True, False, object(), b"{}"], ids=repr)
def test_schema_that_is_not_a_dict(schema: Any) -> None:
    args = {"n": "1"}
    assert repaired(schema, args) is args
    assert unrename_args(schema, args) is args


class _Hostile:
    """An object whose comparisons and hash raise."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no")

    def __hash__(self) -> int:
        raise RuntimeError("no")


@pytest.mark.parametrize(
    "args",
    [
        object(),
        {1, 2},
        b"bytes",
        {(1, 2): "tuple key"},
        {"n": _Hostile()},
        [_Hostile()],
        float("nan"),
        {"n": float("inf")},
    ],
    ids=repr,
)
def test_arguments_of_any_python_type(args: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"enum": [1]}},
        "additionalProperties": {"anyOf": [INTEGER, {"const": 2}]},
    }
    coerce_args(schema, args)
    coerce_args({"anyOf": [{"type": "array", "items": {"const": 1}}, {"type": "array", "items": {"const": 2}}]}, args)


def test_schema_with_hostile_values() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "object", "properties": {"k": {"anyOf": [{"const": _Hostile()}, INTEGER]}}}},
    }
    args = {"n": {"k": "1"}}
    assert coerce_args(schema, args) in (args, {"n": {"k": 1}})
