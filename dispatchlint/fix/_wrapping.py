"""What repairs a table's values: the project's own gate, or the bundled coercer given a schema source.

A project that has a gate keeps one source of truth: the generated wrapper calls that gate, exactly as the gated
path does (``coerce_tool_args(name, args)``). A project with no gate (DL102) gets ``dispatchlint.runtime``'s
``wrap_table``, which needs the tools' schemas by name: a module-level schema table the analyzer found, or the one
``[tool.dispatchlint] schemas = "module:NAME"`` names.

What to import follows from the facts: an import of the gate's module from the table's module would close a
cycle when the gate's module already imports (directly or through others) the table's module; the generated
wrapper then imports the gate when it runs, not when the module loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from dispatchlint.indexing.annotations import ARGS_NAMES
from dispatchlint.indexing.facts import FunctionDef, ModuleFacts
from dispatchlint.fix._context import Context
from dispatchlint.fix._shape import CallShape
from dispatchlint.runtime import contract

RUNTIME = contract.PACKAGE
_NAME_PARAMS = ("tool", "function", "fn", "func")
_CONFIGURE_SCHEMAS = (
    'set `schemas = "module:NAME"` in [tool.dispatchlint] to a mapping from tool name to its parameters schema'
)


@dataclass(frozen=True)
class Import:
    """``import module`` (``name`` empty) or ``from module import name``, with ``module`` absolute."""

    module: str
    name: str = ""


def imports_module(context: Context, importer: str, imported: str) -> bool:
    """Whether running ``importer``'s body loads ``imported`` (through any chain of project imports), so that
    ``imported`` importing a name of ``importer`` at its top would find ``importer`` half-initialised.

    ``importer``'s own packages are not part of its body: Python runs their ``__init__`` before that body starts
    and finds them in ``sys.modules`` from then on (a schema module that imports nothing, in a package whose
    ``__init__`` imports the tools, is no cycle). Every other module it loads loads its packages first.
    """
    imports = context.import_graph()
    loaded_before = set(_packages_of(importer))
    seen = {importer}
    stack = list(imports.get(importer, ()))
    while stack:
        current = stack.pop()
        if current == imported:
            return True
        if current in seen or current in loaded_before:
            continue
        seen.add(current)
        stack.extend(imports.get(current, ()))
        stack.extend(_packages_of(current))
    return False


def _packages_of(module: str) -> List[str]:
    """``a.b.c`` -> ``a``, ``a.b``: what importing the module runs first."""
    parts = module.split(".")
    return [".".join(parts[:depth]) for depth in range(1, len(parts))]


def local_name_of(facts: ModuleFacts, wanted: Import) -> Optional[str]:
    """The name under which a module already has ``wanted`` at top level, if it does."""
    target = f"{wanted.module}.{wanted.name}" if wanted.name else wanted.module
    top_level = facts.shapes.top_level_names
    for local, qualified in facts.imports:
        if qualified == target and local in top_level:
            return local
    return None


def clashes(facts: ModuleFacts, wanted: Import) -> str:
    """Why ``wanted`` cannot be imported into the module under its own name ('' when it can)."""
    if wanted.module == facts.module or local_name_of(facts, wanted) is not None:
        return ""
    local = wanted.name or wanted.module
    if local in facts.shapes.top_level_names:
        return f"`{local}` already names something else in `{facts.module}`"
    return ""


#: The runtime's wrappers, as the generated code imports them.
WRAP_TABLE = Import(RUNTIME, contract.WRAP_TABLE)
COERCED = Import(RUNTIME, contract.COERCED)


@dataclass(frozen=True)
class GateWrapping:
    """Values are wrapped by ``_coerced(name, executor)``, which calls the project's gate."""

    gate: Import
    shape: CallShape
    #: The gate's module imports the wrapper's module: import the gate inside the wrapper, when it runs.
    lazy: bool

    @property
    def label(self) -> str:
        return f"`{self.gate.name}`"


@dataclass(frozen=True)
class RuntimeWrapping:
    """Values are wrapped by ``dispatchlint.runtime`` against the schemas in ``schemas``."""

    schemas: Import
    #: The executors' parameter that receives the arguments, passed as ``args_at=`` so that the runtime never
    #: has to guess it from a name; None: the executors take the arguments as keywords.
    args_at: Optional[int]

    @property
    def label(self) -> str:
        return f"`dispatchlint.runtime` and `{self.schemas.name}`"


Wrapping = Union[GateWrapping, RuntimeWrapping]


def gate_wrapping(
    context: Context, shape: CallShape, module: ModuleFacts, hints: Iterable[str]
) -> Union[GateWrapping, str]:
    """Wrap with the gate that the functions in ``hints`` call (the gated paths), else the first gate of the
    part of the project ``module`` belongs to."""
    found = _gate(context, hints, module)
    if isinstance(found, str):
        return found
    gate_module, gate = found
    lazy = gate_module.module != module.module and imports_module(context, gate_module.module, module.module)
    return GateWrapping(Import(gate_module.module, gate.name), shape, lazy)


def gate_import(context: Context, hints: Iterable[str]) -> Union[Import, str]:
    """The gate to call ahead of a name-test chain: the one its gated fallback calls."""
    found = _gate(context, hints)
    return found if isinstance(found, str) else Import(found[0].module, found[1].name)


def _gate(
    context: Context, hints: Iterable[str], near: Optional[ModuleFacts] = None
) -> Union[Tuple[ModuleFacts, FunctionDef], str]:
    project = context.project
    # Keyed by where each gate is defined (comparing the facts themselves would compare whole modules).
    by_place: Dict[Tuple[str, str], Tuple[ModuleFacts, FunctionDef]] = {}
    for function in hints:
        for module, call in project.graph.calls_in(function):
            if project.gates.is_gate_callee(module, call.callee, call.function):
                resolved = project.graph.resolve(
                    module, call.callee, call.function, project.graph.class_of(module, call.function)
                )
                located = project.graph.function(resolved) if resolved else None
                if located is not None:
                    by_place.setdefault((located[0].path, located[1].qualname), located)
    for found in project.gates.gate_locations(top_level_only=True, near=near):
        by_place.setdefault((found[0].path, found[1].qualname), found)
    candidates = list(by_place.values())
    usable = [found for found in candidates if _takes_name_and_arguments(found[1])]
    if usable:
        return usable[0]
    if candidates:
        names = ", ".join(f"`{function.name}`" for _, function in candidates[:2])
        return f"the gate ({names}) is not a module-level function taking (tool name, arguments)"
    return "the project's gate is not defined in the project"


def _takes_name_and_arguments(function: FunctionDef) -> bool:
    params = [param for param in function.params if param not in ("self", "cls")]
    if "." in function.qualname or len(params) < 2:
        return False
    first, second = params[0].lower(), params[1]
    return ("name" in first or first in _NAME_PARAMS) and second in ARGS_NAMES


def runtime_wrapping(
    context: Context, module: ModuleFacts, keys: Sequence[str], line: int, shape: CallShape
) -> Union[RuntimeWrapping, str]:
    """The bundled coercer with the configured schema source, or the analyzer's schema table for ``keys``."""
    project = context.project
    schemas = _configured_schemas(context) or _found_schemas(context, module, keys)
    if schemas is None:
        return f"the project has no gate and no schema source the fix can use: {_CONFIGURE_SCHEMAS}"
    if schemas.module == module.module:
        defined = [
            schema.span.line
            for _, found in project.catalog.schemas.items()
            for owner, schema in found
            if owner.module == module.module and schema.table_key_of == schemas.name
        ]
        if defined and min(defined) > line:
            return f"the schema table `{schemas.name}` is defined after the tool table"
    elif imports_module(context, schemas.module, module.module):
        return f"`{schemas.module}` (the schema source) imports `{module.module}`: an import cycle"
    return RuntimeWrapping(schemas, shape.index)


def _configured_schemas(context: Context) -> Optional[Import]:
    configured = context.project.config.schemas
    if not configured:
        return None
    module, _, name = configured.partition(":")
    return Import(module.strip(), name.strip())


def _found_schemas(context: Context, table_module: ModuleFacts, keys: Sequence[str]) -> Optional[Import]:
    """The module-level schema table (tool name -> schema) covering most of the table's tools, one of the
    table's own part of the program first (another app's table of the same tool names is not its schemas)."""
    project = context.project
    part = project.graph.part_of(table_module)
    wanted = set(keys)
    tools: Dict[Import, Set[str]] = {}
    modules: Dict[Import, ModuleFacts] = {}
    for tool, found in project.catalog.schemas.items():
        for module, schema in found:
            if schema.table_key_of:
                source = Import(module.module, schema.table_key_of)
                tools.setdefault(source, set()).add(tool)
                modules[source] = module
    ranked = sorted(
        tools,
        key=lambda source: (
            project.graph.part_of(modules[source]) != part,
            -len(tools[source] & wanted),
            modules[source].path,
            source.name,
        ),
    )
    for source in ranked:
        if wanted and not tools[source] & wanted:
            continue
        if source.name in context.shapes(modules[source]).top_level_names:
            return source
    return None
