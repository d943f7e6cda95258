"""Which findings' subjects can be fixed, decided once per run from the linked project's facts and shapes.

The engine asks here for the findings it reports, and only for those; ``--fix`` and ``--diff`` apply the very
decisions the check made. Nothing is parsed: what a decision needs to know about the code (signatures, how a
table's definition is written, which statement a parse can lose) was recorded at index time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import AbstractSet, Callable, Dict, Mapping, Optional, Set, Tuple, Union

from dispatchlint.indexing.facts import Span
from dispatchlint.linking import ChainSite, LinkedTable, Project
from dispatchlint.findings import FixSubject, SubjectKind
from dispatchlint.fix._chains import ChainFix, ClosureFix, chain_fix, closure_fix, outermost_chain
from dispatchlint.fix._context import Context
from dispatchlint.fix._effects import with_chain_effects, with_closure_effects, with_effects
from dispatchlint.fix._parses import parse_fix
from dispatchlint.fix._tables import ParseFix
from dispatchlint.fix._reorder import ReorderFix, reorder_fix
from dispatchlint.fix._retarget import RetargetFix, retarget_fix, wrapped_rebuild
from dispatchlint.fix._tables import TableFix, table_fix

Fix = Union[TableFix, ChainFix, ClosureFix, ParseFix, ReorderFix, RetargetFix]
_Maker = Callable[[], Union[Fix, str]]


@dataclass(frozen=True)
class Decision:
    """Whether a subject has a fix; when it has none, ``reason`` says why (for the finding's message)."""

    fix: Optional[Fix]
    reason: str = ""

    @property
    def unsafe(self) -> str:
        """Why applying the fix would change what the program does beyond repairing tool arguments ('' when it
        would not): a wrap's own reason, or that of a wrap a deletion needs."""
        if isinstance(self.fix, (TableFix, ChainFix, ClosureFix)):
            return self.fix.unsafe
        if isinstance(self.fix, ParseFix):
            return next((t.unsafe for t in self.fix.requires if isinstance(t, TableFix) and t.unsafe), "")
        return ""


#: Sites with nothing a fix could wrap, and what to do instead.
NOTHING_TO_WRAP = {
    SubjectKind.TOOL_OBJECT: "the tools are objects whose method runs them; repair the arguments before the call",
    SubjectKind.NO_TABLE: "the site reads no table the fix can wrap",
}


class Fixability:
    """The decisions of one run, each made once per subject (a table read at two sites is one fix)."""

    def __init__(
        self,
        project: Project,
        contents: Optional[Mapping[Path, bytes]] = None,
        suppressed_tables: AbstractSet[str] = frozenset(),
    ) -> None:
        self.context = Context(project)
        #: Tables (qualified) whose every finding the project suppressed or ignored: no fix wraps them.
        self.suppressed_tables = suppressed_tables
        #: Files' bytes not yet on disk (an earlier pass of one ``--fix``, stdin), by absolute path: the fixes
        #: rewrite these.
        self.contents: Mapping[Path, bytes] = contents or {}
        self._decisions: Dict[Tuple[str, str, Span, str], Decision] = {}
        #: The subjects being decided now (a decision that needs another one being decided is refused).
        self._deciding: Set[Tuple[str, str, Span, str]] = set()
        self._chain_sites: Optional[Dict[Tuple[str, Span], ChainSite]] = None

    @property
    def project(self) -> Project:
        return self.context.project

    def decide(self, subject: FixSubject) -> Decision:
        if subject.kind is SubjectKind.TABLE:
            table = self.project.catalog.tables.get(subject.name)
            return self.table(table) if table is not None else Decision(None, "the table cannot be found")
        if subject.kind is SubjectKind.CHAIN:
            return self._chain(subject)
        if subject.kind is SubjectKind.LATER_CLOSURE:
            return self._closures(subject)
        if subject.kind in NOTHING_TO_WRAP:
            return Decision(None, NOTHING_TO_WRAP[subject.kind])
        module = self.context.module(subject.path)
        if module is None:
            return Decision(None, "the file is not part of the analysis")
        if subject.kind is SubjectKind.PARSE:
            parse = next((p for p in module.json_parses if p.span == subject.span), None)
            if parse is None:
                return Decision(None, "the parsing cannot be found")
            tools = self.project.dispatches.executor_tools().get(f"{module.module}.{parse.function}", set())
            return self._decided(subject, lambda: parse_fix(self.context, module, parse, tools, self._table_fix))
        function = next((f for f in module.functions if f.span == subject.span), None)
        if function is None:
            return Decision(None, "the gate cannot be found")
        return self._decided(subject, lambda: reorder_fix(self.context, module, function))

    def table(self, table: LinkedTable) -> Decision:
        subject = FixSubject(SubjectKind.TABLE, table.module.path, table.definition.span, table.qualname)

        def decide() -> Union[Fix, str]:
            if table.qualname in self.suppressed_tables:
                return f"every finding at the dispatch sites of `{table.display_name}` is suppressed"
            wrapped = wrapped_rebuild(self.context, table)
            if wrapped is not None:  # already the raw half of a wrap: its readers read the wrapped table
                return retarget_fix(self.context, table, wrapped)
            fix = table_fix(self.context, table)
            return with_effects(self.context, fix, self._table_fix) if isinstance(fix, TableFix) else fix

        return self._decided(subject, decide)

    def _table_fix(self, table: LinkedTable) -> Union[TableFix, RetargetFix, str]:
        decision = self.table(table)
        return decision.fix if isinstance(decision.fix, (TableFix, RetargetFix)) else decision.reason

    def _chain_site(self, subject: FixSubject) -> Optional[ChainSite]:
        if self._chain_sites is None:
            self._chain_sites = {(s.module.path, s.span): s for s in self.project.sites if isinstance(s, ChainSite)}
        return self._chain_sites.get((subject.path, subject.span))

    def _chain(self, subject: FixSubject) -> Decision:
        """Chains of one if/elif ladder share one fix: a coercion ahead of the ladder serves every arm."""
        site = self._chain_site(subject)
        if site is None:
            return Decision(None, "the chain cannot be found")
        chain = outermost_chain(site.module, site.chain)
        ladder = self.context.shapes(site.module).ladders.get(chain.span)
        key = FixSubject(SubjectKind.CHAIN, site.module.path, ladder.span if ladder is not None else chain.span, "")

        def decide() -> Union[Fix, str]:
            fix = chain_fix(self.context, site, chain)
            return with_chain_effects(self.context, fix, chain) if isinstance(fix, ChainFix) else fix

        return self._decided(key, decide)

    def _closures(self, subject: FixSubject) -> Decision:
        """An arm binding closures run later has a fix of its own: its closures repair what they are handed."""
        site = self._chain_site(subject)
        if site is None:
            return Decision(None, "the chain cannot be found")

        def decide() -> Union[Fix, str]:
            fix = closure_fix(self.context, site)
            return with_closure_effects(self.context, fix) if isinstance(fix, ClosureFix) else fix

        return self._decided(subject, decide)

    def _decided(self, subject: FixSubject, make: _Maker) -> Decision:
        key = (subject.kind.value, subject.path, subject.span, subject.name)
        decision = self._decisions.get(key)
        if decision is None:
            if key in self._deciding:  # two tables holding one executor, each wrap deleting its parse
                return Decision(None, "its fix and another one each wait for the other")
            self._deciding.add(key)
            try:
                found = make()
            except Exception as error:  # noqa: BLE001 - a fix that cannot be decided must not stop the lint run
                found = f"the fix could not be planned ({type(error).__name__}: {error}); please report it"
            finally:
                self._deciding.discard(key)
            decision = self._decisions[key] = Decision(None, found) if isinstance(found, str) else Decision(found)
        return decision
