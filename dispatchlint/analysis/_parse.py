"""Parse a module where nothing in it can end the run: Python's own compiler first, libcst on a deep stack after.

libcst's native parser has no nesting limit of its own: a file of 10,000 unary minus signs or 2,000 nested
brackets overflows its stack and kills the process, and its visitors recurse once per level of nesting. CPython
does have limits (200 nested brackets, 100 indentation levels, a parser stack, a compiler recursion bound), so a
file is first compiled as Python would compile it, at the interpreter's own recursion limit: what ``compile()``
rejects is a syntax error (DL001), whatever libcst would make of it, and what it accepts is nested no deeper
than about 3,000 levels. libcst and the indexer then run on a thread whose stack and recursion limit are sized
for that depth, so any file Python accepts is analysed, never crashed on.
"""

from __future__ import annotations

import gc
import io
import os
import re
import sys
import threading
import tokenize
import warnings
from contextlib import contextmanager
from typing import Callable, Iterator, List, Optional, TypeVar

from dispatchlint.analysis.locations import ParseError, ParseErrorKind, Span

_T = TypeVar("_T")

#: The deep thread's stack (reserved, committed only as used) and the recursion limit it can carry: about
#: 6 KiB of stack per Python frame, far more than an interpreter frame called through C takes.
_DEEP_STACK_BYTES = 256 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 40_000
#: ``sys.getrecursionlimit()`` of a fresh interpreter: the limit ``python file.py`` compiles under.
_PYTHON_RECURSION_LIMIT = 1000


def python_rejects(source: bytes, path: str) -> Optional[ParseError]:
    """Why ``compile()`` refuses ``source`` (Python's message and position), or None when Python accepts it.

    Compiled at the recursion limit a script runs under (CPython's default), whatever the caller's: the
    compiler's own bound is derived from it, so that is what Python accepts, and a raised bound would let the
    compiler overflow the C stack. Warnings about the code (an invalid escape sequence) are the project's
    business, not the run's output.
    """
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(_PYTHON_RECURSION_LIMIT)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        line = error.lineno or 1
        column = error.offset or 1
        return ParseError(error.msg, Span(line, column, line, column), ParseErrorKind.PYTHON)
    except ValueError as error:  # a NUL byte, before Python 3.12
        return ParseError(str(error), Span(1, 1, 1, 1), ParseErrorKind.PYTHON)
    except MemoryError:
        return ParseError(
            "too complex for Python's parser (its stack overflowed)", Span(1, 1, 1, 1), ParseErrorKind.PYTHON
        )
    except RecursionError:
        return ParseError("nested too deeply for Python's compiler", Span(1, 1, 1, 1), ParseErrorKind.PYTHON)
    finally:
        sys.setrecursionlimit(limit)
    return None


class TooComplex(Exception):
    """A file Python accepts that libcst would not parse in any reasonable time: the message says what in it."""


#: The statements libcst parses by backtracking without memo (its grammar caches expressions, not patterns nor
#: deletion targets): each bracket nested in them multiplies its time, by up to 5 for a tuple pattern (a pattern
#: twelve tuples deep took 51 s). How deep each may nest: the deepest take a fraction of a second.
_BACKTRACKING_NESTING = {"case": 8, "del": 16}
_BACKTRACKING_STATEMENT = re.compile(rb"(?:^|[:;])[ \t]*(?:case|del)\b", re.MULTILINE)
_OPENING, _CLOSING = "([{", ")]}"
#: Tokens after which a statement starts (a ``:`` or ``;`` only outside brackets).
_STATEMENT_BOUNDARIES = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)


def refuse_exponential_parse(source: bytes) -> None:
    """Raise :class:`TooComplex` when ``source`` (which Python accepts) nests brackets in a ``case`` pattern or a
    ``del`` target deeper than libcst parses in time (``_BACKTRACKING_NESTING``), read from Python's own tokens.
    Most files hold neither statement and are not tokenized."""
    if not _BACKTRACKING_STATEMENT.search(source):
        return
    statement, line, depth, deepest = "", 0, 0, 0
    at_start = True
    try:
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            kind, text = token.type, token.string
            if statement:
                if kind == tokenize.OP and text in _OPENING:
                    depth += 1
                    deepest = max(deepest, depth)
                elif kind == tokenize.OP and text in _CLOSING:
                    depth -= 1
                ends = depth == 0 and (
                    (statement == "case" and (text == ":" or (kind == tokenize.NAME and text == "if")))
                    or (statement == "del" and (kind == tokenize.NEWLINE or text == ";"))
                )
                if not ends:
                    continue
                if deepest > _BACKTRACKING_NESTING[statement]:
                    what = "pattern" if statement == "case" else "target"
                    raise TooComplex(
                        f"a `{statement}` {what} nested {deepest} brackets deep (line {line}), which libcst's parser "
                        f"takes exponential time on (more than {_BACKTRACKING_NESTING[statement]} deep)"
                    )
                statement = ""
            elif kind in (tokenize.COMMENT, tokenize.NL):
                continue  # not part of any statement: the next token starts one or not as before
            elif at_start and kind == tokenize.NAME and text in _BACKTRACKING_NESTING:
                statement, line, depth, deepest = text, token.start[0], 0, 0
            elif kind == tokenize.OP and text in _OPENING:
                depth += 1
            elif kind == tokenize.OP and text in _CLOSING:
                depth -= 1
            at_start = kind in _STATEMENT_BOUNDARIES or (depth == 0 and text in (":", ";"))
    except (tokenize.TokenError, SyntaxError):
        return  # what the tokenizer refuses, libcst's own parser reports


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
