"""Turn the findings a run chose to fix into new file contents (nothing is written here).

Each chosen finding carries its subject; the run's decision for that subject (the one that set the finding's
marker) is applied, in the order the rules reported them. Fixes that several findings share (one table read at
two sites) are applied once; a fix that needs another (deleting a parse needs its table wrapped) brings it along.
Only here are files parsed: the ones the fixes rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Sequence, Set, Tuple, Union

from dispatchlint.findings import Finding, FixSubject
from dispatchlint.fix._dependency import runtime_dependency
from dispatchlint.fix._edits import apply_fix
from dispatchlint.fix._fixable import Fix, Fixability
from dispatchlint.fix._tables import ParseFix
from dispatchlint.fix._apply import ProjectPlan
from dispatchlint.fix._tables import TableFix
from dispatchlint.fix._source import FixError, Sources


@dataclass(frozen=True)
class FixOutcome:
    """New contents for every file the fixes change, and what each file's rewrite does."""

    #: Absolute path -> (bytes before, bytes after).
    changes: Dict[Path, Tuple[bytes, bytes]]
    #: Absolute path -> one line per kind of rewrite in that file.
    notes: Dict[Path, List[str]]
    #: What the user must do by hand (declare the dependency the fix created, where the project keeps none).
    advice: List[str]


def plan_fixes(fixability: Fixability, root: Path, findings: Sequence[Finding], unsafe: bool) -> FixOutcome:
    """Rewrite the project under ``root`` so that ``findings`` are fixed; raise ``FixError`` if it cannot.
    ``unsafe``: apply unsafe fixes the findings take along too (another table one call reads)."""
    return _plan(fixability, root, _subjects(findings), Sources(root, fixability.contents), unsafe)


class FixPreview:
    """What ``--fix`` would change for each finding alone (the machine formats' edits; with ``unsafe`` False, the
    safe fixes only, as a plain ``--fix`` would): each file is parsed once and each set of fix subjects planned
    once, however many findings share them (the sites of one table)."""

    def __init__(self, fixability: Fixability, root: Path, unsafe: bool = True) -> None:
        self._fixability = fixability
        self._root = root
        self._unsafe = unsafe
        self._sources = Sources(root, fixability.contents)  # a plan never changes the trees it reads
        self._planned: Dict[FrozenSet[FixSubject], Union[FixOutcome, FixError]] = {}

    def changes(self, finding: Finding) -> Dict[Path, Tuple[bytes, bytes]]:
        """The files that fixing ``finding`` alone changes (raise ``FixError`` if it cannot be fixed)."""
        subjects = _subjects([finding])
        outcome = self._planned.get(subjects)
        if outcome is None:
            try:
                outcome = _plan(self._fixability, self._root, subjects, self._sources, self._unsafe)
            except FixError as error:
                outcome = error
            self._planned[subjects] = outcome
        if isinstance(outcome, FixError):
            raise outcome
        return outcome.changes


def _subjects(findings: Sequence[Finding]) -> FrozenSet[FixSubject]:
    return frozenset(
        subject
        for finding in findings
        if finding.subject is not None and finding.fixable
        for subject in (finding.subject, *finding.also_fixes)
    )


def _plan(
    fixability: Fixability, root: Path, subjects: FrozenSet[FixSubject], sources: Sources, unsafe: bool
) -> FixOutcome:
    fixes = []
    for subject in sorted(subjects, key=_where):
        decision = fixability.decide(subject)
        if decision.fix is not None and (unsafe or not decision.unsafe):
            fixes.append(decision.fix)
    plan = ProjectPlan(fixability.project, sources)
    applied: Set[Tuple[str, object]] = set()
    for fix in _with_requirements(fixes):
        key = _key(fix)
        if key not in applied:
            applied.add(key)
            try:
                apply_fix(plan, fix)
            except FixError:
                raise
            except Exception as error:  # noqa: BLE001 - a bug of ours: named with its stage, nothing is written
                raise FixError(
                    f"internal error while applying a {type(fix).__name__} in {root} "
                    f"({type(error).__name__}: {error}); no file was changed; please report it"
                ) from error
    rendered = plan.render()
    changes = {root / path: contents for path, contents in rendered.items()}
    notes = {root / path: plan.files[path].notes for path in rendered}
    advice = []
    if any(plan.files[path].imports_runtime for path in rendered):
        dependency = runtime_dependency(root, sources.contents)
        if dependency is not None and dependency.path is not None:
            changes[dependency.path] = (dependency.old, dependency.new)
            notes[dependency.path] = [dependency.note]
        elif dependency is not None:
            advice.append(dependency.note)
    return FixOutcome(changes, notes, advice)


def _with_requirements(fixes: Sequence[Fix]) -> Iterator[Fix]:
    """Each fix after the ones it needs: a deletion after the wraps it needs, a wrap after the deletions it takes
    along (and theirs)."""
    for fix in fixes:
        if isinstance(fix, ParseFix):
            yield from _with_requirements(fix.requires)
        elif isinstance(fix, TableFix):
            yield from _with_requirements(fix.deletes)
        yield fix


def _key(fix: Fix) -> Tuple[str, object]:
    """What identifies a fix however many decisions hold it: a parse by its place (a wrap deleting it and its own
    finding's fix are one deletion), any other fix by itself."""
    if isinstance(fix, ParseFix):
        return ("parse", (fix.module.path, fix.parse.span))
    return ("fix", id(fix))


def _where(subject: FixSubject) -> Tuple[str, int, int, str, str]:
    """The order fixes are applied in: by where their code is, so that the names the generated code takes
    (``_coerced``, ``_coerced_2``) depend on the code alone, never on the order the rules reported it."""
    return (subject.path, subject.span.line, subject.span.column, subject.kind.value, subject.name)

