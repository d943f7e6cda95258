"""DL003 missing-gate."""

from __future__ import annotations

from typing import Iterable, List

from dispatchlint.locations import Location
from dispatchlint.linking import Project, Site, display_function
from dispatchlint.linking.configured import missing_gates
from dispatchlint.rules.rule import Case, Finding, Rule, related

_CONFIG = {"gates": ["agent.validation.repair_arguments"]}

_VALIDATION = """
def repair_arguments(tool_name, args):
    return dict(args)
"""

_GATED = """
import json

from agent.validation import repair_arguments

def plan(steps):
    return list(steps)

TOOLS = {"plan": plan}

def run(tool_call):
    args = repair_arguments(tool_call.name, json.loads(tool_call.arguments))
    return TOOLS[tool_call.name](**args)
"""

#: The same module once ``agent/validation.py`` and its call are deleted.
_RAW = """
import json

def plan(steps):
    return list(steps)

TOOLS = {"plan": plan}

def run(tool_call):
    return TOOLS[tool_call.name](**json.loads(tool_call.arguments))
"""

#: The gate comes from an installed package: called, not defined, so not missing.
_INSTALLED = _GATED.replace("from agent.validation import", "from vendor.validation import")
_INSTALLED_CONFIG = {"gates": ["vendor.validation.repair_arguments"]}

#: No tool is dispatched at all: a configured name that names nothing is only a warning.
_NO_TOOLS = """
def plan(steps):
    return list(steps)

TOOLS = {"plan": plan}
"""

#: Only a test runs a tool with raw arguments (test code is never reported).
_TEST = """
import json

from agent.tools import TOOLS

def test_plan(tool_call):
    assert TOOLS[tool_call.name](**json.loads(tool_call.arguments)) == []
"""


class MissingGate(Rule):
    """## What it does
    Reports a gate named in `gates` of `[tool.dispatchlint]` that the project no longer defines or calls, when
    tools now run with the model's raw arguments. The finding is at the entry in the configuration file; each
    call that runs a tool with raw arguments is a related location. A configured gate that names nothing while
    no tool runs raw stays a warning, as other configured names that name nothing do.

    ## Why is this bad?
    Deleting or renaming the gate makes every path raw alike: no gated path is left for DL101 to compare the
    raw ones with, so the default rules would report nothing, while the configuration still says the project
    repairs its tools' arguments. The tools get `"42"` for 42 and arrays as JSON strings again.

    ## Example
    ```toml
    [tool.dispatchlint]
    gates = ["agent.validation.repair_arguments"]  # agent/validation.py was deleted
    ```
    ```python
    TOOLS[tool_call.name](**json.loads(tool_call.arguments))  # nothing repairs the arguments now
    ```

    ## Use instead
    Restore the gate and call it on the tools' paths (or correct its name in `gates`):
    ```python
    args = repair_arguments(tool_call.name, json.loads(tool_call.arguments))
    TOOLS[tool_call.name](**args)
    ```
    If the project gives up its gate on purpose, remove the entry from `gates`; DL102 (opt-in) then reports
    the tools that run unrepaired.

    ## Fix safety
    No fix is offered: whether to restore the gate or drop it is the project's decision.
    """

    code = "DL003"
    name = "missing-gate"
    VALID = [
        Case({"agent/__init__.py": "", "agent/validation.py": _VALIDATION, "agent/tools.py": _GATED}, (), _CONFIG),
        Case({"agent/__init__.py": "", "agent/tools.py": _INSTALLED}, (), _INSTALLED_CONFIG),
        Case({"agent/__init__.py": "", "agent/tools.py": _NO_TOOLS}, (), _CONFIG),
        Case({"agent/__init__.py": "", "agent/tools.py": _NO_TOOLS, "tests/test_tools.py": _TEST}, (), _CONFIG),
    ]
    INVALID = [Case({"agent/__init__.py": "", "agent/tools.py": _RAW}, (("pyproject.toml", 4),), _CONFIG)]

    def check(self, project: Project) -> Iterable[Finding]:
        missing = missing_gates(project)
        if not missing:
            return
        raw = _raw_dispatches(project)
        if not raw:
            return  # nothing runs unrepaired: a stale entry, which the run's warning names
        origin = project.config.origin
        calls = f"{len(raw)} tool call{'s' if len(raw) != 1 else ''} run{'s' if len(raw) == 1 else ''}"
        for name in missing:
            message = (
                f"{calls} with the model's raw arguments: configured gate `{name}` is neither defined nor called "
                "in the project; restore it on the tools' paths, or remove it from `gates` if the project gave "
                "it up"
            )
            yield Finding(self.code, self.name, message, origin.path, origin.place_of_gate(name), tuple(raw))


def _raw_dispatches(project: Project) -> List[Location]:
    """Each place outside test code where a tool runs with the model's arguments as they arrived (a source of
    them can be shown): test code is never reported, and a test that feeds a tool raw arguments is no bypass."""
    places = {}
    for site in project.sites:
        if site.unguarded and not project.graph.is_test(site.module) and (site.module.path, site.span) not in places:
            if project.taint.trace(site, "sink: the tool runs with them, unrepaired"):
                places[(site.module.path, site.span)] = related(site.module, site.span, _described(site))
    return sorted(places.values(), key=lambda item: (item.path, item.span.line, item.span.column))


def _described(site: Site) -> str:
    where = f"in `{display_function(site.function)}`" if site.function else "at module level"
    return f"a tool runs {where} with raw arguments"
