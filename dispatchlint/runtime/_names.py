"""Provider-safe property names.

Providers reject property names outside ``^[A-Za-z0-9_-]{1,64}$`` (``$top``, ``filters[]``, ``first name``).
``sanitize_schema`` gives each such name an alias, level by level. The alias depends only on the names at that
level, so the gate recomputes the inverse from the registry's own schema: the side that sends the schema to
the model and the side that receives the arguments never need to share a table.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Dict, Iterable, Set, Tuple

from ._schema import MAX_DEPTH

PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_LENGTH = 64
_UNSAFE_CHARACTER = re.compile(r"[^A-Za-z0-9_-]")

# Keywords whose value is a subschema, a list of subschemas, or a map of name -> subschema.
_SUBSCHEMA_KEYWORDS = (
    "additionalProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "anyOf",
    "oneOf",
    "allOf",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_SUBSCHEMA_MAP_KEYWORDS = ("$defs", "definitions", "patternProperties", "dependentSchemas")


def provider_aliases(names: Iterable[Any]) -> Dict[str, str]:
    """Map each name providers reject to an alias no name at the same level uses.

    Names that are already valid keep themselves, so an alias never shadows a real property. Rejected names
    are taken in sorted order, which makes the result independent of the order properties are declared in.
    """
    names = [name for name in names if isinstance(name, str)]
    taken: Set[str] = {name for name in names if PROVIDER_NAME.fullmatch(name)}
    aliases: Dict[str, str] = {}
    for name in sorted(set(names) - taken):
        alias = _free_alias(name, taken)
        taken.add(alias)
        aliases[name] = alias
    return aliases


def _free_alias(name: str, taken: Set[str]) -> str:
    """Readable when it can be (``$top`` -> ``_top``); otherwise made unique by a digest of the name."""
    readable = _UNSAFE_CHARACTER.sub("_", name)[:_MAX_LENGTH] or "_"
    if readable not in taken:
        return readable
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    attempt = 0
    while True:
        suffix = f"_{digest}{attempt or ''}"
        alias = readable[: _MAX_LENGTH - len(suffix)] + suffix
        if alias not in taken:
            return alias
        attempt += 1


def sanitize_schema(parameters: Any) -> Any:
    """A copy of ``parameters`` whose property names all match ``^[A-Za-z0-9_-]{1,64}$``.

    Renames at every object level (nested properties, array items, ``$defs``, ``anyOf`` branches, ...) and
    the matching ``required`` entries. Deterministic, so ``unrename_args`` inverts it from the original
    schema. Parts that need no renaming are shared with ``parameters``, which is returned itself when every
    name is already valid. Never raises: what is not a schema is returned as it is.
    """
    return _Sanitizer().schema(parameters, 0)


class _Sanitizer:
    """One sanitizing walk; memoized per (schema object, depth), so shared or cyclic subschemas cost once."""

    def __init__(self) -> None:
        self._done: Dict[Tuple[int, int], Any] = {}

    def schema(self, schema: Any, depth: int) -> Any:
        if not isinstance(schema, dict) or depth >= MAX_DEPTH:
            return schema
        key = (id(schema), depth)
        if key not in self._done:
            self._done[key] = self._rebuild(schema, depth + 1)
        return self._done[key]

    def _rebuild(self, schema: Dict[Any, Any], depth: int) -> Dict[Any, Any]:
        changes: Dict[str, Any] = {}
        properties = schema.get("properties")
        if isinstance(properties, dict):
            aliases = provider_aliases(properties)
            sanitized = {name: self.schema(sub, depth) for name, sub in properties.items()}
            if aliases or any(sanitized[name] is not sub for name, sub in properties.items()):
                changes["properties"] = {aliases.get(name, name): sub for name, sub in sanitized.items()}
            required = schema.get("required")
            if aliases and isinstance(required, list):
                changes["required"] = [aliases.get(name, name) if isinstance(name, str) else name for name in required]
        for keyword in _SUBSCHEMA_KEYWORDS:
            value = schema.get(keyword)
            if isinstance(value, list):
                rebuilt: Any = [self.schema(sub, depth) for sub in value]
                if all(new is old for new, old in zip(rebuilt, value)):
                    rebuilt = value
            else:
                rebuilt = self.schema(value, depth)
            if rebuilt is not value:
                changes[keyword] = rebuilt
        for keyword in _SUBSCHEMA_MAP_KEYWORDS:
            value = schema.get(keyword)
            if isinstance(value, dict):
                rebuilt = {name: self.schema(sub, depth) for name, sub in value.items()}
                if any(rebuilt[name] is not sub for name, sub in value.items()):
                    changes[keyword] = rebuilt
        return {**schema, **changes} if changes else schema
