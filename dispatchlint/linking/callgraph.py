"""Stage 1, the call graph: the program (its parsed modules and symbols, and the parts it falls into) and
every call that runs a function: direct calls, calls of the parameter a function is handed to as a value (a
lambda handed to a middleware runner, a closure stored in an object and called from its method), calls in
nested functions."""

from __future__ import annotations

import posixpath
import re
import sys
from collections import defaultdict
from typing import AbstractSet, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from dispatchlint.discovery.files import PathMatcher
from dispatchlint.indexing.facts import (
    Call,
    FunctionDef,
    ModuleFacts,
)
from dispatchlint.linking.model import (
    COMMAND_LINE_REGISTRATIONS,
    Hop,
    Invocation,
    base_name,
    param_at,
    stored_attributes,
)
from dispatchlint.linking.symbols import SymbolKind, SymbolTable
from dispatchlint.config import Config


class CallGraph:
    """Who calls whom in the project; built once, read by every later stage."""

    def __init__(self, modules: Sequence[ModuleFacts], config: Config) -> None:
        self.config = config
        self.modules = [module for module in modules if module.parse_error is None]
        self.broken = [module for module in modules if module.parse_error is not None]
        self._tests = PathMatcher(config.test_paths)
        self.symbols = SymbolTable(self.modules)
        self.module_names = self.symbols.module_names
        self.calls_by_function: Dict[str, List[Tuple[ModuleFacts, Call]]] = defaultdict(list)
        self._callers: Dict[str, List[Tuple[ModuleFacts, Call]]] = defaultdict(list)
        self._callers_by_name: Dict[str, List[Tuple[ModuleFacts, Call]]] = defaultdict(list)
        #: Method name -> calls of a method of that name on an object nothing says the type of, where several
        #: classes define one: each may run (class hierarchy analysis). What a method's parameters receive only.
        self._callers_by_hierarchy: Dict[str, List[Tuple[ModuleFacts, Call]]] = defaultdict(list)
        #: Function (qualified, without a redefinition's ``@LINE``) -> the calls that hand it on as a value.
        self._handed: Dict[str, List[Tuple[ModuleFacts, Call, str]]] = defaultdict(list)
        self._nested_owners: Dict[str, List[str]] = defaultdict(list)
        #: ``tool_registry`` -> the classes named ``ToolRegistry``, qualified.
        self._classes_by_snake_name: Dict[str, List[str]] = defaultdict(list)
        #: Method name -> the methods of that name, qualified.
        self._methods_by_name: Dict[str, List[str]] = defaultdict(list)
        self._index_calls()
        self._parts = connected_parts(self.modules)

    def part_of(self, module: ModuleFacts) -> int:
        """Which part of the program a module belongs to (see :func:`connected_parts`)."""
        return self._parts[module.module]

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

    def returned_symbols(
        self, module: ModuleFacts, callee: str, function: str, class_name: str, item: Optional[int] = None
    ) -> List[str]:
        """What the project function ``callee`` (as written there) returns by name: modules, tables, objects;
        with ``item``, what it returns at that position of a tuple. A function that returns another's result
        (``return convert_tools(tools)``) returns what that one does."""
        resolved = self.symbols.resolve(module, callee, function, class_name)
        return self._returned_by(resolved, item, set()) if resolved else []

    def _returned_by(self, qualified: str, item: Optional[int], seen: Set[str]) -> List[str]:
        found = self.function(qualified)
        if found is None or qualified in seen:
            return []
        seen.add(qualified)
        callee_module, definition = found
        if item is None:
            written = list(definition.returns_names)
        else:
            written = [returned.name for returned in definition.returns_items if returned.index == item]
        names = [
            resolved
            for resolved in (
                self.symbols.resolve(callee_module, name, definition.qualname, definition.class_name)
                for name in written
            )
            if resolved is not None
        ]
        for forwarded in definition.returns_calls:
            target = self.symbols.resolve(callee_module, forwarded, definition.qualname, definition.class_name)
            if target is not None:
                names.extend(name for name in self._returned_by(target, item, seen) if name not in names)
        return names

    def mro(self, class_qualified: str) -> List[str]:
        return self.symbols.mro(class_qualified)

    def is_test(self, module: ModuleFacts) -> bool:
        """Test code: linked like the rest, but never reported and never a gate or a sanitizer."""
        return self._tests.matches(module.path)

    def _index_calls(self) -> None:
        function_names: Dict[str, int] = defaultdict(int)
        for module in self.modules:
            for cls in module.classes:
                self._classes_by_snake_name[snake_case(cls.qualname.rpartition(".")[2])].append(
                    f"{module.module}.{cls.qualname}"
                )
            for function in module.functions:
                if function.class_name:  # ``obj.method(...)`` on an object of unknown type: methods only
                    function_names[function.name] += 1
                    self._methods_by_name[function.name].append(f"{module.module}.{function.qualname}")
        for module in self.modules:
            for call in module.calls:
                owner = f"{module.module}.{call.function}" if call.function else module.module
                if owner not in self.calls_by_function:
                    parts = call.function.split(".") if call.function else []
                    for depth in range(1, len(parts)):
                        self._nested_owners[f"{module.module}.{'.'.join(parts[:depth])}"].append(owner)
                self.calls_by_function[owner].append((module, call))
                for slot, handed in call.functions:
                    self._handed[base_name(f"{module.module}.{handed}")].append((module, call, slot))
                for slot, kind, value in call.literals:
                    if kind == "ref" and not any(slot == handed_slot for handed_slot, _ in call.functions):
                        target = self.resolve(module, value, call.function, self.class_of(module, call.function))
                        if target is not None and self.function(target) is not None:
                            self._handed[base_name(target)].append((module, call, slot))
                resolved = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
                if resolved is not None and self.symbols.kind(resolved) is SymbolKind.CLASS:
                    resolved = self.symbols.member(resolved, "__init__")
                if resolved is not None and self.function(resolved) is not None:
                    self._callers[resolved].append((module, call))
                elif "." in call.callee and not call.callee.startswith(("self.", "cls.")):
                    # a method called on an object of a type this analysis does not know: the method of the class
                    # the receiver is named after, the one method of that name, or, when nothing the name is
                    # written with resolves, any method of that name (class hierarchy analysis, for what the
                    # parameters receive: ``plugin.execute_tool(name, args)`` runs every plugin's override)
                    name = call.callee.split(".")[-1]
                    named = self._method_of_named_receiver(call.callee) if resolved is None else None
                    if named is not None:
                        self._callers[named].append((module, call))
                    elif function_names.get(name) == 1:
                        self._callers_by_name[name].append((module, call))
                    elif resolved is None and function_names.get(name, 0) > 1:
                        self._callers_by_hierarchy[name].append((module, call))

    def methods_named(self, name: str) -> List[str]:
        """Every method of that name the project defines, qualified."""
        return list(self._methods_by_name.get(name, []))

    def _method_of_named_receiver(self, callee: str) -> Optional[str]:
        """``ctx.tool_registry.execute_tool``: the method of the one class the receiver is named after
        (``ToolRegistry``), by the convention that an object is named like its class."""
        receiver, _, name = callee.rpartition(".")
        classes = self._classes_by_snake_name.get(receiver.rpartition(".")[2].lstrip("_"), [])
        methods = [member for member in (self.symbols.member(cls, name) for cls in classes) if member]
        return methods[0] if len(methods) == 1 and self.function(methods[0]) is not None else None

    def resolve_method(self, module: ModuleFacts, dotted: str, function: str) -> Optional[str]:
        """``obj.method`` as written in ``function``: what the names resolve to, or else, on an object of a type
        this analysis does not know (``registry = await self.get_registry()``), the one method of that name in
        the project."""
        resolved = self.resolve(module, dotted, function, self.class_of(module, function))
        if resolved is not None and self.function(resolved) is not None:
            return resolved
        holder, _, name = dotted.rpartition(".")
        methods = self._methods_by_name.get(name, [])
        if holder and holder not in ("self", "cls") and len(methods) == 1:
            return methods[0]
        return resolved

    def calls_in(self, function_qualified: str, nested: bool = False) -> List[Tuple[ModuleFacts, Call]]:
        """Calls made by a function (and by its nested functions when ``nested``)."""
        found = list(self.calls_by_function.get(function_qualified, []))
        if nested:
            for owner in self._nested_owners.get(function_qualified, ()):
                found.extend(self.calls_by_function[owner])
        return found

    def callers(
        self, qualified: str, definition: FunctionDef, hierarchy: bool = False
    ) -> List[Tuple[ModuleFacts, Call]]:
        """The calls of a function; ``hierarchy``: of a method, also the calls of a method of its name on objects of
        unknown type where several classes define one (what its parameters may receive)."""
        found = list(self._callers.get(base_name(qualified), []))
        if definition.class_name:
            found.extend(self._callers_by_name.get(definition.name, []))
            if hierarchy:
                found.extend(self._callers_by_hierarchy.get(definition.name, []))
        return found

    def invocations(self, qualified: str, definition: FunctionDef) -> List[Invocation]:
        """Every call that runs a function: its callers, the calls of a method of its name on objects of unknown
        type, and the calls of the parameters it is handed to."""
        found = [Invocation(module, call) for module, call in self.callers(qualified, definition, hierarchy=True)]
        return found + self._handed_invocations(qualified, 0)

    def _handed_invocations(self, qualified: str, depth: int) -> List[Invocation]:
        """Calls of a function handed on as a value: the receiver calls the parameter it arrives in
        (``execute(args)``), stores it and calls it from a method (``self._run_fn(args)``), or hands it on."""
        found: List[Invocation] = []
        for module, call, slot in self._handed.get(base_name(qualified), []) if depth < 3 else []:
            receiver = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
            if receiver is not None and self.symbols.kind(receiver) is SymbolKind.CLASS:
                receiver = self.symbols.member(receiver, "__init__")
            located = self.function(receiver) if receiver else None
            if located is None or receiver is None:
                continue
            receiver_module, definition = located
            parameter = param_at(call, definition, slot)
            if parameter is None:
                continue
            context = (Hop(module, call, definition),)
            for inner_module, inner in self.calls_in(receiver, nested=True):
                if inner.callee == parameter:
                    found.append(Invocation(inner_module, inner, context))
                elif any(kind == "ref" and value == parameter for _, kind, value in inner.literals):
                    found.extend(self._handed_onwards(inner_module, inner, parameter, context))
            for attribute in stored_attributes(receiver_module, definition, parameter):
                for method_call in receiver_module.calls:
                    if method_call.callee == f"self.{attribute}" and base_name(
                        self.class_of(receiver_module, method_call.function)
                    ) == base_name(definition.class_name):
                        found.append(Invocation(receiver_module, method_call))
        return found

    def handed_to_command_line(self, qualified: str) -> bool:
        """The function is registered as a command line's handler (``parser.set_defaults(func=cmd)``), directly or
        through the parameter of a function it is handed to (``build_parser(sub, cmd_mcp=cmd_mcp)``): argparse
        calls it with the parsed command line, never with a tool call's arguments."""
        seen = set()
        pending = [base_name(qualified)]
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            for module, call, slot in self._handed.get(name, []):
                if call.callee.rsplit(".", 1)[-1] in COMMAND_LINE_REGISTRATIONS:
                    return True
                receiver = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
                located = self.function(receiver) if receiver else None
                parameter = param_at(call, located[1], slot) if located else None
                if located is None or parameter is None:
                    continue
                for _, inner in self.calls_in(base_name(receiver or ""), nested=True):
                    handed_on = any(kind == "ref" and value == parameter for _, kind, value in inner.literals)
                    if handed_on and inner.callee.rsplit(".", 1)[-1] in COMMAND_LINE_REGISTRATIONS:
                        return True
        return False

    def _handed_onwards(
        self, module: ModuleFacts, call: Call, parameter: str, context: Tuple[Hop, ...]
    ) -> List[Invocation]:
        """A receiver hands the function on again (``return _timed(execute, args)``), up to three receivers
        deep; each hop is kept, so that what the last one passes is read back through them all."""
        slots = [slot for slot, kind, value in call.literals if kind == "ref" and value == parameter]
        receiver = self.resolve(module, call.callee, call.function, self.class_of(module, call.function))
        located = self.function(receiver) if receiver else None
        if located is None or receiver is None or len(context) >= 3:
            return []
        context = context + (Hop(module, call, located[1]),)
        found = []
        for slot in slots:
            inner_parameter = param_at(call, located[1], slot)
            if inner_parameter is None:
                continue
            for inner_module, inner in self.calls_in(receiver, nested=True):
                if inner.callee == inner_parameter:
                    found.append(Invocation(inner_module, inner, context))
                elif any(kind == "ref" and value == inner_parameter for _, kind, value in inner.literals):
                    found.extend(self._handed_onwards(inner_module, inner, inner_parameter, context))
        return found


#: Standard-library modules, never a project module imported under a shorter name (Python 3.10 and later).
_STANDARD_LIBRARY: AbstractSet[str] = getattr(sys, "stdlib_module_names", frozenset())


def connected_parts(modules: Sequence[ModuleFacts]) -> Dict[str, int]:
    """Module name -> the part of the program it belongs to: modules that import one another (in either
    direction, through any chain), share a package tree, or share a folder of scripts are one part. A folder of
    independent apps (a tutorial collection) has a part per app: a gate in one app repairs nothing in another.

    An import resolves to the project module it names, else to the modules whose names end with it (an app that
    imports ``src.tools`` from its own folder, a monorepo whose ``libs/agno/agno`` is imported as ``agno``); a
    one-word import only to a package of that name, never to a standard-library module."""
    names = {module.module for module in modules}
    packages = {module.module for module in modules if module.is_package}
    by_suffix: Dict[str, List[str]] = defaultdict(list)
    for name in names:
        parts = name.split(".")
        for start in range(1, len(parts)):
            by_suffix[".".join(parts[start:])].append(name)
    leader: Dict[str, str] = {}

    def find(item: str) -> str:
        root = item
        while leader.get(root, root) != root:
            root = leader[root]
        while leader.get(item, item) != root:
            leader[item], item = root, leader[item]
        return root

    def join(first: str, second: str) -> None:
        leader[find(first)] = find(second)

    for module in modules:
        join(module.module, _unit(module, packages))
        for _, target in module.imports:
            for imported in _imported(target, names, packages, by_suffix):
                join(module.module, imported)
    numbers: Dict[str, int] = {}
    return {module.module: numbers.setdefault(find(module.module), len(numbers)) for module in modules}


def _unit(module: ModuleFacts, packages: AbstractSet[str]) -> str:
    """The outermost package a module lies in, or the folder of a script outside any package."""
    package = module.module if module.is_package else module.module.rpartition(".")[0]
    if package not in packages:
        return "folder:" + posixpath.dirname(module.path)
    while package.rpartition(".")[0] in packages:
        package = package.rpartition(".")[0]
    return package


def _imported(
    target: str, names: AbstractSet[str], packages: AbstractSet[str], by_suffix: Dict[str, List[str]]
) -> Iterable[str]:
    """The project modules an import names (see :func:`connected_parts`)."""
    parts = target.split(".")
    for depth in range(len(parts), 0, -1):
        prefix = ".".join(parts[:depth])
        if prefix in names:
            return [prefix]
    if parts[0] in _STANDARD_LIBRARY:
        return []
    for depth in range(len(parts), 0, -1):
        found = [name for name in by_suffix.get(".".join(parts[:depth]), []) if depth > 1 or name in packages]
        if found:
            return found
    return []


def snake_case(name: str) -> str:
    """``ToolRegistry`` -> ``tool_registry``, ``MCPClient`` -> ``mcp_client``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
