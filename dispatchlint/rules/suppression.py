"""Which findings the project's suppression comments hide, and which comments hide nothing.

A code in a suppression is a rule code or a prefix of codes (``DL1``); a suppression without codes covers every
rule. Every use is recorded, so that an opt-in rule can report the suppressions (or the codes of one) that hid
nothing, and the codes that name no rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from dispatchlint.discovery.files import PathMatcher
from dispatchlint.locations import Suppression, SuppressionScope

if TYPE_CHECKING:  # the rules import this module: DL002 judges what it records
    from dispatchlint.indexing.facts import ModuleFacts
    from dispatchlint.findings import Finding

#: A use of a suppression: the file, the suppression, and the code that hid a finding (None: a bare one).
_Use = Tuple[str, Suppression, Optional[str]]


def covers(selector: str, code: str) -> bool:
    """Whether a code or prefix as written in a suppression (or ``per-file-ignores``) covers ``code``."""
    return code.startswith(selector.upper())


class PerFileIgnores:
    """``per-file-ignores``: rule codes (or prefixes, or ``ALL``) not reported in the files a pattern matches."""

    def __init__(self, table: Sequence[Tuple[str, Sequence[str]]]) -> None:
        self._rules = [(PathMatcher([pattern]), tuple(codes)) for pattern, codes in table]

    def ignores(self, finding: "Finding") -> bool:
        return any(
            matcher.matches(finding.path) and any(c.upper() == "ALL" or covers(c, finding.code) for c in codes)
            for matcher, codes in self._rules
        )


@dataclass(frozen=True)
class IdleSuppression:
    """A suppression, or one code of it, that hid nothing in this run, or that names no rule."""

    path: str
    suppression: Suppression
    #: The code as written; None: the suppression has no codes.
    code: Optional[str]
    #: The code names no rule at all (a typo such as ``DL1O1``).
    unknown: bool


class SuppressionIndex:
    """The suppressions of every module, by file and line, with the uses recorded as findings are matched."""

    def __init__(self, modules: Sequence[ModuleFacts], known_codes: Iterable[str]) -> None:
        self._known = tuple(known_codes)
        self._modules = {module.path: module for module in modules}
        self._lines: Dict[str, Dict[int, List[Suppression]]] = {}
        for module in modules:
            for suppression in module.suppressions:
                if suppression.scope == SuppressionScope.LINE:
                    self._lines.setdefault(module.path, {}).setdefault(suppression.span.line, []).append(suppression)
        self._used: Set[_Use] = set()

    def hides(self, finding: Finding, lines: bool = True) -> bool:
        """Whether a suppression covers ``finding`` (the file's, then, with ``lines``, its first line's); every
        suppression that covers it is recorded as used."""
        module = self._modules.get(finding.path)
        if module is None:
            return False
        candidates = [s for s in module.suppressions if s.scope == SuppressionScope.FILE]
        if lines:
            candidates += self._lines.get(finding.path, {}).get(finding.span.line, [])
        hidden = False
        for suppression in candidates:
            for use in self._matches(finding, suppression):
                self._used.add(use)
                hidden = True
        return hidden

    def _matches(self, finding: Finding, suppression: Suppression) -> List[_Use]:
        if not suppression.codes:
            return [(finding.path, suppression, None)]
        return [(finding.path, suppression, code) for code in suppression.codes if covers(code, finding.code)]

    def unknown_codes(self) -> List[IdleSuppression]:
        """Codes that no rule code starts with, in file and line order."""
        return [item for item in self.idle() if item.unknown]

    def idle(self) -> List[IdleSuppression]:
        """Codes (and bare suppressions) that hid no finding, and unknown codes, in file and line order. A bare
        ``# noqa`` is another linter's too and is never judged."""
        found = []
        for path in sorted(self._modules):
            for suppression in self._modules[path].suppressions:
                if not suppression.codes:
                    if not suppression.noqa and (path, suppression, None) not in self._used:
                        found.append(IdleSuppression(path, suppression, None, False))
                    continue
                for code in suppression.codes:
                    unknown = not any(covers(code, known) for known in self._known)
                    if unknown or (path, suppression, code) not in self._used:
                        found.append(IdleSuppression(path, suppression, code, unknown))
        return found
