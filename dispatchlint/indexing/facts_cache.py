"""The per-user cache, and the files a run reads, keyed for it.

A file's facts depend only on its bytes, its path and module name, the code of the indexer (its source files,
hashed once per process), what runs it (the interpreter, whose compiler decides what parses, and libcst) and the
grammar that judges its syntax (a project may target a newer Python than the one running), so that is the key;
the configuration only matters from linking on and is not part of it.

Nothing a repository contains is ever believed as a cache entry. The cache lives in the user's own cache folder
(``$DISPATCHLINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/dispatchlint`` or ``~/.cache/dispatchlint``; the platform's
cache folder on macOS and Windows), created private to the user (0700) and used only while it belongs to the
user and no one else can write to it. That folder may still be inside a checkout (``XDG_CACHE_HOME=$PWD/.cache``
in CI), where a pull request can commit files: so every entry carries an HMAC of its kind, its key and its text
under a key of the user's own, kept in their state folder (see :func:`user_key_file`), never in the cache folder
and never inside the project analysed; an entry whose HMAC does not verify is a miss. Entries are JSON (reading
one cannot run code), validated field by field against the facts' dataclasses; an entry that is malformed,
incomplete or of another version is a miss, and so is one that is not a regular file or is larger than any entry
(a FIFO, a link to a device). A cache that cannot be written is a warning, and a failed write leaves no temporary
file behind.

This module reads and writes entries as text: what they hold is decoded by the stages that store them
(``dispatchlint/indexing/project.py`` the facts, ``dispatchlint/results_cache.py`` a project's results).
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Iterable, List, Mapping, NamedTuple, Optional, Sequence

from dispatchlint import __version__
from dispatchlint.discovery.files import SkippedFile, SourceFile, read_source
from dispatchlint.indexing.grammar import Grammar
from dispatchlint.problems import Problem, ProblemKind

#: Set to a folder to keep the cache there instead of the user's cache folder.
CACHE_ENVIRONMENT_VARIABLE = "DISPATCHLINT_CACHE_DIR"
_FORMAT = 4
_PACKAGE = Path(__file__).resolve().parents[1]
#: Bytes of the user's key, and of an entry's HMAC line (hexadecimal, then a newline).
_KEY_BYTES = 32
_MAC_LINE = 2 * hashlib.sha256().digest_size + 1
#: No entry is larger (a project's facts are a few megabytes): a larger one is a miss, never read.
_LARGEST_ENTRY = 1024**3


def _runtime() -> str:
    """What runs the indexer: the interpreter (its compiler decides what parses, its tokenizer where comments are)
    and libcst's release (read from its version file, without importing it: a warm run loads no libcst)."""
    spec = importlib.util.find_spec("libcst")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    version = ""
    for folder in folders:
        try:
            version = Path(folder, "_version.py").read_text(encoding="utf-8")
            break
        except OSError:
            continue
    return "\0".join((sys.implementation.cache_tag or sys.implementation.name, sys.version, version))


def source_fingerprint(paths: Iterable[Path]) -> str:
    """The version and the code of ``paths`` (modules of this package) and what runs them (see :func:`_runtime`),
    so that edited analysis code, another Python or another libcst is never served what was stored before; an
    installation without sources falls back to the version and the names."""
    digest = hashlib.sha256(__version__.encode("utf-8") + b"\0" + _runtime().encode("utf-8", "surrogatepass"))
    for path in paths:
        digest.update(path.relative_to(_PACKAGE).as_posix().encode("utf-8") + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            pass
    return digest.hexdigest()


#: The code that decides what facts a file has: the indexing stage (every module of ``indexing/``, a few more than
#: needed rather than one too few), the records and framework models it reads, and the names it shares with the
#: runtime.
_ANALYSIS_FINGERPRINT = source_fingerprint(
    sorted(_PACKAGE.joinpath("indexing").glob("*.py"))
    + [_PACKAGE / "locations.py", _PACKAGE / "framework_models.py", _PACKAGE / "runtime" / "contract.py"]
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


def user_key_file() -> Path:
    """The key entries are signed with: in the user's state folder (``$XDG_STATE_HOME/dispatchlint``, else
    ``~/.local/state/dispatchlint``; the platform's application-data folder on macOS and Windows), apart from the
    cache folder, which a checkout may hold."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "dispatchlint" / "cache-key"


def _is_private(status: os.stat_result, others: int) -> bool:
    """Owned by this user, and none of the ``others`` permission bits set (where the platform has owners)."""
    owner = getattr(os, "getuid", None)
    return owner is None or (status.st_uid == owner() and not status.st_mode & others)


class FactsCache:
    """Facts by file content under ``folder``, a folder only this user can write to, each entry signed with the
    user's key (``key_file``, which must not lie inside ``workspace``, the checkout analysed).

    A cache that cannot be used (not private, not writable, its key unusable) is not used; :attr:`warnings` says
    why, once each.
    """

    def __init__(self, folder: Path, key_file: Optional[Path] = None, workspace: Optional[Path] = None) -> None:
        self.folder = folder
        self.key_file = key_file if key_file is not None else user_key_file()
        self.workspace = workspace
        self.warnings: List[str] = []
        self._trusted: Optional[bool] = None
        self._key = b""

    def key(self, source: SourceFile, data: bytes, grammar: Grammar = Grammar.INTERPRETER) -> str:
        digest = hashlib.sha256()
        identity = (source.relative, source.module, str(source.is_package), grammar.value)
        for part in (str(_FORMAT), _ANALYSIS_FINGERPRINT, *identity):
            # A file name that is not UTF-8 (undecodable bytes, as the file system gave them) is still a name.
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def read(self, kind: str, key: str) -> Optional[str]:
        """The text stored as ``kind`` under ``key`` (None: none, one this user's key did not sign, or the cache
        is not used)."""
        if not self._is_trusted():
            return None
        try:  # opened without blocking, only if it is a regular file (not a FIFO, not a link to a device)
            stored = read_source(self._path(kind, key), _LARGEST_ENTRY)
        except (OSError, SkippedFile):
            return None
        mac, body = stored[: _MAC_LINE - 1], stored[_MAC_LINE:]
        if stored[_MAC_LINE - 1 : _MAC_LINE] != b"\n" or not hmac.compare_digest(mac, self._sign(kind, key, body)):
            return None
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def write(self, kind: str, key: str, text: str) -> None:
        """Store ``text`` as ``kind`` under ``key``, signed, atomically (a reader sees the old entry or the new
        one)."""
        if not self._is_trusted():
            return
        path = self._path(kind, key)
        body = text.encode("utf-8")
        temporary = ""
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(self._sign(kind, key, body) + b"\n" + body)
            os.replace(temporary, path)
        except OSError as error:
            if temporary:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
            self._distrust(f"cannot write the cache in {self.folder} ({error.strerror or error}); it is not used")

    def _sign(self, kind: str, key: str, body: bytes) -> bytes:
        """The entry's HMAC, hexadecimal: of its kind and key too, so that an entry moved under another key (the
        facts of a harmless file under a dispatching file's key) does not verify."""
        message = f"{kind}\0{key}\0".encode("ascii") + body
        return hmac.new(self._key, message, hashlib.sha256).hexdigest().encode("ascii")

    def _is_trusted(self) -> bool:
        """The folder exists (created private if not), belongs to this user and only they can write to it, and
        the user's key can be read (created if there is none)."""
        if self._trusted is None:
            self._trusted = True
            try:
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                status = self.folder.stat()
            except OSError as error:
                self._distrust(f"cannot create the cache folder {self.folder} ({error.strerror or error}); no cache")
                return False
            if not _is_private(status, stat.S_IWGRP | stat.S_IWOTH):
                self._distrust(f"the cache folder {self.folder} is not private to this user; it is not used")
                return False
            key = self._user_key()
            if key is None:
                return False
            self._key = key
        return self._trusted

    def _user_key(self) -> Optional[bytes]:
        """The user's key: read from :attr:`key_file`, created there (random, private) if there is none; None,
        with a warning, when it cannot be trusted."""
        where = self.key_file
        if self.workspace is not None and _inside(where, self.workspace):
            self._distrust(f"the cache key {where} is inside the project {self.workspace}; the cache is not used")
            return None
        try:
            if not where.exists():
                _create_key(where)
            status = os.stat(where)
            key = read_source(where, _KEY_BYTES)
        except SkippedFile:
            key = b""
        except OSError as error:
            self._distrust(f"cannot read or create the cache key {where} ({error.strerror or error}); no cache")
            return None
        if len(key) != _KEY_BYTES or not _is_private(status, stat.S_IRWXG | stat.S_IRWXO):
            self._distrust(f"the cache key {where} is not a private key of this user; the cache is not used")
            return None
        return key

    def _distrust(self, warning: str) -> None:
        self._trusted = False
        if warning not in self.warnings:
            self.warnings.append(warning)

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / f"{kind}-{_FORMAT}" / key[:2] / f"{key}.json"


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (followed through links) lies in ``folder``."""
    resolved, top = path.resolve(), folder.resolve()
    return resolved == top or top in resolved.parents


def _create_key(path: Path) -> None:
    """A new random key at ``path``, private to the user; never replacing one another run created meanwhile."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # created 0600
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(os.urandom(_KEY_BYTES))
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another run's key is the key
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


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
    grammar: Grammar = Grammar.INTERPRETER,
) -> ReadFiles:
    """Every readable regular file of at most ``max_bytes``, keyed for the cache (and for the ``grammar`` that
    judges it); ``contents`` stands in for the files it names (text read from stdin)."""
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
        read.append(ReadFile(source, data, cache.key(source, data, grammar) if cache is not None else ""))
    return ReadFiles(read, problems)
