"""The pipeline: discover files -> index each once -> link the project -> run rules -> filter findings."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

from dispatchlint.analysis.cache import CACHE_DIRECTORY, FactsCache, index_files
from dispatchlint.analysis.discover import PathMatcher, SourceFile, discover, find_root, module_name
from dispatchlint.analysis.facts import ModuleFacts
from dispatchlint.analysis.link import Project, link_project
from dispatchlint.config import Config, ConfigError, load_config
from dispatchlint.fix import bind
from dispatchlint.rules import Finding, Rule, all_rules


class UsageError(Exception):
    """Bad command-line input (an unknown rule code, a missing path)."""


@dataclass(frozen=True)
class RunResult:
    root: Path
    config: Config
    project: Project
    findings: Tuple[Finding, ...]
    #: Problems that do not stop the run but make it fail (an unreadable file), one message each.
    errors: Tuple[str, ...]


def select_rules(select: Sequence[str], ignore: Sequence[str]) -> List[Rule]:
    """The rules to run: ``select`` codes or prefixes (default: the default rules), minus ``ignore``."""
    rules = all_rules()
    for selector in list(select) + list(ignore):
        if not any(code.startswith(selector.upper()) for code in rules) and selector.upper() != "ALL":
            raise UsageError(f"unknown rule code or prefix: {selector!r} (see --list-rules)")

    def matches(code: str, selectors: Sequence[str]) -> bool:
        return any(s.upper() == "ALL" or code.startswith(s.upper()) for s in selectors)

    chosen = [cls for code, cls in rules.items() if (matches(code, select) if select else cls.default)]
    return [cls() for cls in chosen if not matches(cls.code, ignore)]


def analyse(
    paths: Sequence[Path],
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    cwd: Optional[Path] = None,
    use_cache: bool = True,
    jobs: int = 0,
) -> RunResult:
    """Analyse the whole project around ``paths``; report findings only for files under ``paths``.

    ``use_cache`` keeps each file's facts by content under the root; ``jobs`` worker processes index the files
    the cache does not hold (0: one per CPU).
    """
    cwd = cwd or Path.cwd()
    targets = [(cwd / path).resolve() for path in (paths or [Path(".")])]
    for target in targets:
        if not target.exists():
            raise UsageError(f"{target}: no such file or directory")
    root = find_root(targets)
    config = load_config(root / "pyproject.toml")
    rules = select_rules(list(select) or list(config.select), list(ignore) + list(config.ignore))
    files = discover(root, config.exclude)
    explicit = [t for t in targets if t.is_file() and t.suffix == ".py" and not any(f.path == t for f in files)]
    cache = FactsCache(root / CACHE_DIRECTORY) if use_cache else None
    modules, errors = index_files(files + _explicit_files(root, explicit), cache, jobs or os.cpu_count() or 1)
    project = link_project(modules, config)
    bind(project, root)
    findings: List[Finding] = []
    for rule in rules:
        findings.extend(rule.check(project))
    kept = _filter(findings, modules, config, root, targets)
    shown = tuple(sorted((_relative_to_cwd(f, root, cwd) for f in kept), key=Finding.sort_key))
    return RunResult(root, config, project, shown, tuple(errors))


def _explicit_files(root: Path, paths: Sequence[Path]) -> List[SourceFile]:
    """Files named on the command line that discovery excluded or that lie outside the root."""
    found = []
    for path in paths:
        try:
            relative = path.relative_to(root).as_posix()
        except ValueError:
            relative = path.name
        module, is_package = module_name(relative)
        found.append(SourceFile(path, relative, module, is_package))
    return found


def _filter(
    findings: Sequence[Finding], modules: Sequence[ModuleFacts], config: Config, root: Path, targets: Sequence[Path]
) -> List[Finding]:
    suppressed: Dict[str, Dict[int, Tuple[str, ...]]] = {m.path: dict(m.suppressions) for m in modules}
    per_file = [(PathMatcher([pattern]), set(codes)) for pattern, codes in config.per_file_ignores]
    tests = PathMatcher(config.test_paths)
    kept = []
    for finding in findings:
        absolute = root / finding.path
        if not any(absolute == target or target in absolute.parents for target in targets):
            continue
        if tests.matches(finding.path):
            continue
        codes = suppressed.get(finding.path, {}).get(finding.span.line)
        if codes is not None and (not codes or finding.code in codes):
            continue
        if any(matcher.matches(finding.path) and _code_in(finding.code, ignored) for matcher, ignored in per_file):
            continue
        kept.append(finding)
    return kept


def _code_in(code: str, selectors: Set[str]) -> bool:
    return any(code.startswith(selector.upper()) or selector.upper() == "ALL" for selector in selectors)


def _relative_to_cwd(finding: Finding, root: Path, cwd: Path) -> Finding:
    def rel(path: str) -> str:
        return Path(os.path.relpath(root / path, cwd)).as_posix()

    related = tuple(replace(item, path=rel(item.path)) for item in finding.related)
    trace = tuple(replace(item, path=rel(item.path)) for item in finding.trace)
    return replace(finding, path=rel(finding.path), related=related, trace=trace)


__all__ = ["ConfigError", "RunResult", "UsageError", "analyse", "select_rules"]
