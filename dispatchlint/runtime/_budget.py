"""The union budget: how much union and ``allOf`` work one call may do before it gives its input back.

Overlapping unions nested in a recursive schema could make the work exponential in the depth; every call that
runs a plan with unions starts a fresh budget, and each union or ``allOf`` evaluation spends from it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

#: Union and ``allOf`` evaluations allowed per call: far more than any model's arguments need (about one per
#: value at a union). Past the budget the call gives its input back unrepaired.
UNION_BUDGET = 200_000


class UnionBudgetError(Exception):
    """Raised inside a call whose unions used up ``UNION_BUDGET``; the call then keeps its input."""


class _Budget(threading.local):
    left = UNION_BUDGET


_budget = _Budget()


def charge() -> None:
    """Spend one evaluation; raises ``UnionBudgetError`` when the call has none left."""
    left = _budget.left - 1
    _budget.left = left
    if left < 0:
        raise UnionBudgetError


def budgeted(repair: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``repair``, starting a fresh budget on every call (it raises ``UnionBudgetError`` when that runs out)."""

    def repair_within_budget(value: Any) -> Any:
        _budget.left = UNION_BUDGET
        return repair(value)

    return repair_within_budget
