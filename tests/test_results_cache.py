"""A run identical to an earlier one is answered from the stored results, with exactly the earlier output, for any
paths it reports on; any change the results depend on (a file, the settings, the rules) is a miss; a stored entry
that is not exactly valid results changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from conftest import FIXTURES, read_entry, subprocess_env, write_entry
from fixproject import copy_project

#: The stages a run answered from stored results has no use for (each a module or a package).
_STAGES = (
    "libcst",
    "multiprocessing",
    "dispatchlint.indexing.facts",
    "dispatchlint.indexing.indexer",
    "dispatchlint.indexing.project",
    "dispatchlint.linking",
    "dispatchlint.check",
    "dispatchlint.fix._fixable",
    "dispatchlint.fix._run",
    "dispatchlint.rules.rule",
    "dispatchlint.runtime",
)
#: Runs the command on its arguments, then prints which of the stages it loaded.
_PROBE = f"""
import contextlib, io, json, sys
from dispatchlint.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(json.dumps(sorted(s for s in {_STAGES!r} if any(m == s or m.startswith(s + ".") for m in sys.modules))))
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DISPATCHLINT_CACHE_DIR", str(tmp_path / "user-cache"))
    return copy_project(FIXTURES / "example", tmp_path / "project")


def _entries(tmp_path: Path) -> List[Path]:
    return sorted((tmp_path / "user-cache").glob("results-*/*/*.json"))


def _stages(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith("timing: ") and " from the cache); " in line)


def test_a_second_identical_run_reuses_the_results_and_prints_the_same(run_cli, project: Path, tmp_path) -> None:
    first = run_cli(project, "-v", cache=True)
    assert "link" in _stages(first.stderr) and len(_entries(tmp_path)) == 1
    second = run_cli(project, "-v", cache=True)
    assert "stored results" in _stages(second.stderr)
    assert (second.exit_code, second.stdout) == (first.exit_code, first.stdout) == (1, second.stdout)
    assert "taskbot/loop.py:26" in second.stdout and "taskbot/pool.py:21" in second.stdout


def test_stored_results_are_narrowed_to_each_run_paths(run_cli, project: Path, tmp_path) -> None:
    whole = run_cli(project, cache=True)
    fresh = run_cli(project, "taskbot/loop.py", "-v")  # no cache: linked anew
    reused = run_cli(project, "taskbot/loop.py", "-v", cache=True)
    assert "stored results" in _stages(reused.stderr)
    assert reused.stdout == fresh.stdout and reused.stdout != whole.stdout
    assert "taskbot/loop.py:26" in reused.stdout and "taskbot/pool.py" not in reused.stdout


def test_results_are_stored_by_a_run_on_one_file_for_the_whole_project(run_cli, project: Path) -> None:
    run_cli(project, "taskbot/pool.py", cache=True)
    whole = run_cli(project, "-v", cache=True)
    assert "stored results" in _stages(whole.stderr)
    assert whole.stdout == run_cli(project, "-v").stdout


def test_an_edited_file_is_a_miss(run_cli, project: Path) -> None:
    run_cli(project, cache=True)
    pool = project / "taskbot" / "pool.py"
    pool.write_text(pool.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    again = run_cli(project, "-v", cache=True)
    assert "link" in _stages(again.stderr)
    assert again.stdout == run_cli(project, "-v").stdout


def test_other_rules_or_settings_are_a_miss(run_cli, project: Path) -> None:
    run_cli(project, cache=True)
    only_parses = run_cli(project, "--select", "DL201", "-v", cache=True)
    assert "link" in _stages(only_parses.stderr)
    assert "DL101" not in only_parses.stdout and "DL201" in only_parses.stdout
    config = project / "pyproject.toml"
    config.write_text(config.read_text(encoding="utf-8") + '\n[tool.dispatchlint]\nignore = ["DL101"]\n')
    ignored = run_cli(project, "-v", cache=True)
    assert "link" in _stages(ignored.stderr) and "DL101" not in ignored.stdout


def _without_unresolved(results: dict) -> None:
    results.pop("unresolved_settings")


def _unresolved_as_number(results: dict) -> None:
    results["unresolved_settings"] = 3


def _finding_as_text(results: dict) -> None:
    results["findings"][0] = "DL101"


@pytest.mark.parametrize("damage", [_without_unresolved, _unresolved_as_number, _finding_as_text, None])
def test_a_malformed_entry_is_a_miss(run_cli, project: Path, tmp_path: Path, damage) -> None:
    first = run_cli(project, "-v", cache=True)
    [stored] = _entries(tmp_path)
    if damage is None:
        stored.write_text("not json", encoding="utf-8")
    else:
        entry = json.loads(read_entry(stored))
        damage(entry["results"])
        write_entry(stored, json.dumps(entry))  # signed: what is checked is the entry itself
    again = run_cli(project, "-v", cache=True)
    assert "link" in _stages(again.stderr) and again.stdout == first.stdout
    assert "stored results" in _stages(run_cli(project, "-v", cache=True).stderr)  # replaced by a valid entry


def test_a_project_keeps_one_entry_for_its_latest_state(run_cli, project: Path, tmp_path: Path) -> None:
    run_cli(project, cache=True)
    pool = project / "taskbot" / "pool.py"
    original = pool.read_bytes()
    pool.write_bytes(original + b"\n# edited\n")
    run_cli(project, cache=True)
    assert len(_entries(tmp_path)) == 1
    pool.write_bytes(original)  # back to the first state: its results were replaced, so it is linked again
    assert "link" in _stages(run_cli(project, "-v", cache=True).stderr)


def test_runs_that_need_the_linked_project_never_reuse_results(run_cli, project: Path) -> None:
    run_cli(project, "--output-format", "json", cache=True)  # results stored with every fix's edits
    for args in (["--diff"], ["--graph"]):
        result = run_cli(project, "-v", *args, cache=True)
        assert "link" in _stages(result.stderr), args


#: Every output format, and the statistics in both of theirs.
_FORMATS = (
    ("--output-format", "json"),
    ("--output-format", "sarif"),
    ("--output-format", "github"),
    ("--output-format", "text"),
    ("--statistics",),
    ("--statistics", "--output-format", "json"),
)
#: Projects whose findings carry fix edits: in the project's own files, and in its pyproject.toml (a fix that
#: imports the runtime declares it).
_EDITED = (("example", ()), ("fix_no_gate", ("--select", "ALL")), ("fix_chains", ()))


@pytest.mark.parametrize("fixture, selection", _EDITED, ids=[name for name, _ in _EDITED])
@pytest.mark.parametrize("output", _FORMATS, ids=[" ".join(args) for args in _FORMATS])
def test_every_format_prints_from_stored_results_what_a_cold_run_prints(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: str, selection, output
) -> None:
    monkeypatch.setenv("DISPATCHLINT_CACHE_DIR", str(tmp_path / "user-cache"))
    project = copy_project(FIXTURES / fixture, tmp_path / "project")
    cold = run_cli(project, *selection, *output, "-v")
    filled = run_cli(project, *selection, *output, "-v", cache=True)
    warm = run_cli(project, *selection, *output, "-v", cache=True)
    assert "link" in _stages(filled.stderr) and "stored results" in _stages(warm.stderr)
    assert (warm.exit_code, warm.stdout) == (filled.exit_code, filled.stdout) == (cold.exit_code, cold.stdout)
    assert cold.exit_code == 1


def test_the_stored_edits_are_those_a_cold_run_reports(run_cli, tmp_path: Path, monkeypatch) -> None:
    """The JSON edits served from the cache are the fixes' own: in the project's files and its pyproject.toml."""
    monkeypatch.setenv("DISPATCHLINT_CACHE_DIR", str(tmp_path / "user-cache"))
    project = copy_project(FIXTURES / "fix_no_gate", tmp_path / "project")
    run_cli(project, "--select", "ALL", "--output-format", "json", cache=True)
    warm = run_cli(project, "--select", "ALL", "--output-format", "json", "-v", cache=True)
    assert "stored results" in _stages(warm.stderr)
    edited = {edit["path"] for finding in warm.findings() for edit in finding["edits"]}
    assert {"pyproject.toml", "tinker/agent.py"} <= edited


def test_results_stored_without_edits_are_planned_once_for_a_format_that_shows_them(run_cli, project: Path) -> None:
    run_cli(project, cache=True)  # text: no edits planned, none stored
    planned = run_cli(project, "--output-format", "json", "-v", cache=True)
    assert "fix edits" in _stages(planned.stderr)
    for args in (["--output-format", "json"], ["--output-format", "sarif"], []):
        assert "stored results" in _stages(run_cli(project, "-v", *args, cache=True).stderr), args
    assert any(finding["edits"] for finding in planned.findings())


def test_the_stored_edits_are_narrowed_and_shown_relative_to_the_working_folder(run_cli, project: Path) -> None:
    run_cli(project, "--output-format", "json", cache=True)
    fresh = run_cli(project / "taskbot", "pool.py", "--output-format", "json")
    reused = run_cli(project / "taskbot", "pool.py", "--output-format", "json", "-v", cache=True)
    assert "stored results" in _stages(reused.stderr) and reused.stdout == fresh.stdout
    paths = {edit["path"] for finding in reused.findings() for edit in finding["edits"]}
    assert paths == {"builtin.py"} and {finding["path"] for finding in reused.findings()} == {"pool.py"}


def test_an_edit_that_moves_the_fix_edits_is_a_miss(run_cli, project: Path) -> None:
    first = run_cli(project, "--output-format", "json", cache=True)
    assert "stored results" in _stages(run_cli(project, "--output-format", "json", "-v", cache=True).stderr)
    builtin = project / "taskbot" / "builtin.py"
    builtin.write_text("# moved down a line\n" + builtin.read_text(encoding="utf-8"), encoding="utf-8")
    again = run_cli(project, "--output-format", "json", "-v", cache=True)
    assert "link" in _stages(again.stderr)
    assert again.stdout == run_cli(project, "--output-format", "json").stdout != first.stdout


def test_a_changed_dependency_declaration_is_a_miss(run_cli, tmp_path: Path, monkeypatch) -> None:
    """The settings read from pyproject.toml stay the same; the fix edits do not: the runtime is declared now."""
    monkeypatch.setenv("DISPATCHLINT_CACHE_DIR", str(tmp_path / "user-cache"))
    project = copy_project(FIXTURES / "fix_no_gate", tmp_path / "project")
    args = ("--select", "ALL", "--output-format", "json")
    first = run_cli(project, *args, cache=True)
    assert "stored results" in _stages(run_cli(project, *args, "-v", cache=True).stderr)
    config = project / "pyproject.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[project]\n", '[project]\ndependencies = ["dispatchlint-runtime"]\n'), "utf-8")
    again = run_cli(project, *args, "-v", cache=True)
    assert "link" in _stages(again.stderr)
    assert again.stdout == run_cli(project, *args).stdout != first.stdout
    assert "pyproject.toml" not in {edit["path"] for finding in again.findings() for edit in finding["edits"]}


def _loaded_stages(project: Path, tmp_path: Path, *args: str) -> List[str]:
    env = {**subprocess_env(), "DISPATCHLINT_CACHE_DIR": str(tmp_path / "user-cache")}
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


@pytest.mark.parametrize("output", [args for args in _FORMATS if args != ("--output-format", "text")])
def test_a_machine_format_answered_from_stored_results_loads_none_of_the_stages(
    project: Path, tmp_path: Path, output
) -> None:
    """Nor the rules' modules for their documentation, nor libcst for the fixes' edits."""
    filled = _loaded_stages(project, tmp_path, "--output-format", "json")
    assert {"libcst", "dispatchlint.linking", "dispatchlint.fix._run", "dispatchlint.rules.rule"} <= set(filled)
    assert _loaded_stages(project, tmp_path, *output) == []


def test_a_run_answered_from_stored_results_loads_none_of_the_stages(project: Path, tmp_path: Path) -> None:
    """No libcst, no facts' classes, no indexer, linker, rule check or fix decision: the results need none."""
    filled = _loaded_stages(project, tmp_path, "taskbot/loop.py")
    assert {"libcst", "dispatchlint.linking", "dispatchlint.check", "dispatchlint.rules.rule"} <= set(filled)
    assert _loaded_stages(project, tmp_path, "taskbot/loop.py") == []
    assert _loaded_stages(project, tmp_path, ".") == []


def test_cache_dir_keeps_the_facts_and_results_where_it_says(run_cli, project: Path, tmp_path: Path) -> None:
    """Instead of $DISPATCHLINT_CACHE_DIR (set by the fixture), a folder named relative to the working folder."""
    first = run_cli(project, "--cache-dir", "../ci-cache", "-v", cache=True)
    folder = tmp_path / "ci-cache"
    assert "link" in _stages(first.stderr) and not (tmp_path / "user-cache").exists()
    assert len(list(folder.glob("results-*/*/*.json"))) == 1 and list(folder.glob("facts-*/*/*.json"))
    again = run_cli(project, "--cache-dir", str(folder), "-v", cache=True)
    assert "stored results" in _stages(again.stderr) and again.stdout == first.stdout
    settings = run_cli(project, "--cache-dir", "../ci-cache", "--show-settings", "--output-format", "json", cache=True)
    assert json.loads(settings.stdout)["projects"][0]["cache"] == str(folder)


def test_cache_dir_cannot_be_combined_with_no_cache(run_cli, project: Path) -> None:
    refused = run_cli(project, "--cache-dir", "../ci-cache")  # run_cli adds --no-cache
    assert refused.exit_code == 2 and "--no-cache cannot be combined with --cache-dir" in refused.stderr
