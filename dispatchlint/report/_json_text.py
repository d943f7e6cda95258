"""JSON indented as ``json.dumps(value, indent=2)`` writes it, byte for byte, in a third of the time.

Python's C encoder does not indent, and its pure-Python fallback (a generator per container) was most of a warm
SARIF or JSON run on a project with many findings: the report is megabytes of small objects. The values are
those the reports build: strings, integers, flags, None, lists, tuples and dicts with string keys.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as _string
from typing import Any, List


def indented_json(value: Any) -> str:
    chunks: List[str] = []
    append = chunks.append

    def write(value: Any, newline: str) -> None:
        if isinstance(value, str):
            append(_string(value))
        elif value is None:
            append("null")
        elif value is True:
            append("true")
        elif value is False:
            append("false")
        elif isinstance(value, int):
            append(int.__repr__(value))
        elif isinstance(value, (list, tuple)):
            if not value:
                append("[]")
                return
            inner = newline + "  "
            separator = "[" + inner
            for item in value:
                append(separator)
                separator = "," + inner
                write(item, inner)
            append(newline + "]")
        elif isinstance(value, dict):
            if not value:
                append("{}")
                return
            inner = newline + "  "
            separator = "{" + inner
            for key, item in value.items():
                if not isinstance(key, str):
                    raise TypeError(f"a report's keys are strings, not {type(key).__name__}")
                append(separator + _string(key) + ": ")
                separator = "," + inner
                write(item, inner)
            append(newline + "}")
        else:
            raise TypeError(f"a report holds no {type(value).__name__}")

    write(value, "\n")
    return "".join(chunks)
