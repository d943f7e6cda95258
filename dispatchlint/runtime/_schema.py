"""Reading tool schemas: tool-definition envelopes, local references and the walking bound.

Registries keep schemas in several envelopes (OpenAI, Anthropic, MCP); the coercer only needs the parameters
schema inside. References are followed inside that schema only: the coercer never fetches anything.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from ._json import MISSING
from .contract import SCHEMA_ENVELOPE_KEYS

#: How deep schemas are walked, counting every subschema and every followed ``$ref``. Deeper values are left
#: alone: this bounds the work and the stack for recursive and hostile schemas, far beyond real tool schemas.
MAX_DEPTH = 100

_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,8}")


def tool_parameters(schema: Any) -> Any:
    """The parameters schema of a tool definition, or ``schema`` itself when it is not a tool definition.

    Accepts ``{"name": ..., "parameters": {...}}`` (also ``input_schema``, ``inputSchema``... see
    ``contract.SCHEMA_ENVELOPE_KEYS``) and OpenAI's
    ``{"type": "function", "function": {...}}``. A function defined without parameters gives None.
    """
    if not isinstance(schema, dict):
        return schema
    is_function = schema.get("type") == "function"
    if is_function and isinstance(schema.get("function"), dict):
        schema = schema["function"]
    elif not (is_function or "name" in schema):
        return schema
    for key in SCHEMA_ENVELOPE_KEYS:
        if key in schema:
            return schema[key]
    return None if is_function else schema


def defined_name(schema: Any) -> str:
    """The ``name`` a tool definition gives (OpenAI's inside ``function``), or ``""``."""
    if not isinstance(schema, dict):
        return ""
    function = schema.get("function")
    name = function.get("name") if isinstance(function, dict) else schema.get("name")
    return name if isinstance(name, str) else ""


def resolve_local_ref(root: Any, ref: Any) -> Any:
    """The subschema of ``root`` that a local ``$ref`` (``#``, ``#/$defs/Name``, any JSON pointer) names.

    MISSING for remote references, anchors and pointers to nothing.
    """
    if not isinstance(ref, str) or not ref.startswith("#"):
        return MISSING
    pointer = unquote(ref[1:])
    if not pointer:
        return root
    if not pointer.startswith("/"):
        return MISSING
    target = root
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and _ARRAY_INDEX.fullmatch(token) and int(token) < len(target):
            target = target[int(token)]
        else:
            return MISSING
    return target
