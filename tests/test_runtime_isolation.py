"""The runtime is standard library only: an agent imports it without the linter's dependencies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dispatchlint.runtime

REPOSITORY = Path(__file__).resolve().parents[1]


def test_importing_the_runtime_imports_neither_libcst_nor_click() -> None:
    code = "import dispatchlint.runtime, sys; assert 'libcst' not in sys.modules and 'click' not in sys.modules"
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")])),
    }
    completed = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True)
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
