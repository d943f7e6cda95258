"""``dispatchlint --fix``: rewrite a project to the single wrapped-table pattern (``docs/defect.md``).

The pipeline, one small module each:

- ``_fixable``: for each reported finding's subject, whether a fix exists, decided once per run from the facts
  and the shapes recorded at index time (``_context``); nothing is parsed;
- ``_tables``, ``_chains``, ``_parses``, ``_reorder``: one fix kind each, its decision and its record;
- ``_shape``, ``_wrapping``: how executors take their arguments, what repairs them and which imports that needs;
- ``_edits``, ``_imports``, ``_codegen``: the libcst edits of each fix, where imports go, and the generated code
  in the module's own style;
- ``_apply``: edits per file, applied in one pass, re-parsed and compiled before anything is written;
- ``_run``: from the findings a run chose to the new contents (the only place files are parsed);
  ``_write``: all-or-none atomic replacement; ``_journal``: what makes it all or none when the process is killed;
  ``_lock``: one ``--fix`` of a project at a time; ``_diff``: ``--diff`` output; ``_hunks``: a fix as text
  edits, for the machine formats.
"""

import importlib
from typing import TYPE_CHECKING

from dispatchlint.fix._dependency import DECLARATION_FILES
from dispatchlint.fix._diff import render_diff
from dispatchlint.fix._errors import FixError
from dispatchlint.fix._journal import JOURNAL_NAME, Recovery
from dispatchlint.fix._lock import fix_lock
from dispatchlint.fix._hunks import text_edits
from dispatchlint.fix._write import recover_interrupted, stopping_rolls_back, write_all

if TYPE_CHECKING:
    from dispatchlint.fix._fixable import Decision, Fixability
    from dispatchlint.fix._run import FixOutcome, FixPreview, plan_fixes

#: The fix stage itself, by the module that holds each name: imported on first use. ``Fixability`` reads the
#: linked project (only a run that links one needs it); ``plan_fixes`` and the previews load libcst (only a run
#: that rewrites files, or shows how, needs them). What stays is what the command needs to be ready to fix.
_STAGE = {
    "Decision": "_fixable",
    "Fixability": "_fixable",
    "FixOutcome": "_run",
    "FixPreview": "_run",
    "plan_fixes": "_run",
}


def __getattr__(name: str) -> object:
    if name in _STAGE:
        module = importlib.import_module(f"{__name__}.{_STAGE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DECLARATION_FILES",
    "Decision",
    "FixError",
    "JOURNAL_NAME",
    "Recovery",
    "FixOutcome",
    "Fixability",
    "fix_lock",
    "FixPreview",
    "plan_fixes",
    "recover_interrupted",
    "render_diff",
    "stopping_rolls_back",
    "text_edits",
    "write_all",
]
