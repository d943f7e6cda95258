"""``dispatchlint-runtime``: the runtime coercer as a distribution of its own (``runtime/pyproject.toml``), built
from the linter's own sources, depending on nothing; what ``--fix`` declares in the projects it wires to it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO
from dispatchlint import __version__
from dispatchlint.fix._dependency import RUNTIME_DISTRIBUTION
from fixproject import copy_project
from test_fix_runtime import _PRELUDE, FIXED, PROBES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the backport, on older Pythons
    import tomli as tomllib

RUNTIME = REPO / "runtime"


def test_the_runtime_distribution_is_the_runtime_alone_at_the_linter_s_version() -> None:
    project = tomllib.loads((RUNTIME / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == RUNTIME_DISTRIBUTION
    assert project["project"]["version"] == __version__
    assert project["project"]["dependencies"] == []
    settings = project["tool"]["setuptools"]
    assert settings["packages"] == ["dispatchlint.runtime"]
    assert (RUNTIME / settings["package-dir"]["dispatchlint.runtime"]).resolve() == REPO / "dispatchlint" / "runtime"


@pytest.mark.slow
def test_the_runtime_installs_alone_and_runs_a_fixed_project(run_cli, tmp_path: Path) -> None:
    """Build the wheel (pip, which fetches the build backend), install it with nothing else in a fresh virtual
    environment, and run there the fix of a project with no gate: its tools get repaired arguments."""
    sources = tmp_path / "sources"
    shutil.copytree(RUNTIME, sources / "runtime", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    shutil.copytree(REPO / "dispatchlint" / "runtime", sources / "dispatchlint" / "runtime")
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(sources / "runtime")]
    subprocess.run(build, check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("dispatchlint_runtime-*.whl")
    environment = tmp_path / "env"
    venv.create(environment, with_pip=True)
    python = environment / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    install = [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=300)

    project = copy_project(FIXTURES / "fix_no_gate", tmp_path / "project")
    assert run_cli(project, "--select", "DL102", "--fix").exit_code == 0
    probe = (
        f"import sys; sys.path.insert(0, {str(project)!r})\n"
        "import dispatchlint, dispatchlint.runtime\n"
        "assert dispatchlint.__file__ is None  # a namespace: the linter is not installed\n"
        "for absent in ('libcst', 'click'):\n"
        "    try:\n        __import__(absent)\n    except ImportError:\n        pass\n"
        "    else:\n        raise AssertionError(absent + ' is installed')\n"
        + _PRELUDE
        + PROBES["fix_no_gate"]
        + "\nprint(json.dumps(out))"
    )
    done = subprocess.run([str(python), "-I", "-c", probe], cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == FIXED["fix_no_gate"]
