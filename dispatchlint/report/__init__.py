"""Output formats. Each writer takes the findings and returns the text to print."""

from dispatchlint.report.github import render_github
from dispatchlint.report.graph import render_graph
from dispatchlint.report.json_format import render_json
from dispatchlint.report.sarif import render_sarif
from dispatchlint.report.text import render_statistics, render_text

__all__ = ["render_github", "render_graph", "render_json", "render_sarif", "render_statistics", "render_text"]
