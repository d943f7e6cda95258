"""Nothing a repository holds can run code or change findings through the facts cache: entries are JSON,
validated field by field, kept in the user's own private folder and signed with the user's own key (so that a
cache folder inside a checkout, where a pull request can commit entries, is safe too); a cache that cannot be
written is a warning; an entry is keyed by everything that can change it, the interpreter and libcst too."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, read_entry, relative_findings, subprocess_env, write_entry
from dispatchlint.indexing import facts_json
from dispatchlint.indexing import facts_cache
from dispatchlint.discovery.files import Ignores, discover
from dispatchlint.indexing.facts import ModuleFacts
from dispatchlint.indexing.indexer import index_source
from fixproject import copy_project

#: The folder of the user's cache that holds facts.
FACTS = f"facts-{facts_cache._FORMAT}"
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
    store = facts_cache.FactsCache(Path("unused"))
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
        text = facts_json.dumps(_loop_without_dispatches(source))
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
    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS
    (entry,) = [
        path
        for path in (tmp_path / "user-cache" / FACTS).rglob("*.json")
        if json.loads(read_entry(path))["path"] == "taskbot/loop.py"
    ]
    data = json.loads(read_entry(entry))
    damage(data)
    write_entry(entry, json.dumps(data))  # signed with the user's key: what is checked is the entry itself
    with pytest.raises(facts_json.InvalidFacts):
        facts_json.loads_record(read_entry(entry), ModuleFacts)
    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS


def test_an_entry_of_another_file_is_a_miss(run_cli, project: Path, tmp_path: Path) -> None:
    """Facts are believed only for the file they were computed for, whatever their key."""
    keys = dict((source.relative, key) for source, key in _keys(project))
    other = next(source for source, _ in _keys(project) if source.relative == "taskbot/context.py")
    entry = tmp_path / "user-cache" / FACTS / keys["taskbot/loop.py"][:2] / f"{keys['taskbot/loop.py']}.json"
    write_entry(entry, facts_json.dumps(_loop_without_dispatches(other)))
    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_cache_folder_others_can_write_to_is_not_used(run_cli, project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "user-cache"
    folder.mkdir(mode=0o700)
    for source, key in _keys(project):
        (folder / FACTS / key[:2]).mkdir(parents=True, exist_ok=True)
        (folder / FACTS / key[:2] / f"{key}.json").write_text(facts_json.dumps(_loop_without_dispatches(source)))
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

    monkeypatch.setattr(facts_cache.os, "replace", disk_full)
    result = run_cli(project, "--format", "json", cache=True)
    assert result.exit_code == 1 and result.locations() == EXAMPLE_FINDINGS
    assert result.stderr.count("warning: cannot write the cache") == 1
    assert "No space left on device" in result.stderr
    assert not [path for path in (tmp_path / "user-cache").rglob("*") if path.is_file()]


@pytest.mark.parametrize("fixture", ["example", "taint_flows", "name_chains", "parse_error", "fw_registry_class"])
def test_facts_round_trip_through_json(fixture: str) -> None:
    for source in discover(FIXTURES / fixture, Ignores(FIXTURES / fixture, ())).files:
        facts = index_source(source.relative, source.module, source.is_package, source.path.read_bytes())
        assert facts_json.loads_record(facts_json.dumps(facts), ModuleFacts) == facts


def test_facts_with_a_lone_surrogate_are_cached_and_read_back(tmp_path) -> None:
    """A string literal holding a lone surrogate (real repositories have them) must not fail the cache's write."""
    from dispatchlint.indexing import facts_json
    from dispatchlint.indexing.indexer import index_source

    facts = index_source("m.py", "m", False, b'TOOLS = {"\\ud800": print}\n')
    text = facts_json.dumps(facts)
    text.encode("utf-8")  # what the cache writes
    assert facts_json.loads_record(text, ModuleFacts) == facts


def _forge_no_dispatches(folder: Path, key_file: Path) -> int:
    """What an attacker commits: the facts of the loop and of the pool (under their real keys), saying they
    dispatch nothing, signed with the attacker's own key, and no stored results (so that the project is linked
    from them)."""
    forger = facts_cache.FactsCache(folder, key_file)
    forged = 0
    for entry in (folder / FACTS).rglob("*.json"):
        facts = facts_json.loads_record(forger.read("facts", entry.stem) or "", ModuleFacts)
        if facts.path in ("taskbot/loop.py", "taskbot/pool.py"):
            forger.write("facts", entry.stem, facts_json.dumps(ModuleFacts(facts.path, facts.module, False)))
            forged += 1
    for entry in folder.glob("results-*/*/*.json"):
        entry.unlink()
    return forged


def test_entries_committed_to_a_cache_folder_inside_the_checkout_change_no_finding(
    run_cli, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI keeps the cache in the checkout (``XDG_CACHE_HOME=$PWD/.cache``), and a pull request commits entries
    computed offline that say "no dispatches": signed with the attacker's key, they verify only under it."""
    monkeypatch.delenv("DISPATCHLINT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / ".cache"))
    attacker = tmp_path / "attacker-state"
    monkeypatch.setenv("XDG_STATE_HOME", str(attacker))
    assert run_cli(project, "--format", "json", cache=True).locations() == EXAMPLE_FINDINGS
    assert _forge_no_dispatches(project / ".cache" / "dispatchlint", attacker / "dispatchlint" / "cache-key") == 2
    under_the_forgers_key = run_cli(project, "--format", "json", cache=True).locations()
    assert under_the_forgers_key == {("DL201", "taskbot/builtin.py:13")}  # the forgery is what a key stops
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "victim-state"))
    victim = run_cli(project, "--format", "json", cache=True)
    assert victim.locations() == EXAMPLE_FINDINGS and victim.exit_code == 1 and "warning" not in victim.stderr


def test_a_cache_key_inside_the_checkout_is_not_used(
    run_cli, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key a pull request could commit next to the entries it forges is no key: the cache is not used."""
    monkeypatch.setenv("XDG_STATE_HOME", str(project / ".state"))
    result = run_cli(project, "--format", "json", cache=True)
    key = project / ".state" / "dispatchlint" / "cache-key"
    assert f"warning: the cache key {key} is inside the project {project}; the cache is not used" in result.stderr
    assert result.locations() == EXAMPLE_FINDINGS and not key.exists()
    assert not list((tmp_path / "user-cache").rglob("*.json"))


def test_an_entry_moved_under_another_key_does_not_verify(tmp_path: Path) -> None:
    store = facts_cache.FactsCache(tmp_path / "user-cache")
    store.write("facts", "a" * 64, "{}")
    assert store.read("facts", "a" * 64) == "{}"
    moved = tmp_path / "user-cache" / FACTS / "bb" / f"{'b' * 64}.json"
    moved.parent.mkdir()
    shutil.copy(tmp_path / "user-cache" / FACTS / "aa" / f"{'a' * 64}.json", moved)
    assert store.read("facts", "b" * 64) is None and store.read("results", "a" * 64) is None


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_key_others_can_read_is_not_used(run_cli, project: Path, tmp_path: Path) -> None:
    run_cli(project, "--format", "json", cache=True)
    key = Path(os.environ["XDG_STATE_HOME"]) / "dispatchlint" / "cache-key"
    mode = key.stat().st_mode
    try:
        key.chmod(0o644)
        result = run_cli(project, "--format", "json", cache=True)
    finally:
        key.chmod(mode)
    assert f"warning: the cache key {key} is not a private key of this user; the cache is not used" in result.stderr
    assert result.locations() == EXAMPLE_FINDINGS


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_an_entry_that_is_a_fifo_or_a_device_is_a_miss_never_waited_on(
    project: Path, tmp_path: Path, kind: str
) -> None:
    """Every entry of the cache (facts and results) replaced by a FIFO, or by a link to an endless device: the run
    reads none of them, in a child process bounded in time."""
    environment = {**subprocess_env(), "DISPATCHLINT_CACHE_DIR": str(tmp_path / "user-cache")}

    def run() -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "dispatchlint", "--format", "json"]
        return subprocess.run(command, cwd=project, env=environment, capture_output=True, text=True, timeout=120)

    assert run().returncode == 1
    entries = list((tmp_path / "user-cache").rglob("*.json"))
    assert len(entries) > 5
    for entry in entries:
        entry.unlink()
        if kind == "fifo":
            os.mkfifo(entry)
        else:
            entry.symlink_to("/dev/zero")
    completed = run()
    found = {(f["code"], f"{f['path']}:{f['line']}") for f in relative_findings(completed.stdout, project)}
    assert completed.returncode == 1 and found == EXAMPLE_FINDINGS, completed.stderr


def test_entries_are_keyed_by_the_interpreter_and_by_libcst(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A 3.11 run's facts are not a 3.12 run's (what ``compile`` accepts differs), nor another libcst's."""
    fingerprint = facts_cache.source_fingerprint([])
    monkeypatch.setattr(sys, "version", "3.99.0 (another interpreter)")
    assert facts_cache.source_fingerprint([]) != fingerprint
    monkeypatch.undo()
    other_libcst = tmp_path / "libcst"
    other_libcst.mkdir()
    (other_libcst / "_version.py").write_text("__version__ = '0.0.1'\n", encoding="utf-8")
    spec = facts_cache.importlib.util.spec_from_file_location(
        "libcst", other_libcst / "__init__.py", submodule_search_locations=[str(other_libcst)]
    )
    monkeypatch.setattr(facts_cache.importlib.util, "find_spec", lambda name: spec)
    assert facts_cache.source_fingerprint([]) != fingerprint


def test_a_file_name_that_is_not_utf_8_is_cached_like_any_other(run_cli, project: Path) -> None:
    """``\\xff\\xfe.py``, as a file system may hold it: keyed, stored and served from the cache."""
    (Path(os.fsdecode(os.fsencode(project / "taskbot") + b"/\xff\xfe.py"))).write_text("VALUE = 1\n")
    for _ in range(2):
        result = run_cli(project, "--format", "json", cache=True)
        assert result.exit_code == 1 and result.locations() == EXAMPLE_FINDINGS, result.stderr
    assert "(8 from the cache)" in run_cli(project, "-v", cache=True).stderr


def test_the_checkout_is_the_git_work_tree_unless_it_holds_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key in ``checkout/.state`` is refused for a project in ``checkout/backend`` (a pull request could commit
    it); a work tree that holds the home folder (dotfiles) is the user's, and only the project counts."""
    from dispatchlint.discovery.files import workspace_of

    project = tmp_path / "checkout" / "backend"
    project.mkdir(parents=True)
    (tmp_path / "checkout" / ".git").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    assert workspace_of(project) == tmp_path / "checkout"
    monkeypatch.setenv("HOME", str(tmp_path / "checkout"))
    assert workspace_of(project) == project
