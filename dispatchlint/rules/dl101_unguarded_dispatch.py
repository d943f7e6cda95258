"""DL101 unguarded-dispatch."""

from __future__ import annotations

from typing import Iterable, List, Optional

from dispatchlint.indexing.facts import Call, SiteKind
from dispatchlint.linking import (
    GATED,
    CallSite,
    ChainSite,
    Project,
    Site,
    TableSite,
    display_function,
    table_of,
)
from dispatchlint.findings import Applicability, FixSubject, SubjectKind
from dispatchlint.locations import Location
from dispatchlint.rules._examples import GATE, REGISTRY
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

_BUILTIN = """
def _plan(agent, args, ctx):
    return list(args["steps"])

BUILTIN_EXECUTORS = {"plan": _plan}
"""


class UnguardedDispatch(Rule):
    """## What it does
    Reports a call that runs a tool from an executor table (or from an arm of an if/elif chain on the tool
    name, or a registered tool's executor called by name) with the model's arguments as they arrived, in a
    project that repairs arguments in a gate (`coerce_tool_args` by default) on its other paths; a part of the
    project that shares no import, package or folder with the gate's (another app of a collection) is not
    reached by it (see DL102). Reaching past a tool object's own validation (`tool.func(...)`, `tool._run(...)`)
    is reported too, gate or not.

    ## Why is this bad?
    Models send arrays as JSON strings, `"42"` for 42, `"true"` for true, one value where a list is declared.
    The gate repairs that against the tool's schema, but only on the paths that call it. Tools reached through a
    second table get raw arguments: some survive with hand-written parsing, others fail or silently misbehave,
    and the failures look like the model's fault.

    ## Example
    ```python
    # loop.py
    fn = BUILTIN_EXECUTORS.get(name)
    if fn:
        return fn(agent, args, ctx)   # raw arguments
    return handle_function_call(name, args)   # repaired by coerce_tool_args
    ```

    ## Use instead
    Wrap the table once, where it is defined, so that every reader gets repaired arguments:
    ```python
    _RAW_BUILTIN_EXECUTORS = {"plan": _plan, "recall": _recall}

    def _coerced(name, executor):
        def run(agent, args, ctx):
            return executor(agent, coerce_tool_args(name, args), ctx)
        return run

    BUILTIN_EXECUTORS = {name: _coerced(name, ex) for name, ex in _RAW_BUILTIN_EXECUTORS.items()}
    ```
    For a name-test chain, coerce the arguments once, ahead of the chain. Where the arms bind closures that run
    later (`def _execute(next_args): ...`, handed to a middleware), coerce what each closure is handed, first
    thing in its body.

    ## Fix safety
    Wrapping changes the values tools receive only where the schema says they are mistyped, which is the point.
    A hand-rolled parse of such a value in an executor (`json.loads(steps)`, `json.loads(steps.strip())`) would
    then fail, so the wrap deletes it in the same fix. The fix is unsafe, and says why, when the wrap would
    change more: an executor uses the value as a string some other way (`.split()`, a slice; not under
    `isinstance(x, str)`), a parse cannot go (another caller hands it a string), or code reads what the table's
    values are (`fn.__code__`, `inspect.getfullargspec(fn)`, `fn is other`), which a wrapper is not. A table
    whose every finding is suppressed is wrapped by no fix; a new reader of a table's raw half (`_RAW_TOOLS`) is
    pointed at the wrapped table.
    """

    code = "DL101"
    name = "unguarded-dispatch"
    VALID = [
        Case(
            {
                "agent/__init__.py": "",
                "agent/gate.py": GATE,
                "agent/registry.py": REGISTRY,
                "agent/builtin.py": _BUILTIN,
                "agent/loop.py": (
                    "from agent.builtin import BUILTIN_EXECUTORS\n"
                    "from agent.gate import coerce_tool_args\n\n"
                    "def run_tool(agent, name, args, ctx):\n"
                    "    args = coerce_tool_args(name, args)\n"
                    "    fn = BUILTIN_EXECUTORS.get(name)\n"
                    "    return fn(agent, args, ctx)\n"
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
                "agent/builtin.py": _BUILTIN,
                "agent/loop.py": (
                    "import json\n"
                    "from concurrent.futures import ThreadPoolExecutor\n"
                    "from agent.builtin import BUILTIN_EXECUTORS as EXECUTORS\n"
                    "from agent.registry import handle_function_call\n\n"
                    "def run_tool(agent, tool_call, ctx):\n"
                    "    name = tool_call.function.name\n"
                    "    args = json.loads(tool_call.function.arguments)\n"
                    "    fn = EXECUTORS.get(name)\n"
                    "    if fn:\n"
                    "        return fn(agent, args, ctx)\n"
                    "    return handle_function_call(name, args)\n\n"
                    "def run_many(agent, calls, ctx):\n"
                    "    with ThreadPoolExecutor() as pool:\n"
                    "        return [pool.submit(EXECUTORS[c.name], agent, json.loads(c.arguments), ctx)\n"
                    "                for c in calls]\n"
                ),
            },
            (("agent/loop.py", 11), ("agent/loop.py", 16)),
        ),
        Case(
            {
                "agent/__init__.py": "",
                "agent/gate.py": GATE,
                "agent/registry.py": REGISTRY,
                "agent/loop.py": (
                    "import json\n"
                    "from agent.registry import handle_function_call\n\n"
                    "def todo_tool(todos):\n"
                    "    return todos\n\n"
                    "def run(function_name, raw):\n"
                    "    function_args = json.loads(raw)\n"
                    "    if function_name == 'todo':\n"
                    "        return todo_tool(todos=function_args.get('todos'))\n"
                    "    else:\n"
                    "        return handle_function_call(function_name, function_args)\n"
                ),
            },
            (("agent/loop.py", 9),),
        ),
    ]

    def check(self, project: Project) -> Iterable[Finding]:
        reported = set()
        at = sites_by_location(project)
        for site in project.sites:
            if not site.unguarded or not (project.gate_reaches(site.module) or site.reaches_past):
                continue
            gate = project.gates.gate_display(near=site.module)
            gate_locations = [
                related(module, function.span, f"gate `{function.name}`")
                for module, function in project.gates.gate_locations(near=site.module)
            ]
            if site.kind is SiteKind.UNSEEN:
                continue  # in a project with a gate, a callee the analysis cannot see may well be it
            if (
                isinstance(site, TableSite)
                and site.method
                and not site.sink_method
                and not project.dispatches.gates_method(site.method)
            ):
                continue  # the project never gates this method: it may be the object's own validating entry
            if (site.module.path, site.span) in reported:
                continue  # one call, several tables a resolver may return: one finding
            trace = project.taint.trace(site, "sink: the tool runs with them, unrepaired")
            if not trace:
                continue  # no source of the model's arguments can be shown: nothing to report
            reported.add((site.module.path, site.span))
            fix = _fix_subject(site)
            if isinstance(site, TableSite) and site.bypasses:
                for module, call in site.bypasses:
                    sink = related(site.module, site.span, "sink: the tool runs with them")
                    call_trace = project.taint.call_trace(module, call, sink)
                    if call_trace and (module.path, call.span) not in reported:
                        reported.add((module.path, call.span))
                        yield self.finding(
                            module,
                            call.span,
                            self._bypass_message(site, call.function, gate),
                            [related(site.module, site.span, "dispatch")] + self._related(site, gate_locations),
                            call_trace,
                            fix,
                            Applicability.SAFE,
                            also_fixes=_subjects(at.get((module.path, call.span), []) + _bypassed_by(project, call)),
                        )
                continue
            message = self._message(project, site, gate)
            yield self.finding(
                site.module,
                site.span,
                message,
                self._related(site, gate_locations),
                trace,
                fix,
                Applicability.SAFE,
                also_fixes=_subjects(at[(site.module.path, site.span)]),
            )

    def _bypass_message(self, site: TableSite, caller: str, gate: str) -> str:
        assert site.table is not None
        return (
            f"`{display_function(caller) or '<module>'}` hands the model's raw arguments to "
            f"`{display_function(site.function)}`, which runs "
            f"`{site.table.display_name}[{site.key}]`; its other callers repair them with {gate} first"
        )

    def _message(self, project: Project, site: Site, gate: str) -> str:
        where = f"in `{display_function(site.function)}`" if site.function else "at module level"
        if isinstance(site, CallSite):
            effect = mistyped_effect(project, site.module, [(site.key, f"tool `{site.key}`")]) if site.key else None
            effect = effect or f"the model's raw arguments reach tool `{site.key}`"
            return (
                f"{effect}: its executor is called directly "
                f"{where}, outside the path through {gate}; call it through the gated entry, or coerce first"
            )
        if isinstance(site, ChainSite):
            names = ", ".join(f"`{name}`" for name in site.arm.names)
            effect = mistyped_effect(project, site.module, [(name, f"tool `{name}`") for name in site.arm.names])
            plural = "s" if len(site.arm.names) > 1 else ""
            effect = effect or f"the model's raw arguments reach tool{plural} {names}"
            fallback = site.fallback.split(".")[-1]
            closures = " and ".join(sorted({_closure_name(closure) for closure in site.arm.closures}))
            remedy = f"coerce what {closures} is handed" if closures else "coerce once ahead of the chain"
            return (
                f"{effect}: its arm of the `{site.key}` chain "
                f"{where} skips {gate}, which `{fallback}` applies to the others; {remedy}"
            )
        assert isinstance(site, TableSite)
        if site.reaches_past:
            attribute = site.via
            if site.constructed:
                return (
                    f"`.{attribute}` reaches past the validation of the `{site.constructed}` tool run {where}: the "
                    f"model's raw arguments skip its `args_schema`; call its public entry (`run`, `invoke`)"
                )
            if site.registered_by:
                return (
                    f"`{display_function(site.function)}` runs the bare `self.{attribute}` that "
                    f"`{display_function(site.registered_by)}` registered, with the model's raw arguments: the "
                    f"registry calls it past the validation in the tool's public entry; register that entry instead"
                )
            if attribute == "__wrapped__":
                return (
                    f"`.__wrapped__` reaches past the wrapper around the tool looked up by `{site.key}` {where}: "
                    f"the model's raw arguments skip the repair the wrapper does; call the table entry itself"
                )
            return (
                f"`.{attribute}` reaches past the tool object looked up by `{site.key}` {where}: the model's raw "
                f"arguments skip the validation in its public entry; call the tool through it (`run`, `invoke`)"
            )
        if site.own_callable:
            return (
                f"`self.{site.via}(...)` runs the function {holder(site)} object holds {where} with the model's raw "
                f"arguments, unvalidated, while the project repairs tool arguments with {gate}: repair them before "
                f"the call"
            )
        if site.sink_method:
            return (
                f"`.{site.method}(...)` of {holder(site)} looked up by `{site.key}` runs {where} with the "
                f"model's raw arguments and hands them to the function it holds unvalidated, while the project "
                f"repairs tool arguments with {gate}: repair them before the call, or validate in `{site.method}`"
            )
        if site.resolver:
            return (
                f"the model's raw arguments reach {resolved_tool(site)}, run {where}: the "
                f"gate {gate} never repairs them on this path; repair them before the call"
            )
        if site.method:
            twin = next((o for o in project.sites if o.method == site.method and o.verdict == GATED), None)
            gated_by = f" (`{twin.module.module}.{display_function(twin.function)}` repairs them first)" if twin else ""
            looked_up = (
                f"`{site.table.display_name}[{site.key}].{site.method}(...)`"
                if site.table is not None
                else f"`.{site.method}(...)` of the tool object looked up by `{site.key}`"
            )
            return (
                f"{looked_up} runs a tool {where} with the model's raw "
                f"arguments: the gate {gate} never repairs them on this path{gated_by}; repair them before the call"
            )
        table = site.table
        if table is None:  # found by a scan of what no table shows
            return (
                f"the model's raw arguments reach the tool named `{site.key}`, run {where}: the gate {gate} never "
                f"repairs them on this path; repair them before the call"
            )
        tools = [
            (entry.key, f"`{display_function(entry.executors[0]).split('.')[-1]}`" if entry.executors else "")
            for entry in table.entries
            if entry.key is not None
        ]
        effect = mistyped_effect(project, site.module, tools)
        effect = effect or f"the model's raw arguments reach the tools of `{table.display_name}`"
        return (
            f"{effect}: `{table.display_name}[{site.key}]` {where} skips {gate}; wrap the table once where it is "
            f"defined (`{table.module.module}`, line {table.definition.span.line})"
        )

    def _related(self, site: Site, gate_locations: List[Location]) -> List[Location]:
        table = table_of(site)
        found = [related(table.module, table.definition.span, f"table `{table.display_name}`")] if table else []
        return found + gate_locations[:1]


def _closure_name(qualname: str) -> str:
    name = qualname.split(".")[-1]
    return "its lambda" if name.startswith("<lambda") else f"`{display_function(qualname).split('.')[-1]}`"


def _fix_subject(site: Site) -> Optional[FixSubject]:
    """What the fix of a site would rewrite: its table, the ladder of its chain, or the shape of the site where
    there is nothing to wrap (whether and why is the fix stage's to say); None for a call that reaches past a
    tool object, whose message says what to call instead."""
    if site.reaches_past:
        return None
    if site.method:
        return FixSubject(SubjectKind.TOOL_OBJECT, site.module.path, site.span)
    if isinstance(site, ChainSite):
        kind = SubjectKind.LATER_CLOSURE if site.arm.closures else SubjectKind.CHAIN
        return FixSubject(kind, site.module.path, site.span)
    table = table_of(site)
    if table is None:
        return FixSubject(SubjectKind.NO_TABLE, site.module.path, site.span)
    return table_subject(table)


def _subjects(sites: Iterable[Site]) -> List[FixSubject]:
    """What fixing each of ``sites`` rewrites, where something can be."""
    return [subject for subject in map(_fix_subject, sites) if subject is not None]


def _bypassed_by(project: Project, call: Call) -> List[Site]:
    """The sites whose dispatching function ``call`` hands raw arguments to."""
    return [
        site
        for site in project.sites
        if isinstance(site, TableSite) and any(bypass is call for _, bypass in site.bypasses)
    ]
