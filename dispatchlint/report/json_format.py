"""``--format json``: ``{"version": 1, "findings": [...]}``, stable and sorted."""

from __future__ import annotations

import json
from typing import Any, Dict, Sequence

from dispatchlint.rules import Finding, Related


def _location(item: "Finding | Related") -> Dict[str, Any]:
    return {
        "path": item.path,
        "line": item.span.line,
        "column": item.span.column,
        "end_line": item.span.end_line,
        "end_column": item.span.end_column,
    }


def finding_to_dict(finding: Finding) -> Dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        **_location(finding),
        "fixable": finding.fixable,
        "fix_safety": finding.fix_safety,
        "related": [{**_location(item), "message": item.message} for item in finding.related],
        "trace": [{**_location(item), "message": item.message} for item in finding.trace],
    }


def render_json(findings: Sequence[Finding]) -> str:
    return json.dumps({"version": 1, "findings": [finding_to_dict(f) for f in findings]}, indent=2) + "\n"
