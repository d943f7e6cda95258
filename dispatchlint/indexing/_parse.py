"""Parse a module where nothing in it can end the run: Python's own compiler first, libcst on a deep stack after.

libcst's native parser has no nesting limit of its own: a file of 10,000 unary minus signs or 2,000 nested
brackets overflows its stack and kills the process, and its visitors recurse once per level of nesting. CPython
does have limits (200 nested brackets, 100 indentation levels, a parser stack, a compiler recursion bound), so a
file is first compiled as Python would compile it, at the interpreter's own recursion limit: what ``compile()``
rejects is a syntax error (DL001), whatever libcst would make of it (unless the project targets a newer Python:
see :mod:`dispatchlint.indexing.grammar`), and what it accepts is nested no deeper
than about 3,000 levels. libcst and the indexer then run on a thread whose stack and recursion limit are sized
for that depth, so any file Python accepts is analysed, never crashed on.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
import warnings
from typing import Optional

from dispatchlint.locations import ParseError, ParseErrorKind, Span

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


