"""--fix on shapes where one fix enables another, and chains whose fallback gets copies of the arguments."""

from __future__ import annotations

from pathlib import Path

from conftest import write_project

GATE = '''
import json

SCHEMAS = {"todo": {"type": "object", "properties": {"todos": {"type": "array"}}}}


def coerce_tool_args(tool_name, args):
    props = SCHEMAS.get(tool_name, {}).get("properties", {})
    fixed = dict(args)
    for key, spec in props.items():
        if spec.get("type") == "array" and isinstance(fixed.get(key), str):
            fixed[key] = json.loads(fixed[key])
    return fixed


def handle_function_call(tool_name, args):
    args = coerce_tool_args(tool_name, args)
    return {"tool": tool_name, "args": args}
'''

TODO = '''
import json


def todo_tool(todos=None):
    if isinstance(todos, str):
        todos = json.loads(todos)
    return list(todos or [])


TOOLS = {"todo": todo_tool}
'''

LOOP = '''
import json

from agent.gate import handle_function_call
from agent.todo import todo_tool


def run(tool_call, executor):
    tool_name = tool_call["name"]
    args = json.loads(tool_call["arguments"])
    if tool_name == "todo":
        result = todo_tool(todos=args.get("todos"))
    else:
        _tn, _ta = tool_name, args
        result = executor(lambda: handle_function_call(_tn, _ta))
    return result
'''


def test_one_fix_run_reaches_the_fixed_point(tmp_path: Path, run_cli) -> None:
    project = write_project(
        tmp_path, {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/todo.py": TODO, "agent/loop.py": LOOP}
    )
    before = run_cli(project, "--format", "json")
    assert before.locations() == {("DL101", "agent/loop.py:11"), ("DL201", "agent/todo.py:7")}

    fixed = run_cli(project, "--fix", "--format", "json")
    assert fixed.findings() == [] and fixed.exit_code == 0
    loop = (project / "agent" / "loop.py").read_text(encoding="utf-8")
    assert "    args = coerce_tool_args(tool_name, args)\n    if tool_name == \"todo\":" in loop
    assert "json.loads(todos)" not in (project / "agent" / "todo.py").read_text(encoding="utf-8")

    snapshot = {path: path.read_bytes() for path in project.rglob("*.py")}
    again = run_cli(project, "--fix", "--format", "json")
    assert again.exit_code == 0
    assert {path: path.read_bytes() for path in project.rglob("*.py")} == snapshot
