"""The pipeline's structure, checked on the real code: rules report and never plan fixes, output formats read
only the findings, a check parses each file once, and fix markers say what ``--fix`` will apply."""

from __future__ import annotations

import ast
import hashlib
import io
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import List

import libcst
import pytest

from conftest import FIXTURES, REPO, subprocess_env
from dispatchlint.indexing.project import _WARM_UP
from dispatchlint.cli import Progress
from dispatchlint.plan import RunOptions
from dispatchlint.engine import analyse
from dispatchlint.fix import _source

PACKAGE = REPO / "dispatchlint"


def _imports(folder: Path) -> List[str]:
    """Every module the Python files of ``folder`` import."""
    found = []
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.append(node.module)
            elif isinstance(node, ast.Import):
                found.extend(alias.name for alias in node.names)
    return found


def test_rules_never_import_the_fixes() -> None:
    assert not [name for name in _imports(PACKAGE / "rules") if name.startswith("dispatchlint.fix")]


def test_output_formats_read_only_the_findings() -> None:
    """Importing the output formats loads neither the rules, the analysis, the fixer nor libcst."""
    probe = (
        "import sys, dispatchlint.report; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'libcst' or m.startswith(("
        "'dispatchlint.rules', 'dispatchlint.linking', 'dispatchlint.fix', 'dispatchlint.engine'))))"
    )
    output = subprocess.run([sys.executable, "-c", probe], env=subprocess_env(), capture_output=True, text=True)
    assert output.stdout.strip() == "[]", output.stdout + output.stderr


def test_a_check_parses_each_file_once_and_plans_no_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parsed = tmp_path / "parsed"  # files are parsed in worker processes: each parse is a line written here
    original = libcst.parse_module

    def parse(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        with parsed.open("a", encoding="utf-8") as record:
            record.write(hashlib.sha256(source if isinstance(source, bytes) else source.encode()).hexdigest() + "\n")
        return original(source)

    monkeypatch.setattr(libcst, "parse_module", parse)  # the workers are forked: they inherit the stand-in

    def no_fix_parsing(*args: object) -> None:
        raise AssertionError("a check parsed a file for a fix")

    monkeypatch.setattr(_source.SourceFile, "parse", no_fix_parsing)
    project = FIXTURES / "fix_registered"
    [result] = analyse([project], RunOptions(use_cache=False, jobs=1), cwd=project)
    assert any(finding.fixable for finding in result.findings)
    files = [(project / module.path).read_bytes() for module in result.project.modules]
    # each file once (and the module the run indexes first itself, to warm up before its workers start)
    assert Counter(parsed.read_text(encoding="utf-8").split()) - Counter([hashlib.sha256(_WARM_UP).hexdigest()]) == (
        Counter(hashlib.sha256(data).hexdigest() for data in files)
    )


def test_markers_and_summary_say_what_fix_applies(run_cli) -> None:
    safe = run_cli(FIXTURES / "example")
    assert " DL101 [*] " in safe.stdout
    unsafe = run_cli(FIXTURES / "fix_unrename")
    assert " DL301 [unsafe fix] " in unsafe.stdout and "[*]" not in unsafe.stdout
    assert unsafe.stdout.rstrip().endswith("No fixes with --fix (1 with --fix --unsafe-fixes).")


def test_unsafe_fixes_without_fix_or_diff_is_a_usage_error(run_cli) -> None:
    result = run_cli(FIXTURES / "fix_unrename", "--unsafe-fixes")
    assert result.exit_code == 2
    assert "--unsafe-fixes" in result.stderr and "--fix or --diff" in result.stderr


def test_the_progress_line_waits_a_second_and_is_cleared_at_the_end() -> None:
    written = io.StringIO()
    now = [0.0]
    progress = Progress(written, clock=lambda: now[0])
    progress(1, 10)
    assert written.getvalue() == ""  # a short run shows nothing
    now[0] = 1.5
    progress(4, 10)
    assert written.getvalue() == "\rindexed 4/10 files"
    progress(5, 10)  # within the update interval: not rewritten
    now[0] = 2.0
    progress(10, 10)
    assert written.getvalue().endswith("\r\x1b[K")


def test_no_progress_line_in_pipes(run_cli) -> None:
    """The suite's runs write to pipes: nothing but the findings reaches stderr, on the slowest fixture too."""
    result = run_cli(FIXTURES / "taint_flows", "--output-format", "text")
    assert result.stderr == ""


def test_a_warm_run_never_loads_libcst(tmp_path: Path) -> None:
    """With every file's facts in the cache, nothing needs parsing: the parser is not even imported (the machine
    formats, which carry each fix as edits, are the exception: they plan the fixes)."""
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    env = {**subprocess_env(), "DISPATCHLINT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "dispatchlint"]
    assert subprocess.run(command, cwd=project, env=env, capture_output=True).returncode == 1
    probe = (
        "import sys; from dispatchlint.cli import main; code = main(['taskbot/loop.py']); "
        'sys.stdout.write(f\'\\n{code} {sorted(m for m in sys.modules if m.split(".")[0] == "libcst")}\')'
    )
    warm = subprocess.run([sys.executable, "-c", probe], cwd=project, env=env, capture_output=True, text=True)
    assert warm.stdout.splitlines()[-1] == "1 []", warm.stdout + warm.stderr


def test_positions_from_the_providers_own_pass_are_libcsts_positions() -> None:
    """``positions()`` calls ``PositionProvider``'s own pass (libcst's public ``resolve`` walks the tree once more
    for nothing): whatever libcst version is installed, it must give exactly what ``resolve`` gives."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from dispatchlint.indexing.fix_shapes import positions

    for path in sorted((FIXTURES / "example").rglob("*.py")) + [PACKAGE / "indexing" / "indexer.py"]:
        tree = libcst.parse_module(path.read_bytes())
        expected = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
        found = positions(tree)
        assert len(found) == len(expected) > 0
        assert all(found[node] == expected[node] for node in expected), path


@pytest.mark.parametrize("caller_froze", [False, True])
def test_a_library_caller_keeps_the_objects_it_froze(tmp_path: Path, caller_froze: bool) -> None:
    """The analysis keeps its own long-lived objects out of the collector's reach (``gc.freeze``) and hands them
    back at the end (``gc.unfreeze``): a program that had frozen objects itself keeps them frozen, and is
    analysed the same."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "example", project)
    for number in range(10):  # enough files for worker processes
        for source in (FIXTURES / "example" / "taskbot").glob("*.py"):
            target = project / f"taskbot{number}" / source.name
            target.parent.mkdir(exist_ok=True)
            target.write_text(source.read_text(encoding="utf-8").replace("taskbot", f"taskbot{number}"), "utf-8")
    script = f"""
import gc, sys
from pathlib import Path
from dispatchlint.plan import RunOptions
from dispatchlint.engine import analyse
held = [[index] for index in range(1000)]  # the caller's own long-lived objects
if {caller_froze!r}:
    gc.freeze()
frozen = gc.get_freeze_count()
for jobs in (1, 2):
    [result] = analyse([Path({str(project)!r})], RunOptions(use_cache=False, jobs=jobs), cwd=Path({str(project)!r}))
    # frozen objects freed since (a cache the run replaced) leave the count: what matters is that it stays
    still_frozen = gc.get_freeze_count() > frozen // 2 if frozen else gc.get_freeze_count() == 0
    print(jobs, len(result.findings), still_frozen, gc.isenabled())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=subprocess_env())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert lines[1] == lines[5] != "0"  # the same findings on one process and on two
    assert lines[2:4] == lines[6:8] == ["True", "True"]  # the caller's frozen objects (only) frozen, collector on
