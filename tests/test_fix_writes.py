"""How ``--fix`` writes: every pass in memory and the files once at the end; each file compared with what was
analysed just before it is replaced; links, owners and modes kept; one fix of a project at a time; a kill at any
moment leaves every file either as it was or fixed; a bug of ours while fixing names its stage and writes nothing.
"""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Tuple

import pytest

from conftest import FIXTURES, subprocess_env, write_project
from dispatchlint.fix import JOURNAL_NAME, FixError, _apply, _journal, _write, write_all
from fixproject import copy_project, fix_cases, python_sources

CASES = {case.name: case for case in fix_cases()}
EXAMPLE_FIXED = FIXTURES / "fix_example" / "expected_fixed" / "taskbot" / "builtin.py"


def _example(tmp_path: Path) -> Path:
    return copy_project(FIXTURES / "example", tmp_path / "project")


def test_every_pass_is_computed_in_memory_and_each_file_written_once(run_cli, tmp_path: Path, monkeypatch) -> None:
    """The example needs two passes (wrapping the table makes the hand-rolled parse deletable): nothing is
    written until both are done, and then each file once."""
    project = _example(tmp_path)
    writes = []
    real_replace = _write.replace_atomically

    def counting(path: Path, data: bytes) -> None:
        writes.append(path.name)
        real_replace(path, data)

    monkeypatch.setattr(_write, "replace_atomically", counting)
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stderr
    assert writes == ["builtin.py"]
    assert (project / "taskbot" / "builtin.py").read_bytes() == EXAMPLE_FIXED.read_bytes()
    assert result.stderr.count("Rewriting taskbot/builtin.py") == 1


def test_a_file_saved_while_the_fix_writes_aborts_the_whole_fix(run_cli, tmp_path: Path, monkeypatch) -> None:
    case = CASES["fix_registered"]
    project = copy_project(case.before, tmp_path / "project")
    before = python_sources(project)
    rewritten = [project / relative for relative, data in case.expected_files().items() if before[relative] != data]
    assert len(rewritten) >= 2
    real_replace = _write.replace_atomically
    saved = []

    def editor_saves_the_next_file(path: Path, data: bytes) -> None:
        real_replace(path, data)
        if not saved:  # an editor saves another file the fix is about to replace
            other = next(candidate for candidate in rewritten if candidate.resolve() != path)
            other.write_bytes(other.read_bytes() + b"# saved by an editor\n")
            saved.append(other)

    monkeypatch.setattr(_write, "replace_atomically", editor_saves_the_next_file)
    result = run_cli(project, "--fix")
    assert result.exit_code == 2
    assert "it changed while it was being fixed; no file was changed" in result.stderr
    after = python_sources(project)
    edited = saved[0].relative_to(project).as_posix()
    assert after[edited] == before[edited] + b"# saved by an editor\n"
    assert {k: v for k, v in after.items() if k != edited} == {k: v for k, v in before.items() if k != edited}


def test_a_symbolic_link_is_written_through_to_its_target(run_cli, tmp_path: Path) -> None:
    """A link inside the project (to a folder analysis leaves out): one that leaves the project is never read nor
    written (``tests/test_hostile_files.py``)."""
    project = _example(tmp_path)
    elsewhere = project / "build" / "builtin.py"
    elsewhere.parent.mkdir()
    link = project / "taskbot" / "builtin.py"
    link.rename(elsewhere)
    link.symlink_to(elsewhere)
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and link.resolve() == elsewhere.resolve()
    assert elsewhere.read_bytes() == EXAMPLE_FIXED.read_bytes()


def test_one_file_named_by_several_links_is_written_once_and_never_two_ways(tmp_path: Path, monkeypatch) -> None:
    real = tmp_path / "real.py"
    real.write_bytes(b"old\n")
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.symlink_to(real)
    second.symlink_to(real)
    writes = []
    real_replace = _write.replace_atomically
    monkeypatch.setattr(
        _write, "replace_atomically", lambda path, data: (writes.append(path), real_replace(path, data))
    )
    write_all({first: (b"old\n", b"new\n"), second: (b"old\n", b"new\n"), real: (b"old\n", b"new\n")})
    assert writes == [real.resolve()] and real.read_bytes() == b"new\n"
    assert first.is_symlink() and second.is_symlink()
    with pytest.raises(FixError, match="is the same file as .* which the fix would rewrite differently"):
        write_all({first: (b"new\n", b"one\n"), second: (b"new\n", b"other\n")})
    assert real.read_bytes() == b"new\n"


def test_hard_links_mode_and_owner_are_kept(run_cli, tmp_path: Path) -> None:
    project = _example(tmp_path)
    builtin = project / "taskbot" / "builtin.py"
    other_name = tmp_path / "hard-link.py"
    os.link(builtin, other_name)
    builtin.chmod(0o640)
    inode = builtin.stat().st_ino
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stderr
    assert builtin.stat().st_ino == inode and other_name.read_bytes() == EXAMPLE_FIXED.read_bytes()
    assert stat.S_IMODE(builtin.stat().st_mode) == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_the_owner_of_a_file_is_kept(run_cli, tmp_path: Path) -> None:
    project = _example(tmp_path)
    builtin = project / "taskbot" / "builtin.py"
    os.chown(builtin, 4321, 4321)
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stderr
    status = builtin.stat()
    assert (status.st_uid, status.st_gid) == (4321, 4321)
    assert builtin.read_bytes() == EXAMPLE_FIXED.read_bytes()


def _fix_child(project: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dispatchlint", "--fix", "--no-cache"],
        cwd=project,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_a_second_fix_waits_for_the_first_and_says_so(tmp_path: Path) -> None:
    from dispatchlint.fix import fix_lock

    project = _example(tmp_path)
    with fix_lock([project], lambda root: None):  # a first fix holds the project
        second = _fix_child(project)
        deadline = time.monotonic() + 120
        assert second.stderr is not None
        line = second.stderr.readline()
        assert "Another dispatchlint --fix is running on" in line and "waiting for it to finish" in line
        assert time.monotonic() < deadline and second.poll() is None
        assert (project / "taskbot" / "builtin.py").read_bytes() != EXAMPLE_FIXED.read_bytes()
    _, rest = second.communicate(timeout=240)
    assert second.returncode == 0, rest
    assert (project / "taskbot" / "builtin.py").read_bytes() == EXAMPLE_FIXED.read_bytes()


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_two_fixes_at_once_both_succeed_and_fix_once(tmp_path: Path) -> None:
    project = _example(tmp_path)
    children = [_fix_child(project), _fix_child(project)]
    outcomes = [child.communicate(timeout=240) for child in children]
    assert [child.returncode for child in children] == [0, 0], outcomes
    assert (project / "taskbot" / "builtin.py").read_bytes() == EXAMPLE_FIXED.read_bytes()
    assert sum(err.count("Rewriting taskbot/builtin.py") for _, err in outcomes) == 1


def _kill_at_random_moments(tmp_path: Path, kills: int, seed: int) -> int:
    """Run ``--fix`` on a project whose fix rewrites several files, SIGKILL it at random moments (mostly near the
    end, where it writes), and check every file is its original or its fixed version, and the whole project one or
    the other once the next run has put back what the killed fix left. Returns the kills made."""
    case = CASES["fix_registered"]
    expected = case.expected_files()
    pristine = copy_project(case.before, tmp_path / "pristine")
    originals = python_sources(pristine)
    timing = copy_project(case.before, tmp_path / "timing")
    started = time.monotonic()
    child = subprocess.run(
        [sys.executable, "-m", "dispatchlint", "--fix", "--no-cache", *case.args],
        cwd=timing,
        env=subprocess_env(),
        capture_output=True,
        check=False,
    )
    duration = time.monotonic() - started
    assert python_sources(timing) != originals, child.stderr
    fixed = python_sources(timing)
    for relative, data in expected.items():
        assert fixed[relative] == data
    rng = random.Random(seed)
    made = 0
    for number in range(kills):
        project = copy_project(case.before, tmp_path / f"kill{number}")
        process = subprocess.Popen(
            [sys.executable, "-m", "dispatchlint", "--fix", "--no-cache", *case.args],
            cwd=project,
            env=subprocess_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(duration * rng.uniform(0.3, 1.1))
        process.send_signal(signal.SIGKILL)
        process.wait()
        made += 1
        for relative, data in python_sources(project).items():
            assert data in (originals[relative], fixed[relative]), f"kill {number}: {relative} is half-fixed"
        # the next run puts back a fix killed between two files: the project is then all original or all fixed
        subprocess.run(
            [sys.executable, "-m", "dispatchlint", "--no-cache", "-q"],
            cwd=project,
            env=subprocess_env(),
            capture_output=True,
            check=False,
        )
        assert python_sources(project) in (originals, fixed), f"kill {number}: the project is half-fixed"
        assert not (project / JOURNAL_NAME).exists()
    return made


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL")
def test_a_kill_at_any_moment_leaves_each_file_original_or_fixed(tmp_path: Path) -> None:
    assert _kill_at_random_moments(tmp_path, kills=4, seed=12) == 4


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL")
def test_many_kills_leave_each_file_original_or_fixed(tmp_path: Path) -> None:
    assert _kill_at_random_moments(tmp_path, kills=40, seed=2026) == 40


def test_a_bug_while_applying_a_fix_names_the_stage_and_writes_nothing(run_cli, tmp_path: Path, monkeypatch) -> None:
    from dispatchlint.fix import _edits

    project = _example(tmp_path)
    before = python_sources(project)

    def broken(plan, fix):  # type: ignore[no-untyped-def]
        raise KeyError("a shape nobody expected")

    monkeypatch.setattr(_edits, "_apply_table", broken)
    result = run_cli(project, "--fix")
    assert result.exit_code == 2
    assert "internal error while applying a TableFix in" in result.stderr
    assert "(KeyError: 'a shape nobody expected'); no file was changed; please report it" in result.stderr
    assert python_sources(project) == before and "internal error:" not in result.stderr


def test_a_bug_while_rendering_a_file_names_the_file_and_writes_nothing(run_cli, tmp_path: Path, monkeypatch) -> None:
    project = _example(tmp_path)
    before = python_sources(project)

    def broken(self):  # type: ignore[no-untyped-def]
        raise ValueError("default_indent")

    monkeypatch.setattr(_apply.FilePlan, "render", broken)
    result = run_cli(project, "--fix")
    assert result.exit_code == 2
    assert "taskbot/builtin.py: internal error while rendering the fix (ValueError: default_indent)" in result.stderr
    assert python_sources(project) == before


def test_a_table_module_indented_with_form_feeds_is_fixed_and_keeps_them(run_cli, tmp_path: Path) -> None:
    """Python resets the column at a form feed, libcst counts it into the indentation: the fix used to crash
    (``invalid value for default_indent``). The lines it does not touch keep their form feeds."""
    project = _example(tmp_path)
    builtin = project / "taskbot" / "builtin.py"
    lines = builtin.read_text(encoding="utf-8").splitlines(keepends=True)
    builtin.write_text("".join("\f" + line if line.startswith("    ") else line for line in lines), encoding="utf-8")
    compile(builtin.read_text(encoding="utf-8"), str(builtin), "exec")
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stderr
    fixed = builtin.read_text(encoding="utf-8")
    compile(fixed, str(builtin), "exec")
    assert fixed.replace("\f", "") == EXAMPLE_FIXED.read_text(encoding="utf-8")
    assert fixed.count("\f") == sum(1 for line in lines if line.startswith("    ")) - 3  # the parse deleted
    assert run_cli(project, "--fix").stderr.count("Rewriting") == 0


#: The table in one file, its executor, which parses an array parameter by hand, in another: the fix deletes the
#: parse and wraps the table, and either alone breaks the tool (the parse gone, the steps arrive as a string).
_SPLIT_FIX = {
    "bot/__init__.py": "",
    "bot/gate.py": (
        "import json\n\n"
        "SCHEMAS = {'plan': {'type': 'object', 'properties': {'steps': {'type': 'array'}}}}\n\n\n"
        "def coerce_tool_args(tool_name, args):\n"
        "    steps = args.get('steps')\n"
        "    return {**args, 'steps': json.loads(steps)} if isinstance(steps, str) else args\n"
    ),
    "bot/executors.py": (
        "import json\n\n\n"
        "def plan(args):\n"
        "    steps = args['steps']\n"
        "    if isinstance(steps, str):\n"
        "        steps = json.loads(steps)\n"
        "    return len(steps)\n"
    ),
    "bot/table.py": "from bot.executors import plan\n\nTOOLS = {'plan': plan}\n",
    "bot/loop.py": (
        "from bot.gate import coerce_tool_args\nfrom bot.table import TOOLS\n\n\n"
        "def run(name, args):\n    return TOOLS[name](args)\n\n\n"
        "def run_gated(name, args):\n    return TOOLS[name](coerce_tool_args(name, args))\n"
    ),
}
#: Run ``dispatchlint --fix`` in a child that stops itself with ``signal`` right after the first file is replaced.
_STOP_AFTER_FIRST_WRITE = """
import os, signal, sys
from dispatchlint.cli import main
from dispatchlint.fix import _write

real = _write.replace_atomically
stopped = []
def replace_then_stop(path, data):
    real(path, data)
    if path.suffix == ".py" and not stopped:  # once: the rollback replaces files with this function too
        stopped.append(path)
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        if sys.argv[1] != "SIGKILL":  # until the main thread has handled it, however loaded the machine
            _write._INTERRUPTS._requested.wait(60)
_write.replace_atomically = replace_then_stop
if hasattr(signal, "SIGHUP"):  # as a terminal's child has it, however the tests were started (nohup ignores it)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
sys.exit(main(["--fix", "--no-cache"]))
"""


def _split_fix_project(tmp_path: Path, run_cli) -> Tuple[Path, Dict[str, bytes], Dict[str, bytes]]:
    """The project, its files, and its files once fixed."""
    fixed, project = tmp_path / "fixed", tmp_path / "project"
    for folder in (fixed, project):
        folder.mkdir()
        write_project(folder, _SPLIT_FIX)
    assert run_cli(fixed, "--fix").exit_code == 0
    fixed_sources = python_sources(fixed)
    assert sorted(k for k, v in python_sources(project).items() if fixed_sources[k] != v) == [
        "bot/executors.py",
        "bot/table.py",
    ]
    return project, python_sources(project), fixed_sources


def _plan_calls(project: Path) -> str:
    code = "from bot.loop import run; print(run('plan', {'steps': '[\"a\", \"b\", \"c\"]'}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=project, env=subprocess_env(project), capture_output=True)
    return done.stdout.decode().strip() or done.stderr.decode().strip().splitlines()[-1]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL")
def test_a_fix_killed_between_two_files_is_put_back_by_the_next_run(run_cli, tmp_path: Path) -> None:
    project, original, fixed = _split_fix_project(tmp_path, run_cli)
    killed = subprocess.run(
        [sys.executable, "-c", _STOP_AFTER_FIRST_WRITE, "SIGKILL"], cwd=project, env=subprocess_env(), check=False
    )
    assert killed.returncode == -signal.SIGKILL
    half = python_sources(project)
    assert half != original and half != fixed  # the first file replaced, the second not: half-fixed on disk
    assert _plan_calls(project) != "3"  # and broken: that is what the next run puts back
    assert (project / JOURNAL_NAME).is_file()
    check = run_cli(project)
    assert "Restored 1 file that an interrupted --fix had rewritten (.dispatchlint-fix-journal.json)" in check.stderr
    assert python_sources(project) == original and not (project / JOURNAL_NAME).exists()
    assert _plan_calls(project) == "3"
    assert sorted(f["code"] for f in run_cli(project, "--format", "json").findings()) == ["DL101", "DL201"]
    assert run_cli(project, "--fix").exit_code == 0
    assert python_sources(project) == fixed and _plan_calls(project) == "3"


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_an_interrupt_between_two_files_rolls_back_at_once(stop: str, run_cli, tmp_path: Path) -> None:
    if not hasattr(signal, stop):
        pytest.skip(f"no {stop} here")
    project, original, _ = _split_fix_project(tmp_path, run_cli)
    stopped = subprocess.run(
        [sys.executable, "-c", _STOP_AFTER_FIRST_WRITE, stop],
        cwd=project,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert stopped.returncode == 2 and stopped.stderr.strip().endswith("aborted"), stopped.stderr
    assert python_sources(project) == original
    assert not [path for path in project.iterdir() if path.name.startswith(JOURNAL_NAME)]
    assert _plan_calls(project) == "3"


def test_a_journal_does_not_restore_a_file_edited_since(run_cli, tmp_path: Path) -> None:
    project, original, fixed = _split_fix_project(tmp_path, run_cli)
    changes = {project / path: (original[path], fixed[path]) for path in original if original[path] != fixed[path]}
    first, second = sorted(changes)
    _journal.begin([project], [_journal.Journaled(p, old, _journal.digest(new)) for p, (old, new) in changes.items()])
    first.write_bytes(changes[first][1])  # the killed fix had replaced both files; then someone edited the second
    second.write_bytes(changes[second][1] + b"# edited\n")
    result = run_cli(project, "--fix")
    assert "Restored 1 file that an interrupted --fix had rewritten" in result.stderr
    assert "warning: bot/table.py changed after an interrupted --fix; left as it is" in result.stderr
    assert first.read_bytes() == fixed[first.relative_to(project).as_posix()]  # restored, then fixed again
    assert second.read_bytes().endswith(b"# edited\n")
