"""``dispatchlint server`` end to end: a real LSP client (pytest-lsp) drives the server over stdio on copies of the
fixture projects, and what it publishes is compared with what the command line reports."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Set, Tuple, Union

import pytest

pytest_lsp = pytest.importorskip(
    "pytest_lsp", reason="the server's tests need pytest-lsp (the test extra, Python 3.10+)"
)

from lsprotocol import types  # noqa: E402 - only once pytest-lsp (and so pygls) is known to be there
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from conftest import FIXTURES, read_expected, write_project  # noqa: E402
from dispatchlint.indexing.project import LARGE_FILE_BYTES  # noqa: E402
from fixproject import copy_project, python_sources  # noqa: E402

pytestmark = pytest.mark.asyncio

#: Seconds a test waits for the server to publish what it expects.
TIMEOUT = 120
FIXTURE_DIRS = sorted(path for path in FIXTURES.iterdir() if (path / "expected.txt").is_file())


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "dispatchlint", "server"]))
async def client(lsp_client: LanguageClient):
    registrations: List[types.Registration] = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    lsp_client.registrations = registrations  # type: ignore[attr-defined]
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)  # a server that does not exit fails the test
    finally:
        server = lsp_client._server  # never initialized (the test failed first), or hung: it must not outlive it
        if server is not None and server.returncode is None:
            server.kill()


def uri(path: Path) -> str:
    return str(from_fs_path(str(path)))


async def start(
    client: LanguageClient, *folders: Path, capabilities: Union[str, types.ClientCapabilities] = "visual-studio-code"
) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(capabilities) if isinstance(capabilities, str) else capabilities,
            root_uri=uri(folders[0]),
            workspace_folders=[types.WorkspaceFolder(uri(folder), folder.name) for folder in folders],
        )
    )


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds (the server publishes asynchronously)."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), TIMEOUT)
    except asyncio.TimeoutError:
        pytest.fail(f"the server did not publish {what} within {TIMEOUT} s")


def ended(client: LanguageClient) -> int:
    """How many progress reports (one per project first analysed) have ended."""
    return sum(
        any(isinstance(v, types.WorkDoneProgressEnd) for v in values) for values in client.progress_reports.values()
    )


def analyses(client: LanguageClient) -> int:
    return sum(1 for message in client.log_messages if message.message.startswith("dispatchlint: analysed "))


def published(client: LanguageClient, root: Path) -> Set[Tuple[str, str]]:
    """``(code, path:line)`` of every diagnostic published for a file under ``root``, as expected.txt writes them."""
    found = set()
    for published_uri, diagnostics in client.diagnostics.items():
        path = Path(published_uri[len("file://") :])
        if root in path.parents:
            for diagnostic in diagnostics:
                found.add(
                    (str(diagnostic.code), f"{path.relative_to(root).as_posix()}:{diagnostic.range.start.line + 1}")
                )
    return found


def diagnostics_of(client: LanguageClient, path: Path) -> List[types.Diagnostic]:
    return list(client.diagnostics.get(uri(path), ()))


def open_file(client: LanguageClient, path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri(path), "python", 1, text)))
    return text


def change(client: LanguageClient, path: Path, version: int, edits: Sequence[Tuple[types.Range, str]]) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri(path)),
            [types.TextDocumentContentChangePartial(range, text) for range, text in edits],
        )
    )


def whole_line(text: str, line: int) -> types.Range:
    """The range of 1-based ``line`` of ``text`` (its end included)."""
    length = len(text.splitlines()[line - 1])
    return types.Range(types.Position(line - 1, 0), types.Position(line - 1, length))


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), start=1) if needle in line)


def applied(text: str, edits: Sequence[types.TextEdit]) -> str:
    """``text`` with LSP edits applied (the fixtures are ASCII: a UTF-16 column is a code point)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character if position.line < len(lines) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def apply_workspace_edit(edit: types.WorkspaceEdit) -> None:
    for target, edits in (edit.changes or {}).items():
        path = Path(target[len("file://") :])
        path.write_text(applied(path.read_text(encoding="utf-8"), edits), encoding="utf-8")


def project_with_selection(fixture: Path, target: Path) -> Path:
    """A copy of a fixture project whose expected.txt's ``--select`` is in its own configuration instead."""
    project = copy_project(fixture, target)
    _, args = read_expected(fixture)
    selected = [code for arg in args[1:] for code in arg.split(",")] if args[:1] == ["--select"] else []
    assert len(args) == (2 if selected else 0), f"{fixture.name}: arguments the server cannot take: {args}"
    if selected:
        pyproject = project / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        setting = f"select = {selected!r}\n".replace("'", '"')
        if "[tool.dispatchlint]\n" in text:
            text = text.replace("[tool.dispatchlint]\n", "[tool.dispatchlint]\n" + setting)
        else:
            text += "\n[tool.dispatchlint]\n" + setting
        pyproject.write_text(text, encoding="utf-8")
    return project


def fixed_example(target: Path) -> Path:
    """The example project as ``--fix`` leaves it: its table wrapped, nothing to report."""
    project = copy_project(FIXTURES / "example", target)
    shutil.copy(FIXTURES / "fix_example" / "expected_fixed" / "taskbot" / "builtin.py", project / "taskbot")
    return project


async def test_every_fixture_project_is_published_as_the_command_line_reports_it(
    client: LanguageClient, tmp_path: Path
) -> None:
    projects = [project_with_selection(fixture, tmp_path / fixture.name) for fixture in FIXTURE_DIRS]
    await start(client, *projects)
    await until(lambda: ended(client) == len(projects), "the end of every project's first analysis")
    for fixture, project in zip(FIXTURE_DIRS, projects):
        expected, _ = read_expected(fixture)
        assert published(client, project) == expected, fixture.name
    for values in client.progress_reports.values():  # each project: begun, then ended with its count
        assert isinstance(values[0], types.WorkDoneProgressBegin) and values[0].title == "dispatchlint"
        assert re.fullmatch(r"\d+ findings?", values[-1].message or "")
    indexing = [
        [v for v in values if isinstance(v, types.WorkDoneProgressReport)]
        for values in client.progress_reports.values()
    ]
    assert any(indexing)  # files the cache did not hold were indexed, and said so as they were
    for reports in filter(None, indexing):  # counted up to every file the project had to index
        percentages = [report.percentage for report in reports]
        assert percentages == sorted(percentages) and percentages[-1] == 100
        last = re.fullmatch(r"indexed (\d+)/(\d+) files", reports[-1].message or "")
        assert last is not None and last.group(1) == last.group(2)
    watched = [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert len(watched) == 1


async def test_a_diagnostic_points_at_its_table_its_gate_and_each_hop(client: LanguageClient, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    loop = project / "taskbot" / "loop.py"
    await start(client, project)
    open_file(client, loop)
    await until(lambda: len(published(client, project)) == 3, "the example's three findings")
    [diagnostic] = diagnostics_of(client, loop)
    assert diagnostic.code == "DL101" and diagnostic.source == "dispatchlint"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range == types.Range(types.Position(25, 15), types.Position(25, 35))
    assert diagnostic.code_description is not None and diagnostic.code_description.href.endswith(
        "#dl101-unguarded-dispatch"
    )
    related = [
        (Path(r.location.uri).name, r.location.range.start.line + 1, r.message)
        for r in diagnostic.related_information or []
    ]
    assert ("builtin.py", 28) in [(name, line) for name, line, _ in related]  # the table, where it is defined
    assert any(name == "gate.py" for name, _, _ in related)  # the gate it skips
    steps = [message for _, _, message in related if message.startswith("trace ")]
    assert len(steps) >= 2 and steps[0].startswith("trace 1/") and steps[-1].startswith(f"trace {len(steps)}/")
    assert {str(d.code) for d in diagnostics_of(client, project / "taskbot" / "builtin.py")} == {"DL201"}


async def test_an_edit_that_opens_a_bypass_reports_it_and_undoing_it_clears_it(
    client: LanguageClient, tmp_path: Path
) -> None:
    project = fixed_example(tmp_path / "example")
    loop = project / "taskbot" / "loop.py"
    on_disk = loop.read_bytes()
    await start(client, project)
    await until(lambda: ended(client) == 1, "the first analysis")
    assert published(client, project) == set()
    text = open_file(client, loop)
    imports, lookup = line_of(text, "from .builtin import"), line_of(text, "BUILTIN_EXECUTORS.get(name)")
    raw = [
        (whole_line(text, imports), "from .builtin import _RAW_BUILTIN_EXECUTORS"),
        (whole_line(text, lookup), "    fn = _RAW_BUILTIN_EXECUTORS.get(name)"),
    ]
    change(client, loop, 2, raw)
    await until(lambda: published(client, project) == {("DL101", "taskbot/loop.py:26")}, "the bypass")
    [diagnostic] = diagnostics_of(client, loop)
    assert "`_RAW_BUILTIN_EXECUTORS[name]` in `execute_tool` skips `coerce_tool_args`" in diagnostic.message
    changed = applied(text, [types.TextEdit(range, new) for range, new in raw])
    undo = [(whole_line(changed, line), text.splitlines()[line - 1]) for line in (imports, lookup)]
    change(client, loop, 3, undo)
    await until(lambda: diagnostics_of(client, loop) == [] and uri(loop) in client.diagnostics, "the bypass cleared")
    assert published(client, project) == set()
    assert loop.read_bytes() == on_disk  # the buffer was analysed, the file left alone


async def test_an_edit_in_one_module_shows_the_bypass_in_the_modules_it_affects(
    client: LanguageClient, tmp_path: Path
) -> None:
    project = fixed_example(tmp_path / "example")
    builtin = project / "taskbot" / "builtin.py"
    await start(client, project)
    await until(lambda: ended(client) == 1, "the first analysis")
    text = open_file(client, builtin)
    wrapping = line_of(text, "name: _coerced(name, executor) for name")
    unwrapped = "    name: executor for name, executor in _RAW_BUILTIN_EXECUTORS.items()"
    change(client, builtin, 2, [(whole_line(text, wrapping), unwrapped)])
    reopened = {("DL101", "taskbot/loop.py:26"), ("DL101", "taskbot/pool.py:21")}
    await until(lambda: published(client, project) == reopened, "the bypasses the unwrapping re-opens elsewhere")
    assert diagnostics_of(client, builtin) == []  # the edited module itself has no finding
    edited = applied(text, [types.TextEdit(whole_line(text, wrapping), unwrapped)])
    change(client, builtin, 3, [(whole_line(edited, wrapping), text.splitlines()[wrapping - 1])])
    await until(lambda: published(client, project) == set(), "the bypasses cleared in both modules")


async def test_a_save_analyses_the_file_and_a_close_without_saving_goes_back_to_the_disk(
    client: LanguageClient, tmp_path: Path
) -> None:
    project = fixed_example(tmp_path / "example")
    loop, builtin = project / "taskbot" / "loop.py", project / "taskbot" / "builtin.py"
    await start(client, project)
    await until(lambda: ended(client) == 1, "the first analysis")
    text = open_file(client, loop)
    raw = text.replace("from .builtin import BUILTIN_EXECUTORS", "from .builtin import _RAW_BUILTIN_EXECUTORS")
    raw = raw.replace("fn = BUILTIN_EXECUTORS.get(name)", "fn = _RAW_BUILTIN_EXECUTORS.get(name)")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(2, uri(loop)), [types.TextDocumentContentChangeWholeDocument(raw)]
        )
    )
    bypass = {("DL101", "taskbot/loop.py:26")}
    await until(lambda: published(client, project) == bypass, "the bypass")
    loop.write_text(raw, encoding="utf-8")  # the editor saves the buffer
    done = analyses(client)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(loop))))
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri(loop))))
    await until(lambda: analyses(client) > done, "the analysis of the saved file")
    assert published(client, project) == bypass  # what is on disk now

    builtin_text = open_file(client, builtin)
    unwrapped = builtin_text.replace("name: _coerced(name, executor) for", "name: executor for")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(2, uri(builtin)),
            [types.TextDocumentContentChangeWholeDocument(unwrapped)],
        )
    )
    await until(lambda: ("DL101", "taskbot/pool.py:21") in published(client, project), "the unwrapped table's bypass")
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri(builtin))))
    await until(lambda: published(client, project) == bypass, "the file on disk, read again once closed unsaved")


async def test_a_burst_of_edits_is_analysed_once_it_stops(client: LanguageClient, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    loop = project / "taskbot" / "loop.py"
    await start(client, project)
    await until(lambda: ended(client) == 1, "the first analysis")
    text = open_file(client, loop)
    first = analyses(client)
    end = types.Position(len(text.splitlines()), 0)
    for version in range(2, 22):  # twenty keystrokes, faster than the debounce
        change(client, loop, version, [(types.Range(end, end), "#")])
        end = types.Position(end.line, end.character + 1)
    await until(lambda: analyses(client) > first, "the analysis after the edits")
    await asyncio.sleep(1.0)  # anything still queued would have run by now
    assert analyses(client) - first <= 2
    assert published(client, project) == {
        ("DL101", "taskbot/loop.py:26"),
        ("DL101", "taskbot/pool.py:21"),
        ("DL201", "taskbot/builtin.py:13"),
    }


#: A module of a large generated project: its own tools and table, so that no two modules share cached facts.
LARGE_MODULE = """
import json


def search_{n}(query, limit=5):
    return [query] * int(limit)


def fetch_{n}(url):
    return url


TOOLS_{n} = {{"search_{n}": search_{n}, "fetch_{n}": fetch_{n}}}


def run_{n}(call):
    args = json.loads(call["arguments"])
    return TOOLS_{n}[call["name"]](**args)
"""


async def test_requests_are_answered_while_a_large_project_is_indexed(client: LanguageClient, tmp_path: Path) -> None:
    """Enough files to index on worker processes, and one large enough to be indexed in a process of its own:
    workers started from the server, which has threads, once hung before they ran."""
    modules = {f"agent/tools_{n}.py": LARGE_MODULE.format(n=n) for n in range(400)}
    row = '    "a generated row of data, long enough to make the module large",\n'
    modules["agent/data.py"] = "ROWS = [\n" + row * (LARGE_FILE_BYTES // len(row) + 1) + "]\n"
    (tmp_path / "large").mkdir()
    # The package's own docstring: an empty ``__init__.py`` is in the session's cache from other tests' projects.
    package = '"""The large generated project."""\n'
    project = write_project(tmp_path / "large", {"agent/__init__.py": package, **modules})
    untitled = "untitled:Untitled-1"
    await start(client, project)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(untitled, "python", 1, "")))
    await until(
        lambda: any(isinstance(v, types.WorkDoneProgressReport) for vs in client.progress_reports.values() for v in vs),
        "the indexing under way",
    )
    assert ended(client) == 0
    answer = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(untitled), types.Position(0, 0))
    )
    assert answer is None and ended(client) == 0  # answered while the indexing went on, on its worker thread
    await until(lambda: ended(client) == 1, "the end of the indexing")
    [progress] = client.progress_reports.values()
    assert progress[-2].message == "indexed 402/402 files" and progress[-1].message == "0 findings"


async def test_a_quick_fix_a_fix_all_and_a_suppression_as_the_command_line_makes_them(
    client: LanguageClient, tmp_path: Path, run_cli
) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    by_command = copy_project(FIXTURES / "example", tmp_path / "by_command")
    loop = project / "taskbot" / "loop.py"
    await start(client, project)
    text = open_file(client, loop)
    await until(lambda: len(diagnostics_of(client, loop)) == 1, "the DL101 of loop.py")
    [diagnostic] = diagnostics_of(client, loop)
    context = types.CodeActionContext(diagnostics=[diagnostic])
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri(loop)), diagnostic.range, context)
    )
    by_kind: Dict[str, List[types.CodeAction]] = {}
    for action in actions or []:
        assert isinstance(action, types.CodeAction)
        by_kind.setdefault(str(action.kind), []).append(action)
    assert sorted(by_kind) == ["quickfix", "source.fixAll.dispatchlint"]
    fix, suppress = by_kind["quickfix"]
    assert fix.title == "Fix DL101: wrap `BUILTIN_EXECUTORS` with `coerce_tool_args`" and fix.is_preferred
    assert fix.edit is not None and list(fix.edit.changes or {}) == [uri(project / "taskbot" / "builtin.py")]
    assert suppress.title == "Suppress DL101 on this line" and suppress.edit is not None
    [[inserted]] = (suppress.edit.changes or {}).values()
    assert inserted.new_text == "  # noqa: DL101" and inserted.range.start == types.Position(
        25, len(text.splitlines()[25])
    )

    [offered] = by_kind["source.fixAll.dispatchlint"]
    assert offered.title == "Fix all dispatchlint findings in this file"
    assert offered.edit is None  # the client resolves it when chosen: no analysis on every cursor move
    fix_all = await client.code_action_resolve_async(offered)
    assert fix_all.edit is not None
    on_save = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri(loop)),
            types.Range(types.Position(0, 0), types.Position(0, 0)),
            types.CodeActionContext(diagnostics=[], only=["source.fixAll.dispatchlint"]),
        )
    )
    assert [(a.kind, a.edit) for a in on_save or [] if isinstance(a, types.CodeAction)] == [
        ("source.fixAll.dispatchlint", fix_all.edit)
    ]
    before = python_sources(project)
    apply_workspace_edit(fix_all.edit)
    assert run_cli(by_command, "--fix", "taskbot/loop.py").exit_code == 0  # what --fix makes of this file's findings
    assert python_sources(project) == python_sources(by_command) != before

    for path, data in before.items():  # back to the code as it was: the quick fix alone, then the suppression
        (project / path).write_bytes(data)
    [reported] = [f for f in run_cli(project, "--format", "json").findings() if f["path"] == "taskbot/loop.py"]
    assert sorted(  # the quick fix is the edit the JSON report gives the finding
        (Path(target).name, edit.range.start.line + 1, edit.range.end.line + 1, edit.new_text)
        for target, edits in (fix.edit.changes or {}).items()
        for edit in edits
    ) == sorted((Path(e["path"]).name, e["line"], e["end_line"], e["replacement"]) for e in reported["edits"])
    apply_workspace_edit(fix.edit)
    remaining = run_cli(project, "--format", "json").locations()
    assert {code for code, _ in remaining} == {"DL201"}  # both readers of the table are gated; the parse is left
    for path, data in before.items():
        (project / path).write_bytes(data)
    apply_workspace_edit(suppress.edit)
    assert run_cli(project, "--format", "json").locations() == {
        ("DL101", "taskbot/pool.py:21"),
        ("DL201", "taskbot/builtin.py:13"),
    }


async def test_a_suppression_joins_the_noqa_already_on_the_line(client: LanguageClient, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    pool = project / "taskbot" / "pool.py"
    broken = project / "taskbot" / "broken.py"
    broken.write_text("def plan(:\n    pass\n", encoding="utf-8")
    text = pool.read_text(encoding="utf-8")
    site = line_of(text, "pool.submit(BUILTIN_EXECUTORS[name]")
    lines = text.splitlines(keepends=True)
    lines[site - 1] = lines[site - 1].rstrip("\n") + "  # noqa: E501\n"
    pool.write_text("".join(lines), encoding="utf-8")
    await start(client, project)
    open_file(client, pool)
    await until(lambda: len(diagnostics_of(client, pool)) == 1, "the DL101 of pool.py")
    [diagnostic] = diagnostics_of(client, pool)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri(pool)),
            diagnostic.range,
            types.CodeActionContext(diagnostics=[diagnostic], only=[types.CodeActionKind.QuickFix]),
        )
    )
    [suppress] = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.startswith("Suppress")]
    assert suppress.edit is not None
    apply_workspace_edit(suppress.edit)
    assert pool.read_text(encoding="utf-8").splitlines()[site - 1].endswith("  # noqa: E501, DL101")

    open_file(client, broken)  # a file that does not parse: a noqa would not hide its DL001, none is offered
    [parse_error] = diagnostics_of(client, broken)
    assert parse_error.code == "DL001"
    offered = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri(broken)), parse_error.range, types.CodeActionContext([parse_error])
        )
    )
    assert offered is None


async def test_hover_says_which_paths_read_a_table_gated_or_raw(client: LanguageClient, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    builtin, registry, loop = (project / "taskbot" / name for name in ("builtin.py", "registry.py", "loop.py"))
    await start(client, project)
    for path in (builtin, registry, loop):
        open_file(client, path)

    async def hover(path: Path, line: int, character: int) -> str:
        found = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri(path)), types.Position(line - 1, character))
        )
        if found is None:
            return ""
        assert isinstance(found.contents, types.MarkupContent) and found.contents.kind == types.MarkupKind.Markdown
        return found.contents.value

    table = await hover(builtin, 28, 3)
    assert table.startswith("**Tool table `BUILTIN_EXECUTORS`** (`taskbot.builtin`), 2 tools: `plan`, `recall`")
    assert "Read on 2 paths:" in table
    assert "- **raw** in `execute_tool`, `taskbot/loop.py:26`" in table
    assert "- **raw** in `run_tool_calls_concurrently`, `taskbot/pool.py:21`" in table
    gated = await hover(registry, line_of(registry.read_text(encoding="utf-8"), "REGISTRY: Dict"), 2)
    assert "- **gated** in `handle_function_call`, `taskbot/registry.py:60`" in gated
    site = await hover(loop, 26, 17)
    assert site.startswith(
        "**Dispatch in `execute_tool`**: runs a tool from `BUILTIN_EXECUTORS` with **raw** arguments."
    )
    assert "Read on 2 paths:" in site
    assert await hover(loop, 1, 2) == ""  # the module's docstring: neither a table nor a dispatch

    untitled = "untitled:Untitled-1"  # a buffer that names no file: no project, no answer, no error
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(untitled, "python", 1, "TOOLS = {}\n"))
    )
    nothing = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(untitled), types.Position(0, 1))
    )
    assert nothing is None and client.messages == []


async def test_the_project_configuration_is_read_again_when_it_changes(client: LanguageClient, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    pyproject = project / "pyproject.toml"
    await start(client, project)
    await until(lambda: len(published(client, project)) == 3, "the example's three findings")
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + '\n[tool.dispatchlint]\nignore = ["DL201"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams([types.FileEvent(uri(pyproject), types.FileChangeType.Changed)])
    )
    await until(lambda: ("DL201", "taskbot/builtin.py:13") not in published(client, project), "DL201 ignored")
    assert published(client, project) == {("DL101", "taskbot/loop.py:26"), ("DL101", "taskbot/pool.py:21")}

    pyproject.write_text("[tool.dispatchlint\n", encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams([types.FileEvent(uri(pyproject), types.FileChangeType.Changed)])
    )
    await until(lambda: any(m.type == types.MessageType.Error for m in client.messages), "the broken configuration")
    [message] = client.messages
    assert message.message.startswith(f"dispatchlint: {project}:") and "pyproject.toml" in message.message


GATED_TOOLS = """import json

from agent.validation import repair_arguments

TOOLS = {"plan": list}


def run(tool_call):
    return TOOLS[tool_call.name](**repair_arguments(tool_call.name, json.loads(tool_call.arguments)))


def run_again(tool_call):
    return TOOLS[tool_call.name](**json.loads(tool_call.arguments))
"""


async def test_a_deleted_gate_is_shown_on_the_configuration(client: LanguageClient, tmp_path: Path) -> None:
    """DL003 is published for ``pyproject.toml``, where the gate is configured, pointing at each raw call."""
    files = {
        "agent/__init__.py": "",
        "agent/validation.py": "def repair_arguments(tool_name, args):\n    return dict(args)\n",
        "agent/tools.py": GATED_TOOLS,
    }
    (tmp_path / "project").mkdir()
    project = write_project(tmp_path / "project", files, {"gates": ["agent.validation.repair_arguments"]})
    await start(client, project)
    await until(lambda: published(client, project) == {("DL101", "agent/tools.py:13")}, "the bypass")
    validation, tools = project / "agent" / "validation.py", project / "agent" / "tools.py"
    validation.unlink()
    gated_call = "repair_arguments(tool_call.name, json.loads(tool_call.arguments))"
    ungated = GATED_TOOLS.replace("from agent.validation import repair_arguments\n", "")
    tools.write_text(ungated.replace(gated_call, "json.loads(tool_call.arguments)"), encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [
                types.FileEvent(uri(validation), types.FileChangeType.Deleted),
                types.FileEvent(uri(tools), types.FileChangeType.Changed),
            ]
        )
    )
    await until(lambda: published(client, project) == {("DL003", "pyproject.toml:4")}, "the deleted gate")
    [diagnostic] = diagnostics_of(client, project / "pyproject.toml")
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range == types.Range(types.Position(3, 9), types.Position(3, 44))
    related = diagnostic.related_information or []
    assert [(Path(r.location.uri).name, r.location.range.start.line + 1) for r in related] == [
        ("tools.py", 8),
        ("tools.py", 12),
    ]


async def test_a_folder_that_becomes_a_project_and_workspace_folders_that_change(
    client: LanguageClient, tmp_path: Path
) -> None:
    example = copy_project(FIXTURES / "example", tmp_path / "example")
    chains = copy_project(FIXTURES / "name_chains", tmp_path / "name_chains")
    await start(client, example)
    await until(lambda: len(published(client, example)) == 3, "the example's three findings")

    settings = example / "taskbot" / "pyproject.toml"  # the package configures itself: a project of its own
    settings.write_text('[tool.dispatchlint]\nignore = ["DL201"]\n', encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams([types.FileEvent(uri(settings), types.FileChangeType.Created)])
    )
    raw = {("DL101", "taskbot/loop.py:26"), ("DL101", "taskbot/pool.py:21")}
    await until(lambda: published(client, example) == raw, "the package's findings, with its own settings")

    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri(chains), chains.name)],
                removed=[types.WorkspaceFolder(uri(example), example.name)],
            )
        )
    )
    expected, _ = read_expected(FIXTURES / "name_chains")
    await until(
        lambda: published(client, example) == set() and published(client, chains) == expected,
        "the closed folder cleared and the new one analysed",
    )


async def test_a_client_without_progress_support_gets_the_diagnostics_alone(
    client: LanguageClient, tmp_path: Path
) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    await start(client, project, capabilities=types.ClientCapabilities())
    await until(lambda: len(published(client, project)) == 3, "the example's three findings")
    assert client.progress_reports == {}


@pytest.mark.parametrize(("capabilities", "encoding"), [("visual-studio-code", "utf-16"), ("neovim@v0.11.0", "utf-8")])
async def test_columns_are_counted_in_the_position_encoding_agreed_on(
    client: LanguageClient, tmp_path: Path, capabilities: str, encoding: str
) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "example")
    loop = project / "taskbot" / "loop.py"
    prefix = '        label = "\N{WRENCH}\N{HAMMER}"; return '
    loop.write_text(loop.read_text(encoding="utf-8").replace("        return fn(", prefix + "fn("), encoding="utf-8")
    initialized = await start(client, project, capabilities=capabilities)
    assert initialized.capabilities.position_encoding == encoding
    open_file(client, loop)
    await until(lambda: len(diagnostics_of(client, loop)) == 1, "the DL101 of loop.py")
    [diagnostic] = diagnostics_of(client, loop)
    units = len(prefix.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(prefix.encode("utf-8"))
    assert diagnostic.range.start == types.Position(25, units)
    assert diagnostic.range.end.character - diagnostic.range.start.character == len("fn(agent, args, ctx)")
