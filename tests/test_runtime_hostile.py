"""Hostile input: each test says what comes back, and nothing raises or recurses past the stack.

These tests call the plan directly as well as ``coerce_args``: ``coerce_args`` would hide an exception behind
its never-raise guarantee, and the point is that nothing needs hiding. Bounds on time and memory are asserted
in child processes (``_bounded_child``), where a hang or a blow-up is stopped and reported instead of taking
the test run, or the machine, with it.
"""

from __future__ import annotations

import functools
import json
import resource
import subprocess
import sys
import textwrap
from typing import Any, Dict, Tuple

import pytest

from conftest import subprocess_env
from dispatchlint.runtime import coerce_args, sanitize_schema, unrename_args
from dispatchlint.runtime._budget import UnionBudgetError
from dispatchlint.runtime._cache import PlanCache, Tier, apply_schema
from dispatchlint.runtime._compiler import compile_schema
from dispatchlint.runtime._schema import MAX_DEPTH
from dispatchlint.runtime._specialize import MAX_FUNCTIONS, MAX_LINES

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
SCHEMAS: Dict[str, Any] = {
    "array": {"type": "array", "items": INTEGER},
    "object": {"type": "object", "additionalProperties": INTEGER},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "null or array": {"type": ["null", "array"]},
    "array of strings": {"type": "array", "items": {"type": "string"}},
    "union": {"anyOf": [{"type": "array"}, {"type": "object"}, INTEGER]},
    "recursive $ref": TREE,
    "$ref to itself": {"$ref": "#"},
}
#: The schemas that admit arrays whose elements take any string: one string becomes a one-element array.
WRAPS_A_STRING = {"null or array", "array of strings", "union"}


def repaired(schema: Any, value: Any) -> Any:
    """The plan run directly, so that an exception would surface instead of being absorbed by coerce_args."""
    return apply_schema(schema, value, True)


@pytest.mark.parametrize("name", SCHEMAS)
def test_json_text_nested_100_000_levels_is_kept_as_it_came(name: str) -> None:
    for text in ("[" * DEEP + "]" * DEEP, '{"a":' * DEEP + "1" + "}" * DEEP):
        assert repaired(SCHEMAS[name], text) is text
        arguments = {"v": text, "kids": text}
        result = repaired(SCHEMAS[name], arguments)
        if name == "null or array":  # an object is one element of the array there
            assert result == [arguments] and result[0] is arguments
        else:
            assert result is arguments


TEN_MEGABYTE_STRINGS = {
    "letters": "x" * BIG,
    "digits": "1" * BIG,  # longer than any integer literal the coercer converts
    "negative digits": "-" + "9" * BIG,
    "spaces, then true": " " * BIG + "true",
    "brackets": "[" * BIG,  # not JSON, and may be a list written as text
    "commas": "a," * (BIG // 2),  # may be a list written as text
}


@pytest.mark.parametrize("name", SCHEMAS)
def test_ten_megabyte_strings_are_kept_or_wrapped(name: str) -> None:
    for label, text in TEN_MEGABYTE_STRINGS.items():
        result = repaired(SCHEMAS[name], text)
        if name == "boolean" and label == "spaces, then true":
            assert result is True
        elif name in WRAPS_A_STRING and label not in ("brackets", "commas"):
            assert result == [text] and result[0] is text, label
        else:
            assert result is text, label


def test_ten_megabyte_json_list_is_repaired() -> None:
    text = "[" + '"1",' * (BIG // 4) + '"1"]'
    result = coerce_args({"type": "array", "items": INTEGER}, text)
    assert len(result) == BIG // 4 + 1 and result[0] == 1 and result[-1] == 1


def _nested(depth: int, make: Any, leaf: Any = 1) -> Any:
    value: Any = leaf
    for _ in range(depth):
        value = make(value)
    return value


@functools.lru_cache(maxsize=None)
def _deep_native_values() -> Tuple[Any, Any]:
    """Built once for all the schemas below (immutable in use: the coercer never mutates its input)."""
    return _nested(DEEP, lambda inner: [inner]), _nested(DEEP, lambda inner: {"v": "1", "kids": [inner]})


@pytest.mark.parametrize("name", sorted(set(SCHEMAS) - {"recursive $ref", "object", "null or array"}))
def test_native_values_nested_100_000_levels_are_kept(name: str) -> None:
    # Lists of lists are admitted (or cannot be repaired) at each of these places, and so are the objects.
    for value in _deep_native_values():
        assert repaired(SCHEMAS[name], value) is value


def test_native_values_nested_100_000_levels_are_repaired_at_the_top_only() -> None:
    lists, trees = _deep_native_values()
    assert repaired(SCHEMAS["object"], lists) is lists
    assert repaired(TREE, lists) is lists
    top = repaired(SCHEMAS["object"], trees)
    assert top == {"v": 1, "kids": trees["kids"]} and top["kids"] is trees["kids"]
    assert repaired(SCHEMAS["null or array"], trees) == [trees]


def test_a_recursive_schema_repairs_values_down_to_the_depth_bound_and_leaves_the_rest() -> None:
    _, trees = _deep_native_values()
    result = repaired(TREE, trees)
    # Each level of the tree takes three places of the schema walk (the node, "kids", its items' reference).
    levels = MAX_DEPTH // 3
    original = trees
    for _ in range(levels):
        assert result["v"] == 1 and original["v"] == "1"
        result, original = result["kids"][0], original["kids"][0]
    assert result is original  # below the bound: the very same objects, unrepaired


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


def test_a_schema_nested_100_000_levels_is_followed_to_the_depth_bound_only() -> None:
    schema: Any = INTEGER
    for _ in range(DEEP):
        schema = {"type": "object", "properties": {"a b": schema}}
    arguments = {"a b": {"a b": "1"}}
    assert repaired(schema, arguments) is arguments  # the integer is 100,000 levels down: "1" is an object's place
    assert unrename_args(schema, {"a_b": {"a_b": 1}}) == {"a b": {"a b": 1}}
    sanitized = sanitize_schema(schema)
    level, original = sanitized, schema
    for _ in range(MAX_DEPTH):
        assert list(level["properties"]) == ["a_b"]
        level, original = level["properties"]["a_b"], original["properties"]["a b"]
    assert level is original  # below the bound: shared with the original, not renamed


def test_shared_subschemas_compile_to_one_node_per_level() -> None:
    # 2**60 paths through 60 shared levels: compiling, sanitizing or specialising per path would never end.
    schema: Any = INTEGER
    for _ in range(60):
        schema = {"type": "object", "properties": {"a": schema, "b c": schema}}
    compiled = compile_schema(schema, True)
    assert len(set(compiled.origins.values())) == 61
    assert PlanCache(True).plan(schema).specialisation().lines <= MAX_LINES
    mistyped = _nested(60, lambda inner: {"b c": inner}, leaf="7")
    assert repaired(schema, mistyped) == _nested(60, lambda inner: {"b c": inner}, leaf=7)
    assert apply_schema(schema, mistyped, True, Tier.SPECIALISED) == _nested(60, lambda inner: {"b c": inner}, leaf=7)
    sanitized = sanitize_schema(schema)
    assert list(sanitized["properties"]) == ["a", "b_c"]
    assert sanitized["properties"]["a"] is sanitized["properties"]["b_c"]  # still shared, level by level


def test_overlapping_recursive_unions_stop_at_the_budget_and_keep_the_input() -> None:
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
    with pytest.raises(UnionBudgetError):
        PlanCache(True).plan(schema).generic(value)
    assert repaired(schema, value) is value
    assert coerce_args(schema, value) is value
    assert repaired(schema, [[[]]]) == [[[]]]  # a small value fits within the budget: nothing to repair


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
def test_arguments_of_any_python_type_are_kept_without_comparing_them(args: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"enum": [1]}},
        "additionalProperties": {"anyOf": [INTEGER, {"const": 2}]},
    }
    arrays = {"anyOf": [{"type": "array", "items": {"const": 1}}, {"type": "array", "items": {"const": 2}}]}
    for each in (schema, arrays):
        assert repaired(each, args) is args  # a hostile __eq__ or __hash__ called would raise here
        assert coerce_args(each, args) is args


def test_a_hostile_value_in_the_schema_is_never_compared_and_the_other_branch_repairs() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "object", "properties": {"k": {"anyOf": [{"const": _Hostile()}, INTEGER]}}}},
    }
    assert repaired(schema, {"n": {"k": "1"}}) == {"n": {"k": 1}}


# ------------------------------------------------------------------------------------------------ bounded


def _self_referring(properties: int) -> Dict[str, Any]:
    """An object that refers to itself through ``properties`` properties (about 40 bytes each)."""
    refs = {f"p{index}": {"$ref": "#/$defs/n"} for index in range(properties)}
    return {"$defs": {"n": {"type": "object", "properties": {**refs, "v": INTEGER}}}, "$ref": "#/$defs/n"}


def _levels(depth: int, width: int) -> Dict[str, Any]:
    """``depth`` definitions, each an object whose ``width`` properties all refer to the next: width**depth paths."""
    definitions: Dict[str, Any] = {}
    for level in range(depth):
        refs = {f"p{index}": {"$ref": f"#/$defs/l{level + 1}"} for index in range(width)}
        definitions[f"l{level}"] = {"type": "object", "properties": refs}
    definitions[f"l{depth}"] = {"type": "object", "properties": {"v": INTEGER}}
    return {"$defs": definitions, "$ref": "#/$defs/l0"}


def _arrays_of_self(properties: int) -> Dict[str, Any]:
    """An array of objects whose properties are arrays of the same objects again."""
    refs = {f"p{index}": {"$ref": "#/$defs/n"} for index in range(properties)}
    item = {"type": "object", "properties": {**refs, "v": INTEGER}}
    definitions = {"n": {"type": "array", "items": item}}
    return {"$defs": definitions, "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}


#: Each took seconds and gigabytes (the first two up to 40 s and 2.9 GB for twenty calls) when every property
#: path was written out in line.
HOSTILE_SCHEMAS = {
    "an object referring to itself through ten properties": (_self_referring(10), {"v": "1", "p3": {"v": "2"}}),
    "an object referring to itself through 25 properties": (_self_referring(25), {"p24": {"p0": {"v": "3"}}}),
    "five levels of five properties": (_levels(5, 5), {"p0": {"p4": {"p2": {"p1": {"p3": {"v": "5"}}}}}}),
    "arrays of itself through 20 properties": (_arrays_of_self(20), {"a": [{"v": "1", "p7": '[{"v": "3"}]'}]}),
}
REPAIRED = {
    "an object referring to itself through ten properties": {"v": 1, "p3": {"v": 2}},
    "an object referring to itself through 25 properties": {"p24": {"p0": {"v": 3}}},
    "five levels of five properties": {"p0": {"p4": {"p2": {"p1": {"p3": {"v": 5}}}}}},
    "arrays of itself through 20 properties": {"a": [{"v": 1, "p7": [{"v": 3}]}]},
}
_CHILD_CALLS = """
import json, sys, time, tracemalloc
from dispatchlint.runtime import coerce_tool_call
from dispatchlint.runtime._cache import PLANS, SPECIALISE_AFTER, Tier, apply_schema

schema, arguments = json.loads(sys.stdin.read())
raw = json.dumps(arguments)
tracemalloc.start()
start = time.perf_counter()
first = coerce_tool_call(schema, raw)
first_call = time.perf_counter() - start
plan = PLANS[True].plan(schema)
specialised_after_one_call = plan.warm
slowest_call = 0.0
for _ in range(SPECIALISE_AFTER):  # one of them specialises the plan
    start = time.perf_counter()
    coerce_tool_call(schema, raw)
    slowest_call = max(slowest_call, time.perf_counter() - start)
specialisation = plan.specialisation()
print(json.dumps({
    "first": first,
    "first_call": first_call,
    "specialised_after_one_call": specialised_after_one_call,
    "specialised_now": plan.warm,
    "slowest_call": slowest_call,
    "functions": specialisation.functions,
    "lines": specialisation.lines,
    "same_answer": apply_schema(schema, arguments, True, Tier.SPECIALISED)
        == apply_schema(schema, arguments, True, Tier.GENERIC),
    "peak_megabytes": tracemalloc.get_traced_memory()[1] / 1024 / 1024,
}))
"""


def _bounded_child(code: str, stdin: str = "", seconds: float = 60, megabytes: int = 1024) -> Dict[str, Any]:
    """What a child interpreter running ``code`` prints (as JSON), under a time and an address-space bound."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes * 1024 * 1024, megabytes * 1024 * 1024))

    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        input=stdin,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=seconds,
        preexec_fn=limit_memory,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    result: Dict[str, Any] = json.loads(completed.stdout)
    return result


@pytest.mark.parametrize("name", HOSTILE_SCHEMAS)
def test_a_hostile_schema_is_repaired_within_bounds_and_specialised_later_within_bounds(name: str) -> None:
    schema, arguments = HOSTILE_SCHEMAS[name]
    assert len(json.dumps(schema)) < 1200
    measured = _bounded_child(_CHILD_CALLS, json.dumps([schema, arguments]), seconds=60, megabytes=1024)
    assert measured["first"] == REPAIRED[name]
    # The first call runs the generic plan only: it costs what compiling and walking the schema costs.
    assert not measured["specialised_after_one_call"]
    assert measured["first_call"] < 2.0
    assert measured["specialised_now"] and measured["same_answer"]
    assert 0 < measured["functions"] <= MAX_FUNCTIONS and 0 < measured["lines"] <= MAX_LINES
    assert measured["slowest_call"] < 2.0  # the call that specialised
    assert measured["peak_megabytes"] < 50  # what the calls allocated at most (the process is bounded at 1 GiB)


def test_a_recursive_reference_is_called_rather_than_written_out_again() -> None:
    specialisation = PlanCache(True).plan(_self_referring(10)).specialisation()
    # A function per level of the recursion, each with the eleven properties once (about 190 lines); written out
    # in line four levels deep, one function alone would hold 10**4 copies of them.
    assert specialisation.functions >= 2 and specialisation.lines / specialisation.functions < 250


@pytest.mark.parametrize("name", HOSTILE_SCHEMAS)
def test_a_hostile_schema_is_repaired_alike_by_the_generic_and_the_specialised_plan(name: str) -> None:
    schema, arguments = HOSTILE_SCHEMAS[name]
    assert apply_schema(schema, arguments, True, Tier.GENERIC) == REPAIRED[name]
    assert apply_schema(schema, arguments, True, Tier.SPECIALISED) == REPAIRED[name]


@pytest.mark.skipif(not hasattr(sys, "set_int_max_str_digits"), reason="Python's int() has no bound to lift")
def test_long_integer_literals_are_refused_in_linear_time_where_python_lifted_its_bound() -> None:
    code = """
        import json, sys, time
        from dispatchlint.runtime import coerce_tool_call
        sys.set_int_max_str_digits(0)
        raw = '{"n": ' + "7" * 2_000_000 + '}'
        start = time.perf_counter()
        result = coerce_tool_call({"type": "object", "properties": {"n": {"type": "integer"}}}, raw)
        seconds = time.perf_counter() - start
        short = coerce_tool_call({"type": "object"}, '{"n": ' + "7" * 4300 + '}')
        print(json.dumps({"kept": result is raw, "seconds": seconds, "short_read": short["n"] % 10 == 7}))
    """
    measured = _bounded_child(code, seconds=60)
    # Converting two million digits takes tens of seconds (quadratic); refusing them, a few milliseconds.
    assert measured["kept"] and measured["seconds"] < 1.0 and measured["short_read"]
