"""``--format json``: ``{"version": 1, "findings": [...], "errors": [...]}``, stable and sorted.

Paths are absolute (:meth:`Report.anchored`, as Ruff's JSON gives them), so the output does not depend on the
working directory; each finding names its rule's documentation and, where a fix applies, the edits ``--fix``
would make.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Union

from dispatchlint.problems import Problem
from dispatchlint.locations import TextEdit
from dispatchlint.report._json_text import indented_json
from dispatchlint.report._payload import Report, Reported

if TYPE_CHECKING:
    from dispatchlint.indexing.facts import Location, Span
    from dispatchlint.findings import Finding


def _range(span: "Span") -> Dict[str, int]:
    return {"line": span.line, "column": span.column, "end_line": span.end_line, "end_column": span.end_column}


def _location(item: "Union[Finding, Location]", report: Report) -> Dict[str, Any]:
    return {"path": report.anchored(item.path), **_range(item.span)}


def _edit(edit: TextEdit, report: Report) -> Dict[str, Any]:
    return {"path": report.anchored(edit.path), **_range(edit.span), "replacement": edit.replacement}


def _problem(problem: Problem, report: Report) -> Dict[str, Any]:
    return {
        "path": report.anchored(problem.path),
        "kind": problem.kind.value,
        "message": problem.message,
        "line": problem.line or None,
        "column": problem.column or None,
    }


def finding_to_dict(reported: Reported, report: Report) -> Dict[str, Any]:
    finding = reported.finding
    return {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "fix_help": finding.fix_help or None,
        **_location(finding, report),
        "fixable": finding.fixable,
        "fix_safety": finding.fix_safety,
        "url": report.rules[finding.code].url,
        "fingerprint": reported.fingerprint,
        "edits": [_edit(edit, report) for edit in reported.edits],
        "related": [{**_location(item, report), "message": item.message} for item in finding.related],
        "trace": [{**_location(item, report), "message": item.message} for item in finding.trace],
    }


def render_json(report: Report) -> str:
    document = {
        "version": 1,
        "findings": [finding_to_dict(item, report) for item in report.findings],
        "errors": [_problem(problem, report) for problem in report.problems],
    }
    return indented_json(document) + "\n"
