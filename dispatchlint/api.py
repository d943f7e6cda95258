"""dispatchlint from Python: :func:`check` a project, :func:`fix` it.

The command line and the language server are layers over these two functions: they parse their input, call
here, and print or publish what comes back. Each call analyses every project around the paths it is given as a
whole (a dispatch path in one file can bypass the gate of a table defined in another) and reports the findings
that concern those paths, exactly as ``dispatchlint PATHS`` does::

    from dispatchlint import api

    result = api.check(["src/agent"])
    for finding in result.findings:
        print(finding.path, finding.span.line, finding.code, finding.message)

    outcome = api.fix(["src/agent"])      # rewrites the files; write=False only computes the new contents
    print(outcome.converged, sorted(outcome.changes))

``settings`` adds to each project's own configuration (``[tool.dispatchlint]`` in its ``pyproject.toml``) what
the command line adds: rule selection, excludes, another settings file, and ``contents``, text that stands in
for a file's bytes on disk (an editor's unsaved buffer). Paths in the results are relative to ``cwd`` (default:
the working directory). Bad input raises :class:`UsageError` (a path that does not exist, an unknown rule code)
or :class:`ConfigError` (a broken ``pyproject.toml``); a fix that cannot be written raises :class:`FixError`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from dispatchlint import fix as fixes
from dispatchlint._process import deep_recursion, on_deep_stack
from dispatchlint.config import ConfigError
from dispatchlint.plan import RunOptions, RunResult, UsageError
from dispatchlint.engine import analyse, plan_run, with_fix_edits
from dispatchlint.findings import Applicability, Finding
from dispatchlint.fix import JOURNAL_NAME, FixError, Recovery, fix_lock, recover_interrupted, write_all
from dispatchlint.problems import Problem

#: Fix passes at most. Each pass analyses what the ones before it made, since one fix can make another possible
#: (coercing a chain's arguments ahead of it makes its tool's hand-rolled parsing redundant); fixes that still
#: change something after this many passes do not converge, which :attr:`FixResult.converged` says.
MAX_FIX_PASSES = 4

#: Paths as a caller names them.
PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Result:
    """One analysis: every project around the paths asked about, each analysed as a whole."""

    #: One result per project (a monorepo has several): its root, settings, findings, problems and, unless the
    #: results of an identical earlier run were reused, the linked project and the fix decisions.
    projects: Tuple[RunResult, ...]
    #: How long the analysis took, in seconds.
    seconds: float = 0.0
    #: The files of a ``--fix`` killed while it wrote them, put back before this analysis (see :func:`fix`).
    recovered: Tuple[Recovery, ...] = ()

    @property
    def findings(self) -> Tuple[Finding, ...]:
        """The findings that concern the paths asked about, project after project."""
        return tuple(finding for project in self.projects for finding in project.findings)

    @property
    def problems(self) -> Tuple[Problem, ...]:
        """Files that could not be read, were skipped, or do not parse."""
        return tuple(problem for project in self.projects for problem in project.problems)

    @property
    def errors(self) -> Tuple[Problem, ...]:
        """The problems that make the result incomplete (the command exits 2 for them)."""
        return tuple(problem for project in self.projects for problem in project.errors)

    @property
    def warnings(self) -> Tuple[str, ...]:
        """What the user should know that does not make the result wrong (a configured gate that names nothing)."""
        return tuple(warning for project in self.projects for warning in project.warnings)


@dataclass(frozen=True)
class OutsideFix:
    """A finding a fix confined to one file left as it is (:func:`fix`'s ``confined_to``): its fix edits other
    files too (a table wrapped in the module that defines it), which that fix must not touch."""

    finding: Finding
    #: The other files its fix changes (absolute).
    files: Tuple[Path, ...]


@dataclass(frozen=True)
class FixResult:
    """What :func:`fix` did: the analyses of its passes and the files its fixes change."""

    #: One analysis per pass: the first of the code as it was, the last of the code as fixed.
    passes: Tuple[Result, ...]
    #: The files the fixes change: absolute path -> (bytes before, bytes after).
    changes: Mapping[Path, Tuple[bytes, bytes]] = field(default_factory=dict)
    #: What the rewrite of each changed file does, one line per kind of rewrite.
    notes: Mapping[Path, Tuple[str, ...]] = field(default_factory=dict)
    #: A pass found nothing more to change. When False, the fixes of the last pass still changed the code: the
    #: changes are those of every pass made, and :attr:`warnings` says so.
    converged: bool = True
    #: Fixable findings left because their fix is unsafe (``unsafe=True`` applies them).
    held: int = 0
    #: The changes were written to the files.
    written: bool = False
    #: What to tell the user after: a dependency the fixes create, to declare by hand.
    advice: Tuple[str, ...] = ()
    #: With ``confined_to``: the findings of the last pass left unfixed because their fix edits other files.
    outside: Tuple[OutsideFix, ...] = ()

    @property
    def before(self) -> Result:
        """The analysis of the code as it was."""
        return self.passes[0]

    @property
    def after(self) -> Result:
        """The analysis of the code as fixed: the findings that remain."""
        return self.passes[-1]

    @property
    def warnings(self) -> Tuple[str, ...]:
        if self.converged:
            return ()
        passes = len(self.passes) - 1
        return (
            f"the fixes did not converge in {passes} pass{'es' if passes != 1 else ''}: the code they made would "
            "change again; the changes of those passes are kept, and what remains is reported (please report it)",
        )


def check(
    paths: Union[PathLike, Sequence[PathLike]] = (),
    *,
    settings: Optional[RunOptions] = None,
    cwd: Optional[PathLike] = None,
) -> Result:
    """Analyse every project around ``paths`` (default: the working directory) and report the findings that
    concern them: those in files under ``paths``, and those elsewhere whose table, gate or schema lies there."""
    started = time.perf_counter()
    targets, options, folder = _paths(paths), settings or RunOptions(), _folder(cwd)
    projects = analyse(targets, options, folder)
    interrupted = [project.root for project in projects if (project.root / JOURNAL_NAME).exists()]
    if not interrupted:
        return Result(tuple(projects), time.perf_counter() - started)
    # a fix was killed while it wrote: check the project as it was before, not half-fixed
    with fix_lock(interrupted, lambda root: None):
        recovered = _recover(interrupted)
    projects = analyse(targets, options, folder)
    return Result(tuple(projects), time.perf_counter() - started, recovered)


def fix(
    paths: Union[PathLike, Sequence[PathLike]] = (),
    *,
    unsafe: bool = False,
    settings: Optional[RunOptions] = None,
    write: bool = True,
    waiting: Optional[Callable[[Path], None]] = None,
    cwd: Optional[PathLike] = None,
    confined_to: Optional[PathLike] = None,
) -> FixResult:
    """Fix the findings :func:`check` reports for ``paths``: the safe fixes, and with ``unsafe`` the unsafe ones
    too; then report what remains.

    With ``confined_to`` (a file: text from stdin, an editor's buffer), only the fixes that change that file alone
    are made, each whole or not at all: a fix that would also edit another file (wrap a table defined there,
    declare a dependency in ``pyproject.toml``) is left out, and :attr:`FixResult.outside` names its finding.

    Every pass is computed in memory, each analysing what the ones before it made, until a pass changes nothing
    (at most :data:`MAX_FIX_PASSES`). With ``write``, the files are then written once, all or none, while the fix
    lock of each project is held (a second fix of the same project waits, and ``waiting(root)`` is told before
    it does); without it, nothing is written and :attr:`FixResult.changes` says what would be.
    """
    options = replace(settings or RunOptions(), reuse_results=False)  # the fixes need the linked project
    targets, folder = _paths(paths), _folder(cwd)
    confined = (folder / confined_to).resolve() if confined_to is not None else None
    if not write:
        return _fix_passes(targets, options, unsafe, folder, confined)
    roots = [plan.root for plan in plan_run(targets, options, folder)]
    # Analysed under the lock: an analysis from before another fix wrote would fix files that are gone.
    with fix_lock(roots, waiting or (lambda root: None)):
        recovered = _recover(roots)
        outcome = _fix_passes(targets, options, unsafe, folder, confined)
        write_all(outcome.changes, roots)
    before = replace(outcome.passes[0], recovered=recovered)
    return replace(outcome, passes=(before,) + outcome.passes[1:], written=bool(outcome.changes))


def _recover(roots: Sequence[Path]) -> Tuple[Recovery, ...]:
    """Put back the files of a fix killed while it wrote them, in each of ``roots`` (hold their fix lock)."""
    return tuple(recovery for root in sorted(set(roots)) for recovery in recover_interrupted(root))


def _fix_passes(
    targets: List[Path], options: RunOptions, unsafe: bool, cwd: Path, confined: Optional[Path]
) -> FixResult:
    def passes() -> FixResult:
        with deep_recursion():  # the fixes walk libcst trees as deep as the deepest module Python accepts
            return _converge(targets, options, unsafe, cwd, confined)

    return on_deep_stack(passes)


def _converge(
    targets: List[Path], options: RunOptions, unsafe: bool, cwd: Path, confined: Optional[Path]
) -> FixResult:
    def analysed(fixed: Mapping[Path, bytes]) -> Result:
        started = time.perf_counter()
        pass_options = replace(options, contents={**options.contents, **fixed}, fix_edits=False)  # the last only
        projects = analyse(targets, pass_options, cwd)
        return Result(tuple(projects), time.perf_counter() - started)

    passes = [analysed({})]
    original: Dict[Path, bytes] = {}
    fixed: Dict[Path, bytes] = {}
    notes: Dict[Path, List[str]] = {}
    advice: List[str] = []
    converged = False
    for done in range(MAX_FIX_PASSES + 1):
        step = _fix_pass(passes[-1], unsafe, confined)
        advice.extend(line for line in step.advice if line not in advice)
        if not step.changes:
            converged = True
            break
        if done == MAX_FIX_PASSES:
            break
        for path, (old, new) in step.changes.items():
            original.setdefault(path, old)
            fixed[path] = new
            notes.setdefault(path, []).extend(note for note in step.notes[path] if note not in notes[path])
        passes.append(analysed(fixed))
    changes = {path: (original[path], data) for path, data in fixed.items() if data != original[path]}
    if options.fix_edits:
        last = passes[-1]
        passes[-1] = replace(last, projects=tuple(with_fix_edits(project, cwd) for project in last.projects))
    return FixResult(
        tuple(passes),
        changes,
        {path: tuple(notes[path]) for path in changes},
        converged,
        step.held,
        advice=tuple(advice),
        outside=tuple(step.outside),
    )


@dataclass(frozen=True)
class _Pass:
    """One pass of the fixes over an analysis: the files it changes, what each rewrite does, the held fixes."""

    changes: Dict[Path, Tuple[bytes, bytes]]
    notes: Dict[Path, List[str]]
    held: int
    advice: List[str]
    #: The findings left because their fix edits a file other than the one the fixes are confined to.
    outside: List[OutsideFix]


def _fix_pass(result: Result, unsafe: bool, confined: Optional[Path]) -> _Pass:
    changes: Dict[Path, Tuple[bytes, bytes]] = {}
    notes: Dict[Path, List[str]] = {}
    advice: List[str] = []
    outside: List[OutsideFix] = []
    held = 0
    for project in result.projects:
        fixable = [finding for finding in project.findings if finding.fixable]
        chosen = [finding for finding in fixable if unsafe or finding.applicability is Applicability.SAFE]
        held += len(fixable) - len(chosen)
        if confined is not None:
            chosen = _confine(project, chosen, unsafe, confined, outside)
        outcome = fixes.plan_fixes(project.linked()[1], project.root, chosen, unsafe)
        advice.extend(outcome.advice)
        for path, change in outcome.changes.items():
            if change[0] != change[1]:
                changes[path] = change
                notes[path] = outcome.notes[path]
    return _Pass(changes, notes, held, advice, outside)


def _confine(
    project: RunResult, chosen: Sequence[Finding], unsafe: bool, confined: Path, outside: List[OutsideFix]
) -> List[Finding]:
    """The findings of ``chosen`` whose fix, planned alone, changes no file but ``confined``; the others are added
    to ``outside`` with the files their fix would change."""
    preview = fixes.FixPreview(project.linked()[1], project.root, unsafe)
    kept = []
    for finding in chosen:
        changed = preview.changes(finding)
        others = tuple(sorted(path for path, (old, new) in changed.items() if old != new and path != confined))
        if others:
            outside.append(OutsideFix(finding, others))
        else:
            kept.append(finding)
    return kept


def _paths(paths: Union[PathLike, Sequence[PathLike]]) -> List[Path]:
    """``paths`` as a list of paths: one path (a string is not a sequence of one-letter paths), or several."""
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    return [Path(path) for path in paths]


def _folder(cwd: Optional[PathLike]) -> Path:
    return Path(cwd).resolve() if cwd is not None else Path.cwd()


__all__ = [
    "MAX_FIX_PASSES",
    "Applicability",
    "ConfigError",
    "Finding",
    "FixError",
    "FixResult",
    "OutsideFix",
    "Problem",
    "Result",
    "RunOptions",
    "RunResult",
    "UsageError",
    "check",
    "fix",
]
