"""Files in the editor's terms: paths as URIs, a module's bytes as the text an editor shows, spans as LSP ranges
in the position encoding the client and the server agreed on, and new contents as text edits.

The analysis counts lines from 1 and columns from 1 in code points; LSP counts both from 0, columns in the
agreed encoding's code units (UTF-16 unless the client offers another), so a column moves past a character
outside the Basic Multilingual Plane by two.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from pathlib import Path
from typing import List, Optional, Tuple

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec

from dispatchlint._lines import split_lines_keeping_ends
from dispatchlint.locations import Span
from dispatchlint.fix import text_edits as line_edits


def path_of(uri: str) -> Optional[Path]:
    """The file a ``file:`` URI names, symbolic links resolved as the analysis resolves them (None: the URI names
    no file, such as an editor's ``untitled:`` buffer)."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path).resolve() if path is not None else None


def uri_of(path: Path) -> str:
    """The URI of ``path``, spelled as editors spell it (VS Code's percent-encoding)."""
    uri = from_fs_path(str(path))
    if uri is None:
        raise ValueError(f"no URI for {path}")
    return str(uri)


def decoded(data: bytes) -> str:
    """A module's text as Python reads it (a BOM or a coding cookie decides the encoding) and as an editor shows
    it: without the BOM."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # a cookie naming no codec: the analysis reports the file, the editor shows UTF-8
        encoding = "utf-8"
    return data.decode(encoding, errors="replace")


def encoded(text: str) -> bytes:
    """An editor's buffer as the bytes a save would write: in the encoding its coding cookie declares, else
    UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text.encode("utf-8", errors="replace")).readline)
        codecs.lookup(encoding)
    except (SyntaxError, LookupError):
        encoding = "utf-8"
    return text.encode("utf-8" if encoding == "utf-8-sig" else encoding, errors="replace")


class Positions:
    """Converts between the analysis's spans and LSP ranges in one file's text."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.lines: List[str] = split_lines_keeping_ends(text)
        self._codec = codec
        self._ends_with_line_end = not self.lines or self.lines[-1].endswith(("\n", "\r"))

    def range(self, span: Span) -> types.Range:
        return types.Range(self.position(span.line, span.column), self.position(span.end_line, span.end_column))

    def position(self, line: int, column: int) -> types.Position:
        """The LSP position of 1-based ``line`` and ``column`` (code points); a line past the last is the end of
        the text."""
        if line - 1 >= len(self.lines):
            return self.end()
        return self._codec.position_to_client_units(self.lines, types.Position(line - 1, max(column - 1, 0)))

    def end(self) -> types.Position:
        if self._ends_with_line_end:
            return types.Position(len(self.lines), 0)
        last = self.lines[-1]
        return types.Position(len(self.lines) - 1, self._codec.client_num_units(last))

    def end_of_line(self, line: int) -> types.Position:
        """The LSP position just before the end of 1-based ``line``."""
        text = self.lines[line - 1].rstrip("\r\n")
        return types.Position(line - 1, self._codec.client_num_units(text))

    def located(self, position: types.Position) -> Tuple[int, int]:
        """The 1-based line and column (code points) of an LSP position."""
        server = self._codec.position_from_client_units(self.lines, types.Position(position.line, position.character))
        return server.line + 1, server.character + 1


def text_edits(path: Path, before: bytes, after: bytes, codec: PositionCodec) -> List[types.TextEdit]:
    """The edits that turn the text of ``before`` into that of ``after``: one per changed run of lines."""
    old, new = decoded(before), decoded(after)
    positions = Positions(old, codec)
    changed = {path: (old.encode("utf-8"), new.encode("utf-8"))}
    return [
        types.TextEdit(positions.range(edit.span), edit.replacement) for edit in line_edits(changed, path.parent)
    ]


def contains(span: Span, line: int, column: int) -> bool:
    """Whether 1-based ``line`` and ``column`` lie inside ``span`` (its end included: a cursor just after it)."""
    return (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)


def overlaps(span: Span, first: int, last: int) -> bool:
    """Whether ``span`` has a line in ``first``..``last`` (1-based, both included)."""
    return span.line <= last and span.end_line >= first
