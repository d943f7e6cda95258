"""Which findings can be fixed, and how: one decision per table, chain, parse and gate, made once per project.

Rules ask here whether their finding is fixable (and append the reason when it is not); the fix command asks
again for the findings it applies, and gets the very same decision objects. The project's root is bound by the
engine when it builds the project, because deciding needs the source (signatures, statement shapes) and not only
the facts.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Tuple, Union

from dispatchlint.analysis.facts import FunctionDef, JsonParse, ModuleFacts, NameChain
from dispatchlint.analysis.link import LinkedTable, Project, Site
from dispatchlint.fix._chains import ChainFix, chain_fix, ladder_statement
from dispatchlint.fix._parses import ParseFix, parse_fix
from dispatchlint.fix._reorder import ReorderFix, reorder_fix
from dispatchlint.fix._source import FixError, Sources
from dispatchlint.fix._tables import TableFix, table_fix

Fix = Union[TableFix, ChainFix, ParseFix, ReorderFix]


@dataclass(frozen=True)
class Decision:
    """Whether a finding has a fix; when it has none, ``reason`` says why (for the finding's message)."""

    fix: Optional[Fix]
    reason: str = ""

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def safety(self, when_fixable: str) -> Optional[str]:
        """The fix's safety for the finding (``SAFE`` or ``UNSAFE`` as the rule rates it), None without a fix."""
        return when_fixable if self.fix is not None else None

    def explained(self, message: str) -> str:
        """``message``, saying why there is no automatic fix when there is none."""
        return message if self.fix is not None else f"{message} (no automatic fix: {self.reason})"


@dataclass
class _State:
    sources: Sources
    decisions: Dict[Tuple[str, int], Decision] = field(default_factory=dict)


_STATES: "weakref.WeakKeyDictionary[Project, _State]" = weakref.WeakKeyDictionary()
_UNBOUND = Decision(None, "the project's files are not available to the fix")


def bind(project: Project, root: Path, contents: Optional[Mapping[Path, bytes]] = None) -> None:
    """Let fixes read the project's files (under ``root``, or in ``contents``); called once per analysis run."""
    _STATES[project] = _State(Sources(root, contents))


def sources_of(project: Project) -> Optional[Sources]:
    state = _STATES.get(project)
    return state.sources if state is not None else None


def _decide(project: Project, kind: str, subject: object, make: Callable[[Sources], Union[Fix, str]]) -> Decision:
    state = _STATES.get(project)
    if state is None:
        return _UNBOUND
    key = (kind, id(subject))
    decision = state.decisions.get(key)
    if decision is None:
        try:
            found = make(state.sources)
        except FixError as error:
            found = str(error)
        except Exception as error:  # noqa: BLE001 - a fix that cannot be planned must not stop the lint run
            found = f"the fix could not be planned ({type(error).__name__}: {error}); please report it"
        decision = state.decisions[key] = Decision(None, found) if isinstance(found, str) else Decision(found)
    return decision


def table_decision(project: Project, table: LinkedTable) -> Decision:
    return _decide(project, "table", table, lambda sources: table_fix(project, sources, table))


def site_decision(project: Project, site: Site) -> Decision:
    """A dispatch site is fixed by wrapping its table; a chain arm by coercing ahead of its chain."""
    if site.reaches_past:
        return Decision(None, "the call reaches past the tool object's own entry; call the tool through it")
    if site.method:
        return Decision(None, "the tools are objects whose method runs them; repair the arguments before the call")
    if site.arm is not None and site.arm.closures:
        return Decision(None, "the arms bind closures that run later; repair the arguments where they are handed on")
    if site.chain is not None:
        chain = _outermost(site.module, site.chain)
        state = _STATES.get(project)
        try:
            statement = ladder_statement(state.sources, site, chain) if state is not None else None
        except FixError:
            statement = None  # the file cannot be read: the decision says why
        return _decide(project, "chain", statement or chain, lambda sources: chain_fix(project, sources, site, chain))
    if site.table is None:
        return Decision(None, "the site reads no table the fix can wrap")
    return table_decision(project, site.table)


def _outermost(module: ModuleFacts, chain: NameChain) -> NameChain:
    """The chain that starts the if/elif ladder this chain's arms belong to (one coercion serves them all)."""
    first = chain.arms[0].span
    ladder = [
        other
        for other in module.chains
        if other.function == chain.function
        and other.variable == chain.variable
        and any(arm.span == first for arm in other.arms)
    ]
    return min(ladder, key=lambda other: (other.span.line, other.span.column))


def parse_decision(project: Project, module: ModuleFacts, parse: JsonParse) -> Decision:
    """Whether the hand-rolled parse can go: the tools its function serves must all be repaired on every path."""
    tools = project.dispatches.executor_tools().get(f"{module.module}.{parse.function}", set())

    def table_fix_or_reason(table: LinkedTable) -> Union[TableFix, str]:
        decision = table_decision(project, table)
        return decision.fix if isinstance(decision.fix, TableFix) else decision.reason

    return _decide(
        project, "parse", parse, lambda sources: parse_fix(project, sources, module, parse, tools, table_fix_or_reason)
    )


def gate_decision(project: Project, module: ModuleFacts, function: FunctionDef) -> Decision:
    return _decide(project, "gate", function, lambda sources: reorder_fix(project, sources, module, function))
