"""The per-user cache, and the files a run reads, keyed for it.

A file's facts depend only on its bytes, its path and module name, and the code of the indexer (its source
files, hashed once per process), so that is the key; the configuration only matters from linking on and is not
part of it.

Nothing a repository contains is ever read as a cache entry: the cache lives in the user's own cache folder
(``$DISPATCHLINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/dispatchlint`` or ``~/.cache/dispatchlint``; the platform's
cache folder on macOS and Windows), created private to the user (0700) and used only while it belongs to the
user and no one else can write to it. Entries are JSON (reading one cannot run code), validated field by field
against the facts' dataclasses; an entry that is malformed, incomplete or of another version is a miss. A cache
that cannot be written is a warning, and a failed write leaves no temporary file behind.

This module reads and writes entries as text: what they hold is decoded by the stages that store them
(``dispatchlint/analysis/indexing.py`` the facts, ``dispatchlint/results_cache.py`` a project's results).
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Iterable, List, Mapping, NamedTuple, Optional, Sequence

from dispatchlint import __version__
from dispatchlint.analysis.discover import SkippedFile, SourceFile, read_source
from dispatchlint.problems import Problem, ProblemKind

#: Set to a folder to keep the cache there instead of the user's cache folder.
CACHE_ENVIRONMENT_VARIABLE = "DISPATCHLINT_CACHE_DIR"
_FORMAT = 3
_PACKAGE = Path(__file__).resolve().parents[1]


def source_fingerprint(paths: Iterable[Path]) -> str:
    """The version and the code of ``paths`` (modules of this package), so that edited analysis code is never
    served what older code stored; an installation without sources falls back to the version and the names."""
    digest = hashlib.sha256(__version__.encode("utf-8"))
    for path in paths:
        digest.update(path.relative_to(_PACKAGE).as_posix().encode("utf-8") + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            pass
    return digest.hexdigest()


#: The code that decides what facts a file has: the indexer and its helpers (every module of ``analysis/`` but
#: the link stage, a few more than needed rather than one too few) and the names it shares with the runtime.
_ANALYSIS_FINGERPRINT = source_fingerprint(
    sorted(_PACKAGE.joinpath("analysis").glob("*.py")) + [_PACKAGE / "runtime" / "contract.py"]
)


def user_cache_folder() -> Path:
    """Where this user's facts are kept (see the module docstring)."""
    configured = os.environ.get(CACHE_ENVIRONMENT_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "dispatchlint"


class FactsCache:
    """Facts by file content under ``folder``, a folder only this user can write to.

    A cache that cannot be used (not private, not writable) is not used; :attr:`warnings` says why, once each.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.warnings: List[str] = []
        self._trusted: Optional[bool] = None

    def key(self, source: SourceFile, data: bytes) -> str:
        digest = hashlib.sha256()
        for part in (str(_FORMAT), _ANALYSIS_FINGERPRINT, source.relative, source.module, str(source.is_package)):
            digest.update(part.encode("utf-8") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def read(self, kind: str, key: str) -> Optional[str]:
        """The text stored as ``kind`` under ``key`` (None: none, or the cache is not used)."""
        if not self._is_trusted():
            return None
        try:
            with open(self._path(kind, key), "r", encoding="utf-8") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError):
            return None

    def write(self, kind: str, key: str, text: str) -> None:
        """Store ``text`` as ``kind`` under ``key``, atomically (a reader sees the old entry or the new one)."""
        if not self._is_trusted():
            return
        path = self._path(kind, key)
        temporary = ""
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, path)
        except OSError as error:
            if temporary:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
            self._distrust(f"cannot write the cache in {self.folder} ({error.strerror or error}); it is not used")

    def _is_trusted(self) -> bool:
        """The folder exists (created private if not), belongs to this user and only they can write to it."""
        if self._trusted is None:
            self._trusted = True
            try:
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                status = self.folder.stat()
            except OSError as error:
                self._distrust(f"cannot create the cache folder {self.folder} ({error.strerror or error}); no cache")
                return False
            owner = getattr(os, "getuid", None)
            if owner is not None and (status.st_uid != owner() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
                self._distrust(f"the cache folder {self.folder} is not private to this user; it is not used")
        return self._trusted

    def _distrust(self, warning: str) -> None:
        self._trusted = False
        if warning not in self.warnings:
            self.warnings.append(warning)

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / f"{kind}-{_FORMAT}" / key[:2] / f"{key}.json"


class ReadFile(NamedTuple):
    """A file's bytes as this run analyses them, and its facts' cache key ("" without a cache)."""

    source: SourceFile
    data: bytes
    key: str


class ReadFiles(NamedTuple):
    """The files a project's analysis reads, in order, and a problem for each one it cannot read."""

    files: List[ReadFile]
    problems: List[Problem]


def read_files(
    files: Sequence[SourceFile],
    cache: Optional[FactsCache],
    max_bytes: int,
    contents: Optional[Mapping[Path, bytes]] = None,
) -> ReadFiles:
    """Every readable regular file of at most ``max_bytes``, keyed for the cache; ``contents`` stands in for the
    files it names (text read from stdin)."""
    contents = contents or {}
    read: List[ReadFile] = []
    problems: List[Problem] = []
    for source in files:
        try:
            data = contents[source.path] if source.path in contents else read_source(source.path, max_bytes)
        except SkippedFile as skipped:
            problems.append(Problem(source.relative, ProblemKind.SKIPPED, f"skipped: {skipped}"))
            continue
        except OSError as error:
            problems.append(Problem(source.relative, ProblemKind.UNREADABLE, f"cannot read: {error.strerror or error}"))
            continue
        read.append(ReadFile(source, data, cache.key(source, data) if cache is not None else ""))
    return ReadFiles(read, problems)
