"""The fix fixtures: which project each one fixes, with which arguments, and copying projects to work on."""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

from conftest import FIXTURES, read_expected


@dataclass(frozen=True)
class FixCase:
    """``before`` is fixed with ``args`` + ``--fix`` into the files under ``expected``; others stay as they are."""

    name: str
    before: Path
    expected: Path
    args: Tuple[str, ...]

    def expected_files(self) -> Dict[str, bytes]:
        return {path.relative_to(self.expected).as_posix(): path.read_bytes() for path in _python_files(self.expected)}


def fix_cases() -> List[FixCase]:
    """``fixtures/fix_NAME/expected_fixed``: the fix of the project beside it, or of ``fixtures/NAME`` when
    ``fix_NAME`` holds no project of its own (``fix_example`` is the fix of ``example``, see ``docs/defect.md``)."""
    cases = []
    for directory in sorted(FIXTURES.glob("fix_*")):
        before = directory if (directory / "expected.txt").is_file() else FIXTURES / directory.name[len("fix_") :]
        _, args = read_expected(before)
        cases.append(FixCase(directory.name, before, directory / "expected_fixed", tuple(args) + _fix_args(before)))
    return cases


def _fix_args(project: Path) -> Tuple[str, ...]:
    for line in (project / "expected.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("# fix-args:"):
            return tuple(shlex.split(line[len("# fix-args:") :]))
    return ()


def copy_project(source: Path, target: Path) -> Path:
    """A working copy of a fixture project, without its expected output."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("expected_fixed", "__pycache__"))
    return target


def python_sources(root: Path) -> Dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in _python_files(root)}


def _python_files(root: Path) -> List[Path]:
    """The project's Python files, and its ``pyproject.toml`` (where a fix declares the dependency it creates)."""
    found = [path for path in root.rglob("*.py") if "__pycache__" not in path.parts]
    return sorted(found + [path for path in [root / "pyproject.toml"] if path.is_file()])
