"""The project's symbol table: qualified names of modules, imports, aliases, classes, functions and tables,
and resolution of a name as written in one place (``X``, ``mm.T``, ``self.tools``) to the qualified name it
denotes, through imports, re-exports, aliases, enclosing functions and class hierarchies.

libcst's own providers stop at the module boundary; this table is what lets the linker follow
``from m import T as X`` and ``import pkg.m as mm; mm.T`` across the project.
"""

from __future__ import annotations

from enum import Enum
from typing import Dict, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

from dispatchlint.indexing.annotations import annotated_class
from dispatchlint.indexing.facts import Alias, ClassDef, FunctionDef, ModuleFacts, TableDef, ValueKind


class SymbolKind(Enum):
    """What a qualified name of the project names."""

    MODULE = "module"
    IMPORT = "import"
    ALIAS = "alias"
    CLASS = "class"
    FUNCTION = "function"
    TABLE = "table"


class Symbol(NamedTuple):
    """One entry of the table: what the name is, its definition (an import's target for an import), and the
    module it is written in."""

    kind: SymbolKind
    definition: Union[str, ModuleFacts, Alias, ClassDef, FunctionDef, TableDef]
    module: ModuleFacts


class SymbolTable:
    def __init__(self, modules: Sequence[ModuleFacts]) -> None:
        self.entries: Dict[str, Symbol] = {}
        self.module_names = {module.module for module in modules}
        #: Packages inside folders that are not (``libs/core/kiln_ai``), by the name their modules import them by
        #: (``kiln_ai``): a folder of a monorepo installed as a distribution of its own.
        self.installed_packages = _installed_packages(modules)
        self._project_roots = {name.split(".")[0] for name in self.module_names | set(self.installed_packages)}
        self._resolved: Dict[Tuple[str, str, str, str], Optional[str]] = {}
        #: Names being followed right now (a cycle of imports must end).
        self._following: Set[str] = set()
        self._modules = modules
        self._build_symbols()

    def kind(self, qualified: Optional[str]) -> Optional[SymbolKind]:
        """What ``qualified`` names in the project (None: nothing the project defines or imports)."""
        symbol = self.entries.get(qualified or "")
        return symbol.kind if symbol is not None else None

    def alias(self, qualified: str) -> Optional[Tuple[Alias, ModuleFacts]]:
        symbol = self.entries.get(qualified)
        if symbol is None or symbol.kind is not SymbolKind.ALIAS:
            return None
        assert isinstance(symbol.definition, Alias)
        return symbol.definition, symbol.module

    def class_def(self, qualified: str) -> Optional[Tuple[ClassDef, ModuleFacts]]:
        symbol = self.entries.get(qualified)
        if symbol is None or symbol.kind is not SymbolKind.CLASS:
            return None
        assert isinstance(symbol.definition, ClassDef)
        return symbol.definition, symbol.module

    def _build_symbols(self) -> None:
        by_name = {module.module: module for module in self._modules}
        for imported, located in self.installed_packages.items():
            inside = (name for name in self.module_names if name == located or name.startswith(located + "."))
            for module_name in inside:
                imported_name = imported + module_name[len(located) :]
                if imported_name not in self.module_names:
                    self.entries[imported_name] = Symbol(SymbolKind.IMPORT, module_name, by_name[module_name])
        for module in self._modules:
            name = module.module
            self.entries.setdefault(name, Symbol(SymbolKind.MODULE, module, module))
            for local, target in module.imports:
                self.entries[f"{name}.{local}"] = Symbol(SymbolKind.IMPORT, target, module)
            for alias in module.aliases:
                self.entries.setdefault(scoped(name, alias.owner, alias.name), Symbol(SymbolKind.ALIAS, alias, module))
            for cls in module.classes:
                self.entries[f"{name}.{cls.qualname}"] = Symbol(SymbolKind.CLASS, cls, module)
            for function in module.functions:
                self.entries[f"{name}.{function.qualname}"] = Symbol(SymbolKind.FUNCTION, function, module)
            for table in module.tables:
                self.entries[scoped(name, table.owner, table.name)] = Symbol(SymbolKind.TABLE, table, module)

    def function(self, qualified: str) -> Optional[Tuple[ModuleFacts, FunctionDef]]:
        symbol = self.entries.get(qualified)
        if symbol is not None and symbol.kind is SymbolKind.FUNCTION:
            assert isinstance(symbol.definition, FunctionDef)
            return symbol.module, symbol.definition
        return None

    def class_of(self, module: ModuleFacts, function: str) -> str:
        found = self.function(f"{module.module}.{function}") if function else None
        return found[1].class_name if found else ""

    def resolve(self, module: ModuleFacts, dotted: str, function: str = "", class_name: str = "") -> Optional[str]:
        """The qualified name ``dotted`` denotes where it is written (external names are returned as imported)."""
        key = (module.module, dotted, function, class_name)
        if key not in self._resolved:
            self._resolved[key] = None  # a name defined through itself (``x = y``, ``y = x``) denotes nothing
            self._resolved[key] = self._resolve(module, dotted, function, class_name)
        return self._resolved[key]

    def _resolve(self, module: ModuleFacts, dotted: str, function: str, class_name: str) -> Optional[str]:
        head, _, rest = dotted.partition(".")
        if head in ("self", "cls"):
            if not class_name or not rest:
                return None
            return self.member(f"{module.module}.{class_name}", rest)
        if function:
            parts = function.split(".")
            for depth in range(len(parts), 0, -1):
                candidate = f"{module.module}.{'.'.join(parts[:depth])}.{head}"
                if candidate in self.entries:
                    return self._canonical(_join(candidate, rest))
            declared = self._declared_param_class(module, parts, head)
            if declared is not None:
                return self.member(declared, rest) if rest else declared
        candidate = f"{module.module}.{head}"
        if candidate in self.entries:
            return self._canonical(_join(candidate, rest))
        if head in self.module_names or head in self.installed_packages:
            return self._canonical(dotted)
        return None

    def canonical(self, qualified: str) -> Optional[str]:
        """A qualified name followed through imports, re-exports and aliases to what it denotes."""
        return self._canonical(qualified)

    def _canonical(self, qualified: str) -> Optional[str]:
        """Follow imports, aliases and class hierarchies until a defined symbol (or an external name). Names
        that lead back to themselves (``a.X`` imports ``b.X``, which imports ``a.X``) denote nothing."""
        if qualified in self._following:
            return None
        self._following.add(qualified)
        try:
            return self._follow(qualified)
        finally:
            self._following.discard(qualified)

    def _follow(self, qualified: str) -> Optional[str]:
        for _ in range(12):
            symbol = self.entries.get(qualified)
            if symbol is not None:
                kind, payload, module = symbol
                if kind is SymbolKind.IMPORT:
                    assert isinstance(payload, str)
                    if payload == qualified:
                        return qualified
                    qualified = payload
                    continue
                if kind is SymbolKind.ALIAS:
                    target = self._alias_target(payload, module)
                    if target is None or target == qualified:
                        return qualified
                    qualified = target
                    continue
                return qualified
            prefix, rest = self._known_prefix(qualified)
            if prefix is None:
                return qualified if not self.inside_project(qualified) else None
            kind, payload, owner_module = self.entries[prefix]
            if kind is SymbolKind.ALIAS:
                instance_of = self._instance_class(payload, owner_module)
                if instance_of is not None:
                    return self.member(instance_of, rest)
            if kind in (SymbolKind.IMPORT, SymbolKind.ALIAS):
                resolved_prefix = self._canonical(prefix)
                if resolved_prefix is None or resolved_prefix == prefix:
                    return None
                qualified = _join(resolved_prefix, rest)
                continue
            if kind is SymbolKind.CLASS:
                return self.member(prefix, rest)
            return None
        return None

    def _declared_param_class(self, module: ModuleFacts, function_parts: List[str], name: str) -> Optional[str]:
        """The class a parameter ``name`` of the function (or of one enclosing it) is annotated with
        (``def register(self, mcp_server: FastMCP)``), resolved where it is written."""
        for depth in range(len(function_parts), 0, -1):
            found = self.function(f"{module.module}.{'.'.join(function_parts[:depth])}")
            if found is None or name not in found[1].params:
                continue
            annotation = dict(found[1].annotations).get(name)
            declared = annotated_class(annotation) if annotation else None
            return self.resolve(module, declared) if declared else None
        return None

    def _instance_class(self, alias: object, module: ModuleFacts) -> Optional[str]:
        """The class an alias is an instance of (``registry = ToolRegistry()``, ``mcp = FastMCP("notes")``)."""
        assert isinstance(alias, Alias)
        if alias.target.kind != ValueKind.CALL or alias.scope != "module":
            return None
        resolved = self.resolve(module, alias.target.target)
        if resolved is not None and (
            self.kind(resolved) is SymbolKind.CLASS
            or (not self.inside_project(resolved) and resolved.rpartition(".")[2][:1].isupper())
        ):
            return resolved
        return None

    def _alias_target(self, alias: object, module: ModuleFacts) -> Optional[str]:
        assert isinstance(alias, Alias)
        if alias.target.kind != ValueKind.REF:
            return None
        function = alias.owner if alias.scope == "local" else ""
        class_name = alias.owner if alias.scope in ("class", "instance") else ""
        if alias.scope == "local":
            class_name = self.class_of(module, alias.owner)
        return self.resolve(module, alias.target.target, function, class_name)

    def _known_prefix(self, qualified: str) -> Tuple[Optional[str], str]:
        parts = qualified.split(".")
        for depth in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:depth])
            if prefix in self.entries:
                return prefix, ".".join(parts[depth:])
        return None, ""

    def inside_project(self, qualified: str) -> bool:
        return qualified.split(".")[0] in self._project_roots

    def bases_all_known(self, class_qualified: str) -> bool:
        """Every class the class derives from is the project's (or ``object``): what none defines, none has."""
        for cls in self.mro(class_qualified):
            symbol = self.entries[cls]
            assert isinstance(symbol.definition, ClassDef)
            for base in symbol.definition.bases:
                resolved = self.resolve(symbol.module, base)
                if base != "object" and (resolved is None or self.kind(resolved) is not SymbolKind.CLASS):
                    return False
        return True

    def mro(self, class_qualified: str) -> List[str]:
        """The class and its project base classes, nearest first."""
        order: List[str] = []
        queue = [class_qualified]
        while queue and len(order) < 16:
            current = queue.pop(0)
            if current in order:
                continue
            symbol = self.entries.get(current)
            if symbol is None or symbol.kind is not SymbolKind.CLASS:
                continue
            order.append(current)
            cls = symbol.definition
            assert isinstance(cls, ClassDef)
            module = symbol.module
            for base in cls.bases:
                resolved = self.resolve(module, base)
                if resolved:
                    queue.append(resolved)
        return order

    def member(self, class_qualified: str, rest: str) -> Optional[str]:
        """What ``rest`` names in a class: a member the project defines, or, of a class from outside the project,
        its name there (``fastmcp.FastMCP.tool``)."""
        attribute, _, tail = rest.partition(".")
        for cls in self.mro(class_qualified) or [class_qualified]:
            candidate = f"{cls}.{attribute}"
            if candidate in self.entries:
                return self._canonical(_join(candidate, tail))
        if not self.inside_project(class_qualified):
            return _join(class_qualified, rest)
        return None

    # ------------------------------------------------------------------------------------------ gates


def scoped(module: str, owner: str, name: str) -> str:
    """The qualified name of ``name`` defined in ``owner`` (a class or function; empty: the module)."""
    return f"{module}.{owner}.{name}" if owner else f"{module}.{name}"


def _join(prefix: str, rest: str) -> str:
    return f"{prefix}.{rest}" if rest else prefix


def _installed_packages(modules: Sequence[ModuleFacts]) -> Dict[str, str]:
    """Each top-level package that lies in a folder that is not a package itself (``libs.core.kiln_ai``, no
    ``libs/core/__init__.py``), by the name it is imported by (``kiln_ai``), when that name is unique and no module
    of the project has it already."""
    packages = {module.module for module in modules if module.is_package}
    found: Dict[str, List[str]] = {}
    for package in packages:
        parent, _, last = package.rpartition(".")
        if parent and parent not in packages:
            found.setdefault(last, []).append(package)
    names = {module.module for module in modules}
    return {imported: located[0] for imported, located in found.items() if len(located) == 1 and imported not in names}
