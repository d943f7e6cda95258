"""Index files once per content: a per-user cache of facts, and parallel indexing of the rest.

A file's facts depend only on its bytes, its path and module name, and the code of the indexer (its source
files, hashed once per process), so that is the key; the configuration only matters from linking on and is not
part of it.

Nothing a repository contains is ever read as a cache entry: the cache lives in the user's own cache folder
(``$DISPATCHLINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/dispatchlint`` or ``~/.cache/dispatchlint``; the platform's
cache folder on macOS and Windows), created private to the user (0700) and used only while it belongs to the
user and no one else can write to it. Entries are JSON (reading one cannot run code), validated field by field
against the facts' dataclasses; an entry that is malformed, incomplete or of another version is a miss. A cache
that cannot be written is a warning, and a failed write leaves no temporary file behind.

Facts of files not in the cache are computed in worker processes when there are enough of them to pay for the
processes.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from dispatchlint import __version__
from dispatchlint.analysis import _facts_json
from dispatchlint.analysis._parse import on_deep_stack, without_cycle_collection
from dispatchlint.analysis.discover import SkippedFile, SourceFile, read_source
from dispatchlint.analysis.facts import ModuleFacts
from dispatchlint.problems import Problem, ProblemKind

#: Set to a folder to keep the cache there instead of the user's cache folder.
CACHE_ENVIRONMENT_VARIABLE = "DISPATCHLINT_CACHE_DIR"
_FORMAT = 3
#: The kind of entry that holds one file's facts.
_FACTS = "facts"
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
#: Below this many files to index, worker processes cost more than they save.
_PARALLEL_THRESHOLD = 64
#: Files a worker indexes per task: few enough to balance the workers, enough to pay for the round trip.
_BATCH = 16


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

    def load(self, key: str, source: SourceFile) -> Optional[ModuleFacts]:
        """The stored facts of ``source``, or None (no entry, an entry that is not exactly valid facts)."""
        text = self.read(_FACTS, key)
        if text is None:
            return None
        try:
            facts = _facts_json.loads(text)
        except _facts_json.InvalidFacts:
            return None
        same_file = (facts.path, facts.module, facts.is_package) == (source.relative, source.module, source.is_package)
        return facts if same_file else None

    def store(self, key: str, facts: ModuleFacts) -> None:
        self.write(_FACTS, key, _facts_json.dumps(facts))

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


class Indexed(NamedTuple):
    """What indexing a project's files gives."""

    modules: List[ModuleFacts]
    #: Files that could not be read, were skipped or that the analyzer failed on, one problem each.
    problems: List[Problem]
    #: A cache that could not be used; the run does not fail for it.
    warnings: List[str]


def _index_batch(jobs: Sequence[Tuple[str, str, bool, bytes]]) -> List[Tuple[Union[ModuleFacts, Problem], float]]:
    """A worker's share: the files indexed one after the other on one deep-stack thread."""
    return on_deep_stack(lambda: [_index_one(job) for job in jobs])


def _index_one(job: Tuple[str, str, bool, bytes]) -> Tuple[Union[ModuleFacts, Problem], float]:
    """A file's facts, or why indexing it failed (a bug of ours must not end the run for the other files), and
    the seconds it took."""
    from dispatchlint.analysis.index import IndexFailure, index_source  # libcst loads only when a file is indexed

    started = time.perf_counter()
    try:
        facts: Union[ModuleFacts, Problem] = index_source(*job)
    except IndexFailure as failure:  # reported per file, with exit code 2
        facts = Problem(job[0], ProblemKind.INTERNAL, f"{failure}; please report it")
    except Exception as error:  # noqa: BLE001 - the same, for a failure outside the indexer's own stages
        facts = Problem(job[0], ProblemKind.INTERNAL, f"{IndexFailure('indexing', error)}; please report it")
    return facts, time.perf_counter() - started


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


def index_read(
    files: Sequence[ReadFile],
    cache: Optional[FactsCache],
    jobs: int,
    timings: Optional[Dict[str, Optional[float]]] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Indexed:
    """Facts for every file read (in order): from the cache, else indexed (on ``jobs`` processes when there are
    enough). ``timings`` receives the seconds each file took to index (None: from the cache); ``progress`` is
    told after each file indexed how many of how many are done."""
    errors: List[Problem] = []
    slots: List[Optional[ModuleFacts]] = []
    pending: List[Tuple[int, str, Tuple[str, str, bool, bytes]]] = []
    with without_cycle_collection(long_lived=True):  # decoded facts: millions of records alive, in no cycle
        for source, data, key in files:
            cached = cache.load(key, source) if cache is not None else None
            if cached is None:
                pending.append((len(slots), key, (source.relative, source.module, source.is_package, data)))
            elif timings is not None:
                timings[source.relative] = None
            slots.append(cached)
    jobs_for_work = [job for _, _, job in pending]
    computed: List[Tuple[Union[ModuleFacts, Problem], float]] = []
    if jobs > 1 and len(pending) >= _PARALLEL_THRESHOLD:
        batches = [jobs_for_work[start : start + _BATCH] for start in range(0, len(jobs_for_work), _BATCH)]
        with ProcessPoolExecutor(max_workers=jobs) as pool, without_cycle_collection(long_lived=True):  # unpickled
            for batch in pool.map(_index_batch, batches):
                computed.extend(batch)
                if progress is not None:
                    progress(len(computed), len(jobs_for_work))
    else:

        def index_all() -> None:  # on one deep-stack thread, not one per file
            for job in jobs_for_work:
                computed.append(_index_one(job))
                if progress is not None:
                    progress(len(computed), len(jobs_for_work))

        on_deep_stack(index_all)
    for (slot, key, job), (facts, seconds) in zip(pending, computed):
        if timings is not None:
            timings[job[0]] = seconds
        if isinstance(facts, Problem):
            errors.append(facts)
            continue
        slots[slot] = facts
        if cache is not None:
            cache.store(key, facts)
    return Indexed([facts for facts in slots if facts is not None], errors, cache.warnings if cache else [])
