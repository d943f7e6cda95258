"""A project checked afresh, for a run that stored results cannot answer: index what the facts cache lacks, link
the project, run the rules, filter the findings (per-file ignores, suppression comments, test code), decide
which of them can be fixed (from the facts: nothing is parsed again) and, when the run's report shows them, plan
each fix's edits.

The engine imports this module only then: a run answered from stored results loads none of these stages.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from dispatchlint._process import collecting_only_new_objects
from dispatchlint.indexing.facts_cache import FactsCache, ReadFile
from dispatchlint.linking.configured import unresolved_settings
from dispatchlint.discovery.files import PathMatcher
from dispatchlint.indexing.grammar import grammar_for
from dispatchlint.indexing.project import index_read
from dispatchlint.linking import Project, link_project
from dispatchlint.findings import Applicability, Finding, SubjectKind, no_fix_help, unsafe_fix_help
from dispatchlint.fix import FixError, Fixability, text_edits
from dispatchlint.locations import TextEdit
from dispatchlint.problems import Problem, ProblemKind
from dispatchlint.results_cache import ProjectResults
from dispatchlint.rules import RULES, all_rules, rule_pages
from dispatchlint.rules.dl002_unused_suppression import UnusedSuppression
from dispatchlint.rules.suppression import PerFileIgnores, SuppressionIndex

if TYPE_CHECKING:
    from dispatchlint.plan import RunOptions, RunPlan


class Checked(NamedTuple):
    """A project checked afresh."""

    project: Project
    fixability: Fixability
    #: The findings kept, with their fix markers: those that concern the plan's targets, or every one.
    results: ProjectResults
    #: Files that could not be indexed (a bug of ours, named per file).
    problems: List[Problem]
    #: Seconds spent in each stage after indexing (``link``, ``rules``, ``fixability``).
    stages: Tuple[Tuple[str, float], ...]


def check_project(
    plan: "RunPlan",
    options: "RunOptions",
    files: Sequence[ReadFile],
    cache: Optional[FactsCache],
    file_times: Dict[str, Optional[float]],
    everything: bool,
) -> Checked:
    """Check the whole project of ``plan``: ``everything`` decides the fix markers of every finding (results kept
    for any later run), not only of those its targets concern."""
    jobs = options.jobs or os.cpu_count() or 1
    with collecting_only_new_objects():  # the facts read from the cache, frozen as decoded, until the end
        grammar = grammar_for(plan.config.target_version)
        indexed = index_read(files, cache, jobs, file_times, options.progress, grammar)
        started = time.perf_counter()
        with collecting_only_new_objects():  # all the facts: millions of long-lived records, in no cycle
            project = link_project(indexed.modules, plan.config)
            linked = time.perf_counter()
            suppressions = SuppressionIndex(indexed.modules, RULES)
            kept, suppressed_tables = _check(project, suppressions, plan)
            checked = time.perf_counter()
            fixability = Fixability(project, options.contents, suppressed_tables)
            decided = _decided_all(fixability, kept, plan, everything)
            decided_at = time.perf_counter()
            edits = fix_edits(fixability, plan.root, decided, plan.root) if options.fix_edits else None
        results = ProjectResults(
            decided,
            tuple(
                Problem(
                    m.path,
                    ProblemKind.PARSE_ERROR,
                    m.parse_error.message,
                    m.parse_error.span.line,
                    m.parse_error.span.column,
                )
                for m in indexed.modules
                if m.parse_error is not None
            ),
            tuple(suppressions.unknown_codes()),
            tuple(unresolved_settings(project)),
            rule_pages(),
            edits,
        )
    stages = (
        ("link", linked - started),
        ("rules", checked - linked),
        ("fixability", decided_at - checked),
        *((("fix edits", time.perf_counter() - decided_at),) if edits is not None else ()),
    )
    return Checked(project, fixability, results, indexed.problems, stages)


def fix_edits(
    fixability: Fixability, root: Path, findings: Sequence[Finding], relative_to: Path
) -> Tuple[Tuple[TextEdit, ...], ...]:
    """What ``--fix`` would change for each finding alone, as text edits (paths relative to ``relative_to``): what
    the JSON and SARIF reports show. Only here are files parsed again: the ones the fixes rewrite."""
    from dispatchlint.fix import FixPreview  # loads libcst: only for a run whose report shows the edits

    preview = FixPreview(fixability, root)

    def edits(finding: Finding) -> Tuple[TextEdit, ...]:
        if not finding.fixable:
            return ()
        try:
            return tuple(text_edits(preview.changes(finding), relative_to))
        except FixError:
            return ()

    return tuple(edits(finding) for finding in findings)


def _check(project: Project, suppressions: SuppressionIndex, plan: "RunPlan") -> Tuple[List[Finding], Set[str]]:
    """Run the chosen rules and keep what may be reported: not ignored for its file, not suppressed in the code (a
    DL002 finding is about a line's suppression, so only a file's suppressions can hide it), not in test code.

    Also the tables whose every finding was suppressed or ignored: the project said to leave them as they are, so
    no other finding's fix may wrap them."""
    per_file = PerFileIgnores(plan.config.per_file_ignores)
    rules = all_rules()
    kept = []
    hidden_tables: Set[str] = set()
    for code in plan.rules:
        rule = rules[code]()
        for finding in rule.check(project):
            lines = not isinstance(rule, UnusedSuppression)
            if not per_file.ignores(finding) and not suppressions.hides(finding, lines=lines):
                kept.append(finding)
            else:
                hidden_tables.update(_tables_of(finding))
    tests = PathMatcher(plan.config.test_paths)
    reported_tables = {name for finding in kept for name in _tables_of(finding)}
    return [finding for finding in kept if not tests.matches(finding.path)], hidden_tables - reported_tables


def _tables_of(finding: Finding) -> List[str]:
    """The tables a finding's fix would wrap."""
    subjects = [finding.subject, *finding.also_fixes] if finding.subject is not None else []
    return [subject.name for subject in subjects if subject is not None and subject.kind is SubjectKind.TABLE]


def _decided_all(
    fixability: Fixability, findings: Sequence[Finding], plan: "RunPlan", everything: bool
) -> Tuple[Finding, ...]:
    """The findings that concern the targets with their fix markers, decided first and in their order (the
    order ``--fix`` names generated code in); with ``everything``, the others too (for results kept for any
    later run), else left out."""
    decided = {id(finding): _decided(fixability, finding) for finding in findings if plan.reports(finding)}
    return tuple(
        decided[id(finding)] if id(finding) in decided else _decided(fixability, finding)
        for finding in findings
        if everything or id(finding) in decided
    )


def _decided(fixability: Fixability, finding: Finding) -> Finding:
    """The finding with its fix marker: kept when its subject can be fixed (unsafe, and why, when the fix would
    change what the program does beyond repairing tool arguments), else none (and the reason why)."""
    if finding.subject is None:
        return finding
    decision = fixability.decide(finding.subject)
    for also in finding.also_fixes:  # decided now, in the order found, as --fix applies them
        fixability.decide(also)
    if decision.fix is not None:
        if decision.unsafe and finding.applicability is Applicability.SAFE:
            return replace(finding, fix_help=unsafe_fix_help(decision.unsafe), applicability=Applicability.UNSAFE)
        return finding
    return replace(finding, fix_help=no_fix_help(decision.reason), applicability=Applicability.NONE)
