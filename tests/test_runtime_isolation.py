"""The runtime is standard library only: an agent imports it without the linter's dependencies."""

from __future__ import annotations

import subprocess
import sys

import dispatchlint.runtime
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
        "coerce_args",
        "coerced",
        "sanitize_schema",
        "unrename_args",
        "wrap_table",
    ]
    assert all(hasattr(dispatchlint.runtime, name) for name in dispatchlint.runtime.__all__)
