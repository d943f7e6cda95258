"""Stage 4, the tables and schemas: executor tables (literals, comprehensions, fills, registering decorators
and calls, rebuilt and wrapped tables), what runs for each entry, and the tables a dispatch expression reads
(through aliases, parameters, resolvers, registry classes and methods that return a table)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from functools import cached_property
from typing import Dict, Iterable, List, Optional, Set, Tuple

from dispatchlint.indexing.annotations import annotated_class
from dispatchlint.indexing.annotations import class_schema_key
from dispatchlint.indexing.facts import (
    Dispatch,
    FunctionDef,
    ModuleFacts,
    SchemaDef,
    Span,
    TableDef,
    TableFill,
    ValueKind,
    ValueRef,
)
from dispatchlint.linking.callgraph import CallGraph
from dispatchlint.linking.gates import Gates
from dispatchlint.linking.model import (
    HANDLER_KEYWORDS,
    RUNTIME_PACKAGE,
    TOOL_ENTRY_METHODS,
    LinkedEntry,
    LinkedTable,
    bound_literal,
    parent_of,
)
from dispatchlint.linking.symbols import SymbolKind, scoped


class Catalog:
    """The executor tables and schemas, with what runs for each entry."""

    def __init__(self, graph: CallGraph, gates: Gates) -> None:
        self.graph = graph
        self.gates = gates
        self.schemas = self._collect_schemas()
        self.offered_tools = self._collect_offered_tools()
        self.tables = self._link_tables()

    # ------------------------------------------------------------------------------------------ schemas

    def _collect_schemas(self) -> Dict[str, List[Tuple[ModuleFacts, SchemaDef]]]:
        schemas: Dict[str, List[Tuple[ModuleFacts, SchemaDef]]] = defaultdict(list)
        for module in self.graph.modules:
            for schema in module.schemas:
                schemas[schema.tool].append((module, schema))
        return schemas

    def _collect_offered_tools(self) -> Set[str]:
        """The functions handed to a model call's ``tools=[...]``, whose schemas their signatures give."""
        offered = set()
        for module in self.graph.modules:
            for function, reference in module.offered_tools:
                resolved = self.graph.resolve(module, reference, function, self.graph.class_of(module, function))
                if resolved is not None:
                    offered.add(resolved)
        return offered

    def schemas_of(self, tool: str, near: ModuleFacts) -> List[Tuple[ModuleFacts, SchemaDef]]:
        """The schemas of ``tool`` that code of ``near`` would be repaired by: those of its part of the program
        when that part has any (one app's ``search`` is not another's), else every one of the project."""
        found = self.schemas.get(tool, [])
        part = self.graph.part_of(near)
        return [(module, schema) for module, schema in found if self.graph.part_of(module) == part] or found

    def declared_types(self, tool: str, parameter: str, near: ModuleFacts) -> Optional[Tuple[str, ...]]:
        """The JSON types a tool's schema declares for a parameter, seen from ``near`` (see :meth:`schemas_of`);
        None: no schema mentions it."""
        for _, schema in self.schemas_of(tool, near):
            for name, types in schema.properties:
                if name == parameter:
                    return types
        return None

    # ------------------------------------------------------------------------------------------ tables

    def _link_tables(self) -> Dict[str, LinkedTable]:
        tables: Dict[str, LinkedTable] = {}
        for module in self.graph.modules:
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
        for module in self.graph.modules:
            for fill in module.fills:
                class_name = self.graph.class_of(module, fill.function)
                resolved = self.graph.resolve(module, fill.table, fill.function, class_name)
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
        configured = set(self.graph.config.tables)
        for table in tables.values():
            table.configured = table.qualname in configured or table.definition.name in configured
            comprehension = table.definition.comprehension
            table.holds_objects = comprehension is not None and comprehension.kind == ValueKind.OBJECT
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
        """Tables rebuilt from another one carry its tools: ``{k: _coerced(k, v) for k, v in RAW.items()}``,
        a table assigned again from what a function returns, and ``wrap_table(RAW, SCHEMAS)`` (the latter
        wrapped by the bundled coercer)."""
        for table in list(tables.values()):
            definition = table.definition
            if definition.source:
                context = definition.owner if definition.scope == "local" else ""
                resolved = self.graph.resolve(
                    table.module, definition.source, context, self.graph.class_of(table.module, context)
                )
                source = tables.get(resolved or "")
                if source is not None and source is not table:
                    wrapped = self._entry(
                        table.module,
                        context,
                        None,
                        definition.comprehension or ValueRef(ValueKind.OTHER),
                        definition.span,
                    ).wrapped
                    table.entries.extend(replace(entry, wrapped=entry.wrapped or wrapped) for entry in source.entries)
        for module in self.graph.modules:
            for alias in module.aliases:
                assigned = tables.get(scoped(module.module, alias.owner, alias.name))
                if assigned is None or alias.target.kind != ValueKind.CALL:
                    continue
                # self.functions = {} and, later, _, self.functions, _ = setup_tools(tools): what setup returns
                class_name = self.graph.class_of(module, alias.function)
                returned = self.graph.returned_symbols(
                    module, alias.target.target, alias.function, class_name, alias.item
                )
                for source in filter(None, (tables.get(name) for name in returned)):
                    if source is not assigned:
                        assigned.entries.extend(entry for entry in source.entries if entry not in assigned.entries)
        for module in self.graph.modules:
            for alias in module.aliases:
                if alias.target.kind != ValueKind.CALL or not alias.target.call_args:
                    continue
                wrapper = self.graph.resolve(module, alias.target.target, alias.function)
                if not (wrapper and wrapper.startswith(RUNTIME_PACKAGE)):
                    continue
                source = tables.get(self.graph.resolve(module, alias.target.call_args[0], alias.function) or "")
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
            if self.graph.function(parent):
                decorators.setdefault(parent, registrars[registrar])
        for module in self.graph.modules:
            for function in module.functions:
                for decorator, key in zip(function.decorators, function.decorator_keys):
                    if decorator.kind not in (ValueKind.REF, ValueKind.CALL):
                        continue
                    resolved = self.graph.resolve(module, decorator.target, parent_of(function.qualname))
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
                    resolved = self.graph.resolve(module, decorator.target, parent_of(cls.qualname))
                    if decorator.kind not in (ValueKind.REF, ValueKind.CALL) or resolved not in decorators:
                        continue
                    qualified = f"{module.module}.{cls.qualname}"
                    methods = tuple(
                        found
                        for found in (self.graph.symbols.member(qualified, name) for name in TOOL_ENTRY_METHODS)
                        if found is not None and self.graph.function(found) is not None
                    )
                    entry = LinkedEntry(key or cls.qualname, module, cls.span, (), False, True, methods[:1])
                    decorators[resolved][0].entries.append(entry)
                    for cls_name in self.graph.mro(qualified):  # the class's own ``parameters`` names that tool
                        located = self.graph.symbols.class_def(cls_name)
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
            found = self.graph.function(registrar)
            if found is None or fill.key_param is None:
                continue
            definition = found[1]
            for module, call in self.graph.callers(registrar, definition):
                literals = dict(((slot, (kind, value)) for slot, kind, value in call.literals))
                key = bound_literal(literals, definition, fill.key_param, call, "str")
                stored = self._stored_param(registrar_module, fill)
                value = bound_literal(literals, definition, stored, call, "ref") if stored else None
                class_name = self.graph.class_of(module, call.function)
                executor = self.graph.resolve(module, value, call.function, class_name) if value else None
                if executor is None or self.graph.function(executor) is None:
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
        if value.kind == ValueKind.PARAM:
            return value.target
        if value.kind == ValueKind.DEF:
            return ""
        found = self.graph.function(f"{module.module}.{fill.function}") if value.kind == ValueKind.CALL else None
        if found is None:
            return None
        passed = [name for name in value.call_args if name in found[1].params and name != fill.key_param]
        return passed[0] if passed else None

    def _registered_wrapped(self, fill: TableFill, registrar_module: ModuleFacts, executor: str) -> bool:
        """A registrar that stores a gate-calling wrapper (or an executor that gates itself) guards the entry."""
        if fill.value.kind == ValueKind.DEF and self.gates.calls_gate(f"{registrar_module.module}.{fill.value.target}"):
            return True
        if fill.value.kind == ValueKind.CALL:
            wrapper = self.graph.resolve(registrar_module, fill.value.target, fill.function)
            if wrapper and (
                wrapper.startswith(RUNTIME_PACKAGE) or (self.graph.function(wrapper) and self.gates.calls_gate(wrapper))
            ):
                return True
        return executor in self.gates.gated_entries or self.gates.decorated_by_gate(executor)

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
        class_name = class_name or (self.graph.class_of(module, context) if context else "")
        executors: Tuple[str, ...] = ()
        wrapped = False
        if value.kind in (ValueKind.REF, ValueKind.DEF):
            target = (
                f"{module.module}.{value.target}"
                if value.kind == ValueKind.DEF
                else self.graph.resolve(module, value.target, context, class_name)
            )
            if target and self.graph.function(target):
                executors = (target,)
                wrapped = (
                    target in self.gates.gated_entries
                    or self.gates.decorated_by_gate(target)
                    or self._validating_entry(target)
                )
            elif target and self._validating_entry(target):  # tool.run of a framework's tool: it validates
                wrapped = True
            elif self.graph.symbols.kind(target) is SymbolKind.CLASS:
                return LinkedEntry(key, module, span, (), False, is_class=True)
            elif target and self.graph.symbols.alias(target) is not None:
                alias, alias_module = self.graph.symbols.alias(target)  # type: ignore[misc]
                if alias.target.kind == ValueKind.CALL:  # search_tool = StructuredTool.from_function(...)
                    made_by = self.graph.resolve(alias_module, alias.target.target, alias.function)
                    wrapped = bool(made_by and self.gates.makes_framework_tool(made_by))
        elif value.kind == ValueKind.LAMBDA:
            target = self.graph.resolve(module, value.target, context, class_name) if value.target else None
            executors = (target,) if target and self.graph.function(target) else ()
            wrapped = any(self.gates.is_gate_callee(module, callee, context) for callee in value.call_args)
        elif value.kind == ValueKind.CALL:
            callee = self.graph.resolve(module, value.target, context, class_name)
            if callee and self.gates.makes_framework_tool(callee):
                wrapped = True
            elif callee and (
                callee.startswith(RUNTIME_PACKAGE) or (self.graph.function(callee) and self.gates.calls_gate(callee))
            ):
                wrapped = True
                passed = (self.graph.resolve(module, name, context, class_name) for name in value.call_args)
                executors = tuple(q for q in passed if q and self.graph.function(q))
            elif callee and self.graph.function(callee):
                executors = tuple(f"{m.module}.{f.qualname}" for m, f in self._nested_functions(callee))
        return LinkedEntry(key, module, span, executors, wrapped)

    def _validating_entry(self, qualified: str) -> bool:
        """``BaseTool.run`` (a table holding ``tool.run`` of ``tool: BaseTool``): the public entry of a tool
        class that validates its arguments there."""
        owner, _, method = qualified.rpartition(".")
        return bool(owner) and method in TOOL_ENTRY_METHODS and self.gates.is_tool_type(owner)

    def entry_carries_schema(self, entry: LinkedEntry) -> bool:
        """A table entry whose schema comes with it: a tool object or class (``args_schema``, ``parameters``),
        a function a framework's decorator makes a tool of, one offered to the model by its signature
        (``tools=[fn]``), or one that takes a pydantic model."""
        if not entry.executors:
            return True  # an object, a class, or a value this analysis cannot see into: nothing to say
        for executor in entry.executors:
            if executor in self.offered_tools:
                return True
            found = self.graph.function(executor)
            if found is None:
                continue
            module, definition = found
            if self.gates.decorated_by_gate(executor) or self._described_by_decorator(module, definition):
                return True
            for _, annotation in definition.annotations:
                declared = annotated_class(annotation)
                resolved = self.graph.resolve(module, declared, parent_of(definition.qualname)) if declared else None
                if resolved and any(self._is_model_class(cls) for cls in self.graph.mro(resolved)):
                    return True
        return False

    def _described_by_decorator(self, module: ModuleFacts, definition: FunctionDef) -> bool:
        """A project decorator that reads the annotations of the function it registers describes its parameters
        to the model from its signature (``@register_tool``: ``inspect.signature(func)``, each
        ``param.annotation``)."""
        scope = parent_of(definition.qualname)
        for decorator in definition.decorators:
            resolved = (
                self.graph.resolve(module, decorator.target.partition("(")[0], scope) if decorator.target else None
            )
            found = self.graph.function(resolved) if resolved else None
            if found is not None and found[1].reads_annotations:
                return True
        return False

    def _is_model_class(self, qualified: str) -> bool:
        located = self.graph.symbols.class_def(qualified)
        if located is None:
            return False
        cls, module = located
        return any((self.graph.resolve(module, base) or "").startswith("pydantic") for base in cls.bases)

    def _nested_functions(self, qualified: str) -> Iterable[Tuple[ModuleFacts, FunctionDef]]:
        found = self.graph.function(qualified)
        if found is None:
            return []
        module, definition = found
        prefix = definition.qualname + "."
        return [(module, f) for f in module.functions if f.qualname.startswith(prefix)]

    def table_for(self, module: ModuleFacts, written: str, function: str) -> Optional[LinkedTable]:
        resolved = self.graph.resolve(module, written, function, self.graph.class_of(module, function))
        return self.tables.get(resolved or "")

    def holds_tool_objects(self, table: LinkedTable) -> bool:
        """The values are objects whose methods run tools (``{t.name: t for t in tools}``, instances built in
        the literal, a registry filled with objects), not plain functions."""
        if table.holds_objects:
            return True
        return bool(table.entries) and not any(entry.executors or entry.is_class for entry in table.entries)

    def holds_only_classes(self, table: LinkedTable) -> bool:
        entries = [entry for entry in table.entries]
        return bool(entries) and all(not entry.executors and entry.is_class for entry in entries)

    def dispatched_tables(self, module: ModuleFacts, dispatch: Dispatch) -> List[LinkedTable]:
        class_name = self.graph.class_of(module, dispatch.function)
        if dispatch.table.endswith("()"):  # self._get_tools()[name]: the tables a method returns
            returned = self.graph.returned_symbols(module, dispatch.table[:-2], dispatch.function, class_name)
            return [table for name in returned for table in self._tables_at(name, 0)]
        if dispatch.table:
            resolved = self.graph.resolve(
                module, dispatch.table, dispatch.function, self.graph.class_of(module, dispatch.function)
            )
            head, _, rest = dispatch.table.partition(".")
            found = self.graph.function(f"{module.module}.{dispatch.function}") if dispatch.function else None
            if resolved is None and found is not None and head in found[1].params and head not in ("self", "cls"):
                passed = self._passed_tables(f"{module.module}.{dispatch.function}", found[1], head, rest, 0)
                return passed or self._only_attribute_tables(rest)
            return self._tables_at(resolved, 0)
        resolver = self.graph.resolve_method(module, dispatch.resolver, dispatch.function)
        return self._resolver_tables(resolver, 0) if resolver else []

    def returned_method(self, module: ModuleFacts, dispatch: Dispatch) -> str:
        """The method of the looked-up tool object that the dispatch's resolver returns in its place
        (``return function.execute``), if it returns one."""
        resolver = (
            self.graph.resolve_method(module, dispatch.resolver, dispatch.function) if dispatch.resolver else None
        )
        found = self.graph.function(resolver) if resolver else None
        if found is None:
            return ""
        defined_in, definition = found
        methods = {lookup.method for lookup in defined_in.lookups if lookup.function == definition.qualname}
        return methods.pop() if len(methods) == 1 else ""

    def _tables_at(self, qualified: Optional[str], depth: int) -> List[LinkedTable]:
        """The tables a resolved name holds: a table, or the tables callers pass for a parameter alias
        (``def __init__(self, tools): self.tools = tools`` called as ``Agent(TOOLS)``)."""
        if qualified is None:
            return []
        if qualified in self.tables:
            return [self.tables[qualified]]
        found_alias = self.graph.symbols.alias(qualified)
        if found_alias is None or depth > 2:
            return []
        alias, module = found_alias
        if alias.target.kind == ValueKind.CALL:
            class_name = self.graph.class_of(module, alias.function)
            made = self.graph.resolve(module, alias.target.target, alias.function, class_name)
            # REGISTRY = ToolRegistry(): its lookups' tables
            if made and self.graph.symbols.kind(made) is SymbolKind.CLASS:
                return self._instance_tables(made)
            # self.tools = create_tools(engine): the table the function builds and returns
            returned = self.graph.returned_symbols(module, alias.target.target, alias.function, class_name, alias.item)
            return [table for name in returned for table in self._tables_at(name, depth + 1)]
        if alias.target.kind != ValueKind.PARAM or not alias.function:
            return []
        function = f"{module.module}.{alias.function}"
        found = self.graph.function(function)
        return self._passed_tables(function, found[1], alias.target.target, "", depth) if found else []

    def _only_attribute_tables(self, attribute: str) -> List[LinkedTable]:
        """``state.tool_dispatch_map`` of an untyped parameter no caller can be followed to: the tables of the
        one class of the project whose objects hold an attribute of that name (none when several classes do)."""
        if not attribute or "." in attribute:
            return []
        holders = self._attribute_holders.get(attribute, [])
        return self._tables_at(holders[0], 0) if len(holders) == 1 else []

    @cached_property
    def _attribute_holders(self) -> Dict[str, List[str]]:
        """Attribute name -> the qualified names of the classes' attributes that hold a table or an alias of one."""
        holders: Dict[str, List[str]] = defaultdict(list)
        symbols = self.graph.symbols
        for qualified, symbol in symbols.entries.items():
            if symbol.kind not in (SymbolKind.TABLE, SymbolKind.ALIAS):
                continue
            owner, _, attribute = qualified.rpartition(".")
            if symbols.kind(owner) is SymbolKind.CLASS:
                holders[attribute].append(qualified)
        return holders

    def _passed_tables(
        self, function: str, definition: FunctionDef, parameter: str, rest: str, depth: int
    ) -> List[LinkedTable]:
        """The tables the callers of ``function`` pass for ``parameter`` (then ``.rest`` of it)."""
        tables: List[LinkedTable] = []
        for caller_module, call in self.graph.callers(function, definition):
            literals = dict((slot, (kind, value)) for slot, kind, value in call.literals)
            passed = bound_literal(literals, definition, parameter, call, "ref")
            if passed is None:
                continue
            written = f"{passed}.{rest}" if rest else passed
            resolved = self.graph.resolve(
                caller_module, written, call.function, self.graph.class_of(caller_module, call.function)
            )
            found = self._tables_at(resolved, depth + 1)
            caller = self.graph.function(f"{caller_module.module}.{call.function}") if call.function else None
            if not found and caller is not None and passed in caller[1].params and depth < 3:
                # handed on again: execute_tools(calls, tool_dict) -> _execute_single_tool(call, tool_dict)
                found = self._passed_tables(
                    f"{caller_module.module}.{call.function}", caller[1], passed, rest, depth + 1
                )
            for table in found:
                if table not in tables:
                    tables.append(table)
        return tables

    def _instance_tables(self, class_qualified: str) -> List[LinkedTable]:
        """The tables a registry class's methods look tools up in (``def get(self, name): return
        self._tools.get(name)``)."""
        tables: List[LinkedTable] = []
        for cls in self.graph.mro(class_qualified):
            cls_def, cls_module = self.graph.symbols.class_def(cls)  # type: ignore[misc]
            for lookup in cls_module.lookups:
                if parent_of(lookup.function) == cls_def.qualname:
                    for table in self._resolver_tables(f"{cls_module.module}.{lookup.function}", 1):
                        if table not in tables:
                            tables.append(table)
        return tables

    def _resolver_tables(self, resolver: str, depth: int) -> List[LinkedTable]:
        found = self.graph.function(resolver)
        if found is None or depth > 2:
            return []
        module, definition = found
        tables: List[LinkedTable] = []
        for lookup in module.lookups:
            if lookup.function != definition.qualname:
                continue
            if lookup.table.endswith("()"):
                inner = self.graph.resolve(module, lookup.table[:-2], lookup.function, definition.class_name)
                tables.extend(self._resolver_tables(inner, depth + 1) if inner else [])
            else:
                resolved = self.graph.resolve(module, lookup.table, lookup.function, definition.class_name)
                tables.extend(self._tables_at(resolved, 0))
        return tables

    # ------------------------------------------------------------------------------------------ queries

    def registered_executors(self) -> Dict[str, Set[str]]:
        """Executors registered by a call that names the tool and hands over its handler, wherever the
        registry keeps them (``registry.register(name="todo", schema=..., handler=lambda args: todo(...))``)."""
        found: Dict[str, Set[str]] = defaultdict(set)
        for module in self.graph.modules:
            for call in module.calls:
                slots = {slot: (kind, value) for slot, kind, value in call.literals}
                name = slots.get("name")
                if name is None or name[0] != "str":
                    continue
                for keyword in HANDLER_KEYWORDS:
                    handler = slots.get(keyword)
                    if handler is None or handler[0] not in ("ref", "lambda"):
                        continue
                    class_name = self.graph.class_of(module, call.function)
                    executor = self.graph.resolve(module, handler[1], call.function, class_name)
                    if executor and self.graph.function(executor):
                        found[executor].add(name[1])
        return found

    def tools_served(self, tables: Iterable[LinkedTable]) -> Dict[str, Set[str]]:
        """Executor -> tool names, from registration calls and the entries of ``tables``."""
        tools = {executor: set(names) for executor, names in self.registered_executors().items()}
        for table in tables:
            for entry in table.entries:
                for executor in entry.executors + entry.methods:
                    tools.setdefault(executor, set()).update([entry.key] if entry.key is not None else [])
        return tools

    def class_registries(self) -> List[LinkedTable]:
        """Registries of tool classes (``@register_tool("search") class Search(BaseTool)``): instantiated by
        name, their ``call``/``run`` methods then run the tools."""
        return [table for table in self.tables.values() if any(entry.methods for entry in table.entries)]
