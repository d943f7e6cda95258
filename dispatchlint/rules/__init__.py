"""The rules, one module each (``dl101_unguarded_dispatch``), each registered by subclassing ``Rule``.

Which rules exist and which run by default is this package's table, :data:`RULES`: choosing the rules of a run
reads it alone. A run answered from stored results needs only the codes it chose, never a rule's check (every
check reads the linked project): :func:`all_rules` imports the rule modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Dict, NamedTuple

if TYPE_CHECKING:
    from dispatchlint.rules._base import Rule


class RuleEntry(NamedTuple):
    #: The module of this package that holds the rule.
    module: str
    #: Enabled without ``--select``.
    default: bool


#: Every rule by code, in code order.
RULES: Dict[str, RuleEntry] = {
    "DL001": RuleEntry("dl001_parse_error", default=True),
    "DL002": RuleEntry("dl002_unused_suppression", default=False),
    "DL101": RuleEntry("dl101_unguarded_dispatch", default=True),
    "DL102": RuleEntry("dl102_ungated_tools", default=False),
    "DL201": RuleEntry("dl201_handrolled_json_parse", default=True),
    "DL301": RuleEntry("dl301_coerce_before_unrename", default=True),
    "DL401": RuleEntry("dl401_schemaless_executor", default=False),
}


def all_rules() -> "Dict[str, type[Rule]]":
    """Every rule class by code, in code order (importing each rule's module)."""
    from dispatchlint.rules._base import Rule

    for entry in RULES.values():
        importlib.import_module(f"{__name__}.{entry.module}")
    return {code: Rule.registry[code] for code in RULES}


__all__ = ["RULES", "RuleEntry", "all_rules"]
