"""Gitignore-style patterns are matched as git matches them, in linear time: a pattern that makes a regular
expression backtrack exponentially (``*a*a*a*a*a*a*a*a*a*a*a*ab`` against a forty-character name) is matched like
any other, wherever a pattern can be written."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

import pytest

from conftest import FIXTURES, relative_findings, subprocess_env
from dispatchlint.discovery.files import PathMatcher
from fixproject import copy_project

BACKTRACKING = "*a*a*a*a*a*a*a*a*a*a*a*ab"
#: A module named by forty ``a``s, holding a dispatch that bypasses the gate: every place a pattern is read
#: matches it against this name (test paths and per-file ignores match the paths of findings).
LONG_NAME = "a" * 40
EXAMPLE_FINDINGS = {
    ("DL201", "taskbot/builtin.py:13"),
    ("DL101", "taskbot/loop.py:26"),
    ("DL101", "taskbot/pool.py:21"),
    ("DL101", f"taskbot/{LONG_NAME}.py:26"),
}


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


#: Each place a pattern is read from, written into the project.
PLACES: Dict[str, Callable[[Path], None]] = {
    "root .gitignore": lambda project: _append(project / ".gitignore", BACKTRACKING + "\n"),
    "nested .gitignore": lambda project: _append(project / "taskbot" / ".gitignore", BACKTRACKING + "\n"),
    ".git/info/exclude": lambda project: _append(project / ".git" / "info" / "exclude", BACKTRACKING + "\n"),
    "exclude": lambda project: _append(project / "pyproject.toml", f"exclude = [{json.dumps(BACKTRACKING)}]\n"),
    "per-file-ignores": lambda project: _append(
        project / "pyproject.toml", f"[tool.dispatchlint.per-file-ignores]\n{json.dumps(BACKTRACKING)} = ['DL101']\n"
    ),
    "test-paths": lambda project: _append(project / "pyproject.toml", f"test-paths = [{json.dumps(BACKTRACKING)}]\n"),
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_backtracking_pattern_is_matched_in_linear_time_wherever_it_is_written(tmp_path: Path, place: str) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    (project / ".git").mkdir()
    loop = project / "taskbot" / "loop.py"
    shutil.copy(loop, project / "taskbot" / f"{LONG_NAME}.py")
    (project / LONG_NAME).mkdir()  # a folder of that name too: folders are matched on the way down
    (project / LONG_NAME / f"{LONG_NAME}.py").write_text("VALUE = 1\n", encoding="utf-8")
    _append(project / "pyproject.toml", "\n[tool.dispatchlint]\n")
    PLACES[place](project)
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "dispatchlint", "--format", "json", "--no-cache"],
        cwd=project,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    found = {(f["code"], f"{f['path']}:{f['line']}") for f in relative_findings(completed.stdout, project)}
    assert found == EXAMPLE_FINDINGS, place
    assert time.monotonic() - started < 60


def test_a_backtracking_pattern_against_long_names_takes_microseconds() -> None:
    """The worst cases of a backtracking matcher, each against names up to the longest path a file system
    gives."""
    cases = [
        (BACKTRACKING, "a" * 40),
        (BACKTRACKING, "/".join(["a" * 40] * 100)),
        ("**/a*/**/b*/**/c*/**/d", "/".join(["abc"] * 1000)),
        ("?" * 2000 + "*b", "a" * 4000),
        ("*" + "a*" * 2000 + "b", "a" * 4000),
    ]
    for pattern, path in cases:
        matcher = PathMatcher([pattern, "!never"])  # a re-including pattern: every pattern is matched in turn
        started = time.perf_counter()
        assert not matcher.matches(path)
        assert time.perf_counter() - started < 1.0, pattern[:40]


def _random_pattern(rng: random.Random) -> str:
    segments = ["".join(rng.choice(["a", "b", "ab", "*", "?", "**"]) for _ in range(rng.randint(1, 3)))]
    segments += ["".join(rng.choice(["a", "b", "*", "?", "**"]) for _ in range(rng.randint(1, 2)))]
    pattern = "/".join(segments[: rng.randint(1, 2)])
    if rng.random() < 0.2:
        pattern = "/" + pattern
    if rng.random() < 0.2:
        pattern += "/"
    return ("!" if rng.random() < 0.3 else "") + pattern


def _random_path(rng: random.Random) -> str:
    return "/".join("".join(rng.choice("ab") for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 4)))


#: git's documented rule is that stars next to other characters in a segment are ordinary stars; git itself
#: reads ``a**/b`` as ``a`` followed by ``**/b`` (it matches a pattern's literal prefix first), which only these
#: patterns show.
_STARS_INSIDE_A_SEGMENT = re.compile(r"[^/*!]\*\*|\*\*[^/*]")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git, whose matching is the reference")
def test_patterns_match_what_git_ignores(tmp_path: Path) -> None:
    """Random sets of up to three patterns (re-includes, anchors, folder-only patterns, ``**``) against random
    paths, each decided by ``git check-ignore`` too."""
    rng = random.Random(21)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    compared = 0
    for _ in range(150):
        patterns = [_random_pattern(rng) for _ in range(rng.randint(1, 3))]
        if any(_STARS_INSIDE_A_SEGMENT.search(pattern) for pattern in patterns):
            continue
        (tmp_path / ".gitignore").write_text("\n".join(patterns) + "\n", encoding="utf-8")
        paths = sorted({_random_path(rng) for _ in range(40)})
        completed = subprocess.run(
            ["git", "-C", str(tmp_path), "check-ignore", "--no-index", "--stdin"],
            input="\n".join(paths) + "\n",
            capture_output=True,
            text=True,
            check=False,
        )
        ignored = set(completed.stdout.splitlines())
        matcher = PathMatcher(patterns)
        mismatches: List[str] = [path for path in paths if matcher.matches(path) != (path in ignored)]
        assert not mismatches, (patterns, mismatches)
        compared += len(paths)
    assert compared > 3000
