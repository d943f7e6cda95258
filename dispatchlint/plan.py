"""The plan of a run and its result, as records: what the engine is asked (``RunOptions``), what it will analyse
in one project before anything is parsed (``RunPlan``) and what it found there (``RunResult``).

They live below the engine so that the stages it runs (``dispatchlint/check.py``) and the formats that print a
plan (``dispatchlint/report/info.py``) read them without importing the engine back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Tuple

from dispatchlint.config import Config
from dispatchlint.discovery.files import LeftOut, SourceFile
from dispatchlint.findings import Finding
from dispatchlint.locations import TextEdit
from dispatchlint.problems import Problem
from dispatchlint.rules import RulePage

if TYPE_CHECKING:
    from dispatchlint.fix import Fixability
    from dispatchlint.linking import Project


class UsageError(Exception):
    """Bad command-line input (an unknown rule code, a missing path)."""


@dataclass(frozen=True)
class RunOptions:
    """What the command line adds to the project's own settings."""

    #: Rule codes or prefixes replacing the configured ``select`` (and its ``extend-select``).
    select: Tuple[str, ...] = ()
    #: Rule codes or prefixes enabled on top of the selection.
    extend_select: Tuple[str, ...] = ()
    #: Rule codes or prefixes disabled, on top of the configured ``ignore``.
    ignore: Tuple[str, ...] = ()
    #: Exclude patterns added to the configured ones.
    extend_exclude: Tuple[str, ...] = ()
    #: A settings file used instead of the root's ``pyproject.toml``.
    config_file: Optional[Path] = None
    #: Text to check in place of a file's contents on disk (``--stdin-filename``), by absolute path.
    contents: Mapping[Path, bytes] = field(default_factory=dict)
    #: Keep each file's facts by content under the root.
    use_cache: bool = True
    #: The caller needs only the findings and problems, not the linked project: the results of an identical
    #: earlier run (same code, settings, rules and files) may answer it (``dispatchlint/results_cache.py``).
    reuse_results: bool = False
    #: Plan what ``--fix`` would change for each finding, as text edits (:attr:`RunResult.edits`): the JSON and
    #: SARIF reports show them. Stored results are reused only when they hold them.
    fix_edits: bool = False
    #: Where the facts and results are cached (None: ``$DISPATCHLINT_CACHE_DIR``, else the user's cache folder).
    cache_dir: Optional[Path] = None
    #: Worker processes for indexing (0: one per CPU).
    jobs: int = 0
    #: Told, as files are indexed, how many of how many are done (a progress line on a terminal).
    progress: Optional[Callable[[int, int], None]] = None
    #: Leave out paths named on the command line that ``exclude`` or git ignores (as pre-commit names every
    #: changed file).
    force_exclude: bool = False


@dataclass(frozen=True)
class RunPlan:
    """What a run will analyse in one project, before anything is parsed: ``--show-files`` and
    ``--show-settings`` print it."""

    root: Path
    #: The file the settings come from (None: no file, every default).
    config_source: Optional[Path]
    config: Config
    #: The codes of the rules that run.
    rules: Tuple[str, ...]
    #: Every file of the project that is analysed, discovered or named on the command line.
    files: Tuple[SourceFile, ...]
    #: The paths whose findings are reported.
    targets: Tuple[Path, ...]
    #: The facts cache's folder, or None when the cache is off.
    cache: Optional[Path]
    #: Folders among the targets that configure dispatchlint themselves: projects of their own, left out here.
    subprojects: Tuple[Path, ...] = ()
    #: What discovery left out on its own: folders it cannot read, links that lead out of the project.
    left_out: Tuple[LeftOut, ...] = ()

    def reported(self, source: SourceFile) -> bool:
        return self.concerns(source.relative)

    def reports(self, finding: Finding) -> bool:
        """Whether the finding lies under the targets or refers to a place there (its table, gate or schema):
        the commit that unwraps a table fails on the dispatch sites it re-opens in other files."""
        return self.concerns(finding.path) or any(self.concerns(item.path) for item in finding.related)

    def concerns(self, relative: str) -> bool:
        """Whether the root-relative POSIX path ``relative`` lies under one of the targets."""
        return any(not target or relative == target or relative.startswith(target + "/") for target in self._targets)

    @cached_property
    def _targets(self) -> Tuple[str, ...]:
        """The targets relative to the root, as POSIX paths ("": the root itself)."""
        return tuple(
            "" if target == self.root else target.relative_to(self.root).as_posix()
            for target in self.targets
            if target == self.root or self.root in target.parents
        )


@dataclass(frozen=True)
class RunResult:
    """One project's analysis: the findings reported (paths relative to the working directory) and the
    problems of the run."""

    root: Path
    config: Config
    #: The linked project (None: the results were stored by an identical earlier run, see ``reuse_results``).
    project: Optional[Project]
    findings: Tuple[Finding, ...]
    #: The decisions that set the findings' fix markers, for ``--fix`` and ``--diff`` to apply (None as
    #: ``project``).
    fixability: Optional[Fixability]
    #: Unreadable files, files the analyzer failed on, files that do not parse (paths relative to the cwd).
    problems: Tuple[Problem, ...]
    #: Things the user should know that do not fail the run (a configured gate that names nothing).
    warnings: Tuple[str, ...] = ()
    #: Seconds spent indexing each file, by root-relative path (None: its facts came from the cache).
    file_times: Tuple[Tuple[str, Optional[float]], ...] = ()
    #: Seconds spent in each later stage (``link``, ``rules``).
    stage_times: Tuple[Tuple[str, float], ...] = ()
    #: How many files were analysed, and how many of them lie under the given paths.
    files: int = 0
    reported_files: int = 0
    #: What ``--fix`` would change for each finding alone (paths relative to the working directory; none where no
    #: fix applies): only when the run asked for it (``RunOptions.fix_edits``).
    edits: Mapping[Finding, Tuple[TextEdit, ...]] = field(default_factory=dict)
    #: Every rule's documentation, from the code that found these results: what the reports say of the rules.
    rules: Tuple[RulePage, ...] = ()

    def linked(self) -> Tuple[Project, Fixability]:
        """The linked project and the fix decisions: every run that asked for no ``reuse_results`` has them."""
        if self.project is None or self.fixability is None:
            raise RuntimeError("these results were stored by an earlier run: analyse without reuse_results")
        return self.project, self.fixability

    @property
    def errors(self) -> Tuple[Problem, ...]:
        """The problems that make the run fail (exit 2)."""
        return tuple(problem for problem in self.problems if problem.kind.fails_run)
