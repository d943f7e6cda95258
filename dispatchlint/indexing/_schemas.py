"""Tool parameter schemas written in the source, found without running anything.

Forms: a dict literal with a ``name`` and ``parameters`` (or ``input_schema``...; OpenAI's ``{"type":
"function", "function": {...}}`` contains one), a registration call that passes a name and a schema
(``registry.register("recall", fn, schema={...})``, ``@tool(name="search", parameters={...})``), and a table of
schemas keyed by tool name (``SCHEMAS = {"plan": {"type": "object", "properties": {...}}}``). Module-level
constants are followed within the module.
"""

from __future__ import annotations

from typing import Callable, List, Optional

import libcst as cst

from dispatchlint.indexing import syntax as syn
from dispatchlint.indexing.facts import SchemaDef, Span
from dispatchlint.runtime.contract import SCHEMA_ENVELOPE_KEYS

#: Keys of a tool definition that hold its parameters schema: the ones the runtime unwraps.
SCHEMA_KEYS = SCHEMA_ENVELOPE_KEYS


class SchemaCollector:
    """Fed every node of a module once (by the indexer's pre-pass); collects :class:`SchemaDef` facts."""

    def __init__(self, literals: syn.Literals, span: Callable[[cst.CSTNode], Span]) -> None:
        self.literals = literals
        self.span = span
        self.found: List[SchemaDef] = []

    def visit(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Dict):
            self._schema_dict(node)
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Dict):
            self._schema_table(node)
            self._schema_item(node)
        elif isinstance(node, cst.Call):
            self._schema_call(node)

    def _schema_dict(self, node: cst.Dict) -> None:
        value = self.literals.value(node)
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            return
        for key in SCHEMA_KEYS:
            if isinstance(value.get(key), dict):
                props = syn.schema_properties(value[key])
                self.found.append(SchemaDef(value["name"], props, self.span(node)))
                return

    def _schema_call(self, node: cst.Call) -> None:
        """``register("recall", fn, schema={...})``, ``@tool(name="search", parameters={...})`` and
        ``@register("read_file", {"type": "object", "properties": {...}})``: a name, then its schema by keyword
        or as a later positional argument (a dict with ``properties``)."""
        name: Optional[str] = None
        parameters = None
        for arg in node.args:
            if arg.keyword is None and name is None:
                name = syn.string_value(arg.value)
            elif arg.keyword is None and parameters is None and isinstance(arg.value, (cst.Dict, cst.Name)):
                value = self.literals.value(arg.value)
                parameters = value if isinstance(value, dict) and "properties" in value else None
            elif arg.keyword is not None and arg.keyword.value == "name":
                name = syn.string_value(arg.value)
            elif arg.keyword is not None and arg.keyword.value in SCHEMA_KEYS:
                parameters = self.literals.value(arg.value)
        if name is not None and isinstance(parameters, dict) and "properties" in parameters:
            self.found.append(SchemaDef(name, syn.schema_properties(parameters), self.span(node)))

    def _schema_item(self, node: cst.Assign) -> None:
        """``SCHEMAS["plan"] = {"type": "object", "properties": {...}}``: one tool's schema put in a table."""
        target = node.targets[0].target if len(node.targets) == 1 else None
        if not isinstance(target, cst.Subscript):
            return
        tool = syn.subscript_key(target)
        value = self.literals.value(node.value)
        if tool is None or not isinstance(value, dict):
            return
        for candidate in [value] + [value[key] for key in SCHEMA_KEYS if isinstance(value.get(key), dict)]:
            if isinstance(candidate.get("properties"), dict):
                table = syn.dotted_name(target.value) or ""
                self.found.append(SchemaDef(tool, syn.schema_properties(candidate), self.span(target), table))
                return

    def _schema_table(self, node: cst.Assign) -> None:
        """``SCHEMAS = {"plan": {"type": "object", "properties": {...}}, ...}``: a schema per tool name."""
        target = node.targets[0].target if len(node.targets) == 1 else None
        table_name = target.value if isinstance(target, cst.Name) else ""
        assert isinstance(node.value, cst.Dict)
        for element in node.value.elements:
            if not isinstance(element, cst.DictElement):
                continue
            tool = syn.string_value(element.key)
            value = self.literals.value(element.value)
            if tool is None or not isinstance(value, dict):
                continue
            for candidate in [value] + [value[key] for key in SCHEMA_KEYS if isinstance(value.get(key), dict)]:
                if isinstance(candidate.get("properties"), dict):
                    props = syn.schema_properties(candidate)
                    self.found.append(SchemaDef(tool, props, self.span(element.key), table_name))
                    break
