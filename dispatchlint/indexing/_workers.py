"""Worker processes that can be stopped: each job is given a time, and a worker that takes longer is killed; a
worker that dies costs only the job it had; an interrupt of the run stops every worker at once.

libcst's parser is native code that holds the interpreter's lock for as long as it runs: a thread cannot be
stopped in it, and a Ctrl-C waits for it (51 s for a match pattern twelve tuples deep). So no file is parsed in
the run's own process. The run waits on its workers' pipes, a tenth of a second at a time, so that a timeout or
an interrupt (delivered to the waiting thread, see :func:`dispatchlint.indexing._parse.on_deep_stack`) ends the
wait; the workers ignore Ctrl-C themselves and are killed by the run, whatever they are doing.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import deque
from dataclasses import dataclass
from enum import Enum
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Deque, List, Optional, Sequence, Set, TypeVar, Union

from dispatchlint._process import on_deep_stack

try:  # loaded here, before workers are forked, not by each of them
    import resource
except ImportError:  # not on Windows: workers are bounded by the run alone there
    resource = None  # type: ignore[assignment]

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")

#: How long the run waits on its workers' pipes at a time: how soon it notices an interrupt.
_POLL_SECONDS = 0.1


class LossKind(Enum):
    #: The job ran past its time: its worker was killed.
    TIMED_OUT = "timed-out"
    #: The worker died running it (killed by the system, or a crash), on each try.
    DIED = "died"


@dataclass(frozen=True)
class Lost:
    """A job that gave no result, and why."""

    kind: LossKind
    #: TIMED_OUT: the seconds it was given; DIED: how the worker ended (``killed by SIGKILL``, ``exit code 3``).
    detail: str


@dataclass
class _Worker:
    process: Any  # multiprocessing's Process of the context in use
    connection: Connection
    #: The index of the job it runs (-1: none), and when that job's time runs out.
    job: int = -1
    deadline: float = 0.0


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, inside a container too), at least one."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def run_jobs(
    work: Callable[[_Job], _Result],
    jobs: Sequence[_Job],
    processes: int,
    seconds: Callable[[_Job], float],
    done: Callable[[int, Union[_Result, Lost]], None],
    memory: Optional[int] = None,
) -> None:
    """``work(job)`` for each of ``jobs`` on up to ``processes`` (at least one) worker processes, started as the
    jobs need them; ``done`` is told each job's index and what it gave, or why it gave nothing, as they finish.

    ``seconds(job)`` is the time a job is given. A job whose worker dies is tried once more in a new worker (the
    system may have killed it for another's memory), unless ``memory`` is set: then each job runs in a worker of
    its own that may add at most ``memory`` bytes to what it starts with, and dying is running out of it.
    """
    processes = max(1, processes)
    queue: Deque[int] = deque(range(len(jobs)))
    retried: Set[int] = set()
    idle: List[_Worker] = []
    busy: List[_Worker] = []

    def lose(worker: _Worker, loss: Lost) -> None:
        busy.remove(worker)
        _stop(worker)
        if loss.kind is LossKind.DIED and memory is None and worker.job not in retried:
            retried.add(worker.job)
            queue.appendleft(worker.job)
        else:
            done(worker.job, loss)

    try:
        while queue or busy:
            while queue and len(busy) < processes:
                worker = idle.pop() if idle else _start(work, memory)
                worker.job = queue.popleft()
                worker.deadline = time.monotonic() + seconds(jobs[worker.job])
                busy.append(worker)
                try:
                    worker.connection.send((jobs[worker.job], seconds(jobs[worker.job])))
                except OSError:  # it died while idle
                    lose(worker, Lost(LossKind.DIED, _ending(worker)))
            if not busy:
                continue
            now = time.monotonic()
            ready = wait([worker.connection for worker in busy], min(_POLL_SECONDS, _time_left(busy, now)))
            now = time.monotonic()
            for worker in list(busy):
                if worker.connection in ready:
                    try:
                        result = worker.connection.recv()
                    except (EOFError, OSError):
                        lose(worker, Lost(LossKind.DIED, _ending(worker)))
                        continue
                    busy.remove(worker)
                    done(worker.job, result)
                    if memory is None:
                        idle.append(worker)
                    else:
                        _stop(worker)
                elif now >= worker.deadline:
                    lose(worker, Lost(LossKind.TIMED_OUT, f"{seconds(jobs[worker.job]):.0f} s"))
    finally:  # done, failed, or interrupted: no worker outlives the call
        for worker in idle + busy:
            _kill(worker)
        for worker in idle + busy:  # reaped once all are killed: their memory is freed at the same time
            worker.process.join()


def _time_left(busy: Sequence[_Worker], now: float) -> float:
    return max(0.0, min(worker.deadline for worker in busy) - now)


def _start(work: Callable[[Any], Any], memory: Optional[int]) -> _Worker:
    context = multiprocessing.get_context()
    ours, theirs = context.Pipe()
    process = context.Process(target=_serve, args=(theirs, work, memory), name="dispatchlint-worker", daemon=True)
    process.start()
    theirs.close()
    return _Worker(process, ours)


def _stop(worker: _Worker) -> None:
    """Kill the worker (idle, busy or dead already) and reap it."""
    _kill(worker)
    worker.process.join()


def _kill(worker: _Worker) -> None:
    worker.connection.close()
    if worker.process.is_alive():
        worker.process.kill()


def _ending(worker: _Worker) -> str:
    """How a dead worker ended."""
    worker.connection.close()
    worker.process.join()
    code = worker.process.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _serve(connection: Connection, work: Callable[[Any], Any], memory: Optional[int]) -> None:
    """A worker: run the jobs the pipe brings, one after the other, on one deep-stack thread, until it closes or
    the run that started it is gone.

    A run that is killed outright (SIGKILL) cannot kill its workers, and the pipe does not close for them (every
    worker forked holds the run's ends of the pipes of those forked before it): so a worker looks up between jobs
    to see whether its parent is still there, and bounds its own CPU time for each job by the time the job is
    given, so that no worker outlives its run by more than that.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the run's to handle: it kills its workers
    if memory is not None:
        bound_memory(memory)
    parent = os.getppid()

    def serve() -> None:
        while os.getppid() == parent:
            if not connection.poll(_ORPHAN_SECONDS):
                continue
            try:
                job, seconds = connection.recv()
            except EOFError:
                return
            _bound_cpu(seconds + _ORPHAN_SECONDS)
            connection.send(work(job))

    on_deep_stack(serve)


#: How often an idle worker looks up to see whether its run is still there, and how much CPU time a job may use
#: beyond its time (the run kills it at its time; the bound is for a run that is gone).
_ORPHAN_SECONDS = 1.0


def _bound_cpu(seconds: float) -> None:
    """The process may use ``seconds`` more of CPU time, then the system ends it (where the platform can say)."""
    if resource is None:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    bound = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (bound if hard == resource.RLIM_INFINITY else min(bound, hard), hard))


def bound_memory(limit: int) -> None:
    """The heap and mappings the process adds to what it has stay under ``limit`` bytes (where the platform can
    say so; the worker is apart from the run either way)."""
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
