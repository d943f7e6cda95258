"""Stage 5, the sites: every place a tool runs (a dispatch of a table value, a method of a tool object, a
name-chain arm and the closures it binds, a registered executor called directly), with the verdict on what it
is handed; and the queries rules ask of them."""

from __future__ import annotations

import builtins
from collections import defaultdict
from dataclasses import replace
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from dispatchlint.framework_models import PROJECT_ENTRIES, RAW_ENTRIES
from dispatchlint.indexing.facts import (
    Call,
    Dispatch,
    Flow,
    FunctionDef,
    ModuleFacts,
    NameChain,
    Param,
    SiteKind,
    Span,
)
from dispatchlint.linking.callgraph import CallGraph
from dispatchlint.linking.catalog import Catalog
from dispatchlint.linking.gates import Gates
from dispatchlint.linking.model import (
    INSPECTING_METHOD,
    TOOL_ENTRY_METHODS,
    EXECUTOR_ARGS,
    GATED,
    RAW,
    RAW_WEAK,
    TOOLISH,
    UNKNOWN,
    CallSite,
    ChainSite,
    LinkedTable,
    Site,
    TableSite,
    Verdict,
    base_name,
    bind,
    combine,
    mentions_param,
    parent_of,
    position_of,
    wire_parsed_here,
    table_of,
    within,
)
from dispatchlint.linking.taint import Taint
from dispatchlint.linking.symbols import SymbolKind


def _registry_identity(definition: FunctionDef, parameter: str) -> str:
    """What a registry parameter is: its declared type, else its name."""
    return dict(definition.annotations).get(parameter) or parameter


class Dispatches:
    """Every place a tool runs, judged; built once."""

    def __init__(self, graph: CallGraph, gates: Gates, taint: Taint, catalog: Catalog) -> None:
        self.graph = graph
        self.gates = gates
        self.taint = taint
        self.catalog = catalog
        self._executor_tools: Optional[Dict[str, Set[str]]] = None
        self._tool_tables: Dict[bool, List[LinkedTable]] = {}
        self._sites_by_table: Optional[Dict[int, List[TableSite]]] = None
        #: Methods of tool objects that some path calls with gated arguments (``tool.call(ctx, **gated)``).
        self.gated_methods: Set[str] = set()
        #: Methods that run a callable their object holds, unvalidated, whose callers hand them raw arguments:
        #: the callers' sites report those paths (where some callers may repair and others not).
        self._sinks_run_raw_by_callers: Set[str] = set()
        makers = gates.framework_tool_makers
        #: The parts of the program that have tool objects validating their own arguments (a framework's).
        self._parts_with_validating_tools = {graph.part_of(module) for module in gates.validating_tool_modules} | {
            graph.part_of(module) for module in graph.modules if module.module in makers
        }
        self.sites = self._link_sites()

    # ------------------------------------------------------------------------------------------ sites

    def _gating_dispatches(self) -> List[Tuple[ModuleFacts, Dispatch]]:
        """Where the project runs its tool objects with the gate's output: a tool object looked up by the tool's
        name, from a table or from a list no table shows, whose ``via`` method is handed the gate's output
        (``tool.run(ctx, **validated)``). The project's own gated path says that calling this method runs a
        tool, whatever holds the object."""
        return [
            (module, dispatch)
            for module in self.graph.modules
            if not self.graph.is_test(module)
            for dispatch in module.dispatches
            if dispatch.kind is SiteKind.METHOD
            and dispatch.key_is_name
            and self.taint.site_verdict(module, dispatch.function, dispatch.args) is GATED
        ]

    def gates_method(self, method: str) -> bool:
        """Whether the project runs tool objects by ``method`` (or by its sync twin) with the gate's output."""
        return _one_of(method, self.gated_methods)

    def _runs_gated_method_raw(self, module: ModuleFacts, dispatch: Dispatch) -> bool:
        """A tool object found by the tool's name in a way no table shows (``tool_from_id(tool_id)``), whose
        method the project gates elsewhere, run here with the model's raw arguments."""
        return (
            dispatch.kind is SiteKind.METHOD
            and dispatch.key_is_name
            and _one_of(dispatch.via, self._gated_dispatch_methods)
            and self.taint.site_verdict(module, dispatch.function, dispatch.args) is RAW
        )

    def _link_sites(self) -> List[Site]:
        sites: List[Site] = []
        schema_names = set(self.catalog.schemas)
        self.gating_dispatches = self._gating_dispatches()
        self._gated_dispatch_methods = {dispatch.via for _, dispatch in self.gating_dispatches}
        handed: Dict[Tuple[str, Span], Site] = {}
        for module in self.graph.modules:
            sites.extend(filter(None, (self._own_callable_site(module, dispatch) for dispatch in module.dispatches)))
            for dispatch in module.dispatches:  # one site per call handing a callable on, whatever runs it
                handed.update(((s.module.path, s.span), s) for s in self._handed_own_callables(module, dispatch))
            for dispatch in self._expand_param_dispatches(module, list(module.dispatches)):
                if dispatch.kind is SiteKind.METHOD and dispatch.via in self.graph.config.sinks:
                    dispatch = replace(dispatch, kind=SiteKind.BYPASS)  # a configured raw entry
                reaches_past = dispatch.kind is SiteKind.BYPASS
                if reaches_past and self._routes_to_entry(dispatch.via):
                    continue  # the project's own ``_run`` hands the arguments to the validating ``run``
                if reaches_past and self._bare_entry(module, dispatch):
                    sites.append(self._bare_entry_site(module, dispatch))
                    continue
                method = dispatch.kind is SiteKind.METHOD
                #: a tool object's method that the project gates elsewhere, found no table can show how
                learned = False
                tables: List[Optional[LinkedTable]] = list(self.catalog.dispatched_tables(module, dispatch))
                if dispatch.constructed:
                    built = self.graph.resolve(module, dispatch.constructed, dispatch.function)
                    if not (built and self.gates.is_tool_type(built)):
                        continue  # ``Worker()._run()``: not a tool object
                    tables = [None]
                elif reaches_past and not tables:
                    tables = [None]  # a tool object found by a linear scan of a list
                elif not tables and self._scanned_tool_runs(module, dispatch):
                    tables = [None]
                elif not tables and self._opaque_resolver_runs_raw(module, dispatch):
                    tables = [None]
                    learned = method  # a project object's own entry, found by the tool's name
                elif not tables and self._runs_gated_method_raw(module, dispatch):
                    tables = [None]
                    learned = True
                elif (
                    method
                    and dispatch.object_type
                    and not any(t and self.catalog.holds_tool_objects(t) for t in tables)
                ):
                    declared = self._declared_object_site(module, dispatch)
                    sites.extend([declared] if declared is not None else [])
                    continue
                for table in tables:
                    if method and not learned and (table is None or not self.catalog.holds_tool_objects(table)):
                        continue  # a method of a function, or of an object from nowhere known
                    if table is None:
                        sites.append(
                            self._site(
                                module,
                                dispatch,
                                dispatch.key_is_name or bool(dispatch.constructed),
                                self.taint.site_verdict(module, dispatch.function, dispatch.args),
                                key=dispatch.key or f"{dispatch.constructed}()",
                                constructed=dispatch.constructed,
                                resolver="" if reaches_past or dispatch.constructed else dispatch.resolver,
                            )
                        )
                        continue
                    if self.catalog.holds_only_classes(table):
                        continue  # instantiating argument models or tool classes is not running a tool
                    called = dispatch
                    if table.holds_objects and not (reaches_past or method):
                        # calling a tool object (its ``__call__``), or the method of it a resolver returns
                        returned = self.catalog.returned_method(module, dispatch) or "__call__"
                        called = replace(dispatch, kind=SiteKind.METHOD, via=returned)
                    tool_like = dispatch.key_is_name or table.configured or bool(table.keys & schema_names)
                    guarded_table = table.wrapped and not reaches_past
                    verdict = (
                        GATED if guarded_table else self.taint.site_verdict(module, dispatch.function, dispatch.args)
                    )
                    if verdict in (UNKNOWN, RAW_WEAK) and self._text_tool_call(module, dispatch, table):
                        verdict = RAW
                    bypasses = self._bypasses(module, dispatch.function, dispatch.args) if verdict != GATED else ()
                    sink = self._declared_sink(module, dispatch, verdict) if method and dispatch.object_type else None
                    sites.append(
                        self._site(
                            module, called, tool_like, verdict, table=table, bypasses=bypasses, sink_method=bool(sink)
                        )
                    )
            for chain in module.chains:
                sites.extend(self._chain_sites(module, chain))
        sites.extend(handed.values())
        sites.extend(self._direct_sites(sites))
        sites.extend(self._registry_round_trips())
        sites = self._judge_method_sites(sites)
        sites = [
            site
            for site in sites
            if not (
                isinstance(site, TableSite)
                and site.own_callable
                and f"{site.module.module}.{site.function}" in self._sinks_run_raw_by_callers
            )
        ]
        corroborated_tables = {
            id(table)
            for table in (table_of(site) for site in sites)
            if table is not None and self._tool_table_evidence(table, sites)
        }
        return [
            replace(
                site,
                corroborated=isinstance(site, ChainSite)
                or site.reaches_past
                or id(table_of(site)) in corroborated_tables
                or bool(TOOLISH.search(site.key)),
            )
            for site in sites
        ]

    def _opaque_resolver_runs_raw(self, module: ModuleFacts, dispatch: Dispatch) -> bool:
        """A callable a resolver returns for a tool's name, where no table behind the resolver can be seen (a
        protocol's method, a plugin's registry: ``func = registry.get_tool_function(tool_name)``), run with the
        model's own arguments (``executor.submit(func, **args)``): a tool run by name, whatever holds it. The
        resolver's name must say it returns a tool (``getattr(self.db, method_name)`` returns a database client's
        method): a method, or a function that imports it (``get_function_from_module(MODULE, function_name)``).
        ``getattr(self, name)(**arguments)`` finds a method of the agent's own (or of an object its name says holds
        tools): handed the tool call's own arguments as they arrived, the method it finds by the tool's name is
        the tool."""
        if not dispatch.key_is_name:
            return False
        verdict = self.taint.site_verdict(module, dispatch.function, dispatch.args)
        if dispatch.kind is SiteKind.METHOD:
            return self._resolved_object_runs_raw(module, dispatch, verdict)
        if dispatch.resolver == "getattr":
            on_tools = dispatch.found_on in ("self", "cls") or TOOLISH.search(dispatch.found_on.rpartition(".")[2])
            return verdict is RAW and bool(on_tools)
        return bool(TOOLISH.search(dispatch.resolver.rpartition(".")[2])) and verdict in (RAW, RAW_WEAK)

    def _resolved_object_runs_raw(self, module: ModuleFacts, dispatch: Dispatch, verdict: Verdict) -> bool:
        """The object a project method returns for the tool's name (``plugin =
        self._get_plugin_by_function_name(name)``), its own entry run with the model's arguments as they arrived
        (``plugin.execute(name, helper, **json.loads(arguments))``), where no framework's tool object validates:
        the plugin is the tool."""
        resolver = self.graph.resolve_method(module, dispatch.resolver, dispatch.function)
        return (
            verdict is RAW
            and dispatch.via in PROJECT_ENTRIES
            and resolver is not None
            and self.graph.function(resolver) is not None
            and bool(TOOLISH.search(dispatch.resolver.rpartition(".")[2]))
            and self.graph.part_of(module) not in self._parts_with_validating_tools
        )

    def _scanned_tool_runs(self, module: ModuleFacts, dispatch: Dispatch) -> bool:
        """A callable found by scanning what no table shows (``self._tools``, handed in) for the item whose name
        is the tool's (``for tool in self._tools: if get_tool_info(tool).name == name``), called with the
        model's own arguments, raw or through the gate: a tool run by name, whatever holds it."""
        return (
            dispatch.scanned
            and dispatch.kind is SiteKind.CALL
            and dispatch.key_is_name
            and self.taint.site_verdict(module, dispatch.function, dispatch.args) in (RAW, RAW_WEAK, GATED)
        )

    def _text_tool_call(self, module: ModuleFacts, dispatch: Dispatch, table: LinkedTable) -> bool:
        """A tool call the model wrote in its text reply, run from a table of project functions: its name and
        its arguments parsed out of the text together (``self.tools[name](**kwargs)``, both from one match)."""
        return any(entry.executors for entry in table.entries) and self.taint.parsed_tool_call(
            module, dispatch.function, dispatch.key_flow, dispatch.args
        )

    def _declared_object_site(self, module: ModuleFacts, dispatch: Dispatch) -> Optional[Site]:
        """A method of an object looked up in a mapping declared to hold a class (``tool_map: dict[str,
        SamplingTool]``; ``tool_map.get(name).run(raw)``): a site when that method hands its arguments to a
        stored callable without validating them, the object's execution method being a sink of its own."""
        verdict = self.taint.site_verdict(module, dispatch.function, dispatch.args)
        if not self._declared_sink(module, dispatch, verdict):
            return None
        return self._site(module, dispatch, True, verdict, constructed=dispatch.object_type, sink_method=True)

    def _declared_sink(self, module: ModuleFacts, dispatch: Dispatch, verdict: Verdict) -> Optional[str]:
        """The method called, when the looked-up object is declared a project class (not a framework's tool) whose
        method hands its arguments to a callable the object holds without validating them. Handed raw arguments
        here, that method's own site (:meth:`_own_callable_site`) would report the same path again."""
        declared = self.graph.resolve(module, dispatch.object_type, dispatch.function)
        if (
            declared is None
            or self.graph.symbols.kind(declared) is not SymbolKind.CLASS
            or self.gates.is_tool_type(declared)
        ):
            return None
        method = self.graph.symbols.member(declared, dispatch.via)
        located = self.graph.function(method) if method else None
        if located is None and self._holds_callable(declared, method):
            return f"{declared}.{dispatch.via}"  # ``tool.target(args)``: the callable itself, no method between
        if located is None or method is None or not self._runs_stored_callable(method, located[1]):
            return None
        if verdict in (RAW, RAW_WEAK):
            self._sinks_run_raw_by_callers.add(method)
        return method

    def _holds_callable(self, declared: str, member: Optional[str]) -> bool:
        """What the class's objects are called through is no method of it or of any base (all the project's, so
        none can define it unseen), only an attribute (``target: Callable[..., Result]``, ``self.target =
        target``): calling it runs the callable the object holds."""
        attribute_only = member is None or self.graph.symbols.kind(member) is not SymbolKind.FUNCTION
        return attribute_only and self.graph.symbols.bases_all_known(declared)

    @staticmethod
    def _site(
        module: ModuleFacts,
        dispatch: Dispatch,
        tool_like: bool,
        verdict: Verdict,
        *,
        key: str = "",
        table: Optional[LinkedTable] = None,
        bypasses: Tuple[Tuple[ModuleFacts, Call], ...] = (),
        constructed: str = "",
        sink_method: bool = False,
        registered_by: str = "",
        resolver: str = "",
        own_callable: bool = False,
    ) -> TableSite:
        """The site of a dispatch (what it hands the tool is its arguments' flows)."""
        return TableSite(
            module,
            dispatch.function,
            dispatch.span,
            dispatch.kind,
            key or dispatch.key,
            tool_like,
            verdict,
            tuple((dispatch.function, flow) for flow in dispatch.args),
            False,
            table,
            dispatch.via,
            bypasses=bypasses,
            constructed=constructed,
            sink_method=sink_method,
            registered_by=registered_by,
            resolver=resolver,
            own_callable=own_callable,
        )

    def _bare_entry(self, module: ModuleFacts, dispatch: Dispatch) -> bool:
        """The looked-up object is declared a project class with no validating entry (``self._tools: dict[str,
        Tool]``, ``tools: list[AgentTool]``), or is of a class nobody declares in a part of the program where no
        tool object validates (no framework's tools are made or derived from there): its ``.func`` is the
        tool's only way in, not a way past a validation."""
        if dispatch.via == "__wrapped__":
            return False  # past a wrapper, which may repair
        if not dispatch.object_type:
            return self.graph.part_of(module) not in self._parts_with_validating_tools
        declared = self.graph.resolve(module, dispatch.object_type, dispatch.function)
        return (
            declared is not None
            and self.graph.symbols.kind(declared) is SymbolKind.CLASS
            and not self.gates.is_tool_type(declared)
        )

    def _bare_entry_site(self, module: ModuleFacts, dispatch: Dispatch) -> Site:
        """A tool object's only entry run with what the site hands it: the stored callable is the tool."""
        verdict = self.taint.site_verdict(module, dispatch.function, dispatch.args)
        return self._site(
            module,
            replace(dispatch, kind=SiteKind.METHOD),
            True,
            verdict,
            constructed=dispatch.object_type,
            sink_method=True,
        )

    def _own_callable_site(self, module: ModuleFacts, dispatch: Dispatch) -> Optional[Site]:
        """A method of a project class that runs the callable its own object holds with the model's arguments, as
        they arrived (``self.fn(**json.loads(tool_call.args))``): the object is a tool and this method its only
        way in, whoever looked the object up. The class's name must say it holds a tool (a ``Prompt`` renders its
        function with a client's arguments, a ``Resource`` reads with its URI's). A framework's tool class is left
        to its model (its raw entry is run by its validating one)."""
        if not (dispatch.kind is SiteKind.BYPASS and dispatch.through_param):
            return None
        qualified = f"{module.module}.{dispatch.function}"
        found = self.graph.function(qualified)
        if found is None or not found[1].class_name or found[1].params[:1] != (dispatch.through_param,):
            return None
        if not TOOLISH.search(found[1].class_name.rpartition(".")[2]):
            return None
        own = f"{dispatch.through_param}.{dispatch.via}"
        calls = [call for _, call in self.graph.calls_in(qualified) if call.span == dispatch.span]
        if not all(call.callee == own or "." not in call.callee for call in calls):
            return None  # ``self.function.entrypoint(...)``: the callable of another object the tool holds
        named = f"{dispatch.through_param}.name"
        if any(kind == "ref" and value == named for call in calls for _, kind, value in call.literals):
            return None  # ``self.func(self.name, args)``: a relay told which tool to call (an MCP client's)
        owner = self.graph.resolve(module, found[1].class_name, dispatch.function)
        if owner is None or self.graph.symbols.kind(owner) is not SymbolKind.CLASS or self.gates.is_tool_type(owner):
            return None
        member = self.graph.symbols.member(owner, dispatch.via)
        if member is not None and self.graph.function(member) is not None:
            return None  # ``self._run(name, args)``: a method of the class, not a callable its objects hold
        if self.taint.site_verdict(module, dispatch.function, dispatch.args) is not RAW:
            return None
        held = replace(dispatch, kind=SiteKind.METHOD, through_param="")
        return self._site(module, held, True, RAW, constructed=found[1].class_name, sink_method=True, own_callable=True)

    def _handed_own_callables(self, module: ModuleFacts, dispatch: Dispatch) -> Iterator[Site]:
        """A runner calling the callable it is handed with the rest of its arguments (``f(*args, **kwargs)`` of
        ``run_sync_or_async(f, *args, **kwargs)``) runs what a tool class's method hands it of its own object's:
        ``run_sync_or_async(self.func, **tool_call.args)`` is that method calling ``self.func`` itself."""
        if dispatch.kind is not SiteKind.CALL or not dispatch.through_param or dispatch.table or dispatch.resolver:
            return
        qualified = f"{module.module}.{dispatch.function}"
        found = self.graph.function(qualified)
        if found is None:
            return
        definition = found[1]
        for caller_module, call in self.graph.callers(qualified, definition):
            position = position_of(call, definition, dispatch.through_param)
            if position is None:
                continue
            held = next((value for slot, kind, value in call.literals if slot == str(position) and kind == "ref"), "")
            receiver, _, attribute = held.partition(".")
            if receiver != "self" or not attribute or "." in attribute:
                continue
            handed = call.positional[position + 1 :] + tuple(flow for _, flow in call.keywords) + call.star
            run = Dispatch(call.function, "", "", "", False, handed, SiteKind.BYPASS, call.span, "self", via=attribute)
            site = self._own_callable_site(caller_module, run)
            if site is not None:
                yield site

    def _routes_to_entry(self, attribute: str) -> bool:
        """In this project the attribute is an entry that routes to its object's validating one (FastMCP's
        ``Tool._run``: task routing, then ``self.run(arguments)``), not the raw implementation: at least half of
        the classes that define it call their own public entry there (CrewAI's two hundred ``_run`` bodies are
        the tools themselves, though one adapter's ``_run`` calls ``self.invoke``)."""
        entries = {f"self.{entry}" for entry in TOOL_ENTRY_METHODS}
        routing: Dict[str, bool] = {}
        for method in self.graph.methods_named(attribute):
            owner = parent_of(base_name(method))
            routes = any(call.callee in entries for _, call in self.graph.calls_in(method))
            routing[owner] = routing.get(owner, False) or routes
        return bool(routing) and 2 * sum(routing.values()) >= len(routing)

    def _runs_stored_callable(self, qualified: str, definition: FunctionDef) -> bool:
        """The method calls a callable it holds (``self.fn(**arguments)``) with one of its own parameters."""
        for _, call in self.graph.calls_in(qualified):
            if not call.callee.startswith("self.") or call.callee.count(".") != 1:
                continue
            flows = call.flows
            if any(mentions_param(flow, definition.qualname) for flow in flows):
                return True
        return False

    def _judge_method_sites(self, sites: List[Site]) -> List[Site]:
        """Tables of framework tools are read through their public (validating) entries: not sites. For other
        tool objects, the methods the project also calls with gated arguments on another path are recorded in
        ``gated_methods``: only those are bypasses when called raw (otherwise the method may well be the
        object's own validating entry). What the gate's output reaches on some path is a tool's entry, by the
        project's own word, even where a hook may replace the repaired arguments before the call."""
        self.gated_methods = self._gated_dispatch_methods | {
            site.method
            for site in sites
            if site.method
            and any(self.taint.may_carry_gated(flow, site.module, function) for function, flow in site.flows)
        }
        return [
            site
            for site in sites
            if not (site.method and (INSPECTING_METHOD.match(site.method) or _of_wrapped_table(site)))
        ]

    def _direct_sites(self, sites: Sequence[Site]) -> List[CallSite]:
        """Calls of a tool's executor by name, with the wire-parsed arguments, outside a name-test chain: a
        second entry point as much as a table (``args = json.loads(tc.function.arguments); memory_tool(...)``).

        Only executors the project registers by tool name (a registration call, or a table keyed by declared
        tool names) count, and only arguments seen coming from the wire: the strongest evidence there is.
        """
        schema_names = set(self.catalog.schemas)
        executors = self.catalog.tools_served(
            table for table in self.catalog.tables.values() if table.configured or table.keys & schema_names
        )
        arm_bodies: Dict[str, List[Span]] = defaultdict(list)
        for site in sites:
            if isinstance(site, ChainSite) and site.arm.body is not None:
                arm_bodies[site.module.path].append(site.arm.body)
        found: List[CallSite] = []
        for module in self.graph.modules:
            for call in module.calls:
                called = self.graph.resolve(
                    module, call.callee, call.function, self.graph.class_of(module, call.function)
                )
                if called is None:
                    kind, names = SiteKind.UNSEEN, self._named_dispatch(call)
                    if not names:
                        continue
                elif called in executors:
                    kind, names = SiteKind.DIRECT, ", ".join(sorted(executors[called])) or called.rsplit(".", 1)[-1]
                elif self._offered_by_own_name(module, called, call.function, executors):
                    kind, names = SiteKind.DIRECT, called.rsplit(".", 1)[-1]
                else:
                    continue
                if any(within(call.span, body) for body in arm_bodies[module.path]):
                    continue
                flows = call.flows
                offered = kind is SiteKind.DIRECT and called not in executors
                if not offered and not any(
                    wire_parsed_here(flow) for flow in (call.star if kind is SiteKind.UNSEEN else flows)
                ):
                    continue  # arguments that arrive as parameters are their callers' dispatch, not this one
                verdict = self.taint.site_verdict(module, call.function, flows)
                if verdict != RAW:
                    continue
                found.append(
                    CallSite(
                        module,
                        call.function,
                        call.span,
                        kind,
                        names,
                        True,
                        verdict,
                        tuple((call.function, flow) for flow in flows),
                        False,
                    )
                )
        return found

    def _registry_round_trips(self) -> List[TableSite]:
        """A tool class that registers its bare function with a registry object handed in (``docket.register(
        self.fn, names=[self.key])``) and, in another method, calls what the same kind of registry returns for a
        key with its arguments (``docket.add(self.key)(**arguments)``): the registry runs the function past the
        validation of the class's own entry (``run``), which is what the rest of the project calls."""
        found: List[TableSite] = []
        for module in self.graph.modules:
            registered = self._bare_registrations(module)
            for dispatch in module.dispatches if registered else ():
                holder = dispatch.resolver.rpartition(".")[0]
                located = self.graph.function(f"{module.module}.{dispatch.function}")
                if dispatch.kind is not SiteKind.CALL or dispatch.table or located is None:
                    continue
                registration = registered.get((located[1].class_name, _registry_identity(located[1], holder)))
                if registration is None or not self._is_tool_class(f"{module.module}.{located[1].class_name}"):
                    continue  # a prompt or a resource registered the same way runs no tool
                attribute, registrar = registration
                verdict = self.taint.site_verdict(module, dispatch.function, dispatch.args)
                reached = replace(dispatch, kind=SiteKind.BYPASS, via=attribute)
                found.append(self._site(module, reached, True, verdict, registered_by=registrar))
        return found

    def _is_tool_class(self, qualified: str) -> bool:
        """A class that is a tool by its lineage (``FunctionTool(Tool)``), not only a component like one."""
        return any("tool" in cls.rsplit(".", 1)[-1].lower() for cls in self.graph.mro(qualified))

    @staticmethod
    def _bare_registrations(module: ModuleFacts) -> Dict[Tuple[str, str], Tuple[str, str]]:
        """``(class, registry parameter's type or name) -> (bare attribute, registering method)`` for each
        method that hands a registry parameter one of its object's bare functions (``self.fn``)."""
        definitions = {definition.qualname: definition for definition in module.functions}
        found: Dict[Tuple[str, str], Tuple[str, str]] = {}
        for call in module.calls:
            definition = definitions.get(call.function)
            holder, _, method = call.callee.rpartition(".")
            if definition is None or not definition.class_name or holder not in definition.params[1:]:
                continue
            registered = next((value for slot, kind, value in call.literals if slot == "0" and kind == "ref"), "")
            owner, _, attribute = registered.partition(".")
            if "register" in method and owner == "self" and attribute in RAW_ENTRIES:
                found[(definition.class_name, _registry_identity(definition, holder))] = (attribute, call.function)
        return found

    def _offered_by_own_name(
        self, module: ModuleFacts, called: str, caller: str, executors: Dict[str, Set[str]]
    ) -> bool:
        """A project function whose name is a tool the same part of the program describes to the model
        (``"name": "transfer_money"`` beside ``def transfer_money``), called from code that is no tool itself:
        what the model asks for under that name runs there, whatever arguments its callers hand on."""
        name = called.rsplit(".", 1)[-1]
        if self.graph.function(called) is None or caller.rsplit(".", 1)[-1] in self.catalog.schemas:
            return False
        if f"{module.module}.{caller}" in executors:
            return False
        part = self.graph.part_of(module)
        return any(self.graph.part_of(found) == part for found, _ in self.catalog.schemas.get(name, []))

    @staticmethod
    def _named_dispatch(call: Call) -> str:
        """The tool-name variable a call of a name bound nowhere in its module hands on first, with the
        arguments unpacked after it (``execute_function_wrapper(function_name, **function_args)``, the wrapper
        injected at run time by a function registry): a dispatch by name that this analysis cannot follow."""
        if "." in call.callee or not call.star or hasattr(builtins, call.callee):
            return ""
        first = next((value for slot, kind, value in call.literals if slot == "0" and kind == "ref"), "")
        return first if "name" in first.rsplit(".", 1)[-1].lower() else ""

    def _expand_param_dispatches(self, module: ModuleFacts, dispatches: List[Dispatch]) -> List[Dispatch]:
        """A dispatch of a tool object handed in as a parameter becomes one dispatch per caller that looked it
        up by name (``tool = self._select_tool(name); self._use(tool, ...)`` then ``tool._run(**args)``)."""
        expanded = []
        for dispatch in dispatches:
            if not dispatch.through_param:
                expanded.append(dispatch)
                continue
            found = self.graph.function(f"{module.module}.{dispatch.function}")
            if found is None:
                continue
            definition = found[1]
            before = len(expanded)
            for _, call in self.graph.callers(f"{module.module}.{dispatch.function}", definition):
                slots = {dispatch.through_param, str(position_of(call, definition, dispatch.through_param))}
                for slot, table, resolver, key, key_is_name in call.looked_up:
                    if slot in slots:
                        expanded.append(
                            replace(
                                dispatch,
                                table=table,
                                resolver=resolver,
                                key=key,
                                key_is_name=key_is_name,
                                through_param="",
                                constructed="",
                            )
                        )
            if len(expanded) == before and dispatch.constructed:
                expanded.append(replace(dispatch, through_param=""))  # judged by its declared type
        return expanded

    def _tool_table_evidence(self, table: LinkedTable, sites: Sequence[Site]) -> bool:
        """A table is a tool table on its own evidence: its name, its keys, its executors, a gated reader."""
        if table.configured or table.keys & set(self.catalog.schemas) or TOOLISH.search(table.definition.name):
            return True
        if any(table_of(site) is table and site.verdict == GATED and site.tool_like for site in sites):
            return True
        for entry in table.entries:
            for executor in entry.executors:
                found = self.graph.function(executor)
                if found is not None and any(param in EXECUTOR_ARGS for param in found[1].params):
                    return True
        return False

    def _bypasses(
        self, module: ModuleFacts, function: str, flows: Sequence[Flow]
    ) -> Tuple[Tuple[ModuleFacts, Call], ...]:
        """Calls of a dispatching function that pass raw arguments where its other callers pass gated ones."""
        params = [flow.name for flow in flows if isinstance(flow, Param) and flow.function == function]
        found = self.graph.function(f"{module.module}.{function}") if params else None
        if found is None:
            return ()
        gated, raw = False, []
        for caller_module, call in self.graph.callers(f"{module.module}.{function}", found[1], hierarchy=True):
            verdicts = []
            for param in params:
                bound = bind(call, found[1], param)
                verdicts.append(UNKNOWN if bound is None else self.taint.evaluate(bound, caller_module, call.function))
            verdict = combine(verdicts, every=False)
            gated = gated or verdict == GATED
            if verdict in (RAW, RAW_WEAK):
                raw.append((caller_module, call))
        return tuple(raw) if gated else ()

    def _chain_sites(self, module: ModuleFacts, chain: NameChain) -> List[ChainSite]:
        class_name = self.graph.class_of(module, chain.function)
        resolved = (
            (self.graph.resolve(module, callee, chain.function, class_name), span) for callee, span in chain.fallbacks
        )
        gated = [
            (q, span)
            for q, span in resolved
            if q is not None and (q in self.gates.gated_entries or q in self.gates.gate_functions)
        ]
        if not gated:
            return []
        fallback, fallback_span = gated[0]
        sites = []
        for arm in chain.arms:
            # what the arm calls itself, then what the closures it binds call when they run
            calls = [(chain.function, arm.callees, arm.flows)]
            for closure in arm.closures:
                for _, call in self.graph.calls_in(f"{module.module}.{closure}", nested=True):
                    flows = call.flows
                    calls.append((call.function, (call.callee,), flows))
            guarded = any(
                self.gates.is_gate_callee(module, callee, function)
                or self.graph.resolve(module, callee, function, class_name) in self.gates.gated_entries
                for function, callees, _ in calls
                for callee in callees
            )
            verdicts = [self.taint.site_verdict(module, function, flows) for function, _, flows in calls]
            verdict = GATED if guarded else combine(verdicts, every=False)
            sites.append(
                ChainSite(
                    module,
                    chain.function,
                    arm.span,
                    SiteKind.CHAIN,
                    chain.variable,
                    True,
                    verdict,
                    tuple((function, flow) for function, _, flows in calls for flow in flows),
                    False,
                    chain,
                    arm,
                    fallback,
                    fallback_span,
                )
            )
        return sites

    def executor_tools(self) -> Dict[str, Set[str]]:
        """Executor function (qualified) -> the tool names it serves: entries of tool tables (a scanned list's
        entries are named after their functions) and registration calls that hand over a handler."""
        if self._executor_tools is None:
            self._executor_tools = self.catalog.tools_served(self.tool_tables() + self.catalog.class_registries())
        return self._executor_tools

    def tool_tables(self, dispatched_only: bool = False) -> List[LinkedTable]:
        """Tables that hold tools: dispatched as tools, configured, or (unless ``dispatched_only``) keyed by
        declared tool names."""
        if dispatched_only not in self._tool_tables:
            self._tool_tables[dispatched_only] = self._find_tool_tables(dispatched_only)
        return list(self._tool_tables[dispatched_only])

    def _find_tool_tables(self, dispatched_only: bool) -> List[LinkedTable]:
        """A table keyed by declared tool names holds tools only while nothing says otherwise: once the project
        reads it, what its readers hand it decides (``commands[args[0]](args[1:])`` runs a command line's
        handlers, whatever their keys spell)."""
        schema_names = set(self.catalog.schemas)
        dispatched = {
            id(table_of(site))
            for site in self.sites
            if table_of(site) is not None and (site.unguarded or (site.tool_like and site.verdict == GATED))
        }
        read = {id(table_of(site)) for site in self.sites if table_of(site) is not None}
        return [
            table
            for table in self.catalog.tables.values()
            if id(table) in dispatched
            or table.configured
            or (not dispatched_only and id(table) not in read and table.keys & schema_names)
        ]

    def sites_of(self, table: LinkedTable) -> List[TableSite]:
        if self._sites_by_table is None:
            self._sites_by_table = defaultdict(list)
            for site in self.sites:
                if isinstance(site, TableSite) and site.table is not None:
                    self._sites_by_table[id(site.table)].append(site)
        return list(self._sites_by_table.get(id(table), []))


def _one_of(method: str, methods: Set[str]) -> bool:
    """``method`` is one of ``methods``, or the async twin of one: the same entry, awaited."""
    return method in methods or bool(_sync_twins(method) & methods)


def _sync_twins(method: str) -> Set[str]:
    """The names ``method`` is the async twin of: ``arun_with_timing`` of ``run_with_timing``, ``_arun`` of
    ``_run``, ``ainvoke`` of ``invoke``, ``async_call`` and ``call_async`` of ``call``."""
    bare = method.lstrip("_")
    prefix = method[: len(method) - len(bare)]
    twins = set()
    if bare.startswith("async_"):
        twins.add(prefix + bare[len("async_") :])
    elif bare.startswith("a") and len(bare) > 1:
        twins.add(prefix + bare[1:])
    if method.endswith("_async"):
        twins.add(method[: -len("_async")])
    return twins


def _of_wrapped_table(site: Site) -> bool:
    table = table_of(site)
    return table is not None and table.wrapped
