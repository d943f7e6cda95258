"""What a check reports: findings, the places they refer to, and what their fix would rewrite.

A rule says what it found and, as data, what a fix would rewrite (the finding's subject: a table, a name-test
chain, a hand-rolled parse, a gate) and how safe that fix is. It never plans the fix: the engine decides, for the
findings it reports and only for those, whether each subject can be fixed, from facts recorded when the files
were indexed. Output formats read this module only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional, Tuple

from dispatchlint.locations import Location, Span


class Applicability(str, Enum):
    """How safe a finding's fix is, as Ruff rates fixes: ``--fix`` applies safe ones, ``--unsafe-fixes`` adds
    unsafe ones; a finding with no fix has none."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NONE = "none"


class SubjectKind(str, Enum):
    """What a fix rewrites."""

    #: Wrap the table (``name``: its qualified name) where it is defined and where values enter it.
    TABLE = "table"
    #: Coerce the arguments once ahead of the if/elif ladder the name-test chain arm at ``span`` belongs to.
    CHAIN = "chain"
    #: Delete the hand-rolled parse at ``span``.
    PARSE = "parse"
    #: Restore sanitized names first in the gate whose name is at ``span``.
    GATE = "gate"
    #: The site at ``span`` runs a method of a tool object: there is no table to wrap.
    TOOL_OBJECT = "tool-object"
    #: The arm of a name-test chain at ``span`` binds a closure that runs later, not the tool.
    LATER_CLOSURE = "later-closure"
    #: The site at ``span`` runs a tool found in no table the fix can wrap.
    NO_TABLE = "no-table"


@dataclass(frozen=True)
class FixSubject:
    """The code a finding's fix rewrites, by where it is (``path`` relative to the project root)."""

    kind: SubjectKind
    path: str
    span: Span
    name: str = ""


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    message: str
    path: str
    span: Span
    related: Tuple[Location, ...] = ()
    #: How the model's arguments reach the place reported: the source, each hop, the sink (DL101).
    trace: Tuple[Location, ...] = ()
    #: What the fix rewrites; None when the rule knows there is no fix.
    subject: Optional[FixSubject] = None
    #: How safe the fix is. The rule rates the fix of its subject; the engine sets NONE when the subject turns
    #: out to have no fix.
    applicability: Applicability = Applicability.NONE
    #: Other subjects the fix takes along where they can be fixed: the other tables one call may read (a resolver
    #: that returns an entry of one of several tables is one finding).
    also_fixes: Tuple[FixSubject, ...] = ()
    #: Why there is no automatic fix, or why the fix waits for ``--unsafe-fixes``: a line of its own under the
    #: message (``help: no automatic fix: ...``), as Ruff prints it; empty when the fix is safe or not asked.
    fix_help: str = ""

    @property
    def fixable(self) -> bool:
        return self.applicability is not Applicability.NONE

    @property
    def fix_safety(self) -> Optional[str]:
        return self.applicability.value if self.fixable else None

    def sort_key(self) -> Tuple[str, int, int, str, str]:
        return (self.path, self.span.line, self.span.column, self.code, self.message)


def no_fix_help(reason: str) -> str:
    """The help line of a finding that has no automatic fix."""
    return f"no automatic fix: {reason}"


def unsafe_fix_help(reason: str) -> str:
    """The help line of a finding whose fix waits for ``--unsafe-fixes``."""
    return f"unsafe fix: {reason}"


def with_help(finding: Finding) -> str:
    """The message and its help line in one text, for formats that carry a single message (SARIF, GitHub
    annotations, editor diagnostics)."""
    return f"{finding.message}\nhelp: {finding.fix_help}" if finding.fix_help else finding.message


__all__ = [
    "Applicability",
    "Finding",
    "FixSubject",
    "SubjectKind",
    "no_fix_help",
    "unsafe_fix_help",
    "with_help",
]
