"""The pipeline: plan (root, settings, files) -> read and key every file -> check the project
(``dispatchlint/check.py``: index each file once, link, run rules, filter findings, decide which can be fixed)
-> narrow the findings to the paths asked about.

A run that needs only what the reports print (the findings, each fix's edits, the rules' documentation) may be
answered from the results of an identical earlier run, stored before they were narrowed
(``dispatchlint/results_cache.py``): such a run loads none of the check's stages (no libcst, no linker, no rule's
check, no fix decision), only what plans the run, reads the files and prints the findings."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple

from dispatchlint.indexing.facts_cache import FactsCache, read_files, user_cache_folder
from dispatchlint.indexing.grammar import grammar_for
from dispatchlint.discovery.files import (
    Ignores,
    LeftOut,
    SourceFile,
    discover,
    find_root,
    link_out_of,
    module_name,
    workspace_of,
)
from dispatchlint.locations import Location
from dispatchlint.config import ConfigError, declares_project, load_config
from dispatchlint.findings import Finding
from dispatchlint.problems import ProblemKind
from dispatchlint.results_cache import load_results, results_key, store_results
from dispatchlint.rules import RULES
from dispatchlint.plan import RunOptions, RunPlan, RunResult, UsageError
from dispatchlint.rules.suppression import covers

if TYPE_CHECKING:
    from dispatchlint.linking import Project
    from dispatchlint.fix import Fixability


#: A run with only the project's own settings.
DEFAULT_OPTIONS = RunOptions()


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


def plan_run(paths: Sequence[Path], options: RunOptions = DEFAULT_OPTIONS, cwd: Optional[Path] = None) -> List[RunPlan]:
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
    config = load_config(source, root)
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
        (options.cache_dir or user_cache_folder()) if options.use_cache else None,
        tuple(sub for sub in discovery.subprojects if _under(sub, targets)),
        tuple(left_out),
    )


def analyse(
    paths: Sequence[Path], options: RunOptions = DEFAULT_OPTIONS, cwd: Optional[Path] = None
) -> List[RunResult]:
    """Analyse every project around ``paths``, each as a whole; report the findings that concern ``paths``."""
    cwd = cwd or Path.cwd()
    return [analyse_project(plan, options, cwd) for plan in plan_run(paths, options, cwd)]


def analyse_project(plan: RunPlan, options: RunOptions, cwd: Path) -> RunResult:
    """Analyse the whole project of ``plan``; report the findings that concern its targets."""
    cache = FactsCache(plan.cache, workspace=workspace_of(plan.root)) if plan.cache is not None else None
    file_times: Dict[str, Optional[float]] = {}
    grammar = grammar_for(plan.config.target_version)
    read = read_files(list(plan.files), cache, plan.config.max_file_size, options.contents, grammar)
    errors = list(read.problems)
    started = time.perf_counter()
    key = None
    results = None
    if cache is not None and options.reuse_results:
        key = results_key(plan.root, plan.config, plan.rules, read.files, read.problems)
        results = load_results(cache, plan.root, key, with_edits=options.fix_edits)
    project: Optional[Project] = None
    fixability: Optional[Fixability] = None
    if results is not None:
        file_times = {item.source.relative: None for item in read.files}
        stages: Tuple[Tuple[str, float], ...] = (("stored results", time.perf_counter() - started),)
    else:
        from dispatchlint._process import deep_recursion, on_deep_stack
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

    edits = results.edits if results.edits is not None else ((),) * len(results.findings)
    reported = [
        (_relative_to_cwd(finding, shown_path), tuple(replace(edit, path=shown_path(edit.path)) for edit in fixed))
        for finding, fixed in zip(results.findings, edits)
        if plan.reports(finding)
    ]
    shown = tuple(sorted((finding for finding, _ in reported), key=Finding.sort_key))
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
        dict(reported) if results.edits is not None else {},
        results.rules,
    )


def with_fix_edits(result: RunResult, cwd: Path) -> RunResult:
    """``result`` with each finding's fix edits, planned from its linked project: ``--fix`` plans them only for
    the findings its last pass leaves, not for those of every pass."""
    from dispatchlint.check import fix_edits

    _, fixability = result.linked()
    edits = fix_edits(fixability, result.root, result.findings, cwd)
    return replace(result, edits=dict(zip(result.findings, edits)))


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
    "with_fix_edits",
]
