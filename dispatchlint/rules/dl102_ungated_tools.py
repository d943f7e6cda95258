"""DL102 ungated-tools."""

from __future__ import annotations

from typing import Iterable

from dispatchlint.analysis.link import Project
from dispatchlint.fix import table_decision
from dispatchlint.rules._base import SAFE, Case, Finding, Rule, related

_TOOLS = """
import json

def plan(steps):
    return list(steps)

TOOLS = {"plan": plan}

def run(tool_call):
    return TOOLS[tool_call.name](**json.loads(tool_call.arguments))
"""


class UngatedTools(Rule):
    """## What it does
    Opt-in (`--select DL102`). In a project with no gate at all, reports each executor table that is dispatched
    with the model's raw arguments, once, at its definition.

    ## Why is this bad?
    Nothing repairs mistyped arguments before the tools run. There is no inconsistency between paths (so DL101
    stays silent), but every tool must defend itself, or fail, when a model sends `"42"` for 42 or an array as a
    JSON string.

    ## Example
    ```python
    TOOLS = {"plan": plan}
    TOOLS[tool_call.name](**json.loads(tool_call.arguments))
    ```

    ## Use instead
    Wrap the table with the bundled coercer, given the tools' parameter schemas:
    ```python
    from dispatchlint.runtime import wrap_table
    TOOLS = wrap_table({"plan": plan}, SCHEMAS)
    ```

    ## Fix safety
    The fix needs a schema source: one the analyzer finds in the project, or `schemas = "module:NAME"` in
    `[tool.dispatchlint]`.
    """

    code = "DL102"
    name = "ungated-tools"
    default = False
    VALID = [
        Case(
            {
                "agent/__init__.py": "",
                "agent/gate.py": "def coerce_tool_args(name, args):\n    return args\n",
                "agent/tools.py": _TOOLS.replace(
                    "**json.loads(tool_call.arguments)",
                    "**coerce_tool_args(tool_call.name, json.loads(tool_call.arguments))",
                ).replace("import json", "import json\nfrom agent.gate import coerce_tool_args"),
            }
        )
    ]
    INVALID = [Case({"agent/__init__.py": "", "agent/tools.py": _TOOLS}, (("agent/tools.py", 7),))]

    def check(self, project: Project) -> Iterable[Finding]:
        if project.has_gate:
            return
        for table in project.tool_tables():
            raw_sites = [site for site in project.sites_of(table) if site.unguarded]
            if not raw_sites:
                continue
            paths = ", ".join(f"{site.module.path}:{site.span.line}" for site in raw_sites[:3])
            fix = table_decision(project, table)
            yield self.finding(
                table.module,
                table.definition.span,
                fix.explained(
                    f"tools in `{table.display_name}` run with the model's raw arguments ({paths}) and the project "
                    f"has no gate: wrap the table with `dispatchlint.runtime.wrap_table` and the tools' schemas"
                ),
                [related(site.module, site.span, "raw dispatch") for site in raw_sites[:3]],
                fixable=fix.fixable,
                fix_safety=fix.safety(SAFE),
            )
