"""wrap_table and @coerced: every reader of a wrapped table gets repaired arguments."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Dict, List, Mapping, Tuple

import pytest

from dispatchlint.runtime import coerced, wrap_table

PLAN = {
    "type": "object",
    "properties": {
        "steps": {
            "type": "array",
            "items": {"type": "object", "properties": {"title": {"type": "string"}, "done": {"type": "boolean"}}},
        },
        "limit": {"type": "integer"},
        "$top": {"type": "integer"},
    },
}
SCHEMAS = {"plan": PLAN, "recall": {"type": "object", "properties": {"k": {"type": "integer"}}}}
MISTYPED = {"steps": '[{"title": "a", "done": "false"}]', "limit": "3"}
REPAIRED = {"steps": [{"title": "a", "done": False}], "limit": 3}


def _plan(agent: Any, args: Dict[str, Any], ctx: Any) -> Tuple[Any, Dict[str, Any], Any]:
    """Plan steps."""
    return agent, args, ctx


async def _plan_async(agent: Any, args: Dict[str, Any], ctx: Any) -> Tuple[Any, Dict[str, Any], Any]:
    """Plan steps, asynchronously."""
    await asyncio.sleep(0)
    return agent, args, ctx


def _plan_kwargs(**kwargs: Any) -> Dict[str, Any]:
    return kwargs


def _plan_named(steps: Any = None, limit: Any = None) -> Dict[str, Any]:
    return {"steps": steps, "limit": limit}


def test_positional_mapping_is_repaired_and_the_rest_passed_through() -> None:
    table = wrap_table({"plan": _plan}, SCHEMAS)
    agent, ctx = object(), object()
    assert table["plan"](agent, MISTYPED, ctx) == (agent, REPAIRED, ctx)
    assert table["plan"](agent, args=MISTYPED, ctx=ctx) == (agent, REPAIRED, ctx)
    assert MISTYPED["limit"] == "3"


def test_valid_arguments_are_passed_as_the_same_object() -> None:
    table = wrap_table({"plan": _plan}, SCHEMAS)
    args = {"limit": 3}
    assert table["plan"](None, args, None)[1] is args


def test_async_executor() -> None:
    table = wrap_table({"plan": _plan_async}, SCHEMAS)
    assert inspect.iscoroutinefunction(table["plan"])
    assert asyncio.run(table["plan"](1, MISTYPED, 2)) == (1, REPAIRED, 2)


def test_async_callable_object() -> None:
    class Tool:
        async def __call__(self, args: Dict[str, Any]) -> Dict[str, Any]:
            return args

    wrapped = wrap_table({"plan": Tool()}, SCHEMAS)["plan"]
    assert inspect.iscoroutinefunction(wrapped)
    assert asyncio.run(wrapped(MISTYPED)) == REPAIRED


@pytest.mark.parametrize("executor", [_plan_kwargs, _plan_named])
def test_keyword_arguments(executor: Any) -> None:
    table = wrap_table({"plan": executor}, SCHEMAS)
    assert table["plan"](**MISTYPED) == REPAIRED


def test_async_keyword_arguments() -> None:
    async def search(**kwargs: Any) -> Dict[str, Any]:
        return kwargs

    assert asyncio.run(wrap_table({"plan": search}, SCHEMAS)["plan"](**MISTYPED)) == REPAIRED


def test_keyword_arguments_pass_sanitized_names_back_under_registry_names() -> None:
    table = wrap_table({"plan": _plan_kwargs}, SCHEMAS)
    assert table["plan"](_top="5") == {"$top": 5}


def test_metadata_is_kept() -> None:
    wrapped = wrap_table({"plan": _plan}, SCHEMAS)["plan"]
    assert wrapped.__name__ == "_plan" and wrapped.__doc__ == "Plan steps."
    assert wrapped.__wrapped__ is _plan  # type: ignore[attr-defined]
    assert wrapped.__qualname__ == _plan.__qualname__
    async_wrapped = wrap_table({"plan": _plan_async}, SCHEMAS)["plan"]
    assert async_wrapped.__wrapped__ is _plan_async  # type: ignore[attr-defined]


def _by_name(agent: Any, tool_args: Any, ctx: Any) -> Any:
    return tool_args


def _by_annotation(agent: Any, payload: Dict[str, Any], ctx: Any) -> Any:
    return payload


def _by_typing_annotation(agent: Any, payload: Mapping[str, Any], ctx: Any) -> Any:
    return payload


def _by_evaluated_annotation(agent: Any, payload: Any, ctx: Any) -> Any:
    return payload


# This module's annotations are strings (postponed evaluation); this one is the evaluated typing object.
_by_evaluated_annotation.__annotations__["payload"] = Dict[str, Any]


def _keyword_only(agent: Any, *, arguments: Any) -> Any:
    return arguments


@pytest.mark.parametrize("executor", [_by_name, _by_annotation, _by_typing_annotation, _by_evaluated_annotation])
def test_the_mapping_parameter_is_found_from_the_signature(executor: Any) -> None:
    assert wrap_table({"plan": executor}, SCHEMAS)["plan"](None, MISTYPED, None) == REPAIRED


def test_keyword_only_mapping_parameter() -> None:
    assert wrap_table({"plan": _keyword_only}, SCHEMAS)["plan"](None, arguments=MISTYPED) == REPAIRED


def test_a_parameter_named_like_a_property_is_a_tool_parameter() -> None:
    def search(query: str, params: Any = None) -> Any:
        return query, params

    schema = {"type": "object", "properties": {"query": {"type": "string"}, "params": {"type": "integer"}}}
    assert wrap_table({"search": search}, {"search": schema})["search"](query="q", params="3") == ("q", 3)


@pytest.mark.parametrize("hint", [1, "data"])
def test_position_hint(hint: Any) -> None:
    def run(agent: Any, data: Any, ctx: Any) -> Any:
        return data

    table = wrap_table({"plan": run}, SCHEMAS, args_at=hint)
    assert table["plan"](None, MISTYPED, None) == REPAIRED
    assert table["plan"](None, data=MISTYPED, ctx=None) == REPAIRED


def test_position_hint_without_a_signature() -> None:
    table = wrap_table({"plan": max}, {"plan": {"type": "array", "items": {"type": "integer"}}}, args_at=0)
    assert table["plan"](["1", "3", "2"]) == 3


def test_a_callable_without_signature_gets_its_keyword_arguments_repaired() -> None:
    table = wrap_table({"plan": dict}, SCHEMAS)
    assert table["plan"](limit="3") == {"limit": 3}


def test_on_repair_reports_every_repaired_value_with_its_pointer() -> None:
    seen: List[Tuple[str, str, Any, Any]] = []
    table = wrap_table({"plan": _plan}, SCHEMAS, on_repair=lambda *report: seen.append(report))
    table["plan"](None, {"steps": [{"title": "a", "done": "true"}, {"done": False}], "limit": "3", "_top": "1"}, None)
    assert seen == [
        ("plan", "/steps/0/done", "true", True),
        ("plan", "/limit", "3", 3),
        ("plan", "/$top", "1", 1),
    ]


def test_on_repair_reports_a_parsed_container_once() -> None:
    seen: List[Tuple[str, str, Any, Any]] = []
    wrap_table({"plan": _plan}, SCHEMAS, on_repair=lambda *report: seen.append(report))["plan"](None, MISTYPED, None)
    assert seen[0] == ("plan", "/steps", MISTYPED["steps"], [{"title": "a", "done": False}])
    assert len(seen) == 2


def test_on_repair_escapes_pointer_tokens() -> None:
    seen: List[Any] = []
    schema = {"type": "object", "properties": {"a/b~c": {"type": "integer"}}}
    wrap_table({"t": _plan_kwargs}, {"t": schema}, on_repair=lambda *report: seen.append(report[1]))["t"](
        **{"a/b~c": "1"}
    )
    assert seen == ["/a~1b~0c"]


def test_on_repair_is_not_called_for_valid_arguments() -> None:
    seen: List[Any] = []
    wrap_table({"plan": _plan}, SCHEMAS, on_repair=lambda *report: seen.append(report))["plan"](None, REPAIRED, None)
    assert seen == []


def test_schemas_from_a_callable() -> None:
    def lookup(name: str) -> Any:
        return SCHEMAS[name]  # KeyError for a tool without schema: passed through

    table = wrap_table({"plan": _plan, "other": _plan}, lookup)
    assert table["plan"](None, MISTYPED, None)[1] == REPAIRED
    assert table["other"](None, MISTYPED, None)[1] is MISTYPED


def test_no_schema_passes_through() -> None:
    assert wrap_table({"plan": _plan}, None)["plan"](None, MISTYPED, None)[1] is MISTYPED
    assert wrap_table({"nope": _plan}, SCHEMAS)["nope"](None, MISTYPED, None)[1] is MISTYPED


def test_schemas_registered_after_wrapping_are_used() -> None:
    registry: Dict[str, Any] = {}
    table = wrap_table({"plan": _plan}, registry)
    registry["plan"] = PLAN
    assert table["plan"](None, MISTYPED, None)[1] == REPAIRED


def test_tool_definitions_as_schemas() -> None:
    definitions = {"plan": {"type": "function", "function": {"name": "plan", "parameters": PLAN}}}
    assert wrap_table({"plan": _plan}, definitions)["plan"](None, MISTYPED, None)[1] == REPAIRED


def test_wrap_table_returns_a_new_table_and_keeps_non_callables() -> None:
    marker = object()
    table = {"plan": _plan, "doc": marker}
    wrapped = wrap_table(table, SCHEMAS)
    assert wrapped is not table and table["plan"] is _plan
    assert wrapped["doc"] is marker and list(wrapped) == ["plan", "doc"]


def test_schemas_of_the_wrong_kind_are_refused() -> None:
    with pytest.raises(TypeError):
        wrap_table({"plan": _plan}, 42)  # type: ignore[arg-type]


def test_decorator_with_one_schema() -> None:
    @coerced("plan", PLAN)
    def plan(agent: Any, args: Dict[str, Any], ctx: Any) -> Any:
        """Doc."""
        return args

    assert plan(None, MISTYPED, None) == REPAIRED
    assert plan.__name__ == "plan" and plan.__doc__ == "Doc."


def test_decorator_with_a_table_of_schemas_or_a_tool_definition() -> None:
    @coerced("plan", SCHEMAS)
    def by_table(args: Dict[str, Any]) -> Any:
        return args

    @coerced("plan", {"name": "plan", "input_schema": PLAN})
    async def by_definition(args: Dict[str, Any]) -> Any:
        return args

    assert by_table(MISTYPED) == REPAIRED
    assert asyncio.run(by_definition(MISTYPED)) == REPAIRED


def test_decorator_reports_repairs() -> None:
    seen: List[Any] = []

    @coerced("recall", SCHEMAS, on_repair=lambda *report: seen.append(report))
    def recall(**kwargs: Any) -> Any:
        return kwargs

    assert recall(k="7") == {"k": 7}
    assert seen == [("recall", "/k", "7", 7)]


# --------------------------------------------------------------------------- what introspection reads

#: openai/swarm's own name for the parameter it fills in when a tool's code has it.
CONTEXT_VARIABLES = "context_variables"
TRANSFER = {
    "type": "object",
    "properties": {"amount": {"type": "integer"}, "to": {"type": "string"}, "urgent": {"type": "boolean"}},
}
SWARM_SCHEMAS = {"transfer": TRANSFER, "balance": {"type": "object", "properties": {}}}


def transfer(amount: int, to: str, context_variables: dict, urgent: bool = False) -> str:
    """Move money."""
    user = context_variables["user"]
    return f"{user} sends {amount!r} to {to} (urgent: {urgent!r})"


def balance() -> str:
    """The balance."""
    return "100"


def _function_to_json(func: Any) -> Dict[str, Any]:
    """As openai/swarm describes a Python function to the model (swarm/util.py), from its signature."""
    type_map = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
    signature = inspect.signature(func)
    properties = {p.name: {"type": type_map.get(p.annotation, "string")} for p in signature.parameters.values()}
    required = [p.name for p in signature.parameters.values() if p.default == inspect.Parameter.empty]
    parameters = {"type": "object", "properties": properties, "required": required}
    function = {"name": func.__name__, "description": func.__doc__ or "", "parameters": parameters}
    return {"type": "function", "function": function}


def _swarm_like_dispatch(functions: List[Any], name: str, arguments: str, context_variables: Dict[str, Any]) -> Any:
    """As openai/swarm runs a tool call (swarm/core.py): by ``__name__``, with ``context_variables`` passed only
    when the function's code has a variable of that name."""
    function_map = {function.__name__: function for function in functions}
    args = json.loads(arguments)
    func = function_map[name]
    if CONTEXT_VARIABLES in func.__code__.co_varnames:
        args[CONTEXT_VARIABLES] = context_variables
    return function_map[name](**args)


def test_a_swarm_like_dispatcher_runs_wrapped_functions_as_it_ran_the_originals() -> None:
    functions = [transfer, balance]
    wrapped = list(wrap_table({"transfer": transfer, "balance": balance}, SWARM_SCHEMAS).values())
    context = {"user": "ada"}
    for name, arguments in (("transfer", '{"amount": 5, "to": "bob"}'), ("balance", "{}")):
        assert _swarm_like_dispatch(wrapped, name, arguments, context) == _swarm_like_dispatch(
            functions, name, arguments, context
        )
    mistyped = '{"amount": "5", "to": "bob", "urgent": "true"}'
    assert _swarm_like_dispatch(functions, "transfer", mistyped, context) == "ada sends '5' to bob (urgent: 'true')"
    assert _swarm_like_dispatch(wrapped, "transfer", mistyped, context) == "ada sends 5 to bob (urgent: True)"
    assert [_function_to_json(f) for f in wrapped] == [_function_to_json(f) for f in functions]


def _everything(a: int, b: int = 2, /, c: int = 3, *rest: int, d: int, context_variables: Any = None, **kw: Any) -> Any:
    """Every kind of parameter."""
    total = a + b + c + d

    def inner() -> int:
        return total

    return (a, b, c, rest, d, context_variables, kw, inner())


async def _async_tool(agent: Any, args: Dict[str, Any], ctx: Any = None) -> Any:
    """Asynchronous."""
    seen = args
    return seen


class _Tools:
    def plan(self, args: Dict[str, Any], *, verbose: bool = False) -> Any:
        """A bound method."""
        steps = args
        return self, steps, verbose

    async def recall(self, /, k: Any) -> Any:
        return self, k


_TOOLS = _Tools()
INTROSPECTED = [
    pytest.param(_everything, id="every kind of parameter"),
    pytest.param(_async_tool, id="async function"),
    pytest.param(_TOOLS.plan, id="bound method"),
    pytest.param(_TOOLS.recall, id="async bound method, positional-only self"),
    pytest.param(lambda n, *, k=1: (n, k), id="lambda"),
]
_CODE_FIELDS = ("co_varnames", "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_name")
_SHAPE_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_COROUTINE


@pytest.mark.parametrize("executor", INTROSPECTED)
def test_the_wrapper_answers_introspection_as_the_executor_does(executor: Any) -> None:
    wrapped = wrap_table({"t": executor}, {"t": PLAN})["t"]
    for field in _CODE_FIELDS:
        assert getattr(wrapped.__code__, field) == getattr(executor.__code__, field), field
    assert wrapped.__code__.co_flags & _SHAPE_FLAGS == executor.__code__.co_flags & _SHAPE_FLAGS
    assert inspect.signature(wrapped) == inspect.signature(executor)
    assert inspect.getfullargspec(wrapped) == inspect.getfullargspec(executor)
    for attribute in ("__name__", "__qualname__", "__doc__", "__module__", "__defaults__", "__kwdefaults__"):
        assert getattr(wrapped, attribute) == getattr(executor, attribute), attribute
    assert wrapped.__annotations__ == executor.__annotations__
    assert inspect.ismethod(wrapped) == inspect.ismethod(executor)
    assert inspect.iscoroutinefunction(wrapped) == inspect.iscoroutinefunction(executor)
    assert inspect.unwrap(wrapped) == executor and wrapped.__wrapped__ == executor
    if inspect.ismethod(executor):
        assert wrapped.__self__ is executor.__self__


def test_every_kind_of_parameter_reaches_the_executor_as_it_was_passed() -> None:
    wrapped = wrap_table({"t": _everything}, {"t": {"type": "object", "properties": {"x": {"type": "integer"}}}})["t"]
    assert wrapped(1, d=4, x="5") == _everything(1, d=4, x=5)
    assert wrapped(1, 2, 3, 9, 9, d=4, context_variables="c") == _everything(1, 2, 3, 9, 9, d=4, context_variables="c")
    with pytest.raises(TypeError, match=r"_everything\(\) missing 1 required keyword-only argument: 'd'"):
        wrapped(1)


def test_a_bound_method_and_an_async_one_get_repaired_arguments() -> None:
    wrapped = wrap_table({"plan": _TOOLS.plan, "recall": _TOOLS.recall}, {**SCHEMAS, "recall": SCHEMAS["recall"]})
    assert wrapped["plan"](MISTYPED, verbose=True) == (_TOOLS, REPAIRED, True)
    assert wrapped["plan"](args=MISTYPED) == (_TOOLS, REPAIRED, False)
    assert asyncio.run(wrapped["recall"](k="7")) == (_TOOLS, 7)


def test_named_parameters_are_repaired_however_they_are_passed() -> None:
    def search(query: str, limit: int = 5) -> Any:
        return query, limit

    schema = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}
    wrapped = wrap_table({"search": search}, {"search": schema})["search"]
    assert wrapped("q", "3") == wrapped("q", limit="3") == wrapped(query="q", limit="3") == ("q", 3)
    assert wrapped("q") == ("q", 5)


def test_a_method_decorated_in_its_class_binds_as_a_method() -> None:
    class Agent:
        @coerced("plan", PLAN)
        def plan(self, args: Dict[str, Any]) -> Any:
            return self, args

    agent = Agent()
    assert agent.plan(MISTYPED) == (agent, REPAIRED)
    assert Agent.plan.__code__.co_varnames == ("self", "args")


def test_a_callable_object_keeps_its_signature() -> None:
    class Tool:
        def __call__(self, agent: Any, args: Dict[str, Any]) -> Any:
            return args

    tool = Tool()
    wrapped = wrap_table({"plan": tool}, SCHEMAS)["plan"]
    assert inspect.signature(wrapped) == inspect.signature(tool)
    assert wrapped(None, MISTYPED) == REPAIRED


@pytest.mark.parametrize("args_at, error", [(-1, ValueError), (-3, ValueError), (True, TypeError), (1.0, TypeError)])
def test_an_arguments_position_that_names_no_parameter_is_refused_when_wrapping(args_at: Any, error: type) -> None:
    with pytest.raises(error, match="args_at must be"):
        wrap_table({"plan": _plan}, SCHEMAS, args_at=args_at)
    with pytest.raises(error, match="args_at must be"):
        coerced("plan", PLAN, args_at=args_at)
