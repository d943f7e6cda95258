"""``--baseline FILE``: report only the findings the file does not record; ``--update-baseline`` records them.

Recording is always asked for: a baseline that is not there is an error, so that a mistyped path cannot record
today's findings and pass every later run.

A finding is recognised by its rule, its file relative to the project root and the text of its line (whitespace
folded), plus its rank among identical ones, so that edits elsewhere in the file, which move lines, do not make
old findings look new, and a baseline made at the root holds when the command runs from a sub-folder. SARIF's
``partialFingerprints`` are the same keys, hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence, Set, Tuple

from dispatchlint._lines import split_lines
from dispatchlint.findings import Finding

_VERSION = 1


class BaselineError(Exception):
    """The baseline file cannot be read or written; the message names it and says why."""


@dataclass(frozen=True)
class Keyed:
    """A finding with its baseline key and the project root the key is relative to."""

    finding: Finding
    key: str
    root: Path

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.key.encode("utf-8")).hexdigest()[:32]


def keyed(findings: Sequence[Finding], root: Path, cwd: Path) -> List[Keyed]:
    """The findings of one project (paths relative to ``cwd``) with their keys (paths relative to ``root``)."""
    lines: Dict[str, List[str]] = {}
    seen: "Counter[str]" = Counter()
    marked = []
    for finding in findings:
        if finding.path not in lines:
            try:
                text = (cwd / finding.path).read_text(encoding="utf-8", errors="replace")
                lines[finding.path] = split_lines(text)
            except OSError:
                lines[finding.path] = []
        text_lines = lines[finding.path]
        number = finding.span.line
        line = " ".join(text_lines[number - 1].split()) if 0 < number <= len(text_lines) else ""
        relative = Path(os.path.relpath(cwd / finding.path, root)).as_posix()
        key = f"{finding.code}|{relative}|{line}"
        seen[key] += 1
        marked.append(Keyed(finding, f"{key}|{seen[key]}", root))
    return marked


def write_baseline(path: Path, findings: Sequence[Keyed]) -> None:
    entries = [{"code": item.finding.code, "fingerprint": item.key} for item in findings]
    if not path.parent.is_dir():
        raise BaselineError(f"{path}: cannot write the baseline: folder {path.parent} does not exist")
    try:
        path.write_text(json.dumps({"version": _VERSION, "findings": entries}, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise BaselineError(f"{path}: cannot write the baseline: {error.strerror or error}") from error


def read_baseline(path: Path) -> Set[str]:
    """The keys a baseline holds."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise BaselineError(
            f"{path}: the baseline does not exist; record it with --baseline {path} --update-baseline"
        ) from error
    except OSError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error.strerror or error}") from error
    except ValueError as error:
        raise BaselineError(f"{path}: not a dispatchlint baseline (invalid JSON: {error})") from error
    except RecursionError as error:
        raise BaselineError(f"{path}: not a dispatchlint baseline (nested too deeply to read)") from error
    if not isinstance(data, dict) or "version" not in data:
        raise BaselineError(f"{path}: not a dispatchlint baseline (no version)")
    if data["version"] != _VERSION:
        raise BaselineError(
            f"{path}: baseline version {data['version']!r} is not one this dispatchlint reads ({_VERSION}); "
            "re-create it with --update-baseline"
        )
    entries = data.get("findings")
    if not isinstance(entries, list) or not all(
        isinstance(entry, dict) and isinstance(entry.get("fingerprint"), str) for entry in entries
    ):
        raise BaselineError(f"{path}: not a dispatchlint baseline (findings must be a list of fingerprints)")
    return {entry["fingerprint"] for entry in entries}


def split_by_baseline(findings: Sequence[Keyed], recorded: Set[str]) -> Tuple[List[Keyed], int]:
    """The findings the baseline does not hold, and how many it hid."""
    new = [item for item in findings if item.key not in recorded]
    return new, len(findings) - len(new)
