"""The names the linter and the runtime must agree on, kept in one place.

``dispatchlint --fix`` writes code that calls this package (``wrap_table(TOOLS, SCHEMAS, args_at=1)``), and
the linter then counts that table as guarded. Both only hold if the two sides read a project the same way:
which parameter of an executor receives the model's arguments, where a tool definition keeps its parameters
schema, and what the package and its wrappers are called. The analyzer imports these names from here instead
of keeping its own lists; the runtime uses them at run time.

Nothing is imported: the linter reads this module without running any of the runtime's work.
"""

#: The package the fix imports from; any call into it is a gate.
PACKAGE = "dispatchlint.runtime"
#: Its table wrapper, its single-executor decorator, and the keyword that says where the arguments are.
WRAP_TABLE = "wrap_table"
COERCED = "coerced"
ARGS_AT = "args_at"

#: Parameter names that, by convention, receive a tool call's arguments mapping (``fn(agent, fn_args, ctx)``).
#: The analyzer treats such a parameter as the model's arguments; ``wrap_table`` hands it the repaired mapping
#: when no ``args_at`` is given. A name that is also a property of the tool's schema is an ordinary parameter.
#: Not ``parameters``: in real code bases that is as often the tool's schema as its arguments.
ARGUMENT_PARAMETER_NAMES = frozenset(
    {
        "args",
        "arguments",
        "tool_args",
        "tool_arguments",
        "function_args",
        "function_arguments",
        "fn_args",
        "func_args",
        "call_args",
        "tool_input",
        "tool_inputs",
        "input_args",
        "action_input",
        "params",
        "tool_params",
        "kwargs",
        "raw_args",
        "arguments_dict",
        "args_dict",
        "parsed_args",
    }
)

#: Keys under which a tool definition (``{"name": ..., KEY: {...}}``) keeps its parameters schema: OpenAI,
#: Anthropic, MCP, and the spellings registries use. The runtime unwraps the first one present.
SCHEMA_ENVELOPE_KEYS = ("parameters", "input_schema", "inputSchema", "json_schema", "args_schema", "schema")
