"""Index files once per content: facts from the per-user cache (``dispatchlint/analysis/cache.py``), and the
files it lacks indexed, on worker processes when there are enough of them to pay for the processes."""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from dispatchlint.analysis import _facts_json
from dispatchlint.analysis._parse import on_deep_stack, without_cycle_collection
from dispatchlint.analysis.cache import FactsCache, ReadFile
from dispatchlint.analysis.discover import SourceFile
from dispatchlint.analysis.facts import ModuleFacts
from dispatchlint.problems import Problem, ProblemKind

#: The kind of entry that holds one file's facts.
_FACTS = "facts"
#: Below this many files to index, worker processes cost more than they save.
_PARALLEL_THRESHOLD = 64
#: Files a worker indexes per task: few enough to balance the workers, enough to pay for the round trip.
_BATCH = 16
#: A file larger than this (a hand-written module of a megabyte takes libcst seconds and hundreds of megabytes)
#: is indexed alone, in a worker process of its own whose memory is bounded, so that one file cannot take the
#: run's memory, and its failure is that file's reported error, not the run's.
LARGE_FILE_BYTES = 1_000_000
#: The memory (heap and mappings, its deep stack among them) a large file's worker may add to what it starts with.
LARGE_FILE_MEMORY = 4 * 1024**3


def load_facts(cache: FactsCache, key: str, source: SourceFile) -> Optional[ModuleFacts]:
    """The stored facts of ``source``, or None (no entry, an entry that is not exactly valid facts)."""
    text = cache.read(_FACTS, key)
    if text is None:
        return None
    try:
        facts = _facts_json.loads_record(text, ModuleFacts)
    except _facts_json.InvalidFacts:
        return None
    same_file = (facts.path, facts.module, facts.is_package) == (source.relative, source.module, source.is_package)
    return facts if same_file else None


def store_facts(cache: FactsCache, key: str, facts: ModuleFacts) -> None:
    cache.write(_FACTS, key, _facts_json.dumps(facts))


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
        if isinstance(failure.__cause__, MemoryError):
            facts = _too_large(job[0])
        else:
            facts = Problem(job[0], ProblemKind.INTERNAL, f"{failure}; please report it")
    except MemoryError:
        facts = _too_large(job[0])
    except Exception as error:  # noqa: BLE001 - the same, for a failure outside the indexer's own stages
        facts = Problem(job[0], ProblemKind.INTERNAL, f"{IndexFailure('indexing', error)}; please report it")
    return facts, time.perf_counter() - started


def _too_large(path: str) -> Problem:
    return Problem(
        path,
        ProblemKind.TOO_LARGE,
        f"not analysed: indexing it needs more than {_in_units(LARGE_FILE_MEMORY)} of memory; "
        "leave it out with `exclude` or `max-file-size` if it is generated",
    )


def _in_units(size: int) -> str:
    return f"{size / 1024**3:g} GiB" if size >= 1024**3 else f"{size / 1024**2:g} MiB"


def _bound_memory(limit: int) -> None:
    """A large file's worker: the heap and mappings it adds to what it inherits stay under ``limit`` bytes
    (where the platform can say so; the worker is apart from the run either way)."""
    try:
        import resource
    except ImportError:
        return
    kind = getattr(resource, "RLIMIT_DATA", None)
    if kind is None:
        return
    _, hard = resource.getrlimit(kind)
    bound = _data_size() + limit
    resource.setrlimit(kind, (bound if hard == resource.RLIM_INFINITY else min(bound, hard), hard))


def _data_size() -> int:
    """The process's data size (heap and private mappings, what ``RLIMIT_DATA`` counts), 0 where unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _index_alone(job: Tuple[str, str, bool, bytes]) -> Tuple[Union[ModuleFacts, Problem], float]:
    """A large file indexed in a worker process of its own, its memory bounded: a worker that runs out of it or
    dies makes that file a reported error and the run goes on."""
    started = time.perf_counter()
    try:
        with ProcessPoolExecutor(max_workers=1, initializer=_bound_memory, initargs=(LARGE_FILE_MEMORY,)) as pool:
            return pool.submit(_index_batch, [job]).result()[0]
    except (BrokenProcessPool, MemoryError):
        return _too_large(job[0]), time.perf_counter() - started


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
            cached = load_facts(cache, key, source) if cache is not None else None
            if cached is None:
                pending.append((len(slots), key, (source.relative, source.module, source.is_package, data)))
            elif timings is not None:
                timings[source.relative] = None
            slots.append(cached)
    large = [job for _, _, job in pending if len(job[3]) > LARGE_FILE_BYTES]
    jobs_for_work = [job for _, _, job in pending if len(job[3]) <= LARGE_FILE_BYTES]
    computed: List[Tuple[Union[ModuleFacts, Problem], float]] = []
    if jobs > 1 and len(pending) >= _PARALLEL_THRESHOLD:
        batches = [jobs_for_work[start : start + _BATCH] for start in range(0, len(jobs_for_work), _BATCH)]
        with ProcessPoolExecutor(max_workers=jobs) as pool, without_cycle_collection(long_lived=True):  # unpickled
            for batch in pool.map(_index_batch, batches):
                computed.extend(batch)
                if progress is not None:
                    progress(len(computed), len(pending))
    else:

        def index_all() -> None:  # on one deep-stack thread, not one per file
            for job in jobs_for_work:
                computed.append(_index_one(job))
                if progress is not None:
                    progress(len(computed), len(pending))

        on_deep_stack(index_all)
    indexed = dict(zip((job[0] for job in jobs_for_work), computed))
    for job in large:
        indexed[job[0]] = _index_alone(job)
        if progress is not None:
            progress(len(indexed), len(pending))
    for slot, key, job in pending:
        facts, seconds = indexed[job[0]]
        if timings is not None:
            timings[job[0]] = seconds
        if isinstance(facts, Problem):
            errors.append(facts)
            continue
        slots[slot] = facts
        if cache is not None:
            store_facts(cache, key, facts)
    return Indexed([facts for facts in slots if facts is not None], errors, cache.warnings if cache else [])
