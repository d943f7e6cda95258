"""``dispatchlint --fix``: rewrite a project to the single wrapped-table pattern (``docs/defect.md``).

The pipeline, one small module each:

- ``_decide``: for each finding, whether a fix exists (rules ask, to set ``fixable`` and explain when not);
- ``_tables``, ``_chains``, ``_parses``, ``_reorder``: one fix kind each, deciding from the linked project and
  registering libcst edits;
- ``_shape``, ``_wrapping``, ``_imports``, ``_codegen``: how executors take their arguments, what repairs them,
  which imports that needs, and the generated code in the module's own style;
- ``_plan``: edits per file, applied in one pass, re-parsed and compiled before anything is written;
- ``_run``: from the findings a run chose to the new contents; ``_write``: all-or-none atomic replacement;
  ``_lock``: one ``--fix`` of a project at a time;
  ``_diff``: ``--diff`` output; ``_hunks``: a fix as text edits, for the machine formats.
"""

from dispatchlint.fix._decide import Decision, bind, gate_decision, parse_decision, site_decision, table_decision
from dispatchlint.fix._diff import render_diff
from dispatchlint.fix._lock import fix_lock
from dispatchlint.fix._hunks import text_edits
from dispatchlint.fix._run import FixOutcome, plan_fixes
from dispatchlint.fix._source import FixError
from dispatchlint.fix._write import write_all

__all__ = [
    "Decision",
    "FixError",
    "FixOutcome",
    "bind",
    "fix_lock",
    "gate_decision",
    "parse_decision",
    "plan_fixes",
    "render_diff",
    "site_decision",
    "table_decision",
    "text_edits",
    "write_all",
]
