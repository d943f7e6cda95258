"""DL201 fix: delete hand-rolled parsing that the gate now does on every path.

Deleting ``if isinstance(steps, str): steps = json.loads(steps)`` is only safe when the gate repairs ``steps`` on
every path to the tool (each table holding the executor is wrapped, is about to be wrapped by the same run, or is
only read with gated arguments, and nothing calls the executor directly) and when the schema declares the
parameter an array or an object (so the gate parses the string). Otherwise the parsing stays and the finding
says why.

Two shapes are rewritten: the whole ``if isinstance(x, str): x = parse(x)`` statement (or a bare
``x = parse(x)``) is deleted, and ``parse(args["p"])`` used inside a larger expression becomes ``args["p"]``.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Set, Tuple, Union

from dispatchlint.indexing.facts import JsonParse, ModuleFacts, ParseEdit
from dispatchlint.linking import GATED, RAW, RAW_WEAK, LinkedTable, Project
from dispatchlint.fix._context import Context
from dispatchlint.fix._retarget import RetargetFix
from dispatchlint.fix._tables import ParseFix, TableFix

_PARSED_KINDS = {"array", "object"}
#: The fix that guards a table's readers (or why there is none), shared with the DL101 decisions.
TableFixer = Callable[[LinkedTable], Union["TableFix", "RetargetFix", str]]


def parse_fix(
    context: Context,
    module: ModuleFacts,
    parse: JsonParse,
    tools: Set[str],
    fixer: TableFixer,
    wrapping: Optional[LinkedTable] = None,
) -> Union[ParseFix, str]:
    """The deletion for one hand-rolled parse of ``tools``' parameter, or why the parsing must stay; ``wrapping``:
    a table whose wrap is being decided, which takes the deletion along (so it needs no fix of its own)."""
    project = context.project
    declared = _declared(project, module, tools, parse.parameter)
    if declared:
        return declared
    qualified = f"{module.module}.{parse.function}"
    requires = _guarded_after_fix(project, qualified, fixer, wrapping)
    if isinstance(requires, str):
        return requires
    edit = context.shapes(module).parses.get(parse.span, ParseEdit.NONE)
    if edit is ParseEdit.NONE:
        return "the parsing does more than turn a JSON string into the value"
    return ParseFix(module, parse, edit, requires)


def _declared(project: Project, module: ModuleFacts, tools: Set[str], parameter: str) -> str:
    """Why the schema does not let the gate take over the parsing ('' when it does)."""
    if not tools:
        return "no schema of the tool can be found"
    for tool in sorted(tools):
        declared = project.catalog.declared_types(tool, parameter, module)
        types = set(declared or ())
        if declared is None:
            return f"no schema of `{tool}` declares `{parameter}`"
        if not types & _PARSED_KINDS or types - _PARSED_KINDS - {"null"}:
            shown = "|".join(sorted(types)) or "with no type"
            return (
                f"the schema of `{tool}` declares `{parameter}` {shown}, not an array or object, so the gate "
                "would not parse it"
            )
    return ""


def _guarded_after_fix(
    project: Project, executor: str, fixer: TableFixer, wrapping: Optional[LinkedTable]
) -> Union[Tuple[Union[TableFix, RetargetFix], ...], str]:
    found = project.graph.function(executor)
    if found is not None:
        for module, call in project.graph.callers(executor, found[1]):
            flows = call.flows
            verdicts = {project.taint.evaluate(flow, module, call.function) for flow in flows}
            if GATED not in verdicts or verdicts & {RAW, RAW_WEAK}:
                return f"`{found[1].name}` is also called directly ({module.path}:{call.span.line})"
    requires: List[Union[TableFix, RetargetFix]] = []
    for table in project.catalog.tables.values():
        if not any(executor in entry.executors for entry in table.entries) or table.wrapped or table is wrapping:
            continue
        sites = [site for site in project.dispatches.sites_of(table) if site.tool_like]
        if all(site.verdict == GATED for site in sites):
            continue
        fix = fixer(table)
        if isinstance(fix, str):
            return f"`{table.display_name}` is read with raw arguments and cannot be wrapped: {fix}"
        requires.append(fix)
    return tuple(requires)
