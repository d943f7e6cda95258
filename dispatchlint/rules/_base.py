"""What a rule is: a small class with a code, a name, documentation, examples and a ``check`` method.

Rules register themselves by subclassing :class:`Rule` (``__init_subclass__``); the test suite turns every rule's
``VALID`` and ``INVALID`` cases into tests, so a rule cannot ship without examples.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import ClassVar, Dict, Iterable, List, Mapping, Optional, Tuple

from dispatchlint.analysis.facts import Location, ModuleFacts, Span
from dispatchlint.analysis.link import Project

SAFE = "safe"
UNSAFE = "unsafe"


#: Another place a finding refers to (the table, the gate, the schema), or a step of its trace.
Related = Location


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    message: str
    path: str
    span: Span
    fixable: bool = False
    fix_safety: Optional[str] = None
    related: Tuple[Related, ...] = ()
    #: How the model's arguments reach the place reported: the source, each hop, the sink (DL101).
    trace: Tuple[Related, ...] = ()

    def sort_key(self) -> Tuple[str, int, int, str, str]:
        return (self.path, self.span.line, self.span.column, self.code, self.message)


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
    #: Enabled without ``--select``.
    default: ClassVar[bool] = True
    VALID: ClassVar[List[Case]] = []
    INVALID: ClassVar[List[Case]] = []

    registry: ClassVar[Dict[str, "type[Rule]"]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.code in Rule.registry:
            raise TypeError(f"duplicate rule code {cls.code}")
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
        related: Iterable[Related] = (),
        fixable: bool = False,
        fix_safety: Optional[str] = None,
        trace: Iterable[Related] = (),
    ) -> Finding:
        return Finding(
            self.code, self.name, message, module.path, span, fixable, fix_safety, tuple(related), tuple(trace)
        )


def related(module: ModuleFacts, span: Span, message: str) -> Related:
    return Related(module.path, span, message)
