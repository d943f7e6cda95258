"""DL201 handrolled-json-parse."""

from __future__ import annotations

from typing import Iterable, List, Set

from dispatchlint.indexing.annotations import ARGS_NAMES
from dispatchlint.indexing.facts import JsonParse, ModuleFacts
from dispatchlint.linking import Project
from dispatchlint.findings import Applicability, FixSubject, SubjectKind
from dispatchlint.locations import Location
from dispatchlint.rules.rule import Case, Finding, Rule, related
from dispatchlint.rules._examples import GATE, REGISTRY

_PLAN_WITH_PARSE = """
import json

def _plan(agent, args, ctx):
    steps = args["steps"]
    if isinstance(steps, str):
        steps = json.loads(steps)
    return steps

def _note(agent, args, ctx):
    return json.loads(args["payload"])

BUILTIN_EXECUTORS = {"plan": _plan, "note": _note}
"""

_NOTE_SCHEMA = """
NOTE = {"name": "note", "parameters": {"type": "object", "properties": {"payload": {"type": "string"}}}}
"""


class HandrolledJsonParse(Rule):
    """## What it does
    Reports `json.loads` (or `ast.literal_eval`) of one of a tool's own parameters inside the tool's executor,
    in a project that has a gate, unless the schema or the annotation declares that parameter a string.

    ## Why is this bad?
    Hand-rolled parsing is a second source of truth next to the schema: it repairs one parameter of one tool on
    one path, disagrees with the gate about edge cases, and hides the real defect (a path that bypasses the gate)
    because the tool that parses by hand "works". The tools next to it, without the parsing, fail on the same
    input.

    ## Example
    ```python
    def _plan(agent, args, ctx):
        steps = args["steps"]
        if isinstance(steps, str):
            steps = json.loads(steps)
    ```

    ## Use instead
    Declare the parameter in the schema (`"steps": {"type": "array"}`), make every path to the tool go through
    the gate (see DL101) and read the repaired value:
    ```python
    def _plan(agent, args, ctx):
        steps = args["steps"]
    ```

    ## Fix safety
    Deleting the block is safe only when every path to the tool is guarded and the schema declares the parameter
    an array or an object; otherwise the finding says what is missing. A parse on a line of several statements
    loses its statement only; a parse of the stripped text (`json.loads(steps.strip())`) is replaced by the value.
    A wrap the deletion needs is not made where every finding of that table is suppressed.
    """

    code = "DL201"
    name = "handrolled-json-parse"
    VALID = [
        Case(
            {
                "agent/__init__.py": "",
                "agent/gate.py": GATE,
                "agent/registry.py": REGISTRY,
                "agent/schemas.py": _NOTE_SCHEMA,
                "agent/loop.py": (
                    "import json\n\n"
                    "def _note(agent, args, ctx):\n"
                    "    return json.loads(args['payload'])\n\n"
                    "TOOLS = {'note': _note}\n\n"
                    "def run(agent, call, ctx):\n"
                    "    return TOOLS[call.name](agent, json.loads(call.arguments), ctx)\n"
                ),
            }
        ),
    ]
    INVALID = [
        Case(
            {
                "agent/__init__.py": "",
                "agent/gate.py": GATE,
                "agent/registry.py": REGISTRY,
                "agent/schemas.py": _NOTE_SCHEMA,
                "agent/builtin.py": _PLAN_WITH_PARSE,
                "agent/loop.py": (
                    "from agent.builtin import BUILTIN_EXECUTORS\n"
                    "from agent.gate import coerce_tool_args\n\n"
                    "def run(agent, name, args, ctx):\n"
                    "    return BUILTIN_EXECUTORS[name](agent, coerce_tool_args(name, args), ctx)\n"
                ),
            },
            (("agent/builtin.py", 7),),
        ),
    ]

    def check(self, project: Project) -> Iterable[Finding]:
        if not project.has_gate:
            return
        tools = project.dispatches.executor_tools()
        for module in project.modules:
            if not project.gate_reaches(module):
                continue  # no gate reaches this part of the project: the parse may be the only repair
            gate = project.gates.gate_display(near=module)
            for parse in module.json_parses:
                qualified = f"{module.module}.{parse.function}"
                names = tools.get(qualified)
                if not names or _declared_string(project, module, parse, names):
                    continue
                if parse.parameter in ARGS_NAMES and not _declared(project, module, parse.parameter, names):
                    continue  # the whole argument string: the wire parse, not a parameter's repair
                yield self.finding(
                    module,
                    parse.span,
                    self._message(project, module, parse, sorted(names), gate),
                    self._related(project, module, sorted(names)),
                    trace=self._trace(project, module, parse, qualified),
                    fix=FixSubject(SubjectKind.PARSE, module.path, parse.span),
                    applicability=Applicability.SAFE,
                )

    @staticmethod
    def _trace(project: Project, module: ModuleFacts, parse: JsonParse, qualified: str) -> List[Location]:
        """Where the function becomes a tool, the gate that repairs the parameter, then the second parse."""
        steps = [
            related(entry.module, entry.span, f"tool `{entry.key}` runs `{parse.function}`")
            for table in project.dispatches.tool_tables()
            for entry in table.entries
            if qualified in entry.executors and entry.key is not None
        ][:1]
        steps += [
            related(gate_module, gate.span, f"the gate `{gate.name}` repairs `{parse.parameter}` from the schema")
            for gate_module, gate in project.gates.gate_locations(top_level_only=True, near=module)[:1]
        ]
        return steps + [related(module, parse.span, f"`{parse.parameter}` is parsed again, by hand")]

    def _message(self, project: Project, module: ModuleFacts, parse: JsonParse, names: List[str], gate: str) -> str:
        parser = parse.parser
        tool = ", ".join(f"`{name}`" for name in names) or "a tool"
        declared = [project.catalog.declared_types(name, parse.parameter, module) for name in names]
        types = sorted({t for found in declared if found for t in found})
        if types:
            remedy = f"the gate {gate} repairs it from the schema (`{'|'.join(types)}`); delete the `{parser}`"
        else:
            remedy = f"declare it in the tool's schema, which the gate {gate} repairs from, then delete the `{parser}`"
        return (
            f"`{parse.function}` (tool {tool}) parses `{parse.parameter}` by hand, a second source of truth: {remedy}"
        )

    def _related(self, project: Project, near: ModuleFacts, names: List[str]) -> List[Location]:
        return [
            related(module, schema.span, f"schema of `{name}`")
            for name in names
            for module, schema in project.catalog.schemas_of(name, near)[:1]
        ]


def _declared(project: Project, module: ModuleFacts, parameter: str, names: Set[str]) -> bool:
    return any(project.catalog.declared_types(name, parameter, module) is not None for name in names)


def _declared_string(project: Project, module: ModuleFacts, parse: JsonParse, names: Set[str]) -> bool:
    """The parameter is documented as a string: parsing it is the tool's own business."""
    found = project.graph.function(f"{module.module}.{parse.function}")
    if found is not None:
        annotation = dict(found[1].annotations).get(parse.parameter, "")
        if annotation.replace(" ", "") in ("str", "Optional[str]", "str|None", "typing.Optional[str]"):
            return True
    declared = [project.catalog.declared_types(name, parse.parameter, module) for name in names]
    known = [types for types in declared if types]
    return bool(known) and all(set(types) <= {"string", "null"} for types in known)
