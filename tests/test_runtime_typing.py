"""The runtime's types, as a ``mypy --strict`` caller sees them: no cast needed, and none that would lie.

Each test writes a small caller module and runs ``mypy --strict`` on it (mypy is a test extra: without it these
tests skip). The callers are run too, so that what the types promise is what the functions return.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

from conftest import REPO

SCHEMA = '''
from typing import Any, Dict, Mapping, Optional

from dispatchlint.runtime import coerce_args, coerce_tool_call

SCHEMA: Dict[str, Any] = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}


def search(query: str, limit: int = 10) -> str:
    return f"{query}:{limit}"
'''

CALLER = (
    SCHEMA
    + '''

def repaired(args: Dict[str, Any]) -> Dict[str, Any]:
    return coerce_args(SCHEMA, args)


def repaired_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    return coerce_args(SCHEMA, args)


def run_parsed(args: Optional[Dict[str, Any]]) -> str:
    return search(**coerce_tool_call(SCHEMA, args))


def run_text(text: str) -> str:
    arguments = coerce_tool_call(SCHEMA, text, tool_name="search", on_repair=lambda *repair: None)
    if isinstance(arguments, str):
        return f"not arguments: {arguments}"
    return search(**arguments)


def run_bytes(data: bytes) -> str:
    arguments = coerce_tool_call(SCHEMA, data)
    return "not arguments" if isinstance(arguments, bytes) else search(**arguments)
'''
)

#: Each wrong use, one per function, with the line mypy must report.
WRONG_USES = [
    # a text that is not a JSON object comes back as that text: ** of it is a bug mypy must see
    "def run_text(text: str) -> str:\n    return search(**coerce_tool_call(SCHEMA, text))\n",
    # a mapping that is not a dict is not made one
    "def repaired(args: Mapping[str, Any]) -> Dict[str, Any]:\n    return coerce_args(SCHEMA, args)\n",
    # coerce_args takes arguments already parsed, not a text
    "def parsed(text: str) -> None:\n    arguments = coerce_args(SCHEMA, text)\n    print(arguments)\n",
]


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy_cache")


def _mypy(module: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e .[test])")
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), module.name]
    # dispatchlint is found on MYPYPATH (this checkout), whether or not it is installed.
    env = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run(command, cwd=module.parent, env=env, capture_output=True, text=True, timeout=300)


def _load(module: Path) -> Any:
    spec = importlib.util.spec_from_file_location(module.stem, module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def test_a_strict_caller_needs_no_cast_and_gets_what_the_types_say(tmp_path: Path, mypy_cache: Path) -> None:
    module = tmp_path / "caller.py"
    module.write_text(CALLER, encoding="utf-8")
    checked = _mypy(module, mypy_cache)
    assert checked.returncode == 0, checked.stdout
    assert "cast" not in CALLER and "type: ignore" not in CALLER
    caller = _load(module)
    assert caller.repaired({"limit": "5"}) == {"limit": 5}
    assert caller.run_parsed({"query": "q", "limit": "5"}) == "q:5"
    assert caller.run_parsed({"query": "q"}) == "q:10"
    assert caller.run_text('{"query": "q", "limit": "5"}') == "q:5"
    assert caller.run_text("[1, 2]") == "not arguments: [1, 2]"
    assert caller.run_bytes(b'{"query": "q", "limit": 7.0}') == "q:7"
    assert caller.run_bytes(b"{") == "not arguments"


def test_a_wrong_use_is_rejected(tmp_path: Path, mypy_cache: Path) -> None:
    module = tmp_path / "wrong.py"
    text = SCHEMA
    expected: List[int] = []
    for use in WRONG_USES:
        text += "\n\n"
        expected.append(text.count("\n") + 2)  # the function's body
        text += use
    module.write_text(text, encoding="utf-8")
    checked = _mypy(module, mypy_cache)
    reported = sorted({int(line.split(":")[1]) for line in checked.stdout.splitlines() if ": error:" in line})
    assert checked.returncode == 1 and reported == expected, checked.stdout
