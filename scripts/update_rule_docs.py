"""Regenerate ``docs/rules.md`` from the rule classes: ``python scripts/update_rule_docs.py``."""

from pathlib import Path

from dispatchlint.report.reference import render_reference

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
    target.write_text(render_reference(), encoding="utf-8")
    print(f"wrote {target}")
