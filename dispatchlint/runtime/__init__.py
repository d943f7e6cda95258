"""Repair a model's tool arguments against the tool's own JSON Schema, at run time.

Standard library only: an agent runtime imports it without the linter (libcst and click are never imported).

- ``coerce_tool_call(parameters, raw)``: the arguments as the provider sends them (JSON text, mapping or None),
  parsed strictly and repaired. ``coerce_args(parameters, args)``: the same for arguments already parsed.
  Both restore sanitized names, then repair mistyped values; both take an ``on_repair`` callback, told the
  tool's name (``tool_name=``, else the tool definition's, else ``UNNAMED_TOOL``).
- ``sanitize_schema(parameters)`` / ``unrename_args(parameters, args)``: provider-safe property names, and back.
- ``wrap_table(table, schemas)`` / ``@coerced(name, schema)``: executors that repair their arguments first, so
  that every code path reading a tool table is guarded.

A value changes only when it is not admitted at its place in the schema (its ``type``, its ``enum`` or
``const``) and exactly one repair exists: a string holding an admitted value's JSON literal (``"42"``,
``"true"``, ``'["a"]'``), an integral float where only integers are, a single value where an array is wanted
(``"5"`` becomes ``[5]`` for an array of integers). Otherwise the value is kept as it came.

This is not validation. Nothing is checked or reported, and everything the repair does not need is untouched:
``default`` values are not filled in, ``required`` properties are not added, extra properties are not removed
(``additionalProperties: false``), bounds (``minimum``, ``maxLength``, ``maxItems``...), ``pattern`` and
``format`` are not checked. What cannot be repaired reaches the tool as the model sent it, for the tool's own
validation (pydantic, jsonschema, its own checks) to report.

``contract`` holds the names this package and the linter's fix agree on.
"""

from ._coerce import UNNAMED_TOOL, RepairCallback, coerce_args, coerce_tool_call, unrename_args
from ._names import sanitize_schema
from ._wrap import ArgumentsSlotHint, SchemaSource, coerced, wrap_table

__all__ = [
    "ArgumentsSlotHint",
    "RepairCallback",
    "SchemaSource",
    "UNNAMED_TOOL",
    "coerce_args",
    "coerce_tool_call",
    "coerced",
    "sanitize_schema",
    "unrename_args",
    "wrap_table",
]
