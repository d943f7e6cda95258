"""Repair a model's tool arguments against the tool's own JSON Schema, at run time.

Standard library only: an agent runtime imports it without the linter (libcst and click are never imported).

- ``coerce_args(parameters, args)``: the gate. Restores sanitized names, then repairs mistyped values.
- ``sanitize_schema(parameters)`` / ``unrename_args(parameters, args)``: provider-safe property names, and back.
- ``wrap_table(table, schemas)`` / ``@coerced(name, schema)``: executors that repair their arguments first, so
  that every code path reading a tool table is guarded.
"""

from ._coerce import coerce_args, unrename_args
from ._names import sanitize_schema
from ._wrap import ArgumentsSlotHint, RepairCallback, SchemaSource, coerced, wrap_table

__all__ = [
    "ArgumentsSlotHint",
    "RepairCallback",
    "SchemaSource",
    "coerce_args",
    "coerced",
    "sanitize_schema",
    "unrename_args",
    "wrap_table",
]
