"""``--format github``: GitHub Actions workflow commands, one annotation per finding and per problem of the run.

The annotation's level is the rule's level (``warning`` for opt-in rules), as in SARIF. Its ``file`` is absolute
(:meth:`Report.anchored`), as Ruff's is: the runner finds a file under the workspace whatever folder the command
ran from, and the output does not depend on it.
"""

from __future__ import annotations

from typing import Dict

from dispatchlint.report._payload import Report
from dispatchlint.report._visible import visible


def _escape(value: str, property_value: bool = False) -> str:
    """A workflow command's message or property value: control characters visible, CR and LF among them (the log
    shows ESC sequences as a terminal would, and a line break would end the command), then GitHub's own escape of
    ``%``."""
    value = visible(value).replace("%", "%25")
    if property_value:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def _command(level: str, properties: Dict[str, object], message: str, help_line: str = "") -> str:
    """``help_line`` goes on a line of its own in the annotation (``%0A``, GitHub's escape of a line break)."""
    listed = ",".join(f"{key}={_escape(str(value), True)}" for key, value in properties.items())
    text = _escape(message) + (f"%0Ahelp: {_escape(help_line)}" if help_line else "")
    return f"::{level} {listed}::{text}\n"


def render_github(report: Report) -> str:
    lines = []
    for problem in report.problems:
        if not problem.kind.fails_run:
            continue  # a file that does not parse is annotated as its DL001 finding
        where: Dict[str, object] = {"file": report.anchored(problem.path)}
        if problem.line:
            where.update(line=problem.line, col=max(problem.column, 1))
        lines.append(_command("error", {**where, "title": f"dispatchlint: {problem.kind.value}"}, problem.message))
    for reported in report.findings:
        finding = reported.finding
        span = finding.span
        properties: Dict[str, object] = {
            "file": report.anchored(finding.path),
            "line": span.line,
            "col": span.column,
            "endLine": span.end_line,
            "endColumn": span.end_column,
            "title": f"{finding.code} {finding.name}",
        }
        level = report.rules[finding.code].level.value
        lines.append(_command(level, properties, f"{finding.code} {finding.message}", finding.fix_help))
    return "".join(lines)
