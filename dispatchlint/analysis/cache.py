"""Index files once per content: a per-file cache of facts, and parallel indexing of the rest.

A file's facts depend only on its bytes, its path and module name, and the code of the indexer (its source
files, hashed once per process), so that is the key; the configuration only matters from linking on and is not
part of it. Entries are pickles of plain dataclasses, written atomically under ``<root>/.dispatchlint_cache/``
(which carries its own ``.gitignore``).
Facts of files not in the cache are computed in worker processes when there are enough of them to pay for the
processes.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from dispatchlint import __version__
from dispatchlint.analysis.discover import SourceFile
from dispatchlint.analysis.facts import ModuleFacts
from dispatchlint.analysis.index import index_source
from dispatchlint.problems import Problem, ProblemKind

CACHE_DIRECTORY = ".dispatchlint_cache"
#: The modules whose code decides what facts a file has: an edited indexer must not be served stale facts.
_FACT_MODULES = ("facts.py", "index.py", "_patterns.py", "_syntax.py", "_schemas.py", "cache.py")


def _analysis_fingerprint() -> str:
    digest = hashlib.sha256(__version__.encode("utf-8"))
    folder = Path(__file__).resolve().parent
    for name in _FACT_MODULES:
        try:
            digest.update((folder / name).read_bytes())
        except OSError:  # an installation without sources: the version alone keys the cache
            digest.update(name.encode("utf-8"))
    return digest.hexdigest()


_ANALYSIS_FINGERPRINT = _analysis_fingerprint()
#: Below this many files to index, worker processes cost more than they save.
_PARALLEL_THRESHOLD = 64
_FORMAT = 1


class FactsCache:
    """Facts by file content under ``folder``; a cache that cannot be read or written is simply not used."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def key(self, source: SourceFile, data: bytes) -> str:
        digest = hashlib.sha256()
        for part in (str(_FORMAT), _ANALYSIS_FINGERPRINT, source.relative, source.module, str(source.is_package)):
            digest.update(part.encode("utf-8") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def load(self, key: str) -> Optional[ModuleFacts]:
        try:
            with open(self._path(key), "rb") as handle:
                facts = pickle.load(handle)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            return None
        return facts if isinstance(facts, ModuleFacts) else None

    def store(self, key: str, facts: ModuleFacts) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
            descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(descriptor, "wb") as handle:
                pickle.dump(facts, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except OSError:
            pass

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pickle"


def _index_one(job: Tuple[str, str, bool, bytes]) -> Tuple[Union[ModuleFacts, Problem], float]:
    """A file's facts, or why indexing it failed (a bug of ours must not end the run for the other files), and
    the seconds it took."""
    started = time.perf_counter()
    try:
        facts: Union[ModuleFacts, Problem] = index_source(*job)
    except Exception as error:  # noqa: BLE001 - reported per file, with exit code 2
        message = f"internal error while indexing ({type(error).__name__}: {error}); please report it"
        facts = Problem(job[0], ProblemKind.INTERNAL, message)
    return facts, time.perf_counter() - started


def index_files(
    files: Sequence[SourceFile],
    cache: Optional[FactsCache],
    jobs: int,
    contents: Optional[Mapping[Path, bytes]] = None,
    timings: Optional[Dict[str, Optional[float]]] = None,
) -> Tuple[List[ModuleFacts], List[Problem]]:
    """Facts for every readable file (in the given order) and the problem of each unreadable one. ``contents``
    stands in for the files it names (text read from stdin); ``timings`` receives the seconds each file took to
    index (None: from the cache)."""
    contents = contents or {}
    errors: List[Problem] = []
    slots: List[Optional[ModuleFacts]] = []
    pending: List[Tuple[int, str, Tuple[str, str, bool, bytes]]] = []
    for source in files:
        try:
            data = contents[source.path] if source.path in contents else source.path.read_bytes()
        except OSError as error:
            errors.append(Problem(source.relative, ProblemKind.UNREADABLE, f"cannot read: {error.strerror or error}"))
            continue
        key = cache.key(source, data) if cache is not None else ""
        cached = cache.load(key) if cache is not None else None
        if cached is None:
            pending.append((len(slots), key, (source.relative, source.module, source.is_package, data)))
        elif timings is not None:
            timings[source.relative] = None
        slots.append(cached)
    jobs_for_work = [job for _, _, job in pending]
    if jobs > 1 and len(pending) >= _PARALLEL_THRESHOLD:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            computed = list(pool.map(_index_one, jobs_for_work, chunksize=16))
    else:
        computed = [_index_one(job) for job in jobs_for_work]
    for (slot, key, job), (facts, seconds) in zip(pending, computed):
        if timings is not None:
            timings[job[0]] = seconds
        if isinstance(facts, Problem):
            errors.append(facts)
            continue
        slots[slot] = facts
        if cache is not None:
            cache.store(key, facts)
    return [facts for facts in slots if facts is not None], errors
