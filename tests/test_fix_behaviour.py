"""Fixes that never change what a program does, beyond repairing its tools' arguments: each case is a project
fixed through the real command line, and where the fix is applied the fixed code is run to show its tools receive
repaired arguments; where it would change something else, the fix is held back and the finding says why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, subprocess_env, write_project
from dispatchlint import __version__
from fixproject import copy_project, python_sources


def _python(project: Path, code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter with the project first on its path."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, env=subprocess_env(project), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


_NUMBERS = "{'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}}}"
_NO_GATE_TOOLS = (
    "import json\n\n"
    "from bot.schemas import SCHEMAS\n\n\n"
    "def add(a, b):\n    return a + b\n\n\n"
    "TOOLS = {'add': add}\n\n\n"
    "def run(name, raw):\n    return TOOLS[name](**json.loads(raw))\n"
)


def test_a_schema_module_that_imports_nothing_is_no_import_cycle(run_cli, tmp_path: Path) -> None:
    """The package's ``__init__`` imports the tools, and the schema module beside them imports nothing: loading
    the schema module runs that ``__init__`` first, but not as part of the schema module's own body."""
    files = {
        "bot/__init__.py": "from bot.tools import run\n",
        "bot/schemas.py": f"SCHEMAS = {{'add': {_NUMBERS}}}\n",
        "bot/tools.py": _NO_GATE_TOOLS.replace("from bot.schemas import SCHEMAS\n\n\n", ""),
    }
    project = write_project(tmp_path, files, {"schemas": "bot.schemas:SCHEMAS"})
    result = run_cli(project, "--select", "DL102", "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    fixed = (project / "bot" / "tools.py").read_text(encoding="utf-8")
    assert "from bot.schemas import SCHEMAS" in fixed and "TOOLS = wrap_table(_RAW_TOOLS, SCHEMAS)" in fixed
    for first in ("import bot.schemas; ", ""):  # whichever module the program loads first
        assert _python(project, first + 'from bot import run; print(run(\'add\', \'{"a": "2", "b": "3"}\'))') == "5"


def test_a_schema_module_that_imports_the_tools_is_an_import_cycle(run_cli, tmp_path: Path) -> None:
    files = {
        "bot/__init__.py": "",
        "bot/schemas.py": f"from bot.tools import TOOLS\n\nSCHEMAS = {{name: {_NUMBERS} for name in TOOLS}}\n",
        "bot/tools.py": _NO_GATE_TOOLS.replace("from bot.schemas import SCHEMAS\n\n\n", ""),
    }
    project = write_project(tmp_path, files, {"schemas": "bot.schemas:SCHEMAS"})
    findings = run_cli(project, "--select", "DL102", "--format", "json").findings()
    assert [f["fixable"] for f in findings] == [False]
    assert findings[0]["fix_help"] == (
        "no automatic fix: `bot.schemas` (the schema source) imports `bot.tools`: an import cycle"
    )


def test_the_fix_says_how_many_findings_it_fixed_and_how_many_remain(run_cli, tmp_path: Path) -> None:
    tools = (
        "import json\n\n"
        "from agent.gate import coerce_tool_args\n\n\n"
        "def plan(args):\n    return args\n\n\n"
        "TOOLS = {'plan': plan}\n"
        "A = B = {'plan': plan}  # two names for one table: not fixed automatically\n\n\n"
        "def run(call):\n"
        "    name = call.function.name\n"
        "    args = json.loads(call.function.arguments)\n"
        "    TOOLS[name](args)\n"
        "    A[name](args)\n"
        "    return TOOLS[name](args)\n\n\n"
        "def run_gated(name, args):\n"
        "    return TOOLS[name](coerce_tool_args(name, args))\n"
    )
    gate = "def coerce_tool_args(tool_name, args):\n    return dict(args)\n"
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/gate.py": gate, "agent/tools.py": tools})
    assert run_cli(project).stdout.endswith("Found 3 findings.\n[*] 2 fixable with --fix.\n")
    fixed = run_cli(project, "--fix")
    assert fixed.exit_code == 1
    assert fixed.stdout.endswith("Found 3 findings (2 fixed, 1 remaining).\n")
    again = run_cli(project, "--fix")
    assert again.stdout.endswith("Found 1 finding.\n") and again.exit_code == 1
    quiet = run_cli(project, "--fix", "-q")
    assert "Found" not in quiet.stdout


# ---------------------------------------------------------------------------------------------- string uses

_PLAN_PARSE = """    steps = args["steps"]
    if isinstance(steps, str):
        # some models send the list as a JSON string
        steps = json.loads(steps)
"""
#: ``_apply`` of the example as ``execute_tool`` runs it (reading the table raw): what it returns, or its error.
_RUN_PLAN = """
from taskbot.context import RunContext
from taskbot.loop import Agent, execute_tool
ctx = RunContext(task="t")
try:
    print(repr(execute_tool(Agent(client=None, model="m"), "plan", {"steps": '["a", "b"]'}, ctx)), ctx.turn)
except Exception as error:
    print(type(error).__name__)
"""
_PLANNED = "'Plan:\\n1. a\\n2. b'"


def _example_with_plan(tmp_path: Path, body: str) -> Path:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    builtin = project / "taskbot" / "builtin.py"
    source = builtin.read_text(encoding="utf-8")
    assert _PLAN_PARSE in source
    builtin.write_text(source.replace(_PLAN_PARSE, body), encoding="utf-8")
    return project


@pytest.mark.parametrize(
    "body, turns",
    [
        ('    steps = args["steps"]\n    steps = json.loads(steps); ctx.turn += 1\n', 1),
        ('    steps = json.loads(args["steps"].strip())\n', 0),
        ('    steps = json.loads(args["steps"])\n', 0),
    ],
    ids=["parse-sharing-its-line", "parse-of-the-stripped-text", "parse-of-the-argument"],
)
@pytest.mark.parametrize("rules", [(), ("--select", "DL101")], ids=["default-rules", "the-wrap-alone"])
def test_a_wrap_deletes_the_parses_it_makes_wrong(body: str, turns: int, rules, run_cli, tmp_path: Path) -> None:
    """An unguarded parse of an array parameter fails on the array the wrap hands over: the parse goes with the
    wrap, whether or not its own finding (DL201) is fixed too, and the tool gets its steps on every path."""
    project = _example_with_plan(tmp_path, body)
    assert _python(project, _RUN_PLAN) == f"{_PLANNED} {turns}"  # the model's string, parsed by hand
    findings = run_cli(project, "--format", "json", *rules).findings()
    assert all(f["fix_safety"] == "safe" for f in findings), findings
    assert {f["code"] for f in findings} == ({"DL101"} if rules else {"DL101", "DL201"})
    result = run_cli(project, *rules, "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "delete the hand-rolled `json.loads` of `steps` in `_plan`" in result.stderr or "unwrap" in result.stderr
    fixed = (project / "taskbot" / "builtin.py").read_text(encoding="utf-8")
    assert "json" not in fixed and ("    ctx.turn += 1\n" in fixed) == bool(turns)
    assert _python(project, _RUN_PLAN) == f"{_PLANNED} {turns}"  # now the wrap parses it


_REPLAN = (
    "\n\ndef replan(agent: Any, text: str, ctx: RunContext) -> str:\n    return _plan(agent, {'steps': text}, ctx)\n"
)


@pytest.mark.parametrize(
    "body, reason",
    [
        (
            '    steps = args["steps"].split(",")\n',
            "`_plan` takes `steps` for a string (`.split()`, taskbot/builtin.py:10), and after the wrap it gets the "
            "`array` its schema declares",
        ),
        (
            '    steps = [step.strip() for step in args["steps"][1:-1].split(",")]\n',
            "`_plan` takes `steps` for a string (a slice, taskbot/builtin.py:10), and after the wrap it gets the "
            "`array` its schema declares",
        ),
        (
            '    steps = json.loads(args["steps"])\n',
            "`_plan` parses `steps` by hand (taskbot/builtin.py:10), and after the wrap the parse fails, but it cannot "
            "be deleted: `_plan` is also called directly (taskbot/builtin.py:32)",
        ),
    ],
    ids=["string-method", "slice", "parse-another-caller-needs"],
)
def test_a_wrap_that_would_break_a_string_use_is_unsafe_and_says_why(body: str, reason: str, run_cli, tmp_path) -> None:
    project = _example_with_plan(tmp_path, body)
    with (project / "taskbot" / "builtin.py").open("a", encoding="utf-8") as builtin:
        builtin.write(_REPLAN)  # a caller of its own, with a string
    before = _python(project, _RUN_PLAN)
    findings = [f for f in run_cli(project, "--format", "json").findings() if f["code"] == "DL101"]
    assert [f["fix_safety"] for f in findings] == ["unsafe", "unsafe"]
    assert all(f["fix_help"] == f"unsafe fix: {reason}" for f in findings), findings[0]["fix_help"]
    sources = python_sources(project)
    result = run_cli(project, "--fix")
    assert result.exit_code == 1 and python_sources(project) == sources  # nothing written
    assert "2 more fixes available with --unsafe-fixes" in result.stderr
    assert _python(project, _RUN_PLAN) == before
    assert run_cli(project, "--fix", "--unsafe-fixes").exit_code in (0, 1)
    assert _python(project, _RUN_PLAN) != before  # what the reason warned of: the wrap changed what `_plan` does


def test_string_uses_under_a_string_test_keep_the_wrap_safe(run_cli, tmp_path: Path) -> None:
    body = (
        '    steps = args["steps"]\n'
        "    if not isinstance(steps, str):\n"
        "        steps = list(steps)\n"
        "    else:\n"
        '        steps = steps.split(",") if steps[:1] != "[" else json.loads(steps)\n'
        '    label = args["steps"].upper() if isinstance(args["steps"], str) else "list"\n'
        "    if isinstance(label, str) and label.strip():\n"
        "        ctx.turn += 1\n"
    )
    project = _example_with_plan(tmp_path, body)
    assert _python(project, _RUN_PLAN) == f"{_PLANNED} 1"
    findings = run_cli(project, "--format", "json").findings()
    assert {(f["code"], f["fix_safety"]) for f in findings} == {("DL101", "safe"), ("DL201", "safe")}
    assert run_cli(project, "--fix").exit_code == 0
    assert _python(project, _RUN_PLAN) == f"{_PLANNED} 1"


def test_a_number_taken_for_a_string_makes_the_wrap_unsafe(run_cli, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    builtin = project / "taskbot" / "builtin.py"
    source = builtin.read_text(encoding="utf-8")
    recall = '    limit = args.get("limit", 5)\n'
    assert recall in source
    builtin.write_text(source.replace(recall, '    limit = int(args["limit"]) if args["limit"].isdigit() else 5\n'))
    findings = [f for f in run_cli(project, "--format", "json").findings() if f["code"] == "DL101"]
    assert [f["fix_safety"] for f in findings] == ["unsafe", "unsafe"]
    assert "`_recall` takes `limit` for a string (`.isdigit()`" in findings[0]["fix_help"]
    assert "it gets the `integer` its schema declares" in findings[0]["fix_help"]


# ---------------------------------------------------------------------------------------------- identity and code

_GATE = (
    "SCHEMAS = {'greet': {'type': 'object', 'properties': {'times': {'type': 'integer'}}}}\n\n\n"
    "def coerce_tool_args(tool_name, args):\n"
    "    types = {k: v.get('type') for k, v in SCHEMAS.get(tool_name, {}).get('properties', {}).items()}\n"
    "    return {k: int(v) if types.get(k) == 'integer' and isinstance(v, str) else v for k, v in args.items()}\n"
)


def _greeter(reader: str) -> dict:
    """A project whose raw path runs ``greet`` after ``reader`` looked at what it took from the table."""
    tools = (
        "import inspect\n\nfrom bot.gate import coerce_tool_args\n\n\n"
        "def greet(args, context_variables=None):\n"
        "    return (context_variables or {}).get('name', '?') * int(args['times'])\n\n\n"
        "TOOLS = {'greet': greet}\n\n\n"
        f"{reader}"
        "def run_gated(name, args):\n    return TOOLS[name](coerce_tool_args(name, args))\n"
    )
    return {"bot/__init__.py": "", "bot/gate.py": _GATE, "bot/tools.py": tools}


_CODE_READER = (
    "def run(name, args, context_variables):\n"
    "    fn = TOOLS[name]\n"
    "    if 'context_variables' in fn.__code__.co_varnames:  # as openai/swarm decides what to pass\n"
    "        return fn(args, context_variables=context_variables)\n"
    "    return fn(args)\n\n\n"
)
_RUN_GREET = "from bot.tools import run; print(run('greet', {'times': '2'}, {'name': 'ab'}))"


def test_a_wrap_that_would_replace_the_code_a_project_reads_is_unsafe(run_cli, tmp_path: Path) -> None:
    project = write_project(tmp_path, _greeter(_CODE_READER))
    assert _python(project, _RUN_GREET) == "abab"
    findings = run_cli(project, "--format", "json").findings()
    assert [(f["code"], f["fix_safety"]) for f in findings] == [("DL101", "unsafe")] * 2  # both calls of `fn`
    assert all(
        f["fix_help"]
        == (
            "unsafe fix: `run` reads `__code__` of what it takes from `TOOLS` (bot/tools.py:15), and a wrapper is "
            "another function"
        )
        for f in findings
    )
    sources = python_sources(project)
    assert run_cli(project, "--fix").exit_code == 1 and python_sources(project) == sources
    assert run_cli(project, "--fix", "--unsafe-fixes").exit_code == 0
    assert _python(project, _RUN_GREET) == "??"  # what the reason warned of: the wrapper's code has no such name


def test_a_parameter_handed_a_value_of_the_table_counts_as_the_table(run_cli, tmp_path: Path) -> None:
    reader = (
        "def defaults(function):\n    return function.__defaults__\n\n\n"
        "def run(name, args):\n    fn = TOOLS[name]\n    defaults(fn)\n    return fn(args)\n\n\n"
    )
    project = write_project(tmp_path, _greeter(reader))
    findings = run_cli(project, "--format", "json").findings()
    assert [(f["code"], f["fix_safety"]) for f in findings] == [("DL101", "unsafe")]
    assert findings[0]["fix_help"] == (
        "unsafe fix: `defaults` reads `__defaults__` of its parameter `function` (bot/tools.py:14), which `run` "
        "(bot/tools.py:19) hands a value of `TOOLS`, and a wrapper is another function"
    )


def test_what_a_wrapper_keeps_can_be_read_and_the_wrap_stays_safe(run_cli, tmp_path: Path) -> None:
    """``functools.wraps`` keeps ``__name__`` and ``__wrapped__`` (which ``inspect.signature`` follows); a test
    for ``None`` holds for a wrapper as for the function."""
    reader = (
        "def run(name, args, context_variables):\n"
        "    fn = TOOLS.get(name)\n"
        "    if fn is None:\n        return 'unknown tool'\n"
        "    if 'context_variables' in inspect.signature(fn).parameters and fn.__name__ == 'greet':\n"
        "        return fn(args, context_variables=context_variables)\n"
        "    return fn(args)\n\n\n"
    )
    project = write_project(tmp_path, _greeter(reader))
    assert _python(project, _RUN_GREET) == "abab"
    findings = run_cli(project, "--format", "json").findings()
    assert [(f["code"], f["fix_safety"]) for f in findings] == [("DL101", "safe")] * 2
    assert run_cli(project, "--fix").exit_code == 0
    assert "_RAW_TOOLS = {'greet': greet}" in (project / "bot" / "tools.py").read_text(encoding="utf-8")
    assert _python(project, _RUN_GREET) == "abab"


def test_a_runtime_wrap_of_tools_whose_code_is_read_is_unsafe(run_cli, tmp_path: Path) -> None:
    """openai/swarm's shape: no gate, a table built per call from the agent's functions, ``__code__`` read to
    decide whether to pass the context."""
    core = (
        "import json\n\n\n"
        "def handle(functions, name, arguments, context_variables):\n"
        "    function_map = {f.__name__: f for f in functions}\n"
        "    args = json.loads(arguments)\n"
        "    func = function_map[name]\n"
        "    if 'context_variables' in func.__code__.co_varnames:\n"
        "        args['context_variables'] = context_variables\n"
        "    return function_map[name](**args)\n"
    )
    files = {
        "bot/__init__.py": "from bot.core import handle\n",
        "bot/schemas.py": "SCHEMAS = {'greet': {'type': 'object', 'properties': {'times': {'type': 'integer'}}}}\n",
        "bot/core.py": core,
    }
    project = write_project(tmp_path, files, {"schemas": "bot.schemas:SCHEMAS"})
    findings = run_cli(project, "--select", "DL102", "--format", "json").findings()
    assert [(f["code"], f["fix_safety"]) for f in findings] == [("DL102", "unsafe")]
    assert findings[0]["fix_help"] == (
        "unsafe fix: `handle` reads `__code__` of what it takes from `function_map` (bot/core.py:8), and a "
        "wrapper is another function"
    )
    sources = python_sources(project)
    assert run_cli(project, "--select", "DL102", "--fix").exit_code == 1 and python_sources(project) == sources


# ---------------------------------------------------------------------------------------------- suppressions

_SITES = {
    "taskbot/loop.py": "        return fn(agent, args, ctx)\n",
    "taskbot/pool.py": "                futures.append(pool.submit(BUILTIN_EXECUTORS[name], agent, args, ctx))\n",
}


@pytest.mark.parametrize(
    "suppressed", [["taskbot/loop.py", "taskbot/pool.py"], ["taskbot/loop.py"]], ids=["every-site", "one-site"]
)
def test_a_table_whose_every_dispatch_is_suppressed_is_wrapped_by_no_fix(suppressed, run_cli, tmp_path: Path) -> None:
    """DL201's fix needs the table wrapped; with every raw read of the table suppressed, the project said to
    leave it as it is, so the parse stays too (with one read still reported, the wrap is that finding's fix)."""
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    for relative in suppressed:
        path = project / relative
        line = _SITES[relative]
        path.write_text(path.read_text(encoding="utf-8").replace(line, line[:-1] + "  # noqa: DL101\n"))
    findings = run_cli(project, "--format", "json").findings()
    parse = next(f for f in findings if f["code"] == "DL201")
    everything = len(suppressed) == len(_SITES)
    assert parse["fixable"] is not everything
    if everything:
        assert parse["fix_help"] == (
            "no automatic fix: `BUILTIN_EXECUTORS` is read with raw arguments and cannot be wrapped: every finding "
            "at the dispatch sites of `BUILTIN_EXECUTORS` is suppressed"
        )
    sources = python_sources(project)
    run_cli(project, "--fix")
    builtin = (project / "taskbot" / "builtin.py").read_bytes()
    assert (builtin == sources["taskbot/builtin.py"]) is everything
    assert (python_sources(project) == sources) is everything


# ------------------------------------------------------------------------------------- a wrapped table's raw half

_RAW_READERS = {
    "taskbot/loop.py": (
        "\n\ndef execute_raw(agent: Agent, name: str, args: Dict[str, Any], ctx: RunContext) -> str:\n"
        "    from .builtin import _RAW_BUILTIN_EXECUTORS\n\n"
        "    return _RAW_BUILTIN_EXECUTORS[name](agent, args, ctx)\n"
    ),
    "taskbot/builtin.py": (
        "\n\ndef run_now(agent: Any, name: str, args: Dict[str, Any], ctx: RunContext) -> str:\n"
        "    return _RAW_BUILTIN_EXECUTORS[name](agent, args, ctx)\n"
    ),
    "taskbot/later.py": (
        "from typing import Any, Dict\n\nfrom taskbot import builtin\nfrom taskbot.context import RunContext\n\n\n"
        "def run_later(agent: Any, name: str, args: Dict[str, Any], ctx: RunContext) -> str:\n"
        "    return builtin._RAW_BUILTIN_EXECUTORS[name](agent, args, ctx)\n"
    ),
}
_RECALL = """
from taskbot.builtin import run_now
from taskbot.context import RunContext
from taskbot.later import run_later
from taskbot.loop import Agent, execute_raw
agent, ctx = Agent(client=None, model="m", memory=["buy milk", "buy eggs"]), RunContext(task="t")
for read in (execute_raw, run_later, run_now):
    try:
        print(repr(read(agent, "recall", {"query": "buy", "limit": "1"}, ctx)))
    except TypeError:  # "1" for the limit: a slice by a string fails
        print("TypeError")
"""


def test_a_new_reader_of_a_wrapped_table_s_raw_half_reads_the_wrapped_table(run_cli, tmp_path: Path) -> None:
    """After a first ``--fix``, code that reads ``_RAW_BUILTIN_EXECUTORS`` raw is pointed at
    ``BUILTIN_EXECUTORS``: no ``_RAW__RAW_`` rename, no second wrapper, and the readers get repaired arguments."""
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    assert run_cli(project, "--fix").exit_code == 0
    once = (project / "taskbot" / "builtin.py").read_text(encoding="utf-8")
    for relative, code in _RAW_READERS.items():
        path = project / relative
        path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + code, encoding="utf-8")
    assert _python(project, _RECALL).splitlines() == ["TypeError"] * 3
    findings = run_cli(project, "--format", "json").findings()
    assert sorted((f["code"], f["path"], f["fix_safety"]) for f in findings) == [
        ("DL101", path, "safe") for path in ("taskbot/builtin.py", "taskbot/later.py", "taskbot/loop.py")
    ]
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    builtin = (project / "taskbot" / "builtin.py").read_text(encoding="utf-8")
    assert "_RAW__RAW_" not in builtin and builtin.count("def _coerced") == 1
    assert builtin == once + _RAW_READERS["taskbot/builtin.py"].replace("_RAW_BUILTIN", "BUILTIN")
    loop = (project / "taskbot" / "loop.py").read_text(encoding="utf-8")
    assert "    from .builtin import BUILTIN_EXECUTORS\n\n    return BUILTIN_EXECUTORS[name](agent" in loop
    assert "return builtin.BUILTIN_EXECUTORS[name]" in (project / "taskbot" / "later.py").read_text(encoding="utf-8")
    assert _python(project, _RECALL).splitlines() == ["'buy milk'"] * 3
    assert "Rewriting taskbot/later.py: read `BUILTIN_EXECUTORS` (which wraps `_RAW_BUILTIN_EXECUTORS`)" in (
        result.stderr
    )


def test_a_new_reader_of_a_runtime_wrapped_table_reads_the_wrapped_table(run_cli, tmp_path: Path) -> None:
    files = {
        "bot/__init__.py": "",
        "bot/schemas.py": f"SCHEMAS = {{'add': {_NUMBERS}}}\n",
        "bot/tools.py": _NO_GATE_TOOLS,
    }
    project = write_project(tmp_path, files)
    assert run_cli(project, "--select", "DL102", "--fix").exit_code == 0
    tools = project / "bot" / "tools.py"
    assert "TOOLS = wrap_table(_RAW_TOOLS, SCHEMAS)" in tools.read_text(encoding="utf-8")
    (project / "bot" / "direct.py").write_text(
        "import json\n\nfrom bot.tools import _RAW_TOOLS as tools\n\n\n"
        "def run_direct(name, raw):\n    return tools[name](**json.loads(raw))\n",
        encoding="utf-8",
    )
    assert run_cli(project, "--fix").exit_code == 0  # the wrapped table is a gate now: DL101 reports the reader
    assert "from bot.tools import TOOLS as tools\n" in (project / "bot" / "direct.py").read_text(encoding="utf-8")
    assert tools.read_text(encoding="utf-8").count("wrap_table(") == 1
    call = 'from bot.direct import run_direct; print(run_direct(\'add\', \'{"a": "2", "b": 3}\'))'
    assert _python(project, call) == "5"


# ---------------------------------------------------------------------------------------- the runtime dependency

_REQUIREMENT = f"dispatchlint-runtime>={__version__}"
_DECLARES = "[tool.dispatchlint]\r\nexclude = []\r\n"
#: A project's packaging files before the fix, and after it (None: unchanged).
_PACKAGING = {
    "project-dependencies": (
        {
            "pyproject.toml": '[project]\r\nname = "bot"\r\ndependencies = [\r\n    "httpx>=0.27",  # the client\r\n'
            '    "pydantic[email]>=2"\r\n]\r\n\r\n' + _DECLARES
        },
        {
            "pyproject.toml": '[project]\r\nname = "bot"\r\ndependencies = [\r\n    "httpx>=0.27",  # the client\r\n'
            f'    "pydantic[email]>=2",\r\n    "{_REQUIREMENT}",\r\n]\r\n\r\n' + _DECLARES
        },
    ),
    "poetry": (
        {"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.9"\n\n[tool.poetry.group.dev.dependencies]\n'},
        {
            "pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.9"\n'
            f'dispatchlint-runtime = ">={__version__}"\n\n[tool.poetry.group.dev.dependencies]\n'
        },
    ),
    "requirements": (
        {"pyproject.toml": "[tool.ruff]\n", "requirements.txt": "httpx>=0.27"},
        {"requirements.txt": f"httpx>=0.27\n{_REQUIREMENT}\n"},
    ),
    "declared-already": ({"pyproject.toml": '[project]\nname = "bot"\ndependencies = ["Dispatchlint>=0.1"]\n'}, {}),
    "nowhere": ({"pyproject.toml": "[tool.ruff]\n"}, {}),
}


@pytest.mark.parametrize("layout", sorted(_PACKAGING))
def test_a_fix_that_wires_the_runtime_declares_it(layout: str, run_cli, tmp_path: Path) -> None:
    before, after = _PACKAGING[layout]
    files = {"bot/__init__.py": "", "bot/schemas.py": f"SCHEMAS = {{'add': {_NUMBERS}}}\n"}
    files["bot/tools.py"] = _NO_GATE_TOOLS
    for relative, text in {**files, **before}.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(text.encode("utf-8"))
    result = run_cli(tmp_path, "--select", "DL102", "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    for relative, text in before.items():
        assert (tmp_path / relative).read_bytes() == after.get(relative, text).encode("utf-8"), relative
    declared = [line for line in result.stderr.splitlines() if _REQUIREMENT in line]
    if layout == "nowhere":
        assert declared == [
            f"note: the fixed code imports `dispatchlint.runtime`: add `{_REQUIREMENT}` to the project's dependencies "
            "(no pyproject.toml with a [project] table or Poetry dependencies, and no requirements.txt)"
        ]
    elif after:
        (changed,) = after
        assert declared and declared[0].startswith(f"Rewriting {changed}: add `{_REQUIREMENT}` to ")
    else:
        assert not declared
    assert _python(tmp_path, 'from bot.tools import run; print(run(\'add\', \'{"a": "2", "b": "3"}\'))') == "5"


def _chain_project(arm: str) -> dict:
    gate = (
        "SCHEMAS = {'plan': {'type': 'object', 'properties': {'steps': {'type': 'array'}}}}\n\n\n"
        "def coerce_tool_args(tool_name, args):\n"
        "    import json\n"
        "    steps = args.get('steps')\n"
        "    return {**args, 'steps': json.loads(steps)} if isinstance(steps, str) else args\n\n\n"
        "def handle_function_call(tool_name, args):\n"
        "    return coerce_tool_args(tool_name, args)\n"
    )
    agent = (
        "from bot.gate import handle_function_call\n\n\n"
        "def plan(steps):\n    return [str(step) for step in steps]\n\n\n"
        "def invoke(tool_name, tool_args):\n"
        "    if tool_name == 'plan':\n"
        f"        return {arm}\n"
        "    return handle_function_call(tool_name, tool_args)\n"
    )
    return {"bot/__init__.py": "", "bot/gate.py": gate, "bot/agent.py": agent}


@pytest.mark.parametrize(
    "arm, safety",
    [
        ("plan(tool_args['steps']) if tool_args['steps'].startswith('[') else []", "unsafe"),
        ("plan(tool_args['steps'])", "safe"),
    ],
)
def test_a_coercion_ahead_of_a_chain_whose_arm_takes_a_piece_for_a_string_is_unsafe(
    arm: str, safety: str, run_cli, tmp_path: Path
) -> None:
    project = write_project(tmp_path, _chain_project(arm))
    findings = run_cli(project, "--format", "json").findings()
    assert [(f["code"], f["fix_safety"]) for f in findings] == [("DL101", safety)]
    if safety == "unsafe":
        assert findings[0]["fix_help"] == (
            "unsafe fix: the `plan` arm takes `steps` for a string (`.startswith()`, bot/agent.py:10), and after "
            "the coercion it gets the `array` its schema declares"
        )
    print_plan = "from bot.agent import invoke; print(invoke('plan', {'steps': '[\"a\", \"b\"]'}))"
    before = _python(project, print_plan)
    run_cli(project, "--fix")
    assert _python(project, print_plan) == (before if safety == "unsafe" else "['a', 'b']")


def test_a_table_of_callables_its_callers_hand_in_is_not_called_a_table_of_tool_objects(
    run_cli, tmp_path: Path
) -> None:
    """``self.tools = {"search": search}`` of ``__init__(self, search)``: the fix cannot see the functions, and
    says so rather than calling them tool objects."""
    files = {
        "agent/__init__.py": "",
        "agent/gate.py": "def coerce_tool_args(name, args):\n    return args\n",
        "agent/loop.py": (
            "import json\n\nfrom agent.gate import coerce_tool_args\n\n\n"
            "class Agent:\n"
            "    def __init__(self, search):\n"
            "        self.tools = {'search': search}\n\n"
            "    def gated(self, call):\n"
            "        args = coerce_tool_args(call.function.name, json.loads(call.function.arguments))\n"
            "        return self.tools[call.function.name](**args)\n\n"
            "    def raw(self, call):\n"
            "        return self.tools[call.function.name](**json.loads(call.function.arguments))\n"
        ),
    }
    (finding,) = run_cli(write_project(tmp_path, files), "--format", "json").findings()
    assert (finding["code"], finding["line"], finding["fixable"]) == ("DL101", 15, False)
    assert finding["fix_help"] == (
        "no automatic fix: the values of `Agent.tools` are no functions the fix can see (objects, or callables its "
        "callers hand in); repair the arguments before the call"
    )


_CLOSURE_GATE = (
    "SCHEMAS = {\n"
    "    'todo': {'type': 'object', 'properties': {'todos': {'type': 'array'}, 'merge': {'type': 'boolean'}}},\n"
    "    'search': {'type': 'object', 'properties': {'query': {'type': 'string'}, 'limit': {'type': 'integer'}}},\n"
    "}\n\n\n"
    "def coerce_tool_args(tool_name, args):\n"
    "    import json\n"
    "    repaired = dict(args)\n"
    "    for key, spec in SCHEMAS.get(tool_name, {}).get('properties', {}).items():\n"
    "        value = repaired.get(key)\n"
    "        if isinstance(value, str) and spec['type'] in ('array', 'integer', 'boolean'):\n"
    "            repaired[key] = json.loads(value)\n"
    "    return repaired\n\n\n"
    "def handle_function_call(tool_name, args):\n"
    "    return ('registry', tool_name, coerce_tool_args(tool_name, args))\n"
)
_CLOSURE_MIDDLEWARE = "def run_middleware(name, args, execute):\n    return execute(dict(args, traced=True))\n"
_CLOSURE_LOOP = '''\
import json

from bot.middleware import run_middleware


def todo(todos, merge):
    return ("todo", [item.upper() for item in todos], merge is True)


def search(query, limit):
    return ("search", query, limit + 1)


def invoke_tool(agent, function_name, raw_arguments, skip_middleware=False):
    function_args = json.loads(raw_arguments)
    if function_name == "todo":
        def _execute(next_args):
            """Runs later, with what the middleware hands on."""
            return todo(todos=next_args.get("todos"), merge=next_args.get("merge", False))
    elif function_name == "search":
        def _execute(next_args: dict):
            query = next_args.get("query", "")
            return search(query, limit=next_args.get("limit", 3))
    else:
        def _execute(next_args):
            from bot.gate import handle_function_call
            return handle_function_call(function_name, next_args)

    if skip_middleware:
        return _execute(function_args)
    return run_middleware(function_name, function_args, lambda next_args: _execute(next_args))
'''


def test_arms_that_bind_closures_run_later_repair_the_arguments_each_closure_is_handed(run_cli, tmp_path: Path) -> None:
    """The name-chain arms of an agent loop bind ``_execute`` closures that a middleware runs later, with whatever
    it hands on: a coercion ahead of the chain would repair what the middleware is given, not what it passes
    the closure. The fix repairs each raw arm's closure's parameter first thing in its body, with the gate the
    fallback reaches, and leaves the gated fallback's closure alone."""
    files = {
        "bot/__init__.py": "",
        "bot/gate.py": _CLOSURE_GATE,
        "bot/middleware.py": _CLOSURE_MIDDLEWARE,
        "bot/loop.py": _CLOSURE_LOOP,
    }
    project = write_project(tmp_path, files)
    findings = run_cli(project, "--format", "json").findings()
    assert [(f["code"], f["line"], f["fix_safety"]) for f in findings] == [("DL101", 16, "safe"), ("DL101", 20, "safe")]
    todo = 'print(invoke_tool(None, \'todo\', \'{"todos": "[\\\\"a\\\\"]", "merge": "true"}\'))'
    search = 'print(invoke_tool(None, \'search\', \'{"query": "x", "limit": "4"}\', skip_middleware=True))'
    other = "print(invoke_tool(None, 'other', '{\"limit\": \"4\"}'))"
    calls = "\n".join(["from bot.loop import invoke_tool", todo, search, other])
    assert _python(project, "\n".join(["from bot.loop import invoke_tool", todo, other])).splitlines() == [
        "('todo', ['[', '\"', 'A', '\"', ']'], False)",  # the raw string iterated, and "true" is not True
        "('registry', 'other', {'limit': '4', 'traced': True})",
    ]
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    fixed = (project / "bot" / "loop.py").read_text(encoding="utf-8")
    coercion = "            next_args = coerce_tool_args(function_name, next_args)\n"
    assert fixed == _CLOSURE_LOOP.replace(
        "from bot.middleware import run_middleware\n",
        "from bot.gate import coerce_tool_args\nfrom bot.middleware import run_middleware\n",
    ).replace(
        '            """Runs later, with what the middleware hands on."""\n',
        '            """Runs later, with what the middleware hands on."""\n' + coercion,
    ).replace("        def _execute(next_args: dict):\n", "        def _execute(next_args: dict):\n" + coercion)
    assert _python(project, calls).splitlines() == [
        "('todo', ['A'], True)",
        "('search', 'x', 5)",
        "('registry', 'other', {'limit': '4', 'traced': True})",
    ]
    assert run_cli(project).exit_code == 0
