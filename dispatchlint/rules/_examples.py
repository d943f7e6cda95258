"""The code the rules' examples share: a project's gate and its gated registry, as the files of an example
project (``agent/gate.py``, ``agent/registry.py``). Each rule's VALID and INVALID cases add the files that make
its own point."""

#: ``agent/gate.py``: the gate, repairing arrays sent as JSON strings against a schema of each tool.
GATE = """
import json

SCHEMAS = {
    "plan": {"type": "object", "properties": {"steps": {"type": "array"}}},
    "search": {"type": "object", "properties": {"query": {"type": "string"}}},
}

def coerce_tool_args(tool_name, args):
    props = SCHEMAS.get(tool_name, {}).get("properties", {})
    fixed = dict(args)
    for key, spec in props.items():
        if spec.get("type") == "array" and isinstance(fixed.get(key), str):
            fixed[key] = json.loads(fixed[key])
    return fixed
"""

#: ``agent/registry.py``: the registry, whose one dispatch passes the gate.
REGISTRY = """
from agent.gate import coerce_tool_args

def search(query):
    return [query]

REGISTRY = {"search": search}

def handle_function_call(tool_name, args):
    args = coerce_tool_args(tool_name, args)
    return REGISTRY[tool_name](**args)
"""
