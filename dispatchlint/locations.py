"""Places in source files: spans, the locations a finding points to, the edits a fix makes, and the two facts a
run reports as they were indexed (suppression comments, parse errors).

The facts (``dispatchlint/indexing/facts.py``) hold these records too; they live apart so that what reports a
run (findings, problems, the stored results) loads only them, not every fact's class.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Tuple


@dataclass(frozen=True)
class Span:
    """A 1-based source range."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Location:
    """A place a finding points to and what happens there: a related location (the table, the gate), or a step
    of its trace (the source of the model's arguments, a call that hands them on, the sink)."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` of ``path`` with ``replacement``: what a fix changes, as a client can apply it itself."""

    path: str
    span: Span
    replacement: str


class SuppressionScope(str, Enum):
    """What a suppression comment covers."""

    LINE = "line"
    FILE = "file"


@dataclass(frozen=True)
class Suppression:
    """A suppression comment: ``# dispatchlint: ignore[DL101]``, ``# noqa: DL101`` (one line) or
    ``# dispatchlint: ignore-file[DL101]`` (the whole file)."""

    scope: SuppressionScope
    #: The directive inside the comment; a line suppression covers the findings that start on its line.
    span: Span
    #: Rule codes or prefixes as written (upper-cased); empty: every rule.
    codes: Tuple[str, ...]
    #: A noqa comment, shared with other linters: one without codes is never judged unused.
    noqa: bool = False


class ParseErrorKind(Enum):
    """Who refuses the file: Python itself (a syntax error), or only libcst (Python runs it; it goes unanalysed)."""

    PYTHON = "python"
    LIBCST = "libcst"


@dataclass(frozen=True)
class ParseError:
    message: str
    span: Span
    kind: ParseErrorKind = ParseErrorKind.PYTHON
