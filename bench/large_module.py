"""Indexing one large module: time and peak memory against size, with libcst's parse as the floor.

    python bench/large_module.py [--sizes 100,250,500,1000] [--profile KB]

A module of the requested size (in KB) is generated from one unit of agent code repeated under fresh names: an
optional import in a ``try``, a schema constant and a schema list, a module-level ``if``, tools that parse
their parameters by hand, a table of executors (one a lambda), a class whose method dispatches through an
if/elif chain on the tool's name, a dispatcher that looks a tool up in the table. Each size is measured in
three fresh child processes:

- floor: ``libcst.parse_module`` and ``resolve(PositionProvider)``, the metadata the indexer reads;
- index: :func:`dispatchlint.indexing.indexer.index_source` alone (compile, parse, positions, facts);
- whole run: ``python -m dispatchlint FILE --no-cache -v`` (index, link, rules, fixability), with a
  ``max-file-size`` above the module's size.

Times are CPU seconds (all threads) of the child, which another process's load disturbs less than wall-clock
time (the whole run shows both); the machine is shared, so run it twice and read the spread. Indexing is
linear when the per-KB column stays about constant from the smallest size to the largest. Peak memory is each
child's maximum resident set. ``--profile KB`` prints the indexer's cProfile hot spots for a module of that
size instead. ``--shape`` picks another module: ``branches`` (module-level names and ``if`` statements),
``elif`` (one if/elif chain whose arms bind different names) and ``constants`` (constants built from
constants) are the shapes that once took quadratic and exponential time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]

_HEADER = '''"""A generated agent module: many tools, tables, chains and dispatchers."""

import json
from typing import Any, Callable, Dict, List


def coerce_tool_args(tool_name: str, args: Dict[str, Any]) -> Dict[str, Any]:
    """Repair ``args`` against the parameter schema of ``tool_name``."""
    parameters = SCHEMAS.get(tool_name) or {}
    properties = parameters.get("properties", {})
    repaired = dict(args)
    for key, value in args.items():
        spec = properties.get(key) or {}
        if isinstance(value, str) and spec.get("type") in ("integer", "array"):
            repaired[key] = json.loads(value)
    return repaired


SCHEMAS: Dict[str, Dict[str, Any]] = {}
'''

_UNIT = """

try:
    from fastjson_{n} import loads as _loads_{n}
except ImportError:
    _loads_{n} = json.loads

PLAN_PARAMETERS_{n} = {{
    "type": "object",
    "properties": {{
        "steps": {{"type": "array", "items": {{"type": "string"}}}},
        "replace": {{"type": "boolean", "description": "Replace the current plan."}},
    }},
    "required": ["steps"],
}}
DEFINITIONS_{n}: List[Dict[str, Any]] = [
    {{
        "name": "plan_{n}",
        "description": "Write or replace the step-by-step plan number {n}.",
        "parameters": PLAN_PARAMETERS_{n},
    }},
    {{
        "name": "recall_{n}",
        "description": "Search memory {n}.",
        "parameters": {{
            "type": "object",
            "properties": {{"query": {{"type": "string"}}, "limit": {{"type": "integer"}}}},
            "required": ["query"],
        }},
    }},
]
if DEFINITIONS_{n}:
    SCHEMAS.update({{d["name"]: d["parameters"] for d in DEFINITIONS_{n}}})


def _plan_{n}(agent: Any, args: Dict[str, Any]) -> str:
    steps = args["steps"]
    if isinstance(steps, str):
        steps = json.loads(steps)
    if args.get("replace", True):
        agent.plan = [str(step) for step in steps]
    else:
        agent.plan.extend(str(step) for step in steps)
    return "\\n".join(f"{{i}}. {{step}}" for i, step in enumerate(agent.plan, 1))


def _recall_{n}(agent: Any, args: Dict[str, Any]) -> str:
    query = args["query"].lower()
    limit = args.get("limit", 5)
    hits = [memory for memory in agent.memory if query in memory.lower()]
    return "\\n".join(hits[:limit]) or "No matching memories."


def _search_{n}(agent: Any, args: Dict[str, Any]) -> str:
    return ", ".join(sorted(agent.index.get(args.get("term", ""), [])))


EXECUTORS_{n}: Dict[str, Callable[[Any, Dict[str, Any]], str]] = {{
    "plan_{n}": _plan_{n},
    "recall_{n}": _recall_{n},
    "search_{n}": lambda agent, args: _search_{n}(agent, args),
}}


class Worker{n}:
    def __init__(self, agent: Any, limit: int = {n}) -> None:
        self.agent = agent
        self.limit = limit
        self.tools = EXECUTORS_{n}

    def handle(self, name: str, arguments: str) -> str:
        args = json.loads(arguments or "{{}}")
        if name == "plan_{n}":
            return _plan_{n}(self.agent, args)
        elif name == "recall_{n}":
            return _recall_{n}(self.agent, args)
        elif name in ("search_{n}", "find_{n}"):
            return _search_{n}(self.agent, args)
        else:
            return self.fallback(name, args)

    def fallback(self, name: str, args: Dict[str, Any]) -> str:
        fn = self.tools.get(name)
        if fn is None:
            return json.dumps({{"error": f"unknown tool: {{name}}"}})
        return fn(self.agent, coerce_tool_args(name, args))


def dispatch_{n}(agent: Any, call: Dict[str, Any]) -> str:
    name = call["function"]["name"]
    args = json.loads(call["function"]["arguments"] or "{{}}")
    fn = EXECUTORS_{n}.get(name)
    if fn:
        return fn(agent, args)
    return Worker{n}(agent).handle(name, json.dumps(args))


def run_{n}(agent: Any, calls: List[Dict[str, Any]]) -> List[str]:
    results = []
    budget = _loads_{n}(agent.settings.get("budget", "{n}")) % 7 + 3
    for call in calls:
        results.append(dispatch_{n}(agent, call))
        if len(results) > budget:
            break
    return results
"""


class Shape(NamedTuple):
    """A module's first lines, and the unit repeated after them (formatted with its number ``n`` and the names
    of the two constants before it, ``previous`` and ``earlier``)."""

    header: str
    unit: str


SHAPES: Dict[str, Shape] = {
    "agent": Shape(_HEADER, _UNIT),
    # what took quadratic time: a thousand module-level names and a thousand ``if`` statements
    "branches": Shape("", "SETTING_{n} = load({n})\nif SETTING_{n}:\n    LIMIT_{n} = SETTING_{n} * 2\n"),
    # what took quadratic time: a module-level if/elif chain whose arms bind different names
    "elif": Shape("MODE = load()\nif MODE == -1:\n    NAME = 0\n", "elif MODE == {n}:\n    NAME_{n} = load({n})\n"),
    # what took exponential time: constants built from the two constants before them
    "constants": Shape(
        'BASE = {"type": "object", "properties": {"query": {"type": "string"}}}\n',
        'C{n} = {{"name": "t{n}", "parameters": {previous}, "also": {earlier}}}\n',
    ),
}


def module_source(units: int, first: int = 0, shape: str = "agent") -> str:
    """The shape's header, then ``units`` copies of its unit (an agent unit is about 3.2 KB), numbered from
    ``first`` on."""
    header, unit = SHAPES[shape]
    return header + "".join(
        unit.format(n=n, previous=f"C{n - 1}" if n >= 1 else "BASE", earlier=f"C{n - 2}" if n >= 2 else "BASE")
        for n in range(first, first + units)
    )


def units_for(kilobytes: int, shape: str = "agent") -> int:
    """How many units make a module of about ``kilobytes`` KB."""
    unit = len(module_source(1, first=10, shape=shape)) - len(SHAPES[shape].header)
    return max(1, round((kilobytes * 1000 - len(SHAPES[shape].header)) / unit))


def write_project(root: Path, kilobytes: int, shape: str = "agent") -> Path:
    """A project holding one generated module of about ``kilobytes`` KB, allowed past ``max-file-size``."""
    root.mkdir(parents=True, exist_ok=True)
    limit = kilobytes * 1000 * 2
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "large"\n\n[tool.dispatchlint]\nmax-file-size = {limit}\n', encoding="utf-8"
    )
    module = root / "large.py"
    module.write_text(module_source(units_for(kilobytes, shape), shape=shape), encoding="utf-8")
    return module


#: The floor: libcst's parse and the positions the indexer reads, CPU seconds (all threads) on stdout.
_FLOOR = """
import sys, time, libcst
from libcst.metadata import MetadataWrapper, PositionProvider
from dispatchlint._process import deep_recursion, on_deep_stack
source = open(sys.argv[1], 'rb').read()
def floor():
    with deep_recursion():  # the stack the indexer runs on: an if/elif chain nests one level per arm
        started = time.process_time()
        MetadataWrapper(libcst.parse_module(source), unsafe_skip_copy=True).resolve(PositionProvider)
        return time.process_time() - started
print(on_deep_stack(floor))
"""

#: Indexing alone (compile, parse, positions, facts), CPU seconds on stdout.
_INDEX = """
import sys, time
from dispatchlint.indexing.indexer import index_source
source = open(sys.argv[1], 'rb').read()
started = time.process_time()
index_source(sys.argv[1], "large", False, source)
print(time.process_time() - started)
"""


class Child(NamedTuple):
    stdout: str
    wall: float
    cpu: float
    peak_rss: int


def _child(command: Sequence[str], cwd: Path) -> Child:
    """Run ``command`` in a fresh child: its output, wall and CPU seconds, and peak RSS in bytes (of that child
    alone: each measurement goes through a wrapper process of its own, whose ``RUSAGE_CHILDREN`` is that
    child's)."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:])\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "sys.stderr.write(f'\\nusage: {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}\\n')\n"
        "sys.exit(done.returncode)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", wrapper, *command], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    usage = re.search(r"usage: ([\d.]+) (\d+)", done.stderr)
    if done.returncode not in (0, 1) or usage is None:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return Child(done.stdout, wall, float(usage.group(1)), int(usage.group(2)) * 1024)


class Row(NamedTuple):
    kilobytes: float
    lines: int
    floor: Child
    index: Child
    run: Child


def measure(root: Path, kilobytes: int, shape: str) -> Row:
    module = write_project(root / f"kb{kilobytes}", kilobytes, shape)
    floor = _child([sys.executable, "-c", _FLOOR, str(module)], root)
    index = _child([sys.executable, "-c", _INDEX, str(module)], root)
    run = _child([sys.executable, "-m", "dispatchlint", str(module), "--no-cache", "-v", "--exit-zero"], module.parent)
    return Row(module.stat().st_size / 1000, module.read_bytes().count(b"\n"), floor, index, run)


def table(rows: Sequence[Row]) -> List[str]:
    """The rows as a Markdown table; memory per KB is the growth from the row above (the interpreter and the
    imports are the same at every size)."""
    lines = [
        "| size | lines | floor: parse + positions (CPU) | index (CPU) | index per KB | index / floor "
        "| whole run (wall / CPU) | peak RSS: floor / index / whole run | RSS growth per KB (whole run) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for number, row in enumerate(rows):
        floor, index = float(row.floor.stdout), float(row.index.stdout)
        mib = [f"{child.peak_rss / 2**20:.0f}" for child in (row.floor, row.index, row.run)]
        growth = "-"
        if number:
            previous = rows[number - 1]
            grown = (row.run.peak_rss - previous.run.peak_rss) / 2**10
            growth = f"{grown / (row.kilobytes - previous.kilobytes):.0f} KiB"
        lines.append(
            f"| {row.kilobytes:,.0f} KB | {row.lines:,} | {floor:.2f} s | {index:.2f} s "
            f"| {index / row.kilobytes * 1000:.1f} ms | {index / floor:.2f} "
            f"| {row.run.wall:.2f} s / {row.run.cpu:.2f} s | {' / '.join(mib)} MiB | {growth} |"
        )
    return lines


def profile(kilobytes: int, shape: str, limit: int = 30) -> None:
    """The indexer's hot spots on a module of ``kilobytes`` KB, in this process."""
    from dispatchlint.indexing import indexer

    source = module_source(units_for(kilobytes, shape), shape=shape).encode("utf-8")
    profiler = cProfile.Profile()
    # the indexer runs on a thread of its own (see dispatchlint.indexing._parse): profile that thread
    indexer.on_deep_stack(lambda: profiler.runcall(indexer._compile_then_index, "large.py", "large", False, source))
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(limit)
    stats.sort_stats("tottime").print_stats(limit)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,250,500,1000", help="module sizes in KB, comma-separated")
    parser.add_argument("--profile", type=int, default=0, help="profile the indexer on a module of this many KB")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="agent", help="what the module repeats")
    options = parser.parse_args(argv)
    if options.profile:
        profile(options.profile, options.shape)
        return
    rows: List[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        for kilobytes in (int(size) for size in options.sizes.split(",")):
            rows.append(measure(Path(folder), kilobytes, options.shape))
            print(table(rows)[-1], file=sys.stderr, flush=True)
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
