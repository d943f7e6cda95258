"""A project's findings as LSP diagnostics, by file: each with its rule's code, level and documentation link, and
as related information the places it refers to (the table, the gate, the schema) and each hop of its trace.
The run's problems (a file that could not be read or analysed) are diagnostics of their file too."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List, Mapping

from lsprotocol import types
from pygls.workspace import PositionCodec

from dispatchlint.locations import Location, Span
from dispatchlint.findings import Finding, with_help
from dispatchlint.problems import Problem, ProblemKind
from dispatchlint.report import Level, RuleDoc
from dispatchlint.server._analysis import Analysis
from dispatchlint.server._documents import Positions

SOURCE = "dispatchlint"
_SEVERITY = {Level.ERROR: types.DiagnosticSeverity.Error, Level.WARNING: types.DiagnosticSeverity.Warning}


class Diagnostics:
    """Builds the diagnostics of one analysis (each file's text converted once)."""

    def __init__(
        self, analysis: Analysis, codec: PositionCodec, rules: Mapping[str, RuleDoc], uri_of: Callable[[Path], str]
    ) -> None:
        self._analysis = analysis
        self._codec = codec
        self._rules = rules
        self._uri_of = uri_of
        self._positions: Dict[Path, Positions] = {}

    def by_uri(self) -> Dict[str, List[types.Diagnostic]]:
        """Every file's diagnostics, by URI (only files that have some)."""
        found: Dict[str, List[types.Diagnostic]] = {}
        for finding in self._analysis.result.findings:
            found.setdefault(self._uri_of(self._path(finding.path)), []).append(self.diagnostic(finding))
        for problem in self._analysis.result.problems:
            if problem.kind is not ProblemKind.PARSE_ERROR:  # a file that does not parse is its DL001 finding
                found.setdefault(self._uri_of(self._path(problem.path)), []).append(self._problem(problem))
        return found

    def diagnostic(self, finding: Finding) -> types.Diagnostic:
        rule = self._rules[finding.code]
        related = [self._related(item, item.message) for item in finding.related]
        steps = len(finding.trace)
        related += [
            self._related(step, f"trace {number}/{steps}: {step.message}")
            for number, step in enumerate(finding.trace, start=1)
        ]
        return types.Diagnostic(
            range=self.range(finding.path, finding.span),
            message=with_help(finding),
            severity=_SEVERITY[rule.level],
            code=finding.code,
            code_description=types.CodeDescription(href=rule.url),
            source=SOURCE,
            related_information=related or None,
        )

    def range(self, relative: str, span: Span) -> types.Range:
        path = self._path(relative)
        if path not in self._positions:
            self._positions[path] = Positions(self._analysis.text(path), self._codec)
        return self._positions[path].range(span)

    def _related(self, item: Location, message: str) -> types.DiagnosticRelatedInformation:
        location = types.Location(self._uri_of(self._path(item.path)), self.range(item.path, item.span))
        return types.DiagnosticRelatedInformation(location, message)

    def _problem(self, problem: Problem) -> types.Diagnostic:
        line = max(problem.line, 1)
        column = max(problem.column, 1)
        return types.Diagnostic(
            range=self.range(problem.path, Span(line, column, line, column)),
            message=problem.message,
            severity=types.DiagnosticSeverity.Error if problem.kind.fails_run else types.DiagnosticSeverity.Warning,
            code=problem.kind.value,
            source=SOURCE,
        )

    def _path(self, relative: str) -> Path:
        return self._analysis.root / relative
