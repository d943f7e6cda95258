"""Gitignore-style globs, matched without backtracking: in time linear in the path, times the pattern's length.

A regular expression made of a glob backtracks: ``*a*a*a*a*a*a*a*a*a*a*a*ab`` against a forty-character name
that almost matches tries every way of splitting the name among the stars, which takes longer than any run.
Here a ``*`` never tries more than one split. A folder name's pattern is fixed pieces (a ``?`` is any one
character) between stars; a path's pattern is folder-name patterns between ``**`` segments. Each level is
matched the same way: the first piece at the start, the last at the end, and each piece between them at its
leftmost place after the previous one. That is exact, not a heuristic, because every piece has a fixed length
(characters in a name, names in a path): a piece placed further right only leaves less room for the next ones.

As in git, ``*`` and ``?`` never match a ``/``; a segment that is only stars (``**``) matches any number of
folders (at the end of a pattern, at least one: ``logs/**`` is what ``logs/`` holds); stars inside a segment
(``a**b``) are a single star.
"""

from __future__ import annotations

import re
from typing import List, Optional, Pattern, Sequence

_STAR = "*"


class _Piece:
    """Characters of a fixed length between two stars; a ``?`` is any one character."""

    __slots__ = ("text", "length", "_regex")

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        # No quantifier: matching or searching it cannot backtrack.
        self._regex: Optional[Pattern[str]] = (
            re.compile(".".join(re.escape(part) for part in text.split("?")), re.DOTALL) if "?" in text else None
        )

    def at(self, name: str, start: int) -> bool:
        """Whether the piece matches ``name`` at ``start``."""
        if self._regex is None:
            return name.startswith(self.text, start)
        return self._regex.match(name, start) is not None

    def find(self, name: str, start: int, end: int) -> int:
        """The leftmost place at or after ``start`` where the piece matches and ends by ``end`` (-1: none)."""
        if self._regex is None:
            return name.find(self.text, start, end)
        found = self._regex.search(name, start, end)
        return -1 if found is None else found.start()


class _Name:
    """The pattern of one folder or file name: pieces between stars."""

    __slots__ = ("_first", "_middle", "_last", "_shortest", "_literal")

    def __init__(self, pattern: str) -> None:
        pieces = [_Piece(text) for text in re.split(r"\*+", pattern)]
        self._first = pieces[0]
        self._middle = pieces[1:-1]
        #: None: no star, the whole name is the first piece.
        self._last: Optional[_Piece] = pieces[-1] if len(pieces) > 1 else None
        self._shortest = sum(piece.length for piece in pieces)
        #: The name itself, for a pattern without wildcards.
        self._literal = pattern if "*" not in pattern and "?" not in pattern else None

    def matches(self, name: str) -> bool:
        if self._literal is not None:
            return name == self._literal
        if self._last is None:
            return len(name) == self._first.length and self._first.at(name, 0)
        if len(name) < self._shortest or not self._first.at(name, 0):
            return False
        end = len(name) - self._last.length
        if not self._last.at(name, end):
            return False
        position = self._first.length
        for piece in self._middle:
            found = piece.find(name, position, end)
            if found < 0:
                return False
            position = found + piece.length
        return True


#: A ``**`` segment: any number of folders.
_ANY_FOLDERS = None
_Segment = Optional[_Name]


class Glob:
    """One gitignore-style pattern (no leading ``!``, no trailing ``/``: the caller reads those), matched against
    a path relative to the folder the pattern is relative to, in POSIX form."""

    __slots__ = ("_groups", "_tail_needs_a_name", "_shortest", "_suffix", "_last_name")

    def __init__(self, pattern: str, anchored: bool) -> None:
        segments: List[_Segment] = [] if anchored else [_ANY_FOLDERS]
        for part in pattern.split("/"):
            only_stars = len(part) >= 2 and part.strip(_STAR) == ""
            segments.append(_ANY_FOLDERS if only_stars else _Name(part))
        # The names between ``**`` segments: the first group starts the path, the last one ends it.
        self._groups: List[List[_Name]] = [[]]
        for segment in segments:
            if segment is _ANY_FOLDERS:
                self._groups.append([])
            else:
                self._groups[-1].append(segment)
        self._tail_needs_a_name = segments[-1] is _ANY_FOLDERS
        self._shortest = sum(len(group) for group in self._groups) + int(self._tail_needs_a_name)
        #: The names a pattern ``**/a/b`` (any unanchored one without ``**``) matches at the end of a path: only
        #: those last names are split off (most patterns, matched against every file).
        self._suffix = self._groups[1] if len(self._groups) == 2 and not self._groups[0] else None
        if self._tail_needs_a_name:
            self._suffix = None
        self._last_name = self._suffix[0] if self._suffix is not None and len(self._suffix) == 1 else None

    def matches(self, path: str) -> bool:
        if self._last_name is not None:
            return self._last_name.matches(path[path.rfind("/") + 1 :])
        if self._suffix is not None:
            names = path.rsplit("/", len(self._suffix))[-len(self._suffix) :]
            return len(names) == len(self._suffix) and _group_at(self._suffix, names, 0)
        if path.count("/") + 1 < self._shortest:
            return False
        names = path.split("/")
        first, last = self._groups[0], self._groups[-1]
        if len(self._groups) == 1:
            return len(names) == len(first) and _group_at(first, names, 0)
        end = len(names) - len(last)
        if not (_group_at(first, names, 0) and _group_at(last, names, end)):
            return False
        position = len(first)
        for group in self._groups[1:-1]:
            found = _find_group(group, names, position, end)
            if found < 0:
                return False
            position = found + len(group)
        return position < end if self._tail_needs_a_name else True


def _group_at(group: Sequence[_Name], names: Sequence[str], start: int) -> bool:
    return all(pattern.matches(names[start + offset]) for offset, pattern in enumerate(group))


def _find_group(group: Sequence[_Name], names: Sequence[str], start: int, end: int) -> int:
    """The leftmost place at or after ``start`` where ``group`` matches names and ends by ``end`` (-1: none)."""
    for place in range(start, end - len(group) + 1):
        if _group_at(group, names, place):
            return place
    return -1


def literal_name(pattern: str) -> Optional[str]:
    """The name an unanchored pattern without wildcards matches at any depth (``node_modules``), else None: such
    patterns are looked up in a set instead of being matched one by one."""
    return pattern if "/" not in pattern and not any(char in pattern for char in "*?") else None

