"""DL001 parse-error."""

from __future__ import annotations

from typing import Iterable

from dispatchlint.indexing.facts import ParseErrorKind
from dispatchlint.linking import Project
from dispatchlint.rules.rule import Case, Finding, Rule


class ParseError(Rule):
    """## What it does
    Reports a Python file that does not compile (what `compile()` rejects: a syntax error, a NUL byte, more
    than 200 nested brackets, nesting too deep for Python's parser), and, distinctly, a file Python accepts
    but libcst, the parser dispatchlint analyses with, does not. A project that targets a newer Python than
    the one running dispatchlint (`target-version`, or `requires-python`) has its files judged by libcst's
    newest grammar instead, so that a Python 3.12 f-string is not an error under Python 3.11.

    ## Why is this bad?
    A file that does not parse cannot be analysed: a dispatch path or a table in it is invisible, so the
    findings for the rest of the project may be incomplete. Every other file is still checked.

    ## Example
    ```python
    def broken(:
        pass
    ```

    ## Use instead
    Fix the syntax error (or exclude the file with `exclude` in `[tool.dispatchlint]` if it is not Python).

    ## Fix safety
    No fix is offered.
    """

    code = "DL001"
    name = "parse-error"
    VALID = [Case({"agent/tools.py": "def ok():\n    return 1\n"})]
    INVALID = [Case({"agent/tools.py": "import json\n\ndef broken(:\n    pass\n"}, (("agent/tools.py", 3),))]

    def check(self, project: Project) -> Iterable[Finding]:
        for module in project.broken:
            assert module.parse_error is not None
            error = module.parse_error
            if error.kind is ParseErrorKind.LIBCST:
                message = f"Python accepts this file but libcst cannot parse it, so it is not analysed: {error.message}"
            else:
                message = f"cannot parse: {error.message}"
            yield self.finding(module, error.span, message)
