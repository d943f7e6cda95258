"""Analyzer speed and memory, side by side with the parse floors and Ruff, in one run.

    python bench/analyzer.py [--repo PATH ...] [--generated FILES] [--jobs N] [--lines-tree LINES] [--repeat N]

Each tree is copied to a temporary folder (a checkout is only read), then measured with the command a user runs
(``python -m dispatchlint``, in a child process, the same pipeline: index, link, rules, fixability):

- libcst floor: ``libcst.parse_module`` of every file once, on ``--jobs`` processes;
- ``ast`` floor: ``ast.parse`` of every file once, on one process;
- ``ruff check --no-cache`` on the tree (skipped, with a message, when ruff is not installed);
- dispatchlint cold (``--no-cache``) on ``--jobs`` processes and on one, with the stages after indexing;
- warm (the cache filled): the whole project with nothing changed (the stored results answer it), one file named
  with nothing changed, one file named after that file was edited (a commit: its facts indexed again, the
  project linked anew), the whole project after an edit, and the JSON output (which plans every fix's edits);
- warm text, JSON and SARIF, every one served by the stored results (the fixes' edits among them), each run
  ``--repeat`` times, interleaved so that the machine's load falls on each alike: their medians, and JSON's and
  SARIF's as a multiple of text's;
- files indexed (from ``-v``'s per-file timing; a check parses nothing for its fixes) and the peak resident
  memory of the largest process of the cold run.

``--generated FILES`` adds a project of about that many modules made of copies of ``fixtures/example``;
``--lines-tree LINES`` adds a tree of about that many lines made of copies of the first ``--repo`` (for peak
memory at scale). Timings are wall-clock on a shared machine: run it twice and read the spread. The command
runs with its bytecode compiled (in the temporary folder), as an installed package's is.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "fixtures" / "example" / "taskbot"
_SKIPPED = {".git", ".venv", "venv", "node_modules", "__pycache__", ".dispatchlint_cache"}


def python_files(root: Path) -> List[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in _SKIPPED]
        found.extend(Path(folder, name) for name in files if name.endswith(".py"))
    return sorted(found)


def generate(root: Path, files: int) -> None:
    """About ``files`` modules: copies of the example package, each a package of its own."""
    (root / "pyproject.toml").write_text('[project]\nname = "generated"\n', encoding="utf-8")
    per_copy = len(list(EXAMPLE.rglob("*.py")))
    for number in range(max(1, round(files / per_copy))):
        target = root / f"taskbot{number}"
        shutil.copytree(EXAMPLE, target)
        for path in target.rglob("*.py"):
            path.write_text(path.read_text(encoding="utf-8").replace("taskbot", f"taskbot{number}"), encoding="utf-8")


def copy_tree(source: Path, target: Path, copies: int = 1) -> None:
    """``copies`` copies of ``source``'s Python files (and its pyproject.toml) under ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    if (source / "pyproject.toml").is_file():
        shutil.copy(source / "pyproject.toml", target / "pyproject.toml")
    else:
        (target / "pyproject.toml").write_text('[project]\nname = "copied"\n', encoding="utf-8")
    for copy in range(copies):
        base = target if copies == 1 else target / f"copy{copy}"
        for path in python_files(source):
            destination = base / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)


def _parse_libcst(path: str) -> int:
    import libcst

    try:
        libcst.parse_module(Path(path).read_bytes())
    except Exception:  # noqa: BLE001 - a file the floor cannot parse costs what it cost
        return 0
    return 1


def libcst_floor(files: Sequence[Path], jobs: int) -> float:
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(_parse_libcst, [str(path) for path in files], chunksize=16))
    return time.perf_counter() - started


def ast_floor(files: Sequence[Path]) -> float:
    started = time.perf_counter()
    for path in files:
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            pass
    return time.perf_counter() - started


@dataclass
class Run:
    seconds: float
    stderr: str
    peak_rss: int
    #: CPU seconds of the process itself (user and system), which a loaded machine changes less than wall time.
    cpu: float = 0.0


def run(command: Sequence[str], cwd: Path) -> Run:
    """Run ``command``; its wall time, its stderr, and the peak RSS of its largest process (itself or a worker
    it waited for; ``wait4`` reports that child's own usage, not that of every child waited for so far)."""
    env = {
        **{name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "DISPATCHLINT_CACHE_DIR": str(cwd.parent / f".cache-{cwd.name}"),  # each tree starts with an empty cache
        # Compiled once, as an installed package is: compiling the checkout's modules on every run is not the
        # command's own time (the bytecode goes beside the trees, never into the checkout).
        "PYTHONPYCACHEPREFIX": str(cwd.parent / ".bytecode"),
    }
    with tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        child = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        errors = stderr.read().decode("utf-8", errors="replace")
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({child.returncode}): {errors[-2000:]}")
    return Run(seconds, errors, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime)


def dispatchlint(root: Path, *args: str) -> List[str]:
    return [sys.executable, "-m", "dispatchlint", str(root), "--exit-zero", *args]


def parsed_counts(stderr: str) -> Tuple[int, int]:
    """(files indexed, files served by the cache), from ``-v``'s per-file timing lines."""
    cached = sum(1 for line in stderr.splitlines() if line.startswith("timing: ") and line.endswith("from the cache"))
    indexed = sum(1 for line in stderr.splitlines() if line.startswith("timing: ") and ": indexed in " in line)
    return indexed, cached


def stages(stderr: str) -> str:
    """The stages ``-v`` timed after indexing (link, rules, fixability; or the stored results reused)."""
    line = next((line for line in stderr.splitlines() if line.startswith("timing: ") and " files; " in line), "")
    return line.partition(" files; ")[2]


#: The formats whose warm runs are compared, and the options that choose each.
_WARM_FORMATS = {"text": (), "JSON": ("--output-format", "json"), "SARIF": ("--output-format", "sarif")}


def warm_formats(root: Path, repeat: int) -> Dict[str, Tuple[float, float]]:
    """The median wall and CPU seconds of a warm run in each of :data:`_WARM_FORMATS`, the cache filled by a JSON
    run (which stores every fix's edits with the results); each run must be served by the stored results."""
    run(dispatchlint(root, "--output-format", "json"), root)
    for name, options in _WARM_FORMATS.items():
        served = stages(run(dispatchlint(root, "-v", *options), root).stderr)
        if not served.startswith("stored results"):
            raise SystemExit(f"a warm {name} run was not served by the stored results: {served}")
    runs: Dict[str, List[Run]] = {name: [] for name in _WARM_FORMATS}
    for _ in range(repeat):  # without -v, which adds the traces to the text
        for name, options in _WARM_FORMATS.items():
            runs[name].append(run(dispatchlint(root, *options), root))
    return {
        name: (statistics.median(r.seconds for r in done), statistics.median(r.cpu for r in done))
        for name, done in runs.items()
    }


def measure(name: str, root: Path, jobs: int, repeat: int) -> Dict[str, str]:
    run([sys.executable, "-m", "compileall", "-q", str(REPO / "dispatchlint")], root)  # the bytecode, once
    files = python_files(root)
    lines = sum(len(path.read_bytes().splitlines()) for path in files)
    row = {"tree": name, "files": str(len(files)), "lines": f"{lines:,}"}
    cold = run(dispatchlint(root, "--no-cache", "--jobs", str(jobs), "-v"), root)
    row["peak RSS (cold)"] = f"{cold.peak_rss / 2**20:.0f} MiB"
    indexed, _ = parsed_counts(cold.stderr)
    single = run(dispatchlint(root, "--no-cache", "--jobs", "1"), root)
    row[f"libcst floor ({jobs} proc)"] = f"{libcst_floor(files, jobs):.2f} s"
    row["ast floor (1 proc)"] = f"{ast_floor(files):.2f} s"
    if shutil.which("ruff"):
        row["ruff --no-cache"] = f"{run(['ruff', 'check', '--no-cache', '--exit-zero', '-q', '.'], root).seconds:.2f} s"
    else:
        row["ruff --no-cache"] = "skipped (ruff not installed)"
    row[f"cold ({jobs} proc)"] = f"{cold.seconds:.2f} s"
    row["cold (1 proc)"] = f"{single.seconds:.2f} s"
    row["cold stages"] = stages(cold.stderr)
    run(dispatchlint(root), root)  # fills the cache: every file's facts and the project's results
    warm = run(dispatchlint(root, "-v"), root)
    row["warm, nothing changed"] = f"{warm.seconds:.2f} s"
    one = max(files, key=lambda path: path.stat().st_size)
    row["one file named, nothing changed"] = f"{run(dispatchlint(one), root).seconds:.2f} s"
    with one.open("a", encoding="utf-8") as handle:  # what a commit does: one file changed, the rest cached
        handle.write("\n# edited\n")
    edited = run(dispatchlint(one, "-v"), root)
    row["one file named, that file edited"] = f"{edited.seconds:.2f} s"
    row["edited run stages"] = stages(edited.stderr)
    with one.open("a", encoding="utf-8") as handle:
        handle.write("# edited again\n")
    row["warm, one file edited"] = f"{run(dispatchlint(root), root).seconds:.2f} s"
    row["warm, JSON with fix edits"] = f"{run(dispatchlint(root, '--output-format', 'json'), root).seconds:.2f} s"
    formats = warm_formats(root, repeat)
    for number, clock in enumerate(("wall", "CPU")):
        medians = {name: seconds[number] for name, seconds in formats.items()}
        row[f"warm text / JSON / SARIF, {clock} (median of {repeat})"] = (
            " / ".join(f"{seconds:.3f}" for seconds in medians.values()) + " s"
        )
        row[f"warm JSON, SARIF vs warm text, {clock}"] = (
            f"{medians['JSON'] / medians['text']:.2f}x, {medians['SARIF'] / medians['text']:.2f}x"
        )
    warm_indexed, _ = parsed_counts(warm.stderr)
    edited_indexed, _ = parsed_counts(edited.stderr)
    row["files indexed: cold / warm / one edited"] = f"{indexed} / {warm_indexed} / {edited_indexed}"
    return row


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, action="append", default=[], help="a real code base (read only)")
    parser.add_argument("--generated", type=int, default=1400, help="modules of the generated project (0: none)")
    parser.add_argument("--lines-tree", type=int, default=0, help="lines of a tree of copies of the first --repo")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each format for the warm formats' medians")
    options = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for repo in options.repo:
            target = Path(folder) / repo.name
            copy_tree(repo, target)
            rows.append(measure(repo.name, target, options.jobs, options.repeat))
        if options.generated:
            target = Path(folder) / "generated"
            target.mkdir()
            generate(target, options.generated)
            rows.append(measure(f"generated ({options.generated} modules)", target, options.jobs, options.repeat))
        if options.lines_tree and options.repo:
            source = options.repo[0]
            lines = sum(len(path.read_bytes().splitlines()) for path in python_files(source))
            target = Path(folder) / "large"
            copies = max(1, round(options.lines_tree / max(lines, 1)))
            copy_tree(source, target, copies=copies)
            rows.append(measure(f"{source.name} x{copies}", target, options.jobs, options.repeat))
    if not rows:
        return
    print("| measure | " + " | ".join(row["tree"] for row in rows) + " |")
    print("|---|" + "---:|" * len(rows))
    for measure_name in [name for name in rows[0] if name != "tree"]:
        print(f"| {measure_name} | " + " | ".join(row.get(measure_name, "") for row in rows) + " |")


if __name__ == "__main__":
    main()
