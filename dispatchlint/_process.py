"""Control of the analysing process: a thread whose stack carries any nesting Python accepts, and a cyclic
garbage collector that runs only where garbage can be.

libcst's parser and visitors, and the indexer, recurse once per level of nesting; the main thread's stack cannot
carry the deepest module Python compiles, so they run on a thread sized for it. The facts of a run are many small
long-lived objects: the collector is paused while they are made and then looks only at what came after them.
Every entry point (the command line, the library API, the language server) runs its work through these.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, List, TypeVar

_T = TypeVar("_T")

#: The deep thread's stack (reserved, committed only as used) and the recursion limit it can carry: about
#: 6 KiB of stack per Python frame, far more than an interpreter frame called through C takes.
_DEEP_STACK_BYTES = 256 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 40_000


_DEEP_STACK_THREAD = "dispatchlint-deep-stack"


def on_deep_stack(function: Callable[[], _T]) -> _T:
    """``function()`` run on a thread with a stack deep enough for any module Python accepts (the caller waits);
    its result, or the exception it raised. The thread starts at the interpreter's recursion limit: compile
    first, then raise it with :func:`deep_recursion`. Already on such a thread (a whole run, a worker's batch of
    files), ``function`` runs right there: a thread per file was a fifth of indexing a small module.

    A Ctrl-C while the caller waits is raised in ``function`` too, which is given half a second to unwind; the caller
    then raises it."""
    if threading.current_thread().name == _DEEP_STACK_THREAD:
        return function()
    results: List[_T] = []
    failures: List[BaseException] = []

    def target() -> None:
        try:
            results.append(function())
        except BaseException as error:  # noqa: BLE001 - handed back to the caller's thread as it is
            failures.append(error)

    previous_stack = threading.stack_size(_DEEP_STACK_BYTES)
    try:
        thread = threading.Thread(target=target, name=_DEEP_STACK_THREAD, daemon=True)
        thread.start()
    finally:
        threading.stack_size(previous_stack)
    try:
        thread.join()
    except KeyboardInterrupt:  # only the caller's thread is told of a Ctrl-C: the work is told in turn
        _interrupt(thread)
        thread.join(_INTERRUPTED_SECONDS)
        raise
    if failures:
        raise failures[0]
    return results[0]


#: How long an interrupted deep-stack thread is given to unwind (kill its workers, release its locks).
_INTERRUPTED_SECONDS = 0.5


def _interrupt(thread: threading.Thread) -> None:
    """Raise :class:`KeyboardInterrupt` in ``thread`` at its next step in Python code (CPython's thread-state
    call; elsewhere the thread is left to end with the process)."""
    try:
        import ctypes

        raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):
        return
    if thread.ident is not None:
        raise_in(ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt))


@contextmanager
def deep_recursion() -> Iterator[None]:
    """A recursion limit for libcst's visitors and the indexer on nesting as deep as Python accepts; only on the
    thread of :func:`on_deep_stack` (the main thread's stack could not carry it), which the caller waits for."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _DEEP_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


#: How many :func:`collecting_only_new_objects` blocks are open (on any thread): only the outermost unfreezes.
_frozen_blocks = 0
#: Whether the open blocks freeze objects: not in a process that had frozen objects of its own when the
#: outermost block opened (a program calling the analysis as a library), whose objects an unfreeze would hand
#: back to the collector.
_freezing = False
#: Forked while a freezing block was open (a worker of the run): what it inherited frozen is the run's.
_forked_while_freezing = False


@contextmanager
def without_cycle_collection(long_lived: bool = False) -> Iterator[None]:
    """The cyclic garbage collector paused while a module is parsed, or facts are decoded.

    A libcst tree is hundreds of thousands of objects per 100 KB of source, none of them in a reference cycle
    (a node holds its children, never its parent): the collector's full passes, triggered as the tree grows,
    traverse all of it again and again and free nothing, up to half the time of parsing a large module. The
    same holds for a project's facts read from the cache or from the workers (millions of records that all
    stay alive): half the time of reading the cache. What is freed is freed by reference counting; the
    collector resumes (if it ran before) when the work is done.

    ``long_lived``: what was made stays alive (facts), and inside a :func:`collecting_only_new_objects` block it
    joins the frozen objects before the collector resumes, whose first pass would traverse all of it at once.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if long_lived and _frozen_blocks and _freezing:
            gc.freeze()
        if enabled:
            gc.enable()


@contextmanager
def collecting_only_new_objects() -> Iterator[None]:
    """The cyclic garbage collector running over the objects made from now on only: those that exist (a parsed
    tree and its positions; a project's facts while it is linked) are frozen out of its reach until the block
    ends. The collector's full passes over a project's facts were half the time of linking it.

    Blocks nest: an inner block freezes what exists when it opens too (the facts of every file, before they are
    linked), and everything stays frozen until the outermost block ends.

    Indexing does make cyclic garbage (each ``ast.literal_eval`` libcst runs to read a string literal leaves a
    cycle holding that literal's AST), which a paused collector keeps to the end: 2 GB for 470 KB of constants
    built from string literals, instead of 0.4 GB.
    """
    global _frozen_blocks, _freezing
    enabled = gc.isenabled()
    if not _frozen_blocks:
        _freezing = _forked_while_freezing or gc.get_freeze_count() == 0
    else:  # what is garbage already is not kept to the end (the cycles of the file indexed last)
        gc.collect(1)
    if _freezing:
        gc.freeze()
    gc.enable()
    _frozen_blocks += 1
    try:
        yield
    finally:
        _frozen_blocks -= 1
        if not enabled:
            gc.disable()
        if not _frozen_blocks and _freezing:
            gc.unfreeze()


def _forget_frozen_blocks() -> None:
    """A forked worker opens blocks of its own: the parent's stay frozen in it, and are not the child's to end."""
    global _frozen_blocks, _forked_while_freezing
    _forked_while_freezing = bool(_frozen_blocks) and _freezing
    _frozen_blocks = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_frozen_blocks)
