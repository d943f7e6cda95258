"""The rule reference (``docs/rules.md``), generated from the rule classes so it cannot drift from them."""

from __future__ import annotations

import re

from dispatchlint.rules._base import Rule


def render_reference() -> str:
    """Every rule's documentation, in code order, as one Markdown page."""
    rules = [Rule.registry[code] for code in sorted(Rule.registry)]
    lines = [
        "# Rules",
        "",
        "Generated from the rule classes by `python scripts/update_rule_docs.py`; do not edit by hand.",
        "",
        "| code | name | default |",
        "|---|---|---|",
    ]
    for rule in rules:
        default = "on" if rule.default else f"opt-in (`--select {rule.code}`)"
        lines.append(f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) | {rule.name} | {default} |")
    for rule in rules:
        sections = re.sub(r"^## ", "### ", rule.documentation(), flags=re.MULTILINE)
        lines += ["", f"## {rule.code} {rule.name}", "", sections]
    return "\n".join(lines) + "\n"
