"""A fix as text edits (path, range, replacement) for machine output: the lines it replaces in each file.

The fixer rewrites whole modules with libcst; the JSON and SARIF reports want edits that a client can apply
itself. Each changed run of lines becomes one edit, from the first changed line to the line after the last.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import List, Mapping, Tuple

from dispatchlint._lines import split_lines_keeping_ends
from dispatchlint.locations import Span, TextEdit


def text_edits(changes: Mapping[Path, Tuple[bytes, bytes]], cwd: Path) -> List[TextEdit]:
    """The edits that turn each file's bytes before into its bytes after (paths relative to ``cwd``)."""
    edits: List[TextEdit] = []
    for path in sorted(changes):
        before, after = (split_lines_keeping_ends(data.decode("utf-8", errors="replace")) for data in changes[path])
        shown = Path(os.path.relpath(path, cwd)).as_posix()
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        for tag, first, last, new_first, new_last in matcher.get_opcodes():
            if tag != "equal":
                edits.append(TextEdit(shown, Span(first + 1, 1, last + 1, 1), "".join(after[new_first:new_last])))
    return edits
