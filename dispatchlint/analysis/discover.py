"""Find the project root and the Python files to analyse, honouring gitignore-style excludes."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Pattern, Sequence, Tuple

#: Folders that never hold the project's own agent code.
DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "node_modules",
    "site-packages",
    "build",
    "dist",
    ".mypy_cache",
    ".pytest_cache",
    ".dispatchlint_cache",
)


@dataclass(frozen=True)
class SourceFile:
    """A file to analyse: its absolute path, its path relative to the root, and its module name."""

    path: Path
    relative: str
    module: str
    is_package: bool


def find_root(paths: Sequence[Path]) -> Path:
    """The nearest folder above the (first) path holding ``pyproject.toml`` or ``.git``; else that folder."""
    start = (paths[0] if paths else Path.cwd()).resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in [folder, *folder.parents]:
        if (candidate / "pyproject.toml").is_file() or (candidate / ".git").exists():
            return candidate
    return folder


class PathMatcher:
    """Gitignore-style patterns: ``name`` matches at any depth, ``a/b`` and ``/a`` are anchored, ``**`` spans
    folders, a trailing ``/`` matches folders only, ``!pattern`` re-includes."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._rules: List[Tuple[Pattern[str], bool, bool]] = []
        for raw in patterns:
            pattern = raw.strip()
            if not pattern or pattern.startswith("#"):
                continue
            negate = pattern.startswith("!")
            pattern = pattern[1:] if negate else pattern
            directory_only = pattern.endswith("/")
            pattern = pattern.rstrip("/")
            anchored = "/" in pattern
            pattern = pattern.lstrip("/")
            regex = _glob_to_regex(pattern)
            prefix = "" if anchored else "(?:.*/)?"
            self._rules.append((re.compile(f"^{prefix}{regex}$"), negate, directory_only))

    def matches(self, relative: str, is_dir: bool = False) -> bool:
        """Whether ``relative`` (posix, relative to the root) or one of its parent folders is excluded."""
        parts = relative.split("/")
        for depth in range(1, len(parts) + 1):
            candidate = "/".join(parts[:depth])
            candidate_is_dir = depth < len(parts) or is_dir
            if self._match_one(candidate, candidate_is_dir):
                return True
        return False

    def _match_one(self, candidate: str, is_dir: bool) -> bool:
        matched = False
        for regex, negate, directory_only in self._rules:
            if directory_only and not is_dir:
                continue
            if regex.match(candidate):
                matched = not negate
        return matched


def _glob_to_regex(pattern: str) -> str:
    out = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char)))
        index += 1
    return "".join(out)


def discover(root: Path, exclude: Sequence[str], use_gitignore: bool = True) -> List[SourceFile]:
    """Every ``.py`` file under ``root`` that is not excluded, in a stable order."""
    patterns = list(DEFAULT_EXCLUDES) + list(exclude)
    gitignore = root / ".gitignore"
    if use_gitignore and gitignore.is_file():
        try:
            patterns.extend(gitignore.read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            pass
    matcher = PathMatcher(patterns)
    source_roots = _source_roots(root)
    found: List[SourceFile] = []
    for folder, dirnames, filenames in os.walk(root):
        folder_path = Path(folder)
        relative_folder = folder_path.relative_to(root).as_posix()
        relative_folder = "" if relative_folder == "." else relative_folder
        dirnames[:] = sorted(
            name for name in dirnames if not matcher.matches(f"{relative_folder}/{name}".lstrip("/"), is_dir=True)
        )
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            relative = f"{relative_folder}/{name}".lstrip("/")
            if matcher.matches(relative):
                continue
            module, is_package = module_name(relative, source_roots)
            found.append(SourceFile(folder_path / name, relative, module, is_package))
    return found


def _source_roots(root: Path) -> Tuple[str, ...]:
    """Folders, relative to the root, that import paths start from (``src/`` layouts)."""
    return ("src",) if (root / "src").is_dir() and not (root / "src" / "__init__.py").exists() else ()


def module_name(relative: str, source_roots: Sequence[str] = ()) -> Tuple[str, bool]:
    """``pkg/mod.py`` -> ``pkg.mod``; ``pkg/__init__.py`` -> ``pkg`` (a package)."""
    for source_root in source_roots:
        if relative.startswith(source_root + "/"):
            relative = relative[len(source_root) + 1 :]
            break
    parts = relative[: -len(".py")].split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts) or "__init__", is_package


def relative_to(root: Path, path: Path) -> Optional[str]:
    """``path`` relative to ``root`` in posix form, or None when it lies outside."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None
