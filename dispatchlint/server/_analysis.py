"""One analysis of one project, as the server keeps it: the engine's result for the whole project (linked, so that
hovers and fixes can read it), with the text of each file as the analysis read it.

The project is analysed as the command line analyses it, with the editor's unsaved buffers standing in for the
files on disk; its settings are its own (``[tool.dispatchlint]`` in its ``pyproject.toml``), read afresh on
every analysis. Every path in the result is relative to the project root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional

from dispatchlint.discovery.files import find_root
from dispatchlint.config import declares_project
from dispatchlint.plan import RunOptions, RunResult
from dispatchlint.engine import analyse_project, plan_project
from dispatchlint.findings import Finding
from dispatchlint.server._documents import decoded


def project_root(path: Path) -> Path:
    """The root of the project ``path`` belongs to, found as the command line finds it."""
    return find_root(path, declares_project)


@dataclass
class Analysis:
    """A project's findings and linked model, and the bytes of the buffers it read in place of files."""

    root: Path
    result: RunResult
    #: The editor's buffers the analysis read in place of the files on disk, by absolute path.
    overlays: Mapping[Path, bytes]
    _texts: Dict[Path, str] = field(default_factory=dict, repr=False)

    def read(self, path: Path) -> Optional[bytes]:
        """The bytes of ``path`` as the analysis read them (a buffer, else the file; None: unreadable)."""
        if path in self.overlays:
            return self.overlays[path]
        try:
            return path.read_bytes()
        except OSError:
            return None

    def text(self, path: Path) -> str:
        """The text of ``path`` as the analysis read it (empty when it cannot be read)."""
        if path not in self._texts:
            data = self.read(path)
            self._texts[path] = decoded(data) if data is not None else ""
        return self._texts[path]

    def covers(self, path: Path, current: bytes) -> bool:
        """Whether the analysis read ``path`` as ``current``: its positions and fixes hold for that text."""
        return self.read(path) == current

    def findings_in(self, path: Path) -> List[Finding]:
        """The findings reported in ``path``."""
        return [finding for finding in self.result.findings if self.root / finding.path == path]

    def concerning(self, path: Path) -> List[Finding]:
        """The findings that ``dispatchlint PATH`` reports: those in ``path``, and those whose table, gate or
        schema lies there."""
        return [
            finding
            for finding in self.result.findings
            if any(self.root / where == path for where in (finding.path, *(item.path for item in finding.related)))
        ]


def analyse(root: Path, buffers: Mapping[Path, bytes], progress: Optional[Callable[[int, int], None]]) -> Analysis:
    """Analyse the project at ``root`` with ``buffers`` in place of the files they stand for (the buffers of
    other projects are left alone); ``progress`` is told how many files are indexed."""
    overlays = {path: data for path, data in buffers.items() if project_root(path) == root}
    options = RunOptions(contents=overlays, progress=progress)
    unsaved = tuple(sorted(path for path in overlays if not path.exists()))  # discovery finds files on disk only
    plan = plan_project(root, (root, *unsaved), options)
    return Analysis(root, analyse_project(plan, options, root), overlays)
