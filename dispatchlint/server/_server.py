"""The language server on pygls: documents in, diagnostics, hovers and code actions out, for whole projects.

Each project (a root, found as the command line finds it) is analysed as a whole on a worker thread, with the
editor's buffers in place of their files, so the protocol stays responsive while a large project is indexed.
Edits are debounced; an edit made while the project is being analysed queues one more analysis, run as soon as
the current one is published. Every analysis publishes the diagnostics of each file of the project that changed,
and clears those of files that have none left: an edit in one module shows up in the modules it affects.
Hovers and code actions wait until the project's analysis has caught up with the buffers.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from dispatchlint import __version__
from dispatchlint._process import deep_recursion, on_deep_stack
from dispatchlint.config import ConfigError
from dispatchlint.plan import UsageError
from dispatchlint.engine import plan_run
from dispatchlint.findings import Applicability
from dispatchlint.report import RuleDoc
from dispatchlint.server._actions import FIX_ALL, FIX_ALL_TITLE, fix_all_edit, quick_fix, suppression
from dispatchlint.server._analysis import Analysis, analyse, project_root
from dispatchlint.server._diagnostics import SOURCE, Diagnostics
from dispatchlint.server._documents import Positions, encoded, overlaps, path_of, uri_of
from dispatchlint.server._hover import hover

#: Seconds without an edit before a project is analysed again.
DEBOUNCE_SECONDS = 0.3
#: The files that settle which files a project has, and how they are checked.
_SETTINGS_FILES = ("pyproject.toml", ".gitignore")
#: The files whose change on disk changes a project's answers.
_WATCHED = ("**/*.py", *(f"**/{name}" for name in _SETTINGS_FILES))
_T = TypeVar("_T")
logger = logging.getLogger(__name__)


@dataclass(eq=False)
class _Project:
    """One project's state: its last analysis, what was published from it, and the next analysis's schedule."""

    root: Path
    analysis: Optional[Analysis] = None
    #: The diagnostics last published, by URI (files with none are not kept).
    published: Dict[str, List[types.Diagnostic]] = field(default_factory=dict)
    #: The debounce timer of the next analysis.
    timer: Optional[asyncio.TimerHandle] = None
    running: Optional["asyncio.Task[None]"] = None
    #: Something changed since the running (or last) analysis read the project.
    dirty: bool = False
    #: Set when the project is analysed and nothing is pending.
    settled: asyncio.Event = field(default_factory=asyncio.Event)


class DispatchlintServer(LanguageServer):
    """The server's state: the projects seen, their analyses, and the worker thread that runs them."""

    def __init__(self) -> None:
        super().__init__("dispatchlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.projects: Dict[Path, _Project] = {}
        #: One analysis (or fix) at a time: they share the facts cache and the collector's state.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dispatchlint-analysis")
        self._rules: Optional[Dict[str, RuleDoc]] = None

    @property
    def rules(self) -> Dict[str, RuleDoc]:
        if self._rules is None:
            from dispatchlint.report.reference import rule_docs
            from dispatchlint.rules import rule_pages

            self._rules = rule_docs(rule_pages())
        return self._rules

    # The documents.

    def buffers(self) -> Dict[Path, bytes]:
        """The open Python buffers, by file: what the analysis reads in place of those files."""
        found = {}
        for uri, document in self.workspace.text_documents.items():
            path = path_of(uri)
            if path is not None and path.suffix == ".py":
                found[path] = encoded(document.source)
        return found

    def uri_for(self, path: Path) -> str:
        """The URI the editor knows ``path`` by: an open document's own, else the usual spelling."""
        known: Dict[str, object] = self.workspace.text_documents
        return next((uri for uri in known if path_of(uri) == path), uri_of(path))

    # Scheduling the analyses.

    def project(self, root: Path) -> _Project:
        if root not in self.projects:
            self.projects[root] = _Project(root)
        return self.projects[root]

    def changed(self, uri: str, delay: float = 0.0) -> None:
        """Analyse the project of the file ``uri`` names once nothing has changed for ``delay`` seconds; a
        project's settings (``pyproject.toml``, ``.gitignore``) are every enclosing project's too, whose files they
        can take (a folder that configures dispatchlint becomes a project of its own)."""
        path = path_of(uri)
        if path is None:
            return
        roots = {project_root(path)}
        if path.name in _SETTINGS_FILES:
            roots.update(root for root in self.projects if root in path.parents)
        for root in sorted(roots):
            self.schedule(root, delay)

    def forget(self, folder: Path) -> None:
        """Clear what was published for the projects in ``folder`` (a workspace folder the editor closed)."""
        for root in [root for root in self.projects if root == folder or folder in root.parents]:
            project = self.projects.pop(root)
            if project.timer is not None:
                project.timer.cancel()
            for uri in sorted(project.published):
                if not any(uri in other.published for other in self.projects.values()):
                    self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    def schedule(self, root: Path, delay: float = 0.0) -> None:
        """Analyse the project at ``root`` once nothing has changed for ``delay`` seconds."""
        project = self.project(root)
        project.dirty = True
        project.settled.clear()
        if project.timer is not None:
            project.timer.cancel()
        project.timer = asyncio.get_running_loop().call_later(delay, self._start, project)

    def _start(self, project: _Project) -> None:
        project.timer = None
        if project.running is not None:
            return  # the running analysis starts the next when it is done
        project.dirty = False
        project.running = asyncio.ensure_future(self._analyse(project))

    async def _analyse(self, project: _Project) -> None:
        try:
            analysis = await self._run(project)
            if analysis is not None and self.projects.get(project.root) is project:  # not a folder closed since
                self.publish(project, analysis)
        finally:
            project.running = None
            if project.dirty and project.timer is None:
                self._start(project)
            elif not project.dirty:
                project.settled.set()

    async def _run(self, project: _Project) -> Optional[Analysis]:
        """The project analysed on the worker thread; the first analysis of a project reports its progress."""
        progress = await _Progress.start(self, project.root) if project.analysis is None else None
        job = partial(analyse, project.root, self.buffers(), progress.report if progress else None)
        analysis = None
        started = time.perf_counter()
        try:
            analysis = await asyncio.get_running_loop().run_in_executor(self.executor, job)
            result = analysis.result
            self.window_log_message(
                types.LogMessageParams(
                    types.MessageType.Log,
                    f"dispatchlint: analysed {project.root}: {result.files} files, {len(result.findings)} findings "
                    f"in {time.perf_counter() - started:.2f} s",
                )
            )
        except (ConfigError, UsageError) as error:
            self.tell(types.MessageType.Error, f"dispatchlint: {project.root}: {error}")
        except Exception as error:  # noqa: BLE001 - the server goes on; the user learns what failed
            logger.exception("analysing %s failed", project.root)
            self.tell(types.MessageType.Error, f"dispatchlint: internal error on {project.root}: {error!r}")
        finally:
            if progress is not None:
                progress.end(analysis)
        return analysis

    def publish(self, project: _Project, analysis: Analysis) -> None:
        """Publish the diagnostics of every file that changed, and clear the files that have none left."""
        project.analysis = analysis
        fresh = Diagnostics(analysis, self.workspace.position_codec, self.rules, self.uri_for).by_uri()
        for uri in sorted(project.published.keys() - fresh.keys()):
            if not any(uri in other.published for other in self.projects.values() if other is not project):
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))  # no one's now
        for uri, diagnostics in sorted(fresh.items()):
            if project.published.get(uri) != diagnostics:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diagnostics))
        project.published = fresh

    async def settled(self, path: Path) -> Optional[Analysis]:
        """The analysis of the project ``path`` is in, once it has caught up with every change (None: the project
        could not be analysed)."""
        project = self.project(project_root(path))
        if project.analysis is None and project.running is None and project.timer is None:
            self.schedule(project.root)
        await project.settled.wait()
        return project.analysis

    def tell(self, kind: types.MessageType, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(kind, message))

    async def in_worker(self, job: Callable[[], _T]) -> _T:
        """``job()`` on the worker thread, on a stack as deep as the analysis needs (fixes walk libcst trees)."""

        def deep() -> _T:
            with deep_recursion():
                return job()

        return await asyncio.get_running_loop().run_in_executor(self.executor, on_deep_stack, deep)

    # What the features answer.

    async def code_actions(self, params: types.CodeActionParams) -> Optional[List[types.CodeAction]]:
        uri = params.text_document.uri
        path = path_of(uri)
        analysis = await self.settled(path) if path is not None else None
        if path is None or analysis is None:
            return None
        wanted = params.context.only
        actions: List[types.CodeAction] = []
        if _asks_for(wanted, types.CodeActionKind.QuickFix):
            text = self.workspace.get_text_document(uri).source
            positions = Positions(text, self.workspace.position_codec)
            diagnostics = Diagnostics(analysis, self.workspace.position_codec, self.rules, self.uri_for)
            first, last = params.range.start.line + 1, params.range.end.line + 1
            chosen = [finding for finding in analysis.findings_in(path) if overlaps(finding.span, first, last)]
            for finding in chosen:
                diagnostic = diagnostics.diagnostic(finding)
                fixed = await self.in_worker(
                    partial(quick_fix, analysis, finding, diagnostic, self.workspace.position_codec, self.uri_for)
                )
                actions += [fixed] if fixed is not None else []
            for finding in chosen:
                suppressed = suppression(finding, diagnostics.diagnostic(finding), positions, text, uri)
                actions += [suppressed] if suppressed is not None else []
        if _asks_for(wanted, FIX_ALL) and any(f.applicability is Applicability.SAFE for f in analysis.concerning(path)):
            fix_all = types.CodeAction(FIX_ALL_TITLE, kind=FIX_ALL, data=uri)
            if wanted is not None or not self._resolves_edits():  # asked for by name (on save): the edit now
                fix_all = await self.resolve(fix_all)
            if fix_all.edit is not None or fix_all.data is not None:
                actions.append(fix_all)
        return actions or None

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        """The fix-all action with its edit (no edit, and no data to resolve it again: nothing to fix)."""
        if action.kind != FIX_ALL or not isinstance(action.data, str):
            return action
        path = path_of(action.data)
        analysis = await self.settled(path) if path is not None else None
        action.data = None
        if path is not None and analysis is not None:
            action.edit = await self.in_worker(
                partial(fix_all_edit, path, analysis, self.workspace.position_codec, self.uri_for)
            )
        return action

    def _resolves_edits(self) -> bool:
        """Whether the client asks for an action's edit when the action is chosen (``codeAction/resolve``)."""
        document = self.client_capabilities.text_document
        asking = document.code_action if document is not None else None
        support = asking.resolve_support if asking is not None else None
        return support is not None and "edit" in support.properties

    async def hover(self, params: types.HoverParams) -> Optional[types.Hover]:
        path = path_of(params.text_document.uri)
        analysis = await self.settled(path) if path is not None else None
        if path is None or analysis is None or analysis.result.project is None:
            return None
        positions = Positions(analysis.text(path), self.workspace.position_codec)
        line, column = positions.located(params.position)
        found = hover(analysis.result.project, path.relative_to(analysis.root).as_posix(), line, column)
        if found is None:
            return None
        text, span = found
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text), positions.range(span))

    async def watch_files(self) -> None:
        """Ask to be told of changes on disk (a checkout, a formatter, another tool's fix), if the client can."""
        workspace = self.client_capabilities.workspace
        watching = workspace.did_change_watched_files if workspace is not None else None
        if watching is None or not watching.dynamic_registration:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in _WATCHED]
        )
        registration = types.Registration(str(uuid.uuid4()), types.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)
        try:
            await self.client_register_capability_async(types.RegistrationParams([registration]))
        except Exception:  # noqa: BLE001 - a client that refuses: changes on disk are seen on the next edit
            logger.warning("the client refused to watch files", exc_info=True)

    async def analyse_workspace(self) -> None:
        """Analyse every project of the workspace's folders, so that every file's findings are shown."""
        folders = [path for path in map(path_of, (f.uri for f in self.workspace.folders.values())) if path is not None]
        if not folders and self.workspace.root_path:
            folders = [Path(self.workspace.root_path).resolve()]
        await self.analyse_folders(folders)

    async def analyse_folders(self, folders: Sequence[Path]) -> None:
        """Analyse every project in ``folders``."""
        for folder in folders:
            try:
                plans = await asyncio.get_running_loop().run_in_executor(self.executor, plan_run, [folder])
            except (ConfigError, UsageError) as error:
                self.tell(types.MessageType.Error, f"dispatchlint: {folder}: {error}")
                continue
            for plan in plans:
                self.schedule(plan.root)


class _Progress:
    """``$/progress`` for a project's first analysis, created with ``window/workDoneProgress/create``: the files
    indexed so far, as the indexer reports them from the worker thread."""

    def __init__(self, server: DispatchlintServer, token: str, loop: asyncio.AbstractEventLoop) -> None:
        self._server = server
        self._token = token
        self._loop = loop
        self._shown = -1

    @classmethod
    async def start(cls, server: DispatchlintServer, root: Path) -> Optional["_Progress"]:
        window = server.client_capabilities.window
        if window is None or not window.work_done_progress:
            return None
        token = f"dispatchlint-{uuid.uuid4()}"
        try:
            await server.work_done_progress.create_async(token)
        except Exception:  # noqa: BLE001 - a client that refuses the token gets no progress, the analysis runs
            logger.warning("the client refused a progress token", exc_info=True)
            return None
        begin = types.WorkDoneProgressBegin(title="dispatchlint", message=f"indexing {root.name}", percentage=0)
        server.work_done_progress.begin(token, begin)
        return cls(server, token, asyncio.get_running_loop())

    def report(self, done: int, total: int) -> None:
        """Called by the indexer on the worker thread: a report each time the percentage changes."""
        percentage = 100 * done // total if total else 100
        if percentage != self._shown:
            self._shown = percentage
            report = types.WorkDoneProgressReport(message=f"indexed {done}/{total} files", percentage=percentage)
            self._loop.call_soon_threadsafe(self._server.work_done_progress.report, self._token, report)

    def end(self, analysis: Optional[Analysis]) -> None:
        if analysis is None:
            message = "not analysed"
        else:
            count = len(analysis.result.findings)
            message = f"{count} finding{'s' if count != 1 else ''}"
        self._server.work_done_progress.end(self._token, types.WorkDoneProgressEnd(message=message))


def _asks_for(only: Optional[Sequence[str]], kind: str) -> bool:
    """Whether a code action request that wants the kinds ``only`` (None: any) wants actions of ``kind``."""
    return only is None or any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def build_server() -> DispatchlintServer:
    """The server with its features registered."""
    server = DispatchlintServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DispatchlintServer, params: types.InitializedParams) -> None:
        await ls.analyse_workspace()
        await ls.watch_files()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DispatchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        project = ls.project(project_root(path))
        if project.analysis is not None and project.analysis.covers(path, encoded(params.text_document.text)):
            ls.publish(project, project.analysis)  # the analysis read this text: only the URI may be new
        else:
            ls.schedule(project.root)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DispatchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DispatchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DispatchlintServer, params: types.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        project = ls.projects.get(project_root(path)) if path is not None else None
        if project is not None and project.analysis is not None and path in project.analysis.overlays:
            ls.schedule(project.root)  # the file on disk is read again

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: DispatchlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            ls.changed(change.uri, DEBOUNCE_SECONDS)  # a burst of changes (a checkout) is one analysis

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(
        ls: DispatchlintServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        for removed in params.event.removed:
            folder = path_of(removed.uri)
            if folder is not None:
                ls.forget(folder)
        added = [path_of(folder.uri) for folder in params.event.added]
        await ls.analyse_folders([folder for folder in added if folder is not None])

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=True),
    )
    async def code_action(ls: DispatchlintServer, params: types.CodeActionParams) -> Optional[List[types.CodeAction]]:
        return await ls.code_actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: DispatchlintServer, params: types.CodeAction) -> types.CodeAction:
        return await ls.resolve(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: DispatchlintServer, params: types.HoverParams) -> Optional[types.Hover]:
        return await ls.hover(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DispatchlintServer, params: None) -> None:
        ls.executor.shutdown(wait=False, cancel_futures=True)

    return server


__all__ = ["DEBOUNCE_SECONDS", "SOURCE", "DispatchlintServer", "build_server"]
