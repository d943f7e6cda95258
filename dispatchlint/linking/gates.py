"""Stage 2, the sanitizers: gates by name, configuration and behaviour (on a tool path), gated entries (a
function that passes its own arguments through a gate), property-name sanitizers, and tool types whose public
entry validates their arguments (a framework's, or the project's own)."""

from __future__ import annotations

from functools import cached_property
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from dispatchlint.framework_models import DESCRIBING_CLASSES, FRAMEWORK_TOOL_PART, TOOL_USING_METHOD, TOOLISH
from dispatchlint.indexing.facts import Call, Flow, FunctionDef, ModuleFacts, Param, ValueKind
from dispatchlint.linking.callgraph import CallGraph
from dispatchlint.linking.model import (
    DEFAULT_GATE,
    FRAMEWORK_PACKAGES,
    RUNTIME_PACKAGE,
    SANITIZER_NAME,
    TOOL_ENTRY_METHODS,
    bind,
    mentions_param,
    named_like_arguments,
    parent_of,
    reads_as_model_arguments,
    wire_parsed_here,
)


def _makes_tools(members: List[str]) -> bool:
    """What a class's method is called, when it makes a tool: an alternative constructor
    (``FunctionTool.from_defaults``) or a method named for tools that does not use them (``FastMCP.tool``,
    ``Agent.tool_plain``); an attribute of an attribute makes none."""
    if len(members) != 1:
        return False
    method = members[0]
    return method.startswith("from_") or (
        bool(FRAMEWORK_TOOL_PART.search(method)) and not TOOL_USING_METHOD.search(method)
    )


class Gates:
    """The project's sanitizers, found once from the call graph."""

    def __init__(self, graph: CallGraph) -> None:
        self.graph = graph
        self._gates: Dict[bool, List[Tuple[ModuleFacts, FunctionDef]]] = {}
        self._tool_types: Dict[str, bool] = {}
        self.gate_names = {DEFAULT_GATE} | {gate.split(".")[-1] for gate in graph.config.gates}
        self.sanitizers = self._find_sanitizers()
        self.gate_functions = self._find_gate_functions()
        self.gated_entries = self._find_gated_entries()

    def _find_sanitizers(self) -> Set[str]:
        """Configured sanitizers, and functions named like one that really translate the keys of a mapping
        (a test named ``test_restores_original_name`` restores nothing)."""
        found = set(self.graph.config.sanitizers)
        for module in self.graph.modules:
            if self.graph.is_test(module):
                continue
            for function in module.functions:
                if SANITIZER_NAME.search(function.name) and function.renames_keys:
                    found.add(f"{module.module}.{function.qualname}")
        return found

    def is_sanitizer(self, module: ModuleFacts, callee: str, function: str) -> bool:
        if callee.split(".")[-1] in {name.split(".")[-1] for name in self.sanitizers}:
            return True
        return self.graph.resolve(module, callee, function, self.graph.class_of(module, function)) in self.sanitizers

    def _find_gate_functions(self) -> Set[str]:
        """Gates by name (default and configured) and by behaviour (reads schema properties or validates)."""
        configured = set(self.graph.config.gates)
        found = {gate for gate in configured}
        found.add(f"{RUNTIME_PACKAGE}.coerce_args")
        for module in self.graph.modules:
            if self.graph.is_test(module):
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
        """Reads what the tool declares (a schema's ``properties``, or the tool function's own signature) and
        rewrites values, or validates, and sits on a tool path: some call hands it the model's arguments (an API
        helper that reads a request body's ``properties`` does not)."""
        if qualified in self.sanitizers or SANITIZER_NAME.search(function.name):
            return False
        # What lands in a ``*args`` or ``**kwargs`` catch-all is what a caller passes on beyond the named
        # parameters (a factory's options forwarded with ``**kwargs``, a traced call's own arguments recorded
        # for its span), not a value the function is handed to check.
        catch_alls = (function.keywords_param, function.positional_param)
        named = [param for param in function.params if param not in catch_alls]
        reads_declared = (
            function.reads_schema_properties or function.reads_annotations or function.compares_schema_types
        )
        repairs = reads_declared and function.rewrites_values
        validates = function.validates_arguments or self._calls_validator(qualified, function)
        if not (repairs or validates):
            return False
        if not repairs and function.validated_params:
            # what its own validator is handed says which parameter it checks (``model_validate(tool.definition)``
            # checks a tool's definition, whatever else the function is handed)
            named = [param for param in named if param in function.validated_params]
        takes_arguments = any(named_like_arguments(function, param) for param in named)
        # A gate is handed the model's arguments; a validator, parsed from a string of unknown origin too (a ReAct
        # agent's ``json.loads(action_input)``) when its parameters are named for them, and parsed from the wire
        # by its caller when they are not (``validate_schema(instance, schema)``): a helper that validates one
        # path or one URL a tool was handed is not the tools' gate.
        parsed = takes_arguments and validates and not repairs
        for caller, call in self.graph.callers(qualified, function):
            for param in named:
                flow = bind(call, function, param)
                if flow is None or not reads_as_model_arguments(flow, parsed):
                    continue
                if self._caller_catch_all(caller, flow) and not named_like_arguments(function, param):
                    continue  # ``_create_tools(kwargs.get("functions"))``: an option the caller was passed on
                if repairs or takes_arguments or wire_parsed_here(flow):
                    return True
        return False

    def _caller_catch_all(self, module: ModuleFacts, flow: Flow) -> bool:
        """The value is (a piece of) the ``**kwargs`` catch-all of the calling function: what its own callers
        pass beyond its named parameters, options as often as arguments."""
        if not isinstance(flow, Param):
            return False
        found = self.graph.function(f"{module.module}.{flow.function}" if module.module else flow.function)
        return found is not None and found[1].keywords_param == flow.name

    def _calls_validator(self, qualified: str, function: FunctionDef) -> bool:
        """Hands a value to a project function that validates it (``validate_schema_with_value_error`` ->
        ``validate_schema`` -> ``jsonschema.validate``)."""
        found = self.graph.function(qualified)
        if found is None:
            return False
        module = found[0]
        for _, call in self.graph.calls_in(qualified):
            helper = self.graph.resolve(module, call.callee, function.qualname, function.class_name)
            located = self.graph.function(helper) if helper and helper != qualified else None
            if located is not None and located[1].validates_arguments:
                return True
        return False

    def is_gate_callee(self, module: ModuleFacts, callee: str, function: str) -> bool:
        if callee.split(".")[-1] in self.gate_names:
            return True
        resolved = self.graph.resolve(module, callee, function, self.graph.class_of(module, function))
        return resolved is not None and (resolved in self.gate_functions or resolved.startswith(RUNTIME_PACKAGE))

    def _find_gated_entries(self) -> Set[str]:
        """Functions that pass one of their own parameters through a gate (``handle_function_call``)."""
        entries = set()
        for owner, calls in self.graph.calls_by_function.items():
            for module, call in calls:
                if not call.function or not self.is_gate_callee(module, call.callee, call.function):
                    continue
                flows = call.flows
                if any(mentions_param(flow, call.function) for flow in flows):
                    entries.add(owner)
        return entries

    def calls_gate(self, function_qualified: str) -> bool:
        """Whether a function (or a closure inside it) calls a gate: a wrapper that repairs arguments."""
        if function_qualified in self.gate_functions:
            return True
        return any(
            self.is_gate_callee(module, call.callee, call.function)
            for module, call in self.graph.calls_in(function_qualified, nested=True)
        )

    def decorated_by_gate(self, qualified: str) -> bool:
        """Decorated by a gate-calling wrapper, the bundled coercer, or a framework's tool decorator."""
        found = self.graph.function(qualified)
        if found is None:
            return False
        module, definition = found
        for decorator in definition.decorators:
            if decorator.kind in (ValueKind.REF, ValueKind.CALL):
                resolved = self.graph.resolve(module, decorator.target, parent_of(definition.qualname))
                if not resolved:
                    continue
                if resolved.startswith(RUNTIME_PACKAGE) or self.makes_framework_tool(resolved):
                    return True
                if self.graph.function(resolved) and self.calls_gate(resolved):
                    return True
        return False

    def is_framework_name(self, qualified: str) -> bool:
        """A name from an agent framework (or a configured tool type)."""
        if self.graph.symbols.inside_project(qualified) and not any(
            qualified == t or qualified.startswith(t + ".") for t in self.graph.config.tool_types
        ):
            return False
        roots = FRAMEWORK_PACKAGES + tuple(self.graph.config.tool_types)
        return any(qualified == root or qualified.startswith(root + ".") for root in roots)

    @cached_property
    def validating_tool_modules(self) -> List[ModuleFacts]:
        """The modules that define tool classes validating their arguments (deriving from a framework's, or
        validating in their public entry). Importing a framework is not enough: an MCP server example next to a
        hand-rolled table does not validate that table's tools."""
        return [
            module
            for module in self.graph.modules
            if not self.graph.is_test(module)
            and any(self._validating_tool_class(f"{module.module}.{cls.qualname}") for cls in module.classes)
        ]

    def _validating_tool_class(self, qualified: str) -> bool:
        """A tool type that says it is one: a framework's, or a project class named (or deriving from one named)
        for tools. An agent whose ``__call__`` validates its task's arguments validates no tool's."""
        if not self.is_tool_type(qualified):
            return False
        return self.makes_framework_tool(qualified) or any(
            TOOLISH.search(cls.rpartition(".")[2]) for cls in self.graph.mro(qualified)
        )

    @cached_property
    def framework_tool_makers(self) -> FrozenSet[str]:
        """The modules that make tools of a framework's that validate (``tool(Sections)``,
        ``StructuredTool.from_function(fn)``, ``@mcp.tool()``): those tools are the ones it and its importers run,
        not those of a script beside it."""
        return frozenset(
            module.module
            for module in self.graph.modules
            if not self.graph.is_test(module)
            and any(self._makes_framework_tool_here(module, call) for call in module.calls)
        )

    def _makes_framework_tool_here(self, module: ModuleFacts, call: Call) -> bool:
        if not FRAMEWORK_TOOL_PART.search(call.callee):
            return False  # resolving every call of the project is the cost; a tool factory's name says tool
        callee = self.graph.resolve(module, call.callee, call.function, self.graph.class_of(module, call.function))
        return (
            callee is not None and not self.graph.symbols.inside_project(callee) and self.makes_framework_tool(callee)
        )

    def is_tool_type(self, qualified: str) -> bool:
        """A tool class whose public entry validates the arguments: a framework's, one deriving from it, or a
        project class whose ``run``/``invoke``/``__call__``... validates them (or calls a gate)."""
        if qualified in self._tool_types:
            return self._tool_types[qualified]
        self._tool_types[qualified] = False
        found = self.makes_framework_tool(qualified) or any(
            self._entry_validates(f"{cls}.{method}")
            for cls in self.graph.mro(qualified)
            for method in TOOL_ENTRY_METHODS
        )
        self._tool_types[qualified] = found
        return found

    def _entry_validates(self, qualified: str, depth: int = 0) -> bool:
        """A method validates its arguments itself, calls a gate, or calls project helpers that do, two calls
        deep at most (``self._parse_args(input)``, ``_coerce_arguments(...)`` -> ``_coerce_arg(...)``)."""
        found = self.graph.function(qualified)
        if found is None:
            return False
        module, definition = found
        if definition.validates_arguments or self.calls_gate(qualified):
            return True
        if depth >= 2:
            return False
        for _, call in self.graph.calls_in(qualified):
            helper = self.graph.resolve(module, call.callee, definition.qualname, definition.class_name)
            if helper is not None and helper != qualified and self._entry_validates(helper, depth + 1):
                return True
        return False

    def makes_framework_tool(self, qualified: str) -> bool:
        """Calling ``qualified`` gives a tool object that validates its own arguments: a framework class or
        factory, or a project class deriving from one."""
        if self._framework_tool_name(qualified):
            return True
        for cls in self.graph.mro(qualified):
            cls_def, cls_module = self.graph.symbols.class_def(cls)  # type: ignore[misc]
            for base in cls_def.bases:
                resolved = self.graph.resolve(cls_module, base)
                if resolved and self._framework_tool_name(resolved):
                    return True
        return False

    def _framework_tool_name(self, qualified: str) -> bool:
        """A framework's tool class or factory (``StructuredTool.from_function``, ``agno.tools.function.Function``,
        ``@tool``), or a configured tool type: what a framework's client, agent or server class builds is no tool
        (``fastmcp.Client(transport)`` holds a connection)."""
        if any(qualified == t or qualified.startswith(t + ".") for t in self.graph.config.tool_types):
            return True
        parts = qualified.split(".")
        if DESCRIBING_CLASSES.intersection(parts):
            return False
        classes = [index for index, part in enumerate(parts) if part[:1].isupper()]
        if classes and classes[0] < len(parts) - 1 and not _makes_tools(parts[classes[0] + 1 :]):
            return False  # ``ClientSession.call_tool`` runs a tool; ``Tool.annotations.model_dump`` makes none
        return self.is_framework_name(qualified) and any(FRAMEWORK_TOOL_PART.search(part) for part in parts[1:])

    def gate_locations(
        self, top_level_only: bool = False, near: Optional[ModuleFacts] = None
    ) -> List[Tuple[ModuleFacts, FunctionDef]]:
        """Gates defined in the project: by name first, then by behaviour; those of the part of the program
        ``near`` belongs to, when it has any (each app of a collection has its own gate).

        ``top_level_only`` leaves out helpers that only other gates call (they are part of one gate).
        """
        if top_level_only not in self._gates:
            self._gates[top_level_only] = self._find_gate_locations(top_level_only)
        found = list(self._gates[top_level_only])
        if near is None:
            return found
        part = self.graph.part_of(near)
        return [located for located in found if self.graph.part_of(located[0]) == part] or found

    def _find_gate_locations(self, top_level_only: bool) -> List[Tuple[ModuleFacts, FunctionDef]]:
        found = []
        for qualified in self.gate_functions:
            located = self.graph.function(qualified)
            if located is None:
                continue
            if top_level_only:
                callers = self.graph.callers(qualified, located[1])
                if callers and all(
                    f"{module.module}.{call.function}" in self.gate_functions for module, call in callers
                ):
                    continue
            found.append(located)
        by_name = self.gate_names | {gate.split(".")[-1] for gate in self.graph.config.gates}
        return sorted(found, key=lambda pair: (pair[1].name not in by_name, pair[0].path, pair[1].span.line))

    def reads_properties(self, module: ModuleFacts, callee: str, function: str) -> bool:
        """Whether a call goes to a project function that reads a schema's ``properties`` (converts by key)."""
        resolved = self.graph.resolve(module, callee, function, self.graph.class_of(module, function))
        found = self.graph.function(resolved) if resolved else None
        return found is not None and found[1].reads_schema_properties

    def gate_display(self, near: Optional[ModuleFacts] = None) -> str:
        defined = self.gate_locations(top_level_only=True, near=near)
        if defined:
            return ", ".join(f"`{function.name}`" for _, function in defined[:2])
        return f"`{DEFAULT_GATE}`"
