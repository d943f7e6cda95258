"""The rules. Importing this package registers every rule (one module each)."""

from dispatchlint.rules import (  # noqa: F401  (imported for registration)
    dl001_parse_error,
    dl002_unused_suppression,
    dl101_unguarded_dispatch,
    dl102_ungated_tools,
    dl201_handrolled_json_parse,
    dl301_coerce_before_unrename,
    dl401_schemaless_executor,
)
from dispatchlint.rules._base import Case, Finding, Related, Rule

__all__ = ["Case", "Finding", "Related", "Rule", "all_rules"]


def all_rules() -> "dict[str, type[Rule]]":
    """Every rule class by code, sorted."""
    return dict(sorted(Rule.registry.items()))
