"""Lines as Python counts them: only ``\\n``, ``\\r\\n`` and ``\\r`` end a line. ``str.splitlines`` also splits
at a form feed, a vertical tab and other separators, which would shift every line number after one."""

from __future__ import annotations

import re
from typing import List

_LINE_END = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> List[str]:
    """``text``'s lines without their ends, numbered from 1 by Python's tokenizer at index + 1."""
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def split_lines_keeping_ends(text: str) -> List[str]:
    """``text``'s lines with their ends, so that joining them gives ``text`` back."""
    return _LINE.findall(text)


def line_number(text: str, offset: int) -> int:
    """The line ``text[offset]`` is on, numbered from 1 as Python numbers them."""
    return len(_LINE_END.findall(text, 0, offset)) + 1
