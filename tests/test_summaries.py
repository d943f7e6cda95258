"""The summaries are a fixpoint: how far a raw value travels, and the order or names of the modules it travels
through, change nothing; every reported trace starts at a source."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from conftest import write_project

GATE = """
def coerce_tool_args(tool_name, args):
    return {key: int(value) if isinstance(value, str) and value.isdigit() else value for key, value in args.items()}
"""

REGISTRY = """
from {package}.gate import coerce_tool_args
from {package}.tools import TOOLS

def handle_function_call(tool_name, args):
    args = coerce_tool_args(tool_name, args)
    return TOOLS[tool_name](args)
"""

TOOLS = """
def recall(args):
    return args["limit"] + 1

TOOLS = {"recall": recall}
"""

SOURCE = """
import json
from {package}.{first} import {first_function}

def on_tool_call(tool_call):
    arguments = json.loads(tool_call.function.arguments)
    return {first_function}(tool_call.function.name, arguments)
"""

HOP = """
from {package}.{next} import {next_function}

def {function}(name, payload):
    return {next_function}(name, payload)
"""

SINK = """
from {package}.tools import TOOLS

def {function}(name, payload):
    return TOOLS[name](payload)
"""


def chain_project(root: Path, hops: int, names: List[str], package: str = "agent") -> Tuple[Path, str]:
    """A project whose gated registry path repairs the arguments, and a second path that hands the wire-parsed
    arguments through ``hops`` functions, each in a module named by ``names``, to the same table. Returns the
    root and the path of the module holding the raw dispatch."""
    functions = [f"step_{index}" for index in range(hops)]
    files: Dict[str, str] = {
        f"{package}/__init__.py": "",
        f"{package}/gate.py": GATE,
        f"{package}/registry.py": REGISTRY.format(package=package),
        f"{package}/tools.py": TOOLS,
        f"{package}/loop.py": SOURCE.format(package=package, first=names[0], first_function=functions[0]),
    }
    for index in range(hops - 1):
        files[f"{package}/{names[index]}.py"] = HOP.format(
            package=package, function=functions[index], next=names[index + 1], next_function=functions[index + 1]
        )
    files[f"{package}/{names[hops - 1]}.py"] = SINK.format(package=package, function=functions[hops - 1])
    return write_project(root, files), f"{package}/{names[hops - 1]}.py"


def gated_project(root: Path, loop: str) -> Path:
    """The gated registry path of ``chain_project`` and ``loop`` as ``agent/loop.py``."""
    files = {
        "agent/__init__.py": "",
        "agent/gate.py": GATE,
        "agent/registry.py": REGISTRY.format(package="agent"),
        "agent/tools.py": TOOLS,
        "agent/loop.py": loop,
    }
    return write_project(root, files)


def findings(run_cli, root: Path) -> List[dict]:
    run = run_cli(root, "--format", "json", ".")
    assert run.exit_code in (0, 1), run.stderr
    return run.findings()


@pytest.mark.parametrize("hops", [1, 3, 6, 9])
def test_a_raw_path_is_found_however_many_calls_it_crosses(tmp_path: Path, run_cli, hops: int) -> None:
    root, sink = chain_project(tmp_path, hops, [f"hop{index}" for index in range(hops)])
    found = [finding for finding in findings(run_cli, root) if finding["code"] == "DL101"]
    assert [(finding["path"], finding["line"]) for finding in found] == [(sink, 5)]
    trace = found[0]["trace"]
    assert trace[0]["message"].startswith("source: the model's arguments")
    assert trace[0]["path"] == "agent/loop.py"
    assert len([step for step in trace if step["message"].startswith("passed to")]) == hops


def test_findings_do_not_depend_on_module_names_or_order(tmp_path: Path, run_cli) -> None:
    """The same program under module names that sort in other orders (``aaa_deep`` first or ``zzz_deep`` last)
    reports the same findings, with the same trace, at the same places of the renamed files."""
    hops = 5
    shapes = []
    for attempt in range(4):
        names = [f"m{index}" for index in range(hops)]
        prefixes = ["aaa", "mmm", "zzz", "bbb", "yyy"]
        random.Random(attempt).shuffle(prefixes)
        names = [f"{prefix}_{name}" for prefix, name in zip(prefixes, names)]
        (tmp_path / f"try{attempt}").mkdir()
        root, _ = chain_project(tmp_path / f"try{attempt}", hops, names)
        renamed = {f"agent/{name}.py": f"agent/hop{index}.py" for index, name in enumerate(names)}
        shape = [
            (
                finding["code"],
                renamed.get(finding["path"], finding["path"]),
                finding["line"],
                tuple((renamed.get(step["path"], step["path"]), step["line"]) for step in finding["trace"]),
            )
            for finding in findings(run_cli, root)
        ]
        shapes.append(sorted(shape))
    assert shapes[0] and all(shape == shapes[0] for shape in shapes)


def test_a_cycle_of_calls_neither_hides_the_source_nor_invents_one(tmp_path: Path, run_cli) -> None:
    """Two functions that hand the arguments back and forth: the raw value entering the cycle is found with a
    trace from its source; a cycle nothing raw enters reports nothing."""
    root = gated_project(
        tmp_path,
        """
import json
from agent.tools import TOOLS

def ping(name, payload, depth):
    if depth:
        return pong(name, payload, depth - 1)
    return TOOLS[name](payload)

def pong(name, payload, depth):
    return ping(name, payload, depth)

def quiet(name, payload, depth):
    if depth:
        return loud(name, payload, depth - 1)
    return TOOLS[name](payload)

def loud(name, payload, depth):
    return quiet(name, payload, depth)

def on_tool_call(tool_call):
    return ping(tool_call.function.name, json.loads(tool_call.function.arguments), 3)
""",
    )
    found = [finding for finding in findings(run_cli, root) if finding["code"] == "DL101"]
    assert [(finding["path"], finding["line"]) for finding in found] == [("agent/loop.py", 8)]
    assert found[0]["trace"][0]["message"].startswith("source:")


def test_every_reported_trace_starts_at_a_source(run_cli) -> None:
    """Across the fixture projects, no finding about a tool call is reported without the source of what it
    hands over."""
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    checked = 0
    for fixture in sorted(path for path in fixtures.iterdir() if (path / "expected.txt").is_file()):
        for finding in findings(run_cli, fixture) if fixture.name != "parse_error" else []:
            if finding["code"] in ("DL101", "DL102"):
                checked += 1
                assert finding["trace"] and finding["trace"][0]["message"].startswith("source:"), (
                    fixture.name,
                    finding["path"],
                    finding["line"],
                    finding["trace"],
                )
    assert checked > 20


def test_a_chain_of_calls_as_long_as_a_project_has_needs_no_deep_stack_from_the_caller(tmp_path: Path) -> None:
    """The library entry (not the command line) solves and traces a raw path through 1,500 calls at the
    interpreter's own recursion limit."""
    from dispatchlint.plan import RunOptions
    from dispatchlint.engine import analyse

    hops = 1_500
    functions = "".join(
        f"def step_{index}(name, payload):\n    return step_{index + 1}(name, payload)\n\n" for index in range(hops)
    )
    loop = (
        "import json\nfrom agent.tools import TOOLS\n\n"
        + functions
        + f"def step_{hops}(name, payload):\n    return TOOLS[name](payload)\n\n"
        + "def on_tool_call(tool_call):\n"
        + "    return step_0(tool_call.function.name, json.loads(tool_call.function.arguments))\n"
    )
    root = gated_project(tmp_path, loop)
    results = analyse([root], RunOptions(use_cache=False), cwd=root)
    found = [finding for result in results for finding in result.findings if finding.code == "DL101"]
    assert [(finding.path, finding.span.line) for finding in found] == [("agent/loop.py", 3 * hops + 5)]
    assert found[0].trace[0].message.startswith("source: the model's arguments")
