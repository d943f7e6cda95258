"""Output formats. Each writer takes the findings and returns the text to print."""

from dispatchlint.locations import TextEdit
from dispatchlint.report._payload import Level, Report, Reported, RuleDoc, anchored
from dispatchlint.report._visible import visible, visible_lines
from dispatchlint.report.github import render_github
from dispatchlint.report.json_format import render_json
from dispatchlint.report.sarif import render_sarif
from dispatchlint.report.info import (
    render_explanation,
    render_files,
    render_rule_list,
    render_settings,
    render_statistics,
)
from dispatchlint.report.text import render_text

__all__ = [
    "Level",
    "Report",
    "Reported",
    "RuleDoc",
    "TextEdit",
    "anchored",
    "render_explanation",
    "render_files",
    "render_github",
    "render_json",
    "render_rule_list",
    "render_sarif",
    "render_settings",
    "render_statistics",
    "render_text",
    "visible",
    "visible_lines",
]
