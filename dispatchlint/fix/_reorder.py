"""DL301 fix (unsafe): restore sanitized names first, then repair by key.

The gate ends with ``return unrename_args(parameters, repaired)``; the fix restores the names of the incoming
arguments as soon as the names it needs are known (``args = unrename_args(parameters, args)`` right after
``parameters = ...``) and returns the repaired value as it is. Unsafe: code between the two steps may have relied
on the sanitized names (a log line, a key test).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

from dispatchlint.indexing.annotations import ARGS_NAMES
from dispatchlint.indexing.facts import BodyStep, FunctionDef, ModuleFacts
from dispatchlint.fix._context import Context


@dataclass(frozen=True)
class ReorderFix:
    module: ModuleFacts
    function: FunctionDef
    #: The body statement the restoring call goes before, and the one that restored names last (indexes).
    before: int
    restore: int
    args: str
    repaired: str


def reorder_fix(context: Context, module: ModuleFacts, function: FunctionDef) -> Union[ReorderFix, str]:
    body = context.shapes(module).bodies.get(function.span)
    args = next((param for param in function.params if param in ARGS_NAMES), None)
    if body is None or args is None:
        return "the gate's arguments parameter cannot be found"
    found = _restoring_statement(context, module, function, body)
    if found is None:
        return "the gate does not restore names in one plain statement of its body"
    index, names = found
    repaired = [name for name in names if _derived(body[:index], name)]
    if len(repaired) != 1:
        return "the value whose names are restored cannot be told"
    needed = set(names) - {repaired[0]}
    insert_at = max([i + 1 for i in range(index) if set(body[i].assigns) & needed], default=0)
    first_read = next((i for i in range(index) if body[i].reads_arguments), index)
    if insert_at > first_read:
        return f"`{args}` is read before the names the restoring call needs are known"
    return ReorderFix(module, function, insert_at, index, args, repaired[0])


def _restoring_statement(
    context: Context, module: ModuleFacts, function: FunctionDef, body: Sequence[BodyStep]
) -> Optional[Tuple[int, Tuple[str, ...]]]:
    """The one statement that restores names: ``return unrename(...)`` or ``name = unrename(...)``, and the
    names it passes."""
    for index, step in enumerate(body):
        if step.callee and context.project.gates.is_sanitizer(module, step.callee, function.qualname):
            return index, step.passed
    return None


def _derived(steps: Sequence[BodyStep], name: str) -> bool:
    """``name`` is assigned from an expression that reads the gate's arguments."""
    return any(name in step.assigns and step.reads_arguments for step in steps)
