"""Link per-module facts into one project model.

Names written in one module (``from m import T as X``, ``mm.T``, ``self.tools``) are resolved to qualified names
(``pkg.m.T``) through imports, aliases, class hierarchies and enclosing functions. On top of that the project
knows its gates, its executor tables (with fills and decorator registrations), every dispatch site with a verdict
on the arguments it passes, and the tool schemas it declares. Rules only read this model.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from dispatchlint.analysis import _syntax as syn
from dispatchlint.analysis.facts import (
    WEAK_JSON,
    Call,
    CallResult,
    ChainArm,
    Dispatch,
    Either,
    Flow,
    FunctionDef,
    Location,
    ModuleFacts,
    NameChain,
    Param,
    Raw,
    SchemaDef,
    Span,
    TableDef,
    TableFill,
    ValueRef,
)
from dispatchlint.analysis._schemas import class_schema_key
from dispatchlint.analysis.discover import PathMatcher
from dispatchlint.analysis.symbols import SymbolTable, scoped
from dispatchlint.config import Config

#: One step of a finding's trace.
Step = Location

GATED = "gated"
#: The model's arguments, seen flowing from the wire (``json.loads``, ``tool_call.function.arguments``).
RAW = "raw"
#: Probably the model's arguments (a parameter named like them whose callers cannot be followed, or the
#: ``json.loads`` of some string): raw only with corroborating evidence that the path runs a tool.
RAW_WEAK = "raw-weak"
UNKNOWN = "unknown"
#: Known not to be the model's arguments (an argparse namespace): a parameter fed only this is not raw, whatever
#: its name.
NOT_MODEL = "not-model"
#: Calls whose result is a command line's parsed arguments.
_COMMAND_LINE_PARSERS = ("parse_args", "parse_known_args", "parse_intermixed_args")

DEFAULT_GATE = "coerce_tool_args"
RUNTIME_PACKAGE = "dispatchlint.runtime"
_SANITIZER_NAME = re.compile(r"un_?rename|unsaniti[sz]|desaniti[sz]|restore\w*name|original_name", re.IGNORECASE)
_MAX_DEPTH = 4
#: Parameter names that make a function look like a tool executor (``def _plan(agent, args, ctx)``); not the
#: generic ``kwargs``/``params`` that any factory takes.
_EXECUTOR_ARGS = syn.ARGS_NAMES - {"kwargs", "params"}
#: Packages whose tool objects validate their arguments in their public entry (``BaseTool.run``,
#: ``FunctionTool.on_invoke_tool``, MCP ``Tool.run``...): a table of them is guarded when used that way.
FRAMEWORK_PACKAGES = (
    "langchain",
    "langchain_core",
    "langchain_community",
    "langgraph",
    "agents",
    "pydantic_ai",
    "mcp",
    "fastmcp",
    "crewai",
    "crewai_tools",
    "autogen",
    "autogen_core",
    "autogen_agentchat",
    "autogen_ext",
    "camel",
    "agno",
    "phi",
    "smolagents",
    "llama_index",
    "haystack",
    "semantic_kernel",
)
#: The public entries of tool objects: where a tool class that validates its arguments does so.
TOOL_ENTRY_METHODS = (
    "run",
    "arun",
    "invoke",
    "ainvoke",
    "__call__",
    "call",
    "acall",
    "async_call",
    "execute",
    "aexecute",
    "on_invoke_tool",
)
_HANDLER_KEYWORDS = ("handler", "fn", "func", "function", "executor", "callback", "implementation")
_TOOLISH = re.compile(r"tool|function|func\b|fn\b|executor|skill|capabilit", re.IGNORECASE)


@dataclass(frozen=True)
class LinkedEntry:
    """One tool in a table, wherever it was put there (literal, fill, decorator)."""

    key: Optional[str]
    module: ModuleFacts
    span: Span
    executors: Tuple[str, ...]
    wrapped: bool
    #: The value is a class (an argument model or a tool class), not a function.
    is_class: bool = False
    #: For a tool class, the methods that run the tool (``Search.call``): its executors once instantiated.
    methods: Tuple[str, ...] = ()


@dataclass
class LinkedTable:
    qualname: str
    module: ModuleFacts
    definition: TableDef
    entries: List[LinkedEntry] = field(default_factory=list)
    wrapped: bool = False
    configured: bool = False
    #: Built as ``{t.name: t for t in tools}``: the values are tool objects, whose calls this cannot judge.
    holds_objects: bool = False

    @property
    def display_name(self) -> str:
        definition = self.definition
        if definition.scope in ("class", "instance"):
            return f"{definition.owner}.{definition.name}"
        return definition.name

    @property
    def keys(self) -> Set[str]:
        return {entry.key for entry in self.entries if entry.key is not None}


@dataclass(frozen=True)
class Site:
    """A place where a tool runs: a dispatch of a table value, or an arm of a name-test chain."""

    module: ModuleFacts
    function: str
    span: Span
    kind: str
    key: str
    tool_like: bool
    verdict: str
    table: Optional[LinkedTable] = None
    chain: Optional[NameChain] = None
    arm: Optional[ChainArm] = None
    fallback: str = ""
    #: The fallback's call of the gated entry (for chain arms).
    fallback_span: Optional[Span] = None
    #: Independent evidence that this is a tool path (not only a parameter's name).
    corroborated: bool = False
    #: When some callers of the dispatching function pass gated arguments and others raw ones, the raw calls
    #: (module, call): those are the bypasses, not the dispatch itself.
    bypasses: Tuple[Tuple[ModuleFacts, Call], ...] = ()
    #: The tool object is built at the site by calling this (``SearchTool()._run(...)``).
    constructed: str = ""
    #: What the site hands the tool: ``(function the flow is read in, flow)``, for the finding's trace.
    flows: Tuple[Tuple[str, Flow], ...] = ()

    @property
    def method(self) -> str:
        """The method of a looked-up tool object that the site calls (``tool.call(ctx, **args)``), if any."""
        return self.kind.split(":", 1)[1] if self.kind.startswith("method:") else ""

    @property
    def reaches_past(self) -> bool:
        """The call reaches past a tool object's own validation (``tool.func(...)``, ``tool._run(...)``)."""
        return self.kind.startswith("bypass:")

    @property
    def unguarded(self) -> bool:
        """A tool runs here with the model's arguments as they arrived."""
        return self.tool_like and (self.verdict == RAW or (self.verdict == RAW_WEAK and self.corroborated))


@dataclass(frozen=True)
class Invocation:
    """A call that runs a function: a direct call, or a call of the parameter it was handed to.

    ``context`` is set for the latter: the call that handed the function on (and the receiver's definition),
    so that what the receiver passes from its own parameters is read at that call, not at every call of the
    receiver (``run_middleware(name, gated, lambda a: fn(a))`` and ``run_middleware(name, raw, ...)`` differ).
    """

    module: ModuleFacts
    call: Call
    context: Optional[Tuple[ModuleFacts, Call, FunctionDef]] = None


class Project:
    """The whole project's facts, linked. Build once per run; everything is computed on first use."""

    def __init__(self, modules: Sequence[ModuleFacts], config: Config) -> None:
        self.config = config
        self.modules = [module for module in modules if module.parse_error is None]
        self.broken = [module for module in modules if module.parse_error is not None]
        self._tests = PathMatcher(config.test_paths)
        self.symbols = SymbolTable(self.modules)
        self.module_names = self.symbols.module_names
        # Answers computed on first use (the model does not change once linked).
        self._executor_tools: Optional[Dict[str, Set[str]]] = None
        self._tool_tables: Dict[bool, List[LinkedTable]] = {}
        self._sites_by_table: Optional[Dict[int, List[Site]]] = None
        self._gates: Dict[bool, List[Tuple[ModuleFacts, FunctionDef]]] = {}
        self._tool_types: Dict[str, bool] = {}
        self.gate_names = {DEFAULT_GATE} | {gate.split(".")[-1] for gate in config.gates}
        self.sanitizers = self._find_sanitizers()
        self._calls_by_function: Dict[str, List[Tuple[ModuleFacts, Call]]] = defaultdict(list)
        self._callers: Dict[str, List[Tuple[ModuleFacts, Call]]] = defaultdict(list)
        self._callers_by_name: Dict[str, List[Tuple[ModuleFacts, Call]]] = defaultdict(list)
        #: Function (qualified, without a redefinition's ``@LINE``) -> the calls that hand it on as a value.
        self._handed: Dict[str, List[Tuple[ModuleFacts, Call, str]]] = defaultdict(list)
        self._index_calls()
        self.gate_functions = self._find_gate_functions()
        self.gated_entries = self._find_gated_entries()
        self.schemas = self._collect_schemas()
        self.tables = self._link_tables()
        self._verdicts: Dict[Tuple[str, str], str] = {}
        #: Methods of tool objects that some path calls with gated arguments (``tool.call(ctx, **gated)``).
        self.gated_methods: Set[str] = set()
        self.sites = self._link_sites()
        #: The project repairs tool arguments somewhere: a function passes its arguments through a gate, a
        #: table is wrapped, or a tool runs with gated arguments. A function that merely looks like a gate (it
        #: reads a schema's ``properties``) but never sits on a tool's path does not count.
        self.has_gate = bool(
            self.gated_entries
            or any(table.wrapped for table in self.tables.values())
            or any(site.tool_like and site.verdict == GATED for site in self.sites)
        )
        #: The project's tools validate their own arguments somewhere: it builds tools of a framework that
        #: validates them, or defines tool classes whose public entry does. Not a gate on the project's own
        #: paths, but a project that has it is not ungated (DL102 stays silent).
        self.validates_tools = self.has_gate or self._uses_validating_tools()

    # ------------------------------------------------------------------------------------------ symbols

    def function(self, qualified: str) -> Optional[Tuple[ModuleFacts, FunctionDef]]:
        return self.symbols.function(qualified)

    def class_of(self, module: ModuleFacts, function: str) -> str:
        return self.symbols.class_of(module, function)

    def resolve(self, module: ModuleFacts, dotted: str, function: str = "", class_name: str = "") -> Optional[str]:
        """The qualified name ``dotted`` denotes where it is written (external names are returned as imported).
        ``f().attr`` is ``attr`` of what project function ``f`` returns (``_ra().handle_function_call``, where
        ``_ra`` imports a module lazily and returns it)."""
        head, call, rest = dotted.partition("().")
        if not call:
            return self.symbols.resolve(module, dotted, function, class_name)
        for returned in self.returned_symbols(module, head, function, class_name):
            found = self.symbols.canonical(f"{returned}.{rest}")
            if found is not None:
                return found
        return None

    def returned_symbols(self, module: ModuleFacts, callee: str, function: str, class_name: str) -> List[str]:
        """What the project function ``callee`` (as written there) returns by name: modules, tables, objects."""
        resolved = self.symbols.resolve(module, callee, function, class_name)
        found = self.function(resolved) if resolved else None
        if found is None:
            return []
        callee_module, definition = found
        names = (
            self.symbols.resolve(callee_module, name, definition.qualname, definition.class_name)
            for name in definition.returns_names
        )
        return [name for name in names if name is not None]

    def mro(self, class_qualified: str) -> List[str]:
        return self.symbols.mro(class_qualified)

    def is_test(self, module: ModuleFacts) -> bool:
        """Test code: linked like the rest, but never reported and never a gate or a sanitizer."""
        return self._tests.matches(module.path)

    def _find_sanitizers(self) -> Set[str]:
        """Configured sanitizers, and functions named like one that really translate the keys of a mapping
        (a test named ``test_restores_original_name`` restores nothing)."""
        found = set(self.config.sanitizers)
        for module in self.modules:
            if self.is_test(module):
                continue
            for function in module.functions:
                if _SANITIZER_NAME.search(function.name) and function.renames_keys:
                    found.add(f"{module.module}.{function.qualname}")
        return found

    def is_sanitizer(self, module: ModuleFacts, callee: str, function: str) -> bool:
        if callee.split(".")[-1] in {name.split(".")[-1] for name in self.sanitizers}:
            return True
        return self.resolve(module, callee, function, self.class_of(module, function)) in self.sanitizers

    def _find_gate_functions(self) -> Set[str]:
        """Gates by name (default and configured) and by behaviour (reads schema properties or validates)."""
        configured = set(self.config.gates)
        found = {gate for gate in configured}
        found.add(f"{RUNTIME_PACKAGE}.coerce_args")
        for module in self.modules:
            if self.is_test(module):
                continue
            for function in module.functions:
                qualified = f"{module.module}.{function.qualname}"
                if function.name in self.gate_names and (
                    function.name == DEFAULT_GATE or qualified in configured or not configured
                ):
                    found.add(qualified)
                elif qualified in configured:
                    found.add(qualified)
                elif self._behaves_like_gate(qualified, function):
                    found.add(qualified)
        return found

    def _behaves_like_gate(self, qualified: str, function: FunctionDef) -> bool:
        """Reads a schema's ``properties`` and rewrites values, or validates, and sits on a tool path: some call
        hands it the model's arguments (an API helper that reads a request body's ``properties`` does not)."""
        takes_arguments = any(param in syn.ARGS_NAMES for param in function.params)
        if not takes_arguments or qualified in self.sanitizers or _SANITIZER_NAME.search(function.name):
            return False
        behaves = (function.reads_schema_properties and function.rewrites_values) or function.validates_arguments
        return behaves and any(
            _model_arguments(flow)
            for _, call in self.callers(qualified, function)
            for flow in list(call.positional) + [flow for _, flow in call.keywords] + list(call.star)
        )

    def is_gate_callee(self, module: ModuleFacts, callee: str, function: str) -> bool:
        if callee.split(".")[-1] in self.gate_names:
            return True
        resolved = self.resolve(module, callee, function, self.class_of(module, function))
        return resolved is not None and (resolved in self.gate_functions or resolved.startswith(RUNTIME_PACKAGE))

    def _index_calls(self) -> None:
        function_names: Dict[str, int] = defaultdict(int)
        for module in self.modules:
            for function in module.functions:
                if function.class_name:  # ``obj.method(...)`` on an object of unknown type: methods only
                    function_names[function.name] += 1
        self._nested_owners: Dict[str, List[str]] = defaultdict(list)
        for module in self.modules:
            for call in module.calls:
                owner = f"{module.module}.{call.function}" if call.function else module.module
                if owner not in self._calls_by_function:
                    parts = call.function.split(".") if call.function else []
                    for depth in range(1, len(parts)):
                        self._nested_owners[f"{module.module}.{'.'.join(parts[:depth])}"].append(owner)
                self._calls_by_function[owner].append((module, call))
                for slot, handed in call.functions:
                    self._handed[_base(f"{module.module}.{handed}")].append((module, call, slot))
                for slot, kind, value in call.literals:
                    if kind == "ref" and not any(slot == handed_slot for handed_slot, _ in call.functions):
                        target = self.resolve(module, value, call.function, self.class_of(module, call.function))
                        if target is not None and self.function(target) is not None:
                            self._handed[_base(target)].append((module, call, slot))
                resolved = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
                if resolved is not None and self.symbols.kind(resolved) == "class":
                    resolved = self.symbols.member(resolved, "__init__")
                if resolved is not None and self.function(resolved) is not None:
                    self._callers[resolved].append((module, call))
                elif "." in call.callee and not call.callee.startswith(("self.", "cls.")):
                    name = call.callee.split(".")[-1]
                    if function_names.get(name) == 1:
                        self._callers_by_name[name].append((module, call))

    def calls_in(self, function_qualified: str, nested: bool = False) -> List[Tuple[ModuleFacts, Call]]:
        """Calls made by a function (and by its nested functions when ``nested``)."""
        found = list(self._calls_by_function.get(function_qualified, []))
        if nested:
            for owner in self._nested_owners.get(function_qualified, ()):
                found.extend(self._calls_by_function[owner])
        return found

    def _find_gated_entries(self) -> Set[str]:
        """Functions that pass one of their own parameters through a gate (``handle_function_call``)."""
        entries = set()
        for owner, calls in self._calls_by_function.items():
            for module, call in calls:
                if not call.function or not self.is_gate_callee(module, call.callee, call.function):
                    continue
                flows = list(call.positional) + [flow for _, flow in call.keywords] + list(call.star)
                if any(_mentions_param(flow, call.function) for flow in flows):
                    entries.add(owner)
        return entries

    def calls_gate(self, function_qualified: str) -> bool:
        """Whether a function (or a closure inside it) calls a gate: a wrapper that repairs arguments."""
        if function_qualified in self.gate_functions:
            return True
        return any(
            self.is_gate_callee(module, call.callee, call.function)
            for module, call in self.calls_in(function_qualified, nested=True)
        )

    # ------------------------------------------------------------------------------------------ verdicts

    def evaluate(self, flow: Flow, module: ModuleFacts, function: str, depth: int = 0) -> str:
        """Whether a value reaching a site is the model's raw arguments, gated arguments, or unknown."""
        if isinstance(flow, Raw):
            return RAW_WEAK if flow.why == WEAK_JSON else RAW
        if isinstance(flow, Either):
            return combine([self.evaluate(option, module, function, depth) for option in flow.options], every=True)
        if isinstance(flow, CallResult):
            class_name = self.class_of(module, function)
            if flow.callee.rsplit(".", 1)[-1] in _COMMAND_LINE_PARSERS:
                return NOT_MODEL
            if self.is_gate_callee(module, flow.callee, function) and not flow.first_of_tuple:
                return GATED
            resolved = self.resolve(module, flow.callee, function, class_name)
            if resolved is not None and resolved in self.gated_entries and not flow.first_of_tuple:
                return GATED
            return self._returned_verdict(resolved, flow, module, function, depth)
        if isinstance(flow, Param):
            return self._param_verdict(module, flow, depth)
        return UNKNOWN

    def _returned_verdict(
        self, callee: Optional[str], flow: CallResult, module: ModuleFacts, function: str, depth: int
    ) -> str:
        """What a project function gives back, judged from its ``return`` statements (``args = parse(call)``).
        A returned parameter stands for what this call passes for it."""
        found = self.function(callee) if callee else None
        if found is None or depth > _MAX_DEPTH:
            return UNKNOWN
        callee_module, definition = found
        verdicts = []
        for is_tuple, returned in definition.returns:
            if is_tuple != flow.first_of_tuple:
                continue
            if isinstance(returned, Param) and returned.function == definition.qualname:
                call = Call(function, flow.callee, flow.args, (), (), definition.span)
                bound = _bind(call, definition, returned.name)
                verdicts.append(UNKNOWN if bound is None else self.evaluate(bound, module, function, depth + 1))
            else:
                verdicts.append(self.evaluate(returned, callee_module, definition.qualname, depth + 1))
        return combine(verdicts, every=True)

    def _param_verdict(self, module: ModuleFacts, flow: Param, depth: int) -> str:
        qualified = f"{module.module}.{flow.function}"
        memo_key = (qualified, flow.name)
        if memo_key in self._verdicts:
            return self._verdicts[memo_key]
        found = self.function(qualified)
        if found is None or depth > _MAX_DEPTH:
            return UNKNOWN
        self._verdicts[memo_key] = UNKNOWN  # a cycle of calls says nothing
        definition = found[1]
        by_name = RAW_WEAK if flow.name in syn.ARGS_NAMES else UNKNOWN
        verdicts = []
        for invocation in self.invocations(qualified, definition):
            bound = _bind(invocation.call, definition, flow.name)
            verdicts.append(UNKNOWN if bound is None else self._evaluate_passed(bound, invocation, depth + 1))
        # Callers decide when they can be read; where none can (no caller, or values this analysis cannot
        # follow), a parameter named like a tool call's arguments holds them as the model sent them.
        verdict = combine(verdicts, every=True) if verdicts else by_name
        if verdict == UNKNOWN and NOT_MODEL not in verdicts:
            verdict = by_name
        self._verdicts[memo_key] = verdict
        return verdict

    def _evaluate_passed(self, flow: Flow, invocation: Invocation, depth: int) -> str:
        """What an invocation passes: a parameter of a receiver that was handed the function stands for what
        the handing call passed for it."""
        if invocation.context is not None and isinstance(flow, Param):
            handing_module, handing_call, receiver = invocation.context
            if _base(flow.function) == _base(receiver.qualname):
                rebound = _bind(handing_call, receiver, flow.name)
                if rebound is None:
                    return UNKNOWN
                return self.evaluate(rebound, handing_module, handing_call.function, depth)
        return self.evaluate(flow, invocation.module, invocation.call.function, depth)

    def callers(self, qualified: str, definition: FunctionDef) -> List[Tuple[ModuleFacts, Call]]:
        found = list(self._callers.get(_base(qualified), []))
        if definition.class_name:
            found.extend(self._callers_by_name.get(definition.name, []))
        return found

    def invocations(self, qualified: str, definition: FunctionDef) -> List[Invocation]:
        """Every call that runs a function: its callers, and the calls of the parameters it is handed to."""
        found = [Invocation(module, call) for module, call in self.callers(qualified, definition)]
        return found + self._handed_invocations(qualified, 0)

    def _handed_invocations(self, qualified: str, depth: int) -> List[Invocation]:
        """Calls of a function handed on as a value: the receiver calls the parameter it arrives in
        (``execute(args)``), stores it and calls it from a method (``self._run_fn(args)``), or hands it on."""
        found: List[Invocation] = []
        for module, call, slot in self._handed.get(_base(qualified), []) if depth < 3 else []:
            receiver = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
            if receiver is not None and self.symbols.kind(receiver) == "class":
                receiver = self.symbols.member(receiver, "__init__")
            located = self.function(receiver) if receiver else None
            if located is None or receiver is None:
                continue
            receiver_module, definition = located
            parameter = _param_at(call, definition, slot)
            if parameter is None:
                continue
            context = (module, call, definition)
            for inner_module, inner in self.calls_in(receiver, nested=True):
                if inner.callee == parameter:
                    found.append(Invocation(inner_module, inner, context))
                elif any(kind == "ref" and value == parameter for _, kind, value in inner.literals):
                    found.extend(self._handed_onwards(inner_module, inner, parameter, depth))
            for attribute in _stored_attributes(receiver_module, definition, parameter):
                for method_call in receiver_module.calls:
                    if method_call.callee == f"self.{attribute}" and _base(
                        self.class_of(receiver_module, method_call.function)
                    ) == _base(definition.class_name):
                        found.append(Invocation(receiver_module, method_call))
        return found

    def _handed_onwards(self, module: ModuleFacts, call: Call, parameter: str, depth: int) -> List[Invocation]:
        """A receiver hands the function on again (``return self._next(execute, args)``)."""
        slots = [slot for slot, kind, value in call.literals if kind == "ref" and value == parameter]
        receiver = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
        located = self.function(receiver) if receiver else None
        if located is None or receiver is None:
            return []
        found = []
        for slot in slots:
            inner_parameter = _param_at(call, located[1], slot)
            for inner_module, inner in self.calls_in(receiver, nested=True) if inner_parameter else []:
                if inner.callee == inner_parameter:
                    found.append(Invocation(inner_module, inner))
        return found

    # ------------------------------------------------------------------------------------------ schemas

    def _collect_schemas(self) -> Dict[str, List[Tuple[ModuleFacts, SchemaDef]]]:
        schemas: Dict[str, List[Tuple[ModuleFacts, SchemaDef]]] = defaultdict(list)
        for module in self.modules:
            for schema in module.schemas:
                schemas[schema.tool].append((module, schema))
        return schemas

    def declared_types(self, tool: str, parameter: str) -> Optional[Tuple[str, ...]]:
        """The JSON types a tool's schema declares for a parameter (None: no schema mentions it)."""
        for _, schema in self.schemas.get(tool, []):
            for name, types in schema.properties:
                if name == parameter:
                    return types
        return None

    # ------------------------------------------------------------------------------------------ tables

    def _link_tables(self) -> Dict[str, LinkedTable]:
        tables: Dict[str, LinkedTable] = {}
        for module in self.modules:
            for definition in module.tables:
                qualified = scoped(module.module, definition.owner, definition.name)
                table = tables.get(qualified)
                if table is None:
                    table = tables[qualified] = LinkedTable(qualified, module, definition)
                context = definition.owner if definition.scope == "local" else ""
                owner_class = definition.owner if definition.scope in ("class", "instance") else ""
                for entry in definition.entries:
                    linked = self._entry(module, context, entry.key, entry.value, entry.span, owner_class)
                    if definition.is_list and linked.executors:  # a scanned list is keyed by function name
                        linked = replace(linked, key=linked.executors[0].rsplit(".", 1)[-1])
                    table.entries.append(linked)
        registrars: Dict[str, Tuple[LinkedTable, TableFill, ModuleFacts]] = {}
        for module in self.modules:
            for fill in module.fills:
                class_name = self.class_of(module, fill.function)
                resolved = self.resolve(module, fill.table, fill.function, class_name)
                table = tables.get(resolved or "")
                if table is None:
                    continue
                if fill.function and self._stored_param(module, fill) is not None:
                    registrars[f"{module.module}.{fill.function}"] = (table, fill, module)
                else:
                    table.entries.append(self._entry(module, fill.function, fill.key, fill.value, fill.span))
        self._register_decorated(registrars)
        self._register_calls(registrars)
        self._link_rebuilt_tables(tables)
        configured = set(self.config.tables)
        for table in tables.values():
            table.configured = table.qualname in configured or table.definition.name in configured
            comprehension = table.definition.comprehension
            table.holds_objects = comprehension is not None and comprehension.kind == "object"
            if comprehension is not None:
                comp_entry = self._entry(
                    table.module, table.definition.owner, None, comprehension, table.definition.span
                )
                table.wrapped = comp_entry.wrapped
            else:
                table.wrapped = bool(table.entries) and all(entry.wrapped for entry in table.entries)
        self._tables_by_name = tables
        return tables

    def _link_rebuilt_tables(self, tables: Dict[str, LinkedTable]) -> None:
        """Tables rebuilt from another one carry its tools: ``{k: _coerced(k, v) for k, v in RAW.items()}`` and
        ``wrap_table(RAW, SCHEMAS)`` (the latter wrapped by the bundled coercer)."""
        for table in list(tables.values()):
            definition = table.definition
            if definition.source:
                context = definition.owner if definition.scope == "local" else ""
                resolved = self.resolve(table.module, definition.source, context, self.class_of(table.module, context))
                source = tables.get(resolved or "")
                if source is not None and source is not table:
                    wrapped = self._entry(
                        table.module, context, None, definition.comprehension or ValueRef("other"), definition.span
                    ).wrapped
                    table.entries.extend(replace(entry, wrapped=entry.wrapped or wrapped) for entry in source.entries)
        for module in self.modules:
            for alias in module.aliases:
                if alias.target.kind != "call" or not alias.target.call_args:
                    continue
                wrapper = self.resolve(module, alias.target.target, alias.function)
                if not (wrapper and wrapper.startswith(RUNTIME_PACKAGE)):
                    continue
                source = tables.get(self.resolve(module, alias.target.call_args[0], alias.function) or "")
                qualified = scoped(module.module, alias.owner, alias.name)
                if source is None or qualified in tables:
                    continue
                # the wrapping call stands for the comprehension: whatever the source holds, the result is wrapped
                definition = TableDef(alias.name, alias.scope, alias.owner, alias.span, (), alias.target)
                entries = [replace(entry, wrapped=True) for entry in source.entries]
                tables[qualified] = LinkedTable(qualified, module, definition, entries)

    def _register_decorated(self, registrars: Dict[str, Tuple[LinkedTable, TableFill, ModuleFacts]]) -> None:
        """Functions decorated by a registering decorator (``@tool("name")`` doing ``TOOLS[name] = fn``)."""
        if not registrars:
            return
        decorators = dict(registrars)
        for registrar in registrars:  # a decorator factory: the registrar is the decorator it returns
            parent = registrar.rpartition(".")[0]
            if self.function(parent):
                decorators.setdefault(parent, registrars[registrar])
        for module in self.modules:
            for function in module.functions:
                for decorator, key in zip(function.decorators, function.decorator_keys):
                    if decorator.kind not in ("ref", "call"):
                        continue
                    resolved = self.resolve(module, decorator.target, _parent(function.qualname))
                    if resolved not in decorators:
                        continue
                    table, fill, registrar_module = decorators[resolved]
                    qualified = f"{module.module}.{function.qualname}"
                    table.entries.append(
                        LinkedEntry(
                            key or function.name,
                            module,
                            function.span,
                            (qualified,),
                            self._registered_wrapped(fill, registrar_module, qualified),
                        )
                    )
            for cls in module.classes:  # @register_tool("search") class Search(BaseTool): ...
                for decorator, key in zip(cls.decorators, cls.decorator_keys):
                    resolved = self.resolve(module, decorator.target, _parent(cls.qualname))
                    if decorator.kind not in ("ref", "call") or resolved not in decorators:
                        continue
                    qualified = f"{module.module}.{cls.qualname}"
                    methods = tuple(
                        found
                        for found in (self.symbols.member(qualified, name) for name in TOOL_ENTRY_METHODS)
                        if found is not None and self.function(found) is not None
                    )
                    entry = LinkedEntry(key or cls.qualname, module, cls.span, (), False, True, methods[:1])
                    decorators[resolved][0].entries.append(entry)
                    for cls_name in self.mro(qualified):  # the class's own ``parameters`` names that tool
                        located = self.symbols.class_def(cls_name)
                        if located is not None and entry.key is not None:
                            declared = self.schemas.get(class_schema_key(located[0].qualname), [])
                            self.schemas[entry.key].extend(
                                (owner, replace(schema, tool=entry.key))
                                for owner, schema in declared
                                if owner is located[1]
                            )

    def _register_calls(self, registrars: Dict[str, Tuple[LinkedTable, TableFill, ModuleFacts]]) -> None:
        """Calls of a registering function: ``registry.register("recall", recall, schema=...)``."""
        for registrar, (table, fill, registrar_module) in registrars.items():
            found = self.function(registrar)
            if found is None or fill.key_param is None:
                continue
            definition = found[1]
            for module, call in self.callers(registrar, definition):
                literals = dict(((slot, (kind, value)) for slot, kind, value in call.literals))
                key = _bound_literal(literals, definition, fill.key_param, call, "str")
                stored = self._stored_param(registrar_module, fill)
                value = _bound_literal(literals, definition, stored, call, "ref") if stored else None
                class_name = self.class_of(module, call.function)
                executor = self.resolve(module, value, call.function, class_name) if value else None
                if executor is None or self.function(executor) is None:
                    continue
                table.entries.append(
                    LinkedEntry(
                        key,
                        module,
                        call.span,
                        (executor,),
                        self._registered_wrapped(fill, registrar_module, executor),
                    )
                )

    def _stored_param(self, module: ModuleFacts, fill: TableFill) -> Optional[str]:
        """What a registering function stores: the function it was handed (``TOOLS[name] = fn``), a wrapper of
        it (``TOOLS[name] = _coerced(name, fn)``), or a nested ``def``; ``""`` for the last, None otherwise."""
        value = fill.value
        if value.kind == "param":
            return value.target
        if value.kind == "def":
            return ""
        found = self.function(f"{module.module}.{fill.function}") if value.kind == "call" else None
        if found is None:
            return None
        passed = [name for name in value.call_args if name in found[1].params and name != fill.key_param]
        return passed[0] if passed else None

    def _registered_wrapped(self, fill: TableFill, registrar_module: ModuleFacts, executor: str) -> bool:
        """A registrar that stores a gate-calling wrapper (or an executor that gates itself) guards the entry."""
        if fill.value.kind == "def" and self.calls_gate(f"{registrar_module.module}.{fill.value.target}"):
            return True
        if fill.value.kind == "call":
            wrapper = self.resolve(registrar_module, fill.value.target, fill.function)
            if wrapper and (
                wrapper.startswith(RUNTIME_PACKAGE) or (self.function(wrapper) and self.calls_gate(wrapper))
            ):
                return True
        return executor in self.gated_entries or self._decorated_by_gate(executor)

    def _entry(
        self,
        module: ModuleFacts,
        context: str,
        key: Optional[str],
        value: ValueRef,
        span: Span,
        class_name: str = "",
    ) -> LinkedEntry:
        """One table value: what runs for it (executors) and whether a gate wraps it. ``context`` is the function
        the value is written in; ``class_name`` the class whose ``self`` it may name."""
        class_name = class_name or (self.class_of(module, context) if context else "")
        executors: Tuple[str, ...] = ()
        wrapped = False
        if value.kind in ("ref", "def"):
            target = (
                f"{module.module}.{value.target}"
                if value.kind == "def"
                else self.resolve(module, value.target, context, class_name)
            )
            if target and self.function(target):
                executors = (target,)
                wrapped = target in self.gated_entries or self._decorated_by_gate(target)
            elif self.symbols.kind(target) == "class":
                return LinkedEntry(key, module, span, (), False, is_class=True)
            elif target and self.symbols.alias(target) is not None:
                alias, alias_module = self.symbols.alias(target)  # type: ignore[misc]
                if alias.target.kind == "call":  # search_tool = StructuredTool.from_function(...)
                    made_by = self.resolve(alias_module, alias.target.target, alias.function)
                    wrapped = bool(made_by and self._makes_framework_tool(made_by))
        elif value.kind == "lambda":
            target = self.resolve(module, value.target, context, class_name) if value.target else None
            executors = (target,) if target and self.function(target) else ()
            wrapped = any(self.is_gate_callee(module, callee, context) for callee in value.call_args)
        elif value.kind == "call":
            callee = self.resolve(module, value.target, context, class_name)
            if callee and self._makes_framework_tool(callee):
                wrapped = True
            elif callee and (callee.startswith(RUNTIME_PACKAGE) or (self.function(callee) and self.calls_gate(callee))):
                wrapped = True
                passed = (self.resolve(module, name, context, class_name) for name in value.call_args)
                executors = tuple(q for q in passed if q and self.function(q))
            elif callee and self.function(callee):
                executors = tuple(f"{m.module}.{f.qualname}" for m, f in self._nested_functions(callee))
        return LinkedEntry(key, module, span, executors, wrapped)

    def _decorated_by_gate(self, qualified: str) -> bool:
        """Decorated by a gate-calling wrapper, the bundled coercer, or a framework's tool decorator."""
        found = self.function(qualified)
        if found is None:
            return False
        module, definition = found
        for decorator in definition.decorators:
            if decorator.kind in ("ref", "call"):
                resolved = self.resolve(module, decorator.target, _parent(definition.qualname))
                if not resolved:
                    continue
                if resolved.startswith(RUNTIME_PACKAGE) or self._makes_framework_tool(resolved):
                    return True
                if self.function(resolved) and self.calls_gate(resolved):
                    return True
        return False

    def is_framework_name(self, qualified: str) -> bool:
        """A name from an agent framework (or a configured tool type)."""
        if self.symbols.inside_project(qualified) and not any(
            qualified == t or qualified.startswith(t + ".") for t in self.config.tool_types
        ):
            return False
        roots = FRAMEWORK_PACKAGES + tuple(self.config.tool_types)
        return any(qualified == root or qualified.startswith(root + ".") for root in roots)

    def entry_carries_schema(self, entry: LinkedEntry) -> bool:
        """A table entry whose schema comes with it: a tool object or class (``args_schema``, ``parameters``),
        a function a framework's decorator makes a tool of, or one that takes a pydantic model."""
        if not entry.executors:
            return True  # an object, a class, or a value this analysis cannot see into: nothing to say
        for executor in entry.executors:
            found = self.function(executor)
            if found is None:
                continue
            module, definition = found
            if self._decorated_by_gate(executor):
                return True
            for _, annotation in definition.annotations:
                declared = syn.annotated_class(annotation)
                resolved = self.resolve(module, declared, _parent(definition.qualname)) if declared else None
                if resolved and any(self._is_model_class(cls) for cls in self.mro(resolved)):
                    return True
        return False

    def _is_model_class(self, qualified: str) -> bool:
        located = self.symbols.class_def(qualified)
        if located is None:
            return False
        cls, module = located
        return any((self.resolve(module, base) or "").startswith("pydantic") for base in cls.bases)

    def _uses_validating_tools(self) -> bool:
        """The project defines tool classes that validate their arguments (deriving from a framework's, or
        validating in their public entry). Importing a framework is not enough: an MCP server example next to
        a hand-rolled table does not validate that table's tools."""
        return any(
            self.is_tool_type(f"{module.module}.{cls.qualname}")
            for module in self.modules
            if not self.is_test(module)
            for cls in module.classes
        )

    def is_tool_type(self, qualified: str) -> bool:
        """A tool class whose public entry validates the arguments: a framework's, one deriving from it, or a
        project class whose ``run``/``invoke``/``__call__``... validates them (or calls a gate)."""
        if qualified in self._tool_types:
            return self._tool_types[qualified]
        self._tool_types[qualified] = False
        found = self._makes_framework_tool(qualified) or any(
            self._entry_validates(f"{cls}.{method}") for cls in self.mro(qualified) for method in TOOL_ENTRY_METHODS
        )
        self._tool_types[qualified] = found
        return found

    def _entry_validates(self, qualified: str, depth: int = 0) -> bool:
        """A method validates its arguments itself, calls a gate, or calls project helpers that do, two calls
        deep at most (``self._parse_args(input)``, ``_coerce_arguments(...)`` -> ``_coerce_arg(...)``)."""
        found = self.function(qualified)
        if found is None:
            return False
        module, definition = found
        if definition.validates_arguments or self.calls_gate(qualified):
            return True
        if depth >= 2:
            return False
        for _, call in self.calls_in(qualified):
            helper = self.resolve(module, call.callee, definition.qualname, definition.class_name)
            if helper is not None and helper != qualified and self._entry_validates(helper, depth + 1):
                return True
        return False

    def _makes_framework_tool(self, qualified: str) -> bool:
        """Calling ``qualified`` gives a tool object that validates its own arguments: a framework class or
        factory, or a project class deriving from one."""
        if self.is_framework_name(qualified):
            return True
        for cls in self.mro(qualified):
            cls_def, cls_module = self.symbols.class_def(cls)  # type: ignore[misc]
            for base in cls_def.bases:
                resolved = self.resolve(cls_module, base)
                if resolved and self.is_framework_name(resolved):
                    return True
        return False

    def _nested_functions(self, qualified: str) -> Iterable[Tuple[ModuleFacts, FunctionDef]]:
        found = self.function(qualified)
        if found is None:
            return []
        module, definition = found
        prefix = definition.qualname + "."
        return [(module, f) for f in module.functions if f.qualname.startswith(prefix)]

    def table_for(self, module: ModuleFacts, written: str, function: str) -> Optional[LinkedTable]:
        resolved = self.resolve(module, written, function, self.class_of(module, function))
        return self.tables.get(resolved or "")

    # ------------------------------------------------------------------------------------------ sites

    def _link_sites(self) -> List[Site]:
        sites: List[Site] = []
        schema_names = set(self.schemas)
        for module in self.modules:
            for dispatch in self._expand_param_dispatches(module, list(module.dispatches)):
                reaches_past = dispatch.kind.startswith("bypass:")
                method = dispatch.kind.startswith("method:")
                tables: List[Optional[LinkedTable]] = list(self._dispatched_tables(module, dispatch))
                if dispatch.constructed:
                    built = self.resolve(module, dispatch.constructed, dispatch.function)
                    if not (built and self.is_tool_type(built)):
                        continue  # ``Worker()._run()``: not a tool object
                    tables = [None]
                elif reaches_past and not tables:
                    tables = [None]  # a tool object found by a linear scan of a list
                for table in tables:
                    if method and (table is None or not self.holds_tool_objects(table)):
                        continue  # a method of a function, or of an object from nowhere known
                    if table is None:
                        verdict = self._site_verdict(module, dispatch.function, dispatch.args)
                        sites.append(
                            Site(
                                module,
                                dispatch.function,
                                dispatch.span,
                                dispatch.kind,
                                dispatch.key or f"{dispatch.constructed}()",
                                dispatch.key_is_name or bool(dispatch.constructed),
                                verdict,
                                constructed=dispatch.constructed,
                                flows=tuple((dispatch.function, flow) for flow in dispatch.args),
                            )
                        )
                        continue
                    if self._holds_only_classes(table):
                        continue  # instantiating argument models or tool classes is not running a tool
                    if table.holds_objects and not (reaches_past or method):
                        dispatch = replace(dispatch, kind="method:__call__")  # calling the tool object itself
                    tool_like = dispatch.key_is_name or table.configured or bool(table.keys & schema_names)
                    guarded_table = table.wrapped and not reaches_past
                    verdict = GATED if guarded_table else self._site_verdict(module, dispatch.function, dispatch.args)
                    bypasses = self._bypasses(module, dispatch.function, dispatch.args) if verdict != GATED else ()
                    sites.append(
                        Site(
                            module,
                            dispatch.function,
                            dispatch.span,
                            dispatch.kind,
                            dispatch.key,
                            tool_like,
                            verdict,
                            table,
                            bypasses=bypasses,
                            flows=tuple((dispatch.function, flow) for flow in dispatch.args),
                        )
                    )
            for chain in module.chains:
                sites.extend(self._chain_sites(module, chain))
        sites.extend(self._direct_sites(sites))
        sites = self._judge_method_sites(sites)
        corroborated_tables = {
            id(site.table) for site in sites if site.table is not None and self._tool_table_evidence(site.table, sites)
        }
        return [
            replace(
                site,
                corroborated=site.chain is not None
                or site.reaches_past
                or id(site.table) in corroborated_tables
                or bool(_TOOLISH.search(site.key)),
            )
            for site in sites
        ]

    def holds_tool_objects(self, table: LinkedTable) -> bool:
        """The values are objects whose methods run tools (``{t.name: t for t in tools}``, instances built in
        the literal, a registry filled with objects), not plain functions."""
        if table.holds_objects:
            return True
        return bool(table.entries) and not any(entry.executors or entry.is_class for entry in table.entries)

    def _judge_method_sites(self, sites: List[Site]) -> List[Site]:
        """Tables of framework tools are read through their public (validating) entries: not sites. For other
        tool objects, the methods the project also calls with gated arguments on another path are recorded in
        ``gated_methods``: only those are bypasses when called raw (otherwise the method may well be the
        object's own validating entry)."""
        self.gated_methods = {site.method for site in sites if site.method and site.verdict == GATED}
        return [site for site in sites if not (site.method and site.table is not None and site.table.wrapped)]

    def _direct_sites(self, sites: Sequence[Site]) -> List[Site]:
        """Calls of a tool's executor by name, with the wire-parsed arguments, outside a name-test chain: a
        second entry point as much as a table (``args = json.loads(tc.function.arguments); memory_tool(...)``).

        Only executors the project registers by tool name (a registration call, or a table keyed by declared
        tool names) count, and only arguments seen coming from the wire: the strongest evidence there is.
        """
        schema_names = set(self.schemas)
        executors = self._tools_served(
            table for table in self.tables.values() if table.configured or table.keys & schema_names
        )
        arm_bodies: Dict[str, List[Span]] = defaultdict(list)
        for site in sites:
            if site.arm is not None and site.arm.body is not None:
                arm_bodies[site.module.path].append(site.arm.body)
        found: List[Site] = []
        for module in self.modules:
            for call in module.calls:
                called = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
                if called is None or called not in executors:
                    continue
                if any(_within(call.span, body) for body in arm_bodies[module.path]):
                    continue
                flows = list(call.positional) + [flow for _, flow in call.keywords] + list(call.star)
                if not any(_wire_parsed_here(flow) for flow in flows):
                    continue  # arguments that arrive as parameters are their callers' dispatch, not this one
                verdict = self._site_verdict(module, call.function, flows)
                if verdict != RAW:
                    continue
                names = ", ".join(sorted(executors[called])) or called.rsplit(".", 1)[-1]
                found.append(
                    Site(
                        module,
                        call.function,
                        call.span,
                        "direct",
                        names,
                        True,
                        verdict,
                        flows=tuple((call.function, flow) for flow in flows),
                    )
                )
        return found

    def _expand_param_dispatches(self, module: ModuleFacts, dispatches: List[Dispatch]) -> List[Dispatch]:
        """A dispatch of a tool object handed in as a parameter becomes one dispatch per caller that looked it
        up by name (``tool = self._select_tool(name); self._use(tool, ...)`` then ``tool._run(**args)``)."""
        expanded = []
        for dispatch in dispatches:
            if not dispatch.through_param:
                expanded.append(dispatch)
                continue
            found = self.function(f"{module.module}.{dispatch.function}")
            if found is None:
                continue
            definition = found[1]
            before = len(expanded)
            for _, call in self.callers(f"{module.module}.{dispatch.function}", definition):
                slots = {dispatch.through_param, str(_position(call, definition, dispatch.through_param))}
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

    def _holds_only_classes(self, table: LinkedTable) -> bool:
        entries = [entry for entry in table.entries]
        return bool(entries) and all(not entry.executors and entry.is_class for entry in entries)

    def _tool_table_evidence(self, table: LinkedTable, sites: Sequence[Site]) -> bool:
        """A table is a tool table on its own evidence: its name, its keys, its executors, a gated reader."""
        if table.configured or table.keys & set(self.schemas) or _TOOLISH.search(table.definition.name):
            return True
        if any(site.table is table and site.verdict == GATED and site.tool_like for site in sites):
            return True
        for entry in table.entries:
            for executor in entry.executors:
                found = self.function(executor)
                if found is not None and any(param in _EXECUTOR_ARGS for param in found[1].params):
                    return True
        return False

    def _dispatched_tables(self, module: ModuleFacts, dispatch: Dispatch) -> List[LinkedTable]:
        class_name = self.class_of(module, dispatch.function)
        if dispatch.table.endswith("()"):  # self._get_tools()[name]: the tables a method returns
            returned = self.returned_symbols(module, dispatch.table[:-2], dispatch.function, class_name)
            return [table for name in returned for table in self._tables_at(name, 0)]
        if dispatch.table:
            resolved = self.resolve(module, dispatch.table, dispatch.function, self.class_of(module, dispatch.function))
            head, _, rest = dispatch.table.partition(".")
            found = self.function(f"{module.module}.{dispatch.function}") if dispatch.function else None
            if resolved is None and found is not None and head in found[1].params and head not in ("self", "cls"):
                return self._passed_tables(f"{module.module}.{dispatch.function}", found[1], head, rest, 0)
            return self._tables_at(resolved, 0)
        resolver = self.resolve(module, dispatch.resolver, dispatch.function, self.class_of(module, dispatch.function))
        return self._resolver_tables(resolver, 0) if resolver else []

    def _tables_at(self, qualified: Optional[str], depth: int) -> List[LinkedTable]:
        """The tables a resolved name holds: a table, or the tables callers pass for a parameter alias
        (``def __init__(self, tools): self.tools = tools`` called as ``Agent(TOOLS)``)."""
        if qualified is None:
            return []
        if qualified in self.tables:
            return [self.tables[qualified]]
        found_alias = self.symbols.alias(qualified)
        if found_alias is None or depth > 2:
            return []
        alias, module = found_alias
        if alias.target.kind == "call":  # REGISTRY = ToolRegistry(): what the registry's lookups return
            made = self.resolve(module, alias.target.target, alias.function, self.class_of(module, alias.function))
            return self._instance_tables(made) if made and self.symbols.kind(made) == "class" else []
        if alias.target.kind != "param" or not alias.function:
            return []
        function = f"{module.module}.{alias.function}"
        found = self.function(function)
        return self._passed_tables(function, found[1], alias.target.target, "", depth) if found else []

    def _passed_tables(
        self, function: str, definition: FunctionDef, parameter: str, rest: str, depth: int
    ) -> List[LinkedTable]:
        """The tables the callers of ``function`` pass for ``parameter`` (then ``.rest`` of it)."""
        tables: List[LinkedTable] = []
        for caller_module, call in self.callers(function, definition):
            literals = dict((slot, (kind, value)) for slot, kind, value in call.literals)
            passed = _bound_literal(literals, definition, parameter, call, "ref")
            if passed is None:
                continue
            written = f"{passed}.{rest}" if rest else passed
            resolved = self.resolve(caller_module, written, call.function, self.class_of(caller_module, call.function))
            found = self._tables_at(resolved, depth + 1)
            caller = self.function(f"{caller_module.module}.{call.function}") if call.function else None
            if not found and caller is not None and passed in caller[1].params and depth < 3:
                # handed on again: execute_tools(calls, tool_dict) -> _execute_single_tool(call, tool_dict)
                found = self._passed_tables(f"{caller_module.module}.{call.function}", caller[1], passed, rest, depth + 1)
            for table in found:
                if table not in tables:
                    tables.append(table)
        return tables

    def _instance_tables(self, class_qualified: str) -> List[LinkedTable]:
        """The tables a registry class's methods look tools up in (``def get(self, name): return
        self._tools.get(name)``)."""
        tables: List[LinkedTable] = []
        for cls in self.mro(class_qualified):
            cls_def, cls_module = self.symbols.class_def(cls)  # type: ignore[misc]
            for lookup in cls_module.lookups:
                if _parent(lookup.function) == cls_def.qualname:
                    for table in self._resolver_tables(f"{cls_module.module}.{lookup.function}", 1):
                        if table not in tables:
                            tables.append(table)
        return tables

    def _resolver_tables(self, resolver: str, depth: int) -> List[LinkedTable]:
        found = self.function(resolver)
        if found is None or depth > 2:
            return []
        module, definition = found
        tables: List[LinkedTable] = []
        for lookup in module.lookups:
            if lookup.function != definition.qualname:
                continue
            if lookup.table.endswith("()"):
                inner = self.resolve(module, lookup.table[:-2], lookup.function, definition.class_name)
                tables.extend(self._resolver_tables(inner, depth + 1) if inner else [])
            else:
                resolved = self.resolve(module, lookup.table, lookup.function, definition.class_name)
                tables.extend(self._tables_at(resolved, 0))
        return tables

    def _bypasses(
        self, module: ModuleFacts, function: str, flows: Sequence[Flow]
    ) -> Tuple[Tuple[ModuleFacts, Call], ...]:
        """Calls of a dispatching function that pass raw arguments where its other callers pass gated ones."""
        params = [flow.name for flow in flows if isinstance(flow, Param) and flow.function == function]
        found = self.function(f"{module.module}.{function}") if params else None
        if found is None:
            return ()
        gated, raw = False, []
        for caller_module, call in self.callers(f"{module.module}.{function}", found[1]):
            verdicts = []
            for param in params:
                bound = _bind(call, found[1], param)
                verdicts.append(UNKNOWN if bound is None else self.evaluate(bound, caller_module, call.function, 1))
            verdict = combine(verdicts, every=False)
            gated = gated or verdict == GATED
            if verdict in (RAW, RAW_WEAK):
                raw.append((caller_module, call))
        return tuple(raw) if gated else ()

    def _site_verdict(self, module: ModuleFacts, function: str, flows: Sequence[Flow]) -> str:
        return combine([self.evaluate(flow, module, function) for flow in flows], every=False)

    def _chain_sites(self, module: ModuleFacts, chain: NameChain) -> List[Site]:
        class_name = self.class_of(module, chain.function)
        resolved = (
            (self.resolve(module, callee, chain.function, class_name), span) for callee, span in chain.fallbacks
        )
        gated = [
            (q, span) for q, span in resolved if q is not None and (q in self.gated_entries or q in self.gate_functions)
        ]
        if not gated:
            return []
        fallback, fallback_span = gated[0]
        sites = []
        for arm in chain.arms:
            # what the arm calls itself, then what the closures it binds call when they run
            calls = [(chain.function, arm.callees, arm.flows)]
            for closure in arm.closures:
                for inner_module, call in self.calls_in(f"{module.module}.{closure}", nested=True):
                    flows = tuple(call.positional) + tuple(flow for _, flow in call.keywords) + tuple(call.star)
                    calls.append((call.function, (call.callee,), flows))
            guarded = any(
                self.is_gate_callee(module, callee, function)
                or self.resolve(module, callee, function, class_name) in self.gated_entries
                for function, callees, _ in calls
                for callee in callees
            )
            verdicts = [self._site_verdict(module, function, flows) for function, _, flows in calls]
            verdict = GATED if guarded else combine(verdicts, every=False)
            sites.append(
                Site(
                    module,
                    chain.function,
                    arm.span,
                    "chain",
                    chain.variable,
                    True,
                    verdict,
                    None,
                    chain,
                    arm,
                    fallback,
                    fallback_span,
                    flows=tuple((function, flow) for function, _, flows in calls for flow in flows),
                )
            )
        return sites

    # ------------------------------------------------------------------------------------------ traces

    def trace(self, site: Site, sink: str) -> Tuple[Step, ...]:
        """The path the model's arguments take to a site: where they come from, each call that hands them on,
        and the site itself (``sink``). Computed only for what is reported."""
        for function, flow in site.flows:
            path = self._explain(flow, site.module, function, 0, set())
            if path:
                return tuple(path) + (Step(site.module.path, site.span, sink),)
        return (Step(site.module.path, site.span, sink),)

    def call_trace(self, module: ModuleFacts, call: Call, sink: Step) -> Tuple[Step, ...]:
        """The trace of a call that hands raw arguments to a dispatching function (``site.bypasses``)."""
        flows = list(call.positional) + [flow for _, flow in call.keywords] + list(call.star)
        for flow in flows:
            path = self._explain(flow, module, call.function, 0, set())
            if path:
                return tuple(path) + (Step(module.path, call.span, "hands them to the dispatching function"), sink)
        return (Step(module.path, call.span, "hands them to the dispatching function"), sink)

    def _explain(
        self, flow: Flow, module: ModuleFacts, function: str, depth: int, seen: Set[Tuple[str, str]]
    ) -> List[Step]:
        """Steps from a source of raw arguments to ``flow`` (empty when it is not raw, or too far to follow)."""
        if depth > _MAX_DEPTH:
            return []
        if isinstance(flow, Raw):
            where = flow.span or self._function_span(module, function)
            return [Step(module.path, where, f"source: the model's arguments (`{flow.why}`)")]
        if isinstance(flow, Either):
            for option in flow.options:
                path = self._explain(option, module, function, depth, seen)
                if path:
                    return path
            return []
        if isinstance(flow, Param):
            return self._explain_param(module, flow, depth, seen)
        if isinstance(flow, CallResult) and not self.is_gate_callee(module, flow.callee, function):
            for argument in flow.args:
                path = self._explain(argument, module, function, depth + 1, seen)
                if path and self.evaluate(flow, module, function) in (RAW, RAW_WEAK):
                    return path
        return []

    def _explain_param(self, module: ModuleFacts, flow: Param, depth: int, seen: Set[Tuple[str, str]]) -> List[Step]:
        qualified = f"{module.module}.{flow.function}"
        found = self.function(qualified)
        if found is None or (qualified, flow.name) in seen:
            return []
        seen.add((qualified, flow.name))
        definition = found[1]
        for invocation in self.invocations(qualified, definition):
            bound = _bind(invocation.call, definition, flow.name)
            if bound is None or self._evaluate_passed(bound, invocation, depth + 1) not in (RAW, RAW_WEAK):
                continue
            step = Step(
                invocation.module.path,
                invocation.call.span,
                f"passed to {_described(flow.function)} as `{flow.name}`",
            )
            context = invocation.context
            if context is not None and isinstance(bound, Param) and _base(bound.function) == _base(context[2].qualname):
                handing_module, handing_call, receiver = context
                rebound = _bind(handing_call, receiver, bound.name)
                before = self._explain(rebound, handing_module, handing_call.function, depth + 1, seen) if rebound else []
                handed = Step(
                    handing_module.path, handing_call.span, f"handed to `{display_function(receiver.qualname)}`"
                )
                return before + [handed, step]
            return self._explain(bound, invocation.module, invocation.call.function, depth + 1, seen) + [step]
        return []

    def _function_span(self, module: ModuleFacts, function: str) -> Span:
        found = self.function(f"{module.module}.{function}") if function else None
        return found[1].span if found else Span(1, 1, 1, 1)

    # ------------------------------------------------------------------------------------------ queries

    def registered_executors(self) -> Dict[str, Set[str]]:
        """Executors registered by a call that names the tool and hands over its handler, wherever the
        registry keeps them (``registry.register(name="todo", schema=..., handler=lambda args: todo(...))``)."""
        found: Dict[str, Set[str]] = defaultdict(set)
        for module in self.modules:
            for call in module.calls:
                slots = {slot: (kind, value) for slot, kind, value in call.literals}
                name = slots.get("name")
                if name is None or name[0] != "str":
                    continue
                for keyword in _HANDLER_KEYWORDS:
                    handler = slots.get(keyword)
                    if handler is None or handler[0] not in ("ref", "lambda"):
                        continue
                    class_name = self.class_of(module, call.function)
                    executor = self.resolve(module, handler[1], call.function, class_name)
                    if executor and self.function(executor):
                        found[executor].add(name[1])
        return found

    def executor_tools(self) -> Dict[str, Set[str]]:
        """Executor function (qualified) -> the tool names it serves: entries of tool tables (a scanned list's
        entries are named after their functions) and registration calls that hand over a handler."""
        if self._executor_tools is None:
            self._executor_tools = self._tools_served(self.tool_tables() + self._class_registries())
        return self._executor_tools

    def _tools_served(self, tables: Iterable[LinkedTable]) -> Dict[str, Set[str]]:
        """Executor -> tool names, from registration calls and the entries of ``tables``."""
        tools = {executor: set(names) for executor, names in self.registered_executors().items()}
        for table in tables:
            for entry in table.entries:
                for executor in entry.executors + entry.methods:
                    tools.setdefault(executor, set()).update([entry.key] if entry.key is not None else [])
        return tools

    def tool_tables(self, dispatched_only: bool = False) -> List[LinkedTable]:
        """Tables that hold tools: dispatched as tools, configured, or (unless ``dispatched_only``) keyed by
        declared tool names."""
        if dispatched_only not in self._tool_tables:
            self._tool_tables[dispatched_only] = self._find_tool_tables(dispatched_only)
        return list(self._tool_tables[dispatched_only])

    def _class_registries(self) -> List[LinkedTable]:
        """Registries of tool classes (``@register_tool("search") class Search(BaseTool)``): instantiated by
        name, their ``call``/``run`` methods then run the tools."""
        return [table for table in self.tables.values() if any(entry.methods for entry in table.entries)]

    def _find_tool_tables(self, dispatched_only: bool) -> List[LinkedTable]:
        schema_names = set(self.schemas)
        dispatched = {
            id(site.table)
            for site in self.sites
            if site.table is not None and (site.unguarded or (site.tool_like and site.verdict == GATED))
        }
        return [
            table
            for table in self.tables.values()
            if id(table) in dispatched or table.configured or (not dispatched_only and table.keys & schema_names)
        ]

    def sites_of(self, table: LinkedTable) -> List[Site]:
        if self._sites_by_table is None:
            self._sites_by_table = defaultdict(list)
            for site in self.sites:
                self._sites_by_table[id(site.table)].append(site)
        return list(self._sites_by_table.get(id(table), []))

    def gate_locations(self, top_level_only: bool = False) -> List[Tuple[ModuleFacts, FunctionDef]]:
        """Gates defined in the project: by name first, then by behaviour.

        ``top_level_only`` leaves out helpers that only other gates call (they are part of one gate).
        """
        if top_level_only not in self._gates:
            self._gates[top_level_only] = self._find_gate_locations(top_level_only)
        return list(self._gates[top_level_only])

    def _find_gate_locations(self, top_level_only: bool) -> List[Tuple[ModuleFacts, FunctionDef]]:
        found = []
        for qualified in self.gate_functions:
            located = self.function(qualified)
            if located is None:
                continue
            if top_level_only:
                callers = self.callers(qualified, located[1])
                if callers and all(
                    f"{module.module}.{call.function}" in self.gate_functions for module, call in callers
                ):
                    continue
            found.append(located)
        by_name = self.gate_names | {gate.split(".")[-1] for gate in self.config.gates}
        return sorted(found, key=lambda pair: (pair[1].name not in by_name, pair[0].path, pair[1].span.line))

    def reads_properties(self, module: ModuleFacts, callee: str, function: str) -> bool:
        """Whether a call goes to a project function that reads a schema's ``properties`` (converts by key)."""
        resolved = self.resolve(module, callee, function, self.class_of(module, function))
        found = self.function(resolved) if resolved else None
        return found is not None and found[1].reads_schema_properties

    def gate_display(self) -> str:
        defined = self.gate_locations(top_level_only=True)
        if defined:
            return ", ".join(f"`{function.name}`" for _, function in defined[:2])
        return f"`{DEFAULT_GATE}`"


def combine(verdicts: Sequence[str], every: bool) -> str:
    """Join verdicts. ``every``: all paths must be gated (alternatives); else any gated value guards a call."""
    if not verdicts:
        return UNKNOWN
    if every and all(verdict == GATED for verdict in verdicts):
        return GATED
    if not every and GATED in verdicts:
        return GATED
    for verdict in (RAW, RAW_WEAK):
        if verdict in verdicts:
            return verdict
    return UNKNOWN


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (inner.end_line, inner.end_column) <= (
        outer.end_line,
        outer.end_column,
    )


def _position(call: Call, definition: FunctionDef, parameter: str) -> Optional[int]:
    """The positional index at which ``call`` passes ``parameter`` (a method called as ``x.m()`` skips self)."""
    params = list(definition.params)
    if parameter not in params:
        return None
    index = params.index(parameter)
    bound = "." in call.callee or definition.name == "__init__"  # x.m(...) and Class(...) pass self implicitly
    if definition.class_name and params[0] in ("self", "cls") and bound:
        index -= 1
    return index if index >= 0 else None


def _bind(call: Call, definition: FunctionDef, parameter: str) -> Optional[Flow]:
    """The flow a call passes for ``parameter`` of ``definition``."""
    for name, flow in call.keywords:
        if name == parameter:
            return flow
    index = _position(call, definition, parameter)
    if index is not None and index < len(call.positional):
        return call.positional[index]
    if index is not None and call.star:
        return Either(call.star) if len(call.star) > 1 else call.star[0]
    return None


def _bound_literal(
    literals: Dict[str, Tuple[str, str]], definition: FunctionDef, parameter: str, call: Call, kind: str
) -> Optional[str]:
    """The literal (string or dotted name) a call passes for ``parameter``."""
    index = _position(call, definition, parameter)
    for slot in (parameter, str(index)):
        found = literals.get(slot)
        if found is not None and found[0] == kind:
            return found[1]
    return None


def _model_arguments(flow: Flow) -> bool:
    """What a call hands on reads as the model's arguments: wire-parsed, or a parameter named like them."""
    if isinstance(flow, Raw):
        return flow.why != WEAK_JSON
    if isinstance(flow, Param):
        return flow.name in syn.ARGS_NAMES
    if isinstance(flow, Either):
        return any(_model_arguments(option) for option in flow.options)
    if isinstance(flow, CallResult):
        return any(_model_arguments(argument) for argument in flow.args)
    return False


def _wire_parsed_here(flow: Flow) -> bool:
    """The value comes from the wire within the function itself (not through a parameter)."""
    if isinstance(flow, Raw):
        return True
    if isinstance(flow, Either):
        return any(_wire_parsed_here(option) for option in flow.options)
    return False


def _mentions_param(flow: Flow, function: str) -> bool:
    if isinstance(flow, Param):
        return True
    if isinstance(flow, Either):
        return any(_mentions_param(option, function) for option in flow.options)
    if isinstance(flow, CallResult):
        return any(_mentions_param(arg, function) for arg in flow.args)
    return False


def _parent(qualname: str) -> str:
    return qualname.rpartition(".")[0]


_REDEFINITION = re.compile(r"@\d+")


def _base(qualified: str) -> str:
    """A function's name without the ``@LINE`` of a redefinition: every ``def _execute`` of a chain's arms is
    called by the same ``_execute(...)``."""
    return _REDEFINITION.sub("", qualified) if "@" in qualified else qualified


def _param_at(call: Call, definition: FunctionDef, slot: str) -> Optional[str]:
    """The parameter of ``definition`` that ``call`` fills at ``slot`` (a position or a keyword)."""
    if not slot.isdigit():
        return slot if slot in definition.params else None
    params = list(definition.params)
    index = int(slot)
    bound = "." in call.callee or definition.name == "__init__"
    if definition.class_name and params and params[0] in ("self", "cls") and bound:
        index += 1
    return params[index] if index < len(params) else None


def _stored_attributes(module: ModuleFacts, definition: FunctionDef, parameter: str) -> List[str]:
    """Instance attributes a method stores a parameter in (``self._run_fn = run``)."""
    return [
        alias.name
        for alias in module.aliases
        if alias.function == definition.qualname
        and alias.scope == "instance"
        and alias.target.kind == "param"
        and alias.target.target == parameter
    ]


def _described(qualname: str) -> str:
    """``the lambda in `execute_tool```, ```_execute``` : a function as a trace step names it."""
    shown = display_function(qualname) or "<module>"
    return f"the lambda in `{shown}`" if qualname.rsplit(".", 1)[-1].startswith("<lambda") else f"`{shown}`"


def display_function(qualname: str) -> str:
    """A function's name as a reader knows it: no ``@LINE`` of a redefinition, a lambda shown as its owner's."""
    parts = [part for part in _base(qualname).split(".") if not part.startswith("<lambda")]
    return ".".join(parts)
