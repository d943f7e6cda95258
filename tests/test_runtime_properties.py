"""Property-based tests over generated schemas and values.

Each property runs twice: a short run by default, and a long one behind ``-m slow``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Callable, Dict, List, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlint.runtime import coerce_args, coerce_tool_call, sanitize_schema, unrename_args
from dispatchlint.runtime._coerce import changed_values
from dispatchlint.runtime._cache import Tier, apply_schema

LENGTHS = [
    pytest.param(settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck)), id="short"),
    pytest.param(
        settings(max_examples=4000, deadline=None, suppress_health_check=list(HealthCheck)),
        id="long",
        marks=pytest.mark.slow,
    ),
]

SCALAR_KINDS = ["null", "boolean", "integer", "number", "string"]
NAMES = st.sampled_from(["a", "b", "n", "tags", "x-y"])
# Keys no generated schema declares: extra keys in valid values.
EXTRA_NAMES = st.sampled_from(["EXTRA", "OTHER"])
PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
# Strings a model sends instead of the value: literals, JSON texts, lists written as text.
mistyped_strings = st.one_of(
    st.sampled_from(
        ["1", " 2 ", "-3", "0.5", "1e3", "3.0", "042", "true", "FALSE", "null", "None", "", "x", "a,b", "[", "{}"]
    ),
    st.recursive(
        json_scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
        max_leaves=5,
    ).map(json.dumps),
)
values = st.recursive(
    st.one_of(json_scalars, mistyped_strings, st.just(3.0)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES | EXTRA_NAMES, inner, max_size=4),
    max_leaves=12,
)


def _type_keyword(kinds: List[str]) -> Any:
    return kinds[0] if len(kinds) == 1 else kinds


leaf_schemas = st.one_of(
    st.sampled_from(SCALAR_KINDS).map(lambda kind: {"type": kind}),
    st.lists(st.sampled_from(SCALAR_KINDS), min_size=1, max_size=3, unique=True).map(lambda kinds: {"type": kinds}),
    st.just({}),
    st.lists(json_scalars, min_size=1, max_size=3).map(lambda options: {"enum": options}),
    json_scalars.map(lambda value: {"const": value}),
)


def _object_schema(properties: Dict[str, Any], required: List[str], additional: Any) -> Dict[str, Any]:
    schema: Dict[str, Any] = {"type": "object", "properties": properties}
    names = [name for name in required if name in properties]
    if names:
        schema["required"] = names
    if additional is not None:
        schema["additionalProperties"] = additional
    return schema


def _container_schemas(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        children.map(lambda items: {"type": "array", "items": items}),
        st.builds(
            lambda prefix, items: {
                "type": "array",
                "prefixItems": prefix,
                **({} if items is None else {"items": items}),
            },
            st.lists(children, min_size=1, max_size=2),
            st.none() | children,
        ),
        st.builds(
            _object_schema,
            st.dictionaries(NAMES, children, max_size=4),
            st.lists(NAMES, max_size=2),
            st.none() | st.just(False) | children,
        ),
        st.lists(children, min_size=2, max_size=3).map(lambda branches: {"anyOf": branches}),
        st.builds(
            lambda kinds, items, properties: {"type": kinds, "items": items, "properties": properties},
            st.lists(st.sampled_from(SCALAR_KINDS + ["array", "object"]), min_size=2, max_size=4, unique=True),
            children,
            st.dictionaries(NAMES, children, max_size=2),
        ),
    )


schemas = st.recursive(leaf_schemas, _container_schemas, max_leaves=8)


def same_json(first: Any, second: Any) -> bool:
    """Equal with JSON types told apart (``True`` is not ``1``, ``1.0`` is not ``1``)."""
    return json.dumps(first, sort_keys=True, default=repr) == json.dumps(second, sort_keys=True, default=repr)


def run(length: Any, strategy: Any, check: Callable[..., None]) -> None:
    length(given(strategy)(check))()


@pytest.mark.parametrize("length", LENGTHS)
def test_never_raises_and_never_mutates(length: Any) -> None:
    def check(case: Any) -> None:
        schema, value = case
        before = copy.deepcopy(value)
        result = apply_schema(schema, value, True)  # not coerce_args: nothing may be absorbed
        assert same_json(value, before)
        if isinstance(value, dict) and not isinstance(result, dict):
            result = value  # arguments that are an object stay one (test_arguments_that_are_an_object_stay_one)
        assert coerce_args(schema, value) is result or same_json(coerce_args(schema, value), result)
        apply_schema(schema, value, False)
        assert same_json(value, before)

    run(length, st.tuples(schemas, values), check)


@pytest.mark.parametrize("length", LENGTHS)
def test_the_specialised_plan_answers_as_the_generic_one(length: Any) -> None:
    """``coerce_args`` runs a function generated for the schema; the generic node walk is the reference."""

    def check(case: Any) -> None:
        schema, value = case
        generic = apply_schema(schema, value, True, Tier.GENERIC)
        specialised = apply_schema(schema, value, True, Tier.SPECIALISED)
        assert same_json(specialised, generic)
        assert (specialised is value) == (generic is value)

    run(length, st.tuples(schemas, values), check)


@pytest.mark.parametrize("length", LENGTHS)
def test_idempotent(length: Any) -> None:
    def check(case: Any) -> None:
        schema, value = case
        once = coerce_args(schema, value)
        assert coerce_args(schema, once) is once

    run(length, st.tuples(schemas, values), check)


arguments = st.dictionaries(NAMES | EXTRA_NAMES, values, max_size=4)


@pytest.mark.parametrize("length", LENGTHS)
def test_arguments_that_are_an_object_stay_one(length: Any) -> None:
    """As the overloads say: a dict gives a dict (whatever the schema's top admits), None a dict, a text a dict
    or the text itself."""

    def check(case: Any) -> None:
        schema, args = case
        assert isinstance(coerce_args(schema, args), dict)
        assert isinstance(coerce_tool_call(schema, args), dict)
        assert isinstance(coerce_tool_call(schema, None), dict)
        for text in (json.dumps(args), json.dumps(args["a"]) if "a" in args else "[1]", "{"):
            result = coerce_tool_call(schema, text)
            assert result is text or isinstance(result, dict)

    run(length, st.tuples(schemas, arguments), check)


def valid_values(schema: Any) -> st.SearchStrategy:
    """Values the schema admits (JSON Schema semantics), integers as Python ints."""
    if "anyOf" in schema:
        return st.one_of([valid_values(branch) for branch in schema["anyOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    declared = schema.get("type")
    if declared is None:
        return values  # {}: anything goes
    kinds = [declared] if isinstance(declared, str) else declared
    return st.one_of([_valid_of_kind(schema, kind) for kind in kinds])


def _valid_of_kind(schema: Dict[str, Any], kind: str) -> st.SearchStrategy:
    if kind == "array":
        prefix = [valid_values(sub) for sub in schema.get("prefixItems", [])]
        rest = schema.get("items", {})
        return st.builds(
            lambda head, tail: head + tail,
            st.tuples(*prefix).map(list) if prefix else st.just([]),
            st.lists(valid_values(rest), max_size=3),
        )
    if kind == "object":
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties", {})
        required = schema.get("required", [])
        extra = (
            st.just({}) if additional is False else st.dictionaries(EXTRA_NAMES, valid_values(additional), max_size=2)
        )
        return st.builds(
            lambda declared, chosen, more: {**more, **{name: declared[name] for name in declared if name in chosen}},
            st.fixed_dictionaries({name: valid_values(sub) for name, sub in properties.items()}),
            st.sets(st.sampled_from(sorted(properties)) if properties else st.nothing()).map(
                lambda names: names | set(required)
            ),
            extra,
        )
    return {
        "null": st.none(),
        "boolean": st.booleans(),
        "integer": st.integers(),
        "number": st.integers() | st.floats(allow_nan=False, allow_infinity=False),
        "string": st.text(max_size=6) | mistyped_strings,
    }[kind]


@pytest.mark.parametrize("length", LENGTHS)
def test_valid_values_come_back_as_the_same_object(length: Any) -> None:
    cases = schemas.flatmap(lambda schema: st.tuples(st.just(schema), valid_values(schema)))

    def check(case: Any) -> None:
        schema, value = case
        assert coerce_args(schema, value) is value
        assert unrename_args(schema, value) is value

    run(length, cases, check)


def _places(schema: Any, tokens: List[str]) -> List[Any]:
    """Every subschema that can apply at a pointer (union branches are all followed)."""
    if not isinstance(schema, dict):
        return [{}]
    if "anyOf" in schema:
        return [place for branch in schema["anyOf"] for place in _places(branch, tokens)]
    if not tokens:
        return [schema]
    token, rest = tokens[0], tokens[1:]
    reached: List[Any] = []
    properties = schema.get("properties", {})
    reached.append(properties[token] if token in properties else schema.get("additionalProperties", {}))
    if token.isdigit():
        prefix = schema.get("prefixItems", [])
        index = int(token)
        reached.append(prefix[index] if index < len(prefix) else schema.get("items", {}))
    return [place for sub in reached for place in _places(sub, rest)]


def _admits(schema: Any, kind: str) -> bool:
    if not isinstance(schema, dict):
        return schema is not False
    if "anyOf" in schema:
        return any(_admits(branch, kind) for branch in schema["anyOf"])
    declared = schema.get("type")
    if declared is None:
        return True
    kinds = [declared] if isinstance(declared, str) else declared
    return kind in kinds or (kind == "integer" and "number" in kinds)


def _listed(schema: Any, value: Any) -> bool:
    """A value repaired at a place with ``enum`` or ``const`` is one of the listed values."""
    if not isinstance(schema, dict):
        return True
    listed = [schema["const"]] if "const" in schema else schema.get("enum")
    return listed is None or any(same_json(value, option) or value == option for option in listed)


def _kind(value: Any) -> str:
    for kind, python_type in (("null", type(None)), ("boolean", bool), ("integer", int), ("number", float)):
        if isinstance(value, python_type):
            return kind
    return "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"


@pytest.mark.parametrize("length", LENGTHS)
def test_a_repaired_value_is_of_a_kind_admitted_at_its_place(length: Any) -> None:
    """Of an admitted kind, and one of the listed values where the place has ``enum`` or ``const``."""

    def check(case: Any) -> None:
        schema, value = case
        for pointer, _before, after in changed_values(unrename_args(schema, value), coerce_args(schema, value)):
            tokens = [token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:]]
            places = _places(schema, tokens)
            assert any(_admits(place, _kind(after)) and _listed(place, after) for place in places), (pointer, after)

    run(length, st.tuples(schemas, values), check)


property_names = st.one_of(
    st.text(max_size=70),
    st.sampled_from(["$top", "filters[]", "a b", "a_b", "a.b", "a-b", "", "x" * 64, "x" * 65, "from", "caf\u00e9"]),
)


def _named_object(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.dictionaries(property_names, children, max_size=5).map(
        lambda properties: {"type": "object", "properties": properties, "additionalProperties": False}
    )


named_schemas = st.recursive(
    st.just({"type": "integer"}),
    lambda children: st.one_of(
        _named_object(children),
        _named_object(children).map(lambda schema: {"type": "array", "items": schema}),
        _named_object(children).map(lambda schema: {"anyOf": [schema, {"type": "null"}]}),
    ),
    max_leaves=10,
)


def _as_sent(original: Any, sanitized: Any, value: Any) -> Any:
    """``value`` (valid for ``original``) with the names a model sees in ``sanitized``."""
    if "anyOf" in original:
        return value if value is None else _as_sent(original["anyOf"][0], sanitized["anyOf"][0], value)
    if original.get("type") == "array":
        return [_as_sent(original["items"], sanitized["items"], item) for item in value]
    if original.get("type") == "object":
        renamed = dict(zip(original["properties"], sanitized["properties"]))
        return {
            renamed[name]: _as_sent(original["properties"][name], sanitized["properties"][renamed[name]], item)
            for name, item in value.items()
        }
    return value


def _check_names(schema: Any) -> Optional[int]:
    """Every property name valid, and as many as before (so no two collided), at every level."""
    if "anyOf" in schema:
        return _check_names(schema["anyOf"][0])
    if schema.get("type") == "array":
        return _check_names(schema["items"])
    for name, sub in schema.get("properties", {}).items():
        assert PROVIDER_NAME.fullmatch(name), name
        _check_names(sub)
    return None


@pytest.mark.parametrize("length", LENGTHS)
def test_sanitize_then_unrename_round_trips(length: Any) -> None:
    cases = named_schemas.flatmap(lambda schema: st.tuples(st.just(schema), valid_values(schema)))

    def check(case: Any) -> None:
        schema, value = case
        sanitized = sanitize_schema(schema)
        assert sanitized == sanitize_schema(copy.deepcopy(schema))
        _check_names(sanitized)
        sent = _as_sent(schema, sanitized, value)
        assert unrename_args(schema, sent) == value
        assert coerce_args(schema, sent) == value

    run(length, cases, check)
