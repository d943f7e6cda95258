"""Every rule's VALID and INVALID cases, run through the real command (Fixit style)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from conftest import write_project
from dispatchlint.rules import all_rules
from dispatchlint.rules.rule import Case, Rule

CASES: List[Tuple[str, str, Case]] = [
    (code, kind, case)
    for code, rule in all_rules().items()
    for kind, cases in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for case in cases
]


@pytest.mark.parametrize(
    "code, kind, case", CASES, ids=[f"{code}-{kind}-{i}" for i, (code, kind, _) in enumerate(CASES)]
)
def test_rule_example(code: str, kind: str, case: Case, tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, dict(case.files), dict(case.config))
    result = run_cli(tmp_path, "--format", "json", "--select", code)
    found = sorted((f["path"], f["line"]) for f in result.findings() if f["code"] == code)
    assert found == sorted(case.findings)
    assert result.exit_code == (1 if case.findings else 0)


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_rule_is_documented_and_has_examples(code: str) -> None:
    rule = all_rules()[code]
    doc = rule.documentation()
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert section in doc, f"{code} lacks {section}"
    assert rule.VALID and rule.INVALID
    assert rule.name == rule.name.lower() and " " not in rule.name


def test_rule_codes_are_unique_and_stable() -> None:
    assert list(all_rules()) == ["DL001", "DL002", "DL003", "DL101", "DL102", "DL201", "DL301", "DL401"]
    assert all(issubclass(rule, Rule) for rule in all_rules().values())


def test_rule_reference_is_generated_from_the_rules() -> None:
    from conftest import REPO
    from dispatchlint.report.reference import render_reference

    written = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert written == render_reference(), "run `python scripts/update_rule_docs.py`"
