"""The plan cache: found by identity, then by content; bounded without thrashing; specialised once warm."""

from __future__ import annotations

import copy
import threading
from typing import Any, Dict, List

from dispatchlint.runtime import coerce_args, coerce_tool_call
from dispatchlint.runtime._cache import _SPECIALISING, PLANS, SPECIALISE_AFTER, PlanCache, content_key


def _schema(number: int) -> Dict[str, Any]:
    return {"type": "object", "properties": {f"n{number}": {"type": "integer"}, "tags": {"type": "array"}}}


def test_a_schema_source_that_builds_a_new_dict_for_every_call_compiles_it_once() -> None:
    template = _schema(0)
    compiles = PLANS[True].compiles
    for _ in range(100):
        assert coerce_tool_call(copy.deepcopy(template), '{"n0": "4", "tags": "x"}') == {"n0": 4, "tags": ["x"]}
    assert PLANS[True].compiles - compiles == 1


def test_equal_looking_schemas_of_other_types_get_their_own_plans() -> None:
    # 1, 1.0 and True are equal in Python and hash alike; as a const they admit different values.
    cache = PlanCache(True)
    plans = [cache.plan({"const": value}) for value in (1, 1.0, True)]
    assert len({id(plan) for plan in plans}) == 3 and cache.compiles == 3
    assert [plan.repair("true") for plan in plans] == ["true", "true", True]
    assert cache.plan({"const": True}) is plans[2]


def test_a_schema_changed_in_place_keeps_its_plan_and_equal_schemas_find_theirs() -> None:
    cache = PlanCache(True)
    schema = _schema(1)
    before = cache.plan(schema)
    schema["properties"]["n1"] = {"type": "boolean"}  # against the documented rule: its plan is kept by identity
    assert cache.plan(schema) is before
    assert cache.plan(_schema(1)) is before  # the content it had when compiled
    changed = cache.plan(copy.deepcopy(schema))
    assert changed is not before and changed.repair({"n1": "true"}) == {"n1": True}


def test_schemas_that_are_not_plain_data_are_planned_by_identity() -> None:
    marker = object()
    cache = PlanCache(True)
    cyclic: Dict[str, Any] = {"type": "object"}
    cyclic["properties"] = {"self": cyclic}
    assert content_key({"const": marker}) is None and content_key({"type": ("integer",)}) is not None
    assert content_key(cyclic) is not None  # pickle writes the cycle once
    first, second = cache.plan({"const": marker}), cache.plan({"const": marker})
    assert first is not second and cache.compiles == 2


def test_a_working_set_larger_than_the_cache_still_finds_most_of_its_plans() -> None:
    # Dropping the oldest plan, each round over 600 schemas would compile all 600 again.
    cache = PlanCache(True, size=512)
    schemas = [_schema(number) for number in range(600)]
    rounds = 5
    for _ in range(rounds):
        for schema in schemas:
            cache.plan(schema)
            assert len(cache.by_identity) <= 512
    recompiles = cache.compiles - len(schemas)
    assert recompiles < 0.35 * len(schemas) * (rounds - 1)


def test_a_plan_runs_its_generic_tree_first_and_its_specialised_function_once_warm() -> None:
    plan = PlanCache(True).plan(_schema(2))
    for _ in range(SPECIALISE_AFTER - 1):
        assert plan.repair({"n2": "1"}) == {"n2": 1}
    assert not plan.warm
    assert plan.repair({"n2": "2"}) == {"n2": 2}
    assert plan.warm and plan.repair is plan.specialised()
    assert plan.specialisation().lines > 0


def test_a_call_never_waits_for_another_thread_that_specialises() -> None:
    plan = PlanCache(True).plan(_schema(3))
    results: List[Any] = []
    with _SPECIALISING:  # as if another thread were specialising some plan
        worker = threading.Thread(target=lambda: results.extend(plan.repair({"n3": "5"}) for _ in range(40)))
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive() and not plan.warm
    assert results == [{"n3": 5}] * 40
    plan.repair({"n3": "6"})
    assert plan.warm


def test_the_identity_lookup_keeps_the_schema_alive_so_its_id_is_not_reused() -> None:
    cache = PlanCache(True)
    plan = cache.plan(_schema(4))  # no other reference to the schema
    assert cache.by_identity[id(plan.schema)] is plan
    assert coerce_args(plan.schema, {"n4": "8"}) == {"n4": 8}
