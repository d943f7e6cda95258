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

from dataclasses import dataclass
from typing import Callable, List, Optional, Set, Tuple, Union

import libcst as cst

from dispatchlint.analysis import _syntax as syn
from dispatchlint.analysis.facts import JsonParse, ModuleFacts
from dispatchlint.analysis.link import GATED, RAW, RAW_WEAK, LinkedTable, Project
from dispatchlint.fix._plan import ProjectPlan
from dispatchlint.fix._source import SourceFile, Sources
from dispatchlint.fix._tables import TableFix

_PARSED_KINDS = {"array", "object"}
#: The wrap fix of a table (or why there is none), shared with the DL101 decisions.
TableFixer = Callable[[LinkedTable], Union["TableFix", str]]


@dataclass(frozen=True)
class ParseFix:
    module: ModuleFacts
    parse: JsonParse
    #: The statement to delete, or the parsing call to replace by its argument.
    node: cst.CSTNode
    #: Wraps this deletion depends on (a table read raw today).
    requires: Tuple[TableFix, ...]

    def apply(self, plan: ProjectPlan) -> None:
        file = plan.file(self.module)
        if isinstance(self.node, cst.Call):
            argument = self.node.args[0].value
            file.replace(self.node, lambda updated: argument.deep_clone())
            verb = "unwrap"
        else:
            file.replace(self.node, lambda updated: cst.RemovalSentinel.REMOVE)
            verb = "delete"
        parser = "ast.literal_eval" if self.parse.parser.endswith("literal_eval") else "json.loads"
        file.drop_if_unused(self.parse.parser.split(".")[0])
        file.note(f"{verb} the hand-rolled `{parser}` of `{self.parse.parameter}` in `{self.parse.function}`")


def parse_fix(
    project: Project, sources: Sources, module: ModuleFacts, parse: JsonParse, tools: Set[str], fixer: TableFixer
) -> Union[ParseFix, str]:
    """The deletion for one hand-rolled parse of ``tools``' parameter, or why the parsing must stay."""
    declared = _declared(project, tools, parse.parameter)
    if declared:
        return declared
    qualified = f"{module.module}.{parse.function}"
    requires = _guarded_after_fix(project, qualified, fixer)
    if isinstance(requires, str):
        return requires
    node = _parsing_node(sources.get(module.path), parse)
    if node is None:
        return "the parsing does more than turn a JSON string into the value"
    return ParseFix(module, parse, node, requires)


def _declared(project: Project, tools: Set[str], parameter: str) -> str:
    """Why the schema does not let the gate take over the parsing ('' when it does)."""
    if not tools:
        return "no schema of the tool can be found"
    for tool in sorted(tools):
        declared = project.catalog.declared_types(tool, parameter)
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


def _guarded_after_fix(project: Project, executor: str, fixer: TableFixer) -> Union[Tuple[TableFix, ...], str]:
    found = project.graph.function(executor)
    if found is not None:
        for module, call in project.graph.callers(executor, found[1]):
            flows = call.flows
            verdicts = {project.taint.evaluate(flow, module, call.function) for flow in flows}
            if GATED not in verdicts or verdicts & {RAW, RAW_WEAK}:
                return f"`{found[1].name}` is also called directly ({module.path}:{call.span.line})"
    requires: List[TableFix] = []
    for table in project.catalog.tables.values():
        if not any(executor in entry.executors for entry in table.entries) or table.wrapped:
            continue
        sites = [site for site in project.dispatches.sites_of(table) if site.tool_like]
        if all(site.verdict == GATED for site in sites):
            continue
        fix = fixer(table)
        if not isinstance(fix, TableFix):
            return f"`{table.display_name}` is read with raw arguments and cannot be wrapped: {fix}"
        requires.append(fix)
    return tuple(requires)


def _parsing_node(source: SourceFile, parse: JsonParse) -> Optional[cst.CSTNode]:
    call = source.node_at(parse.span, cst.Call)
    if call is None or len([arg for arg in call.args if arg.keyword is None]) != 1 or call.args[0].star:
        return None
    argument = call.args[0].value
    assign = source.parent(call)
    if isinstance(assign, cst.Assign) and _assigns_to_itself(assign, argument):
        line = source.parent(assign)
        guard = source.parent(source.parent(line)) if line is not None else None  # If <- IndentedBlock <- line
        if isinstance(guard, cst.If) and _only_parses(guard, line, argument):
            return guard
        return line if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
    return call if _is_parameter_read(argument) else None


def _assigns_to_itself(assign: cst.Assign, argument: cst.BaseExpression) -> bool:
    return (
        len(assign.targets) == 1
        and isinstance(argument, cst.Name)
        and isinstance(assign.targets[0].target, cst.Name)
        and assign.targets[0].target.value == argument.value
    )


def _only_parses(guard: cst.If, line: Optional[cst.CSTNode], argument: cst.BaseExpression) -> bool:
    """``if isinstance(x, str):`` whose body is the one parsing line, with no ``elif``/``else``."""
    test = guard.test
    return (
        guard.orelse is None
        and isinstance(guard.body, cst.IndentedBlock)
        and list(guard.body.body) == [line]
        and isinstance(test, cst.Call)
        and syn.dotted_name(test.func) == "isinstance"
        and len(test.args) == 2
        and isinstance(argument, cst.Name)
        and isinstance(test.args[0].value, cst.Name)
        and test.args[0].value.value == argument.value
        and syn.dotted_name(test.args[1].value) == "str"
    )


def _is_parameter_read(argument: cst.BaseExpression) -> bool:
    """A name, ``args["p"]`` or ``args.get("p")``: reading it gives the repaired value as it is."""
    if isinstance(argument, cst.Name):
        return True
    if isinstance(argument, cst.Subscript):
        return syn.subscript_key(argument) is not None and isinstance(argument.value, cst.Name)
    pair = syn.get_call(argument)
    return pair is not None and isinstance(argument, cst.Call) and len(argument.args) == 1
