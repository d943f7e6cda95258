"""``--format sarif``: SARIF 2.1.0, as GitHub code scanning accepts it.

Artifact URIs are relative to ``%SRCROOT%`` (the project root, given absolutely in ``originalUriBaseIds``), so
the log does not depend on the folder the command ran from; fingerprints do not depend on it either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Tuple, Union
from urllib.parse import quote

from dispatchlint import __version__
from dispatchlint.findings import with_help
from dispatchlint.locations import TextEdit
from dispatchlint.problems import Problem
from dispatchlint.report._json_text import indented_json
from dispatchlint.report._payload import Report, Reported
from dispatchlint.report._plain_text import plain_text

_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_BASE = "%SRCROOT%"
#: The ``partialFingerprints`` key: a tool's own fingerprint, versioned so that a new scheme never collides.
FINGERPRINT_KEY = "dispatchlint/v1"
#: ``Finding.fix_safety`` of a fix that ``--fix`` applies without ``--unsafe-fixes``.
SAFE_FIX = "safe"

if TYPE_CHECKING:
    from dispatchlint.indexing.facts import Location, Span


def _region(span: "Span") -> Dict[str, int]:
    return {"startLine": span.line, "startColumn": span.column, "endLine": span.end_line, "endColumn": span.end_column}


class _Locator:
    """Artifact locations relative to the source root, percent-encoded."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self._uris: Dict[str, str] = {}  # a report names few files, in thousands of locations

    def artifact(self, path: str) -> Dict[str, str]:
        uri = self._uris.get(path)
        if uri is None:
            relative = Path(os.path.relpath(self.report.anchored(path), self.report.source_root)).as_posix()
            uri = self._uris[path] = quote(relative, safe="/")
        return {"uri": uri, "uriBaseId": _BASE}

    def location(self, item: "Union[Location, Reported]", message: str = "") -> Dict[str, Any]:
        finding = item.finding if isinstance(item, Reported) else item
        span = finding.span
        physical = {"artifactLocation": self.artifact(finding.path), "region": _region(span)}
        located: Dict[str, Any] = {"physicalLocation": physical}
        if message:
            located["message"] = {"text": message}
        return located

    def problem(self, problem: Problem) -> Dict[str, Any]:
        physical: Dict[str, Any] = {"artifactLocation": self.artifact(problem.path)}
        if problem.line:
            physical["region"] = {"startLine": problem.line, "startColumn": max(problem.column, 1)}
        return {"physicalLocation": physical}

    def fix(self, description: str, edits: Tuple[TextEdit, ...]) -> Dict[str, Any]:
        by_file: Dict[str, List[Dict[str, Any]]] = {}
        for edit in edits:
            by_file.setdefault(edit.path, []).append(
                {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.replacement}}
            )
        changes = [
            {"artifactLocation": self.artifact(path), "replacements": replacements}
            for path, replacements in by_file.items()
        ]
        return {"description": {"text": description}, "artifactChanges": changes}


def _rules(report: Report) -> List[Dict[str, Any]]:
    return [
        {
            "id": doc.code,
            "name": doc.name,
            "shortDescription": {"text": plain_text(doc.summary)},
            "fullDescription": {"text": plain_text(doc.description)},
            "help": {"text": plain_text(doc.documentation), "markdown": doc.documentation},
            "helpUri": doc.url,
            "defaultConfiguration": {"level": doc.level.value},
        }
        for doc in report.rules.values()
    ]


def _result(reported: Reported, index: int, report: Report, locator: _Locator) -> Dict[str, Any]:
    finding = reported.finding
    result: Dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": index,
        "level": report.rules[finding.code].level.value,
        "message": {"text": with_help(finding)},
        "locations": [locator.location(reported)],
        "partialFingerprints": {FINGERPRINT_KEY: reported.fingerprint},
    }
    if finding.trace:  # GitHub code scanning shows a code flow step by step
        steps = [{"location": locator.location(item, item.message)} for item in finding.trace]
        result["codeFlows"] = [{"threadFlows": [{"locations": steps}]}]
    if finding.related:
        result["relatedLocations"] = [
            {"id": number, **locator.location(item, item.message)} for number, item in enumerate(finding.related)
        ]
    if reported.edits and finding.fix_safety == SAFE_FIX:  # an unsafe fix needs the user's review (--unsafe-fixes)
        result["fixes"] = [locator.fix(f"Fix {finding.code} {finding.name}", reported.edits)]
    return result


def render_sarif(report: Report) -> str:
    locator = _Locator(report)
    index = {code: number for number, code in enumerate(report.rules)}
    notifications = [
        {
            "level": "error" if problem.kind.fails_run else "warning",
            "message": {"text": problem.message},
            "descriptor": {"id": problem.kind.value},
            "locations": [locator.problem(problem)],
        }
        for problem in report.problems
    ]
    root_uri = report.source_root.resolve().as_uri().rstrip("/") + "/"
    run = {
        "tool": {
            "driver": {
                "name": "dispatchlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": report.reference_url,
                "rules": _rules(report),
            }
        },
        "invocations": [{"executionSuccessful": report.successful, "toolExecutionNotifications": notifications}],
        "originalUriBaseIds": {_BASE: {"uri": root_uri}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(item, index[item.finding.code], report, locator) for item in report.findings],
    }
    log = {"$schema": _SCHEMA, "version": "2.1.0", "runs": [run]}
    return indented_json(log) + "\n"
