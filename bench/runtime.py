"""Microseconds per call of ``dispatchlint.runtime.coerce_args``, side by side with pydantic and jsonschema.

Run ``python bench/runtime.py`` (needs the ``bench`` extra: ``pip install -e .[bench]``). It prints a markdown
table. The comparison points: pydantic-core's lax validation (a ``TypeAdapter`` over TypedDicts equivalent to
the schema, which also converts ``"10"`` to ``10``) and a prebuilt jsonschema validator (which only reports
errors: ``iter_errors`` is timed). Targets: within 2x of pydantic, at least 10x faster than jsonschema.
"""

from __future__ import annotations

import functools
import json
import sys
import timeit
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import jsonschema
from pydantic import TypeAdapter
from typing_extensions import Literal, NotRequired, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dispatchlint.runtime import coerce_args  # noqa: E402 - after the path set-up above

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


# Mistyped the way models mistype, and only in ways pydantic's lax mode also converts (so both do real work).
CASES: List[Tuple[str, Dict[str, Any], Any, Dict[str, Any]]] = [
    ("todo, valid", TODO_PARAMETERS, TodoArgs, {"todos": _todos(False, 2), "merge": True}),
    ("todo, mistyped", TODO_PARAMETERS, TodoArgs, {"todos": _todos("false", "2"), "merge": "true"}),
    (
        "search, valid",
        SEARCH_PARAMETERS,
        SearchArgs,
        {
            "query": "quarterly report",
            "limit": 10,
            "offset": 0,
            "include_archived": False,
            "min_score": 0.5,
            "tags": ["finance", "q3"],
            "language": None,
        },
    ),
    (
        "search, mistyped",
        SEARCH_PARAMETERS,
        SearchArgs,
        {
            "query": "quarterly report",
            "limit": "10",
            "offset": " 0 ",
            "include_archived": "false",
            "min_score": "0.5",
            "tags": ["finance", "q3"],
            "language": None,
        },
    ),
]


def microseconds(call: Callable[[], Any]) -> float:
    """Best of 11 runs (the least disturbed by other processes), in microseconds per call."""
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=11, number=number)) / number * 1e6


def _all_errors(validator: Any, args: Any) -> List[Any]:
    return list(validator.iter_errors(args))


def main() -> int:
    rows = []
    for label, parameters, typed_dict, args in CASES:
        adapter = TypeAdapter(typed_dict)
        validator = jsonschema.Draft202012Validator(parameters)
        expected = adapter.validate_python(args)
        repaired = coerce_args(parameters, args)
        assert json.dumps(repaired, sort_keys=True) == json.dumps(expected, sort_keys=True), (repaired, expected)
        ours = microseconds(functools.partial(coerce_args, parameters, args))
        theirs = microseconds(functools.partial(adapter.validate_python, args))
        errors = microseconds(functools.partial(_all_errors, validator, args))
        rows.append((label, ours, theirs, errors))
    print(f"Python {sys.version.split()[0]}; microseconds per call (best of 11)\n")
    print("| case | dispatchlint | pydantic (lax) | jsonschema (iter_errors) | vs pydantic | jsonschema / ours |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, ours, theirs, errors in rows:
        print(f"| {label} | {ours:.2f} | {theirs:.2f} | {errors:.2f} | {ours / theirs:.2f}x | {errors / ours:.0f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
