"""Code actions: each safe fix as a quick fix, every fix a file's findings have at once
(``source.fixAll.dispatchlint``), and a ``# noqa`` that suppresses a finding on its line.

A fix rewrites the project, not only the file asked about (a table is wrapped where it is defined), so its edit
spans every file it changes; it is computed from the same analysis, buffers included, that the diagnostics
came from, and planned as ``--fix`` plans it.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from lsprotocol import types
from pygls.workspace import PositionCodec

from dispatchlint import api
from dispatchlint.indexing.comments import noqa_codes_end
from dispatchlint.plan import RunOptions
from dispatchlint.findings import Applicability, Finding
from dispatchlint.fix import FixError, plan_fixes
from dispatchlint.rules.dl001_parse_error import ParseError
from dispatchlint.rules.dl002_unused_suppression import UnusedSuppression
from dispatchlint.server._analysis import Analysis
from dispatchlint.server._documents import Positions, text_edits

#: The kind of the action that applies every safe fix, as editors ask for it on save.
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.dispatchlint"
#: Findings a line's suppression cannot hide: a file that does not parse is not read for comments, and DL002
#: reports a suppression comment itself, which only a file's suppression can hide.
_NOT_SUPPRESSED_ON_THEIR_LINE = frozenset({ParseError.code, UnusedSuppression.code})
#: The title of the action that applies every safe fix of a file's findings.
FIX_ALL_TITLE = "Fix all dispatchlint findings in this file"

_Changes = Mapping[Path, Tuple[bytes, bytes]]


def workspace_edit(changes: _Changes, codec: PositionCodec, uri_of: Callable[[Path], str]) -> types.WorkspaceEdit:
    """The edit that turns every changed file's bytes before into its bytes after."""
    return types.WorkspaceEdit(
        changes={uri_of(path): text_edits(path, old, new, codec) for path, (old, new) in sorted(changes.items())}
    )


def quick_fix(
    analysis: Analysis,
    finding: Finding,
    diagnostic: types.Diagnostic,
    codec: PositionCodec,
    uri_of: Callable[[Path], str],
) -> Optional[types.CodeAction]:
    """The finding's safe fix as a quick fix (None: it has none, or it cannot be planned)."""
    if finding.applicability is not Applicability.SAFE:
        return None
    try:
        outcome = plan_fixes(analysis.result.linked()[1], analysis.root, [finding], False)  # safe fixes only
    except FixError:
        return None
    changes = {path: change for path, change in outcome.changes.items() if change[0] != change[1]}
    if not changes:
        return None
    notes: List[str] = []
    for path in sorted(changes):
        notes.extend(note for note in outcome.notes[path] if note not in notes)
    return types.CodeAction(
        title=f"Fix {finding.code}: {'; '.join(notes)}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=workspace_edit(changes, codec, uri_of),
        is_preferred=True,
    )


def fix_all_edit(
    path: Path, analysis: Analysis, codec: PositionCodec, uri_of: Callable[[Path], str]
) -> Optional[types.WorkspaceEdit]:
    """Every safe fix that the findings of ``path`` have, pass after pass as ``--fix`` makes them (None: none).

    Each pass analyses the project again: a client that can resolve an action's edit later is offered the action
    without it, and this runs only when the action is chosen."""
    outcome = api.fix(path, settings=RunOptions(contents=analysis.overlays), write=False, cwd=analysis.root)
    return workspace_edit(outcome.changes, codec, uri_of) if outcome.changes else None


def suppression(
    finding: Finding, diagnostic: types.Diagnostic, positions: Positions, text: str, uri: str
) -> Optional[types.CodeAction]:
    """A ``# noqa: CODE`` for the finding's first line, or the code added to the noqa already there; None where
    the line cannot end in a comment (inside a string that spans lines, or continued by a backslash)."""
    if finding.code in _NOT_SUPPRESSED_ON_THEIR_LINE:
        return None
    line = finding.span.line
    endings = _line_endings(text)
    if line not in endings:
        return None
    comment = endings[line]
    codes_end = noqa_codes_end(comment[1]) if comment is not None else None
    if comment is not None and codes_end is not None:
        where = positions.position(line, comment[0] + codes_end + 1)
        inserted = f", {finding.code}"
    else:
        where = positions.end_of_line(line)
        inserted = f"  # noqa: {finding.code}"
    return types.CodeAction(
        title=f"Suppress {finding.code} on this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(types.Range(where, where), inserted)]}),
    )


def _line_endings(text: str) -> Dict[int, Optional[Tuple[int, str]]]:
    """The lines a comment can end, as the tokenizer sees them (a line that ends a statement, or a line inside
    brackets): each with its comment, if it has one (its column from 0, its text). A file the tokenizer stops
    on keeps the lines read up to there."""
    endings: Dict[int, Optional[Tuple[int, str]]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            line = token.start[0]
            if token.type == tokenize.COMMENT:
                endings[line] = (token.start[1], token.string)
            elif token.type in (tokenize.NEWLINE, tokenize.NL) and line not in endings:
                endings[line] = None
    except (tokenize.TokenError, SyntaxError):
        pass
    return endings
