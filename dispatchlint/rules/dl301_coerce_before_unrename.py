"""DL301 coerce-before-unrename."""

from __future__ import annotations

from typing import Iterable, List

from dispatchlint.indexing.facts import Span
from dispatchlint.linking import Project
from dispatchlint.findings import Applicability, FixSubject, SubjectKind
from dispatchlint.rules.rule import Case, Finding, Rule, related

_SANITIZE = """
def unrename_args(schema, args):
    names = {key.replace("$", "_"): key for key in schema.get("properties", {})}
    return {names.get(key, key): value for key, value in args.items()}
"""


class CoerceBeforeUnrename(Rule):
    """## What it does
    Reports a gate that repairs arguments by property name before (or without) restoring the names that were
    sanitized for the provider, in a project that sanitizes property names.

    ## Why is this bad?
    Providers reject some property names (`$top`, `filters[]`, `from`, names with spaces), so the schema a model
    sees may use sanitized names. Arguments come back under those names. A gate that looks up each argument in
    the registry's schema before mapping the names back finds no property for a sanitized key, so it repairs
    nothing there (or repairs a field that does not exist).

    ## Example
    ```python
    def coerce_tool_args(tool_name, args):
        schema = SCHEMAS[tool_name]
        args = {k: _coerce(schema["properties"].get(k), v) for k, v in args.items()}
        return unrename_args(schema, args)
    ```

    ## Use instead
    ```python
    def coerce_tool_args(tool_name, args):
        schema = SCHEMAS[tool_name]
        args = unrename_args(schema, args)
        return {k: _coerce(schema["properties"].get(k), v) for k, v in args.items()}
    ```

    ## Fix safety
    Reordering is an unsafe fix: code between the two steps may depend on the sanitized names.
    """

    code = "DL301"
    name = "coerce-before-unrename"
    VALID = [
        Case(
            {
                "agent/__init__.py": "",
                "agent/names.py": _SANITIZE,
                "agent/gate.py": (
                    "from agent.names import unrename_args\n\n"
                    "SCHEMAS = {}\n\n"
                    "def coerce_tool_args(tool_name, args):\n"
                    "    schema = SCHEMAS[tool_name]\n"
                    "    args = unrename_args(schema, args)\n"
                    "    props = schema['properties']\n"
                    "    return {k: props.get(k, {}) and v for k, v in args.items()}\n"
                ),
            }
        )
    ]
    INVALID = [
        Case(
            {
                "agent/__init__.py": "",
                "agent/names.py": _SANITIZE,
                "agent/gate.py": (
                    "from agent.names import unrename_args\n\n"
                    "SCHEMAS = {}\n\n"
                    "def coerce_tool_args(tool_name, args):\n"
                    "    schema = SCHEMAS[tool_name]\n"
                    "    props = schema['properties']\n"
                    "    args = {k: props.get(k, {}) and v for k, v in args.items()}\n"
                    "    return unrename_args(schema, args)\n"
                ),
            },
            (("agent/gate.py", 5),),
        )
    ]

    def check(self, project: Project) -> Iterable[Finding]:
        sanitizers = [q for q in project.gates.sanitizers if project.graph.function(q)] or list(
            project.config.sanitizers
        )
        if not sanitizers:
            return
        for module, function in project.gates.gate_locations(top_level_only=True):
            qualified = f"{module.module}.{function.qualname}"
            by_key: List[Span] = [Span(line, 1, line, 1) for line in function.property_read_lines]
            restores: List[Span] = []
            for call_module, call in project.graph.calls_in(qualified, nested=True):
                if project.gates.is_sanitizer(call_module, call.callee, call.function):
                    restores.append(call.span)
                elif project.gates.reads_properties(call_module, call.callee, call.function):
                    by_key.append(call.span)
            if not by_key or (restores and _first(restores).line < _first(by_key).line):
                continue
            sanitizer = sanitizers[0].split(".")[-1]
            order = "before restoring" if restores else "without restoring"
            found = project.graph.function(sanitizers[0])
            yield self.finding(
                module,
                function.span,
                f"arguments whose names the provider saw sanitized reach their tools unrepaired: gate "
                f"`{function.name}` repairs by property name {order} the names (`{sanitizer}`), so their keys find "
                f"no property; restore the names first",
                [related(found[0], found[1].span, f"sanitizer `{sanitizer}`")] if found else [],
                trace=[related(module, _first(by_key), "arguments are repaired by property name here")]
                + (
                    [related(module, _first(restores), "the sanitized names are restored only here")]
                    if restores
                    else []
                ),
                fix=FixSubject(SubjectKind.GATE, module.path, function.span),
                applicability=Applicability.UNSAFE,
            )


def _first(spans: List[Span]) -> Span:
    return min(spans, key=lambda span: (span.line, span.column))
