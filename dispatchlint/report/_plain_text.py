"""The rule documentation (Markdown) as plain text, for the fields that are plain text by definition.

SARIF's ``text`` of a message string is plain text: a viewer shows it as written (the Markdown, where it renders
any, goes in ``markdown``), so backticks, ``#`` headings and fences would show as such. Here headings keep their
title, a fenced block its code indented by four spaces, a code span its code, and a link reads "text (url)".
"""

from __future__ import annotations

import re
from typing import List

_FENCE = re.compile(r"^\s*(```|~~~)")
#: A heading's marker: the title stays, on its line.
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+", re.MULTILINE)
#: A code span: a run of backticks, its code, the same run again (it may go on to the next line).
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


def plain_text(markdown: str) -> str:
    """``markdown`` (headings, fenced code blocks, code spans, links) as plain text."""
    shown: List[str] = []
    prose: List[str] = []
    fence = ""
    for line in markdown.split("\n"):
        if fence:
            if line.strip() == fence:
                fence = ""
            else:
                shown.append(f"    {line}".rstrip())
            continue
        opening = _FENCE.match(line)
        if opening:
            if prose:
                shown.append(_prose("\n".join(prose)))
            elif shown and shown[-1].startswith("    "):  # a block right after another stays apart from it
                shown.append("")
            prose = []
            fence = opening.group(1)
        else:
            prose.append(line)
    shown += [_prose("\n".join(prose))] if prose else []
    return "\n".join(shown)


def _prose(text: str) -> str:
    """Markdown outside fenced blocks. A code span's code is kept as it is: ``T[name](args)`` is no link."""
    parts = _CODE_SPAN.split(_HEADING.sub("", text))  # text, then each span's backticks and its code, and so on
    return "".join(
        _LINK.sub(_link, part) if index % 3 == 0 else part
        for index, part in enumerate(parts)
        if index % 3 != 1
    )


def _link(match: "re.Match[str]") -> str:
    text, url = match.group(1), match.group(2)
    return url if text == url else f"{text} ({url})"
