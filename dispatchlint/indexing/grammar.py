"""Which grammar decides that a file is not Python: the running interpreter's, or a newer one the project targets.

A project that runs on Python 3.12 and newer may nest an f-string's own quotes; Python 3.11's compiler rejects
that, so the same project would be a syntax error under one interpreter and clean under another. Its target
version (``target-version``, else ``[project] requires-python``) says which grammar applies.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Optional, Tuple


class Grammar(Enum):
    """What decides that a file is not Python."""

    #: The running interpreter's compiler (``compile()``), which also bounds the file's nesting.
    INTERPRETER = "interpreter"
    #: libcst's newest grammar, for what the compiler rejects: the project targets a newer Python than the one
    #: running (an f-string nesting its own quotes is valid from 3.12). Such a file's nesting is not bounded by
    #: Python first; a file that overflows libcst's stack kills its worker process and is reported on its own.
    NEWEST = "newest"


def grammar_for(target_version: Optional[Tuple[int, int]]) -> Grammar:
    """The grammar a project that runs on ``target_version`` and newer (None: not said) is judged by here."""
    newer = target_version is not None and target_version > sys.version_info[:2]
    return Grammar.NEWEST if newer else Grammar.INTERPRETER
