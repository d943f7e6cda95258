"""Fixes that never change what a program does, beyond repairing its tools' arguments: each case is a project
fixed through the real command line, and where the fix is applied the fixed code is run to show its tools receive
repaired arguments; where it would change something else, the fix is held back and the finding says why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import subprocess_env, write_project


def _python(project: Path, code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter with the project first on its path."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, env=subprocess_env(project), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


_NUMBERS = "{'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}}}"
_NO_GATE_TOOLS = (
    "import json\n\n"
    "from bot.schemas import SCHEMAS\n\n\n"
    "def add(a, b):\n    return a + b\n\n\n"
    "TOOLS = {'add': add}\n\n\n"
    "def run(name, raw):\n    return TOOLS[name](**json.loads(raw))\n"
)


def test_a_schema_module_that_imports_nothing_is_no_import_cycle(run_cli, tmp_path: Path) -> None:
    """The package's ``__init__`` imports the tools, and the schema module beside them imports nothing: loading
    the schema module runs that ``__init__`` first, but not as part of the schema module's own body."""
    files = {
        "bot/__init__.py": "from bot.tools import run\n",
        "bot/schemas.py": f"SCHEMAS = {{'add': {_NUMBERS}}}\n",
        "bot/tools.py": _NO_GATE_TOOLS.replace("from bot.schemas import SCHEMAS\n\n\n", ""),
    }
    project = write_project(tmp_path, files, {"schemas": "bot.schemas:SCHEMAS"})
    result = run_cli(project, "--select", "DL102", "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    fixed = (project / "bot" / "tools.py").read_text(encoding="utf-8")
    assert "from bot.schemas import SCHEMAS" in fixed and "TOOLS = wrap_table(_RAW_TOOLS, SCHEMAS)" in fixed
    for first in ("import bot.schemas; ", ""):  # whichever module the program loads first
        assert _python(project, first + "from bot import run; print(run('add', '{\"a\": \"2\", \"b\": \"3\"}'))") == "5"


def test_a_schema_module_that_imports_the_tools_is_an_import_cycle(run_cli, tmp_path: Path) -> None:
    files = {
        "bot/__init__.py": "",
        "bot/schemas.py": f"from bot.tools import TOOLS\n\nSCHEMAS = {{name: {_NUMBERS} for name in TOOLS}}\n",
        "bot/tools.py": _NO_GATE_TOOLS.replace("from bot.schemas import SCHEMAS\n\n\n", ""),
    }
    project = write_project(tmp_path, files, {"schemas": "bot.schemas:SCHEMAS"})
    findings = run_cli(project, "--select", "DL102", "--format", "json").findings()
    assert [f["fixable"] for f in findings] == [False]
    assert findings[0]["message"].endswith(
        "(no automatic fix: `bot.schemas` (the schema source) imports `bot.tools`: an import cycle)"
    )


def test_the_fix_says_how_many_findings_it_fixed_and_how_many_remain(run_cli, tmp_path: Path) -> None:
    tools = (
        "import json\n\n"
        "from agent.gate import coerce_tool_args\n\n\n"
        "def plan(args):\n    return args\n\n\n"
        "TOOLS = {'plan': plan}\n"
        "A = B = {'plan': plan}  # two names for one table: not fixed automatically\n\n\n"
        "def run(call):\n"
        "    name = call.function.name\n"
        "    args = json.loads(call.function.arguments)\n"
        "    TOOLS[name](args)\n"
        "    A[name](args)\n"
        "    return TOOLS[name](args)\n\n\n"
        "def run_gated(name, args):\n"
        "    return TOOLS[name](coerce_tool_args(name, args))\n"
    )
    gate = "def coerce_tool_args(tool_name, args):\n    return dict(args)\n"
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/gate.py": gate, "agent/tools.py": tools})
    assert run_cli(project).stdout.endswith("Found 3 findings.\n[*] 2 fixable with --fix.\n")
    fixed = run_cli(project, "--fix")
    assert fixed.exit_code == 1
    assert fixed.stdout.endswith("Found 3 findings (2 fixed, 1 remaining).\n")
    again = run_cli(project, "--fix")
    assert again.stdout.endswith("Found 1 finding.\n") and again.exit_code == 1
    quiet = run_cli(project, "--fix", "-q")
    assert "Found" not in quiet.stdout
