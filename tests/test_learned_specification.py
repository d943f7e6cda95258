"""A project's gated path is its own specification: what it hands its gate is the model's arguments, and what the
gate's output reaches is a tool. These projects are written the way real agent code bases write them (their
own client, their own registry class, hooks between the gate and the call), not the way the analysis expects."""

from __future__ import annotations

from pathlib import Path

from conftest import write_project

TOOL = """
from typing import Any


class ToolContext:
    def __init__(self, app_state, tool_use_id=""):
        self.app_state = app_state
        self.tool_use_id = tool_use_id


class Tool:
    name = "tool"

    def get_input_schema(self) -> dict:
        return {"type": "object", "properties": {"limit": {"type": "integer"}}}

    def validate_input(self, tool_input: dict) -> bool:
        return isinstance(tool_input, dict)

    async def call(self, ctx: ToolContext, **kwargs: Any) -> str:
        return str(kwargs)


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._loaders: dict[str, Any] = {}

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def register_deferred(self, name: str, loader) -> None:
        self._loaders[name] = loader

    def get(self, name: str):
        if name in self._tools:
            return self._tools[name]
        if name in self._loaders:
            tool = self._loaders.pop(name)()
            self._tools[name] = tool
            return tool
        return None

    async def get_async(self, name: str):
        if name in self._tools:
            return self._tools[name]
        return None


class RecallTool(Tool):
    name = "recall"

    async def call(self, ctx: ToolContext, limit: int = 5) -> str:
        return "memories"[: limit + 1]


def register_all_tools(registry: ToolRegistry) -> None:
    registry.register(RecallTool())
    registry.register_deferred("plan", lambda: RecallTool())
"""

GATE = """
def coerce_tool_args(args, schema):
    props = schema.get("properties", {})
    return {k: int(v) if props.get(k, {}).get("type") == "integer" and isinstance(v, str) else v
            for k, v in args.items()}
"""

REPL = """
from agent.gate import coerce_tool_args
from agent.tool import ToolContext, ToolRegistry, register_all_tools


class HookOutput:
    tool_args = None


class Repl:
    def __init__(self, hooks):
        self.registry = ToolRegistry()
        register_all_tools(self.registry)
        self.hooks = hooks

    async def _execute_tool(self, tool_use):
        tool = self.registry.get(tool_use.name)
        if not tool:
            return None
        tool_input = coerce_tool_args(tool_use.input, tool.get_input_schema())
        hook_output = HookOutput()
        self.hooks.run("before", tool_input, hook_output)
        if hook_output.tool_args is not None:
            tool_input = hook_output.tool_args
        if not tool.validate_input(tool_input):
            return None
        return await tool.call(ToolContext(None), **tool_input)
"""

PRINT_MODE = """
from agent.tool import ToolContext, ToolRegistry, register_all_tools


async def run_print_mode(client, messages):
    registry = ToolRegistry()
    register_all_tools(registry)
    response = await client.send(messages)
    for tool_use in response.tool_uses:
        tool = registry.get(tool_use.name)
        if not tool:
            continue
        if not tool.validate_input(tool_use.input):
            continue
        result = await tool.call(ToolContext(None), **tool_use.input)
        messages.append(result)
"""

EXECUTOR = """
import json

from agent.tool import ToolContext


class ToolExecutor:
    def __init__(self, app_state):
        self.app_state = app_state
        self._tool_registry = None

    async def get_tool_registry(self):
        if self._tool_registry is None:
            from agent.tool import ToolRegistry, register_all_tools

            self._tool_registry = ToolRegistry()
            register_all_tools(self._tool_registry)
        return self._tool_registry

    async def execute_tool(self, tool_name, tool_input):
        registry = await self.get_tool_registry()
        tool = await registry.get_async(tool_name)
        if not tool:
            return None
        return await tool.call(ToolContext(self.app_state), **tool_input)

    async def execute_tool_calls(self, tool_calls):
        results = []
        for tool_call in tool_calls:
            tool_input = tool_call.get("input", {})
            if isinstance(tool_input, str):
                tool_input = json.loads(tool_input)
            results.append(await self.execute_tool(tool_call.get("name", ""), tool_input))
        return results
"""


def project(root: Path) -> Path:
    return write_project(
        root,
        {
            "agent/__init__.py": "",
            "agent/tool.py": TOOL,
            "agent/gate.py": GATE,
            "agent/repl.py": REPL,
            "agent/print_mode.py": PRINT_MODE,
            "agent/executor.py": EXECUTOR,
        },
    )


def test_every_other_way_into_the_tools_the_gate_protects_is_a_bypass(tmp_path: Path, run_cli) -> None:
    """The gated path may hand the tool a hook's rewrite instead of the repaired arguments: the tool's ``call``
    is still what the gate protects. The print mode and the executor service reach the same ``call`` with the
    model's arguments as sent (the executor through ``await registry.get_async(name)`` on a registry of a type
    only its one class with that method gives); ``validate_input`` inspects the arguments and runs nothing."""
    result = run_cli(project(tmp_path), "--format", "json")
    assert result.locations() == {("DL101", "agent/print_mode.py:15"), ("DL101", "agent/executor.py:25")}
    for finding in result.findings():
        assert finding["trace"][0]["message"].startswith("source: the model's arguments")


def test_the_gated_path_alone_is_silent(tmp_path: Path, run_cli) -> None:
    root = project(tmp_path)
    (root / "agent/print_mode.py").unlink()
    (root / "agent/executor.py").unlink()
    assert run_cli(root, "--format", "json").findings() == []


def test_a_tool_object_built_in_a_variable_and_reached_past_its_entry(tmp_path: Path, run_cli) -> None:
    """``tool = SearchTool(); tool._run(**tool_call["args"])`` skips the validation of ``BaseTool.run`` as much
    as ``SearchTool()._run(...)`` does."""
    root = write_project(
        tmp_path,
        {
            "agent/__init__.py": "",
            "agent/tools.py": """
from langchain_core.tools import BaseTool
from pydantic import BaseModel


class SearchInput(BaseModel):
    query: str
    limit: int = 5


class SearchTool(BaseTool):
    name: str = "search"
    description: str = "Search"
    args_schema: type = SearchInput

    def _run(self, query: str, limit: int = 5) -> str:
        return query * limit
""",
            "agent/nodes.py": """
from agent.tools import SearchTool


def gated_node(state):
    tools = {tool.name: tool for tool in [SearchTool()]}
    return [tools[call["name"]].invoke(call["args"]) for call in state.messages[-1].tool_calls]


def meeting_node(state):
    results = []
    for tool_call in state.messages[-1].tool_calls:
        tool = SearchTool()
        results.append(tool._run(**tool_call["args"]))
    return results
""",
        },
    )
    assert run_cli(root, "--format", "json").locations() == {("DL101", "agent/nodes.py:14")}


def test_a_callback_handed_where_the_project_hands_a_gated_callback_is_called_with_the_model_arguments(
    tmp_path: Path, run_cli
) -> None:
    """The registry's callable hands its parameter to the gated entry; the inline tools' lambda, stored in the
    same dataclass field, is called by the same (external) middleware with the same arguments: its parameter is
    the model's arguments by the project's own word, though no call of it can be followed."""
    root = write_project(
        tmp_path,
        {
            "agent/__init__.py": "",
            "agent/gate.py": """
def coerce_tool_args(tool_name, args):
    return {k: int(v) if isinstance(v, str) and v.isdigit() else v for k, v in args.items()}
""",
            "agent/registry.py": """
from agent.gate import coerce_tool_args

def recall(args):
    return args["limit"] + 1

REGISTRY = {"recall": recall}

def handle_function_call(tool_name, args):
    args = coerce_tool_args(tool_name, args)
    return REGISTRY[tool_name](args)
""",
            "agent/inline.py": """
def _todo(agent, args, ctx):
    return args["items"]

INLINE_TOOL_EXECUTORS = {"todo": _todo}
""",
            "agent/sequential.py": """
from dataclasses import dataclass
from typing import Any, Callable

from middleware import run_tool_execution_middleware

from agent import registry
from agent.inline import INLINE_TOOL_EXECUTORS


@dataclass
class _Dispatch:
    execute: Callable[[dict], Any]
    spinner: Any = None


def _resolve(agent, name, ctx):
    if name in INLINE_TOOL_EXECUTORS:
        inline_executor = INLINE_TOOL_EXECUTORS[name]
        return _Dispatch(lambda next_args: inline_executor(agent, next_args, ctx))

    def _execute(next_args):
        return registry.handle_function_call(name, next_args)

    return _Dispatch(execute=_execute)


def run_one(agent, name, ctx, tool_call):
    dispatch = _resolve(agent, name, ctx)
    return run_tool_execution_middleware(name, tool_call, dispatch.execute)
""",
        },
    )
    result = run_cli(root, "--format", "json")
    assert result.locations() == {("DL101", "agent/sequential.py:20")}
    source = result.findings()[0]["trace"][0]["message"]
    assert source.startswith("source: `next_args`") and "_Dispatch" in source and "execute" in source


def test_tools_behind_the_gated_registry_of_plugins_are_silent(tmp_path: Path, run_cli) -> None:
    """Each plugin dispatches its own handler table with the arguments ``ToolRegistry.execute_tool`` repaired;
    the plugins are held in a mapping, so nothing says which plugin ``plugin.execute_tool(...)`` runs: every
    plugin's override does. A route hands the raw arguments to ``ctx.tool_registry.execute_tool``, which is the
    registry's method by the receiver's name, not the plugins'."""
    root = write_project(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/plugin_base.py": """
class BasePlugin:
    async def execute_tool(self, tool_name, args, context):
        raise NotImplementedError
""",
            "app/plugins.py": """
from app.plugin_base import BasePlugin


class CalendarPlugin(BasePlugin):
    async def _create_event(self, args):
        return args["minutes"] + 1

    async def execute_tool(self, tool_name, args, context):
        handlers = {"create_event": self._create_event}
        handler = handlers.get(tool_name)
        return await handler(args)


class NotesPlugin(BasePlugin):
    async def _list_notes(self, args):
        return args["limit"] + 1

    async def execute_tool(self, tool_name, args, context):
        handlers = {"list_notes": self._list_notes}
        return await handlers[tool_name](args)
""",
            "app/tool_registry.py": """
def _coerce_args(args, schema):
    props = schema.get("properties", {})
    return {k: int(v) if props.get(k, {}).get("type") == "integer" and isinstance(v, str) else v
            for k, v in args.items()}


class ToolRegistry:
    def __init__(self):
        self._plugins = {}
        self._schemas = {}

    async def execute_tool(self, tool_name, args, context):
        plugin = self._plugins.get(tool_name)
        args = _coerce_args(args, self._schemas[tool_name])
        return await plugin.execute_tool(tool_name, args, context)
""",
            "app/routes.py": """
import json


async def exec_one(ctx, tool_call, context):
    args = json.loads(tool_call.function.arguments)
    return await ctx.tool_registry.execute_tool(tool_call.function.name, args, context)
""",
        },
        config={"gates": ["_coerce_args"]},
    )
    assert run_cli(root, "--format", "json", "--extend-select", "DL102").findings() == []


def test_one_class_whose_raw_entry_routes_to_validation_does_not_make_every_raw_entry_an_entry(
    tmp_path: Path, run_cli
) -> None:
    """Most tool classes implement ``_run`` as the tool itself; one adapter's ``_run`` calls its ``invoke``.
    Reaching ``tool._run(**args)`` on the tools of a table is still reaching past their validation."""
    tools = "\n\n".join(
        f"class Tool{index}(BaseTool):\n    name: str = 'tool_{index}'\n\n    def _run(self, limit: int = 1):\n"
        f"        return limit + {index}\n"
        for index in range(3)
    )
    root = write_project(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/tools.py": "from langchain_core.tools import BaseTool\n\n\n"
            + tools
            + "\n\nclass StructuredAdapter:\n    def invoke(self, arguments):\n        return arguments\n\n"
            + "    def _run(self, **arguments):\n        return self.invoke(arguments)\n\n\n"
            + "TOOLS = {tool.name: tool for tool in [Tool0(), Tool1(), Tool2()]}\n",
            "app/adapter.py": """
import json

from app.tools import TOOLS


def gated(call):
    return TOOLS[call.function.name].invoke(json.loads(call.function.arguments))


def on_invoke_tool(call):
    args_dict = json.loads(call.function.arguments)
    return TOOLS[call.function.name]._run(**args_dict)
""",
        },
    )
    assert run_cli(root, "--format", "json").locations() == {("DL101", "app/adapter.py:13")}
