"""coerce_tool_call and the on_repair callback: the wire-level entry a loop calls, and what it absorbs."""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any, List, Optional, Tuple

import pytest

from dispatchlint.runtime import UNNAMED_TOOL, coerce_args, coerce_tool_call, wrap_table

KEEP: Any = object()
SEARCH = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "tags": {"type": "array"}},
}
TOOL = {"type": "function", "function": {"name": "search", "parameters": SEARCH}}

WIRE = [
    pytest.param('{"query": "q", "limit": "5"}', {"query": "q", "limit": 5}, id="JSON text, repaired"),
    pytest.param(b'{"limit": "5"}', {"limit": 5}, id="bytes"),
    pytest.param("", {}, id="empty text is no arguments"),
    pytest.param("  \n", {}, id="blank text"),
    pytest.param(None, {}, id="None"),
    pytest.param({"limit": "5"}, {"limit": 5}, id="a mapping already parsed"),
    pytest.param('"{\\"limit\\": \\"5\\"}"', {"limit": 5}, id="double-encoded object"),
    pytest.param('{"limit": "5", "tags": "a"}', {"limit": 5, "tags": ["a"]}, id="single value to list"),
]

WIRE_KEPT = [
    pytest.param('{"query": "q"', id="truncated JSON"),
    pytest.param("{'query': 'q'}", id="Python repr"),
    pytest.param('{"limit": NaN}', id="NaN"),
    pytest.param('{"limit": 1e999}', id="not finite"),
    pytest.param('{"a": 1} trailing', id="trailing data"),
    pytest.param("[1, 2]", id="an array is not arguments"),
    pytest.param("5", id="a number is not arguments"),
    pytest.param(b"\xff\xfe{", id="undecodable bytes"),
    pytest.param("[" * 100_000, id="nested deeper than the parser"),
]


@pytest.mark.parametrize("schema", [SEARCH, TOOL], ids=["parameters", "tool definition"])
@pytest.mark.parametrize("raw, expected", WIRE)
def test_the_wire_is_parsed_strictly_and_repaired(schema: Any, raw: Any, expected: Any) -> None:
    assert coerce_tool_call(schema, raw) == expected


@pytest.mark.parametrize("raw", WIRE_KEPT)
def test_what_cannot_be_parsed_comes_back_as_it_came(raw: Any) -> None:
    assert coerce_tool_call(SEARCH, raw) is raw


def test_valid_arguments_come_back_as_the_same_object() -> None:
    args = {"query": "q", "limit": 5}
    assert coerce_tool_call(SEARCH, args) is args


#: A schema whose top wants an array: a lone object sent for it would be wrapped in a list.
LIST_OF_OBJECTS = {"type": "array", "items": {"type": "object", "properties": {"limit": {"type": "integer"}}}}


def test_arguments_that_are_an_object_stay_one_even_where_the_schema_wants_a_list() -> None:
    args = {"limit": "5"}
    view = MappingProxyType(args)
    assert coerce_args(LIST_OF_OBJECTS, args) is args
    assert coerce_args(LIST_OF_OBJECTS, view) is view
    assert coerce_tool_call(LIST_OF_OBJECTS, args) is args
    assert coerce_tool_call(LIST_OF_OBJECTS, None) == {}
    assert coerce_tool_call(LIST_OF_OBJECTS, '{"limit": "5"}') == {"limit": "5"}


def test_a_value_that_is_not_an_object_is_still_repaired_against_such_a_schema() -> None:
    assert coerce_args(LIST_OF_OBJECTS, '{"limit": "5"}') == [{"limit": 5}]


def test_a_wrapped_tool_gets_its_arguments_as_an_object_even_where_the_schema_wants_a_list() -> None:
    table = wrap_table({"search": lambda args: args, "find": lambda **kwargs: kwargs}, lambda name: LIST_OF_OBJECTS)
    args = {"limit": "5"}
    assert table["search"](args) is args
    assert table["find"](limit="5") == {"limit": "5"}


def test_coerce_args_reports_repairs_with_the_tool_definitions_name() -> None:
    seen: List[Tuple[str, str, Any, Any]] = []
    result = coerce_args(TOOL, {"limit": "5", "tags": "x"}, on_repair=lambda *report: seen.append(report))
    assert result == {"limit": 5, "tags": ["x"]}
    assert seen == [("search", "/limit", "5", 5), ("search", "/tags", "x", ["x"])]


class _Names(List[str]):
    """An ``on_repair`` callback that keeps the tool names it is told."""

    def __call__(self, name: str, pointer: str, before: Any, after: Any) -> None:
        self.append(name)


NAMELESS_TOOL = {"type": "function", "function": {"name": "", "parameters": SEARCH}}


@pytest.mark.parametrize(
    "schema, tool_name, reported",
    [
        pytest.param(SEARCH, "find", "find", id="the name given"),
        pytest.param(TOOL, "find", "find", id="the name given, over the definition's"),
        pytest.param(TOOL, None, "search", id="the definition's"),
        pytest.param(TOOL, "", "search", id="an empty name given: the definition's"),
        pytest.param(SEARCH, None, UNNAMED_TOOL, id="a bare schema"),
        pytest.param(SEARCH, "", UNNAMED_TOOL, id="a bare schema, an empty name given"),
        pytest.param(NAMELESS_TOOL, None, UNNAMED_TOOL, id="a definition with an empty name"),
    ],
)
@pytest.mark.parametrize("raw", ['{"limit": "5"}', {"limit": "5"}], ids=["text", "parsed"])
def test_on_repair_is_told_the_name_given_else_the_definitions_else_an_unnamed_tool(
    schema: Any, tool_name: Any, reported: str, raw: Any
) -> None:
    names = _Names()
    coerce_tool_call(schema, raw, on_repair=names, tool_name=tool_name)
    if not isinstance(raw, str):
        coerce_args(schema, raw, on_repair=names, tool_name=tool_name)
    assert names and set(names) == {reported}
    assert UNNAMED_TOOL == "<unnamed tool>"


def test_a_wrapped_tool_under_an_empty_key_is_reported_by_its_definitions_name() -> None:
    names = _Names()
    table = wrap_table(
        {"": lambda args: args, "other": lambda args: args}, {"": TOOL, "other": SEARCH}, on_repair=names
    )
    table[""]({"limit": "5"})
    table["other"]({"limit": "5"})
    assert names == ["search", "other"]


def test_coerce_tool_call_reports_repairs() -> None:
    seen: List[str] = []
    coerce_tool_call(TOOL, '{"limit": "5"}', on_repair=lambda name, pointer, before, after: seen.append(pointer))
    assert seen == ["/limit"]


def _raising(*_: Any) -> None:
    raise RuntimeError("callback bug")


def test_a_callback_that_raises_is_logged_and_the_call_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="dispatchlint.runtime"):
        assert coerce_args(TOOL, {"limit": "5", "tags": "x"}, on_repair=_raising) == {"limit": 5, "tags": ["x"]}
    assert [record.name for record in caplog.records] == ["dispatchlint.runtime"] * 2
    assert "callback bug" in caplog.text and "'search'" in caplog.text


def test_a_wrapped_tools_callback_that_raises_does_not_fail_the_tool(caplog: pytest.LogCaptureFixture) -> None:
    table = wrap_table({"search": lambda args: args}, {"search": SEARCH}, on_repair=_raising)
    with caplog.at_level(logging.ERROR, logger="dispatchlint.runtime"):
        assert table["search"]({"limit": "5"}) == {"limit": 5}
    assert "callback bug" in caplog.text


class _BrokenRegistry:
    def __call__(self, name: str) -> Any:
        raise RuntimeError("registry down")


class _BrokenMapping(dict):  # type: ignore[type-arg]
    def get(self, key: Any, default: Any = None) -> Any:
        raise RuntimeError("registry down")


@pytest.mark.parametrize("source", [_BrokenRegistry(), _BrokenMapping()], ids=["callable", "mapping"])
def test_a_schema_source_that_raises_means_no_schema_for_that_call(
    source: Any, caplog: pytest.LogCaptureFixture
) -> None:
    table = wrap_table({"search": lambda args: args}, source)
    args = {"limit": "5"}
    with caplog.at_level(logging.ERROR, logger="dispatchlint.runtime"):
        assert table["search"](args) is args
    assert "registry down" in caplog.text and "'search'" in caplog.text


class _FlakyRegistry:
    """Raises what it is told to, or answers the schema; counts the calls."""

    def __init__(self) -> None:
        self.error: Optional[Exception] = RuntimeError("registry down")
        self.calls = 0

    def __call__(self, name: str) -> Any:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return SEARCH


def test_a_failing_schema_source_is_logged_once_per_tool_and_asked_again_on_every_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = _FlakyRegistry()
    args = {"limit": "5"}
    with caplog.at_level(logging.ERROR, logger="dispatchlint.runtime"):
        # wrapping reads each tool's schema once (for the executor's parameters): the first failures
        table = wrap_table({"search": lambda args: args, "find": lambda args: args}, source)
        assert [record.args for record in caplog.records] == [("RuntimeError", "search"), ("RuntimeError", "find")]
        for _ in range(100):
            assert table["search"](args) is args
            assert table["find"](args) is args
        assert len(caplog.records) == 2 and source.calls == 202
        source.error = ValueError("bad schema")  # another kind of failure is news
        table["search"](args)
        assert caplog.records[2].args == ("ValueError", "search")
        source.error = None  # the registry is back: the tool's arguments are repaired again
        assert table["search"](args) == {"limit": 5}
    assert len(caplog.records) == 3 and "bad schema" in caplog.text


def test_a_schema_source_raising_lookup_error_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    def source(name: str) -> Any:
        raise KeyError(name)

    table = wrap_table({"search": lambda args: args}, source)
    with caplog.at_level(logging.DEBUG, logger="dispatchlint.runtime"):
        assert table["search"]({"limit": "5"}) == {"limit": "5"}
    assert not caplog.records


def test_wrap_table_wraps_the_tools_present_when_called() -> None:
    tools = {"search": lambda args: args}
    wrapped = wrap_table(tools, {"search": SEARCH, "late": SEARCH})
    tools["late"] = lambda args: args
    assert "late" not in wrapped and set(tools) == {"search", "late"}
