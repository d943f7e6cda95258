"""The large module that ``bench/large_module.py`` times is analysed like its parts: a module of several units
has exactly the findings of each unit alone, moved to where the unit sits. What the benchmark measures is the
analysis finding what it should, not an analysis that gave up on a large file (how long it takes is the
benchmark's to say, not a test's)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Set, Tuple

from conftest import REPO

_SPEC = importlib.util.spec_from_file_location("large_module", REPO / "bench" / "large_module.py")
assert _SPEC is not None and _SPEC.loader is not None
large_module = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(large_module)

Finding = Tuple[str, int, int, str]


def _findings(run_cli, root: Path, source: str, moved_by: int = 0) -> Set[Finding]:
    """(code, line, column, message) of each finding in a project of one module, lines moved by ``moved_by``."""
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "large"\n', encoding="utf-8")
    (root / "large.py").write_text(source, encoding="utf-8")
    result = run_cli(root, "--output-format", "json")
    assert result.exit_code == 1, result.stderr

    def moved(match: re.Match) -> str:  # "line 12", "large.py:12" in a message
        return f"{match.group(1)}{int(match.group(2)) + moved_by}"

    return {
        (f["code"], f["line"] + moved_by, f["column"], re.sub(r"(line |large\.py:)(\d+)", moved, f["message"]))
        for f in result.findings()
    }


def test_a_module_of_units_has_the_findings_of_each_unit_alone(run_cli, tmp_path: Path) -> None:
    units = 3
    unit_lines = large_module.module_source(1).count("\n") - large_module.module_source(0).count("\n")
    whole = _findings(run_cli, tmp_path / "whole", large_module.module_source(units))
    parts: Set[Finding] = set()
    for number in range(units):
        alone = large_module.module_source(1, first=number)
        parts |= _findings(run_cli, tmp_path / f"unit{number}", alone, moved_by=number * unit_lines)
    assert whole == parts
    assert {code for code, *_ in whole} == {"DL101", "DL201"} and len(whole) == units * 5
