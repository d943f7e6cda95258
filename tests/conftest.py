"""Shared helpers: run the real command on a project folder and read its JSON findings."""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence, Set, Tuple

import pytest

from dispatchlint.cli import main

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SARIF_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"


def valid_sarif(text: str) -> dict:
    """The SARIF log in ``text``, after checking it against the SARIF 2.1.0 schema (and the formats jsonschema
    can check here)."""
    import jsonschema

    log = json.loads(text)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda error: list(error.path))
    assert not errors, [f"{list(error.path)}: {error.message}" for error in errors[:5]]
    return log


def _shown(item: dict, cwd: Path) -> dict:
    """``item`` with its ``path`` (absolute in a JSON report) relative to ``cwd``, as the text output shows it."""
    return {**item, "path": Path(os.path.relpath(item["path"], cwd.resolve())).as_posix()}


def relative_findings(stdout: str, cwd: Path) -> List[dict]:
    """The findings of a JSON report, every path in them relative to ``cwd``."""
    return [
        {
            **_shown(finding, cwd),
            **{key: [_shown(item, cwd) for item in finding[key]] for key in ("edits", "related", "trace")},
        }
        for finding in json.loads(stdout)["findings"]
    ]


def relative_errors(stdout: str, cwd: Path) -> List[dict]:
    """The errors of a JSON report, their paths relative to ``cwd``."""
    return [_shown(error, cwd) for error in json.loads(stdout)["errors"]]


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    #: The folder the command ran from.
    cwd: Path

    def findings(self) -> List[dict]:
        """The JSON findings, their paths relative to the folder the command ran from."""
        return relative_findings(self.stdout, self.cwd)

    def errors(self) -> List[dict]:
        """The JSON errors, their paths relative to the folder the command ran from."""
        return relative_errors(self.stdout, self.cwd)

    def locations(self) -> Set[Tuple[str, str]]:
        return {(f["code"], f"{f['path']}:{f['line']}") for f in self.findings()}


@pytest.fixture(autouse=True, scope="session")
def private_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The facts cache of every test run (in-process or a child process) lives in a folder of its own, and so does
    the key its entries are signed with."""
    folder = tmp_path_factory.mktemp("cache") / "dispatchlint"
    os.environ["DISPATCHLINT_CACHE_DIR"] = str(folder)
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    return folder


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):
    """Run ``dispatchlint`` in-process from ``cwd`` with ``args``; return exit code and output. The facts cache
    stays off (tests must not write into the fixtures) unless a test asks for it."""

    def run(cwd: Path, *args: str, cache: bool = False) -> Run:
        previous = Path.cwd()
        os.chdir(cwd)
        try:
            folder = Path.cwd()
            code = main(list(args) + ([] if cache else ["--no-cache"]))
        finally:
            os.chdir(previous)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err, folder)

    return run


def subprocess_env(*first: Path) -> Dict[str, str]:
    """The environment for a child interpreter: ``first`` on its path, then this checkout (so that
    ``dispatchlint`` imports whether or not it is installed), then whatever PYTHONPATH was already set."""
    paths = [str(path) for path in first] + [str(REPO), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)), "PYTHONDONTWRITEBYTECODE": "1"}


def read_expected(fixture: Path) -> Tuple[Set[Tuple[str, str]], Sequence[str]]:
    """The findings a fixture expects (``CODE path:line`` lines) and its extra CLI args (``# args: ...``)."""
    expected = set()
    args: Sequence[str] = ()
    for line in (fixture / "expected.txt").read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("# args:"):
            args = shlex.split(stripped[len("# args:") :])
        elif stripped and not stripped.startswith("#"):
            code, location = stripped.split()
            expected.add((code, location))
    return expected, args


def write_project(root: Path, files: dict, config: dict = None) -> Path:
    """Write a small project (path -> source) with a pyproject.toml marking its root."""
    lines = ['[project]\nname = "example"\n']
    if config:
        lines.append("[tool.dispatchlint]\n")
        for key, value in config.items():
            lines.append(f"{key} = {json.dumps(value)}\n")
    (root / "pyproject.toml").write_text("".join(lines), encoding="utf-8")
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


def read_entry(entry: Path) -> str:
    """The text of a cache entry (``<cache>/<kind>-<format>/<xx>/<key>.json``), its signature checked."""
    from dispatchlint.indexing.facts_cache import FactsCache

    text = FactsCache(entry.parents[2]).read(entry.parents[1].name.rsplit("-", 1)[0], entry.stem)
    assert text is not None, f"{entry} does not verify"
    return text


def write_entry(entry: Path, text: str) -> None:
    """Replace a cache entry's text, signed with the user's key as the cache signs it."""
    from dispatchlint.indexing.facts_cache import FactsCache

    FactsCache(entry.parents[2]).write(entry.parents[1].name.rsplit("-", 1)[0], entry.stem, text)
