"""Text from the project (paths, names, source lines) shown so that it cannot act on whoever reads it.

A tool name holding a newline and ``::error file=...::`` would start a GitHub Actions workflow command on a line
of its own; ESC, BEL and BS bytes of a source line would drive the terminal (``ESC[8m`` hides what follows, even
with ``--color always``); bidirectional controls reorder what a reviewer sees. Every such character is shown as a
visible escape instead: a C0 control or DEL as its control picture (``␛`` for ESC, ``␊`` for a newline), as Ruff
shows them, and the others (C1 controls, bidirectional and line-separating characters) as ``\\u202e``. A tab stays
a tab.
"""

from __future__ import annotations

from typing import Dict

_PICTURES: Dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20) if code != 0x09}
_PICTURES[0x7F] = "\u2421"
#: Characters with no picture: C1 controls (0x9B is a terminal's CSI), bidirectional controls, line separators.
_ESCAPED = [*range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPED += [0x2028, 0x2029]
_TABLE: Dict[int, str] = {**_PICTURES, **{code: f"\\u{code:04x}" for code in _ESCAPED}}


def visible(text: str) -> str:
    """``text`` with every character that could act on a terminal or a CI log shown as a visible escape."""
    return text.translate(_TABLE)


def visible_lines(text: str) -> str:
    """``text``, lines of messages ended by ``\\n`` (each of them kept), with everything else :func:`visible`."""
    return "\n".join(visible(line) for line in text.split("\n"))
