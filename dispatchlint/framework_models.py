"""The models: what the analysis knows of the code around a project, as data, in one place (the way CodeQL keeps
its customizations and Pysa its ``.pysa`` files apart from the engine).

- **Sources**: where each LLM SDK and agent framework puts a tool call's arguments.
- **Entries**: for each agent framework and protocol, which entry of a tool object validates the arguments (a
  table of such objects read through it is guarded) and which attributes run the tool past that validation.
- **Not the model's**: what a command line hands its handlers.

The indexer and the linker read the sets derived at the bottom; a project adds its own with the configuration
(``gates``, ``tool-types``, ``sources``, ``sinks``; see ``docs/configuration.md``). The project's gated path adds
more by itself (``link/specification.py``). Each framework model is exercised by a fixture written against the
framework's own API (``fixtures/fw_*``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import FrozenSet, Tuple


@dataclass(frozen=True)
class SdkModel:
    """Where an SDK's response puts a tool call's arguments."""

    name: str
    #: Attributes or keys that hold the arguments (``tool_call.function.arguments``, ``block.input``).
    argument_fields: Tuple[str, ...]
    #: Methods that return them (pydantic-ai's ``part.args_as_dict()``).
    argument_methods: Tuple[str, ...] = ()
    #: How it is written, for the reader.
    example: str = ""


@dataclass(frozen=True)
class FrameworkModel:
    """An agent framework's or protocol's tool objects: which entries validate, which run raw."""

    name: str
    #: Top-level packages it is imported from.
    packages: Tuple[str, ...]
    #: Public entries that validate the arguments against the tool's schema before running it.
    validating_entries: Tuple[str, ...]
    #: Attributes that run the tool past that validation (the bare function, the implementation hook).
    raw_entries: Tuple[str, ...] = ()


SDKS: Tuple[SdkModel, ...] = (
    SdkModel("OpenAI Chat Completions", ("arguments",), example="tool_call.function.arguments (a JSON string)"),
    SdkModel("OpenAI Responses", ("arguments",), example="item.arguments of a function_call item"),
    SdkModel("Anthropic Messages", ("input",), example="block.input of a tool_use block"),
    SdkModel("Google GenAI", ("args",), example="part.function_call.args"),
    SdkModel("Mistral", ("arguments",), example="tool_call.function.arguments"),
    SdkModel("Ollama", ("arguments",), example="tool_call.function.arguments (a mapping)"),
    SdkModel("LiteLLM", ("arguments",), example="choice.message.tool_calls[0].function.arguments"),
    SdkModel("Amazon Bedrock Converse", ("input",), example='block["toolUse"]["input"]'),
    SdkModel("LangChain messages", ("args",), example='message.tool_calls[0]["args"]'),
    SdkModel("pydantic-ai", (), ("args_as_dict", "args_as_json_str"), example="part.args_as_dict()"),
    SdkModel("agent frameworks' tool inputs", ("tool_input", "function_args"), example="action.tool_input"),
)

FRAMEWORKS: Tuple[FrameworkModel, ...] = (
    FrameworkModel(
        "LangChain and LangGraph",
        ("langchain", "langchain_core", "langchain_community", "langgraph"),
        ("run", "arun", "invoke", "ainvoke"),
        ("_run", "_arun", "func", "coroutine"),
    ),
    FrameworkModel("CrewAI", ("crewai", "crewai_tools"), ("run",), ("_run", "func")),
    FrameworkModel("OpenAI Agents SDK", ("agents",), ("on_invoke_tool",)),
    FrameworkModel("MCP Python SDK and FastMCP", ("mcp", "fastmcp"), ("run",), ("fn",)),
    FrameworkModel("pydantic-ai", ("pydantic_ai",), ("run", "call"), ("function",)),
    FrameworkModel("smolagents", ("smolagents",), ("__call__",), ("forward",)),
    FrameworkModel("AutoGen", ("autogen", "autogen_core", "autogen_agentchat", "autogen_ext"), ("run",), ("_func",)),
    FrameworkModel("CAMEL", ("camel",), ("__call__",), ("func",)),
    FrameworkModel("agno (phidata)", ("agno", "phi"), ("execute",), ("entrypoint",)),
    FrameworkModel("Semantic Kernel", ("semantic_kernel",), ("invoke",)),
    # Tools that run what they wrap as handed: ``FunctionTool.call(**kwargs)`` passes the keyword arguments to
    # ``fn`` and ``Tool.invoke(**kwargs)`` to ``function`` without reading the schema, so a table of them is as
    # raw as a table of functions, and only the project's gate repairs what reaches them.
    FrameworkModel("LlamaIndex", ("llama_index",), ()),
    FrameworkModel("Haystack", ("haystack",), ()),
)

#: Entries of tool objects that projects write themselves, validating or not (``tool.call(ctx, **args)``,
#: ``tool.execute(args)``): what a project's own gated path calls is what it protects.
PROJECT_ENTRIES = ("__call__", "call", "acall", "async_call", "execute", "aexecute", "arun")
#: Attributes that reach past any wrapper to the function it wraps (``functools.wraps``).
WRAPPED_ATTRIBUTES = ("__wrapped__",)

#: Calls whose result is a command line's parsed arguments (argparse).
COMMAND_LINE_PARSERS = ("parse_args", "parse_known_args", "parse_intermixed_args")
#: Calls that register a function as a command line's handler: it is called with the parsed command line.
COMMAND_LINE_REGISTRATIONS = ("set_defaults",)

#: Methods of a tool object that inspect the arguments rather than run the tool (``tool.validate_input(args)``,
#: ``tool.check_permissions(args)``): handed the same arguments as its entry, never a sink of their own.
INSPECTING_METHOD = re.compile(
    r"^_?(?:validate|check|verify|is|has|can|should|needs|get|describe|format|render|preview|explain|estimate)(?:_|$)"
)


# ---------------------------------------------------------------------------------------- naming conventions
# What the names of a project's own classes, functions and tables say when no model above covers them.

#: A name that says it holds or runs tools (a table, a resolver, a class, a dispatch key).
TOOLISH = re.compile(r"tool|function|func\b|fn\b|executor|skill|capabilit", re.IGNORECASE)
#: The name of a class whose instances record one tool call (``ToolCall``, ``FunctionCallRecord``): its own
#: ``self.args`` are a model's arguments, not what a tool declares.
TOOL_CALL_RECORD_CLASS = re.compile(r"(?:tool|function)_?call[^.]*$", re.IGNORECASE)
#: Words in the name of a class whose instances may carry a model's call (``ToolCallPart``, ``ToolUseBlock``,
#: ``FunctionInvocation``, ``ContentToolRequest``, ``ActionStep``).
CALL_CARRIER_CLASS = re.compile(r"tool|function|call|use|invocation|request|part|block|action|step|event", re.I)
#: Annotations that name no class of the value's own (``call: Any``).
UNINFORMATIVE_ANNOTATIONS = frozenset(("Any", "object", "dict", "Dict", "Mapping", "MutableMapping", "SimpleNamespace"))
#: A part of a framework's qualified name that says it names a tool (``tools``, ``BaseTool``, ``FunctionTool``,
#: ``tool``) or a function offered as one (``kernel_function``).
FRAMEWORK_TOOL_PART = re.compile(r"tool|function", re.IGNORECASE)
#: Framework classes whose names say tool or function but that only describe a function's parameters, making no
#: tool that validates (FastMCP's ``ParsedFunction.from_function(fn, validate=False)``).
DESCRIBING_CLASSES = frozenset(("ParsedFunction",))
#: Bases and decorators of classes whose instances only record what they are built from (pydantic models, named
#: tuples, dataclasses, attrs classes): a record built from a tool call's arguments carries them.
RECORD_BASES = frozenset(("BaseModel", "NamedTuple", "TypedDict"))
RECORD_DECORATORS = frozenset(("dataclass", "define", "frozen", "attrs"))
#: Methods that use tools (call, list or look them up) rather than make one.
TOOL_USING_METHOD = re.compile(r"^_?(?:a?call|list|get|run|execute|invoke|remove|delete|has|find)_", re.IGNORECASE)


def _union(groups: Tuple[Tuple[str, ...], ...]) -> Tuple[str, ...]:
    """Every name of the groups, once, in the order first met."""
    return tuple(dict.fromkeys(name for group in groups for name in group))


#: Attributes and keys that hold a tool call's arguments, across the SDKs.
ARGUMENT_FIELDS: FrozenSet[str] = frozenset(_union(tuple(sdk.argument_fields for sdk in SDKS)))
#: Names a project gives the field that holds a tool call's arguments in its own records
#: (``tool.function_arguments``, ``step.tool_args``, ``call.tool_input``); not ``*_parameters``, which names a
#: tool's declared schema as often.
PROJECT_ARGUMENT_FIELD = re.compile(r"^(?:tool|function|func|call)_?(?:arguments|args|input)$")


def holds_arguments(field: str) -> bool:
    """A field or key that holds a tool call's arguments, by an SDK's name or a project's."""
    return field in ARGUMENT_FIELDS or bool(PROJECT_ARGUMENT_FIELD.match(field))


#: Methods that return them.
ARGUMENT_METHODS: FrozenSet[str] = frozenset(_union(tuple(sdk.argument_methods for sdk in SDKS)))
#: Packages whose tool objects validate their arguments in their public entries.
FRAMEWORK_PACKAGES: Tuple[str, ...] = _union(
    tuple(framework.packages for framework in FRAMEWORKS if framework.validating_entries)
)
#: The public entries of tool objects: where a tool class that validates its arguments does so.
TOOL_ENTRY_METHODS: Tuple[str, ...] = _union(
    tuple(framework.validating_entries for framework in FRAMEWORKS) + (PROJECT_ENTRIES,)
)
#: Attributes that reach past a tool object's own validation to the bare function it wraps.
RAW_ENTRIES: FrozenSet[str] = frozenset(
    _union(tuple(framework.raw_entries for framework in FRAMEWORKS) + (WRAPPED_ATTRIBUTES,))
)
