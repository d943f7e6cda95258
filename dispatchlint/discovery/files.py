"""Find the project root and the Python files to analyse, honouring gitignore-style excludes."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from dispatchlint.discovery._globs import Glob, literal_name

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


@dataclass(frozen=True)
class LeftOut:
    """A file or folder left out that no setting asked to leave out: a warning names it."""

    #: Relative to the root, in POSIX form.
    path: str
    reason: str

    @classmethod
    def link(cls, path: str, target: Path) -> "LeftOut":
        return cls(path, f"a link to {target}, outside the project; it is not read")

    @classmethod
    def unreadable(cls, path: str, error: OSError) -> "LeftOut":
        return cls(path, f"cannot read this folder ({error.strerror or error}); the files in it are not analysed")


@dataclass(frozen=True)
class Discovery:
    #: The project's files, in a stable order.
    files: List[SourceFile]
    #: Folders below the root that are projects of their own (their ``pyproject.toml`` configures dispatchlint):
    #: left out here, to be analysed and configured on their own.
    subprojects: List[Path]
    #: Folders that cannot be read, links that lead out of the project.
    left_out: List[LeftOut] = field(default_factory=list)


def find_root(path: Path, declares_project: Callable[[Path], bool]) -> Path:
    """The project ``path`` belongs to: the nearest folder at or above it whose ``pyproject.toml`` configures
    dispatchlint (``declares_project``); else the nearest with a ``pyproject.toml`` or ``.git``; else its folder."""
    folder = path.resolve() if path.is_dir() else path.parent.resolve()  # a link to a file is where it is
    candidates = [folder, *folder.parents]
    for candidate in candidates:
        if declares_project(candidate):
            return candidate
    for candidate in candidates:
        if (candidate / "pyproject.toml").is_file() or (candidate / ".git").exists():
            return candidate
    return folder


#: No file system gives a longer path (PATH_MAX on Linux): a pattern that needs more characters matches nothing.
_LONGEST_PATH = 4096


@dataclass(frozen=True)
class _Rule:
    glob: Glob
    negate: bool
    directory_only: bool
    #: The name the pattern matches at any depth when it is nothing else (``node_modules``), else None.
    name: Optional[str]


class PathMatcher:
    """Gitignore-style patterns: ``name`` matches at any depth, ``a/b`` and ``/a`` are anchored, ``**`` spans
    folders, a trailing ``/`` matches folders only, ``!pattern`` re-includes. Matching never backtracks (see
    :mod:`dispatchlint.discovery._globs`), whatever the patterns and the names."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._rules: List[_Rule] = []
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
            if len(pattern.replace("*", "")) > _LONGEST_PATH:
                continue  # it can match no path
            name = None if anchored else literal_name(pattern)
            self._rules.append(_Rule(Glob(pattern, anchored), negate, directory_only, name))
        # Without a re-including pattern, any match excludes: the names matched at any depth are looked up in a
        # set, and only the other patterns are matched one by one (a run tests every file against them all).
        self._negates = any(rule.negate for rule in self._rules)
        self._names: Dict[bool, Set[str]] = {False: set(), True: set()}
        self._globs: Dict[bool, List[Glob]] = {False: [], True: []}
        for rule in self._rules:
            for is_dir in (True,) if rule.directory_only else (False, True):
                if rule.name is not None:
                    self._names[is_dir].add(rule.name)
                else:
                    self._globs[is_dir].append(rule.glob)
        #: Whether a folder is excluded by a pattern matching it (not by one above it), by its relative path.
        self._folders: Dict[str, bool] = {}

    def matches(self, relative: str, is_dir: bool = False) -> bool:
        """Whether ``relative`` (posix, relative to the root) or one of its parent folders is excluded."""
        slash = relative.find("/")
        while slash >= 0:
            folder = relative[:slash]
            excluded = self._folders.get(folder)
            if excluded is None:
                excluded = self._folders[folder] = bool(self.decide(folder, True))
            if excluded:
                return True
            slash = relative.find("/", slash + 1)
        return bool(self.decide(relative, is_dir))

    def decide(self, candidate: str, is_dir: bool) -> Optional[bool]:
        """What the last pattern matching ``candidate`` itself says: excluded, re-included, or nothing."""
        name = candidate[candidate.rfind("/") + 1 :]
        if not self._negates:
            if name in self._names[is_dir]:
                return True
            for glob in self._globs[is_dir]:
                if glob.matches(candidate):
                    return True
            return None
        decision = None
        for rule in self._rules:
            if rule.directory_only and not is_dir:
                continue
            if rule.name == name if rule.name is not None else rule.glob.matches(candidate):
                decision = not rule.negate
        return decision


def _read_patterns(path: Path) -> Optional[PathMatcher]:
    try:
        return PathMatcher(path.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None


def _git_top(root: Path) -> Optional[Tuple[Path, Path]]:
    """The work tree holding ``root`` and its git folder (a worktree's ``.git`` file names it)."""
    for folder in [root, *root.parents]:
        marker = folder / ".git"
        if marker.is_dir():
            return folder, marker
        if marker.is_file():
            try:
                text = marker.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                try:
                    git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
                except OSError:
                    pass
            return folder, git_dir
    return None


def workspace_of(root: Path) -> Path:
    """What a pull request to the project can write: the checkout ``root`` lies in (its git work tree), or
    ``root`` itself outside git, or when the work tree holds the user's home folder (a repository of dotfiles is
    the user's own, and so is what their home holds)."""
    top = _git_top(root)
    if top is None:
        return root
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):  # no home folder to tell
        return top[0]
    return root if home == top[0] or top[0] in home.parents else top[0]


class Ignores:
    """What a project leaves out: the built-in folders and ``exclude`` (relative to the root), and what git
    ignores: ``.git/info/exclude`` and the ``.gitignore`` of every folder from the work tree's top down, each
    relative to its own folder, a deeper one overriding a shallower one, as git reads them."""

    def __init__(self, root: Path, exclude: Sequence[str], use_gitignore: bool = True) -> None:
        self.root = root
        self._configured = PathMatcher(list(DEFAULT_EXCLUDES) + list(exclude))
        top = _git_top(root) if use_gitignore else None
        self._top = top[0] if top else None
        self._global = _read_patterns(top[1] / "info" / "exclude") if top else None
        self._gitignores: Dict[Path, Optional[PathMatcher]] = {}
        self._folders: Dict[Path, bool] = {}

    def excluded(self, path: Path, is_dir: bool, relative: Optional[str] = None) -> bool:
        """Whether ``path`` (absolute, under the root; ``relative`` to it, when the caller knows) is left out, by
        itself or by a folder above it."""
        if relative is None:
            try:
                relative = path.relative_to(self.root).as_posix()
            except ValueError:
                return False
        if relative == ".":
            return False
        return self._configured.matches(relative, is_dir) or self._git_ignored(path, is_dir)

    def _git_ignored(self, path: Path, is_dir: bool) -> bool:
        if self._top is None:
            return False
        parent = path.parent
        if parent != self.root and self.root in parent.parents and self._folder_ignored(parent):
            return True
        return self._decide(path, is_dir)

    def _folder_ignored(self, folder: Path) -> bool:
        if folder not in self._folders:
            self._folders[folder] = self._git_ignored(folder, True)
        return self._folders[folder]

    def _decide(self, path: Path, is_dir: bool) -> bool:
        assert self._top is not None
        decision: Optional[bool] = None
        if self._global is not None:
            decision = self._global.decide(path.relative_to(self._top).as_posix(), is_dir)
        folder = path.parent
        chain = [folder, *folder.parents]
        for base in reversed(chain[: chain.index(self._top) + 1] if self._top in chain else []):
            matcher = self._gitignore(base)
            if matcher is not None:
                said = matcher.decide(path.relative_to(base).as_posix(), is_dir)
                decision = said if said is not None else decision
        return bool(decision)

    def _gitignore(self, folder: Path) -> Optional[PathMatcher]:
        if folder not in self._gitignores:
            gitignore = folder / ".gitignore"
            try:
                present = gitignore.is_file()
            except OSError:  # a folder that cannot be searched has no .gitignore to read
                present = False
            self._gitignores[folder] = _read_patterns(gitignore) if present else None
        return self._gitignores[folder]


def discover(
    root: Path, ignores: Ignores, declares_project: Callable[[Path], bool] = lambda folder: False
) -> Discovery:
    """Every ``.py`` file under ``root`` that is not left out, in a stable order, and the sub-projects found.

    A folder that cannot be read (or searched) is left out with a warning and the rest is analysed, as Ruff does;
    so is a symbolic link that leads out of the project (``x.py -> /proc/self/environ``): what lies outside the
    root is never read, nor written by a fix.
    """
    source_roots = _source_roots(root)
    found: List[SourceFile] = []
    subprojects: List[Path] = []
    left_out: List[LeftOut] = []

    def unreadable(error: OSError) -> None:
        folder = relative_to(root, Path(error.filename)) if error.filename else None
        left_out.append(LeftOut.unreadable(folder or ".", error))

    for folder, dirnames, filenames in os.walk(root, onerror=unreadable):
        folder_path = Path(folder)
        relative_folder = folder_path.relative_to(root).as_posix()
        relative_folder = "" if relative_folder == "." else relative_folder
        try:
            os.stat(os.path.join(folder, os.curdir))  # listed, but searchable? Its entries cannot be looked at
        except OSError as error:
            left_out.append(LeftOut.unreadable(relative_folder or ".", error))
            dirnames[:] = []
            continue
        kept = []
        for name in sorted(dirnames):
            child = folder_path / name
            relative = f"{relative_folder}/{name}" if relative_folder else name
            if ignores.excluded(child, is_dir=True, relative=relative):
                continue
            outside = link_out_of(root, child)  # never walked into (links are not followed); said when it leaves
            if outside is not None:
                left_out.append(LeftOut.link(relative, outside))
                continue
            if declares_project(child):
                subprojects.append(child)
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = folder_path / name
            relative = f"{relative_folder}/{name}" if relative_folder else name
            if ignores.excluded(path, is_dir=False, relative=relative):
                continue
            outside = link_out_of(root, path)
            if outside is not None:
                left_out.append(LeftOut.link(relative, outside))
                continue
            if not _is_regular_or_unreadable(os.path.join(folder, name)):
                continue
            module, is_package = module_name(relative, source_roots)
            found.append(SourceFile(path, relative, module, is_package))
    return Discovery(found, subprojects, left_out)


def link_out_of(root: Path, path: Path) -> Optional[Path]:
    """Where ``path`` leads when it is a symbolic link to something outside ``root`` (resolved), else None."""
    if not os.path.islink(path):
        return None
    target = Path(os.path.realpath(path))
    return None if target == root or root in target.parents else target


def _is_regular_or_unreadable(path: str) -> bool:
    """Only regular files are source files (a FIFO named ``x.py`` would block the run that reads it); a file
    that cannot even be looked at is kept, so that reading it reports why."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


#: What a file that grows while it is read is read on by.
_READ_CHUNK = 8192


class SkippedFile(Exception):
    """A file that is not read: not a regular file, or larger than ``max-file-size``; the message says which."""


def read_source(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; raise :class:`SkippedFile` or :class:`OSError`.

    The file is opened without blocking and checked on the open descriptor, so a FIFO or a device that takes the
    place of a file after discovery is refused, never waited on.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise SkippedFile("not a regular file")
        if status.st_size > max_bytes:
            raise SkippedFile(f"{status.st_size:,} bytes, more than max-file-size ({max_bytes:,} bytes)")
        # Read by its size, not by the limit: a read of max-file-size allocated a megabyte per file, most of a
        # warm run's reading. What follows is a file that grew, read on up to the limit.
        chunks = [os.read(descriptor, status.st_size + 1)]
        size = len(chunks[0])
        while size <= max_bytes:
            chunk = os.read(descriptor, min(_READ_CHUNK, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(descriptor)
    if size > max_bytes:  # it grew while it was read
        raise SkippedFile(f"more than max-file-size ({max_bytes:,} bytes)")
    return b"".join(chunks)


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
