"""``dispatchlint server`` on the command line: its help, a clear error without the server extra, and the default
command untouched (``dispatchlint ./server`` still checks a folder named ``server``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, subprocess_env, write_project
from fixproject import copy_project

#: Runs the command in a child interpreter where the server extra's packages cannot be imported.
WITHOUT_EXTRA = (
    "import sys\n"
    "for name in ('pygls', 'lsprotocol'):\n"
    "    sys.modules[name] = None  # an import of it raises ModuleNotFoundError, as when it is not installed\n"
    "from dispatchlint.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_the_server_without_its_extra_names_the_extra_to_install(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRA, "server"],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(
        "error: `dispatchlint server` needs the server extra: pip install 'dispatchlint[server]' ("
    )
    assert re.search(r"\((pygls|lsprotocol) is not installed\)\n\Z", done.stderr) and done.stderr.count("\n") == 1


def test_the_server_has_help_of_its_own(run_cli, tmp_path: Path) -> None:
    shown = run_cli(tmp_path, "server", "--help", cache=True)
    assert shown.exit_code == 0
    assert shown.stdout.startswith("Usage: dispatchlint server [OPTIONS]")
    assert "language server" in shown.stdout


def test_the_main_help_points_at_the_server(run_cli, tmp_path: Path) -> None:
    shown = run_cli(tmp_path, "--help", cache=True)
    assert shown.exit_code == 0 and "`dispatchlint server` runs the language server" in " ".join(shown.stdout.split())


@pytest.mark.parametrize("spelling", ["./server", "server/"])
def test_a_folder_named_server_is_still_checked_as_a_path(run_cli, tmp_path: Path, spelling: str) -> None:
    write_project(tmp_path, {})
    copy_project(FIXTURES / "example" / "taskbot", tmp_path / "server" / "taskbot")
    checked = run_cli(tmp_path, spelling, "--format", "json")
    assert checked.exit_code == 1
    assert {code for code, _ in checked.locations()} == {"DL101", "DL201"}
