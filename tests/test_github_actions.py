"""The GitHub Actions workflow users copy (``docs/github-actions.yml``): its commands, run here as the runner
would run them, check the project and leave a SARIF report that code scanning accepts, which the upload step
sends even when the check fails, and only when this run wrote it (never a report the pull request committed)."""

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
    project: Path, tmp_path: Path, command: str = "", seconds: float = 300
) -> subprocess.CompletedProcess:
    """The check step's script, through bash as the runner runs it, with ``dispatchlint`` on PATH as the install
    step leaves it (or ``command`` in its place), the runner's temporary folder and the step's output file.
    After ``seconds`` the step is stopped as the runner stops a step at its time limit: every process of it
    killed, and :class:`subprocess.TimeoutExpired` raised."""
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
    script = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step("Check")["run"]]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(script, cwd=project, env=environment, text=True, start_new_session=True, **pipes) as step:
        try:
            stdout, stderr = step.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(step.pid, signal.SIGKILL)
            step.communicate()
            raise
    return subprocess.CompletedProcess(script, step.returncode, stdout, stderr)


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
