"""The rule reference (``docs/rules.md``), generated from the rule classes so it cannot drift from them."""

from __future__ import annotations

import re
from typing import Dict, Sequence

from dispatchlint import __version__
from dispatchlint.report._payload import Level, RuleDoc
from dispatchlint.rules import RULES, RulePage, rule_pages


def render_reference() -> str:
    """Every rule's documentation, in code order, as one Markdown page."""
    rules = rule_pages()
    lines = [
        "# Rules",
        "",
        "Generated from the rule classes by `python scripts/update_rule_docs.py`; do not edit by hand.",
        "",
        "| code | name | default |",
        "|---|---|---|",
    ]
    for rule in rules:
        default = "on" if RULES[rule.code].default else f"opt-in (`--extend-select {rule.code}`)"
        lines.append(f"| [{rule.code}](#{_anchor(rule)}) | {rule.name} | {default} |")
    for rule in rules:
        sections = re.sub(r"^## ", "### ", rule.documentation, flags=re.MULTILINE)
        lines += ["", f"## {rule.code} {rule.name}", "", sections]
    return "\n".join(lines) + "\n"


#: The rule reference of this version, where each rule's documentation URL points.
REFERENCE_URL = f"https://github.com/dispatchlint/dispatchlint/blob/v{__version__}/docs/rules.md"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")


def _what_it_does(rule: RulePage) -> str:
    section = rule.documentation.split("## Why is this bad?")[0].replace("## What it does", "")
    return " ".join(section.split())


def rule_docs(pages: Sequence[RulePage]) -> Dict[str, RuleDoc]:
    """What the machine formats say about each rule of ``pages`` (:func:`dispatchlint.rules.rule_pages`, or the
    pages stored with a run's results): level, a one-sentence summary, the documentation, its URL."""
    docs = {}
    for rule in pages:
        description = _what_it_does(rule)
        sentences = [s for s in _SENTENCE_END.split(description) if not s.startswith("Opt-in")]
        default = RULES[rule.code].default
        docs[rule.code] = RuleDoc(
            code=rule.code,
            name=rule.name,
            default=default,
            level=Level.ERROR if default else Level.WARNING,
            summary=sentences[0] if sentences else f"Reports {rule.name}.",
            description=description,
            documentation=rule.documentation,
            url=f"{REFERENCE_URL}#{_anchor(rule)}",
        )
    return docs


def _anchor(rule: RulePage) -> str:
    return f"{rule.code.lower()}-{rule.name}"
