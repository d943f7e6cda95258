"""The models of SDKs and frameworks are data, each exercised by a fixture written against the framework's own API,
and a project extends them from its configuration (``sources``, ``sinks``) without code."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import FIXTURES, write_project

from dispatchlint import framework_models

_IMPORT = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.MULTILINE)


def _imported_by_fixture_projects() -> set:
    """Top-level packages the fixture projects import (their stand-ins for the frameworks left out)."""
    imported = set()
    for path in FIXTURES.rglob("*.py"):
        if "stubs" not in path.relative_to(FIXTURES).parts:
            imported.update(_IMPORT.findall(path.read_text(encoding="utf-8", errors="replace")))
    return imported


def _project(root: Path, files: dict, config: dict = None) -> Path:
    root.mkdir()
    return write_project(root, files, config)


def test_every_framework_model_is_exercised_by_a_fixture() -> None:
    imported = _imported_by_fixture_projects()
    missing = [framework.name for framework in framework_models.FRAMEWORKS if not set(framework.packages) & imported]
    assert missing == []


def test_the_analysis_reads_what_the_models_say() -> None:
    """A framework whose tools validate in their public entry makes a table of them guarded; one whose tools run
    what they wrap as handed (LlamaIndex, Haystack) does not."""
    for framework in framework_models.FRAMEWORKS:
        assert set(framework.raw_entries) <= framework_models.RAW_ENTRIES
        assert set(framework.validating_entries) <= set(framework_models.TOOL_ENTRY_METHODS)
        known = set(framework_models.FRAMEWORK_PACKAGES)
        assert bool(set(framework.packages) & known) == bool(framework.validating_entries)
    for sdk in framework_models.SDKS:
        assert set(sdk.argument_fields) <= framework_models.ARGUMENT_FIELDS
        assert set(sdk.argument_methods) <= framework_models.ARGUMENT_METHODS


HANDLERS = """
from app.tools import TOOLS


def on_tool_event(event_name, payload):
    return TOOLS[event_name](payload)
"""

TOOLS = """
def recall(args):
    return args["limit"] + 1


TOOLS = {"recall": recall}
"""

REGISTRY = """
from app.tools import TOOLS


def coerce_tool_args(tool_name, args):
    return {k: int(v) if isinstance(v, str) and v.isdigit() else v for k, v in args.items()}


def handle_function_call(tool_name, args):
    return TOOLS[tool_name](coerce_tool_args(tool_name, args))
"""


def test_a_configured_source_is_a_source(tmp_path: Path, run_cli) -> None:
    """A framework callback the built-in models do not know (its parameter is not named like arguments, nothing
    in the project calls it): silent until the configuration says what it is handed."""
    files = {"app/__init__.py": "", "app/tools.py": TOOLS, "app/registry.py": REGISTRY, "app/handlers.py": HANDLERS}
    assert run_cli(_project(tmp_path / "plain", files), "--format", "json").findings() == []
    configured = _project(tmp_path / "configured", files, {"sources": ["app.handlers.on_tool_event:payload"]})
    result = run_cli(configured, "--format", "json")
    assert result.locations() == {("DL101", "app/handlers.py:6")}
    assert result.findings()[0]["trace"][0]["message"] == (
        "source: `payload`, the model's arguments (configured in `sources`)"
    )


OBJECT_TOOLS = """
class Tool:
    def __init__(self, name, raw_fn, schema):
        self.name = name
        self.raw_fn = raw_fn
        self.schema = schema

    def call(self, **arguments):
        return self.raw_fn(**arguments)


def _recall(limit=5):
    return limit + 1


TOOLS = {tool.name: tool for tool in [Tool("recall", _recall, {"properties": {"limit": {"type": "integer"}}})]}
"""

OBJECT_LOOP = """
import json

from app.tools import TOOLS


def coerce_tool_args(tool_name, args):
    return {k: int(v) if isinstance(v, str) and v.isdigit() else v for k, v in args.items()}


def gated(tool_call):
    name = tool_call.function.name
    return TOOLS[name].call(**coerce_tool_args(name, json.loads(tool_call.function.arguments)))


def fast_path(tool_call):
    return TOOLS[tool_call.function.name].raw_fn(**json.loads(tool_call.function.arguments))
"""


def test_a_configured_sink_reaches_past_a_tool_object_s_entry(tmp_path: Path, run_cli) -> None:
    files = {"app/__init__.py": "", "app/tools.py": OBJECT_TOOLS, "app/loop.py": OBJECT_LOOP}
    assert run_cli(_project(tmp_path / "plain", files), "--format", "json").findings() == []
    configured = _project(tmp_path / "configured", files, {"sinks": ["raw_fn"]})
    assert run_cli(configured, "--format", "json").locations() == {("DL101", "app/loop.py:17")}


def test_configured_sources_are_checked(tmp_path: Path, run_cli) -> None:
    files = {"app/__init__.py": "", "app/tools.py": TOOLS, "app/registry.py": REGISTRY, "app/handlers.py": HANDLERS}
    misspelt = _project(tmp_path / "misspelt", files, {"sources": ["app.handlers.on_tool_event:body"]})
    result = run_cli(misspelt, "--format", "json")
    assert "`sources` entry 'app.handlers.on_tool_event:body' names no parameter" in result.stderr
    malformed = _project(tmp_path / "malformed", files, {"sources": ["app.handlers.on_tool_event"]})
    broken = run_cli(malformed, "--format", "json")
    assert broken.exit_code == 2 and '"module.function:parameter"' in broken.stderr
