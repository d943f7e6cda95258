"""What every output format is given: the findings of a run with what a machine reader needs next to them (the
rules' documentation, stable fingerprints, the fixes as edits, the run's problems).

Plain data: the report stage imports neither the rules nor the fixer; the command builds this and hands it on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Tuple

from dispatchlint.locations import TextEdit
from dispatchlint.problems import Problem

if TYPE_CHECKING:
    from dispatchlint.findings import Finding


class Level(Enum):
    """How loudly a rule speaks, in SARIF's and GitHub's words."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    #: Enabled without ``--select``.
    default: bool
    level: Level
    #: One whole sentence: what the rule reports.
    summary: str
    #: The rule's "What it does" section as prose.
    description: str
    #: The rule's whole documentation, Markdown.
    documentation: str
    #: The rule's section of the rule reference.
    url: str


@dataclass(frozen=True)
class Reported:
    finding: "Finding"
    #: Stable across runs, working folders and edits elsewhere in the file (the baseline's key, hashed).
    fingerprint: str
    #: What ``--fix`` would change for this finding (paths relative to the working directory), when the format
    #: asks for it and a fix applies.
    edits: Tuple[TextEdit, ...] = ()


@dataclass(frozen=True)
class Report:
    findings: Tuple[Reported, ...]
    #: Unreadable files, files that do not parse: paths relative to the working directory.
    problems: Tuple[Problem, ...]
    rules: Mapping[str, RuleDoc]
    #: The folder artifact URIs are relative to (SARIF's ``%SRCROOT%``): the project root, or the folder that
    #: holds every project of a run.
    source_root: Path
    cwd: Path
    #: The rule reference page (each rule's ``url`` is a section of it).
    reference_url: str

    @property
    def successful(self) -> bool:
        return not any(problem.kind.fails_run for problem in self.problems)

    def anchored(self, path: str) -> str:
        return anchored(self.cwd, path)


def anchored(cwd: Path, path: str) -> str:
    """``path`` (relative to ``cwd``) as the machine formats give it: absolute, with forward slashes, as Ruff's
    JSON and GitHub formats give it, so that the same project gives the same output from any folder (a GitHub
    annotation finds its file when the command runs in a sub-folder of the repository). Text read from stdin with
    no name (the path ``-``) is ``-``, as Ruff names it."""
    if path == "-":
        return path
    return Path(os.path.normpath(cwd / path)).as_posix()
