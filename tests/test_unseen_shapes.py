"""Shapes of the second path that real code bases wrote and no description did: each a small project with the
bypass, beside its twin that must stay silent (the same code where the model's arguments do not get there)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from conftest import write_project
from test_precision import GATE, REGISTRY

#: A tool whose call gates, and a record of one tool call that can run itself against a list of tools by taking
#: the matching tool's bare function (what an agent framework's tool-call type did).
TOOL_CALL_RECORD = """
from agent.registry import handle_function_call


class Tool:
    def __init__(self, func, name):
        self.func = func
        self.name = name

    def __call__(self, **kwargs):
        return handle_function_call(self.name, kwargs)


class {record}:
    def __init__(self, name, args):
        self.name = name
        self.args = args

    def execute(self, functions):
        func = None
        if isinstance(functions, dict):
            func = functions.get(self.name)
        else:
            for tool in functions:
                if tool.name == self.name:
                    func = tool.func
                    break
        return func(**self.args)
"""


def _project(tmp_path: Path, extra: Dict[str, str]) -> Path:
    files = {"agent/__init__.py": "", "agent/gate.py": GATE, "agent/registry.py": REGISTRY}
    files.update(extra)
    return write_project(tmp_path, files)


def test_a_tool_calls_own_record_running_the_bare_function_of_a_scanned_tool(tmp_path: Path, run_cli) -> None:
    project = _project(tmp_path, {"agent/calls.py": TOOL_CALL_RECORD.format(record="ToolCall")})
    result = run_cli(project, "--format", "json")
    assert result.locations() == {("DL101", "agent/calls.py:28")}
    (finding,) = result.findings()
    assert finding["message"].startswith("`.func` reaches past the tool object looked up by `self.name`")
    assert finding["trace"][0]["message"].startswith("source: ")


def test_the_args_a_tool_declares_are_not_the_arguments_of_a_call(tmp_path: Path, run_cli) -> None:
    """The same code in a class that is not a record of a tool call: its ``self.args`` are its own."""
    project = _project(tmp_path, {"agent/calls.py": TOOL_CALL_RECORD.format(record="Toolbox")})
    assert run_cli(project, "--format", "json").findings() == []


OPAQUE_RESOLVER = """
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Protocol


class ToolProvider(Protocol):
    def get_tool_function(self, name: str) -> Optional[Callable[..., Any]]:
        ...


def get_provider() -> ToolProvider:
    raise NotImplementedError


def call_action(tool_name, tool_args):
    registry = get_provider()
    func = registry.get_tool_function(tool_name)
    args = {arguments}
    with ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(func, **args).result(timeout=30)
"""


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("json.loads(tool_args) if isinstance(tool_args, str) else tool_args", {("DL101", "agent/plugins.py:21")}),
        ('{"query": tool_name}', set()),  # arguments the code builds itself
    ],
    ids=["the model's arguments", "arguments built here"],
)
def test_a_tool_a_resolver_returns_from_a_registry_nobody_can_see(
    tmp_path: Path, run_cli, arguments: str, expected: set
) -> None:
    project = _project(tmp_path, {"agent/plugins.py": OPAQUE_RESOLVER.format(arguments=arguments)})
    result = run_cli(project, "--format", "json")
    assert result.locations() == expected
    for finding in result.findings():
        assert "`registry.get_tool_function(tool_name)` returns" in finding["message"]


FRAMEWORK_TOOL_ATTRIBUTE = """
from langchain_core.tools import BaseTool


class KnowledgeSearchTool(BaseTool):
    name: str = "knowledge_search"

    def _run(self, query: str, limit: int = 5):
        return [query] * limit


class Researcher:
    def __init__(self, llm):
        self.knowledge_tool = KnowledgeSearchTool()
        self.llm = llm.bind_tools([self.knowledge_tool])

    def step(self, messages):
        response = self.llm.invoke(messages)
        tool_call = response.tool_calls[0]
        return self.knowledge_tool.{entry}
"""


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ('_run(**tool_call["args"])', {("DL101", "agent/researcher.py:20")}),
        ('invoke(tool_call["args"])', set()),  # the validating entry
    ],
    ids=["past the validation", "through the validating entry"],
)
def test_a_framework_tool_held_in_an_attribute_run_past_its_validation(
    tmp_path: Path, run_cli, entry: str, expected: set
) -> None:
    """No gate of the project's own: the framework's validating entry is the one skipped."""
    files = {"agent/__init__.py": "", "agent/researcher.py": FRAMEWORK_TOOL_ATTRIBUTE.format(entry=entry)}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == expected


COMMAND_LINE_HANDLER = """
from typing import List


class PackageHandler:
    def cmd_search(self, args: List[str]) -> int:
        return len(args)

    def cmd_list(self, args: List[str]) -> int:
        return 0

    def handle(self, {parameter}) -> int:
        command = args[0]
        commands = {{"search": self.cmd_search, "list": self.cmd_list}}
        handler = commands.get(command)
        return handler(args[1:]) if handler else 2
"""


@pytest.mark.parametrize("parameter", ["args: List[str]", "args: list", "args: Sequence[str]"])
def test_a_command_line_handler_typed_as_a_list_of_words_is_not_a_tool_dispatch(
    tmp_path: Path, run_cli, parameter: str
) -> None:
    """The handler table has a key named like a tool of the gate; its ``args`` say they are a command line."""
    source = COMMAND_LINE_HANDLER.format(parameter=parameter).replace(
        "from typing import List", "from typing import List, Sequence"
    )
    project = _project(tmp_path, {"agent/cli.py": source})
    assert run_cli(project, "--format", "json", "--select", "ALL").findings() == []


SIGNATURE_GATE = """
import inspect
import json


def lookup(function_name: str, limit: int = 3):
    return [function_name] * limit


TOOLS = {"lookup": lookup}


def _cast_arguments(func, arguments):
    sig = inspect.signature(func)
    casted = {}
    for name, value in arguments.items():
        param = sig.parameters.get(name)
        if param is not None and param.annotation is int and isinstance(value, str):
            casted[name] = int(value)
        else:
            casted[name] = value
    return casted


def execute_tool(function_name, arguments):
    func = TOOLS[function_name]
    return func(**_cast_arguments(func, arguments))


def execute_tool_async(function_name, arguments):
    func = TOOLS[function_name]
    return func(**arguments)


def run(call):
    arguments = json.loads(call.function.arguments)
    if call.stream:
        return execute_tool_async(call.function.name, arguments)
    return execute_tool(call.function.name, arguments)
"""


def test_a_gate_that_repairs_against_the_tool_functions_annotations(tmp_path: Path, run_cli) -> None:
    files = {"agent/__init__.py": "", "agent/tools.py": SIGNATURE_GATE}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/tools.py:32")}
    (finding,) = result.findings()
    assert "skips `_cast_arguments`" in finding["message"]


KEYWORD_CALLBACKS = """
import json

from agent.registry import search

CALLBACKS = {{"search": search}}


def execute_callback(display_type, **kwargs):
    return CALLBACKS[display_type](**kwargs)


def show(call):
    return execute_callback({passed})
"""


@pytest.mark.parametrize(
    ("passed", "expected"),
    [
        ('"search", query=call.title, tags=[call.kind]', set()),  # a mapping the caller builds keyword by keyword
        ("call.name, **json.loads(call.arguments)", {("DL101", "agent/display.py:10")}),
    ],
    ids=["keywords the caller writes", "the model's arguments unpacked"],
)
def test_kwargs_filled_keyword_by_keyword_are_the_callers_own(
    tmp_path: Path, run_cli, passed: str, expected: set
) -> None:
    project = _project(tmp_path, {"agent/display.py": KEYWORD_CALLBACKS.format(passed=passed)})
    assert run_cli(project, "--format", "json").locations() == expected


def test_a_method_of_a_client_found_by_its_name_is_not_a_tool(tmp_path: Path, run_cli) -> None:
    """``getattr(self.db, method_name)`` resolves a database method, whatever the arguments handed to it."""
    source = """
import json


class ScheduleManager:
    def __init__(self, db):
        self.db = db

    def _call(self, method_name, *args, **kwargs):
        fn = getattr(self.db, method_name, None)
        return fn(*args, **kwargs)

    def replay(self, tool_call):
        return self._call(tool_call.function.name, **json.loads(tool_call.function.arguments))
"""
    project = _project(tmp_path, {"agent/schedule.py": source})
    assert run_cli(project, "--format", "json", "--select", "ALL").findings() == []


def test_a_command_handler_parsing_its_own_options_is_not_a_tool(tmp_path: Path, run_cli) -> None:
    """Keys that spell a tool's name (``search``) make a table a tool table only until its readers show what
    they hand it: here the words of a command line, so the handler's ``json.loads`` is no DL201."""
    source = """
import json
from typing import List


class SearchCommand:
    def _parse_args(self, args, spec):
        return {name: args[index] for index, name in enumerate(spec)}

    def cmd_search(self, args: List[str]) -> int:
        parsed = self._parse_args(args, {"query": {}, "tags": {}})
        return len(json.loads(parsed["tags"]))

    def handle(self, args: List[str]) -> int:
        commands = {"search": self.cmd_search}
        return commands[args[0]](args[1:])
"""
    project = _project(tmp_path, {"agent/cli.py": source})
    assert run_cli(project, "--format", "json", "--select", "ALL").findings() == []


#: A tool object that carries its function and its model of the arguments (a pydantic class), and the one entry
#: that builds the model from the arguments before it calls the function: the project's gate, by what it does.
TOOL_MODEL_GATE = """
from dataclasses import dataclass
from typing import Callable, Type

from pydantic import BaseModel


@dataclass
class Tool:
    name: str
    func: Callable
    args_schema: Type[BaseModel]


def execute_tool(name: str, args: dict, tools: dict):
    tool = tools.get(name)
    if not tool:
        return f"Unknown tool: {name}"
    try:
        parsed = tool.args_schema(**args)
    except Exception as error:
        return f"Invalid arguments for {name}: {error}"
    return tool.func(**parsed.model_dump())
"""

#: A ReAct agent: the tool call is written in the model's text, its input parsed from a regular expression's match.
REACT_AGENT = """
import json
import re

from agent.base import Tool, execute_tool
from agent.diagrams import DiagramArgs, create_diagram

ACTION = re.compile(r"Action: (\\w+)\\nAction Input: (.*)")


class ReActAgent:
    def __init__(self, client):
        self.client = client
        self.tools = {"create_diagram": Tool("create_diagram", create_diagram, DiagramArgs)}

    def step(self, prompt):
        output = self.client.chat(prompt)
        tool_name, tool_input = ACTION.search(output).groups()
        try:
            args = json.loads(tool_input)
        except ValueError:
            args = {"code": tool_input}
        return execute_tool(tool_name, args, self.tools)
"""

DIAGRAMS = """
from pydantic import BaseModel


class DiagramArgs(BaseModel):
    code: str
    width: int = 400


def create_diagram(code: str, width: int = 400) -> str:
    return code[:width]
"""

#: The chat window's function-calling loop, reading a table of the same functions.
CHAT_WINDOW = """
import json

from agent.diagrams import create_diagram

TOOL_FUNCS = {"create_diagram": create_diagram}


def on_tool_calls(tool_calls):
    results = []
    for call in tool_calls:
        func = TOOL_FUNCS.get(call["function"]["name"])
        if func:
            args = json.loads(call["function"]["arguments"] or "{}")
            results.append(func(**args))
    return results
"""


def test_building_the_tools_model_of_its_arguments_gates_and_a_raw_table_of_the_same_tools_bypasses_it(
    tmp_path: Path, run_cli
) -> None:
    files = {"agent/__init__.py": "", "agent/base.py": TOOL_MODEL_GATE, "agent/react.py": REACT_AGENT}
    files.update({"agent/diagrams.py": DIAGRAMS, "agent/chat.py": CHAT_WINDOW})
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/chat.py:15")}
    assert "skips `execute_tool`" in result.findings()[0]["message"]


def test_the_window_that_runs_its_tools_through_the_model_building_entry_is_silent(tmp_path: Path, run_cli) -> None:
    gated = CHAT_WINDOW.replace(
        "results.append(func(**args))", "results.append(execute_tool(call['function']['name'], args, TOOLS))"
    ).replace(
        "from agent.diagrams import create_diagram",
        "from agent.base import Tool, execute_tool\nfrom agent.diagrams import DiagramArgs, create_diagram\n\n"
        "TOOLS = {'create_diagram': Tool('create_diagram', create_diagram, DiagramArgs)}",
    )
    files = {"agent/__init__.py": "", "agent/base.py": TOOL_MODEL_GATE, "agent/react.py": REACT_AGENT}
    files.update({"agent/diagrams.py": DIAGRAMS, "agent/chat.py": gated})
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == set()


#: A gate that returns nothing: it raises on arguments that do not fit the tool's schema, so what it was handed is
#: what the tool may run with.
IN_PLACE_VALIDATOR = """
import jsonschema


def validate_schema(instance, schema):
    jsonschema.validate(instance, schema)
"""

VALIDATED_LOOP = """
import json
from concurrent.futures import ThreadPoolExecutor

from agent.schema import validate_schema

SCHEMAS = {"add": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}


def add(a, b):
    return a + b


TOOLS = {"add": add}


def run_one(tool_call):
    name = tool_call.function.name
    parsed_args = json.loads(tool_call.function.arguments)
    validate_schema(parsed_args, SCHEMAS[name])
    return TOOLS[name](**parsed_args)


def run_many(tool_calls):
    with ThreadPoolExecutor() as pool:
        futures = [
            pool.submit(TOOLS[call.function.name], **json.loads(call.function.arguments)) for call in tool_calls
        ]
    return [future.result() for future in futures]
"""


def test_a_validator_called_as_a_statement_gates_what_it_was_handed_and_the_concurrent_path_bypasses_it(
    tmp_path: Path, run_cli
) -> None:
    files = {"agent/__init__.py": "", "agent/schema.py": IN_PLACE_VALIDATOR, "agent/loop.py": VALIDATED_LOOP}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/loop.py:27")}
    assert "skips `validate_schema`" in result.findings()[0]["message"]


def test_without_the_validator_the_project_has_no_gate_and_stays_silent(tmp_path: Path, run_cli) -> None:
    loop = VALIDATED_LOOP.replace("    validate_schema(parsed_args, SCHEMAS[name])\n", "")
    files = {"agent/__init__.py": "", "agent/schema.py": IN_PLACE_VALIDATOR, "agent/loop.py": loop}
    assert run_cli(write_project(tmp_path, files), "--format", "json").locations() == set()


#: A model adapter's tool loop: the tool object found in a list by its name (read by a call, from a call's
#: result), its wire arguments validated against its schema by a validator that raises, the tool's ``run`` then
#: handed them in a closure.
VALIDATING_ADAPTER = """
import json

from {package}.schema import validate_schema


class Adapter:
    def __init__(self, tools):
        self.tools = tools

    async def _tools_for_execution(self):
        return self.tools

    async def process_tool_calls(self, ctx, tool_calls):
        results = []
        for tool_call in tool_calls:
            tool = None
            for option in await self._tools_for_execution():
                if await option.name() == tool_call.function.name:
                    tool = option
                    break
            parsed_args = json.loads(tool_call.function.arguments)
            try:
                validate_schema(parsed_args, tool.schema)
            except Exception as error:
                raise RuntimeError(f"invalid arguments: {{error}}") from error

            async def run_and_format(t=tool, c=ctx, args=parsed_args):
                return str(await t.run(c, **args))

            results.append(run_and_format())
        return results
"""

#: The same tools built from an id that a map of function names gives, run from a chat's streamed events.
CHAT_TOOLS = """
import json

from {package}.tools import tool_from_id

FUNCTION_NAME_TO_TOOL_ID = {{"add": "kiln::add"}}


async def execute_tool(tool_name, args):
    tool_id = FUNCTION_NAME_TO_TOOL_ID.get(tool_name)
    if tool_id is None:
        return "unknown tool"
    tool = tool_from_id(tool_id)
    return await tool.run(**args)


async def on_event(event):
    call = json.loads(event)
    return await execute_tool(call["toolName"], call["input"])
"""

BUILT_IN_TOOLS = """
class AddTool:
    schema = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}

    async def name(self):
        return "add"

    async def run(self, context=None, **kwargs):
        return kwargs["a"] + kwargs["b"]


def tool_from_id(tool_id):
    if tool_id == "kiln::add":
        return AddTool()
    raise ValueError(tool_id)
"""


def _validating_project(tmp_path: Path, library: str, package: str) -> Path:
    """The adapter, the schema validator and the tools in a package at ``library``, the chat beside them."""
    files = {
        f"{library}/__init__.py": "",
        f"{library}/schema.py": IN_PLACE_VALIDATOR,
        f"{library}/adapter.py": VALIDATING_ADAPTER.format(package=package),
        f"{library}/tools.py": BUILT_IN_TOOLS,
        "app/__init__.py": "",
        "app/chat.py": CHAT_TOOLS.format(package=package),
    }
    return write_project(tmp_path, files)


def test_a_tool_object_built_from_an_id_is_run_raw_where_the_project_validates_that_method_on_its_own_path(
    tmp_path: Path, run_cli
) -> None:
    result = run_cli(_validating_project(tmp_path, "kiln", "kiln"), "--format", "json")
    assert result.locations() == {("DL101", "app/chat.py:14")}
    (finding,) = result.findings()
    assert finding["message"].startswith("the model's raw arguments reach the tool `tool_from_id(tool_id)` returns")


def test_a_package_in_a_folder_of_a_monorepo_is_imported_by_its_own_name(tmp_path: Path, run_cli) -> None:
    """``libs/core/kiln`` is installed as ``kiln``: the chat's ``from kiln.tools import ...`` and the adapter's
    ``from kiln.schema import ...`` are the project's own modules, so the validator is found on its path."""
    result = run_cli(_validating_project(tmp_path, "libs/core/kiln", "kiln"), "--format", "json")
    assert result.locations() == {("DL101", "app/chat.py:14")}


def test_where_no_path_validates_the_method_the_tool_object_built_from_an_id_is_no_finding(
    tmp_path: Path, run_cli
) -> None:
    project = _validating_project(tmp_path, "kiln", "kiln")
    adapter = project / "kiln" / "adapter.py"
    adapter.write_text(adapter.read_text().replace("validate_schema(parsed_args, tool.schema)", "pass"))
    assert run_cli(project, "--format", "json").locations() == set()


#: A FastMCP server's tools (FastMCP validates each call's arguments against the function's signature), and an
#: agent beside it that finds the tool in the server's own list and calls its bare function.
FASTMCP_SERVER = """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("prices")


@mcp.tool()
def get_price(sku: str, include_tax: bool = False) -> float:
    return 1.2 if include_tax else 1.0
"""

FASTMCP_AGENT = """
from prices.server import mcp


async def act(tool_call):
    tool = next((t for t in mcp._tool_manager.list_tools() if t.name == tool_call.name), None)
    if tool is None:
        return None
    return tool.{entry}(**tool_call.arguments)
"""


def test_a_tool_found_in_the_list_a_call_returns_and_run_by_its_bare_function_bypasses_its_validation(
    tmp_path: Path, run_cli
) -> None:
    files = {"prices/__init__.py": "", "prices/server.py": FASTMCP_SERVER}
    files["prices/agent.py"] = FASTMCP_AGENT.format(entry="fn")
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "prices/agent.py:9")}
    (finding,) = result.findings()
    assert finding["message"].startswith("`.fn` reaches past the tool object looked up by `tool_call.name`")


#: An agent whose one gate converts each argument by the type its tool declares for it (JSON Schema's names),
#: before the tool's ``run_with_timing``; a ReAct agent's concurrent path awaits the tool's async twin instead.
TYPED_AGENT = """
import asyncio
import json


class Agent:
    def __init__(self, registry):
        self.tool_registry = registry

    def _convert_parameter_types(self, tool_name, param_dict):
        tool = self.tool_registry.get_tool(tool_name)
        types = {{param.name: param.type for param in tool.get_parameters()}}
        converted = {{}}
        for key, value in param_dict.items():
            kind = types.get(key, "")
            if kind in {{"integer", "int"}}:
                converted[key] = int(value)
            elif kind in {{"number", "float"}}:
                converted[key] = float(value)
            else:
                converted[key] = value
        return converted

    def _execute_tool_call(self, tool_name, arguments):
        tool = self.tool_registry.get_tool(tool_name)
        typed_arguments = self._convert_parameter_types(tool_name, arguments)
        return tool.run_with_timing(typed_arguments)

    def step(self, tool_call):
        return self._execute_tool_call(tool_call.name, json.loads(tool_call.arguments))


class ReActAgent(Agent):
    async def run_many(self, tool_calls):
        async def execute_one(tc):
            arguments = json.loads(tc.arguments)
            tool = self.tool_registry.get_tool(tc.name)
            return await tool.{entry}(arguments)

        return await asyncio.gather(*(execute_one(tc) for tc in tool_calls))
"""


def test_a_gate_converting_by_the_declared_type_names_and_a_concurrent_path_awaiting_the_tools_async_twin(
    tmp_path: Path, run_cli
) -> None:
    files = {"agent/__init__.py": "", "agent/core.py": TYPED_AGENT.format(entry="arun_with_timing")}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    assert result.locations() == {("DL101", "agent/core.py:38")}
    assert "the gate `_convert_parameter_types` never repairs them on this path" in result.findings()[0]["message"]


def test_an_awaited_method_that_is_no_twin_of_the_gated_one_is_no_finding(tmp_path: Path, run_cli) -> None:
    files = {"agent/__init__.py": "", "agent/core.py": TYPED_AGENT.format(entry="describe")}
    assert run_cli(write_project(tmp_path, files), "--format", "json").locations() == set()


def test_a_second_scan_of_the_same_list_running_the_gated_method_raw_is_reported_by_the_method(
    tmp_path: Path, run_cli
) -> None:
    """No table and no resolver stands behind the second path's tool object: the finding names the method."""
    project = _validating_project(tmp_path, "kiln", "kiln")
    adapter = project / "kiln" / "adapter.py"
    adapter.write_text(
        adapter.read_text()
        + """

    async def retry(self, ctx, tool_call):
        for option in await self._tools_for_execution():
            if await option.name() == tool_call.function.name:
                return await option.run(ctx, **json.loads(tool_call.function.arguments))
"""
    )
    result = run_cli(project, "--format", "json")
    assert ("DL101", "kiln/adapter.py:38") in result.locations()
    messages = [f["message"] for f in result.findings() if f["path"].endswith("adapter.py")]
    assert messages and messages[0].startswith("`.run(...)` of the tool object looked up by `tool_call.function.name`")


#: A tool factory that builds its argument model from a remote schema by JSON Schema's type names, handed its
#: options through ``**kwargs``; beside it, a table of tools run with the model's parsed arguments.
REMOTE_TOOLS = """
import json


class RemoteTool:
    def __init__(self, name, base_url, **options):
        self.name = name
        self.base_url = base_url
        self.options = options
        self.fields = {}

    def describe(self):
        return json.loads(self.options.get("listing", "{}"))

    @classmethod
    def from_tool_name(cls, tool_name, base_url="https://tools.example", **kwargs):
        instance = cls(tool_name, base_url, **kwargs)
        fields = {}
        for field_name, field_schema in instance.describe().get("properties", {}).items():
            json_type = field_schema.get("type", "string")
            if json_type == "integer":
                fields[field_name] = int
            elif json_type == "array":
                fields[field_name] = list
        instance.fields = fields
        return instance

    @classmethod
    def from_pack(cls, names, base_url, **kwargs):
        return [cls.from_tool_name(tool_name=name, base_url=base_url, **kwargs) for name in names]


def search(query, limit=5):
    return [query] * int(limit)


TOOLS = {"search": search}


def run(call):
    args = json.loads(call["arguments"])
    return TOOLS[call["name"]](**args)
"""


def test_a_factory_handed_its_options_through_kwargs_is_not_the_projects_gate(tmp_path: Path, run_cli) -> None:
    """What a ``**kwargs`` catch-all receives is what its caller forwards beyond the named parameters: a factory
    that builds field types from a schema is not a gate because it is forwarded ``**kwargs``, so the project has
    no gate, and its one raw table is no DL101."""
    files = {"agent/__init__.py": "", "agent/remote.py": REMOTE_TOOLS}
    assert run_cli(write_project(tmp_path, files), "--format", "json").locations() == set()


#: A helper that builds the model's schemas and the executors in one loop and returns them as a tuple, reached
#: through a function that returns its result; an executor unpacks the tuple into its own attributes (what an
#: agent framework's native tool calling did).
NATIVE_TOOLS = """
import json
{imports}


def convert_tools(tools{annotation}):
    schemas = []
    functions = {{}}
    for tool in tools:
        schemas.append({{"name": tool.{name}}})
        functions[tool.{name}] = {value}
    return schemas, functions


def setup_native_tools(tools):
    return convert_tools(tools)


class StepExecutor:
    def __init__(self, tools):
        {declared}self.schemas, self.functions = setup_native_tools(tools)

    def run_call(self, tool_call):
        args = json.loads(tool_call.function.arguments)
        return self.functions[tool_call.function.name](**args)
"""

_BARE_FUNCTIONS = {"imports": "", "annotation": "", "name": "__name__", "value": "tool"}
_FRAMEWORK_RUN = {
    "imports": "from crewai.tools import BaseTool",
    "annotation": ": list[BaseTool]",
    "name": "name",
    "value": "tool.run",
}


@pytest.mark.parametrize("declared", ["", "self.functions = {}\n        "], ids=["unpacked", "declared-then-unpacked"])
def test_a_table_unpacked_from_the_tuple_a_setup_function_returns(tmp_path: Path, run_cli, declared: str) -> None:
    """The executor's ``self.functions`` is item 1 of what ``setup_native_tools`` returns, which is what
    ``convert_tools`` returns: the bare functions it stores, run with the model's parsed arguments."""
    native = NATIVE_TOOLS.format(declared=declared, **_BARE_FUNCTIONS)
    result = run_cli(_project(tmp_path, {"agent/native.py": native}), "--format", "json")
    line = native.splitlines().index("        return self.functions[tool_call.function.name](**args)") + 1
    assert result.locations() == {("DL101", f"agent/native.py:{line}")}
    (finding,) = result.findings()
    assert finding["trace"][0]["message"].startswith("source: ")


@pytest.mark.parametrize("declared", ["", "self.functions = {}\n        "], ids=["unpacked", "declared-then-unpacked"])
def test_a_table_of_framework_tools_validating_entries_unpacked_from_a_tuple(
    tmp_path: Path, run_cli, declared: str
) -> None:
    """The twin: the helper stores ``tool.run`` of ``tool: BaseTool``, CrewAI's entry that validates the arguments
    against the tool's ``args_schema``, so the table's readers hand the model's arguments to a validating entry."""
    native = NATIVE_TOOLS.format(declared=declared, **_FRAMEWORK_RUN)
    assert run_cli(_project(tmp_path, {"agent/native.py": native}), "--format", "json").locations() == set()


#: A project with no gate: its MCP connections are a table of FastMCP clients keyed by server name, and its own
#: tools a table run with the model's parsed arguments.
MCP_CLIENTS_BESIDE_RAW_TOOLS = """
import json

from fastmcp import Client


def get_process_output(pid: int):
    return {"pid": pid}


class Manager:
    def __init__(self):
        self.clients = {}
        self.handlers = {"get_process_output": get_process_output}

    async def connect(self, server_name, transport):
        client = Client(transport)
        self.clients[server_name] = client

    def execute_tool(self, tool_call):
        arguments = json.loads(tool_call.function.arguments)
        return self.handlers[tool_call.function.name](**arguments)
"""


def test_a_table_of_a_frameworks_clients_is_no_table_of_validating_tools(tmp_path: Path, run_cli) -> None:
    """``fastmcp.Client(transport)`` is a connection, not a tool that validates its arguments: the project has
    no gate, so its raw table is DL102 (opt-in), not a bypass of a gate (DL101)."""
    files = {"agent/__init__.py": "", "agent/manager.py": MCP_CLIENTS_BESIDE_RAW_TOOLS}
    project = write_project(tmp_path, files)
    assert run_cli(project, "--format", "json").locations() == set()
    line = MCP_CLIENTS_BESIDE_RAW_TOOLS.splitlines().index(
        "        return self.handlers[tool_call.function.name](**arguments)"
    )
    found = run_cli(project, "--format", "json", "--select", "ALL").locations()
    assert ("DL102", f"agent/manager.py:{line + 1}") in found
    assert not any(code == "DL101" for code, _ in found)


#: LangChain tools made from argument models with ``tool(...)`` and run through their validating ``ainvoke``,
#: beside a graph state class of the same framework that is no tool.
LANGCHAIN_TOOLS_BY_NAME = """
from langchain_core.tools import tool
from langgraph.graph import MessagesState
from pydantic import BaseModel


class Section(BaseModel):
    name: str


class State(MessagesState):
    pass


async def supervisor(state: State):
    tools_by_name = {t.name: t for t in [tool(Section)]}
    for tool_call in state["messages"][-1].tool_calls:
        selected = tools_by_name[tool_call["name"]]
        await selected.ainvoke(tool_call["args"])
"""


def test_tools_a_framework_makes_validate_their_arguments_even_where_no_class_derives_from_it(
    tmp_path: Path, run_cli
) -> None:
    """``tool(Section)`` makes a LangChain tool, whose ``ainvoke`` validates: no DL102, with no project tool class
    to show it (the graph state class deriving from the framework's is no tool)."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/graph.py": LANGCHAIN_TOOLS_BY_NAME})
    assert run_cli(project, "--format", "json", "--select", "ALL").locations() == set()


#: A project's own tool record with no validating entry: its stored function is the tool's only way in. Its
#: provider builds the tool declarations it sends with a validator, from the tools' definitions.
OWN_TOOL_RECORDS = """
from dataclasses import dataclass
from typing import Any, Callable

from google.genai.types import Tool as GoogleTool


@dataclass
class Tool:
    name: str
    func: Callable[..., Any]
    definition: dict


class BuiltIn:
    name: str


class Provider:
    def chat_perform(self, turns, tools, kwargs=None):
        return self._chat_perform_args(turns, tools, kwargs)

    def _chat_perform_args(self, turns, tools, kwargs=None):
        declared = [GoogleTool.model_validate(tool.definition) for tool in tools.values()]
        return {"contents": turns, "tools": declared, **(kwargs or {})}


class Chat:
    def __init__(self, provider):
        self.provider = provider
        self._tools: dict[str, Tool | BuiltIn] = {}
        self.records: list[Tool] = []

    def submit(self, turns, kwargs=None):
        return self.provider.chat_perform(turns, self._tools, kwargs)

    def invoke_tool(self, request):
        tool = self._tools.get(request.name)
        return tool.func(**request.arguments)

    def invoke_record(self, request):
        tool = next(tool for tool in self.records if tool.name == request.name)
        return tool.func(**request.arguments)
"""


def test_the_function_a_projects_own_tool_record_holds_is_the_tool_not_a_way_past_its_validation(
    tmp_path: Path, run_cli
) -> None:
    """``tool.func(**request.arguments)`` of a record declared ``dict[str, Tool | BuiltIn]`` (or ``list[Tool]``)
    whose class validates nothing: with no gate in the project (a validator of the tools' declarations is none),
    that is an ungated tool (DL102, opt-in), not a reach past a validation (DL101)."""
    relay = (
        "from mcp import ClientSession\nfrom mcp.types import Tool as McpTool\n\n\n"
        "async def relay(session: ClientSession, mcp_tool: McpTool, name, arguments):\n"
        "    mcp_tool.annotations.model_dump()\n"
        "    return await session.call_tool(name, arguments)\n"
    )
    files = {"agent/__init__.py": "", "agent/chat.py": OWN_TOOL_RECORDS, "agent/relay.py": relay}
    project = write_project(tmp_path, files)  # an MCP client's calls make no tools that validate
    assert run_cli(project, "--format", "json").locations() == set()
    lines = OWN_TOOL_RECORDS.splitlines()
    calls = [number + 1 for number, line in enumerate(lines) if line.endswith("tool.func(**request.arguments)")]
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == {("DL102", f"agent/chat.py:{line}") for line in calls}
    for finding in result.findings():
        assert "`.func(...)` runs it" in finding["message"]
        assert finding["trace"][0]["message"].startswith("source: ")


def test_beside_a_gate_the_function_a_tool_record_holds_run_raw_is_a_bypass_of_that_gate(
    tmp_path: Path, run_cli
) -> None:
    project = _project(tmp_path, {"agent/chat.py": OWN_TOOL_RECORDS})
    lines = OWN_TOOL_RECORDS.splitlines()
    calls = [number + 1 for number, line in enumerate(lines) if line.endswith("tool.func(**request.arguments)")]
    result = run_cli(project, "--format", "json")
    assert result.locations() == {("DL101", f"agent/chat.py:{line}") for line in calls}
    for finding in result.findings():
        assert "hands them to the function it holds unvalidated, while the project repairs" in finding["message"]


#: Provider wrappers handed their options through ``**kwargs``: one builds its SDK's tool declarations from the
#: schemas among them (reading ``properties``, rewriting into a new shape); every one runs the tools raw.
PROVIDER_OPTIONS = """
import json

from google.genai import types


def read_file(path):
    return open(path).read()


FUNCTIONS = {"read_file": read_file}


class GeminiModel:
    def _create_tools(self, functions):
        declarations = []
        for spec in functions:
            params = spec.get("parameters", {})
            declared = params.get("properties", {})
            properties = {key: types.Schema(type=prop.get("type")) for key, prop in declared.items()}
            declarations.append(types.FunctionDeclaration(name=spec["name"], parameters=properties))
        return [types.Tool(function_declarations=declarations)]

    def query(self, chat_history, **kwargs):
        tools = self._create_tools(kwargs.get("functions", []))
        response = self.client.generate(chat_history, config=types.GenerateContentConfig(tools=tools))
        for call in response.function_calls:
            return FUNCTIONS[call.name](**json.loads(call.arguments))
"""


def test_a_provider_building_tool_declarations_from_an_option_it_was_passed_on_is_no_gate(
    tmp_path: Path, run_cli
) -> None:
    """``_create_tools(kwargs.get("functions"))`` repairs nothing the model sent: a piece of the caller's
    ``**kwargs`` catch-all handed to a parameter not named for arguments is an option. The project has no gate:
    its raw table is DL102 (opt-in), not a bypass (DL101)."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/gemini.py": PROVIDER_OPTIONS})
    assert run_cli(project, "--format", "json").locations() == set()
    line = PROVIDER_OPTIONS.splitlines().index("            return FUNCTIONS[call.name](**json.loads(call.arguments))")
    found = run_cli(project, "--format", "json", "--select", "ALL").locations()
    assert ("DL102", f"agent/gemini.py:{line + 1}") in found
    assert not any(code == "DL101" for code, _ in found)


#: Tool objects in a list built from a class (a literal of instances, or a comprehension), found by resolvers
#: that scan it by name in a loop: one returns the object, the other the method that runs it.
SCANNED_TOOL_OBJECTS = """
import json


class Function:
    def __init__(self, name):
        self.name = name

    def execute(self, path: str, limit: int = 10):
        return open(path).read()[:limit]


functions = {objects}


def get_function(name):
    for function in functions:
        if function.name == name:
            return function.execute
    raise ValueError(name)


def get_tool(name):
    for function in functions:
        if function.name == name:
            return function
    raise ValueError(name)


def handle(name, arguments):
    return get_function(name)(**json.loads(arguments))


def handle_object(name, arguments):
    return get_tool(name).execute(**json.loads(arguments))
"""


@pytest.mark.parametrize(
    "objects",
    ['[Function("read_file"), Function("list_dir")]', '[Function(name) for name in ("read_file", "list_dir")]'],
    ids=["literal", "comprehension"],
)
def test_tool_objects_a_resolver_finds_by_scanning_a_list_run_raw(tmp_path: Path, run_cli, objects: str) -> None:
    """``get_function(name)(**args)`` where ``get_function`` returns ``function.execute`` of the match of a loop
    over a list of ``Function`` objects, and ``get_tool(name).execute(**args)``: with no gate, DL102 (opt-in) at
    both, each naming the method that runs the tool."""
    source = SCANNED_TOOL_OBJECTS.format(objects=objects)
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/tools.py": source})
    lines = source.splitlines()
    calls = [n + 1 for n, line in enumerate(lines) if line.endswith("(**json.loads(arguments))")]
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == {("DL102", f"agent/tools.py:{line}") for line in calls}
    assert all("`functions[name].execute(...)` runs in" in finding["message"] for finding in result.findings())


def test_beside_a_gate_a_scanned_tool_objects_method_run_raw_is_a_bypass(tmp_path: Path, run_cli) -> None:
    source = SCANNED_TOOL_OBJECTS.format(objects='[Function("read_file")]') + (
        "\n\ndef handle_gated(name, arguments):\n"
        "    return get_tool(name).execute(**coerce_tool_args(name, json.loads(arguments)))\n"
    )
    source = source.replace("import json\n", "import json\n\nfrom agent.gate import coerce_tool_args\n", 1)
    project = _project(tmp_path, {"agent/tools.py": source})
    lines = source.splitlines()
    calls = [n + 1 for n, line in enumerate(lines) if line.endswith("(**json.loads(arguments))")]
    assert run_cli(project, "--format", "json").locations() == {("DL101", f"agent/tools.py:{line}") for line in calls}


#: A voice agent: its cascading pipeline picks the tool by a scan of the agent's tools (handed in, no table to
#: see) and filters the arguments through its gate; a realtime plugin scans the same tools and runs them raw.
VOICE_PIPELINE = """
def get_tool_info(tool):
    return tool.info


def is_function_tool(tool):
    return callable(tool)


class ContentGeneration:
    def __init__(self, agent):
        self.agent = agent

    @staticmethod
    def _safe_tool_kwargs(tool, arguments):
        declared = get_tool_info(tool).parameters_schema.get("properties", {})
        return {key: coerce(value, declared[key]) for key, value in arguments.items() if key in declared}

    async def on_function_call(self, func_call):
        tool = next(
            (t for t in self.agent.tools if is_function_tool(t) and get_tool_info(t).name == func_call["name"]),
            None,
        )
        if tool:
            return await tool(**self._safe_tool_kwargs(tool, func_call["arguments"]))
"""

REALTIME_PLUGIN = """
import json

from agent.pipeline import get_tool_info


class Realtime:
    def __init__(self, tools):
        self._tools = tools

    async def on_item_done(self, data):
        item = data.get("item", {})
        name = item.get("name")
        arguments = json.loads(item.get("arguments", "{}"))
        for tool in self._tools:
            tool_info = get_tool_info(tool)
            if tool_info.name == name:
                return await tool(**arguments)
"""


def test_tools_scanned_for_by_what_describes_them_beside_a_gated_scan_of_the_same_tools(
    tmp_path: Path, run_cli
) -> None:
    """``get_tool_info(t).name == func_call["name"]`` in a conjunction, and ``tool_info = get_tool_info(tool)``
    then ``tool_info.name == name``: scans of tools no table shows. The gated one makes the project's gate; the
    realtime plugin's raw one bypasses it (DL101)."""
    files = {"agent/__init__.py": "", "agent/pipeline.py": VOICE_PIPELINE, "agent/realtime.py": REALTIME_PLUGIN}
    result = run_cli(write_project(tmp_path, files), "--format", "json")
    line = REALTIME_PLUGIN.splitlines().index("                return await tool(**arguments)") + 1
    assert result.locations() == {("DL101", f"agent/realtime.py:{line}")}
    (finding,) = result.findings()
    assert finding["message"].startswith("the model's raw arguments reach the tool named `name`, run in")
    assert "`_safe_tool_kwargs`" in finding["message"]


def test_a_scanned_tool_run_raw_where_no_gate_is_ungated(tmp_path: Path, run_cli) -> None:
    plugin = REALTIME_PLUGIN.replace("from agent.pipeline import get_tool_info", "from agent.info import get_tool_info")
    files = {"agent/__init__.py": "", "agent/info.py": "def get_tool_info(tool):\n    return tool.info\n"}
    project = write_project(tmp_path, {**files, "agent/realtime.py": plugin})
    assert run_cli(project, "--format", "json").locations() == set()
    line = plugin.splitlines().index("                return await tool(**arguments)") + 1
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == {("DL102", f"agent/realtime.py:{line}")}
    assert result.findings()[0]["message"].startswith("the model's raw arguments reach the tool named `name`, run in")


#: A legacy agent loop: core tools imported by name from a module, run raw, beside sandbox tools run through
#: the gate.
IMPORTED_BY_NAME = """
import importlib
import json

from agent.gate import coerce_tool_args

CORE_TOOL_MODULE_NAME = "agent.core_tools"


def get_function_from_module(module_name, function_name):
    return getattr(importlib.import_module(module_name), function_name)


class Agent:
    def step(self, function_call, sandboxed):
        function_name = function_call.name
        function_args = json.loads(function_call.arguments)
        if sandboxed:
            return handle_function_call(function_name, coerce_tool_args(function_name, function_args))
        callable_func = get_function_from_module(CORE_TOOL_MODULE_NAME, function_name)
        return callable_func(**function_args)
"""


def test_a_tool_a_function_imports_by_name_run_raw_beside_the_gate(tmp_path: Path, run_cli) -> None:
    """``get_function_from_module(CORE_TOOL_MODULE_NAME, function_name)``: the constant says where to look, the
    tool's name what to take; what it returns runs with the model's raw arguments (DL101)."""
    project = _project(
        tmp_path,
        {
            "agent/loop.py": IMPORTED_BY_NAME.replace(
                "import json\n", "import json\n\nfrom agent.registry import handle_function_call\n", 1
            )
        },
    )
    result = run_cli(project, "--format", "json")
    source = (project / "agent" / "loop.py").read_text(encoding="utf-8").splitlines()
    line = source.index("        return callable_func(**function_args)") + 1
    assert result.locations() == {("DL101", f"agent/loop.py:{line}")}
    assert "`get_function_from_module(function_name)` returns" in result.findings()[0]["message"]


#: Tools registered with FastMCP through a server handed in (``mcp_server: FastMCP``) or made at module level
#: (``mcp = FastMCP("files")``), and a batch tool that runs the same tool objects with the model's inputs.
FASTMCP_REGISTERED = """
import asyncio

from fastmcp import FastMCP

{server}


class BaseTool:
    name = ""

    async def call(self, ctx, **params):
        raise NotImplementedError


class ReadTool(BaseTool):
    name = "read"

    async def call(self, ctx, path: str, limit: int = 10):
        return open(path).read()[:limit]

    def register(self, mcp_server{annotation}):
        tool_self = self

        @{decorator}(name=self.name)
        async def read(ctx, path: str, limit: int = 10):
            return await tool_self.call(ctx, path=path, limit=limit)


class BatchTool(BaseTool):
    def __init__(self, tools: dict[str, BaseTool]):
        self.tools = tools

    async def call(self, ctx, invocations):
        tasks = []
        for invocation in invocations:
            tool_name, tool_input = invocation.get("tool_name"), invocation.get("input")
            tool = self.tools[tool_name]

            async def execute_tool(tool_obj: BaseTool, tool_input: dict):
                return await tool_obj.call(ctx, **tool_input)

            tasks.append(asyncio.create_task(execute_tool(tool, tool_input)))
        return await asyncio.gather(*tasks)


TOOLS = {{"read": ReadTool()}}
BATCH = BatchTool(TOOLS)
"""


@pytest.mark.parametrize(
    "shape",
    [
        {"server": "", "annotation": ": FastMCP", "decorator": "mcp_server.tool"},
        {"server": 'mcp = FastMCP("files")', "annotation": "", "decorator": "mcp.tool"},
    ],
    ids=["server-handed-in", "module-server"],
)
def test_tools_a_fastmcp_server_registers_validate_their_arguments(tmp_path: Path, run_cli, shape: dict) -> None:
    """``@mcp_server.tool(...)`` of ``mcp_server: FastMCP``, and ``@mcp.tool(...)`` of ``mcp = FastMCP(...)``,
    make FastMCP tools, which validate: the batch tool running the same objects is no ungated code (DL102)."""
    source = FASTMCP_REGISTERED.format(**shape)
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/tools.py": source})
    found = run_cli(project, "--format", "json", "--select", "ALL").locations()
    assert not any(code == "DL102" for code, _ in found), found


def test_a_tool_object_handed_to_a_closure_that_runs_its_method_raw_is_a_site(tmp_path: Path, run_cli) -> None:
    """``execute_tool(tool, tool_input)`` then ``tool_obj.call(ctx, **tool_input)``: the callers of the closure say
    where the tool object was looked up; with no framework registering the tools, that is ungated (DL102)."""
    source = FASTMCP_REGISTERED.format(server="", annotation="", decorator="register_somewhere")
    source = source.replace("from fastmcp import FastMCP\n", "")
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/tools.py": source})
    line = source.splitlines().index("                return await tool_obj.call(ctx, **tool_input)") + 1
    found = run_cli(project, "--format", "json", "--select", "ALL").locations()
    assert ("DL102", f"agent/tools.py:{line}") in found


#: A table of tools run from a configuration's spec (its ``args`` are what the configuration says), from a tool
#: call record (a model's), and through the gate.
SPEC_AND_CALL = """
from typing import Any, NamedTuple

from agent.gate import coerce_tool_args


class NamedSpec(NamedTuple):
    name: str
    args: dict


class ToolCall(NamedTuple):
    name: str
    args: dict


def search(query, limit=5):
    return [query] * limit


TOOLS = {"search": search}


def run_spec(spec: NamedSpec):
    return TOOLS[spec.name](**spec.args)


def run_call(call: ToolCall):
    return TOOLS[call.name](**call.args)


def run_gated(call: ToolCall):
    return TOOLS[call.name](**coerce_tool_args(call.name, call.args))


def run_any(call: Any):
    return TOOLS[call.name](**call.args)
"""


def test_the_args_of_a_name_declared_a_class_that_carries_no_call_are_no_tool_calls(tmp_path: Path, run_cli) -> None:
    """``spec.args`` of ``spec: NamedSpec`` is a configuration's; ``call.args`` of ``call: ToolCall`` a model's."""
    project = _project(tmp_path, {"agent/spec.py": SPEC_AND_CALL})
    lines = [
        n + 1 for n, line in enumerate(SPEC_AND_CALL.splitlines()) if line == "    return TOOLS[call.name](**call.args)"
    ]
    assert len(lines) == 2  # call: ToolCall, and call: Any, which says nothing of what it holds
    assert run_cli(project, "--format", "json").locations() == {("DL101", f"agent/spec.py:{line}") for line in lines}


#: Plugin functions registered as records of a class no annotation names, run by their stored function.
PLUGIN_RECORDS = """
import json

from agent.records import make_item

FUNCTIONS = {}


def register(name, func):
    FUNCTIONS[name] = make_item(name, func)


class Executor:
    def execute(self, call):
        item = FUNCTIONS.get(call.function.name)
        return item.func(**json.loads(call.function.arguments))
"""


def test_the_stored_function_of_a_record_where_no_tool_object_validates_is_the_tool(tmp_path: Path, run_cli) -> None:
    """``item.func(**args)`` of a record whose class nothing declares, in a program that makes or derives from no
    framework's tools: there is no validating entry to reach past, so no gate means DL102 (opt-in), not DL101."""
    records = "class Item:\n    def __init__(self, name, func):\n        self.name, self.func = name, func\n\n\n"
    records += "def make_item(name, func):\n    return Item(name, func)\n"
    files = {"agent/__init__.py": "", "agent/records.py": records, "agent/plugins.py": PLUGIN_RECORDS}
    project = write_project(tmp_path, files)
    assert run_cli(project, "--format", "json").locations() == set()
    line = PLUGIN_RECORDS.splitlines().index("        return item.func(**json.loads(call.function.arguments))") + 1
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert ("DL102", f"agent/plugins.py:{line}") in result.locations()
    assert not any(code == "DL101" for code, _ in result.locations())


def test_a_framework_server_script_validates_its_own_tools_not_those_of_the_scripts_beside_it(
    tmp_path: Path, run_cli
) -> None:
    """A folder of example scripts: one serves tools with FastMCP (they validate), another runs its own table
    raw. The server's tools say nothing of the other script's: its raw table is still DL102."""
    server = 'from mcp.server.fastmcp import FastMCP\n\napp = FastMCP("search")\n\n\n'
    server += "@app.tool()\ndef search(q: str):\n    return q\n"
    raw = (
        "def add(a: int, b: int):\n    return a + b\n\n\nTOOLS = {'add': add}\n\n\n"
        "def run(response):\n"
        "    for tool in response.message.tool_calls:\n"
        "        TOOLS[tool.function.name](**tool.function.arguments)\n"
    )
    project = write_project(tmp_path, {"examples/server.py": server, "examples/tools.py": raw})
    assert ("DL102", "examples/tools.py:10") in run_cli(project, "--format", "json", "--select", "ALL").locations()


#: A tool class of the project's own whose methods run the callable each object holds with a tool call's
#: arguments: directly, through an alias, through ``typing.cast`` (which is its operand at run time), and as a
#: dataclass field; and an agent whose own method (not a callable it holds) takes a tool call's name and arguments.
OWN_CALLABLE = """
import json
from dataclasses import dataclass
from typing import Any, Callable, cast


class Tool:
    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn = fn
        self.name = name

    def call(self, tool_call) -> Any:
        return self.fn(**json.loads(tool_call.args))

    def call_aliased(self, tool_call) -> Any:
        fn = self.fn
        return fn(**json.loads(tool_call.args))

    def call_cast(self, tool_call) -> Any:
        kwargs_callable = cast(Callable[..., Any], self.fn)
        kwargs = json.loads(tool_call.args)
        return kwargs_callable(**kwargs)

    def call_validated(self, tool_call, model) -> Any:
        return self.fn(**model.model_validate_json(tool_call.args).model_dump())

    def run_with(self, **kwargs) -> Any:
        return self.fn(**kwargs)


def add(a: int, b: int) -> int:
    return a + b


def demo() -> Any:
    return Tool(add, "add").run_with(a=1, b=2)


@dataclass
class FieldTool:
    name: str
    func: Callable[..., Any]

    def invoke(self, tool_call) -> Any:
        return self.func(**json.loads(tool_call.args))


class ToolCall:
    def __init__(self, function: Any, arguments: dict) -> None:
        self.function = function
        self.arguments = arguments

    def execute(self) -> Any:
        return self.function.entrypoint(**self.arguments)


class Prompt:
    def __init__(self, fn: Callable[..., str]) -> None:
        self.fn = fn

    def render(self, request) -> str:
        return self.fn(**json.loads(request.args))


class Agent:
    def _run(self, name: str, args: dict) -> Any:
        return {"name": name, **args}

    def ask(self, tool_call) -> Any:
        return self._run(tool_call.name, json.loads(tool_call.args))
"""


def test_a_tool_class_running_the_callable_its_object_holds_with_a_tool_calls_arguments_is_ungated(
    tmp_path: Path, run_cli
) -> None:
    """``self.fn(**json.loads(tool_call.args))`` in the project's own tool class, however the callable is named
    on the way (an alias, ``cast``, a dataclass field): its only way in, with the model's arguments, and no gate
    (DL102). The method that validates first, the one only the project calls with its own values, a tool call
    running the entry of the function it holds (that object's own, which may validate), a prompt that
    renders its function with a client's arguments (not a tool), and the agent's own ``self._run(name, args)``
    (a method, not a held callable) stay silent."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/tools.py": OWN_CALLABLE})
    lines = OWN_CALLABLE.splitlines()
    expected = {
        ("DL102", f"agent/tools.py:{lines.index(text) + 1}")
        for text in (
            "        return self.fn(**json.loads(tool_call.args))",
            "        return fn(**json.loads(tool_call.args))",
            "        return kwargs_callable(**kwargs)",
            "        return self.func(**json.loads(tool_call.args))",
        )
    }
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == expected
    messages = {finding["message"] for finding in result.findings()}
    assert (
        "the model's raw arguments reach the function the `Tool` object holds: `self.fn(...)` runs it in "
        "`Tool.call`, and the project has no gate" in "\n".join(messages)
    )
    assert all(finding["trace"][0]["message"].startswith("source: ") for finding in result.findings())
    assert run_cli(project, "--format", "json").locations() == set()  # DL102 is opt-in


#: A tool class whose entry runs its stored callable with what it is handed, and a tool of it.
FUNCTION_TOOL = """
class FunctionTool:
    def __init__(self, fn, name):
        self.fn = fn
        self.name = name

    def run(self, arguments: dict):
        return self.fn(**arguments)


def lookup(query, limit=5):
    return [query] * limit
"""

#: An agent loop that hands such a tool the model's arguments for some tools while the others go through the gate.
OWN_CALLABLE_BESIDE_GATE = (
    """
import json

from agent.registry import handle_function_call

"""
    + FUNCTION_TOOL
    + """

OBJECTS = {"lookup": FunctionTool(lookup, "lookup")}


def find_tool(name: str) -> FunctionTool:
    return OBJECTS[name]


def step(message):
    for call in message.tool_calls:
        arguments = json.loads(call.function.arguments)
        if call.function.name in OBJECTS:
            tool = find_tool(call.function.name)
            print(tool.run({{arguments}}))
        else:
            print(handle_function_call(call.function.name, arguments))
"""
)


@pytest.mark.parametrize(
    ("handed", "expected"), [("arguments", True), ("coerce_tool_args(call.function.name, arguments)", False)]
)
def test_a_tool_class_running_its_callable_with_what_a_loop_beside_the_gate_hands_it_is_a_bypass(
    tmp_path: Path, run_cli, handed: str, expected: bool
) -> None:
    """The loop repairs some tools' arguments with the gate and hands the others to ``FunctionTool.run`` as they
    arrived: ``self.fn(**arguments)`` there runs them raw (DL101), and is silent once the loop repairs them."""
    source = OWN_CALLABLE_BESIDE_GATE.replace("{{arguments}}", handed)
    source = source.replace("import json\n", "import json\n\nfrom agent.gate import coerce_tool_args\n")
    project = _project(tmp_path, {"agent/objects.py": source})
    line = source.splitlines().index("        return self.fn(**arguments)") + 1
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == ({("DL101", f"agent/objects.py:{line}")} if expected else set())
    if expected:
        (finding,) = result.findings()
        assert finding["message"].startswith("`self.fn(...)` runs the function the `FunctionTool` object holds")


#: An agent whose tools are its own methods, found by the tool's name with ``getattr``; and a client whose
#: methods are found by a configured operation's name with the configuration's own parameters.
GETATTR_METHODS = """
import json


class Agent:
    def __init__(self, client, config):
        self.client = client
        self.config = config

    def get_weather(self, city: str, days: int = 1):
        return [city] * days

    def handle(self, response):
        for tool_call in response.choices[0].message.tool_calls:
            name = tool_call.function.name
            args = json.loads(tool_call.function.arguments)
            print(getattr(self, name)(**args))

    def handle_found(self, response):
        for tool_call in response.choices[0].message.tool_calls:
            method = getattr(self, tool_call.function.name, None)
            if method is not None:
                print(method(**json.loads(tool_call.function.arguments)))

    def handle_checked(self, tool_call):
        name = tool_call.function.name
        method = getattr(self, name.lower()) if name.lower() in ("get_weather",) else None
        if method:
            return method(**json.loads(tool_call.function.arguments))
        return None

    def run_operation(self, operation_name):
        return getattr(self.client, operation_name)(**self.config[operation_name])
"""


def test_a_method_getattr_finds_by_the_tool_name_and_runs_with_the_raw_arguments_is_a_tool(
    tmp_path: Path, run_cli
) -> None:
    """``getattr(self, name)(**json.loads(tool_call.function.arguments))``: whatever getattr returns, handed the
    tool call's own arguments as they arrived under the tool's name it is the tool, and nothing repairs them
    (DL102), also where only a branch can hold it (``getattr(self, name.lower()) if ... else None``). A client
    method found by an operation's name and run with the configuration's values is no tool."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/agent.py": GETATTR_METHODS})
    lines = GETATTR_METHODS.splitlines()
    expected = {
        ("DL102", f"agent/agent.py:{lines.index(text) + 1}")
        for text in (
            "            print(getattr(self, name)(**args))",
            "                print(method(**json.loads(tool_call.function.arguments)))",
            "            return method(**json.loads(tool_call.function.arguments))",
        )
    }
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == expected
    assert any(
        finding["message"].startswith("the model's raw arguments reach the method `getattr` finds by `name`, run in")
        for finding in result.findings()
    )


#: The same tool class held in a table declared to hold it, read by a loop beside the gate.
DECLARED_TOOL_MAP = (
    """
import json
from typing import Dict

from agent.registry import handle_function_call

"""
    + FUNCTION_TOOL
    + """

class Loop:
    def __init__(self):
        self.tool_map: Dict[str, FunctionTool] = {"lookup": FunctionTool(lookup, "lookup")}

    def step(self, message):
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            if call.function.name in self.tool_map:
                print(self.tool_map[call.function.name].run(arguments))
            else:
                print(handle_function_call(call.function.name, arguments))
"""
)


def test_a_table_declared_to_hold_a_class_whose_method_runs_its_callable_raw_is_a_bypass(
    tmp_path: Path, run_cli
) -> None:
    """``self.tool_map: Dict[str, FunctionTool]``: its ``run`` hands what it is given to the function the object
    holds, so the loop's ``self.tool_map[name].run(raw)`` beside the gate is a bypass (DL101), reported once,
    where the loop hands the raw arguments on (``run``'s callers are not resolved, so ``self.fn(**arguments)``
    has no site of its own)."""
    project = _project(tmp_path, {"agent/objects.py": DECLARED_TOOL_MAP})
    line = DECLARED_TOOL_MAP.splitlines().index(
        "                print(self.tool_map[call.function.name].run(arguments))"
    )
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == {("DL101", f"agent/objects.py:{line + 1}")}
    (finding,) = result.findings()
    assert "hands them to the function it holds unvalidated" in finding["message"]


#: A tracing wrapper that records what each call was handed (read against the function's signature, made
#: printable) beside a raw table of wrapped tools.
TRACED_TOOLS = """
import inspect
import json


def record_arguments(fn, *args, **kwargs):
    signature = inspect.signature(fn)
    recorded = {}
    for name, value in signature.bind(*args, **kwargs).arguments.items():
        annotation = signature.parameters[name].annotation
        recorded[name] = value if annotation in (int, str) else repr(value)
    return recorded


class Traced:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        print(record_arguments(self.fn, *args, **kwargs))
        return self.fn(*args, **kwargs)


def add(a: int, b: int) -> int:
    return a + b


TOOLS = {"add": Traced(add)}


def run(message):
    for call in message.tool_calls:
        print(TOOLS[call.function.name](**json.loads(call.function.arguments)))
"""


def test_a_tracer_that_records_a_calls_own_arguments_is_no_gate(tmp_path: Path, run_cli) -> None:
    """``record_arguments(self.fn, *args, **kwargs)`` reads the signature and rewrites values, but what it is
    handed in ``*args`` and ``**kwargs`` is the traced call's own arguments, recorded for a span, and its output
    reaches no tool: the raw table is still ungated (DL102)."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/traced.py": TRACED_TOOLS})
    line = TRACED_TOOLS.splitlines().index(
        "        print(TOOLS[call.function.name](**json.loads(call.function.arguments)))"
    )
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert ("DL102", f"agent/traced.py:{line + 1}") in result.locations()


#: A tool function looked up by name in one method and run by another that is handed it; and a callback
#: handed in by callers that never looked it up in a table.
HANDED_CALLABLE = """
import json


def wait(seconds: int) -> str:
    return "waited" * seconds


class Engine:
    def __init__(self, tools, on_done):
        self.tools = {fn.__name__: fn for fn in tools}
        self.on_done = on_done

    def _respond(self, tool_fn, tool_args):
        return tool_fn(**tool_args)

    def _notify(self, callback, payload):
        return callback(**payload)

    def process(self, tool_name, args):
        tool_fn = self.tools.get(tool_name)
        if tool_fn is None:
            return None
        self._notify(self.on_done, {"tool": tool_name})
        return self._respond(tool_fn, json.loads(args) if isinstance(args, str) else args)

    def step(self, message):
        for call in message.tool_calls:
            self.process(call.function.name, call.function.arguments)


ENGINE = Engine([wait], print)
"""


def test_a_tool_function_looked_up_by_one_method_and_run_by_the_one_it_is_handed_to_is_a_site(
    tmp_path: Path, run_cli
) -> None:
    """``tool_fn = self.tools.get(tool_name)`` then ``self._respond(tool_fn, json.loads(args))`` and there
    ``tool_fn(**tool_args)``: the callers of ``_respond`` say where the callable came from, so the call is a
    dispatch of ``self.tools`` with the model's raw arguments (DL102). The callback its callers never looked up
    in a table is no tool."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/engine.py": HANDED_CALLABLE})
    line = HANDED_CALLABLE.splitlines().index("        return tool_fn(**tool_args)") + 1
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == {("DL102", f"agent/engine.py:{line}")}


#: Tools held in a table filled elsewhere, declared to hold a class whose callable is an attribute; and
#: clients of a class derived from a library's, whose methods the library defines.
DECLARED_ATTRIBUTE_CALLABLE = """
import json
from typing import Any, Callable, Dict

from httpx import Client


class Tool:
    target: Callable[..., Any]

    def __init__(self, target: Callable[..., Any], schema: Any) -> None:
        self.target = target
        self.schema = schema


class Remote(Client):
    pass


class MiddleTier:
    def __init__(self) -> None:
        self.tools: Dict[str, Tool] = {}
        self.remotes: Dict[str, Remote] = {}

    def on_message(self, item):
        tool = self.tools[item["name"]]
        return tool.target(json.loads(item["arguments"]))

    def relay(self, item):
        remote = self.remotes[item["name"]]
        return remote.send(json.loads(item["arguments"]))
"""


def test_the_callable_attribute_of_a_declared_tool_class_run_with_raw_arguments_is_a_site(
    tmp_path: Path, run_cli
) -> None:
    """``tool.target(json.loads(item["arguments"]))`` of ``self.tools: Dict[str, Tool]``: ``target`` is no
    method of ``Tool`` or of any base, only the callable each object holds, run with the model's raw arguments
    (DL102). ``Remote`` derives from a library's class, whose ``send`` the analysis cannot see: no site."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/middle.py": DECLARED_ATTRIBUTE_CALLABLE})
    line = DECLARED_ATTRIBUTE_CALLABLE.splitlines().index('        return tool.target(json.loads(item["arguments"]))')
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == {("DL102", f"agent/middle.py:{line + 1}")}
    (finding,) = result.findings()
    assert "`.target(...)` runs it in `MiddleTier.on_message`" in finding["message"]


#: Plugins of the project's own, each serving several functions, found by a function's name through a method
#: that scans them; one path runs the plugin with a tool call's arguments, another with the configuration's.
PLUGIN_MANAGER = """
import json


class WeatherPlugin:
    def get_spec(self):
        return [{"name": "forecast", "parameters": {"type": "object", "properties": {"days": {"type": "integer"}}}}]

    async def execute(self, function_name, helper, **kwargs):
        return {"days": kwargs["days"] + 1}


class PluginManager:
    def __init__(self, defaults):
        self.plugins = [WeatherPlugin()]
        self.defaults = defaults

    def _get_plugin_by_function_name(self, function_name):
        return next((p for p in self.plugins if function_name in [s["name"] for s in p.get_spec()]), None)

    async def call_function(self, function_name, helper, arguments):
        plugin = self._get_plugin_by_function_name(function_name)
        if not plugin:
            return None
        return await plugin.execute(function_name, helper, **json.loads(arguments))

    async def warm_up(self, function_name, helper):
        plugin = self._get_plugin_by_function_name(function_name)
        return await plugin.execute(function_name, helper, **self.defaults[function_name])
"""


def test_a_plugin_a_project_method_finds_by_the_function_name_run_with_raw_arguments_is_a_tool(
    tmp_path: Path, run_cli
) -> None:
    """``plugin = self._get_plugin_by_function_name(name)`` then ``plugin.execute(name, helper,
    **json.loads(arguments))``: no table shows the plugins, but a project method returns one for the tool's name
    and its own entry runs with the model's arguments as they arrived (DL102). Run with the configuration's
    values, the same plugin is no tool call."""
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/plugins.py": PLUGIN_MANAGER})
    line = PLUGIN_MANAGER.splitlines().index(
        "        return await plugin.execute(function_name, helper, **json.loads(arguments))"
    )
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == {("DL102", f"agent/plugins.py:{line + 1}")}


ACTION_TYPES = """
from typing import Any, Dict

from pydantic import BaseModel


class Action(BaseModel):
    name: str
    kwargs: Dict[str, Any]
"""
ACTION_AGENT = """
import json

from bench.envs import Env
from bench.tools import ALL_TOOLS
from bench.types import Action


def message_to_action(message):
    tool_call = message["tool_calls"][0]
    return Action(name=tool_call["function"]["name"], kwargs=json.loads(tool_call["function"]["arguments"]))


def scripted_action(step):
    return Action(name=step["tool"], kwargs=step["{field}"])


def run(data, client, messages):
    return solve(Env(data, ALL_TOOLS), client, messages)


def solve(env: Env, client, messages):
    response = client.chat.completions.create(model="m", messages=messages)
    action = {maker}
    return env.step(action)
"""
ACTION_ENV = """
from typing import Dict, List, Type

from bench.tool import Tool
from bench.types import Action


class Env:
    def __init__(self, data, tools: List[Type[Tool]]):
        self.data = data
        self.tools_map: Dict[str, Type[Tool]] = {tool.get_info()["function"]["name"]: tool for tool in tools}

    def step(self, action: Action):
        if action.name in self.tools_map:
            return self.tools_map[action.name].invoke(data=self.data, **action.kwargs)
        return "unknown tool"
"""
ACTION_TOOL_BASE = """
import abc


class Tool(abc.ABC):
    @staticmethod
    def invoke(*args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def get_info():
        raise NotImplementedError
"""
ACTION_TOOLS = """
from bench.tool import Tool


class Calculate(Tool):
    @staticmethod
    def invoke(data, expression: str, precision: int = 2):
        return round(eval(expression, {}), precision)

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "calculate", "parameters": {
            "type": "object", "properties": {"expression": {"type": "string"}, "precision": {"type": "integer"}}}}}


class FindUsers(Tool):
    @staticmethod
    def invoke(data, user_ids: list):
        return [data["users"].get(user_id) for user_id in user_ids]

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "find_users", "parameters": {
            "type": "object", "properties": {"user_ids": {"type": "array"}}}}}


ALL_TOOLS = [Calculate, FindUsers]
"""


@pytest.mark.parametrize(
    "maker, field, found",
    [
        ("message_to_action(response.choices[0].message.model_dump())", "arguments", True),
        ("scripted_action(messages[-1])", "kwargs", False),
    ],
    ids=["record-of-a-parsed-tool-call", "record-of-a-scripted-step"],
)
def test_a_record_built_from_a_tool_call_s_parsed_arguments_carries_them_into_another_module(
    maker: str, field: str, found: bool, tmp_path: Path, run_cli
) -> None:
    """``Action(name=..., kwargs=json.loads(tool_call["function"]["arguments"]))`` in the agent, then
    ``env.step(action)`` and, in the environment, ``self.tools_map[action.name].invoke(**action.kwargs)``: the
    project's own record carries the model's arguments across modules to its tools (DL102; tau-bench). A record
    of a scripted step carries no tool call."""
    files = {
        "bench/__init__.py": "",
        "bench/types.py": ACTION_TYPES,
        "bench/agent.py": ACTION_AGENT.replace("{maker}", maker).replace("{field}", field),
        "bench/envs.py": ACTION_ENV,
        "bench/tool.py": ACTION_TOOL_BASE,
        "bench/tools.py": ACTION_TOOLS,
    }
    line = ACTION_ENV.splitlines().index(
        "            return self.tools_map[action.name].invoke(data=self.data, **action.kwargs)"
    )
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "ALL")
    assert result.locations() == ({("DL102", f"bench/envs.py:{line + 1}")} if found else set())
    if found:
        trace = [step["message"] for step in result.findings()[0]["trace"]]
        assert (
            trace[0].startswith("source: the model's arguments")
            and "bench/agent.py" in result.findings()[0]["trace"][0]["path"]
        )


RUNNER_TOOL = """
import inspect
import json

from fastmcp.tools.tool import ParsedFunction


async def run_sync_or_async(f, *args, **kwargs):
    if inspect.iscoroutinefunction(f):
        return await f(*args, **kwargs)
    return f(*args, **kwargs)


class {cls}:
    def __init__(self, func, name, input_schema=None, is_internal=True):
        self.func = func
        self.name = name
        self.input_schema = input_schema
        self.is_internal = is_internal

    @classmethod
    def from_decorated_function(cls, func):
        parsed = ParsedFunction.from_function(func, validate=False)  # a schema, no tool
        return cls(func, parsed.name, parsed.input_schema)

    async def execute(self, tool_call):
        if self.is_internal:
            return await run_sync_or_async(self.func, **tool_call.args)
        return await self.func(self.name, tool_call.args)  # an MCP client's call_tool, which the server validates


async def respond(tools, response):
    for call in response.tool_calls:
        call.args = json.loads(call.function.arguments)
        await tools[call.function.name].execute(call)
"""


#: An agent validating the task it is handed (an HTTP client's, not a model's tool call) validates no tool.
RUNNER_AGENT = """
from pydantic import BaseModel

from agent.tool import respond


class TaskArgs(BaseModel):
    topic: str


class Agent:
    ArgsSchema = TaskArgs

    async def __call__(self, task):
        self.args = self.ArgsSchema.model_validate(task.args)
        return await respond(self.tools, await self.llm(self.args))
"""


@pytest.mark.parametrize("cls, found", [("Tool", True), ("Renderer", False)])
def test_a_tool_class_handing_its_own_callable_to_a_runner_with_raw_arguments_runs_it_raw(
    cls: str, found: bool, tmp_path: Path, run_cli
) -> None:
    """``await run_sync_or_async(self.func, **tool_call.args)``: a project helper that calls the callable it is
    handed with the rest of its arguments runs the tool class's own function with the model's arguments as they
    arrived (DL102; cheshire-cat), though FastMCP's ``ParsedFunction`` described its parameters: that makes no
    tool, and an agent beside it validating its task's arguments validates no tool's. Handed its own name with
    the arguments, the callable is a relay told which tool to run (an MCP client's call). A class whose name says
    nothing of tools stays silent, as it does when it calls ``self.func`` itself."""
    source = RUNNER_TOOL.replace("{cls}", cls)
    files = {"agent/__init__.py": "", "agent/tool.py": source, "agent/service.py": RUNNER_AGENT}
    project = write_project(tmp_path, files)
    line = source.splitlines().index("            return await run_sync_or_async(self.func, **tool_call.args)") + 1
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == ({("DL102", f"agent/tool.py:{line}")} if found else set())


STREAMED_TOOL_MODEL = """
from pydantic import BaseModel


class ToolModel(BaseModel):
    content: str = ""
    function_arguments: str = ""
    function_name: str = ""

    def add_delta(self, delta):
        if delta.function.name:
            self.function_name = delta.function.name
        if delta.function.arguments:
            self.function_arguments += delta.function.arguments
        return self
"""
STREAMED_PLUGIN = """
from json_repair import repair_json

from agent.message import ToolModel


class CallPlugin:
    async def search_customer(self, query: str, limit: int = 5) -> str:
        return f"{limit} customers like {query}"

    async def execute(self, tool: ToolModel) -> None:
        name = tool.function_name
        args = repair_json(json_str={source}, return_objects=True)
        if not isinstance(args, dict):
            return
        tool.content = await getattr(self, name)(**args)
"""


@pytest.mark.parametrize(
    "source, found", [("tool.function_arguments", True), ("tool.content", False)], ids=["arguments", "content"]
)
def test_a_records_field_named_for_a_tool_call_s_arguments_repaired_as_json_is_a_source(
    source: str, found: bool, tmp_path: Path, run_cli
) -> None:
    """A streamed tool call accumulated in the project's own record (``tool.function_arguments``), parsed by
    ``json_repair.repair_json(..., return_objects=True)`` and spread into ``getattr(self, name)(**args)``: the
    model's arguments reach the plugin's method raw (DL102; call-center-ai). The record's ``content`` is not them."""
    plugin = STREAMED_PLUGIN.replace("{source}", source)
    files = {"agent/__init__.py": "", "agent/message.py": STREAMED_TOOL_MODEL, "agent/plugin.py": plugin}
    line = plugin.splitlines().index("        tool.content = await getattr(self, name)(**args)") + 1
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "ALL")
    assert result.locations() == ({("DL102", f"agent/plugin.py:{line}")} if found else set())


TOOL_LIST_BASE = """
class BaseTool:
    name = "base"
    params: dict = {}

    def execute_tool(self, params: dict):
        try:
            return self.execute(params)
        except Exception as error:
            return str(error)

    def execute(self, params: dict):
        raise NotImplementedError


class ReadFile(BaseTool):
    name = "read"
    params = {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}

    def execute(self, params: dict):
        return open(params["path"]).read()[: params.get("limit", 100)]
"""
TOOL_LIST_EXECUTOR = """
import json
from typing import List

from agent.tools import BaseTool


class StreamExecutor:
    def __init__(self, model, tools: {annotation}):
        self.model = model
        self.tools = {tool.name: tool for tool in tools} if isinstance(tools, list) else tools

    def run(self, messages):
        response = self.model.chat.completions.create(model="m", messages=messages)
        for call in response.choices[0].message.tool_calls:
            self._execute_tool({"name": call.function.name, "arguments": json.loads(call.function.arguments)})

    def _execute_tool(self, tool_call):
        tool = self.tools.get(tool_call["name"])
        return tool.execute_tool(tool_call["arguments"])
"""


@pytest.mark.parametrize("annotation, found", [("List[BaseTool]", True), ("list", False)])
def test_a_mapping_built_by_name_from_a_declared_list_of_tools_holds_those_tools(
    annotation: str, found: bool, tmp_path: Path, run_cli
) -> None:
    """``self.tools = {tool.name: tool for tool in tools}`` of ``tools: List[BaseTool]``, then
    ``self.tools.get(name).execute_tool(arguments)`` with the model's parsed arguments: the project's own tool
    objects run raw (DL102; chatgpt-on-wechat). With nothing declared of the list, nothing says they are tools."""
    executor = TOOL_LIST_EXECUTOR.replace("{annotation}", annotation)
    files = {"agent/__init__.py": "", "agent/tools.py": TOOL_LIST_BASE, "agent/executor.py": executor}
    line = executor.splitlines().index('        return tool.execute_tool(tool_call["arguments"])') + 1
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "ALL")
    assert result.locations() == ({("DL102", f"agent/executor.py:{line}")} if found else set())


OFFERED_BY_NAME = """
import json

from openai import OpenAI

client = OpenAI()

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "transfer_money",
            "parameters": {
                "type": "object",
                "properties": {"to_account": {"type": "string"}, "amount": {"type": "number"}},
            },
        },
    },
]

BALANCE = 1000.0


def transfer_money(to_account: str, amount: float) -> str:
    global BALANCE
    BALANCE -= amount
    return f"sent {amount} to {to_account}"


def audit(to_account: str, amount: float) -> str:
    return f"{to_account}: {amount}"


def execute_tool(name: str, args: dict) -> str:
    if name == "transfer_money":
        return {called}(**args)
    return f"Unknown tool: {name}"


def chat(messages):
    response = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    for call in response.choices[0].message.tool_calls:
        execute_tool(call.function.name, json.loads(call.function.arguments))
"""


@pytest.mark.parametrize("called, found", [("transfer_money", True), ("audit", False)])
def test_a_function_offered_to_the_model_under_its_own_name_called_with_raw_arguments_is_a_dispatch(
    called: str, found: bool, tmp_path: Path, run_cli
) -> None:
    """``if name == "transfer_money": return transfer_money(**args)``, the arguments parsed from the model's call
    by the caller, the function offered to the model under that very name: a tool run raw (DL102; the ai-cookbook
    approval example). A function the model is offered under no name is no tool."""
    source = OFFERED_BY_NAME.replace("{called}", called)
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/bank.py": source})
    line = source.splitlines().index(f"        return {called}(**args)") + 1
    result = run_cli(project, "--format", "json", "--select", "ALL")
    assert result.locations() == ({("DL102", f"agent/bank.py:{line}")} if found else set())


STATE_HELD_TABLE_STATE = """
from agent.tools import load_tool_config


class MasterState:
    def __init__(self):
        self.{attribute}, self.tools_for_assistant = load_tool_config(self)
"""
STATE_HELD_TABLE_TOOLS = """
import json


class WeatherService:
    name = "get_weather"

    def __init__(self, state):
        self.state = state

    async def invoke(self, args):
        return f"{args['city']}: sunny for {args.get('days', 1) + 1} days"


def load_tool_config(state):
    tool_dispatch_map = {}
    model_tools = []
    for new_tool in [WeatherService(state)]:
        model_tools.append(new_tool)
        tool_dispatch_map[new_tool.name] = new_tool.invoke
    return tool_dispatch_map, model_tools


async def dispatch_tool_call(event, master_state):
    tool_name = event.get("name")
    tool_arguments = json.loads(event.get("arguments", "{}"))
    if tool_name in master_state.tool_dispatch_map:
        return await master_state.tool_dispatch_map[tool_name](tool_arguments)
"""


@pytest.mark.parametrize("attribute, found", [("tool_dispatch_map", True), ("dispatch_table", False)])
def test_a_table_read_through_an_untyped_object_is_the_one_class_s_attribute_of_that_name(
    attribute: str, found: bool, tmp_path: Path, run_cli
) -> None:
    """``master_state.tool_dispatch_map[tool_name](json.loads(event.get("arguments")))`` where ``master_state`` is
    untyped, and the one class of the project holding an attribute of that name fills it with the table a
    function returns: that table is read raw (DL102; chatty-friend's realtime tool calls). No class holding the
    attribute, no table."""
    files = {
        "agent/__init__.py": "",
        "agent/state.py": STATE_HELD_TABLE_STATE.replace("{attribute}", attribute),
        "agent/tools.py": STATE_HELD_TABLE_TOOLS,
    }
    line = STATE_HELD_TABLE_TOOLS.splitlines().index(
        "        return await master_state.tool_dispatch_map[tool_name](tool_arguments)"
    )
    result = run_cli(write_project(tmp_path, files), "--format", "json", "--select", "ALL")
    assert result.locations() == ({("DL102", f"agent/tools.py:{line + 1}")} if found else set())
