"""The pipeline: plan (root, settings, files) -> read and key every file -> check the project
(``dispatchlint/check.py``: index each file once, link, run rules, filter findings, decide which can be fixed)
-> narrow the findings to the paths asked about.

A run that needs only findings may be answered from the results of an identical earlier run, stored before they
were narrowed (``dispatchlint/results_cache.py``): such a run loads none of the check's stages (no libcst, no
linker, no rule's check, no fix decision), only what plans the run, reads the files and prints the findings."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from dispatchlint.analysis.cache import FactsCache, read_files, user_cache_folder
from dispatchlint.analysis.discover import (
    Ignores,
    LeftOut,
    SourceFile,
    discover,
    find_root,
    link_out_of,
    module_name,
    workspace_of,
)
from dispatchlint.analysis.locations import Location
from dispatchlint.config import Config, ConfigError, declares_project, load_config
from dispatchlint.findings import Finding
from dispatchlint.problems import Problem, ProblemKind
from dispatchlint.results_cache import load_results, results_key, store_results
from dispatchlint.rules import RULES
from dispatchlint.suppress import covers

if TYPE_CHECKING:
    from dispatchlint.analysis.link import Project
    from dispatchlint.fix import Fixability


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

    def linked(self) -> Tuple[Project, Fixability]:
        """The linked project and the fix decisions: every run that asked for no ``reuse_results`` has them."""
        if self.project is None or self.fixability is None:
            raise RuntimeError("these results were stored by an earlier run: analyse without reuse_results")
        return self.project, self.fixability

    @property
    def errors(self) -> Tuple[Problem, ...]:
        """The problems that make the run fail (exit 2)."""
        return tuple(problem for problem in self.problems if problem.kind.fails_run)


def select_rules(select: Sequence[str], ignore: Sequence[str], extend_select: Sequence[str] = ()) -> List[str]:
    """The codes of the rules to run: ``select`` codes or prefixes (default: the default rules) and
    ``extend_select``, minus ``ignore``."""
    check_codes(list(select) + list(extend_select) + list(ignore), "rule code or prefix")

    def matches(code: str, selectors: Sequence[str]) -> bool:
        return any(s.upper() == "ALL" or covers(s, code) for s in selectors)

    chosen = [
        code
        for code, entry in RULES.items()
        if (matches(code, select) if select else entry.default) or matches(code, extend_select)
    ]
    return [code for code in chosen if not matches(code, ignore)]


def check_codes(selectors: Sequence[str], what: str) -> None:
    """Raise a usage error for a code or prefix that covers no rule."""
    for selector in selectors:
        if selector.upper() != "ALL" and not any(covers(selector, code) for code in RULES):
            raise UsageError(f"unknown {what}: {selector!r} (see --list-rules)")


def group_by_project(targets: Sequence[Path]) -> Dict[Path, List[Path]]:
    """The given paths by the project they belong to (its root), each project in the order first named."""
    groups: Dict[Path, List[Path]] = {}
    for target in targets:
        groups.setdefault(find_root(target, declares_project), []).append(target)
    return groups


def plan_run(paths: Sequence[Path], options: RunOptions = RunOptions(), cwd: Optional[Path] = None) -> List[RunPlan]:
    """One plan per project the ``paths`` lie in, and per project of its own that a folder among them holds:
    each is analysed and configured on its own."""
    cwd = cwd or Path.cwd()
    targets = tuple(_target(cwd / path) for path in (paths or [Path(".")]))
    for target in targets:
        if not target.exists() and target not in options.contents:
            raise UsageError(f"{target}: no such file or directory")
    pending = group_by_project(targets)
    plans = []
    while pending:
        root = min(pending, key=lambda folder: len(folder.parts))  # a project before the ones it holds
        plan = plan_project(root, tuple(pending.pop(root)), options)
        plans.append(plan)
        for subproject in plan.subprojects:
            pending.setdefault(subproject, []).append(subproject)
    return plans


def _target(path: Path) -> Path:
    """A path as named, absolute: a link to a file stays where it is (in the project it is committed to, which
    may not read through it), anything else is resolved."""
    if path.is_symlink() and not path.is_dir():
        return path.parent.resolve() / path.name
    return path.resolve()


def plan_project(root: Path, targets: Tuple[Path, ...], options: RunOptions) -> RunPlan:
    """Read the project's settings, choose the rules and discover the files."""
    source = options.config_file.resolve() if options.config_file else root / "pyproject.toml"
    config = load_config(source)
    config = replace(config, exclude=config.exclude + options.extend_exclude)
    for pattern, codes in config.per_file_ignores:
        try:
            check_codes(codes, f"rule code in per-file-ignores {pattern!r}")
        except UsageError as error:
            raise ConfigError(f"{source}: {error}") from error
    chosen = select_rules(
        list(options.select) or list(config.select),
        list(config.ignore) + list(options.ignore),
        list(options.extend_select) + ([] if options.select else list(config.extend_select)),
    )
    ignores = Ignores(root, config.exclude)
    discovery = discover(root, ignores, declares_project)
    discovered = {source.path for source in discovery.files}
    explicit = [
        t for t in targets if (t in options.contents or (t.is_file() and t.suffix == ".py")) and t not in discovered
    ]
    if options.force_exclude:
        explicit = [path for path in explicit if not ignores.excluded(path, is_dir=False)]
    left_out = list(discovery.left_out)
    for path in [path for path in explicit if path not in options.contents]:
        outside = link_out_of(root, path)
        if outside is not None:
            explicit.remove(path)
            said = LeftOut.link(path.relative_to(root).as_posix(), outside)
            left_out += [] if said in left_out else [said]
    return RunPlan(
        root,
        source if source.is_file() else None,
        config,
        tuple(chosen),
        tuple(discovery.files + _explicit_files(root, explicit)),
        targets,
        user_cache_folder() if options.use_cache else None,
        tuple(sub for sub in discovery.subprojects if _under(sub, targets)),
        tuple(left_out),
    )


def analyse(paths: Sequence[Path], options: RunOptions = RunOptions(), cwd: Optional[Path] = None) -> List[RunResult]:
    """Analyse every project around ``paths``, each as a whole; report the findings that concern ``paths``."""
    cwd = cwd or Path.cwd()
    return [analyse_project(plan, options, cwd) for plan in plan_run(paths, options, cwd)]


def analyse_project(plan: RunPlan, options: RunOptions, cwd: Path) -> RunResult:
    """Analyse the whole project of ``plan``; report the findings that concern its targets."""
    cache = FactsCache(plan.cache, workspace=workspace_of(plan.root)) if plan.cache is not None else None
    file_times: Dict[str, Optional[float]] = {}
    read = read_files(list(plan.files), cache, plan.config.max_file_size, options.contents)
    errors = list(read.problems)
    started = time.perf_counter()
    key = None
    if cache is not None and options.reuse_results:
        key = results_key(plan.root, plan.config, plan.rules, read.files, read.problems)
    results = load_results(cache, plan.root, key) if cache is not None and key is not None else None
    project: Optional[Project] = None
    fixability: Optional[Fixability] = None
    if results is not None:
        file_times = {item.source.relative: None for item in read.files}
        stages: Tuple[Tuple[str, float], ...] = (("stored results", time.perf_counter() - started),)
    else:
        from dispatchlint.analysis._parse import deep_recursion, on_deep_stack
        from dispatchlint.check import Checked, check_project  # the stages that index, link and check: only on a miss

        def check() -> Checked:  # the summaries and traces follow chains of calls as long as a project has
            with deep_recursion():
                return check_project(plan, options, read.files, cache, file_times, everything=key is not None)

        checked = on_deep_stack(check)
        project, fixability, results, stages = checked.project, checked.fixability, checked.results, checked.stages
        errors.extend(checked.problems)
        if cache is not None and key is not None and not checked.problems:  # a failed file is indexed again
            store_results(cache, plan.root, key, results)
    shown_paths: Dict[str, str] = {}

    def shown_path(path: str) -> str:  # the findings of a project name few files, many times
        if path not in shown_paths:
            shown_paths[path] = _shown(path, plan.root, cwd)
        return shown_paths[path]

    reported = (f for f in results.findings if plan.reports(f))
    shown = tuple(sorted((_relative_to_cwd(f, shown_path) for f in reported), key=Finding.sort_key))
    warnings = [
        f"{_shown(item.path, plan.root, cwd)}:{item.suppression.span.line}:{item.suppression.span.column}: "
        f"unknown rule code {item.code!r} in a suppression comment (see --list-rules)"
        for item in results.unknown_codes
    ]
    warnings += results.unresolved_settings
    warnings += [f"{_shown(item.path, plan.root, cwd)}: {item.reason}" for item in plan.left_out]
    warnings += cache.warnings if cache is not None else []
    errors.extend(results.parse_errors)
    problems = tuple(problem.moved(_shown(problem.path, plan.root, cwd)) for problem in errors)
    warnings += [str(problem) for problem in problems if problem.kind is ProblemKind.SKIPPED]
    reported_files = sum(1 for source in plan.files if plan.reported(source))
    return RunResult(
        plan.root,
        plan.config,
        project,
        shown,
        fixability,
        problems,
        tuple(warnings),
        tuple(sorted(file_times.items())),
        stages,
        len(plan.files),
        reported_files,
    )


def _under(path: Path, targets: Sequence[Path]) -> bool:
    return any(path == target or target in path.parents for target in targets)


def _explicit_files(root: Path, paths: Sequence[Path]) -> List[SourceFile]:
    """Files named on the command line that discovery left out (each target's root is above it)."""
    found = []
    for path in paths:
        relative = path.relative_to(root).as_posix()
        module, is_package = module_name(relative)
        found.append(SourceFile(path, relative, module, is_package))
    return found


def _shown(path: str, root: Path, cwd: Path) -> str:
    return Path(os.path.relpath(root / path, cwd)).as_posix()


def _relative_to_cwd(finding: Finding, shown: Callable[[str], str]) -> Finding:
    """The finding with its paths as ``shown`` gives them (relative to the working directory)."""

    def moved(item: Location) -> Location:
        path = shown(item.path)
        return item if path == item.path else replace(item, path=path)

    path = shown(finding.path)
    related = tuple(moved(item) for item in finding.related)
    trace = tuple(moved(item) for item in finding.trace)
    if (path, related, trace) == (finding.path, finding.related, finding.trace):
        return finding
    return replace(finding, path=path, related=related, trace=trace)


__all__ = [
    "ConfigError",
    "RunOptions",
    "RunPlan",
    "RunResult",
    "UsageError",
    "analyse",
    "analyse_project",
    "group_by_project",
    "plan_project",
    "plan_run",
    "select_rules",
]
