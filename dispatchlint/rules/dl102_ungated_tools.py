"""DL102 ungated-tools."""

from __future__ import annotations

from typing import Iterable

from dispatchlint.indexing.facts import SiteKind
from dispatchlint.linking import CallSite, Project, Site, TableSite, display_function, table_of
from dispatchlint.findings import Applicability
from dispatchlint.rules.rule import (
    Case,
    Finding,
    Rule,
    resolved_tool,
    holder,
    mistyped_effect,
    related,
    sites_by_location,
    table_subject,
)

_TOOLS = """
import json

def plan(steps):
    return list(steps)

TOOLS = {"plan": plan}

def run(tool_call):
    return TOOLS[tool_call.name](**json.loads(tool_call.arguments))
"""

#: A function registry injects ``execute_function_wrapper`` into the module's namespace at run time.
_INJECTED = """
import json

def chat(response):
    for tool_call in response["tool_calls"]:
        function_name = tool_call["function"]["name"]
        function_args = json.loads(tool_call["function"]["arguments"])
        execute_function_wrapper(function_name, **function_args)
"""


class UngatedTools(Rule):
    """## What it does
    Opt-in (`--extend-select DL102`). In code that no gate reaches (a project with no gate at all, or a part of it
    that shares no import, package or folder with the part that has one: one app of a collection of
    independent apps) and whose tools do not validate their own arguments, as a framework's tools do, reports
    each call that runs a tool from an executor table with the model's raw arguments; the table is the related
    location, since the fix wraps it once. A registered executor called directly with the wire-parsed arguments,
    and a tool's name handed with them to a function bound at run time (`execute_function_wrapper(name,
    **args)`, injected by a function registry), count too.

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
    `[tool.dispatchlint]`. It declares the dependency it creates, `dispatchlint-runtime` (the runtime alone, with
    no dependencies), in `[project].dependencies`, Poetry's dependencies or `requirements.txt`, or says where to
    add it. It is unsafe, and says why, where DL101's would be.
    """

    code = "DL102"
    name = "ungated-tools"
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
    INVALID = [
        Case({"agent/__init__.py": "", "agent/tools.py": _TOOLS}, (("agent/tools.py", 10),)),
        Case({"agent/__init__.py": "", "agent/chat.py": _INJECTED}, (("agent/chat.py", 8),)),
    ]

    def check(self, project: Project) -> Iterable[Finding]:
        reported = set()
        at = sites_by_location(project)
        for table in project.dispatches.tool_tables():
            for site in project.dispatches.sites_of(table):
                if not site.unguarded or site.reaches_past or (site.module.path, site.span) in reported:
                    continue  # a bypass of a tool's own validation is DL101's, gate or not
                if project.validation_reaches(site.module):
                    continue  # a gate, or tools that validate themselves: not ungated code
                trace = project.taint.trace(site, "sink: the tool runs with them, unrepaired")
                if not trace:
                    continue  # no source of the model's arguments can be shown: nothing to report
                reported.add((site.module.path, site.span))
                called = f"{table.display_name}[{site.key}]" + (f".{site.method}(...)" if site.method else "")
                remedy = (
                    "repair them before the call with `dispatchlint.runtime.coerce_args` and the tool's schema"
                    if site.method
                    else f"wrap `{table.display_name}` (`{table.module.module}`, line {table.definition.span.line}) "
                    f"with `dispatchlint.runtime.wrap_table` and the tools' schemas"
                )
                tools = [(entry.key, "") for entry in table.entries if entry.key is not None]
                effect = mistyped_effect(project, site.module, tools)
                effect = effect or f"the model's raw arguments reach the tools of `{called}`"
                where = f"in `{display_function(site.function)}`" if site.function else "at module level"
                yield self.finding(
                    site.module,
                    site.span,
                    f"{effect}: `{called}` runs {where} and {_no_gate(project)}; {remedy}",
                    [related(table.module, table.definition.span, f"table `{table.display_name}`")],
                    trace,
                    table_subject(table),
                    Applicability.SAFE,
                    also_fixes=[
                        table_subject(other_table)
                        for other_table in map(table_of, at[(site.module.path, site.span)])
                        if other_table is not None
                    ],
                )
        for other in project.sites:
            held = isinstance(other, TableSite) and other.table is None and not other.reaches_past
            if (
                (isinstance(other, CallSite) or held)
                and other.unguarded
                and (other.module.path, other.span) not in reported
                and not project.validation_reaches(other.module)
            ):
                trace = project.taint.trace(other, "sink: the tool runs with them, unrepaired")
                if trace:
                    reported.add((other.module.path, other.span))
                    yield self.finding(other.module, other.span, self._call_message(project, other), trace=trace)

    @staticmethod
    def _call_message(project: Project, site: Site) -> str:
        """A site with no table to wrap: a tool's executor called directly, a name handed to a function bound at
        run time, the callable a tool object holds run through its only entry (``tool.func(**args)``), or a tool
        found by name where no table shows (a scan of what callers hand in, an opaque resolver)."""
        where = f"in `{display_function(site.function)}`" if site.function else "at module level"
        remedy = "repair them first with `dispatchlint.runtime.coerce_args` and the tool's schema"
        if isinstance(site, TableSite) and site.own_callable:
            return (
                f"the model's raw arguments reach the function {holder(site)} object holds: "
                f"`self.{site.via}(...)` runs it {where}, and {_no_gate(project)}; {remedy}"
            )
        if isinstance(site, TableSite) and site.sink_method:
            return (
                f"the model's raw arguments reach the function {holder(site)} looked up by `{site.key}` "
                f"holds: `.{site.via}(...)` runs it {where}, and {_no_gate(project)}; {remedy}"
            )
        if isinstance(site, TableSite):
            found = resolved_tool(site) if site.resolver else f"the tool named `{site.key}`"
            return f"the model's raw arguments reach {found}, run {where}, and {_no_gate(project)}; {remedy}"
        if site.kind is SiteKind.DIRECT:
            effect = mistyped_effect(project, site.module, [(site.key, f"tool `{site.key}`")])
            effect = effect or f"the model's raw arguments reach tool `{site.key}`"
            return f"{effect}: its executor is called directly {where} and {_no_gate(project)}; {remedy}"
        return (
            f"the model's raw arguments reach the tool named by `{site.key}`: they are handed {where} to a function "
            f"bound at run time, and {_no_gate(project)}; {remedy}"
        )


def _no_gate(project: Project) -> str:
    """Why no gate repairs the arguments: there is none, or none in this part of the project."""
    return "no gate of the project reaches that code" if project.has_gate else "the project has no gate"
