"""Index files once per content: facts from the per-user cache (``dispatchlint/indexing/facts_cache.py``), and the
files it lacks indexed on worker processes that can be stopped (``dispatchlint/indexing/_workers.py``): each file
is given a time, so that no file can hang the run, and the run's own process never waits in libcst's parser,
which a Ctrl-C could not interrupt."""

from __future__ import annotations

import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from dispatchlint.indexing import facts_json
from dispatchlint._process import without_cycle_collection
from dispatchlint.indexing._parse import TooComplex
from dispatchlint.indexing.grammar import Grammar
from dispatchlint.indexing._workers import LossKind, Lost, run_jobs, usable_cpus
from dispatchlint.indexing.facts_cache import FactsCache, ReadFile
from dispatchlint.discovery.files import SourceFile
from dispatchlint.indexing.facts import ModuleFacts
from dispatchlint.problems import Problem, ProblemKind

#: The kind of entry that holds one file's facts.
_FACTS = "facts"
#: Files a worker process is started for: fewer, and a process costs more than it saves.
_FILES_PER_WORKER = 32
#: A file larger than this (a hand-written module of a megabyte takes libcst seconds and hundreds of megabytes)
#: is indexed alone, in a worker process of its own whose memory is bounded, so that one file cannot take the
#: run's memory, and its failure is that file's reported error, not the run's.
LARGE_FILE_BYTES = 1_000_000
#: The memory (heap and mappings, its deep stack among them) a large file's worker may add to what it starts with.
LARGE_FILE_MEMORY = 4 * 1024**3
#: The time a file is given: this many seconds, and one more per ``FILE_BYTES_PER_SECOND`` of it (libcst indexes
#: some 150 KB a second on a loaded machine: the bound is ten times what a hand-written file needs, and a file
#: that takes longer is one of the constructs libcst parses in exponential time).
FILE_SECONDS = 20.0
FILE_BYTES_PER_SECOND = 20_000

#: What a file Python accepts can hold that libcst's tree nests deeper than any walk of it can follow.
_TOO_DEEP = (
    "nested deeper than its analysis can follow (a chain of thousands of `or` or `and` operands, or of dotted "
    "names, which libcst nests one level per operand)"
)

_Job = Tuple[str, str, bool, bytes, Grammar]
_Outcome = Tuple[Union[ModuleFacts, Problem], float]


def load_facts(cache: FactsCache, key: str, source: SourceFile) -> Optional[ModuleFacts]:
    """The stored facts of ``source``, or None (no entry, an entry that is not exactly valid facts)."""
    text = cache.read(_FACTS, key)
    if text is None:
        return None
    try:
        facts = facts_json.loads_record(text, ModuleFacts)
    except facts_json.InvalidFacts:
        return None
    same_file = (facts.path, facts.module, facts.is_package) == (source.relative, source.module, source.is_package)
    return facts if same_file else None


def store_facts(cache: FactsCache, key: str, facts: ModuleFacts) -> None:
    cache.write(_FACTS, key, facts_json.dumps(facts))


class Indexed(NamedTuple):
    """What indexing a project's files gives."""

    modules: List[ModuleFacts]
    #: Files that could not be read, were skipped or that the analyzer failed on, one problem each.
    problems: List[Problem]
    #: A cache that could not be used; the run does not fail for it.
    warnings: List[str]


def _index_one(job: _Job) -> _Outcome:
    """A file's facts, or why indexing it failed (a bug of ours must not end the run for the other files), and
    the seconds it took."""
    from dispatchlint.indexing.indexer import IndexFailure, index_source  # libcst loads only when a file is indexed

    started = time.perf_counter()
    try:
        facts: Union[ModuleFacts, Problem] = index_source(*job)
    except TooComplex as reason:
        facts = _too_complex(job[0], str(reason))
    except IndexFailure as failure:  # reported per file, with exit code 2
        if isinstance(failure.__cause__, MemoryError):
            facts = _too_large(job[0])
        elif isinstance(failure.__cause__, RecursionError):
            facts = _too_complex(job[0], _TOO_DEEP)
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


def _too_complex(path: str, what: str) -> Problem:
    return Problem(path, ProblemKind.TOO_COMPLEX, f"not analysed: {what}; leave it out with `exclude`")


def _in_units(size: int) -> str:
    return f"{size / 1024**3:g} GiB" if size >= 1024**3 else f"{size / 1024**2:g} MiB"


def _seconds_for(job: _Job) -> float:
    return FILE_SECONDS + len(job[3]) / FILE_BYTES_PER_SECOND


def _lost(job: _Job, loss: Lost, large: bool) -> _Outcome:
    """The problem of a file whose worker gave nothing."""
    if loss.kind is LossKind.TIMED_OUT:
        problem = _too_complex(
            job[0],
            f"indexing it took longer than {loss.detail}, the time a file of its size is given (libcst's parser "
            "takes exponential time on some nested constructs)",
        )
        return problem, _seconds_for(job)
    if large:
        return _too_large(job[0]), 0.0
    message = f"not analysed: the process indexing it died, twice ({loss.detail}); please report it"
    return Problem(job[0], ProblemKind.WORKER_DIED, message), 0.0


#: A module of the shapes most files have (imports, a table of functions, a dispatch, a class, a comprehension),
#: indexed once in the run's own process before workers are forked from it (see :func:`_warm_up`).
_WARM_UP = b"""import json
from typing import Any, Dict


class Agent:
    def run(self, name: str, arguments: str) -> Any:
        args: Dict[str, Any] = json.loads(arguments)
        return TOOLS[name](self, **{key: value for key, value in args.items() if key})


def search(agent: Agent, query: str = "", limit: int = 5) -> str:
    return f"{query}: {limit}" if query else str([limit, (agent, -1)])


TOOLS = {"search": search}
"""
_warmed_up = False


def _warm_up() -> None:
    """Index :data:`_WARM_UP` here, once per process: the first file a process indexes loads libcst's native
    parser and fills the indexer's caches (by node type, of compiled patterns), most of the time of indexing a
    small file. Workers are forked from this process where the platform forks, so every worker then starts with
    them, and a library or a server that analyses again and again pays for them once."""
    global _warmed_up
    if not _warmed_up:
        _warmed_up = True
        _index_one(("warm_up.py", "warm_up", False, _WARM_UP, Grammar.INTERPRETER))


def index_read(
    files: Sequence[ReadFile],
    cache: Optional[FactsCache],
    jobs: int,
    timings: Optional[Dict[str, Optional[float]]] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    grammar: Grammar = Grammar.INTERPRETER,
) -> Indexed:
    """Facts for every file read (in order): from the cache, else indexed in worker processes (up to ``jobs``,
    and at most one per CPU and per ``_FILES_PER_WORKER`` files). ``timings`` receives the seconds each file took
    to index (None: from the cache); ``progress`` is told after each file indexed how many of how many are done;
    ``grammar`` decides what is not Python (:func:`grammar_for` the project's target version)."""
    errors: List[Problem] = []
    slots: List[Optional[ModuleFacts]] = []
    pending: List[Tuple[int, str, _Job]] = []
    with without_cycle_collection(long_lived=True):  # decoded facts: millions of records alive, in no cycle
        for source, data, key in files:
            cached = load_facts(cache, key, source) if cache is not None else None
            if cached is None:
                pending.append((len(slots), key, (source.relative, source.module, source.is_package, data, grammar)))
            elif timings is not None:
                timings[source.relative] = None
            slots.append(cached)
    indexed: Dict[str, _Outcome] = {}
    if pending:
        _warm_up()

    def index(work: List[_Job], processes: int, large: bool) -> None:
        def finished(number: int, outcome: Union[_Outcome, Lost]) -> None:
            job = work[number]
            indexed[job[0]] = _lost(job, outcome, large) if isinstance(outcome, Lost) else outcome
            if progress is not None:
                progress(len(indexed), len(pending))

        with without_cycle_collection(long_lived=True):  # facts unpickled: many records alive, in no cycle
            run_jobs(_index_one, work, processes, _seconds_for, finished, LARGE_FILE_MEMORY if large else None)

    small = [job for _, _, job in pending if len(job[3]) <= LARGE_FILE_BYTES]
    index(small, min(jobs, usable_cpus(), len(small) // _FILES_PER_WORKER), large=False)
    index([job for _, _, job in pending if len(job[3]) > LARGE_FILE_BYTES], 1, large=True)  # each alone, bounded
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
