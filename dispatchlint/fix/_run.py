"""Turn the findings a run chose to fix into new file contents (nothing is written here).

Each chosen finding is traced back to the object it was reported for (a dispatch site, a table, a parse, a gate)
and that object's decision, the one the rule made when it reported the finding. Fixes that several findings
share (one table read at two sites) are applied once; a fix that needs another (deleting a parse needs its table
wrapped) brings it along.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterator, List, Sequence, Set, Tuple

from dispatchlint.analysis.facts import ModuleFacts, Span
from dispatchlint.analysis.link import Project
from dispatchlint.fix._decide import (
    Decision,
    Fix,
    gate_decision,
    parse_decision,
    site_decision,
    sources_of,
    table_decision,
)
from dispatchlint.fix._parses import ParseFix
from dispatchlint.fix._plan import ProjectPlan
from dispatchlint.fix._source import FixError

if TYPE_CHECKING:  # the engine imports the rules, which import this package
    from dispatchlint.engine import RunResult
    from dispatchlint.rules import Finding

_Location = Tuple[str, Path, int, int]


@dataclass(frozen=True)
class FixOutcome:
    """New contents for every file the fixes change, and what each file's rewrite does."""

    #: Absolute path -> (bytes before, bytes after).
    changes: Dict[Path, Tuple[bytes, bytes]]
    #: Absolute path -> one line per kind of rewrite in that file.
    notes: Dict[Path, List[str]]


def plan_fixes(result: "RunResult", findings: Sequence["Finding"], cwd: Path) -> FixOutcome:
    """Rewrite the project so that ``findings`` (of ``result``) are fixed; raise :class:`FixError` if it cannot."""
    project = result.project
    sources = sources_of(project)
    if sources is None:
        raise FixError("the project was analysed without its files; nothing can be fixed")
    wanted = {(f.code, (cwd / f.path).resolve(), f.span.line, f.span.column) for f in findings if f.fixable}
    fixes = [decision.fix for decision in _decisions(project, result.root, wanted) if decision.fix is not None]
    plan = ProjectPlan(project, sources)
    applied = set()
    for fix in _with_requirements(fixes):
        if id(fix) not in applied:
            applied.add(id(fix))
            try:
                fix.apply(plan)
            except FixError:
                raise
            except Exception as error:  # noqa: BLE001 - a bug of ours: named with its stage, nothing is written
                raise FixError(
                    f"internal error while applying a {type(fix).__name__} in {result.root} "
                    f"({type(error).__name__}: {error}); no file was changed; please report it"
                ) from error
    rendered = plan.render()
    root = result.root
    return FixOutcome(
        {root / path: contents for path, contents in rendered.items()},
        {root / path: plan.files[path].notes for path in rendered},
    )


def _decisions(project: Project, root: Path, wanted: Set[_Location]) -> Iterator[Decision]:
    """The decision for each object whose finding (at its reported location) is ``wanted``."""

    def chosen(code: str, module: ModuleFacts, span: Span) -> bool:
        return (code, (root / module.path).resolve(), span.line, span.column) in wanted

    for site in project.sites:
        bypasses = [chosen("DL101", module, call.span) for module, call in site.bypasses]
        if chosen("DL101", site.module, site.span) or any(bypasses):
            yield site_decision(project, site)
        if site.table is not None and chosen("DL102", site.module, site.span):
            yield table_decision(project, site.table)
    for module in project.modules:
        for parse in module.json_parses:
            if chosen("DL201", module, parse.span):
                yield parse_decision(project, module, parse)
    for module, function in project.gates.gate_locations(top_level_only=True):
        if chosen("DL301", module, function.span):
            yield gate_decision(project, module, function)


def _with_requirements(fixes: Sequence[Fix]) -> Iterator[Fix]:
    for fix in fixes:
        if isinstance(fix, ParseFix):
            yield from fix.requires
        yield fix
