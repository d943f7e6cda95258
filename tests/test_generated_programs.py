"""Property tests on programs hypothesmith generates from Python's grammar: alone, and injected into an agent
skeleton (a gate, a table of tools, a dispatcher that reads the table raw). Analysis and fix planning never
fail (no internal error, no exit 2), and ``--fix`` output compiles and is idempotent.

A few hundred examples in the default run; thousands behind ``-m slow``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, Iterator, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlint.cli import main

# A test extra (pip install -e '.[test]'); an interpreter without it still runs the rest of the suite.
hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith is not installed (pip install -e '.[test]')")

_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
#: Grammar-generated programs: many are syntax Python's compiler rejects (DL001), the rest a zoo of shapes.
programs = hypothesmith.from_grammar()

SKELETON: Dict[str, str] = {
    "pyproject.toml": '[project]\nname = "generated"\n',
    "agent/__init__.py": "",
    "agent/gate.py": (
        "from typing import Any, Dict\n\n\n"
        "def coerce_tool_args(name: str, args: Dict[str, Any]) -> Dict[str, Any]:\n"
        "    return dict(args)\n"
    ),
    "agent/tools.py": (
        "import json\n\n\n"
        "def _plan(args):\n"
        '    steps = args["steps"]\n'
        "    if isinstance(steps, str):\n"
        "        steps = json.loads(steps)\n"
        "    return steps\n\n\n"
        "def _recall(args):\n"
        '    return args["query"]\n\n\n'
        "{injected}\n\n\n"
        'TOOLS = {"plan": _plan, "recall": _recall}\n'
    ),
    "agent/loop.py": (
        "import json\n\n"
        "from agent.gate import coerce_tool_args\n"
        "from agent.tools import TOOLS\n\n\n"
        "def handle(name, arguments):\n"
        "    args = coerce_tool_args(name, json.loads(arguments))\n"
        "    return TOOLS[name](args)\n\n\n"
        "def fast_path(call):\n"
        "    args = json.loads(call.function.arguments)\n"
        "    return TOOLS[call.function.name](args)\n"
    ),
}


def _run(project: Path, *args: str) -> Tuple[int, str]:
    """``dispatchlint ARGS`` in ``project``, in-process; the exit code and stderr."""
    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--no-cache", *args])
    finally:
        os.chdir(previous)
    return code, err.getvalue()


@contextlib.contextmanager
def _project(files: Dict[str, str]) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="dispatchlint-generated-"))
    try:
        for relative, text in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text(text, encoding="utf-8")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _compiles(source: str) -> bool:
    try:
        compile(source, "generated", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def _check_alone(program: str) -> None:
    with _project({"pyproject.toml": SKELETON["pyproject.toml"], "generated.py": program}) as project:
        code, err = _run(project, "--select", "ALL", "--diff")
        assert code in (0, 1) and "internal error" not in err, err


def _check_in_skeleton(program: str) -> None:
    indented = program if program.strip() else "pass\n"
    files = dict(SKELETON, **{"agent/tools.py": SKELETON["agent/tools.py"].replace("{injected}", indented)})
    with _project(files) as project:
        tools = project / "agent" / "tools.py"
        accepted = _compiles(tools.read_text(encoding="utf-8"))
        code, err = _run(project, "--fix")
        assert code in (0, 1) and "internal error" not in err, err
        fixed = {path: path.read_text(encoding="utf-8") for path in project.rglob("*.py")}
        if accepted:
            for path, text in fixed.items():
                assert _compiles(text), f"the fix of {path.name} does not compile:\n{text}"
        again, err = _run(project, "--fix")
        assert again in (0, 1) and "Rewriting" not in err, err
        assert {path: path.read_text(encoding="utf-8") for path in project.rglob("*.py")} == fixed


@settings(max_examples=150, **_SETTINGS)  # type: ignore[arg-type]
@given(programs)
def test_generated_programs_never_break_analysis_or_fix_planning(program: str) -> None:
    _check_alone(program)


@settings(max_examples=60, **_SETTINGS)  # type: ignore[arg-type]
@given(programs)
def test_generated_programs_in_an_agent_skeleton_are_fixed_into_code_that_compiles_once(program: str) -> None:
    _check_in_skeleton(program)


@pytest.mark.slow
@settings(max_examples=2000, **{**_SETTINGS, "derandomize": False})  # type: ignore[arg-type]
@given(programs)
def test_many_generated_programs_never_break_analysis(program: str) -> None:
    _check_alone(program)


@pytest.mark.slow
@settings(max_examples=1000, **{**_SETTINGS, "derandomize": False})  # type: ignore[arg-type]
@given(st.one_of(programs, hypothesmith.from_node()))
def test_many_generated_programs_in_an_agent_skeleton_are_fixed_once(program: str) -> None:
    _check_in_skeleton(program)
