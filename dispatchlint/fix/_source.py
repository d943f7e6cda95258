"""The files a fix rewrites, parsed once each with the positions and parents its edits need.

The analyzer's facts say *where* things are (1-based spans); an edit needs the libcst nodes at those places. A
:class:`SourceFile` keeps the exact bytes it was parsed from (so that nothing the fix does not mean to change can
move: comments, quotes, encoding, BOM, line endings) and finds nodes by the position the facts recorded. Only
``--fix`` and ``--diff`` parse files here; a check never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Mapping, Optional

import libcst as cst

from dispatchlint.indexing.fix_shapes import Nodes, Statement, positions
from dispatchlint.fix._errors import FixError

__all__ = ["FixError", "SourceFile", "Sources", "Statement", "check_module"]


class SourceFile(Nodes):
    """One parsed file: its bytes, its tree, and where each node of the tree starts and ends."""

    def __init__(self, path: Path, relative: str, data: bytes, tree: cst.Module) -> None:
        super().__init__(tree, positions(tree))
        self.path = path
        self.relative = relative
        self.data = data

    @classmethod
    def parse(cls, path: Path, relative: str, data: Optional[bytes] = None) -> "SourceFile":
        """``path`` parsed from ``data`` (what an earlier fix pass made of it), or from the disk."""
        try:
            data = path.read_bytes() if data is None else data
            tree = _indent_without_form_feed(cst.parse_module(data))
        except (OSError, cst.ParserSyntaxError, UnicodeDecodeError, LookupError) as error:
            raise FixError(f"{relative}: cannot parse: {error}") from error
        return cls(path, relative, data, tree)


class _ExplicitIndent(cst.CSTTransformer):
    """Gives the blocks indented by the module's default indentation that indentation explicitly."""

    def __init__(self, indent: str) -> None:
        super().__init__()
        self.indent = indent

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(indent=self.indent) if updated_node.indent is None else updated_node


def _indent_without_form_feed(tree: cst.Module) -> cst.Module:
    """The module, printing the same bytes, with a default indentation code can be generated in.

    A block whose first line starts with a form feed (Python resets the column there, so it indents nothing)
    makes libcst take the form feed into the module's default indentation, which it then refuses to parse
    generated code with. The blocks keep their own indentation, form feed and all; new code is indented by the
    rest of it.
    """
    if "\f" not in tree.default_indent:
        return tree
    explicit = tree.visit(_ExplicitIndent(tree.default_indent))
    assert isinstance(explicit, cst.Module)
    return explicit.with_changes(default_indent=tree.default_indent.replace("\f", "") or "    ")


class Sources:
    """Parsed files by path relative to the project root, each parsed at most once per run; ``contents`` stands
    in for the files it names (by absolute path: the earlier passes of one ``--fix``, not yet written)."""

    def __init__(self, root: Path, contents: Optional[Mapping[Path, bytes]] = None) -> None:
        self.root = root
        self.contents = contents or {}
        self._files: Dict[str, SourceFile] = {}

    def get(self, relative: str) -> SourceFile:
        found = self._files.get(relative)
        if found is None:
            path = self.root / relative
            found = self._files[relative] = SourceFile.parse(path, relative, self.contents.get(path))
        return found


def check_module(data: bytes, original: bytes, relative: str) -> None:
    """Re-parse rewritten bytes with libcst and with Python's own compiler; a fix never writes what fails.

    A file the running interpreter's compiler rejected before the fix (syntax of the newer Python the project
    targets: it was analysed with libcst's newest grammar) is judged by libcst alone."""
    try:
        cst.parse_module(data)
        if _compiles(original, relative):
            compile(data, relative, "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError, UnicodeDecodeError) as error:
        raise FixError(f"{relative}: the rewritten module does not parse ({error}); nothing was written") from error


def _compiles(data: bytes, relative: str) -> bool:
    try:
        compile(data, relative, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True
