"""The gate: restore sanitized names, then repair values, against a tool's own parameters schema."""

from __future__ import annotations

import logging
from collections.abc import Mapping as AbstractMapping
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple, TypeVar, Union, overload

from ._json import MISSING, OBJECT, json_kind, strict_json
from ._cache import PLANS, apply_schema
from ._schema import defined_name
from .contract import PACKAGE

#: ``on_repair(tool_name, pointer, before, after)``, called for every repaired value (``pointer`` is a JSON
#: pointer such as ``/steps/0/done`` using the registry's property names). ``tool_name`` is never empty: the
#: name the caller gave, else the tool definition's, else ``UNNAMED_TOOL``.
RepairCallback = Callable[[str, str, Any, Any], None]
#: The tool name ``on_repair`` reports when none is known (a bare parameters schema and no ``tool_name``): not a
#: name a provider accepts for a tool (``[a-zA-Z0-9_-]``), so it is never mistaken for one.
UNNAMED_TOOL = "<unnamed tool>"
#: A tool call's arguments already parsed: they come back as they came (a dict or another mapping), or repaired
#: as a new dict. Typed so that a dict gives a ``Dict[str, Any]`` and a ``Mapping`` a ``Mapping``.
Arguments = TypeVar("Arguments", bound=Mapping[str, Any])
#: A tool call's arguments as JSON text; what does not parse to an object comes back as this same text.
Text = TypeVar("Text", str, bytes, bytearray)

#: Where the runtime reports what it absorbs so as never to fail a tool call: a callback that raised, a schema
#: source that raised.
log = logging.getLogger(PACKAGE)
_COERCING = PLANS[True]
_COERCING_PLANS = _COERCING.by_identity


def coerce_args(
    parameters: Any, args: Arguments, *, on_repair: Optional[RepairCallback] = None, tool_name: Optional[str] = None
) -> Union[Arguments, Dict[str, Any]]:
    """Repair a model's arguments against the tool's parameters schema (or whole tool definition).

    At each object level, sanitized property names are first mapped back to the registry's names (see
    ``unrename_args``), then values are repaired by key. A value changes only when it is not admitted at its
    place and exactly one repair exists: a string that is the JSON literal of an admitted value (``"42"``,
    ``"true"``, ``'["a"]'``), an integral float where only integers are admitted, a single value where an
    array is wanted (``"5"`` for an array of integers is ``[5]``). With ``enum`` or ``const``, only the listed
    values are admitted. Everything else is kept for the tool's own validation to report.

    Pure: ``args`` is never mutated, and is returned itself when nothing changed (repaired containers are new
    plain dicts and lists that share the unchanged parts). Never raises, whatever the schema or the arguments.
    Arguments that are an object stay one, as typed (a dict gives a dict, a mapping a mapping): where the
    schema's top does not admit an object (``{"type": "array"}`` would wrap them in a list), they come back as
    they came. Only dicts are repaired: another ``Mapping`` (``MappingProxyType``...) comes back as it came.
    The schema is compiled once, on first use, and cached by identity and by content (an equal schema built
    anew for each call finds the same plan): do not change a schema in place afterwards.
    Values nested deeper than the schema walk's bound (100 levels of subschemas and references) are left alone.

    ``on_repair`` is called for every repaired value with the tool's name, a JSON pointer, the value before and
    after. The name is ``tool_name`` when given, else the tool definition's own, else ``UNNAMED_TOOL`` (a bare
    parameters schema: pass ``tool_name`` to have the callback name the tool). A callback that raises is
    logged on the ``dispatchlint.runtime`` logger and the call goes on.
    """
    repaired: Union[Arguments, Dict[str, Any]] = repaired_arguments(parameters, args)
    if on_repair is not None and repaired is not args:
        report_repairs(tool_name or "", parameters, args, repaired, on_repair)
    return repaired


@overload
def coerce_tool_call(
    parameters: Any, raw: None, *, on_repair: Optional[RepairCallback] = None, tool_name: Optional[str] = None
) -> Dict[str, Any]: ...
@overload
def coerce_tool_call(
    parameters: Any, raw: Arguments, *, on_repair: Optional[RepairCallback] = None, tool_name: Optional[str] = None
) -> Union[Arguments, Dict[str, Any]]: ...
@overload
def coerce_tool_call(
    parameters: Any, raw: Text, *, on_repair: Optional[RepairCallback] = None, tool_name: Optional[str] = None
) -> Union[Dict[str, Any], Text]: ...
def coerce_tool_call(
    parameters: Any, raw: Any, *, on_repair: Optional[RepairCallback] = None, tool_name: Optional[str] = None
) -> Any:
    """The arguments of a tool call as the provider sends them, parsed and repaired: the one call a loop needs.

    ``raw`` is a JSON text (``str`` or ``bytes``, strictly parsed: no ``NaN``, no ``Infinity``, finite numbers;
    an empty or blank text is ``{}``), a mapping, or None (``{}``). The result is ``coerce_args`` of what was
    parsed (``on_repair`` and ``tool_name`` as there). Never raises: a text that is not JSON, or whose value is
    not an object even once repaired (a JSON string holding an object's text is one), is returned as it came,
    for the tool's own validation to report.
    So None and a dict give a dict, a mapping a mapping, and a text a dict or that same text (typed
    ``Union[Dict[str, Any], str]``: test ``isinstance(result, dict)`` before ``tool(**result)``).
    """
    if raw is None:
        return coerce_args(parameters, {}, on_repair=on_repair, tool_name=tool_name)
    if not isinstance(raw, (str, bytes, bytearray)):
        return coerce_args(parameters, raw, on_repair=on_repair, tool_name=tool_name)
    try:
        blank = not raw.strip()
    except Exception:  # a str subclass with a hostile strip()
        return raw
    parsed = {} if blank else strict_json(raw)
    if parsed is MISSING:
        return raw
    repaired = coerce_args(parameters, parsed, on_repair=on_repair, tool_name=tool_name)
    return repaired if json_kind(repaired) == OBJECT else raw


def repaired_arguments(parameters: Any, args: Any) -> Any:
    """``args`` repaired against ``parameters``; ``args`` itself when nothing changed, when the repair failed, and
    when arguments that are an object would not be one once repaired (as ``coerce_args``'s type says)."""
    try:
        repaired = (_COERCING_PLANS.get(id(parameters)) or _COERCING.plan(parameters)).repair(args)
        if repaired is not args and isinstance(args, AbstractMapping) and not isinstance(repaired, dict):
            return args
    except Exception:  # the gate must never be what fails a tool call; a value it cannot handle stays as it is
        return args  # (UnionBudgetError too: the call's unions ran out of budget)
    return repaired


def report_repairs(name: str, parameters: Any, before: Any, after: Any, on_repair: RepairCallback) -> None:
    """Call ``on_repair`` for each value ``after`` repaired in ``before``; a callback that raises is logged.

    ``name`` is the tool's name as the caller knows it (``""`` when it knows none): the definition's own name,
    else ``UNNAMED_TOOL``, stands in for an empty one.
    """
    name = name or defined_name(parameters) or UNNAMED_TOOL
    try:
        changes = list(changed_values(unrename_args(parameters, before), after))
    except RecursionError:  # values nested deeper than the stack: the repair stands, unreported
        log.warning("repairs of tool %r not reported: the arguments are nested too deeply", name)
        return
    for pointer, old, new in changes:
        try:
            on_repair(name, pointer, old, new)
        except Exception:
            log.exception("on_repair raised for tool %r at %r; the tool call goes on", name, pointer)


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
