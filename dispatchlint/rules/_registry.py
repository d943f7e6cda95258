"""Which rules exist and which run by default, by code: the one table that choosing a run's rules reads, apart
from the rule classes so that choosing loads none of them; and a rule's documentation as plain data, which the
results cache keeps so that a run answered from it reports the rules without loading them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, NamedTuple


class RuleEntry(NamedTuple):
    #: The module of this package that holds the rule.
    module: str
    #: Enabled without ``--select``.
    default: bool


#: Every rule by code, in code order.
RULES: Dict[str, RuleEntry] = {
    "DL001": RuleEntry("dl001_parse_error", default=True),
    "DL002": RuleEntry("dl002_unused_suppression", default=False),
    "DL003": RuleEntry("dl003_missing_gate", default=True),
    "DL101": RuleEntry("dl101_unguarded_dispatch", default=True),
    "DL102": RuleEntry("dl102_ungated_tools", default=False),
    "DL201": RuleEntry("dl201_handrolled_json_parse", default=True),
    "DL301": RuleEntry("dl301_coerce_before_unrename", default=True),
    "DL401": RuleEntry("dl401_schemaless_executor", default=False),
}


@dataclass(frozen=True)
class RulePage:
    """A rule's documentation, read from its class (see :func:`dispatchlint.rules.rule_pages`)."""

    code: str
    name: str
    #: The class's docstring, cleaned: Markdown, written like Ruff's rule pages.
    documentation: str
