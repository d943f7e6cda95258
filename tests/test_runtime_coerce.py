"""coerce_args, rule by rule: what is repaired, and what must be kept as it is.

Each table row is (schema, value, expected); ``KEEP`` means the very same object must come back.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from enum import IntEnum
from typing import Any, Dict

import pytest

from dispatchlint.runtime import coerce_args

KEEP: Any = object()

INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
NULL = {"type": "null"}
STRING = {"type": "string"}


def integers() -> Dict[str, Any]:
    return {"type": "array", "items": INTEGER}


def strings() -> Dict[str, Any]:
    return {"type": "array", "items": STRING}


def obj(**properties: Any) -> Dict[str, Any]:
    return {"type": "object", "properties": properties}


def same_json(first: Any, second: Any) -> bool:
    """Equal with JSON types told apart (``True`` is not ``1``, ``1.0`` is not ``1``)."""
    return json.dumps(first, sort_keys=True, default=repr) == json.dumps(second, sort_keys=True, default=repr)


def check(schema: Any, value: Any, expected: Any) -> None:
    before = copy.deepcopy(value)
    result = coerce_args(schema, value)
    if expected is KEEP:
        assert result is value
    else:
        assert same_json(result, expected), result
    assert same_json(value, before), "the input was mutated"


SCALARS = [
    pytest.param(INTEGER, "42", 42, id="integer literal"),
    pytest.param(INTEGER, " 42\n", 42, id="integer literal, whitespace trimmed"),
    pytest.param(INTEGER, "-7", -7, id="negative integer"),
    pytest.param(INTEGER, "0", 0, id="zero"),
    pytest.param(INTEGER, "123456789012345678901234567890", 123456789012345678901234567890, id="big integer, exact"),
    pytest.param(INTEGER, 3.0, 3, id="integral float to integer"),
    pytest.param(INTEGER, -0.0, 0, id="negative zero float to integer"),
    pytest.param(INTEGER, 1e20, 100000000000000000000, id="large integral float"),
    pytest.param(NUMBER, "-3.5", -3.5, id="number literal"),
    pytest.param(NUMBER, "2", 2, id="integer literal where number"),
    pytest.param(NUMBER, "1e3", 1000.0, id="exponent"),
    pytest.param(NUMBER, " 0.25 ", 0.25, id="number, whitespace trimmed"),
    pytest.param(BOOLEAN, "true", True, id="true"),
    pytest.param(BOOLEAN, "FALSE", False, id="boolean, any letter case"),
    pytest.param(BOOLEAN, " True ", True, id="boolean, whitespace trimmed"),
    pytest.param(NULL, "null", None, id="null literal where null"),
    pytest.param({"type": ["integer", "null"]}, " null ", None, id="null where null and not string"),
]

SCALARS_KEPT = [
    pytest.param(INTEGER, "4.0", KEEP, id="integer: a fraction is not an integer literal"),
    pytest.param(INTEGER, "1e3", KEEP, id="integer: exponent literal"),
    pytest.param(INTEGER, "042", KEEP, id="integer: leading zero is not JSON"),
    pytest.param(INTEGER, "+5", KEEP, id="integer: plus sign is not JSON"),
    pytest.param(INTEGER, "1_000", KEEP, id="integer: underscores"),
    pytest.param(INTEGER, "\u0663", KEEP, id="integer: non-ASCII digit"),
    pytest.param(INTEGER, "0x10", KEEP, id="integer: hexadecimal"),
    pytest.param(INTEGER, "", KEEP, id="integer: empty string"),
    pytest.param(INTEGER, "forty-two", KEEP, id="integer: words"),
    pytest.param(INTEGER, "9" * 4300, int("9" * 4300), id="integer: 4300 digits"),
    pytest.param(INTEGER, "9" * 4301, KEEP, id="integer: longer than 4300 characters"),
    pytest.param(NUMBER, "0." + "1" * 4299, KEEP, id="number: longer than 4300 characters"),
    pytest.param(INTEGER, 3.5, KEEP, id="integer: fractional float"),
    pytest.param(INTEGER, float("inf"), KEEP, id="integer: infinity"),
    pytest.param(INTEGER, float("nan"), KEEP, id="integer: nan"),
    pytest.param(INTEGER, True, KEEP, id="integer: a boolean is not an integer"),
    pytest.param(INTEGER, None, KEEP, id="integer: null"),
    pytest.param(INTEGER, [1], KEEP, id="integer: list"),
    pytest.param(INTEGER, {"a": 1}, KEEP, id="integer: object"),
    pytest.param(INTEGER, 7, KEEP, id="integer: valid"),
    pytest.param(INTEGER, IntEnum("Level", "LOW HIGH").HIGH, KEEP, id="integer: int subclass is an integer"),
    pytest.param(NUMBER, "NaN", KEEP, id="number: NaN is not JSON"),
    pytest.param(NUMBER, "Infinity", KEEP, id="number: Infinity is not JSON"),
    pytest.param(NUMBER, "1e999", KEEP, id="number: not finite"),
    pytest.param(NUMBER, ".5", KEEP, id="number: no leading digit"),
    pytest.param(NUMBER, "5.", KEEP, id="number: no fraction digit"),
    pytest.param(NUMBER, "1,5", KEEP, id="number: decimal comma"),
    pytest.param(NUMBER, "-", KEEP, id="number: sign alone"),
    pytest.param(NUMBER, False, KEEP, id="number: a boolean is not a number"),
    pytest.param(NUMBER, 3, KEEP, id="number: an integer is a number"),
    pytest.param(NUMBER, 3.0, KEEP, id="number: integral float stays a float"),
    pytest.param(BOOLEAN, "1", KEEP, id="boolean: '1' is not its JSON literal"),
    pytest.param(BOOLEAN, "0", KEEP, id="boolean: '0'"),
    pytest.param(BOOLEAN, "yes", KEEP, id="boolean: yes"),
    pytest.param(BOOLEAN, "t", KEEP, id="boolean: t"),
    pytest.param(BOOLEAN, "truex", KEEP, id="boolean: prefix"),
    pytest.param(BOOLEAN, 1, KEEP, id="boolean: the integer 1"),
    pytest.param(BOOLEAN, 0.0, KEEP, id="boolean: a float"),
    pytest.param(NULL, "None", KEEP, id="null: Python spelling"),
    pytest.param(NULL, "NULL", KEEP, id="null: upper case"),
    pytest.param(NULL, "", KEEP, id="null: empty string"),
    pytest.param({"type": ["string", "null"]}, "null", KEEP, id="null: kept where a string is admitted"),
    pytest.param(STRING, 42, KEEP, id="string: numbers are never turned into strings"),
    pytest.param(STRING, True, KEEP, id="string: nor booleans"),
    pytest.param(STRING, None, KEEP, id="string: nor null"),
    pytest.param(STRING, "42", KEEP, id="string: valid"),
]


@pytest.mark.parametrize("schema, value, expected", SCALARS + SCALARS_KEPT)
def test_scalars(schema: Any, value: Any, expected: Any) -> None:
    check(schema, value, expected)


CONTAINERS = [
    pytest.param(integers(), '[1, "2"]', [1, 2], id="array from JSON, items repaired"),
    pytest.param(integers(), " [1] ", [1], id="array from JSON, whitespace trimmed"),
    pytest.param(obj(a=INTEGER), '{"a": "1"}', {"a": 1}, id="object from JSON, members repaired"),
    pytest.param({"type": "array", "items": integers()}, '[["1"], "[2]"]', [[1], [2]], id="nested, repaired in turn"),
    pytest.param(obj(tags=strings()), {"tags": '["a", "b"]'}, {"tags": ["a", "b"]}, id="array member from JSON"),
    pytest.param({"type": ["array", "object"]}, "{}", {}, id="either container kind"),
    pytest.param({"type": "array"}, "[]", [], id="empty array"),
    pytest.param(
        {"type": "object", "properties": {"$top": INTEGER}},
        '{"_top": "5"}',
        {"$top": 5},
        id="object from JSON, sanitized names restored first",
    ),
]

CONTAINERS_KEPT = [
    pytest.param(integers(), "[1,", KEEP, id="invalid JSON"),
    pytest.param(integers(), "[NaN]", KEEP, id="not strict JSON"),
    pytest.param(integers(), "[1] [2]", KEEP, id="trailing data"),
    pytest.param(integers(), '{"a": 1}', KEEP, id="object where an array is wanted"),
    pytest.param(obj(a=INTEGER), "[1]", KEEP, id="array where an object is wanted"),
    pytest.param(obj(a=INTEGER), "{'a': 1}", KEEP, id="Python repr is not JSON"),
    pytest.param(integers(), '"[1]"', KEEP, id="a JSON string is not an array"),
    pytest.param({"type": ["array", "string"]}, "[1]", KEEP, id="kept where a string is admitted"),
    pytest.param(obj(a=INTEGER), None, KEEP, id="null object"),
    pytest.param(integers(), [1, 2], KEEP, id="valid array"),
]


@pytest.mark.parametrize("schema, value, expected", CONTAINERS + CONTAINERS_KEPT)
def test_containers_from_strings(schema: Any, value: Any, expected: Any) -> None:
    check(schema, value, expected)


SINGLE_TO_LIST = [
    pytest.param(integers(), 5, [5], id="integer"),
    pytest.param(strings(), "hello world", ["hello world"], id="string without separators"),
    pytest.param({"type": "array", "items": BOOLEAN}, True, [True], id="boolean"),
    pytest.param(
        obj(steps={"type": "array", "items": obj(a=INTEGER)}),
        {"steps": {"a": "1"}},
        {"steps": [{"a": 1}]},
        id="object, repaired inside",
    ),
    pytest.param({"type": "array"}, "x", ["x"], id="items not constrained"),
    pytest.param({"type": "array", "prefixItems": [INTEGER, STRING]}, 5, [5], id="first of prefixItems"),
    pytest.param(obj(tags=strings()), {"tags": "urgent"}, {"tags": ["urgent"]}, id="as a member"),
    # Wrap, then repair the item: the element's one repair makes the one-element list.
    pytest.param(integers(), "5", [5], id="integer literal, repaired as the item"),
    pytest.param(integers(), " -7 ", [-7], id="integer literal, whitespace trimmed"),
    pytest.param({"type": "array", "items": BOOLEAN}, "true", [True], id="boolean literal"),
    pytest.param({"type": "array", "items": obj(a=INTEGER)}, '{"a": "1"}', [{"a": 1}], id="object from JSON"),
    pytest.param(integers(), 3.0, [3], id="integral float, repaired as the item"),
    pytest.param({"type": "array", "items": integers()}, "[1]", [[1]], id="both readings agree"),
    pytest.param({"type": "array", "items": {"enum": [1, 2]}}, "2", [2], id="an enum item"),
    pytest.param(obj(ids=integers()), {"ids": "42"}, {"ids": [42]}, id="integer literal as a member"),
]

SINGLE_TO_LIST_KEPT = [
    pytest.param(strings(), "a,b", KEEP, id="comma"),
    pytest.param(strings(), "a; b", KEEP, id="semicolon"),
    pytest.param(strings(), "a|b", KEEP, id="pipe"),
    pytest.param(strings(), "a\nb", KEEP, id="newline"),
    pytest.param(strings(), "[a]", KEEP, id="brackets"),
    pytest.param(strings(), "", KEEP, id="empty string"),
    pytest.param(strings(), "null", KEEP, id="the word null"),
    pytest.param(strings(), '{"a": 1}', KEEP, id="string items: JSON text stays one text, not wrapped"),
    pytest.param({"type": "array", "items": BOOLEAN}, "yes", KEEP, id="the item has no repair"),
    pytest.param({"type": "array", "items": {"type": ["integer", "null"]}}, "null", KEEP, id="'null': no list"),
    pytest.param({"type": "array", "items": integers()}, "[1,2]", KEEP, id="two repairs: [[1], [2]] and [[1, 2]]"),
    pytest.param(strings(), None, KEEP, id="null"),
    pytest.param({"type": "array", "prefixItems": [INTEGER]}, "x", KEEP, id="first prefix item does not admit it"),
    pytest.param(integers(), (1, 2), KEEP, id="a tuple is already an array"),
    pytest.param(integers(), {1, 2}, KEEP, id="a set has no JSON kind"),
    pytest.param({"type": ["array", "integer"], "items": STRING}, "5", KEEP, id="two repairs: 5 and ['5']"),
    pytest.param({"type": ["array", "integer"], "items": NUMBER}, 3.0, KEEP, id="two repairs: 3 and [3.0]"),
    pytest.param({"type": ["array", "integer"], "items": INTEGER}, "5", KEEP, id="two repairs: 5 and [5]"),
    pytest.param({"anyOf": [INTEGER, integers()]}, "5", KEEP, id="anyOf: two repairs, 5 and [5]"),
    pytest.param({"type": "array", "items": {"enum": [1, 2]}}, "3", KEEP, id="the item's repair leaves its enum"),
    # The arguments themselves are an object and stay one (see coerce_args): only a member is wrapped.
    pytest.param({"type": "array", "items": obj(a=INTEGER)}, {"a": "1"}, KEEP, id="the arguments object"),
]


@pytest.mark.parametrize("schema, value, expected", SINGLE_TO_LIST + SINGLE_TO_LIST_KEPT)
def test_single_value_to_list(schema: Any, value: Any, expected: Any) -> None:
    check(schema, value, expected)


KIND_A = obj(kind={"const": "a"}, x=INTEGER)
KIND_B = obj(kind={"const": "b"}, y=BOOLEAN)

UNIONS = [
    pytest.param({"type": ["integer", "boolean"]}, "true", True, id="type list: the literal's kind"),
    pytest.param({"type": ["integer", "boolean"]}, "7", 7, id="type list: integer"),
    pytest.param({"type": ["integer", "number"]}, "3", 3, id="type list: one value for two kinds"),
    pytest.param({"anyOf": [INTEGER, BOOLEAN]}, "false", False, id="anyOf: one branch repairs"),
    pytest.param({"oneOf": [INTEGER, NULL]}, "null", None, id="oneOf: null branch"),
    pytest.param({"anyOf": [{"$ref": "#/$defs/n"}, NULL], "$defs": {"n": INTEGER}}, "8", 8, id="anyOf with $ref"),
    pytest.param(
        {"anyOf": [KIND_A, KIND_B]}, {"kind": "a", "x": "3"}, {"kind": "a", "x": 3}, id="const picks a branch"
    ),
    pytest.param(
        {"anyOf": [obj(n=INTEGER, m=INTEGER), NULL]},
        {"n": "1", "m": "x"},
        {"n": 1, "m": "x"},
        id="Optional object: repaired as far as it goes",
    ),
    pytest.param(
        {"anyOf": [obj(a=INTEGER), obj(a=NUMBER)]},
        {"a": "1"},
        {"a": 1},
        id="two branches, one distinct repair",
    ),
    pytest.param(
        {"anyOf": [{**integers(), "maxItems": 3}, INTEGER]},
        ["1"],
        [1],
        id="only one branch admits the kind",
    ),
]

UNIONS_KEPT = [
    pytest.param({"type": ["integer", "string"]}, "7", KEEP, id="a branch admits it as it is"),
    pytest.param({"anyOf": [STRING, NULL]}, "null", KEEP, id="string branch keeps 'null'"),
    pytest.param({"anyOf": [{}, INTEGER]}, "5", KEEP, id="a branch admits anything"),
    pytest.param({"anyOf": [strings(), INTEGER]}, "5", KEEP, id="two distinct repairs"),
    pytest.param(
        {"anyOf": [{**obj(a=INTEGER), "required": ["a"]}, {**obj(b=BOOLEAN), "required": ["b"]}]},
        {"a": "1", "b": "true"},
        KEEP,
        id="two object branches repair differently",
    ),
    pytest.param({"anyOf": [KIND_A, KIND_B]}, {"kind": "b", "y": True}, KEEP, id="fits a branch"),
    pytest.param({"anyOf": [INTEGER, BOOLEAN]}, "x", KEEP, id="no branch repairs"),
    pytest.param({"anyOf": []}, "5", KEEP, id="empty anyOf is not understood"),
]


@pytest.mark.parametrize("schema, value, expected", UNIONS + UNIONS_KEPT)
def test_unions(schema: Any, value: Any, expected: Any) -> None:
    check(schema, value, expected)


LINKED = {
    "$defs": {"node": {"type": "object", "properties": {"v": INTEGER, "next": {"$ref": "#/$defs/node"}}}},
    "$ref": "#/$defs/node",
}

STRUCTURE = [
    pytest.param(
        LINKED,
        {"v": "1", "next": {"v": "2", "next": {"v": "3"}}},
        {"v": 1, "next": {"v": 2, "next": {"v": 3}}},
        id="recursive $ref",
    ),
    pytest.param(
        {"definitions": {"n": INTEGER}, **obj(a={"$ref": "#/definitions/n"})}, {"a": "1"}, {"a": 1}, id="definitions"
    ),
    pytest.param({**obj(a=INTEGER, child={"$ref": "#"})}, {"child": {"a": "2"}}, {"child": {"a": 2}}, id="root $ref"),
    pytest.param({"$defs": {"a/b": INTEGER}, "$ref": "#/$defs/a~1b"}, "1", 1, id="escaped pointer"),
    pytest.param(
        {"allOf": [{"$ref": "#/$defs/n"}], "description": "d", "$defs": {"n": INTEGER}}, "1", 1, id="allOf of one"
    ),
    pytest.param(
        {"$ref": "#/$defs/n", "description": "sibling annotation", "$defs": {"n": BOOLEAN}},
        "true",
        True,
        id="$ref with annotations",
    ),
    pytest.param(
        {**obj(a=INTEGER), "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"a": "1"},
        {"a": 1},
        id="anyOf of requirements beside properties",
    ),
    pytest.param(
        {"type": "object", "additionalProperties": INTEGER},
        {"a": "1", "b": "x"},
        {"a": 1, "b": "x"},
        id="additionalProperties",
    ),
    pytest.param(
        {"type": "array", "prefixItems": [INTEGER, BOOLEAN]}, ["1", "true", "x"], [1, True, "x"], id="prefixItems"
    ),
    pytest.param(
        {"type": "array", "items": [INTEGER], "additionalItems": BOOLEAN},
        ["1", "true"],
        [1, True],
        id="items as a list",
    ),
    pytest.param(
        {"type": "array", "prefixItems": [INTEGER], "items": BOOLEAN}, ["1", "false"], [1, False], id="rest items"
    ),
    pytest.param(
        obj(steps={"type": "array", "items": obj(done=BOOLEAN, n=INTEGER)}),
        {"steps": [{"done": "true", "n": 1}, {"done": False, "n": "2"}]},
        {"steps": [{"done": True, "n": 1}, {"done": False, "n": 2}]},
        id="objects in arrays in objects",
    ),
    pytest.param({"type": "integer", "nullable": True}, "null", None, id="OpenAPI nullable"),
    pytest.param({"type": "integer", "nullable": True, "minimum": 5}, "3", 3, id="bounds are not checked"),
]

STRUCTURE_KEPT = [
    pytest.param(obj(a=INTEGER), {"a": 1, "zzz": "1", "x y": [object]}, KEEP, id="unknown keys untouched"),
    pytest.param(
        {**obj(a=INTEGER), "additionalProperties": False}, {"a": 1, "b": 2}, KEEP, id="extra keys not removed"
    ),
    pytest.param(
        {"type": "object", "patternProperties": {"^n": INTEGER}, "additionalProperties": INTEGER},
        {"n1": "1"},
        KEEP,
        id="patternProperties: extras left alone",
    ),
    pytest.param({"$ref": "#/$defs/missing"}, "1", KEEP, id="unresolvable $ref"),
    pytest.param({"$ref": "https://example.com/schema.json"}, "1", KEEP, id="remote $ref"),
    pytest.param({"$ref": "#anchor"}, "1", KEEP, id="anchor $ref"),
    pytest.param({"$ref": "#"}, "1", KEEP, id="$ref to itself"),
    pytest.param({"allOf": [INTEGER, BOOLEAN]}, "1", KEEP, id="allOf of two repairs is not understood"),
    pytest.param({"type": "strnig"}, "1", KEEP, id="unknown type name"),
    pytest.param({"type": "integer", "minimum": 10, "format": "int32"}, 5, KEEP, id="other keywords ignored"),
    pytest.param(obj(a=INTEGER), OrderedDict(a=1), KEEP, id="dict subclass, valid"),
]


@pytest.mark.parametrize("schema, value, expected", STRUCTURE + STRUCTURE_KEPT)
def test_structure(schema: Any, value: Any, expected: Any) -> None:
    check(schema, value, expected)


ENUMS = [
    pytest.param({"enum": [1, 2, 3]}, "2", 2, id="enum without type: the literal of a member"),
    pytest.param({"enum": [True, False]}, "true", True, id="boolean enum"),
    pytest.param({"enum": [True, False]}, "FALSE", False, id="boolean enum, any letter case"),
    pytest.param({"const": 5}, " 5 ", 5, id="const, whitespace trimmed"),
    pytest.param({"const": True}, "true", True, id="boolean const"),
    pytest.param({"const": None}, "null", None, id="null const"),
    pytest.param({"type": "integer", "enum": [1, 2]}, "2", 2, id="enum with type"),
    pytest.param({"type": "number", "enum": [0.5, 1]}, "0.5", 0.5, id="number enum"),
    pytest.param({"enum": ["a", 1]}, "1", 1, id="mixed enum: the one listed value the string holds"),
    pytest.param({"enum": [None, "auto"]}, "null", None, id="null listed, the string 'null' is not"),
    pytest.param({"enum": [[1], [2]]}, "[2]", [2], id="array enum from JSON"),
    pytest.param({"enum": [[5]], "type": "array", "items": INTEGER}, "5", [5], id="wrapped into a listed array"),
    pytest.param({"enum": [{"a": 1}], **obj(a=INTEGER)}, {"a": "1"}, {"a": 1}, id="walked into a listed object"),
    pytest.param(obj(level={"enum": [1, 2, 3]}), {"level": "3"}, {"level": 3}, id="as a member"),
    pytest.param({"type": "integer", "enum": [3]}, 3.0, KEEP, id="3.0 equals the listed 3: never touched"),
]

ENUMS_KEPT = [
    pytest.param({"type": "integer", "enum": [1, 2]}, "3", KEEP, id="the repair would leave the enum"),
    pytest.param({"enum": [1, 2, 3]}, "4", KEEP, id="enum without type: not a member's literal"),
    pytest.param({"enum": ["1", 1]}, "1", KEEP, id="the string itself is listed: never touched"),
    pytest.param({"enum": ["pending", "done"]}, "Done", KEEP, id="no case folding for strings"),
    pytest.param({"enum": ["pending", "done"]}, '"done"', KEEP, id="no unquoting"),
    pytest.param({"enum": [1, 2]}, 7, KEEP, id="an unlisted integer has no repair"),
    pytest.param({"const": "x"}, "y", KEEP, id="string const"),
    pytest.param({"type": "string", "enum": ["a", 1]}, "1", KEEP, id="the listed 1 is not of the declared type"),
    pytest.param(
        {"enum": [5, [5]], "type": ["integer", "array"], "items": INTEGER},
        "5",
        KEEP,
        id="two listed repairs: 5 and [5]",
    ),
    pytest.param({"enum": []}, "1", KEEP, id="empty enum admits nothing"),
    pytest.param({"enum": [True]}, "1", KEEP, id="'1' is not true"),
]


@pytest.mark.parametrize("schema, value, expected", ENUMS + ENUMS_KEPT)
def test_enum_and_const_are_what_is_admitted(schema: Any, value: Any, expected: Any) -> None:
    check(schema, value, expected)


NON_FINITE = [
    pytest.param(NUMBER, "1e999", id="scalar"),
    pytest.param({"type": "array", "items": NUMBER}, "[1e999]", id="inside an array"),
    pytest.param({"type": "array", "items": NUMBER}, "[1, -1e999]", id="negative, after a finite one"),
    pytest.param(obj(a=NUMBER), '{"a": 1e400}', id="inside an object"),
    pytest.param({"type": "array"}, "[Infinity]", id="Infinity"),
    pytest.param({"type": "array"}, "[NaN]", id="NaN"),
    pytest.param({"type": "array", "items": NUMBER}, "1e999", id="not wrapped either"),
]


@pytest.mark.parametrize("schema, value", NON_FINITE)
def test_non_finite_numbers_are_refused_everywhere(schema: Any, value: Any) -> None:
    check(schema, value, KEEP)


NOT_VALIDATION = [
    pytest.param({"type": "integer", "minimum": 10}, 5, id="minimum"),
    pytest.param({"type": "string", "maxLength": 2}, "long", id="maxLength"),
    pytest.param({"type": "string", "format": "date"}, "not a date", id="format"),
    pytest.param({**obj(a=INTEGER), "required": ["a"]}, {}, id="required: nothing is added"),
    pytest.param(obj(a={"type": "integer", "default": 3}), {}, id="default: nothing is filled in"),
    pytest.param({"type": "array", "maxItems": 1}, [1, 2], id="maxItems: nothing is dropped"),
    pytest.param({**obj(a=INTEGER), "additionalProperties": False}, {"b": 1}, id="additionalProperties: kept"),
]


@pytest.mark.parametrize("schema, value", NOT_VALIDATION)
def test_it_is_not_validation(schema: Any, value: Any) -> None:
    check(schema, value, KEEP)


TOOL = {"type": "object", "properties": {"n": INTEGER}}

ENVELOPES = [
    pytest.param({"type": "function", "function": {"name": "t", "parameters": TOOL}}, id="OpenAI chat completions"),
    pytest.param({"type": "function", "name": "t", "parameters": TOOL}, id="OpenAI responses"),
    pytest.param({"name": "t", "description": "d", "input_schema": TOOL}, id="Anthropic"),
    pytest.param({"name": "t", "inputSchema": TOOL}, id="MCP"),
    pytest.param(TOOL, id="parameters schema"),
]


@pytest.mark.parametrize("schema", ENVELOPES)
def test_tool_definitions_are_unwrapped(schema: Any) -> None:
    check(schema, {"n": "1"}, {"n": 1})


NOT_SCHEMAS = [None, True, False, [], [TOOL], "object", 5, object(), {"type": "function", "function": {"name": "now"}}]


@pytest.mark.parametrize("schema", NOT_SCHEMAS, ids=repr)
def test_what_is_not_a_schema_leaves_arguments_alone(schema: Any) -> None:
    check(schema, {"n": "1"}, KEEP)


def test_valid_arguments_come_back_as_the_same_object() -> None:
    args = {"n": 1, "tags": ["a"], "nested": {"deep": [1, 2, 3]}}
    schema = obj(n=INTEGER, tags=strings(), nested=obj(deep=integers()))
    assert coerce_args(schema, args) is args


def test_a_repair_shares_the_unchanged_parts() -> None:
    args = {"n": "1", "tags": ["a"], "nested": {"deep": [1, 2, 3]}}
    schema = obj(n=INTEGER, tags=strings(), nested=obj(deep=integers()))
    result = coerce_args(schema, args)
    assert result == {"n": 1, "tags": ["a"], "nested": {"deep": [1, 2, 3]}}
    assert result["tags"] is args["tags"] and result["nested"] is args["nested"]
    assert args["n"] == "1"


def test_repaired_containers_are_plain() -> None:
    assert type(coerce_args(obj(a=INTEGER), OrderedDict(a="1"))) is dict
    assert coerce_args(integers(), ("1", 2)) == [1, 2]


def test_whole_arguments_sent_as_a_json_string() -> None:
    assert coerce_args(obj(n=INTEGER), '{"n": "1"}') == {"n": 1}


def test_a_schema_is_compiled_once_per_object() -> None:
    schema = obj(n=INTEGER)
    assert coerce_args(schema, {"n": "1"}) == {"n": 1}
    # The plan is cached by identity: an equal schema object gets its own plan, with the same answers.
    assert coerce_args(copy.deepcopy(schema), {"n": "2"}) == {"n": 2}
