"""Suppression comments, read from the tokenizer's comments (a ``# noqa`` inside a string is text, not a
comment).

Three spellings: ``# dispatchlint: ignore[DL101]`` and ``# noqa: DL101`` cover the findings that start on their
line; ``# dispatchlint: ignore-file[DL101]`` anywhere in a file covers the whole file. Codes may be prefixes
(``DL1``); without codes every rule is covered. A ``# noqa`` that names only other tools' codes (``E501``) is not
ours and is left alone.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import List, Optional, Tuple

from dispatchlint._lines import line_number
from dispatchlint.indexing.facts import Span, Suppression, SuppressionScope

_DIRECTIVE = re.compile(r"#\s*dispatchlint\s*:\s*(?P<kind>ignore-file|ignore)(?![\w-])(?:\[(?P<codes>[^\]]*)\])?")
_NOQA = re.compile(r"#\s*noqa(?![\w-])(?:\s*:\s*(?P<codes>\w+(?:[,\s]+\w+)*))?", re.IGNORECASE)
_OUR_PREFIX = "DL"
#: Most files hold no directive: those are not tokenized at all.
_MAYBE = re.compile(r"dispatchlint\s*:|noqa", re.IGNORECASE)


def find_suppressions(source: str) -> Tuple[Suppression, ...]:
    """Every suppression directive in ``source``'s comments, in order. A file the tokenizer stops on keeps the
    directives read up to there."""
    found: List[Suppression] = []
    candidates = [match.start() for match in _MAYBE.finditer(source)]
    if not candidates:
        return ()
    last_line = line_number(source, candidates[-1])
    try:
        # Lines end where Python ends them, at a lone ``\r`` too (read with universal newlines): a comment after
        # one is on the line the findings count, not on the line above it.
        for token in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
            if token.start[0] > last_line:
                break  # no directive after this line
            if token.type == tokenize.COMMENT:
                found.extend(_directives(token.string, token.start[0], token.start[1]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return tuple(found)


def noqa_codes_end(comment: str) -> Optional[int]:
    """Where the codes of the first ``# noqa: CODES`` in ``comment`` end, any tool's (None: it has no such
    directive): a code written there joins them."""
    match = _NOQA.search(comment)
    return match.end("codes") if match is not None and match.group("codes") else None


def _directives(comment: str, line: int, column: int) -> List[Suppression]:
    found = []
    for match in _DIRECTIVE.finditer(comment):
        scope = SuppressionScope.FILE if match.group("kind") == "ignore-file" else SuppressionScope.LINE
        found.append(Suppression(scope, _span(line, column, match), _split(match.group("codes") or "")))
    for match in _NOQA.finditer(comment):
        written = _split(match.group("codes") or "")
        ours = tuple(code for code in written if code.startswith(_OUR_PREFIX))
        if written and not ours:
            continue
        found.append(Suppression(SuppressionScope.LINE, _span(line, column, match), ours, noqa=True))
    return found


def _span(line: int, column: int, match: "re.Match[str]") -> Span:
    return Span(line, column + match.start() + 1, line, column + match.end() + 1)


def _split(codes: str) -> Tuple[str, ...]:
    return tuple(code.upper() for code in re.split(r"[,\s]+", codes) if code)
