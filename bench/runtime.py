"""Microseconds per call of ``dispatchlint.runtime.coerce_args``, side by side with what else a team could run.

Run ``python bench/runtime.py`` (needs the ``bench`` extra: ``pip install -e .[bench]``). It prints a markdown
table, one row per schema and kind of call (valid, mistyped), all measured in the same run:

- ``dispatchlint``: ``coerce_args(parameters, args)``;
- ``hand-written``: a repair written by hand for that one schema (plain Python: ``json.loads`` of the field that
  needs it, ``int()`` of the next, new dicts), the floor a generic repair is measured against;
- ``pydantic-core (lax)``: a ``TypeAdapter`` over TypedDicts equivalent to the schema, whose lax mode also
  converts ``"10"`` to ``10`` (but never parses an array sent as JSON text: "n/a" on that row);
- ``fastjsonschema``: a validator compiled from the schema (it only says whether the arguments are valid, and
  stops at the first error);
- ``jsonschema``: a prebuilt ``Draft202012Validator``, all errors (``iter_errors``).

A second table shows the plan cache at work: the same mistyped call with one schema object, with a fresh equal
dict for every call (a schema source that rebuilds it), and round-robin over 500 and 600 schemas (below and
above the 512 plans kept), with the compiles per call.

Targets: a valid call within 1.5x of pydantic-core, a mistyped call within 1.5x of the hand-written repair. The
four columns of a row are timed in turn, batch after batch, and each keeps its best batch, so that they are
compared under the same load; on a shared machine the figures still move between runs (the ratios less so).
"""

from __future__ import annotations

import functools
import itertools
import json
import sys
import time
import timeit
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

import fastjsonschema
import jsonschema
from pydantic import TypeAdapter
from typing_extensions import Literal, NotRequired, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dispatchlint.runtime import coerce_args  # noqa: E402 - after the path set-up above
from dispatchlint.runtime._cache import PLANS  # noqa: E402

TODO_PARAMETERS: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "content": {"type": "string"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                    "done": {"type": "boolean"},
                    "priority": {"type": "integer"},
                },
                "required": ["id", "content", "status"],
            },
        },
        "merge": {"type": "boolean"},
    },
    "required": ["todos"],
}

SEARCH_PARAMETERS: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "offset": {"type": "integer"},
        "include_archived": {"type": "boolean"},
        "min_score": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "language": {"type": ["string", "null"]},
    },
    "required": ["query"],
}

# Nested objects, an enum and a $ref (to one definition used twice).
ORDER_PARAMETERS: Dict[str, Any] = {
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}, "floor": {"type": "integer"}},
            "required": ["street", "city"],
        }
    },
    "properties": {
        "customer": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "vip": {"type": "boolean"},
                "address": {"$ref": "#/$defs/address"},
            },
            "required": ["name"],
        },
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "quantity": {"type": "integer"},
                    "unit_price": {"type": "number"},
                },
                "required": ["sku", "quantity"],
            },
        },
        "priority": {"enum": ["low", "normal", "high"]},
        "gift": {"type": "boolean"},
        "shipping": {"$ref": "#/$defs/address"},
    },
    "required": ["customer", "lines"],
}


class Todo(TypedDict):
    id: str
    content: str
    status: Literal["pending", "in_progress", "completed"]
    done: NotRequired[bool]
    priority: NotRequired[int]


class TodoArgs(TypedDict):
    todos: List[Todo]
    merge: NotRequired[bool]


class SearchArgs(TypedDict):
    query: str
    limit: NotRequired[int]
    offset: NotRequired[int]
    include_archived: NotRequired[bool]
    min_score: NotRequired[float]
    tags: NotRequired[List[str]]
    language: NotRequired[Optional[str]]


class Address(TypedDict):
    street: str
    city: str
    floor: NotRequired[int]


class Customer(TypedDict):
    name: str
    vip: NotRequired[bool]
    address: NotRequired[Address]


class Line(TypedDict):
    sku: str
    quantity: int
    unit_price: NotRequired[float]


class OrderArgs(TypedDict):
    customer: Customer
    lines: List[Line]
    priority: NotRequired[Literal["low", "normal", "high"]]
    gift: NotRequired[bool]
    shipping: NotRequired[Address]


# ---------------------------------------------------------------------------------------------- the floor


def _boolean(value: Any) -> Any:
    return value.strip().lower() == "true" if isinstance(value, str) else value


def _integer(value: Any) -> Any:
    return int(value) if isinstance(value, str) else value


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, str) else value


def repair_todo(args: Dict[str, Any]) -> Dict[str, Any]:
    todos = args["todos"]
    if isinstance(todos, str):
        todos = json.loads(todos)
    repaired = []
    for todo in todos:
        todo = dict(todo)
        if "done" in todo:
            todo["done"] = _boolean(todo["done"])
        if "priority" in todo:
            todo["priority"] = _integer(todo["priority"])
        repaired.append(todo)
    result = dict(args)
    result["todos"] = repaired
    if "merge" in result:
        result["merge"] = _boolean(result["merge"])
    return result


def repair_search(args: Dict[str, Any]) -> Dict[str, Any]:
    result = dict(args)
    for name in ("limit", "offset"):
        if name in result:
            result[name] = _integer(result[name])
    if "include_archived" in result:
        result["include_archived"] = _boolean(result["include_archived"])
    if "min_score" in result:
        result["min_score"] = _number(result["min_score"])
    if isinstance(result.get("tags"), str):
        result["tags"] = json.loads(result["tags"])
    return result


def _address(address: Dict[str, Any]) -> Dict[str, Any]:
    address = dict(address)
    if "floor" in address:
        address["floor"] = _integer(address["floor"])
    return address


def repair_order(args: Dict[str, Any]) -> Dict[str, Any]:
    result = dict(args)
    customer = result["customer"] = dict(result["customer"])
    if "vip" in customer:
        customer["vip"] = _boolean(customer["vip"])
    if "address" in customer:
        customer["address"] = _address(customer["address"])
    lines = []
    for line in result["lines"]:
        line = dict(line)
        line["quantity"] = _integer(line["quantity"])
        if "unit_price" in line:
            line["unit_price"] = _number(line["unit_price"])
        lines.append(line)
    result["lines"] = lines
    if "gift" in result:
        result["gift"] = _boolean(result["gift"])
    if "shipping" in result:
        result["shipping"] = _address(result["shipping"])
    return result


# ---------------------------------------------------------------------------------------------- the cases


def _todos(done: Any, priority: Any) -> List[Dict[str, Any]]:
    statuses = ["pending", "in_progress", "completed"]
    return [
        {
            "id": str(n),
            "content": f"step {n} of the plan",
            "status": statuses[n % 3],
            "done": done,
            "priority": priority,
        }
        for n in range(5)
    ]


def _search(limit: Any, offset: Any, archived: Any, score: Any) -> Dict[str, Any]:
    return {
        "query": "quarterly report",
        "limit": limit,
        "offset": offset,
        "include_archived": archived,
        "min_score": score,
        "tags": ["finance", "q3"],
        "language": None,
    }


def _order(vip: Any, floor: Any, quantity: Any, price: Any, gift: Any) -> Dict[str, Any]:
    return {
        "customer": {"name": "Ada", "vip": vip, "address": {"street": "1 Main St", "city": "Turin", "floor": floor}},
        "lines": [{"sku": f"SKU-{n}", "quantity": quantity, "unit_price": price} for n in range(3)],
        "priority": "high",
        "gift": gift,
        "shipping": {"street": "2 Side St", "city": "Milan", "floor": floor},
    }


class Case(NamedTuple):
    label: str
    parameters: Dict[str, Any]
    #: None where pydantic's lax mode does not do the repair (an array sent as JSON text).
    typed_dict: Any
    by_hand: Callable[[Dict[str, Any]], Dict[str, Any]]
    args: Dict[str, Any]


# Mistyped the way models mistype, and only in ways pydantic's lax mode also converts (so all do real work).
CASES: List[Case] = [
    Case("todo, valid", TODO_PARAMETERS, TodoArgs, repair_todo, {"todos": _todos(False, 2), "merge": True}),
    Case("todo, mistyped", TODO_PARAMETERS, TodoArgs, repair_todo, {"todos": _todos("false", "2"), "merge": "true"}),
    # The array as JSON text, with mistyped values inside its items: parse, then repair what was parsed.
    Case(
        "todo, mistyped, array as JSON text",
        TODO_PARAMETERS,
        None,
        repair_todo,
        {"todos": json.dumps(_todos("false", "2")), "merge": "true"},
    ),
    Case("search, valid", SEARCH_PARAMETERS, SearchArgs, repair_search, _search(10, 0, False, 0.5)),
    Case("search, mistyped", SEARCH_PARAMETERS, SearchArgs, repair_search, _search("10", "0", "false", "0.5")),
    Case("order, valid", ORDER_PARAMETERS, OrderArgs, repair_order, _order(True, 3, 2, 9.5, False)),
    Case("order, mistyped", ORDER_PARAMETERS, OrderArgs, repair_order, _order("true", "3", "2", "9.5", "false")),
]


def microseconds(calls: Sequence[Callable[[], Any]], rounds: int = 200) -> List[float]:
    """Microseconds per call of each of ``calls``: the best of ``rounds`` batches, the batches of all the calls
    taken in turn, so that each is measured under the same load as the others."""
    timers = [timeit.Timer(call) for call in calls]
    numbers = [max(1, timer.autorange()[0] // 100) for timer in timers]  # batches of about 2 ms
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for index, (timer, number) in enumerate(zip(timers, numbers)):
            best[index] = min(best[index], timer.timeit(number) / number * 1e6)
    return best


def _all_errors(validator: Any, args: Any) -> List[Any]:
    return list(validator.iter_errors(args))


def _fast_validation(validate: Callable[[Any], Any], args: Any) -> bool:
    try:
        validate(args)
    except fastjsonschema.JsonSchemaValueException:
        return False
    return True


def _same(first: Any, second: Any) -> bool:
    return json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def main() -> int:
    rows = []
    for case in CASES:
        validator = jsonschema.Draft202012Validator(case.parameters)
        validate = fastjsonschema.compile(case.parameters)
        repaired = coerce_args(case.parameters, case.args)
        # The repairs agree on the result, so that they are timed doing the same work.
        assert _same(repaired, case.by_hand(case.args)), (repaired, case.label)
        assert _fast_validation(validate, case.args) == ("valid" in case.label)
        calls = [
            functools.partial(coerce_args, case.parameters, case.args),
            functools.partial(case.by_hand, case.args),
            functools.partial(_fast_validation, validate, case.args),
        ]
        if case.typed_dict is not None:
            adapter = TypeAdapter(case.typed_dict)
            assert _same(repaired, adapter.validate_python(case.args)), (repaired, case.label)
            calls.append(functools.partial(adapter.validate_python, case.args))
        times = microseconds(calls)
        errors = microseconds([functools.partial(_all_errors, validator, case.args)], 20)[0]
        rows.append((case.label, times[0], times[1], times[3] if len(times) > 3 else None, times[2], errors))
    version = sys.version.split()[0]
    print(f"Python {version}; microseconds per call, best of 200 interleaved batches of about 2 ms; one run\n")
    print(
        "| case | dispatchlint | hand-written repair | pydantic-core (lax) | fastjsonschema (validate) "
        "| jsonschema (iter_errors) | vs pydantic-core | vs hand-written |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, ours, by_hand, pydantic, fast, errors in rows:
        pydantic_time, versus_pydantic = ("n/a", "n/a")
        if pydantic is not None:
            pydantic_time, versus_pydantic = f"{pydantic:.2f}", f"{ours / pydantic:.2f}x"
        print(
            f"| {label} | {ours:.2f} | {by_hand:.2f} | {pydantic_time} | {fast:.2f} | {errors:.2f} "
            f"| {versus_pydantic} | {ours / by_hand:.2f}x |"
        )
    print("\n| schema source (search, mistyped) | microseconds per call | compiles per call |")
    print("|---|---:|---:|")
    for label, per_call, compiles in _cache_rows():
        print(f"| {label} | {per_call:.2f} | {compiles:.3f} |")
    return 0


def _cache_rows() -> List[Any]:
    """(label, microseconds per call, compiles per call) of one mistyped search call under each schema source."""
    args = CASES[3].args
    sources: List[Any] = [("one schema object", lambda: SEARCH_PARAMETERS, 1)]
    # A source that builds the schema anew for each call (its building is in the time).
    sources.append(("a new dict every call", lambda: {**SEARCH_PARAMETERS}, 1))
    for count in (500, 600):
        schemas = _distinct_schemas(count)
        sources.append((f"{count} schemas, round-robin", functools.partial(next, itertools.cycle(schemas)), count))
    rows = []
    for label, source, working_set in sources:
        calls = max(1000, working_set * 4)
        for _ in range(calls):  # warm: the plans a steady state holds, specialised
            coerce_args(source(), args)
        compiles = PLANS[True].compiles
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(calls):
                coerce_args(source(), args)
            best = min(best, (time.perf_counter() - start) / calls * 1e6)
        rows.append((label, best, (PLANS[True].compiles - compiles) / (5 * calls)))
    return rows


def _distinct_schemas(count: int) -> List[Dict[str, Any]]:
    return [{**SEARCH_PARAMETERS, "description": f"tool {number}"} for number in range(count)]


if __name__ == "__main__":
    sys.exit(main())
