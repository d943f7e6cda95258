"""What a rule is: a small class with a code, a name, documentation, examples and a ``check`` method.

Rules register themselves by subclassing :class:`Rule` (``__init_subclass__``); the test suite turns every rule's
``VALID`` and ``INVALID`` cases into tests, so a rule cannot ship without examples. A rule yields findings and
never plans a fix: it names the fix's subject (the table, the chain, the parse, the gate) and rates its safety,
and the engine decides which subjects can be fixed.
"""

from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass, field
from typing import ClassVar, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from dispatchlint.indexing.facts import ModuleFacts, Span
from dispatchlint.linking import LinkedTable, Project, Site, TableSite
from dispatchlint.linking.catalog import Catalog
from dispatchlint.findings import Applicability, Finding, FixSubject, SubjectKind
from dispatchlint.locations import Location
from dispatchlint.rules._registry import RULES


@dataclass(frozen=True)
class Case:
    """A rule example: a small project (path -> source) and the findings it must give as ``(path, line)``."""

    files: Mapping[str, str]
    findings: Tuple[Tuple[str, int], ...] = ()
    config: Mapping[str, object] = field(default_factory=dict)


class Rule:
    """Base class of every rule. Subclasses set the class attributes and implement :meth:`check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    #: Enabled without ``--select``: set from the rule's entry in the package's table (``RULES``).
    default: ClassVar[bool]
    VALID: ClassVar[List[Case]] = []
    INVALID: ClassVar[List[Case]] = []

    registry: ClassVar[Dict[str, "type[Rule]"]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.code in Rule.registry:
            raise TypeError(f"duplicate rule code {cls.code}")
        entry = RULES.get(cls.code)
        if entry is None or cls.__module__ != f"dispatchlint.rules.{entry.module}":
            raise TypeError(f"rule {cls.code} is not in dispatchlint.rules.RULES under its module {cls.__module__}")
        cls.default = entry.default
        Rule.registry[cls.code] = cls

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    def check(self, project: Project) -> Iterable[Finding]:
        raise NotImplementedError

    def finding(
        self,
        module: ModuleFacts,
        span: Span,
        message: str,
        related: Iterable[Location] = (),
        trace: Iterable[Location] = (),
        fix: Optional[FixSubject] = None,
        applicability: Applicability = Applicability.NONE,
        also_fixes: Iterable[FixSubject] = (),
    ) -> Finding:
        """A finding; ``fix`` is what its fix would rewrite, ``applicability`` how safe that fix would be."""
        return Finding(
            self.code,
            self.name,
            message,
            module.path,
            span,
            tuple(related),
            tuple(trace),
            fix,
            applicability if fix is not None else Applicability.NONE,
            also_fixes=tuple(subject for subject in dict.fromkeys(also_fixes) if subject != fix),
        )


def related(module: ModuleFacts, span: Span, message: str) -> Location:
    return Location(module.path, span, message)


def sites_by_location(project: Project) -> Dict[Tuple[str, Span], List[Site]]:
    """Every site by where it is (one call may read several tables: one site each)."""
    found: Dict[Tuple[str, Span], List[Site]] = {}
    for site in project.sites:
        found.setdefault((site.module.path, site.span), []).append(site)
    return found


def table_subject(table: LinkedTable) -> FixSubject:
    """The fix that wraps ``table`` where it is defined."""
    return FixSubject(SubjectKind.TABLE, table.module.path, table.definition.span, table.qualname)


__all__ = ["Case", "Finding", "Rule", "holder", "related", "sites_by_location", "table_subject"]


def holder(site: TableSite) -> str:
    """The tool object a site runs the stored function of: its class when known."""
    return f"the `{site.constructed}`" if site.constructed else "the tool object"


def resolved_tool(site: TableSite) -> str:
    """The tool a resolver returned for its name (``registry.get_tool(name)``, ``getattr(self, name)``)."""
    if site.resolver == "getattr":
        return f"the method `getattr` finds by `{site.key}`"
    return f"the tool `{site.resolver}({site.key})` returns"


#: The declared types a model's string can stand in for, most harmful first, and how the model sends each one.
_MISTYPED = {
    "integer": "as a string",
    "number": "as a string",
    "boolean": "as a string",
    "array": "as JSON text",
    "object": "as JSON text",
}


def mistyped_effect(project: Project, near: ModuleFacts, tools: Sequence[Tuple[Optional[str], str]]) -> Optional[str]:
    """The concrete effect, from the tools' own schemas as code of ``near`` sees them (see
    :meth:`Catalog.schemas_of`): ```limit` (integer) reaches `_recall` raw if sent as a string`` (the
    most harmful of the declared non-string parameters), said as what happens when: an example value would read
    like one observed. None when no schema says enough."""
    best: Optional[Tuple[int, str, str, str]] = None
    for key, shown in tools:
        found = _most_harmful(project, near, key or "")
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], found[1], key or "", shown)
    if best is None:
        return None
    rank, name, key, shown = best
    declared = _RANKS[rank]
    return f"`{name}` ({declared}) reaches {shown or f'tool `{key}`'} raw if sent {_MISTYPED[declared]}"


_RANKS = list(_MISTYPED)
#: Per linked project (its catalog), per part of the program and tool: the rank and name of the tool's most
#: harmful non-string parameter (a tool's schemas are read once, however many of its sites are reported).
_HARMFUL: "weakref.WeakKeyDictionary[Catalog, Dict[Tuple[int, str], Optional[Tuple[int, str]]]]" = (
    weakref.WeakKeyDictionary()
)


def _most_harmful(project: Project, near: ModuleFacts, key: str) -> Optional[Tuple[int, str]]:
    known = _HARMFUL.setdefault(project.catalog, {})
    asked = (project.graph.part_of(near), key)
    if asked not in known:
        best: Optional[Tuple[int, str]] = None
        for _, schema in project.catalog.schemas_of(key, near):
            for name, types in schema.properties:
                declared = [t for t in types if t in _MISTYPED]
                if not declared or "string" in types:
                    continue
                rank = min(_RANKS.index(t) for t in declared)
                if best is None or rank < best[0]:
                    best = (rank, name)
        known[asked] = best
    return known[asked]
