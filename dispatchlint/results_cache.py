"""A project's results, kept so that a run identical to an earlier one is answered without linking anything.

Linking, the rules and the fix decisions read the whole project, so a run on one file costs about as much as a run
on all of them, even when every file's facts come from the cache. What they find depends only on what this key
covers: the analyzer's code (every module of the package), the settings, the rules chosen, the project's root,
every file's facts key (its bytes, path and module name) and read problem, and the files where the project
declares its dependencies (a fix that generates code importing the runtime declares it there). An identical run
therefore finds the same thing, whatever paths it reports on: the results are stored before they are narrowed to
the paths asked about, and are narrowed again on every run.

The results hold all that any output format prints: the findings and problems, each rule's documentation (so a
run answered from them loads no rule) and, once a run has asked for them (JSON and SARIF show them), the edits
``--fix`` would make for each finding, as text. A run that asks for edits is not answered by results stored
without them; it links the project and stores its results with the edits, which every later run can use.

Entries live beside the facts, in the user's private cache folder, as JSON validated field by field like the facts
(a malformed or foreign entry is a miss). Each project root has one entry, which the next run that links the
project replaces: the results of a state the project has left are never wanted again, and keeping them would
grow the cache by a project's findings on every edit. A run whose caller needs the linked project itself
(``--fix``, ``--diff``, ``--graph``) never reads them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence, Tuple

from dispatchlint.indexing import facts_json
from dispatchlint.indexing.facts_cache import FactsCache, ReadFile, source_fingerprint
from dispatchlint.config import Config
from dispatchlint.findings import Finding
from dispatchlint.fix import DECLARATION_FILES
from dispatchlint.locations import TextEdit
from dispatchlint.problems import Problem
from dispatchlint.rules import RulePage
from dispatchlint.rules.suppression import IdleSuppression

_RESULTS = "results"


@dataclass(frozen=True)
class ProjectResults:
    """What analysing the whole project found, before it is narrowed to the paths a run reports on (paths
    relative to the project root)."""

    #: Every finding the rules kept (not ignored, not suppressed, not in test code), fix markers decided.
    findings: Tuple[Finding, ...]
    #: Files that do not parse.
    parse_errors: Tuple[Problem, ...]
    #: Suppression comments that name no rule.
    unknown_codes: Tuple[IdleSuppression, ...]
    #: Configured names that name nothing in the project.
    unresolved_settings: Tuple[str, ...]
    #: Every rule's documentation, as the code that found these results has it.
    rules: Tuple[RulePage, ...]
    #: What ``--fix`` would change for each finding alone, in the order of ``findings`` (paths relative to the
    #: root; none where no fix applies). None: not planned, the run that stored these results showed no edits.
    edits: Optional[Tuple[Tuple[TextEdit, ...], ...]] = None


@lru_cache(maxsize=None)
def _code_fingerprint() -> str:
    """The analyzer's own code, every module of the package: an edited rule or linker must not be served stale
    results."""
    return source_fingerprint(sorted(Path(__file__).resolve().parent.rglob("*.py")))


def results_key(
    root: Path, config: Config, rules: Sequence[str], files: Sequence[ReadFile], problems: Sequence[Problem]
) -> str:
    """Everything a project's results depend on (see the module docstring)."""
    digest = hashlib.sha256()
    for part in (_code_fingerprint(), str(root), repr(config), ",".join(rules)):
        digest.update(part.encode("utf-8", errors="surrogatepass") + b"\0")
    for read in files:
        digest.update(f"{read.source.relative}\0{read.key}\0".encode("utf-8", errors="surrogatepass"))
    for problem in problems:
        digest.update(repr(problem).encode("utf-8", errors="surrogatepass") + b"\0")
    for name in DECLARATION_FILES:
        try:
            declared = (root / name).read_bytes()
        except OSError:  # none (or unreadable): the fix says where to declare the runtime
            declared = b""
        digest.update(hashlib.sha256(declared).hexdigest().encode("ascii") + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class StoredResults:
    """A project root's entry: its last results and the key they were found under."""

    key: str
    results: ProjectResults


def load_results(cache: FactsCache, root: Path, key: str, with_edits: bool) -> Optional[ProjectResults]:
    """The results of ``root`` found under ``key`` (``with_edits``: with each finding's fix edits), or None (none,
    results of another state of the project or stored without the edits asked for, or an entry that is not
    exactly valid results)."""
    text = cache.read(_RESULTS, _slot(root))
    if text is None:
        return None
    try:
        stored = facts_json.loads_record(text, StoredResults)
    except facts_json.InvalidFacts:
        return None
    results = stored.results
    if stored.key != key or (with_edits and results.edits is None):
        return None
    if results.edits is not None and len(results.edits) != len(results.findings):  # not these findings' edits
        return None
    return results


def store_results(cache: FactsCache, root: Path, key: str, results: ProjectResults) -> None:
    cache.write(_RESULTS, _slot(root), facts_json.dumps(StoredResults(key, results)))


def _slot(root: Path) -> str:
    return hashlib.sha256(str(root).encode("utf-8", errors="surrogatepass")).hexdigest()
