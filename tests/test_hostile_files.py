"""Nothing a file holds can crash, hang or own a run: deep nesting, what Python rejects and libcst accepts (and the
other way round), a FIFO named like a module, a file too large to index, a megabyte of configuration. Each
case sits next to the bundled example, whose three findings must survive it.

Runs that could crash the interpreter (deep nesting reaches native code) are child processes, so a crash fails
the test instead of the suite."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import libcst
import pytest

from conftest import FIXTURES, relative_errors, relative_findings, subprocess_env
from fixproject import copy_project

EXAMPLE_FINDINGS = {
    ("DL201", "taskbot/builtin.py:13"),
    ("DL101", "taskbot/loop.py:26"),
    ("DL101", "taskbot/pool.py:21"),
}

#: Files that Python itself refuses (so DL001, with Python's reason), and a word of that reason.
REJECTED_BY_PYTHON: Dict[str, tuple] = {
    "unary_10000.py": ("x = " + "-" * 10_000 + "1\n", "too complex"),
    "parens_2000.py": ("x = " + "(" * 2_000 + "1" + ")" * 2_000 + "\n", "too many nested parentheses"),
    "brackets_2000.py": ("x = " + "[" * 2_000 + "]" * 2_000 + "\n", "too many nested parentheses"),
    "parens_1000.py": ("x = " + "(" * 1_000 + "1" + ")" * 1_000 + "\n", "too many nested parentheses"),
    "elif_10000.py": (
        "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 10_000)),
        "too complex",
    ),
    "calls_5000.py": ("x = f" + "()" * 5_000 + "\n", "nested too deeply"),
    "nul_in_comment.py": ("x = 1  # a\0b\n", "null bytes"),
    "indent_101.py": ("".join(" " * i + "if x:\n" for i in range(101)) + " " * 101 + "pass\n", "indentation"),
}

#: Files Python accepts, nested 500 levels deep in each way an expression or a statement nests: analysed fully.
DEEP_BUT_VALID = {
    "unary_500.py": "x = " + "-" * 500 + "1\n",
    "not_500.py": "x = " + "not " * 500 + "y\n",
    "binop_500.py": "x = " + " + ".join(["y"] * 500) + "\n",
    "power_500.py": "x = " + " ** ".join(["y"] * 500) + "\n",
    "attributes_500.py": "x = y" + ".a" * 500 + "\n",
    "calls_500.py": "x = f" + "()" * 500 + "\n",
    "subscripts_500.py": "x = y" + "[0]" * 500 + "\n",
    "conditional_500.py": "x = " + "a if b else " * 500 + "c\n",
    "lambda_500.py": "x = " + "lambda: " * 500 + "1\n",
    "strings_500.py": "x = " + " ".join(['"a"'] * 500) + "\n",
    "elif_500.py": "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 500)),
    "indent_99.py": "".join(" " * i + "if x:\n" for i in range(99)) + " " * 99 + "pass\n",
    "parens_199.py": "x = " + "(" * 199 + "1" + ")" * 199 + "\n",
}


def _project_with(tmp_path: Path, files: Dict[str, str]) -> Path:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    for name, source in files.items():
        (project / "hostile").mkdir(exist_ok=True)
        (project / "hostile" / name).write_text(source, encoding="utf-8")
    return project


def _run_child(project: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "dispatchlint", "--format", "json", "--no-cache", *args]
    completed = subprocess.run(
        command, cwd=project, env=subprocess_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    assert completed.returncode in (0, 1, 2), f"the run died (exit {completed.returncode}): {completed.stderr[-2000:]}"
    return completed


def _locations(completed: subprocess.CompletedProcess, project: Path) -> set:
    return {(f["code"], f"{f['path']}:{f['line']}") for f in relative_findings(completed.stdout, project)}


def test_files_python_rejects_are_dl001_with_pythons_reason_and_the_run_goes_on(tmp_path: Path) -> None:
    project = _project_with(tmp_path, {name: source for name, (source, _) in REJECTED_BY_PYTHON.items()})
    completed = _run_child(project)
    assert completed.returncode == 1, completed.stderr
    findings = relative_findings(completed.stdout, project)
    assert EXAMPLE_FINDINGS <= _locations(completed, project)
    for name, (_, reason) in REJECTED_BY_PYTHON.items():
        found = [f for f in findings if f["path"] == f"hostile/{name}"]
        assert [f["code"] for f in found] == ["DL001"], name
        assert reason in found[0]["message"] and found[0]["message"].startswith("cannot parse: "), found[0]
    assert "internal error" not in completed.stderr


def test_files_nested_500_levels_deep_are_analysed_like_any_other(tmp_path: Path) -> None:
    deep = dict(DEEP_BUT_VALID)
    # a dispatch that bypasses the gate, inside a module nested that deep, is still found
    deep["deep_dispatch.py"] = (
        "from taskbot.builtin import BUILTIN_EXECUTORS\n\n\n"
        "def run(agent, name, arguments, ctx):\n"
        "    args = json.loads(arguments)\n"
        "    weight = " + "-" * 500 + "1\n"
        "    return BUILTIN_EXECUTORS[name](agent, args, ctx)\n"
    )
    deep["deep_dispatch.py"] = "import json\n" + deep["deep_dispatch.py"]
    for source in deep.values():
        compile(source, "check", "exec")  # Python accepts every one of them
    project = _project_with(tmp_path, deep)
    completed = _run_child(project)
    assert completed.returncode == 1 and not completed.stderr.strip(), completed.stderr
    assert _locations(completed, project) == EXAMPLE_FINDINGS | {("DL101", "hostile/deep_dispatch.py:8")}


def test_a_value_rebuilt_from_itself_in_branch_after_branch_keeps_its_facts_small() -> None:
    """``out = replace(out, route=out.route, ...)`` in arm after arm multiplies the value's flow as a tree with
    each arm (it shares its parts in memory): stored as it was, a real agent's 3,500-line loop grew to 10 GB of
    facts. Fourteen arms made 5 MB."""
    from dispatchlint.indexing import facts_json
    from dispatchlint.indexing.indexer import index_source

    arm = "    if flags[{}]:\n        out = replace(out, step=out.step, route=out.route)\n"
    arms = "".join(arm.format(i) for i in range(14))
    source = f"from dataclasses import replace\n\n\ndef plan(out, flags):\n{arms}    log(out)\n    return out\n"
    facts = index_source("loop.py", "loop", False, source.encode())
    assert len(facts_json.dumps(facts)) < 1_000_000


def test_a_file_python_accepts_and_libcst_does_not_is_said_to_be_that(run_cli, tmp_path: Path, monkeypatch) -> None:
    project = _project_with(tmp_path, {"odd.py": "x = 1\n"})
    real_parse = libcst.parse_module

    def parse(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        if source == b"x = 1\n":
            raise libcst.ParserSyntaxError("libcst's own grammar", lines=["x = 1"], raw_line=1, raw_column=0)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", parse)
    result = run_cli(project, "--format", "json")
    odd = [f for f in result.findings() if f["path"] == "hostile/odd.py"]
    assert [f["code"] for f in odd] == ["DL001"]
    assert odd[0]["message"].startswith("Python accepts this file but libcst cannot parse it, so it is not analysed")
    assert EXAMPLE_FINDINGS <= result.locations()


def test_a_bug_of_the_indexer_names_the_file_and_the_stage(run_cli, tmp_path: Path, monkeypatch) -> None:
    from dispatchlint.indexing import indexer

    project = _project_with(tmp_path, {"odd.py": "ODD = 1\n"})
    real_run = indexer._ModuleIndexer.run

    def run(self):  # type: ignore[no-untyped-def]
        if self.path == "hostile/odd.py":
            raise RuntimeError("a shape nobody expected")
        real_run(self)

    monkeypatch.setattr(indexer._ModuleIndexer, "run", run)
    result = run_cli(project, "--format", "json")
    assert result.exit_code == 2
    assert "hostile/odd.py: internal error while indexing (RuntimeError: a shape nobody expected)" in result.stderr
    assert result.locations() == EXAMPLE_FINDINGS


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_like_a_module_is_not_read(tmp_path: Path) -> None:
    project = _project_with(tmp_path, {})
    os.mkfifo(project / "taskbot" / "x.py")
    whole = _run_child(project, timeout=120)
    assert whole.returncode == 1 and _locations(whole, project) == EXAMPLE_FINDINGS, whole.stderr
    one_file = _run_child(project, "taskbot/loop.py", timeout=120)
    assert _locations(one_file, project) == {("DL101", "taskbot/loop.py:26")}
    named = _run_child(project, "taskbot/x.py", timeout=120)
    assert named.returncode == 0 and _locations(named, project) == set(), named.stderr


def test_a_large_file_is_analysed_in_a_bounded_worker_and_a_set_limit_skips_with_a_warning(
    run_cli, tmp_path: Path
) -> None:
    """No file is left out by size unless the project says so: a module over a megabyte is indexed alone, in a
    worker of its own, and its dispatch counts like any other."""
    project = _project_with(tmp_path, {})
    loop = project / "taskbot" / "loop.py"
    padding = "DATA = [\n" + f"    '{'x' * 1_000}',\n" * 1_100 + "]\n"  # bytes, not nodes: quick to parse
    loop.write_text(padding + loop.read_text(encoding="utf-8"), encoding="utf-8")
    assert loop.stat().st_size > 1_000_000
    result = run_cli(project, "--format", "json")
    assert result.exit_code == 1 and "skipped" not in result.stderr, result.stderr
    moved = f"taskbot/loop.py:{26 + padding.count(chr(10))}"
    assert result.locations() == EXAMPLE_FINDINGS - {("DL101", "taskbot/loop.py:26")} | {("DL101", moved)}
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "\n[tool.dispatchlint]\nmax-file-size = 1000\n")
    small = run_cli(project, "--format", "json")
    assert "warning: taskbot/builtin.py: skipped: 1,011 bytes, more than max-file-size (1,000 bytes)" in small.stderr
    assert ("DL201", "taskbot/builtin.py:13") not in small.locations()


@pytest.mark.parametrize("failure", ["memory", "killed"])
def test_a_file_whose_worker_runs_out_of_memory_or_dies_is_the_run_s_error(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    """A large file's bounded worker runs out of memory (its indexing allocates past the bound) or is killed (as
    the system's out-of-memory killer would): that file is reported (JSON ``errors``, exit code 2), and every
    other file's findings stand."""
    from dispatchlint.indexing import indexer
    from dispatchlint.indexing import project as indexing

    real_index_source = indexer.index_source

    def hungry(path: str, *job):
        if path == "hostile/generated.py":
            if failure == "killed":
                os.kill(os.getpid(), 9)
            return [bytearray(1024**2) for _ in range(4 * indexing.LARGE_FILE_MEMORY // 1024**2)]
        return real_index_source(path, *job)

    monkeypatch.setattr(indexing, "LARGE_FILE_BYTES", 10_000)
    monkeypatch.setattr(indexing, "LARGE_FILE_MEMORY", 512 * 1024**2)
    monkeypatch.setattr(indexer, "index_source", hungry)  # the worker is forked: it inherits the stand-in
    project = _project_with(tmp_path, {"generated.py": "DATA = [\n" + "    ('x' * 40, [1, 2, 3]),\n" * 1_000 + "]\n"})
    result = run_cli(project, "--format", "json")
    assert result.exit_code == 2
    errors = [error for error in result.errors() if error["path"] == "hostile/generated.py"]
    assert [error["kind"] for error in errors] == ["too-large-file"], result.errors()
    assert "needs more than 512 MiB of memory" in errors[0]["message"]
    assert result.locations() == EXAMPLE_FINDINGS


@pytest.mark.parametrize("value", ["0", "'1 MB'", "true", "-5"])
def test_max_file_size_must_be_a_positive_number_of_bytes(run_cli, tmp_path: Path, value: str) -> None:
    project = _project_with(tmp_path, {})
    (project / "pyproject.toml").write_text(f"[tool.dispatchlint]\nmax-file-size = {value}\n", encoding="utf-8")
    result = run_cli(project)
    assert result.exit_code == 2
    assert "max-file-size must be a positive number of bytes" in result.stderr


def test_ten_megabytes_of_exclude_patterns_are_matched_like_any_other(run_cli, tmp_path: Path) -> None:
    project = _project_with(tmp_path, {})
    patterns = ["a" * 10_000_000, "*" * 1_000_000 + "hostile.py", "b*" * 100_000]
    (project / "pyproject.toml").write_text(f"[tool.dispatchlint]\nexclude = {json.dumps(patterns)}\n")
    result = run_cli(project, "--format", "json")  # how long it takes is bench/'s to measure, not a test's
    assert result.exit_code == 1 and result.locations() == EXAMPLE_FINDINGS


def test_modules_nested_500_levels_deep_are_fixed_like_any_other(tmp_path: Path) -> None:
    """The fix walks the same trees as the analysis (was: "no automatic fix: ... RecursionError")."""
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    for relative in ("taskbot/builtin.py", "taskbot/loop.py"):
        path = project / relative
        path.write_text(path.read_text(encoding="utf-8") + "\nDEPTH = " + "-" * 500 + "1\n", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "dispatchlint", "--fix", "--no-cache"],
        cwd=project,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    fixed = (FIXTURES / "fix_example" / "expected_fixed" / "taskbot" / "builtin.py").read_text(encoding="utf-8")
    assert (project / "taskbot" / "builtin.py").read_text(encoding="utf-8") == fixed + "\nDEPTH = " + "-" * 500 + "1\n"


_DEEP_TOML = {
    "arrays": "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "inline tables": "x = " + "{a = " * 100_000 + "1" + "}" * 100_000 + "\n",
}


@pytest.mark.parametrize("where", ["root", "subfolder", "--config"])
@pytest.mark.parametrize("nesting", sorted(_DEEP_TOML))
def test_a_configuration_nested_too_deeply_to_read_is_a_configuration_error_naming_it(
    tmp_path: Path, where: str, nesting: str
) -> None:
    """A pyproject.toml (the root's, any folder's that mentions dispatchlint, or one given with ``--config``)
    nested 100,000 levels deep: exit 2, the file named, no internal error."""
    project = _project_with(tmp_path, {})
    text = "[tool.dispatchlint]\n" + _DEEP_TOML[nesting]
    target = {"root": project, "subfolder": project / "hostile", "--config": tmp_path}[where] / "pyproject.toml"
    target.parent.mkdir(exist_ok=True)
    target.write_text(text, encoding="utf-8")
    completed = _run_child(project, *(["--config", str(target)] if where == "--config" else []), timeout=120)
    assert completed.returncode == 2
    assert f"error: {target}: nested too deeply to read" in completed.stderr, completed.stderr[-2000:]
    assert "internal error" not in completed.stderr


@pytest.mark.parametrize("document", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 100_000 + "1" + "}" * 100_000])
def test_a_baseline_nested_too_deeply_to_read_is_an_error_naming_it(tmp_path: Path, document: str) -> None:
    project = _project_with(tmp_path, {})
    baseline = tmp_path / "baseline.json"
    baseline.write_text(document, encoding="utf-8")
    completed = _run_child(project, "--baseline", str(baseline), timeout=120)
    assert completed.returncode == 2
    assert f"error: {baseline}: not a dispatchlint baseline (nested too deeply to read)" in completed.stderr


#: Files Python accepts that libcst would take minutes or more to parse (each bracket of a pattern or of a
#: deletion target multiplies its time), or that it nests deeper than any walk of its tree can follow.
TOO_COMPLEX: Dict[str, str] = {
    "tuples_12.py": "match x:\n    case " + "(" * 12 + "a" + ",)" * 12 + ":\n        pass\n",  # 51 s before
    "lists_150.py": "match x:\n    case " + "[" * 150 + "a" + "]" * 150 + ":\n        pass\n",
    "groups_30.py": "match x:\n    case " + "(" * 30 + "a" + ")" * 30 + ":\n        pass\n",
    "mappings_12.py": "match x:\n    case 1:\n        pass\n\n    # next\n    case "
    + "{'k': " * 12
    + "a"
    + "}" * 12
    + ":\n        pass\n",
    "classes_30.py": "match x:\n    case " + "C(k=" * 30 + "a" + ")" * 30 + ":\n        pass\n",
    "del_30.py": "x = 1\n# a comment line before it\ndel " + "(" * 30 + "a" + ",)" * 30 + "\n",
    "or_20000.py": "x = " + " or ".join(["a"] * 20_000) + "\n",
    "and_20000.py": "x = " + " and ".join(["a"] * 20_000) + "\n",
    "import_20000.py": "import " + ".".join(["a"] * 20_000) + "\n",
}
#: A hundred patterns nested eight tuples deep: each is parsed in a fifth of a second, all of them in twenty.
SLOW = "match x:\n" + ("    case " + "(" * 8 + "a" + ",)" * 8 + ":\n        pass\n") * 100


def _errors(completed: subprocess.CompletedProcess, project: Path) -> Dict[str, dict]:
    return {error["path"]: error for error in relative_errors(completed.stdout, project)}


def test_files_libcst_cannot_parse_in_time_are_the_run_s_errors_and_the_run_goes_on(tmp_path: Path) -> None:
    for source in TOO_COMPLEX.values():
        compile(source, "check", "exec")  # Python accepts every one of them
    project = _project_with(tmp_path, TOO_COMPLEX)
    started = time.monotonic()
    completed = _run_child(project, timeout=120)
    assert time.monotonic() - started < 60
    assert completed.returncode == 2 and _locations(completed, project) == EXAMPLE_FINDINGS, completed.stderr[-2000:]
    errors = _errors(completed, project)
    assert sorted(errors) == sorted(f"hostile/{name}" for name in TOO_COMPLEX)
    assert {error["kind"] for error in errors.values()} == {"too-complex-file"}
    assert "a `case` pattern nested 12 brackets deep (line 2)" in errors["hostile/tuples_12.py"]["message"]
    assert "a `del` target nested 30 brackets deep (line 3)" in errors["hostile/del_30.py"]["message"]
    assert "thousands of `or` or `and` operands" in errors["hostile/or_20000.py"]["message"]
    assert "internal error" not in completed.stderr


def test_a_file_that_outlasts_its_time_is_killed_and_is_the_run_s_error(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dispatchlint.indexing import project as indexing

    monkeypatch.setattr(indexing, "FILE_SECONDS", 2.0)
    project = _project_with(tmp_path, {"slow.py": SLOW})
    started = time.monotonic()
    result = run_cli(project, "--format", "json")
    assert time.monotonic() - started < 15
    assert result.exit_code == 2 and result.locations() == EXAMPLE_FINDINGS
    (error,) = result.errors()
    assert (error["path"], error["kind"]) == ("hostile/slow.py", "too-complex-file")
    assert "indexing it took longer than 2 s, the time a file of its size is given" in error["message"]


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="workers are looked for in /proc")
def test_ctrl_c_stops_a_run_within_a_second_and_leaves_no_worker_behind(tmp_path: Path) -> None:
    """Interrupted while its worker is deep in libcst's parser (which holds the interpreter's lock, so a run
    parsing in its own process could not even see the signal)."""
    project = _project_with(tmp_path, {"slow.py": SLOW})
    command = [sys.executable, "-m", "dispatchlint", "--no-cache", str(project)]
    child = subprocess.Popen(command, cwd=project, env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(4)
    assert child.poll() is None, "the run ended before it was interrupted"
    interrupted = time.monotonic()
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=30)
    assert time.monotonic() - interrupted < 1.0
    assert child.returncode == 2 and stderr.decode().strip().endswith("aborted")
    assert not _processes_naming(project), "workers outlived the run"


def _command_line(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:
        return b""


def _count_workers(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    from dispatchlint.indexing import _workers

    started: List[int] = []
    real_start = _workers._start

    def start(*args, **kwargs):  # type: ignore[no-untyped-def]
        started.append(1)
        return real_start(*args, **kwargs)

    monkeypatch.setattr(_workers, "_start", start)
    return started


@pytest.mark.parametrize("files", [10, 100])
def test_jobs_are_capped_at_the_work_and_the_cpus(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int
) -> None:
    """``--jobs 512`` forked 512 processes up front (14 GB): workers are started for the files there are to
    index, one per 32 of them, and never more than the CPUs."""
    from dispatchlint.indexing._workers import usable_cpus

    started = _count_workers(monkeypatch)
    project = _project_with(tmp_path, {f"m{number}.py": f"VALUE = {number}\n" for number in range(files)})
    result = run_cli(project, "--format", "json", "--jobs", "512")
    assert result.exit_code == 1 and result.locations() == EXAMPLE_FINDINGS
    indexed = len(list(project.rglob("*.py")))
    assert 1 <= len(started) <= min(usable_cpus(), max(1, indexed // 32))


@pytest.mark.parametrize("kills", ["once", "always"])
def test_a_killed_worker_costs_only_its_file_which_is_tried_again(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kills: str
) -> None:
    """A worker killed (as the out-of-memory killer would) while it indexes a file: the file is indexed again in
    a new worker; killed again, it is the run's error, and every other file's findings stand."""
    from dispatchlint.indexing import indexer

    real_index_source = indexer.index_source
    marker = tmp_path / "killed-once"

    def killed(path: str, *job):  # type: ignore[no-untyped-def]
        if path == "hostile/victim.py" and (kills == "always" or not marker.exists()):
            marker.touch()
            os.kill(os.getpid(), 9)
        return real_index_source(path, *job)

    monkeypatch.setattr(indexer, "index_source", killed)  # the workers are forked: they inherit the stand-in
    project = _project_with(tmp_path, {"victim.py": "VALUE = 1\n"})
    result = run_cli(project, "--format", "json", "--jobs", "4")
    assert result.locations() == EXAMPLE_FINDINGS
    errors = result.errors()
    if kills == "once":
        assert result.exit_code == 1 and errors == []
    else:
        assert result.exit_code == 2
        assert [(error["path"], error["kind"]) for error in errors] == [("hostile/victim.py", "worker-died")]
        assert "the process indexing it died, twice (killed by SIGKILL)" in errors[0]["message"]


def test_a_link_out_of_the_project_is_never_read_nor_written(tmp_path: Path) -> None:
    """A committed ``x.py -> /proc/self/environ`` printed the CI environment in a DL001 snippet, and ``--fix``
    wrote through a link to a module outside the project: both are left out, with a warning naming them, whether
    discovered or named on the command line."""
    project = _project_with(tmp_path, {})
    (project / "taskbot" / "x.py").symlink_to("/proc/self/environ")
    outside = tmp_path / "outside"
    outside.mkdir()
    builtin = project / "taskbot" / "builtin.py"
    builtin.rename(outside / "builtin.py")
    builtin.symlink_to(outside / "builtin.py")
    (project / "elsewhere").symlink_to(outside, target_is_directory=True)
    before = (outside / "builtin.py").read_bytes()
    environment = {**subprocess_env(), "CI_SECRET": "s3cr3t-token"}
    for args in ([], ["taskbot/x.py", "taskbot/builtin.py"], ["--fix"]):
        completed = subprocess.run(
            [sys.executable, "-m", "dispatchlint", "--no-cache", *args],
            cwd=project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert completed.returncode in (0, 1), completed.stderr
        assert "s3cr3t-token" not in completed.stdout + completed.stderr
        warnings = completed.stderr
        assert "warning: taskbot/x.py: a link to /proc/" in warnings
        assert f"warning: taskbot/builtin.py: a link to {outside / 'builtin.py'}, outside the project" in warnings
        assert f"warning: elsewhere: a link to {outside}, outside the project; it is not read" in warnings
        assert warnings.count("taskbot/builtin.py: a link") == 1
    assert (outside / "builtin.py").read_bytes() == before


def _without_permission_checks_dropped() -> List[str]:
    """The command prefix under which file permissions apply: none for a user, and for root (whom the kernel lets
    read anything) ``setpriv`` dropping the two capabilities that bypass them."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    capabilities = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={capabilities}", f"--inh-caps={capabilities}"]


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("setpriv") is None,
    reason="running as root without setpriv, which drops the capabilities that bypass permissions",
)
def test_a_folder_that_cannot_be_read_or_searched_is_a_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    """A folder that cannot be listed (mode 000) and one that can be listed but not searched (mode 600): each is
    named in a warning and left out, as Ruff does, and every other file is analysed (it aborted the run with a
    PermissionError). As root, the run is made under ``setpriv`` so that the permissions apply."""
    project = _project_with(tmp_path, {})
    for folder, mode in (("locked", 0o000), ("unsearchable", 0o600)):
        (project / folder / "sub").mkdir(parents=True)
        (project / folder / "tool.py").write_text("VALUE = 1\n", encoding="utf-8")
        (project / folder / "pyproject.toml").write_text("[tool.dispatchlint]\n", encoding="utf-8")
        (project / folder).chmod(mode)
    try:
        completed = subprocess.run(
            [*_without_permission_checks_dropped(), sys.executable, "-m", "dispatchlint", "--no-cache"],
            cwd=project,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    finally:
        for folder in ("locked", "unsearchable"):
            (project / folder).chmod(0o700)
    assert completed.returncode == 1, completed.stderr
    for folder in ("locked", "unsearchable"):
        message = f"warning: {folder}: cannot read this folder (Permission denied); the files in it are not analysed"
        assert message in completed.stderr
    assert "Found 3 findings." in completed.stdout


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="workers are looked for in /proc")
def test_workers_of_a_run_killed_outright_end_after_their_file(tmp_path: Path) -> None:
    """SIGKILL leaves a run no chance to kill its workers: each one ends once its file is done, not never (the
    pipe does not close for them, as every worker holds the run's ends of the pipes of those started before)."""
    seconds_of_parsing = "match x:\n" + ("    case " + "(" * 8 + "a" + ",)" * 8 + ":\n        pass\n") * 25
    project = _project_with(tmp_path, {"slow.py": seconds_of_parsing})
    command = [sys.executable, "-m", "dispatchlint", "--no-cache", str(project)]
    child = subprocess.Popen(command, cwd=project, env=subprocess_env(), stdout=subprocess.DEVNULL)
    time.sleep(3)
    child.kill()
    child.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _processes_naming(project):
        time.sleep(0.5)
    assert not _processes_naming(project), "workers outlived their run"


def _processes_naming(project: Path) -> List[str]:
    return [
        entry.name
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and str(project).encode() in _command_line(entry)
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_a_worker_bounds_its_own_cpu_time_for_a_run_that_is_gone() -> None:
    spin = "from dispatchlint.indexing._workers import _bound_cpu\n_bound_cpu(1.0)\nwhile True:\n    pass\n"
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-c", spin], env=subprocess_env(), timeout=60, check=False)
    assert completed.returncode == -signal.SIGXCPU and time.monotonic() - started < 20
