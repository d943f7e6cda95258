"""The gate: restore sanitized names, then repair values, against a tool's own parameters schema."""

from __future__ import annotations

from typing import Any, Iterator, Tuple

from ._plan import apply_schema


def coerce_args(parameters: Any, args: Any) -> Any:
    """Repair a model's arguments against the tool's parameters schema (or whole tool definition).

    At each object level, sanitized property names are first mapped back to the registry's names (see
    ``unrename_args``), then values are repaired by key. A value changes only when its JSON type is not
    admitted at its place and exactly one repair exists: a string that is the JSON literal of an admitted
    value (``"42"``, ``"true"``, ``'["a"]'``), an integral float where only integers are admitted, a single
    value where an array is wanted. Everything else is kept for the tool's own validation to report.

    Pure: ``args`` is never mutated, and is returned itself when nothing changed (repaired containers are new
    plain dicts and lists that share the unchanged parts). Never raises, whatever the schema or the arguments.
    The schema is compiled once, on first use, and cached by identity: do not change it in place afterwards.
    Values nested deeper than the schema walk's bound (100 levels of subschemas and references) are left alone.
    """
    try:
        return apply_schema(parameters, args, True)
    except Exception:  # the gate must never be what fails a tool call; a value it cannot handle stays as it is
        return args


def unrename_args(parameters: Any, args: Any) -> Any:
    """Map property names that ``sanitize_schema`` renamed back to the registry's names, at every level.

    ``parameters`` is the registry's own (unsanitized) schema: the renaming is recomputed from it. A key that is
    a registry name is never renamed, and when both a name and its alias are present both are kept. Values
    are not converted. Pure and never raises, like ``coerce_args``.
    """
    try:
        return apply_schema(parameters, args, False)
    except Exception:  # same guarantee as coerce_args
        return args


def changed_values(before: Any, after: Any, pointer: str = "") -> Iterator[Tuple[str, Any, Any]]:
    """(JSON pointer, before, after) for each value ``after`` repaired, outermost first, in document order.

    ``after`` shares every unchanged part of ``before`` (``coerce_args`` guarantees it), so only changed paths
    are walked. Keys absent from ``before`` (renamed) are skipped: compare with ``unrename_args(...)`` output.
    """
    if after is before:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key, new in after.items():
            if key in before:
                yield from changed_values(before[key], new, f"{pointer}/{_pointer_token(key)}")
    elif isinstance(before, (list, tuple)) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after)):
            yield from changed_values(old, new, f"{pointer}/{index}")
    else:
        yield pointer, before, after


def _pointer_token(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
