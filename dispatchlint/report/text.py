"""``--format text``: ``path:line:col: CODE message`` with a caret snippet, coloured on a terminal; what comes from
the project (paths, names, source lines) is shown with its control characters visible (``report/_visible.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence

import click

from dispatchlint._lines import split_lines

from dispatchlint.findings import Applicability
from dispatchlint.report._visible import visible

if TYPE_CHECKING:
    from dispatchlint.findings import Finding


def render_text(
    findings: Sequence["Finding"],
    color: bool,
    cwd: Path,
    verbose: bool = False,
    summary: bool = True,
    sources: Optional[Mapping[str, str]] = None,
    fixed: int = 0,
) -> str:
    """``verbose`` adds each finding's trace: where the model's arguments come from, every hop, the sink;
    ``summary`` the closing count (with ``fixed``, the findings ``--fix`` fixed, counted as Ruff counts them:
    ``Found 3 findings (2 fixed, 1 remaining).``); ``sources`` holds the text of files not read from disk
    (stdin), by path."""
    cache: Dict[str, List[str]] = {str(cwd / path): split_lines(text) for path, text in (sources or {}).items()}
    out: List[str] = []
    for finding in findings:
        span = finding.span
        location = f"{visible(finding.path)}:{span.line}:{span.column}:"
        location = click.style(location, bold=True) if color else location
        code = click.style(finding.code, fg="red", bold=True) if color else finding.code
        fix = _MARKERS[finding.applicability]
        out.append(f"{location} {code}{fix} {visible(finding.message)}")
        out.extend(_snippet(finding, _lines(cache, cwd / finding.path), color))
        if finding.fix_help:
            out.append(f"  help: {visible(finding.fix_help)}")
        if verbose and finding.trace:
            out.append("  trace:")
            for number, step in enumerate(finding.trace, start=1):
                where = f"{visible(step.path)}:{step.span.line}:{step.span.column}"
                out.append(f"    {number}. {where}: {visible(step.message)}")
            out.append("")
    count = len(findings)
    if summary:
        total = count + fixed
        found = f"Found {total} finding{'s' if total != 1 else ''}"
        if fixed:
            out.append(f"{found} ({fixed} fixed, {count} remaining).")
        else:
            out.append(f"{found}." if count else "All checks passed!")
        fixes = fix_summary(findings)
        if fixes:
            out.append(fixes)
    return "".join(line + "\n" for line in out)


#: As Ruff marks them: ``[*]`` is what ``--fix`` applies; an unsafe fix waits for ``--unsafe-fixes``.
_MARKERS = {Applicability.SAFE: " [*]", Applicability.UNSAFE: " [unsafe fix]", Applicability.NONE: ""}


def fix_summary(findings: Sequence["Finding"]) -> str:
    """``[*] 2 fixable with --fix (1 more with --fix --unsafe-fixes).``; empty when nothing can be fixed."""
    safe = sum(1 for finding in findings if finding.applicability is Applicability.SAFE)
    unsafe = sum(1 for finding in findings if finding.applicability is Applicability.UNSAFE)
    if not safe and not unsafe:
        return ""
    if not safe:
        return f"No fixes with --fix ({unsafe} with --fix --unsafe-fixes)."
    more = f" ({unsafe} more with --fix --unsafe-fixes)" if unsafe else ""
    return f"[*] {safe} fixable with --fix{more}."


def _lines(cache: Dict[str, List[str]], path: Path) -> List[str]:
    key = str(path)
    if key not in cache:
        try:
            cache[key] = split_lines(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            cache[key] = []
    return cache[key]


def _snippet(finding: "Finding", lines: List[str], color: bool) -> List[str]:
    span = finding.span
    if not 1 <= span.line <= len(lines):
        return []
    text = lines[span.line - 1].rstrip()
    width = len(str(span.line))
    end = span.end_column if span.end_line == span.line else len(text) + 1
    # Under the line as shown: an escaped control character takes more than one column.
    before, under = visible(text[: span.column - 1]), visible(text[span.column - 1 : end - 1])
    carets = "^" * max(1, len(under))
    marker = click.style(carets, fg="red") if color else carets
    gutter = " " * width + " |"
    return [gutter, f"{span.line} | {visible(text)}", f"{gutter} {' ' * len(before)}{marker}", ""]
