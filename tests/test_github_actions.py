"""The GitHub Actions workflow users copy (``docs/github-actions.yml``): its commands, run here as the runner
would run them, check the project and leave a SARIF report that code scanning accepts, which the upload step
sends even when the check fails, and only when this run wrote it (never a report the pull request committed); the
cache steps keep the cache the check writes, with its key, so that a run on a fresh runner is warm."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from conftest import FIXTURES, REPO, subprocess_env, valid_sarif, write_project
from dispatchlint import __version__

yaml = pytest.importorskip("yaml")
WORKFLOW = REPO / "docs" / "github-actions.yml"


def _steps() -> List[Dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    return list(job["steps"])


def _step(name: str) -> Dict[str, Any]:
    return next(step for step in _steps() if step.get("name") == name)


def _run_check_step(
    project: Path, tmp_path: Path, command: str = "", seconds: float = 300, step: str = "Check"
) -> subprocess.CompletedProcess:
    """The check step's script (or ``step``'s), through bash as the runner runs it, with ``dispatchlint`` on PATH
    as the install step leaves it (or ``command`` in its place), the runner's temporary folder and the step's
    output file. After ``seconds`` the step is stopped as the runner stops a step at its time limit: every
    process of it killed, and :class:`subprocess.TimeoutExpired` raised."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "dispatchlint"
    shim.write_text(command or f'#!/bin/sh\nexec "{sys.executable}" -m dispatchlint "$@"\n', encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    environment = subprocess_env()
    environment["PATH"] = f"{bin_dir}{os.pathsep}{environment.get('PATH', '')}"
    environment["RUNNER_TEMP"] = str(tmp_path / "runner-temp")
    environment["GITHUB_OUTPUT"] = str(tmp_path / "github-output")
    script = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step(step)["run"]]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(script, cwd=project, env=environment, text=True, start_new_session=True, **pipes) as run:
        try:
            stdout, stderr = run.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
            raise
    return subprocess.CompletedProcess(script, run.returncode, stdout, stderr)


def _uploaded(tmp_path: Path) -> Optional[Path]:
    """The report the upload step sends: ``steps.check.outputs.report`` as the check step set it (None: the step
    set none, and the upload's condition skips it)."""
    upload = _step("Upload the findings to code scanning")
    assert upload["if"] == "always() && steps.check.outputs.report != ''"
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.report }}"
    output = tmp_path / "github-output"
    lines = output.read_text(encoding="utf-8").splitlines() if output.exists() else []
    reports = [line[len("report=") :] for line in lines if line.startswith("report=")]
    return Path(reports[-1]) if reports else None


def test_the_workflow_runs_on_pull_requests_and_may_upload_results() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers and "push" in triggers
    assert workflow["permissions"]["security-events"] == "write"
    uses = [step.get("uses", "") for step in _steps()]
    assert uses[0].startswith("actions/checkout@") and any(u.startswith("actions/setup-python@") for u in uses)


def test_the_install_step_pins_the_version_the_package_declares() -> None:
    assert f"@v{__version__}" in _step("Install dispatchlint")["run"]


def test_the_check_step_fails_on_findings_and_leaves_a_valid_sarif_report(tmp_path: Path) -> None:
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    completed = _run_check_step(project, tmp_path)
    assert completed.returncode == 1, completed.stderr
    report = _uploaded(tmp_path)
    assert report is not None and report.parent == tmp_path / "runner-temp"
    log = valid_sarif(report.read_text(encoding="utf-8"))
    assert len(log["runs"][0]["results"]) == 3
    upload = _step("Upload the findings to code scanning")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["if"].startswith("always()"), "the report must be uploaded when the check fails"


@pytest.mark.parametrize("ends", ["killed", "timed out"])
def test_a_report_the_pull_request_committed_is_never_uploaded(tmp_path: Path, ends: str) -> None:
    """A stale ``dispatchlint.sarif`` committed with no results, and a check that ends before it writes its own
    report (killed, or stopped at the job's time limit): the upload step has nothing to send."""
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    stale = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "dispatchlint"}}, "results": []}]}
    for where in (project, tmp_path / "runner-temp"):  # the checkout, and a runner folder left as it was
        where.mkdir(exist_ok=True)
        (where / "dispatchlint.sarif").write_text(json.dumps(stale), encoding="utf-8")
    if ends == "killed":
        assert _run_check_step(project, tmp_path, "#!/bin/sh\nkill -9 $$\n").returncode != 0
    else:
        with pytest.raises(subprocess.TimeoutExpired):
            _run_check_step(project, tmp_path, "#!/bin/sh\nsleep 600\n", seconds=3)
    assert _uploaded(tmp_path) is None
    assert not (tmp_path / "runner-temp" / "dispatchlint.sarif").exists()


def test_the_check_step_passes_on_a_clean_project(tmp_path: Path) -> None:
    (tmp_path / "clean").mkdir()
    project = write_project(
        tmp_path / "clean", {"agent/__init__.py": "", "agent/tools.py": "def ok():\n    return 1\n"}
    )
    completed = _run_check_step(project, tmp_path)
    assert completed.returncode == 0, completed.stderr
    report = _uploaded(tmp_path)
    assert report is not None
    assert valid_sarif(report.read_text("utf-8"))["runs"][0]["results"] == []


#: ``dispatchlint`` as installed, telling on stderr whether the results were linked or served from the cache.
_VERBOSE = f'#!/bin/sh\nexec "{sys.executable}" -m dispatchlint -v "$@"\n'
_RESTORE, _SAVE = "Restore the dispatchlint cache", "Save the dispatchlint cache"


def _stages(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith("timing: ") and " from the cache); " in line)


def _cached_folder(tmp_path: Path) -> Path:
    """The folder the cache steps keep, on the test's runner."""
    path = _step(_RESTORE)["with"]["path"]
    assert path == _step(_SAVE)["with"]["path"] and path.startswith("${{ runner.temp }}/")
    return tmp_path / "runner-temp" / path[len("${{ runner.temp }}/") :]


def test_the_cache_is_restored_before_the_check_and_saved_after_it_even_when_it_fails() -> None:
    names = [step.get("name") for step in _steps()]
    assert names.index("Read the dispatchlint version") < names.index(_RESTORE) < names.index("Check")
    assert names.index("Check") < names.index(_SAVE)
    restore, save = _step(_RESTORE), _step(_SAVE)
    assert restore["uses"].startswith("actions/cache/restore@") and save["uses"].startswith("actions/cache/save@")
    condition = "always() && steps.cache.outputs.cache-primary-key != '' && steps.cache.outputs.cache-hit != 'true'"
    assert save["if"] == condition and restore["id"] == "cache"
    assert save["with"]["key"] == "${{ steps.cache.outputs.cache-primary-key }}"
    key = restore["with"]["key"]
    for part in ("${{ steps.dispatchlint.outputs.version }}", "'**/pyproject.toml'", "'**/*.lock'", "github.sha"):
        assert part in key, part
    fallbacks = restore["with"]["restore-keys"].splitlines()
    assert len(fallbacks) == 2 and all(key.startswith(prefix) and prefix.endswith("-") for prefix in fallbacks)
    assert "hashFiles" in fallbacks[0] and "hashFiles" not in fallbacks[1]  # then any cache of this version


def test_the_check_keeps_its_cache_and_its_key_where_the_cache_steps_look() -> None:
    run = _step("Check")["run"]
    assert "--no-cache" not in run
    assert '--cache-dir "$RUNNER_TEMP/dispatchlint/cache"' in run
    assert 'export XDG_STATE_HOME="$RUNNER_TEMP/dispatchlint/state"' in run
    assert _step(_RESTORE)["with"]["path"] == "${{ runner.temp }}/dispatchlint"


def test_the_version_in_the_cache_key_is_the_installed_version(tmp_path: Path) -> None:
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    assert _run_check_step(project, tmp_path, step="Read the dispatchlint version").returncode == 0
    lines = (tmp_path / "github-output").read_text(encoding="utf-8").splitlines()
    assert lines == [f"version={__version__}"]


def _new_runner(tmp_path: Path, keep: List[str]) -> None:
    """A fresh runner whose cache step restored what the last run's kept (only the parts of it in ``keep``)."""
    folder = _cached_folder(tmp_path)
    saved = tmp_path / "actions-cache"
    shutil.rmtree(saved, ignore_errors=True)
    shutil.copytree(folder, saved, symlinks=True)
    shutil.rmtree(tmp_path / "runner-temp")
    folder.mkdir(parents=True)
    for part in keep:
        shutil.copytree(saved / part, folder / part, symlinks=True)
    (tmp_path / "github-output").unlink()


def test_a_run_on_a_fresh_runner_with_the_restored_cache_is_warm(tmp_path: Path) -> None:
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    cold = _run_check_step(project, tmp_path, _VERBOSE)
    assert cold.returncode == 1 and "link" in _stages(cold.stderr), cold.stderr
    report = _uploaded(tmp_path)
    assert report is not None
    sarif = report.read_text(encoding="utf-8")
    _new_runner(tmp_path, ["cache", "state"])
    warm = _run_check_step(project, tmp_path, _VERBOSE)
    assert warm.returncode == 1 and "stored results" in _stages(warm.stderr), warm.stderr
    assert all(line.endswith("from the cache") for line in warm.stderr.splitlines() if ".py: " in line)
    assert report.read_text(encoding="utf-8") == sarif


def test_a_cache_restored_without_its_key_is_not_believed(tmp_path: Path) -> None:
    """What keeping the key is for: a new key verifies no restored entry, and the run is cold (and correct)."""
    project = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", project)
    _run_check_step(project, tmp_path, _VERBOSE)
    report = _uploaded(tmp_path)
    assert report is not None
    sarif = report.read_text(encoding="utf-8")
    _new_runner(tmp_path, ["cache"])
    again = _run_check_step(project, tmp_path, _VERBOSE)
    assert again.returncode == 1 and "link" in _stages(again.stderr), again.stderr
    assert not any(line.endswith("from the cache") for line in again.stderr.splitlines() if ".py: " in line)
    assert report.read_text(encoding="utf-8") == sarif
