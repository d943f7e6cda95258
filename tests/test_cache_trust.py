"""Nothing a repository holds can run code or change findings through the facts cache: entries are JSON,
validated field by field, kept in the user's own private folder; a cache that cannot be written is a warning."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest

from conftest import FIXTURES
from dispatchlint.analysis import _facts_json, cache
from dispatchlint.analysis.discover import Ignores, discover
from dispatchlint.analysis.facts import ModuleFacts
from dispatchlint.analysis.index import index_source
from fixproject import copy_project

#: The folder of the user's cache that holds facts.
FACTS = f"facts-{cache._FORMAT}"
EXAMPLE_FINDINGS = {
    ("DL201", "taskbot/builtin.py:13"),
    ("DL101", "taskbot/loop.py:26"),
    ("DL101", "taskbot/pool.py:21"),
}


class _Payload:
    """Unpickling this runs ``os.system``: it writes a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.marker}",))


def _keys(project: Path):  # type: ignore[no-untyped-def]
    """Each file of the project with the cache key its facts are stored under."""
    store = cache.FactsCache(Path("unused"))
    files = discover(project, Ignores(project, ())).files
    return [(source, store.key(source, source.path.read_bytes())) for source in files]


def _loop_without_dispatches(source) -> ModuleFacts:  # type: ignore[no-untyped-def]
    return ModuleFacts(source.relative, source.module, source.is_package)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DISPATCHLINT_CACHE_DIR", str(tmp_path / "user-cache"))
    return copy_project(FIXTURES / "example", tmp_path / "project")


def test_a_pickle_committed_to_the_repository_runs_nothing(run_cli, project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "owned"
    for _, key in _keys(project):
        for folder in (project / ".dispatchlint_cache" / key[:2], tmp_path / "user-cache" / FACTS / key[:2]):
            folder.mkdir(parents=True, exist_ok=True)
            for suffix in (".pickle", ".json"):
                (folder / f"{key}{suffix}").write_bytes(pickle.dumps(_Payload(marker)))
    result = run_cli(project, "--format", "json", cache=True)
    assert not marker.exists()
    assert result.locations() == EXAMPLE_FINDINGS


def test_a_well_formed_entry_in_the_repository_changes_no_finding(run_cli, project: Path) -> None:
    """An entry exactly as the cache would write it, saying the files dispatch nothing: the repository is never
    where the cache is read from, under its old folder or any other."""
    for source, key in _keys(project):
        text = _facts_json.dumps(_loop_without_dispatches(source))
        for folder in (project / ".dispatchlint_cache", project / ".dispatchlint_cache" / FACTS):
            (folder / key[:2]).mkdir(parents=True, exist_ok=True)
            (folder / key[:2] / f"{key}.json").write_text(text, encoding="utf-8")
    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data.pop("dispatches"),  # incomplete
        lambda data: data.update(extra=[]),  # a field the facts do not have
        lambda data: data.update(dispatches="none"),  # the wrong type
        lambda data: data.update(is_package=0),  # an int is not a bool
        lambda data: data["dispatches"][0].update(span={"@": "Location"}),  # another class
        lambda data: data["dispatches"][0]["span"].append(7),  # a span of five numbers
        lambda data: data["dispatches"][0]["span"].__setitem__(0, True),  # a bool is not a line
        lambda data: data["dispatches"][0].update(kind="no-such-kind"),  # not an enum value
        lambda data: data.update({"@": "Span"}),  # not module facts at all
    ],
)
def test_a_malformed_entry_in_the_users_cache_is_a_miss(run_cli, project: Path, tmp_path: Path, damage) -> None:
    import json

    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS
    (entry,) = [
        path
        for path in (tmp_path / "user-cache" / FACTS).rglob("*.json")
        if json.loads(path.read_text(encoding="utf-8"))["path"] == "taskbot/loop.py"
    ]
    data = json.loads(entry.read_text(encoding="utf-8"))
    damage(data)
    entry.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(_facts_json.InvalidFacts):
        _facts_json.loads_record(entry.read_text(encoding="utf-8"), ModuleFacts)
    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS


def test_an_entry_of_another_file_is_a_miss(run_cli, project: Path, tmp_path: Path) -> None:
    """Facts are believed only for the file they were computed for, whatever their key."""
    keys = dict((source.relative, key) for source, key in _keys(project))
    folder = tmp_path / "user-cache" / FACTS / keys["taskbot/loop.py"][:2]
    folder.mkdir(parents=True)
    other = next(source for source, _ in _keys(project) if source.relative == "taskbot/context.py")
    (folder / f"{keys['taskbot/loop.py']}.json").write_text(_facts_json.dumps(_loop_without_dispatches(other)))
    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_cache_folder_others_can_write_to_is_not_used(run_cli, project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "user-cache"
    folder.mkdir(mode=0o700)
    for source, key in _keys(project):
        (folder / FACTS / key[:2]).mkdir(parents=True, exist_ok=True)
        (folder / FACTS / key[:2] / f"{key}.json").write_text(_facts_json.dumps(_loop_without_dispatches(source)))
    folder.chmod(0o777)
    result = run_cli(project, "--format", "json", cache=True)
    assert result.locations() == EXAMPLE_FINDINGS and result.exit_code == 1
    assert f"warning: the cache folder {folder} is not private to this user; it is not used" in result.stderr


def test_a_new_cache_folder_is_private(run_cli, project: Path, tmp_path: Path) -> None:
    run_cli(project, "--format", "json", cache=True)
    assert stat.S_IMODE((tmp_path / "user-cache").stat().st_mode) == 0o700
    assert list((tmp_path / "user-cache").rglob("*.json"))


def test_a_cache_that_cannot_be_written_is_a_warning_and_leaves_no_temporary_files(
    run_cli, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace

    def disk_full(source: str, target: str) -> None:
        if "user-cache" in str(target):
            raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(cache.os, "replace", disk_full)
    result = run_cli(project, "--format", "json", cache=True)
    assert result.exit_code == 1 and result.locations() == EXAMPLE_FINDINGS
    assert result.stderr.count("warning: cannot write the cache") == 1
    assert "No space left on device" in result.stderr
    assert not [path for path in (tmp_path / "user-cache").rglob("*") if path.is_file()]


@pytest.mark.parametrize("fixture", ["example", "taint_flows", "name_chains", "parse_error", "fw_registry_class"])
def test_facts_round_trip_through_json(fixture: str) -> None:
    for source in discover(FIXTURES / fixture, Ignores(FIXTURES / fixture, ())).files:
        facts = index_source(source.relative, source.module, source.is_package, source.path.read_bytes())
        assert _facts_json.loads_record(_facts_json.dumps(facts), ModuleFacts) == facts


def test_facts_with_a_lone_surrogate_are_cached_and_read_back(tmp_path) -> None:
    """A string literal holding a lone surrogate (real repositories have them) must not fail the cache's write."""
    from dispatchlint.analysis import _facts_json
    from dispatchlint.analysis.index import index_source

    facts = index_source("m.py", "m", False, b'TOOLS = {"\\ud800": print}\n')
    text = _facts_json.dumps(facts)
    text.encode("utf-8")  # what the cache writes
    assert _facts_json.loads_record(text, ModuleFacts) == facts
