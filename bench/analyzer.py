"""Analyzer speed and memory on a generated project: ``python bench/analyzer.py [--packages N] [--jobs J]``.

The project repeats the shapes of ``fixtures/example`` (a gate, a gated registry, executor tables read by
sequential and concurrent paths, tools with hand-rolled parsing) across N packages, so every stage of the
pipeline (discover, index, link, rules) does real work. Prints wall time per stage and the process's peak
resident memory.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from dispatchlint.analysis.discover import Ignores, discover
from dispatchlint.analysis.link import link_project
from dispatchlint.config import Config
from dispatchlint.analysis.cache import FactsCache, index_files
from dispatchlint.config import DEFAULT_MAX_FILE_SIZE
from dispatchlint.engine import select_rules

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "example" / "taskbot"


def generate(root: Path, packages: int) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "generated"\n', encoding="utf-8")
    for number in range(packages):
        target = root / f"taskbot{number}"
        shutil.copytree(EXAMPLE, target)
        for path in target.rglob("*.py"):
            text = path.read_text(encoding="utf-8").replace("taskbot", f"taskbot{number}")
            path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--packages", type=int, default=200, help="copies of the example package (6 modules each)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for indexing")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        generate(root, options.packages)
        started = time.perf_counter()
        files = discover(root, Ignores(root, ())).files
        discovered = time.perf_counter()
        modules = index_files(files, None, options.jobs, DEFAULT_MAX_FILE_SIZE).modules
        indexed = time.perf_counter()
        project = link_project(modules, Config())
        linked = time.perf_counter()
        findings = [f for rule in select_rules(["ALL"], []) for f in rule.check(project)]
        checked = time.perf_counter()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
        cache = FactsCache(root / ".cache")
        index_files(files, cache, options.jobs, DEFAULT_MAX_FILE_SIZE)  # fills the cache
        warm_started = time.perf_counter()
        index_files(files, cache, options.jobs, DEFAULT_MAX_FILE_SIZE)
        warm = time.perf_counter() - warm_started
    lines = sum(len(path.read_text().splitlines()) for path in EXAMPLE.rglob("*.py")) * options.packages
    columns = ["files", "lines", "jobs", "discover", "index", "link", "rules", "total", "index, warm cache"]
    columns += ["peak memory", "findings"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    print(
        f"| {len(files)} | {lines} | {options.jobs} | {discovered - started:.2f} s | {indexed - discovered:.2f} s | "
        f"{linked - indexed:.2f} s | {checked - linked:.2f} s | {checked - started:.2f} s | {warm:.2f} s | "
        f"{peak / 2**20:.0f} MiB (max RSS) | {len(findings)} |"
    )


if __name__ == "__main__":
    main()
