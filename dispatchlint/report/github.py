"""``--format github``: GitHub Actions workflow commands, one annotation per finding."""

from __future__ import annotations

from typing import Sequence

from dispatchlint.rules import Finding


def _escape(value: str, property_value: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def render_github(findings: Sequence[Finding]) -> str:
    lines = []
    for finding in findings:
        span = finding.span
        properties = ",".join(
            [
                f"file={_escape(finding.path, True)}",
                f"line={span.line}",
                f"col={span.column}",
                f"endLine={span.end_line}",
                f"endColumn={span.end_column}",
                f"title={_escape(f'{finding.code} {finding.name}', True)}",
            ]
        )
        lines.append(f"::error {properties}::{_escape(f'{finding.code} {finding.message}')}")
    return "".join(line + "\n" for line in lines)
