"""The package's layout is its pipeline: each stage imports only the stages before it, no modules import each other
in a circle, and a private module (``_name``) is imported only from its own package.

Every import statement counts, those inside functions and under ``TYPE_CHECKING`` too: a lazy import is still a
dependency, only a later one.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

import dispatchlint

PACKAGE = Path(dispatchlint.__file__).parent

#: The layers, lowest first. A module belongs to the first layer with a prefix it matches (a package prefix
#: covers its modules); it may import its own layer and the layers before it.
LAYERS: List[Tuple[str, Tuple[str, ...]]] = [
    ("runtime", ("dispatchlint.runtime",)),
    (
        "foundation",
        (
            "dispatchlint.__init__",
            "dispatchlint._lines",
            "dispatchlint._process",
            "dispatchlint.locations",
            "dispatchlint.problems",
            "dispatchlint.config",
            "dispatchlint.findings",
            "dispatchlint.framework_models",
        ),
    ),
    ("discovery", ("dispatchlint.discovery",)),
    ("indexing", ("dispatchlint.indexing",)),
    ("linking", ("dispatchlint.linking",)),
    ("rules", ("dispatchlint.rules",)),
    ("fix", ("dispatchlint.fix",)),
    ("plan", ("dispatchlint.plan",)),
    ("report", ("dispatchlint.report",)),
    ("run", ("dispatchlint.results_cache", "dispatchlint.check", "dispatchlint.engine", "dispatchlint.baseline")),
    ("api", ("dispatchlint.api",)),
    ("interfaces", ("dispatchlint.cli", "dispatchlint.server", "dispatchlint.__main__")),
]


def _module_name(path: Path) -> str:
    return ".".join(("dispatchlint",) + path.relative_to(PACKAGE).with_suffix("").parts)


MODULES: Dict[str, Path] = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _package_of(module: str) -> str:
    """The package a module's relative imports start from (a package's ``__init__`` is its own)."""
    return module[: -len(".__init__")] if module.endswith(".__init__") else module.rsplit(".", 1)[0]


def _known(name: str) -> str:
    """The module (as in :data:`MODULES`) that importing ``name`` loads: a package's ``__init__``."""
    return name if name in MODULES else f"{name}.__init__"


def imports_of(module: str) -> Iterator[str]:
    """Every module of the package that ``module`` imports: ``from p import m`` of a module ``m`` is ``p.m``."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(module).split(".")[: len(_package_of(module).split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            submodules = [f"{origin}.{alias.name}" for alias in node.names]
            names = [name for name in submodules if _known(name) in MODULES] or [origin]
        else:
            continue
        for name in names:
            if name == "dispatchlint" or name.startswith("dispatchlint."):
                yield _known(name)


GRAPH: Dict[str, Set[str]] = {module: set(imports_of(module)) - {module} for module in MODULES}


def layer_of(module: str) -> int:
    for position, (_, prefixes) in enumerate(LAYERS):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return position
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def test_every_module_belongs_to_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_no_later_stage(module: str) -> None:
    upward = sorted(imported for imported in GRAPH[module] if layer_of(imported) > layer_of(module))
    assert not upward, f"{module} ({LAYERS[layer_of(module)][0]}) imports later stages: {upward}"


def _cycles() -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for root in sorted(GRAPH):
        if root in index:
            continue
        work = [(root, iter(sorted(GRAPH[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(GRAPH[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert _cycles() == []


def test_the_circle_finder_finds_a_circle() -> None:
    """The check above can fail: two modules that import each other are one component."""
    GRAPH["dispatchlint.findings"].add("dispatchlint.problems")
    GRAPH["dispatchlint.problems"].add("dispatchlint.findings")
    try:
        assert ["dispatchlint.findings", "dispatchlint.problems"] in _cycles()
    finally:
        GRAPH["dispatchlint.findings"].discard("dispatchlint.problems")
        GRAPH["dispatchlint.problems"].discard("dispatchlint.findings")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_private_module_is_imported_only_from_its_own_package(module: str) -> None:
    strangers = sorted(
        imported
        for imported in GRAPH[module]
        if imported.rsplit(".", 1)[1].startswith("_")
        and not imported.endswith(".__init__")
        and not (_package_of(module) + ".").startswith(_package_of(imported) + ".")
    )
    assert not strangers, f"{module} imports private modules of other packages: {strangers}"


def test_the_names_of_the_modules_do_not_collide() -> None:
    """One name, one module: ``index`` and ``indexing``, or two ``_names``, send a reader to the wrong file."""
    stems: Dict[str, List[str]] = {}
    for module in MODULES:
        stem = module.rsplit(".", 1)[1].lstrip("_")
        if stem != "_init__" and stem != "init__":
            stems.setdefault(stem, []).append(module)
    assert {stem: modules for stem, modules in stems.items() if len(modules) > 1} == {}
