"""Shapes from real agent code that must stay silent (and a few that must not), as small projects."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Dict

import pytest

from conftest import FIXTURES, write_project

GATE = """
import json

SCHEMAS = {"search": {"type": "object", "properties": {"query": {"type": "string"}, "tags": {"type": "array"}}}}

def coerce_tool_args(tool_name, args):
    props = SCHEMAS.get(tool_name, {}).get("properties", {})
    return {k: json.loads(v) if props.get(k, {}).get("type") == "array" and isinstance(v, str) else v
            for k, v in args.items()}
"""

REGISTRY = """
from agent.gate import coerce_tool_args

def search(query, tags=()):
    return [query, *tags]

REGISTRY = {"search": search}

def handle_function_call(tool_name, args):
    args = coerce_tool_args(tool_name, args)
    return REGISTRY[tool_name](**args)
"""

SILENT = {
    "CLI sub-command table called with an argparse namespace named args": """
import argparse

def cmd_search(args):
    return args.item

def cmd_list(args):
    return []

COMMANDS = {"search": cmd_search, "list": cmd_list}

def dispatch(args):
    return COMMANDS[args.command](args)

def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=sorted(COMMANDS))
    return dispatch(parser.parse_args(argv))
""",
    "CLI handlers registered with set_defaults through a parser builder, one of them dispatching a table": """
import argparse

def cmd_add(args):
    return args.name

def cmd_list(args):
    return []

def mcp_command(args):
    handlers = {"add": cmd_add, "list": cmd_list, "search": cmd_add}
    handler = handlers.get(args.action)
    if handler:
        handler(args)

def cmd_mcp(args):
    mcp_command(args)

def build_parser(subparsers, *, cmd_mcp):
    parser = subparsers.add_parser("mcp")
    parser.add_argument("action")
    parser.set_defaults(func=cmd_mcp)

def main(argv=None):
    parser = argparse.ArgumentParser()
    build_parser(parser.add_subparsers(), cmd_mcp=cmd_mcp)
    args = parser.parse_args(argv)
    args.func(args)
""",
    "a tool's own _run that routes to its validating run, reached through an awaited lookup": """
class Tool:
    def __init__(self, fn, model):
        self.fn = fn
        self.model = model

    async def run(self, arguments):
        return self.fn(**self.model(**arguments).dict())

    async def _run(self, arguments, task_meta=None):
        if task_meta is not None:
            return None
        return await self.run(arguments)


class Server:
    def __init__(self):
        self._tools = {}

    async def get_tool(self, name):
        return self._tools.get(name)

    async def call_tool(self, name, arguments):
        tool = await self.get_tool(name)
        return await tool._run(arguments)
""",
    "a tool object's method reached through an inner object's public entry": """
import json

TOOLS = {}

def run_inner(tool_call):
    tool = TOOLS[tool_call.name]
    return tool.func.async_call(**json.loads(tool_call.arguments))
""",
    "model factory keyed by a name, called with **kwargs": """
def make_gpt(**kwargs):
    return ("gpt", kwargs)

MODELS = {"gpt": make_gpt}

def create_model(model_name, **kwargs):
    return MODELS[model_name](**kwargs)
""",
    "argument models instantiated from the raw arguments": """
import json

class SearchArgs:
    def __init__(self, query, tags=()):
        self.query = query

ARG_MODELS = {"search": SearchArgs}

def parse(call):
    return ARG_MODELS[call.name](**json.loads(call.arguments))
""",
    "event handlers keyed by an event name": """
import json

def on_open(event):
    return event

HANDLERS = {"open": on_open}

def receive(frame):
    message = json.loads(frame)
    return HANDLERS[message["event_name"]](message)
""",
    "provider clients keyed by provider name, given config": """
def openai_client(config):
    return config

PROVIDERS = {"openai": openai_client}

def client_for(provider_name, config):
    return PROVIDERS[provider_name](config)
""",
    "CLI sub-commands from argparse": """
import argparse

def cmd_run(ns):
    return ns

COMMANDS = {"run": cmd_run}

def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    args = parser.parse_args(argv)
    return COMMANDS[args.command](args)
""",
    "result renderers keyed by tool name, called with the result": """
def render_search(result):
    return str(result)

RENDERERS = {"search": render_search}

def show(tool_name, result):
    return RENDERERS[tool_name](result)
""",
    "tool objects dispatched through their public method": """
import json

class SearchTool:
    name = "search"
    def run(self, args):
        return args

TOOL_OBJECTS = {"search": SearchTool()}

def run(call):
    return TOOL_OBJECTS[call.name].run(json.loads(call.arguments))
""",
    "gate inline in the call": """
import json
from agent.gate import coerce_tool_args
from agent.registry import REGISTRY

def run(call):
    return REGISTRY[call.name](**coerce_tool_args(call.name, json.loads(call.arguments)))
""",
    "dispatcher only reachable through the gated entry": """
from agent.gate import coerce_tool_args
from agent.registry import REGISTRY

class Runner:
    def handle(self, tool_name, args):
        args = coerce_tool_args(tool_name, args)
        return self._dispatch(tool_name, args)

    def _dispatch(self, tool_name, args):
        return REGISTRY[tool_name](**args)
""",
    "string key: a fixed tool called on purpose": """
from agent.registry import REGISTRY

def warm_up():
    return REGISTRY["search"](query="ping")
""",
    "formatters returned by a function, fed the model's text reply": """
def as_markdown(text):
    return "> " + text

def make_formatters():
    return {"markdown": as_markdown}

class Printer:
    def __init__(self):
        self.formatters = make_formatters()

    def show(self, response, style):
        return self.formatters[style](response.choices[0].message.content)
""",
    "a regular expression on the model's text whose groups reach no table": """
import re
from agent.registry import REGISTRY

def grade(response, tool_name):
    found = re.search(r"SCORE: (\\d+)", response.choices[0].message.content)
    score = int(found.group(1)) if found else 0
    return score, REGISTRY[tool_name](query="score")
""",
    "a tool's name parsed out of the model's text, its arguments not": """
import re
from agent.registry import REGISTRY

def preview(response, defaults):
    match = re.match(r"TOOL: (\\w+)", response.choices[0].message.content)
    tool_name = match.group(1)
    return REGISTRY[tool_name](**defaults)
""",
}


@pytest.mark.parametrize("source", list(SILENT.values()), ids=list(SILENT))
def test_silent_shapes(source: str, tmp_path: Path, run_cli) -> None:
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/extra.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "ALL")
    assert [f for f in result.findings() if f["path"] == "agent/extra.py"] == []


def test_a_project_without_a_gate_is_silent_by_default(tmp_path: Path, run_cli) -> None:
    source = REGISTRY.replace("from agent.gate import coerce_tool_args\n", "").replace(
        "    args = coerce_tool_args(tool_name, args)\n", ""
    )
    files = {
        "agent/__init__.py": "",
        "agent/registry.py": source,
        "agent/loop.py": "import json\nfrom agent.registry import REGISTRY\n\n"
        "def run(call):\n    return REGISTRY[call.name](**json.loads(call.arguments))\n",
    }
    project = write_project(tmp_path, files)
    assert run_cli(project, "--format", "json").findings() == []
    opted_in = run_cli(project, "--format", "json", "--select", "DL102")
    # each raw dispatch: the wire-parsed call in loop.py, and the entry whose `args` nobody in the project feeds
    assert opted_in.locations() == {("DL102", "agent/loop.py:5"), ("DL102", "agent/registry.py:9")}


def test_branch_only_gating_does_not_guard(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.gate import coerce_tool_args
from agent.registry import REGISTRY

def run(call, strict):
    args = json.loads(call.arguments)
    if strict:
        args = coerce_tool_args(call.name, args)
    return REGISTRY[call.name](**args)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:10")}


def test_gating_in_both_branches_guards(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.gate import coerce_tool_args
from agent.registry import REGISTRY

def run(call, strict):
    if strict:
        args = coerce_tool_args(call.name, json.loads(call.arguments))
    else:
        args = coerce_tool_args(call.name, {})
    return REGISTRY[call.name](**args)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    assert run_cli(write_project(tmp_path, files), "--format", "json").findings() == []


@pytest.mark.parametrize(
    "third_arm", ["coerce_tool_args(call.name, json.loads(call.arguments))", "json.loads(call.arguments)"]
)
def test_every_arm_of_an_elif_chain_must_gate(tmp_path: Path, run_cli, third_arm: str) -> None:
    source = f"""
import json
from agent.gate import coerce_tool_args
from agent.registry import REGISTRY

def run(call, mode):
    if mode == 1:
        args = coerce_tool_args(call.name, json.loads(call.arguments))
    elif mode == 2:
        args = coerce_tool_args(call.name, {{}})
    elif mode == 3:
        args = {third_arm}
    else:
        args = coerce_tool_args(call.name, {{"query": "x"}})
    return REGISTRY[call.name](**args)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    gated = third_arm.startswith("coerce_tool_args")
    expected = set() if gated else {("DL101", "agent/loop.py:15")}
    assert run_cli(write_project(tmp_path, files), "--format", "json").locations() == expected


def test_what_an_elif_test_binds_holds_in_its_arm_and_every_later_one(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.registry import REGISTRY

def run(tool_call, mode):
    args = json.loads(tool_call.function.arguments)
    if mode == "dry":
        return None
    elif (fn := REGISTRY.get(tool_call.function.name)) is None:
        return None
    elif mode == "fast":
        return fn(**args)
    else:
        return fn(**args)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:12"), ("DL101", "agent/loop.py:14")}


def test_name_chain_whose_fallback_runs_in_an_executor_through_copied_names(tmp_path: Path, run_cli) -> None:
    """The shape of a real agent loop: the fallback hands copies of the name and arguments to a lambda."""
    source = """
import asyncio
import json
from agent.registry import handle_function_call

def todo_tool(todos=None, merge=False):
    return todos

async def run(tool_call, executor):
    tool_name = tool_call.function.name
    try:
        args = json.loads(tool_call.function.arguments)
    except json.JSONDecodeError:
        args = {}
    if tool_name == "todo":
        result = todo_tool(todos=args.get("todos"), merge=args.get("merge", False))
    elif tool_name == "memory":
        result = json.dumps({"error": "not available"})
    else:
        loop = asyncio.get_event_loop()
        _tn, _ta = tool_name, args
        result = await loop.run_in_executor(executor, lambda: handle_function_call(_tn, _ta))
    return result
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:15")}


def test_table_handed_to_a_constructor_is_followed(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.registry import REGISTRY

class Agent:
    def __init__(self, tools=None):
        self.tools = tools or {}

    def step(self, call):
        return self.tools[call.name](**json.loads(call.arguments))

class Quiet:
    def __init__(self, formatters):
        self.formatters = formatters

    def show(self, call):
        return self.formatters[call.name](**json.loads(call.arguments))

def build():
    return Agent(tools=REGISTRY), Quiet({})
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:10")}


def test_a_tool_call_written_in_the_model_text_is_a_dispatch(tmp_path: Path, run_cli) -> None:
    """The model writes ``TOOL: name key=value``; the name and the arguments come out of one match of its text
    reply, and the table is the one a function returns, kept as an attribute."""
    source = """
import re
from agent.registry import REGISTRY

def load_tools():
    return REGISTRY

class TextAgent:
    def __init__(self, client):
        self.client = client
        self.tools = load_tools()

    def step(self, messages):
        reply = self.client.chat.completions.create(model="m", messages=messages).choices[0].message.content
        match = re.search(r"TOOL: (\\w+) (\\w+)=(.*)", reply)
        if match:
            tool_name, key, value = match.group(1), match.group(2), match.group(3)
            kwargs = {}
            kwargs[key] = value.strip()
            return self.tools[tool_name](**kwargs)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/text.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/text.py:20")}
    assert result.exit_code == 1


def test_a_gate_repairs_only_its_own_part_of_a_collection_of_apps(tmp_path: Path, run_cli) -> None:
    """Each app of a collection is a part of its own: an app without a gate is ungated (DL102), not
    inconsistent with another app's gate (DL101), until it imports from that app."""
    collection = FIXTURES / "app_collection"
    default = run_cli(collection, "--format", "json")
    assert default.locations() == {("DL101", "examples/run_kit.py:18"), ("DL101", "research_agent/app.py:21")}
    project = tmp_path / "collection"
    shutil.copytree(collection, project)
    agent = project / "text_agent" / "text_agent.py"
    agent.write_text(
        agent.read_text(encoding="utf-8").replace(
            "import re\n", "import re\n\nfrom research_agent.gate import SCHEMAS\n"
        ),
        encoding="utf-8",
    )
    joined = run_cli(project, "--format", "json", "--select", "DL101,DL102")
    assert ("DL101", "text_agent/text_agent.py:38") in joined.locations()
    assert not any(code == "DL102" for code, _ in joined.locations())


def test_match_statement_on_the_tool_name_is_a_chain(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.registry import handle_function_call

def todo_tool(todos):
    return todos

def run(tool_call):
    name = tool_call.function.name
    args = json.loads(tool_call.function.arguments)
    match name:
        case "todo" | "todos":
            return todo_tool(args["todos"])
        case _:
            return handle_function_call(name, args)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:12")}


def test_walrus_lookup_is_a_dispatch(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.registry import REGISTRY

def run(tool_call):
    if (fn := REGISTRY.get(tool_call.function.name)) is not None:
        return fn(**json.loads(tool_call.function.arguments))
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:7")}


def test_registering_decorator_that_stores_a_gate_wrapper_guards_its_tools(tmp_path: Path, run_cli) -> None:
    tools = """
import functools
import json
from agent.gate import coerce_tool_args

TOOLS = {}

def _coerced(name, fn):
    @functools.wraps(fn)
    def run(args):
        return fn(coerce_tool_args(name, args))
    return run

def tool(name):
    def register(fn):
        TOOLS[name] = _coerced(name, fn)
        return fn
    return register

@tool("search")
def search(args):
    tags = args["tags"]
    if isinstance(tags, str):
        tags = json.loads(tags)
    return tags

def run(call):
    return TOOLS[call.name](json.loads(call.arguments))
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/tools.py": tools}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL201", "agent/tools.py:24")}


def test_tables_wrapped_by_the_bundled_coercer_are_guarded_and_keep_their_tools(tmp_path: Path, run_cli) -> None:
    tools = """
import json
from dispatchlint.runtime import wrap_table
from agent.gate import SCHEMAS, coerce_tool_args

def search(args):
    return json.loads(args["tags"])

_RAW = {"search": search}
TOOLS = wrap_table(_RAW, SCHEMAS)
BY_NAME = wrap_table({t: f for t, f in _RAW.items()}, SCHEMAS)

def run(call):
    return TOOLS[call.name](json.loads(call.arguments)), BY_NAME[call.name](json.loads(call.arguments))

def run_gated(name, args):
    return _RAW[name](coerce_tool_args(name, args))
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/tools.py": tools}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL201", "agent/tools.py:7")}


def test_an_if_that_prepares_arguments_and_falls_through_to_the_gated_entry_is_not_an_arm(
    tmp_path: Path, run_cli
) -> None:
    source = """
import json
from agent.registry import handle_function_call

def normalise_query(args):
    return {**args, "query": str(args.get("query", "")).strip()}

def run(tool_calls):
    results = []
    for call in tool_calls:
        name = call.function.name
        args = json.loads(call.function.arguments)
        if name == "search":
            args = normalise_query(args)
        results.append(handle_function_call(name, args))
    return results

def run_leaving(call):
    name = call.function.name
    args = json.loads(call.function.arguments)
    if name == "search":
        return normalise_query(args)
    return handle_function_call(name, args)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:21")}


def test_arguments_parsed_by_a_project_helper_are_followed_through_its_returns(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.registry import handle_function_call

def parse_tool_args(call):
    try:
        return json.loads(call["function"]["arguments"]), None
    except json.JSONDecodeError as error:
        return None, str(error)

def spawn(role, task):
    return role, task

def run(calls):
    for call in calls:
        name = call["function"]["name"]
        args, error = parse_tool_args(call)
        if error:
            continue
        if name == "spawn":
            spawn(args.get("role"), args.get("task"))
        else:
            handle_function_call(name, args)
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:20")}


def test_names_defined_through_each_other_do_not_break_the_run(tmp_path: Path, run_cli) -> None:
    files = {
        "agent/__init__.py": "",
        "agent/gate.py": GATE,
        "agent/registry.py": REGISTRY,
        "agent/a.py": "from agent.b import TOOLS as OTHER\nTOOLS = OTHER\nx = y\ny = x\n",
        "agent/b.py": "from agent.a import TOOLS as OTHER\nTOOLS = OTHER\n",
        "agent/c.py": (
            "class Loop:\n"
            "    def __init__(self):\n"
            "        self.a = self.b\n"
            "        self.b = self.a\n"
            "    def run(self, call):\n"
            "        return self.a[call.name](call.arguments)\n"
        ),
    }
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.exit_code == 0 and result.stderr == ""


def test_a_registered_tool_called_directly_with_wire_arguments_is_a_bypass(tmp_path: Path, run_cli) -> None:
    tools = """
from agent.gate import coerce_tool_args

def memory_tool(action=None, content=None):
    return action, content

class Registry:
    def __init__(self):
        self._tools = {}

    def register(self, name, schema, handler):
        self._tools[name] = handler

    def dispatch(self, name, args):
        return self._tools[name](coerce_tool_args(name, args))

registry = Registry()
registry.register(name="memory", schema={}, handler=lambda args: memory_tool(**args))
"""
    loop = """
import json
from agent.tools import memory_tool, registry

def flush(tool_calls):
    for tc in tool_calls:
        if tc.function.name == "memory":
            args = json.loads(tc.function.arguments)
            memory_tool(action=args.get("action"), content=args.get("content"))

def step(tc):
    return registry.dispatch(tc.function.name, json.loads(tc.function.arguments))

def warm_up():
    return memory_tool(action="list")
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/tools.py": tools, "agent/loop.py": loop}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:9")}


def test_one_line_bodies_are_read_like_blocks(tmp_path: Path, run_cli) -> None:
    source = """
import json
from agent.registry import REGISTRY

def run(call):
    fn = REGISTRY.get(call.function.name)
    if fn: return fn(**json.loads(call.function.arguments))
"""
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY, "agent/loop.py": source}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:7")}


def test_an_api_helper_that_reads_properties_is_not_a_gate(tmp_path: Path, run_cli) -> None:
    """Without a real gate the project is ungated: a helper that reads a request body's ``properties`` and
    rewrites it is not a gate unless it is handed the model's arguments on a tool path."""
    files = {
        "agent/__init__.py": "",
        "agent/sheets.py": (
            "def sheets_create(args):\n"
            "    body = {'properties': {'title': args.get('title')}}\n"
            "    props = body['properties']\n"
            "    props['title'] = str(props['title'])\n"
            "    return body\n\n"
            "def handle_sheet_request(request):\n"
            "    return sheets_create(request.form)\n"
        ),
        "agent/loop.py": "import json\nfrom agent.registry import REGISTRY\n\n"
        "def run(call):\n    return REGISTRY[call.name](**json.loads(call.arguments))\n",
        "agent/registry.py": REGISTRY.replace("from agent.gate import coerce_tool_args\n", "").replace(
            "    args = coerce_tool_args(tool_name, args)\n", ""
        ),
    }
    assert run_cli(write_project(tmp_path, files), "--format", "json").findings() == []


def test_a_bypass_in_a_project_without_a_gate_is_dl101_only(tmp_path: Path, run_cli) -> None:
    """Reaching past a tool's own validation is DL101, gate or not; DL102 does not report the same call."""
    files = {
        "agent/__init__.py": "",
        "agent/tools.py": (
            "import json\n\n"
            "def search(query):\n    return [query]\n\n"
            "TOOLS = {'search': search}\n\n"
            "def run(call):\n"
            "    return TOOLS[call.name].__wrapped__(**json.loads(call.arguments))\n"
        ),
    }
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "DL101,DL102")
    assert result.locations() == {("DL101", "agent/tools.py:9")}


INJECTED_DISPATCH = """
import json

def chat(response):
    for tool_call in response["tool_calls"]:
        function_name = tool_call["function"]["name"]
        function_args = json.loads(tool_call["function"]["arguments"])
        {call}
"""


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("execute_function_wrapper(function_name, **function_args)", {("DL102", "agent/chat.py:8")}),
        ("print(function_name, **function_args)", set()),  # a builtin is not a dispatcher
        ("log(function_name, function_args)", set()),  # nothing unpacked into a call: not a tool's parameters
        ("execute_function_wrapper(tool_call, **function_args)", set()),  # no tool name handed on
    ],
)
def test_a_tool_name_and_raw_arguments_handed_to_a_function_bound_at_run_time(
    tmp_path: Path, run_cli, call: str, expected: set
) -> None:
    """A function registry that injects its wrapper at run time: the call that hands it the name and the raw
    arguments is the dispatch (DL102, no gate in the project)."""
    files = {"agent/__init__.py": "", "agent/chat.py": INJECTED_DISPATCH.format(call=call)}
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "DL101,DL102")
    assert result.locations() == expected


def test_a_function_bound_at_run_time_is_not_a_bypass_of_a_project_gate(tmp_path: Path, run_cli) -> None:
    """With a gate in the project, the unseen function may well be it: DL101 says nothing."""
    files = {
        "agent/__init__.py": "",
        "agent/gate.py": GATE,
        "agent/registry.py": REGISTRY,
        "agent/chat.py": INJECTED_DISPATCH.format(call="execute_function_wrapper(function_name, **function_args)"),
    }
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "ALL")
    assert result.findings() == []


def test_a_registered_executor_called_directly_in_a_project_without_a_gate_is_dl102(tmp_path: Path, run_cli) -> None:
    files = {
        "agent/__init__.py": "",
        "agent/tools.py": (
            "import json\n\n"
            "def search(query):\n    return [query]\n\n"
            "TOOLS = {'search': search}\n"
            "SCHEMAS = [{'name': 'search', 'parameters': {'properties': {'query': {'type': 'string'}}}}]\n\n"
            "def run(call):\n"
            "    return TOOLS[call.name](**json.loads(call.arguments))\n\n"
            "def search_now(call):\n"
            "    args = json.loads(call.arguments)\n"
            "    return search(**args)\n"
        ),
    }
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "DL101,DL102")
    assert result.locations() == {("DL102", "agent/tools.py:10"), ("DL102", "agent/tools.py:14")}


def test_executors_offered_to_the_model_by_signature_have_a_schema(tmp_path: Path, run_cli) -> None:
    """``tools=[add]``: the SDK derives the schema from the signature; a table entry not offered has none."""
    files = {
        "agent/__init__.py": "",
        "agent/loop.py": (
            "import json\n\n"
            "def add(a: int, b: int) -> int:\n    return a + b\n\n"
            "def sub(a: int, b: int) -> int:\n    return a - b\n\n"
            "OFFERED = [add]\n\n"
            "def run(client, messages):\n"
            "    response = client.chat(messages=messages, tools=OFFERED)\n"
            "    table = {'add': add, 'sub': sub}\n"
            "    for call in response.message.tool_calls:\n"
            "        table[call.function.name](**json.loads(call.function.arguments))\n"
        ),
    }
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "DL401")
    assert result.locations() == {("DL401", "agent/loop.py:13")}


REGISTRY_ROUND_TRIP = """
from agent.gate import coerce_tool_args

class Tool:
    def __init__(self, fn, key):
        self.fn = fn
        self.key = key

    def run(self, arguments):
        return self.fn(**coerce_tool_args(self.key, arguments))


class {cls}({base}):
    def register_with_docket(self, docket: "Docket") -> None:
        docket.register({registered}, names=[self.key])

    async def add_to_docket(self, docket: "Docket", arguments, **options):
        return await docket.add(self.key, **options)(**arguments)
"""


@pytest.mark.parametrize(
    ("cls", "base", "registered", "expected"),
    [
        ("FunctionTool", "Tool", "self.fn", {("DL101", "agent/tools.py:18")}),
        ("FunctionTool", "Tool", "self.run", set()),  # the validating entry is what the registry runs
        ("FunctionPrompt", "object", "self.fn", set()),  # a prompt registered the same way runs no tool
    ],
)
def test_a_tool_class_that_registers_its_bare_function_with_a_registry(
    tmp_path: Path, run_cli, cls: str, base: str, registered: str, expected: set
) -> None:
    """``docket.register(self.fn)`` then ``docket.add(self.key)(**arguments)``: the registry runs the bare
    function past the validation in ``run``."""
    files = {
        "agent/__init__.py": "",
        "agent/gate.py": GATE,
        "agent/registry.py": REGISTRY,
        "agent/tools.py": REGISTRY_ROUND_TRIP.format(cls=cls, base=base, registered=registered),
    }
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "ALL")
    assert result.locations() == expected


def test_a_tool_is_judged_by_the_schema_of_its_own_app(tmp_path: Path, run_cli) -> None:
    """Two apps of one repository, each with its own gate and a tool `plan`: one declares `steps` an array (the
    hand-rolled parse is a second source of truth), the other a string (parsing it is the tool's business)."""

    def app(name: str, steps_type: str) -> Dict[str, str]:
        gate = GATE.replace('"search"', '"plan"').replace(
            '"query": {"type": "string"}, "tags": {"type": "array"}', f'"steps": {{"type": "{steps_type}"}}'
        )
        tools = f"""
import json
from {name}.gate import coerce_tool_args

def plan(steps):
    steps = json.loads(steps)
    return steps

TOOLS = {{"plan": plan}}

def handle(tool_name, args):
    return TOOLS[tool_name](**coerce_tool_args(tool_name, args))
"""
        return {f"{name}/__init__.py": "", f"{name}/gate.py": gate, f"{name}/tools.py": tools}

    project = write_project(tmp_path, {**app("app_a", "array"), **app("app_b", "string")})
    result = run_cli(project, "--format", "json")
    assert result.locations() == {("DL201", "app_a/tools.py:6")}
    [finding] = result.findings()
    assert [(r["path"], r["message"]) for r in finding["related"]] == [("app_a/gate.py", "schema of `plan`")]


SIGNATURE_REGISTRY = """
import inspect
import json
from typing import Annotated, get_origin

_TOOL_HOOKS = {}
_TOOL_DESCRIPTIONS = {}


def register_tool(func):
    params = []
    for name, param in inspect.signature(func).parameters.items():
        annotation = param.annotation
        if get_origin(annotation) != Annotated:
            raise TypeError(f"{name} must be Annotated")
        typ, (description, required) = annotation.__origin__, annotation.__metadata__
        params.append({"name": name, "type": typ.__name__, "description": description, "required": required})
    _TOOL_HOOKS[func.__name__] = func
    _TOOL_DESCRIPTIONS[func.__name__] = {"name": func.__name__, "params": params}
    return func


def dispatch_tool(tool_name, tool_params):
    return str(_TOOL_HOOKS[tool_name](**tool_params))


@register_tool
def random_number_generator(seed: Annotated[int, "the seed", True], top: Annotated[int, "the top", True]) -> int:
    return seed % top


def chat(response):
    call = response.choices[0].message.tool_calls[0]
    return dispatch_tool(call.function.name, json.loads(call.function.arguments))
"""


def test_a_tool_registered_by_a_decorator_that_builds_its_schema_from_its_signature_has_one(
    tmp_path: Path, run_cli
) -> None:
    """``@register_tool`` reads each parameter's annotation of the function it registers and describes it to the
    model: that tool's parameters are declared (no DL401, which THUDM's GLM-4 and ChatGLM3 demos drew); its raw
    dispatch is still DL102."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/tools.py": SIGNATURE_REGISTRY})
    line = SIGNATURE_REGISTRY.splitlines().index("    return str(_TOOL_HOOKS[tool_name](**tool_params))") + 1
    assert run_cli(project, "--format", "json", "--select", "ALL").locations() == {("DL102", f"agent/tools.py:{line}")}
