"""The rules, one module each (``dl101_unguarded_dispatch``), each registered by subclassing ``Rule``.

Which rules exist and which run by default is this package's table, :data:`RULES`: choosing the rules of a run
reads it alone. A run answered from stored results needs only the codes it chose, never a rule's check (every
check reads the linked project): :func:`all_rules` imports the rule modules, and :func:`rule_pages` gives their
documentation as data, which the stored results keep for the reports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Dict, Tuple

from dispatchlint.rules._registry import RULES, RuleEntry, RulePage

if TYPE_CHECKING:
    from dispatchlint.rules.rule import Rule


def all_rules() -> "Dict[str, type[Rule]]":
    """Every rule class by code, in code order (importing each rule's module)."""
    from dispatchlint.rules.rule import Rule

    for entry in RULES.values():
        importlib.import_module(f"{__name__}.{entry.module}")
    return {code: Rule.registry[code] for code in RULES}


def rule_pages() -> Tuple[RulePage, ...]:
    """Every rule's documentation, in code order (importing each rule's module)."""
    return tuple(RulePage(code, rule.name, rule.documentation()) for code, rule in all_rules().items())


__all__ = ["RULES", "RuleEntry", "RulePage", "all_rules", "rule_pages"]
