"""The GitHub Actions workflow users copy (``docs/github-actions.yml``): its commands, run here as the runner
would run them, check the project and leave a SARIF report that code scanning accepts, which the upload step
sends even when the check fails."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

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


def _run_check_step(project: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """The check step's command, through bash as the runner runs it, with ``dispatchlint`` on PATH as the
    install step leaves it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "dispatchlint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dispatchlint "$@"\n', encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    environment = subprocess_env()
    environment["PATH"] = f"{bin_dir}{os.pathsep}{environment.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-e", "-c", _step("Check")["run"]],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


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
    upload = _step("Upload the findings to code scanning")
    report = project / upload["with"]["sarif_file"]
    log = valid_sarif(report.read_text(encoding="utf-8"))
    assert len(log["runs"][0]["results"]) == 3
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["if"].startswith("always()"), "the report must be uploaded when the check fails"


def test_the_check_step_passes_on_a_clean_project(tmp_path: Path) -> None:
    (tmp_path / "clean").mkdir()
    project = write_project(
        tmp_path / "clean", {"agent/__init__.py": "", "agent/tools.py": "def ok():\n    return 1\n"}
    )
    completed = _run_check_step(project, tmp_path)
    assert completed.returncode == 0, completed.stderr
    log = valid_sarif(
        (project / _step("Upload the findings to code scanning")["with"]["sarif_file"]).read_text("utf-8")
    )
    assert log["runs"][0]["results"] == []
