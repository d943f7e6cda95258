"""``--baseline FILE``: record today's findings once; later runs report only the ones not recorded.

A finding is recognised by its rule, its file and the text of its line (whitespace folded), plus its rank among
identical ones, so that edits elsewhere in the file, which move lines, do not make old findings look new.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Dict, List, Sequence, Set, Tuple

from dispatchlint.config import ConfigError
from dispatchlint.rules import Finding

_VERSION = 1


def _fingerprints(findings: Sequence[Finding], cwd: Path) -> List[Tuple[str, Finding]]:
    lines: Dict[str, List[str]] = {}
    seen: "Counter[str]" = Counter()
    marked = []
    for finding in findings:
        if finding.path not in lines:
            try:
                lines[finding.path] = (cwd / finding.path).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines[finding.path] = []
        text = lines[finding.path]
        line = " ".join(text[finding.span.line - 1].split()) if 0 < finding.span.line <= len(text) else ""
        key = f"{finding.code}|{finding.path}|{line}"
        seen[key] += 1
        marked.append((f"{key}|{seen[key]}", finding))
    return marked


def write_baseline(path: Path, findings: Sequence[Finding], cwd: Path) -> None:
    entries = [{"code": f.code, "path": f.path, "fingerprint": key} for key, f in _fingerprints(findings, cwd)]
    path.write_text(json.dumps({"version": _VERSION, "findings": entries}, indent=2) + "\n", encoding="utf-8")


def read_baseline(path: Path) -> Set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {entry["fingerprint"] for entry in data["findings"]}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{path}: not a dispatchlint baseline: {error}") from error


def new_findings(findings: Sequence[Finding], recorded: Set[str], cwd: Path) -> Tuple[Finding, ...]:
    """The findings the baseline does not hold."""
    return tuple(finding for key, finding in _fingerprints(findings, cwd) if key not in recorded)
