"""The runtime is standard library only: an agent imports it without the linter's dependencies."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Set

import dispatchlint.runtime
from dispatchlint.runtime import contract
from conftest import subprocess_env


def test_importing_the_runtime_imports_neither_libcst_nor_click() -> None:
    code = "import dispatchlint.runtime, sys; assert 'libcst' not in sys.modules and 'click' not in sys.modules"
    completed = subprocess.run([sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_the_public_api() -> None:
    assert sorted(dispatchlint.runtime.__all__) == [
        "ArgumentsSlotHint",
        "RepairCallback",
        "SchemaSource",
        "UNNAMED_TOOL",
        "coerce_args",
        "coerce_tool_call",
        "coerced",
        "sanitize_schema",
        "unrename_args",
        "wrap_table",
    ]
    assert all(hasattr(dispatchlint.runtime, name) for name in dispatchlint.runtime.__all__)


def test_the_contract_imports_nothing_and_names_what_exists() -> None:
    tree = ast.parse(Path(contract.__file__).read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert contract.PACKAGE == dispatchlint.runtime.__name__
    assert callable(getattr(dispatchlint.runtime, contract.WRAP_TABLE))
    assert callable(getattr(dispatchlint.runtime, contract.COERCED))
    for function in (dispatchlint.runtime.wrap_table, dispatchlint.runtime.coerced):
        assert contract.ARGS_AT in inspect.signature(function).parameters


def test_the_analyzer_reads_the_contract() -> None:
    from dispatchlint.indexing import _schemas
    from dispatchlint.indexing import syntax
    from dispatchlint.linking import RUNTIME_PACKAGE

    assert syntax.ARGS_NAMES is contract.ARGUMENT_PARAMETER_NAMES
    assert _schemas.SCHEMA_KEYS is contract.SCHEMA_ENVELOPE_KEYS
    assert RUNTIME_PACKAGE == contract.PACKAGE


#: The runtime's modules, each importing only modules before it: reading JSON and schemas, then the nodes a
#: schema compiles into, the compiler, the specialiser, the plan cache, the gate, the wrappers.
RUNTIME_LAYERS = [
    "contract",
    "_json",
    "_schema",
    "_names",
    "_budget",
    "_nodes",
    "_compiler",
    "_specialize",
    "_cache",
    "_coerce",
    "_wrap",
    "__init__",
]


def _package_imports(module: Path) -> Set[str]:
    """The modules of the runtime package that ``module`` imports (relative or absolute), anywhere in it."""
    imported: Set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                imported.add(node.module.split(".")[0])
            elif node.level == 1:
                imported.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith(f"{contract.PACKAGE}."):
                imported.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            imported.update(a.name.split(".")[2] for a in node.names if a.name.startswith(f"{contract.PACKAGE}."))
    return imported


def test_the_runtime_modules_import_one_way() -> None:
    package = Path(dispatchlint.runtime.__file__).parent
    assert sorted(path.stem for path in package.glob("*.py")) == sorted(RUNTIME_LAYERS)
    for position, name in enumerate(RUNTIME_LAYERS):
        upward = _package_imports(package / f"{name}.py") - set(RUNTIME_LAYERS[:position])
        assert not upward, f"{name} imports {sorted(upward)}, which come after it"
