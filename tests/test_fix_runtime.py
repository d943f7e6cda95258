"""The fixed code runs: import each fixed fixture project in a fresh interpreter and call every dispatch path with
what models really send (arrays as JSON strings, "42" for 42, "true" for true, one value where a list is
declared). Every tool now receives repaired arguments on every path, and the paths that were gated before (the
registry) answer exactly as before. The same probe on the unfixed project shows what the fix changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from conftest import subprocess_env
from fixproject import FixCase, copy_project, fix_cases

CASES = {case.name: case for case in fix_cases()}

_PRELUDE = '''
import asyncio, json

def probe(call):
    """The path's result, or the name of the error the tool raised on the arguments it got."""
    try:
        result = call()
        return asyncio.run(result) if asyncio.iscoroutine(result) else result
    except Exception as error:
        return {"error": type(error).__name__}

out = {}
'''

PROBES: Dict[str, str] = {
    "fix_example": '''
import pathlib
from taskbot.context import RunContext
from taskbot.loop import Agent, execute_tool
from taskbot.pool import run_tool_calls_concurrently
from taskbot.registry import handle_function_call

agent = Agent(client=None, model="m", memory=["buy milk", "buy eggs", "call mom"])
ctx = RunContext(task="t")
out["sequential_plan"] = probe(lambda: execute_tool(agent, "plan", {"steps": '["a", "b"]', "replace": "false"}, ctx))
out["sequential_recall"] = probe(lambda: execute_tool(agent, "recall", {"query": "buy", "limit": "1"}, ctx))
calls = [
    {"id": "1", "function": {"name": "plan", "arguments": json.dumps({"steps": '["x"]'})}},
    {"id": "2", "function": {"name": "recall", "arguments": json.dumps({"query": "buy", "limit": "1"})}},
]
out["concurrent"] = probe(lambda: run_tool_calls_concurrently(agent, calls, RunContext(task="t")))
pathlib.Path("note.txt").write_text("hello world", encoding="utf-8")
out["registry"] = probe(lambda: handle_function_call("read_file", {"path": "note.txt", "max_bytes": "5"}))
''',
    "fix_registered": '''
from pantry import tools
from pantry.agent import execute, run_tool_calls
from pantry.registry import TOOLS
from pantry.server import handle_call

out["decorator_table"] = probe(lambda: execute("restock", {"items": '["rice", "beans"]', "quantity": "2"}))
out["decorator_table_one_value"] = probe(lambda: execute("check", {"item": "rice", "exact": "true"}))
out["update_table"] = probe(lambda: execute("shopping_list", {"items": '["milk"]', "servings": "3"}))
out["item_assignment_table"] = probe(lambda: execute("expiring", {"days": "7", "notify": "false"}))
out["wire"] = probe(lambda: run_tool_calls([{"name": "restock", "arguments": '{"items": "salt"}'}]))
out["server_gated"] = probe(lambda: handle_call("restock", {"items": '["oats"]', "quantity": "1"}))
out["server_gated_extras"] = probe(lambda: handle_call("shopping_list", {"items": '["tea"]'}))
out["wrapper_keeps_name"] = [TOOLS["restock"].__name__, getattr(TOOLS["restock"], "__wrapped__", None) is tools.restock]
''',
    "fix_chains": '''
from scribe.agent import Notebook, invoke, run_tool_call

notebook = Notebook()
out["todo_arm"] = probe(lambda: invoke(notebook, "todo", {"todos": '["a", "b"]', "merge": "false"}))
out["note_arm"] = probe(lambda: invoke(notebook, "note", {"text": "hi", "pinned": "true", "tags": "x"}))
out["wire"] = probe(lambda: run_tool_call(notebook, {"name": "todo", "arguments": '{"todos": "c", "merge": "true"}'}))
out["registry"] = probe(lambda: invoke(notebook, "word_count", {"text": "a b c", "limit": "2"}))
''',
    "fix_async_attrs": '''
from beacon.monitor import Monitor

monitor = Monitor()
for mode, call in (("fast", monitor.call_fast), ("gated", monitor.call)):
    out[mode + "_instance_async"] = probe(lambda: call("history", {"limit": "1", "hosts": "db1"}))
    out[mode + "_class_to_thread"] = probe(lambda: call("status", {"verbose": "true"}))
    out[mode + "_module_async"] = probe(lambda: call("ping", {"hosts": '["a", "b"]', "count": "2"}))
    out[mode + "_module_async_number"] = probe(lambda: call("wait", {"seconds": "3"}))
    out[mode + "_module_sync"] = probe(lambda: call("uptime", {"since": "7200"}))
out["wire_fast"] = probe(lambda: monitor.handle({"name": "ping", "arguments": '{"hosts": "c"}'}, fast=True))
out["wrapper_keeps_name"] = Monitor.HELPERS["status"].__name__
''',
    "fix_no_gate": '''
from tinker.agent import Agent

agent = Agent()
arguments = {"query": "q", "max_results": "3", "sites": "docs"}
out["keyword_table"] = probe(lambda: agent.run_tool({"name": "search", "arguments": json.dumps(arguments)}))
plan = {"steps": '["a", "b"]'}
out["instance_table"] = probe(lambda: agent.run_tool({"name": "plan", "arguments": json.dumps(plan)}))
recall = {"query": "alpha", "exact": "true"}
out["bound_method"] = probe(lambda: agent.run_tool({"name": "recall", "arguments": json.dumps(recall)}))
''',
    "fix_contract": '''
from relay.context import Context
from relay.loop import run_tool
ctx = Context()
plan = {"name": "plan", "arguments": json.dumps({"steps": '["a", "b"]'})}
out["fn_args_plan"] = probe(lambda: run_tool(None, plan, ctx))
out["fn_args_wait"] = probe(lambda: run_tool(None, {"name": "wait", "arguments": '{"seconds": "1.5"}'}, ctx))
out["fn_args_count"] = probe(lambda: run_tool(None, {"name": "count", "arguments": '{"n": "41"}'}, ctx))
''',
    "fix_typed": '''
from ledger.agent import fast_path, handle_function_call
from ledger.tools import Book
book = Book()
transfer = {"name": "transfer", "arguments": json.dumps({"amounts": "[1, 2.5]", "dry_run": "true"})}
out["fast_path"] = probe(lambda: fast_path(book, transfer))
out["gated"] = probe(lambda: handle_function_call(book, "transfer", {"amounts": "[1]", "dry_run": "false"}))
out["booked"] = book.entries
''',
    "fix_unrename": '''
from postbox.tools import handle_function_call

out["sanitized_names"] = probe(lambda: handle_function_call("list_mail", {"_top": "5", "unread_only": "true"}))
out["plain_names"] = probe(lambda: handle_function_call("list_mail", {"folder": "sent"}))
''',
}

FIXED: Dict[str, Dict[str, Any]] = {
    "fix_example": {
        "sequential_plan": "Plan:\n1. a\n2. b",
        "sequential_recall": "buy milk",
        "concurrent": ["Plan:\n1. x", "buy milk"],
    },
    "fix_registered": {
        "decorator_table": {"items": ["rice", "beans"], "quantity": 2},
        "decorator_table_one_value": {"item": "rice", "exact": True, "found": {"rice": 2}},
        "update_table": {"items": ["milk"], "servings": 3},
        "item_assignment_table": {"days": 7, "notify": False},
        "wire": [{"items": ["salt"], "quantity": 1}],
        "server_gated_extras": {"items": ["tea"], "servings": 1},
        "wrapper_keeps_name": ["restock", True],
    },
    "fix_chains": {
        "todo_arm": {"todos": ["a", "b"], "merge": False},
        "note_arm": {"text": "hi", "pinned": True, "tags": ["x"]},
        "wire": {"todos": ["a", "b", "c"], "merge": True},
    },
    "fix_async_attrs": {
        **{
            f"{mode}_{path}": result
            for mode in ("fast", "gated")
            for path, result in {
                "instance_async": {"events": ["up"], "hosts": ["db1"]},
                "class_to_thread": {"verbose": True},
                "module_async": {"hosts": ["a", "b"], "count": 2, "sent": 4},
                "module_async_number": {"seconds": 3.0, "half": 1.5},
                "module_sync": {"since": 7200, "hours": 2},
            }.items()
        },
        "wire_fast": {"hosts": ["c"], "count": 1, "sent": 1},
        "wrapper_keeps_name": "_status",
    },
    "fix_no_gate": {
        "keyword_table": {"query": "q", "max_results": 3, "sites": ["docs"]},
        "instance_table": {"steps": ["a", "b"]},
        "bound_method": {"hits": ["alpha"], "exact": True},
    },
    "fix_contract": {
        "fn_args_plan": "a / b",
        "fn_args_wait": "waiting 3.0 half-seconds",
        "fn_args_count": "42 after 41",
    },
    "fix_typed": {"fast_path": "2 entries, 3.5 EUR", "gated": "1 entries, 1.0 EUR", "booked": [1.0]},
    "fix_unrename": {
        "sanitized_names": {"folder": "inbox", "top": 5, "unread_only": True},
        "plain_names": {"folder": "sent", "top": None, "unread_only": None},
    },
}

#: Paths that repaired arguments before the fix too: they must answer exactly as before.
UNCHANGED = {
    "fix_example": ["registry"],
    "fix_registered": ["server_gated"],
    "fix_chains": ["registry"],
    "fix_async_attrs": [f"gated_{path}" for path in ("instance_async", "class_to_thread", "module_async")],
    "fix_no_gate": [],
    "fix_contract": [],
    "fix_typed": ["gated"],
    "fix_unrename": ["plain_names"],
}


def _probe(project: Path, name: str) -> Dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PRELUDE + PROBES[name] + "\nprint(json.dumps(out))"],
        cwd=project,
        env=subprocess_env(project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_fixed_project_repairs_arguments_on_every_path(name: str, run_cli, tmp_path: Path) -> None:
    case: FixCase = CASES[name]
    raw = copy_project(case.before, tmp_path / "raw")
    fixed = copy_project(case.before, tmp_path / "fixed")
    assert run_cli(fixed, *case.args, "--fix").exit_code == 0
    before, after = _probe(raw, name), _probe(fixed, name)
    for path, expected in FIXED[name].items():
        assert after[path] == expected, path
    changed = [path for path in FIXED[name] if before[path] != after[path]]
    assert changed, "the probe shows no path the fix repaired"
    for path in UNCHANGED[name]:
        assert after[path] == before[path], path
        assert "error" not in str(after[path])
