"""The rules, one module each (``dl101_unguarded_dispatch``), each registered by subclassing ``Rule``.

Which rules exist and which run by default is this package's table, :data:`RULES`: choosing the rules of a run
reads it alone. A run answered from stored results needs only the codes it chose, never a rule's check (every
check reads the linked project): :func:`all_rules` imports the rule modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Dict

from dispatchlint.rules._registry import RULES, RuleEntry

if TYPE_CHECKING:
    from dispatchlint.rules.rule import Rule


def all_rules() -> "Dict[str, type[Rule]]":
    """Every rule class by code, in code order (importing each rule's module)."""
    from dispatchlint.rules.rule import Rule

    for entry in RULES.values():
        importlib.import_module(f"{__name__}.{entry.module}")
    return {code: Rule.registry[code] for code in RULES}


__all__ = ["RULES", "RuleEntry", "all_rules"]
