"""DL401 schemaless-executor."""

from __future__ import annotations

from typing import Iterable

from dispatchlint.linking import Project
from dispatchlint.rules.rule import Case, Finding, Rule, related
from dispatchlint.rules._examples import GATE, REGISTRY

_OFFERED = """
import json

def add(a: int, b: int) -> int:
    return a + b

def run(client, messages):
    response = client.chat(messages=messages, tools=[add])
    tools = {"add": add}
    for call in response.message.tool_calls:
        tools[call.function.name](**json.loads(call.function.arguments))
"""


class SchemalessExecutor(Rule):
    """## What it does
    Opt-in (`--extend-select DL401`). Reports an entry of an executor table for which no parameter schema can be found
    anywhere in the project, with or without a gate. A tool object (a framework tool with its `args_schema`, an
    instance of a tool class), a function a framework decorator turns into a tool (its signature is the schema),
    a function offered to the model as `tools=[fn]` (the SDK derives its schema from the signature) and a
    function that takes a pydantic model count as having one.

    ## Why is this bad?
    A gate repairs arguments against the tool's schema. Without one it has nothing to act on: the tool gets
    whatever the model sent, even on a guarded path, and a project without a gate cannot add one for it.

    ## Example
    ```python
    TOOLS = {"search": search, "scratch": scratch}   # no schema names "scratch"
    ```

    ## Use instead
    Declare the tool's parameters where the others are declared
    (`{"name": "scratch", "parameters": {...}}`).

    ## Fix safety
    No fix is offered.
    """

    code = "DL401"
    name = "schemaless-executor"
    VALID = [
        Case({"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY}),
        Case({"agent/__init__.py": "", "agent/loop.py": _OFFERED}),
    ]
    INVALID = [
        Case(
            {
                "agent/__init__.py": "",
                "agent/gate.py": GATE,
                "agent/registry.py": REGISTRY.replace(
                    '{"search": search}', '{"search": search,\n            "scratch": search}'
                ),
            },
            (("agent/registry.py", 8),),
        ),
        Case(
            {"agent/__init__.py": "", "agent/loop.py": _OFFERED.replace("tools=[add]", "tools=[]")},
            (("agent/loop.py", 9),),
        ),
    ]

    def check(self, project: Project) -> Iterable[Finding]:
        for table in project.dispatches.tool_tables(dispatched_only=True):
            if project.gate_reaches(table.module):
                why = f"the gate {project.gates.gate_display(near=table.module)} has nothing to repair them against"
            else:
                why = "no gate (`dispatchlint.runtime.wrap_table`, say) could repair them"
            for entry in table.entries:
                if (
                    entry.key is None
                    or entry.key in project.catalog.schemas
                    or project.catalog.entry_carries_schema(entry)
                ):
                    continue
                yield self.finding(
                    entry.module,
                    entry.span,
                    f"tool `{entry.key}` gets the model's arguments as sent, on every path: no parameter schema "
                    f"names it, so {why}; declare its parameters where the others' are (`{table.display_name}`)",
                    [related(table.module, table.definition.span, f"table `{table.display_name}`")],
                )
