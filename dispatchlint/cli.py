"""The ``dispatchlint`` command. :func:`main` is the whole command and is directly testable.

The options follow Ruff's names where Ruff has one, and come in groups (what to check, how to report, fixing,
settings, information): the help lists them under those headings. Combinations that cannot mean anything are
usage errors (exit 2), decided in one place (:func:`_refuse_conflicts`).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, TypeVar

import click

from dispatchlint import __version__
from dispatchlint._process import collecting_only_new_objects, deep_recursion, on_deep_stack
from dispatchlint.baseline import BaselineError, Keyed, keyed, read_baseline, split_by_baseline, write_baseline
from dispatchlint.config import ConfigError
from dispatchlint import api
from dispatchlint.plan import RunOptions, RunResult, UsageError
from dispatchlint.engine import plan_run
from dispatchlint.fix import FixError, Recovery, render_diff, stopping_rolls_back
from dispatchlint.report import (
    Report,
    Reported,
    RuleDoc,
    anchored,
    render_explanation,
    render_files,
    render_github,
    render_json,
    render_rule_list,
    render_sarif,
    render_settings,
    render_statistics,
    render_text,
    visible,
    visible_lines,
)
from dispatchlint.rules import RULES

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: The path that reads the file to check from stdin.
STDIN = Path("-")
#: The output formats that carry what each fix would change (planned once, then stored with the results).
_WITH_EDITS = ("json", "sarif")
_FORMATS = ("text", "json", "sarif", "github")
#: The formats each mode can print (a mode not listed prints every format).
_MODE_FORMATS: Dict[str, Tuple[str, ...]] = {
    "graph": ("text",),
    "diff": ("text",),
    "statistics": ("text", "json"),
    "show_files": ("text", "json"),
    "show_settings": ("text", "json"),
    "list_rules": ("text", "json"),
    "explain": ("text", "json"),
}
#: Options that cannot be given together: each prints something else, or one undoes the other.
_CONFLICTS: Tuple[Tuple[str, str], ...] = (
    ("graph", "fix"),
    ("graph", "diff"),
    ("graph", "statistics"),
    ("graph", "baseline"),
    ("graph", "update_baseline"),
    ("statistics", "diff"),
    ("show_files", "show_settings"),
    *((show, other) for show in ("show_files", "show_settings") for other in ("graph", "fix", "diff", "statistics")),
    ("quiet", "verbose"),
    ("no_cache", "cache_dir"),
)


@dataclass(frozen=True)
class _Options:
    """The parsed command line, one field per option."""

    paths: Tuple[Path, ...]
    # what to check
    select: Tuple[str, ...]
    extend_select: Tuple[str, ...]
    ignore: Tuple[str, ...]
    extend_exclude: Tuple[str, ...]
    force_exclude: bool
    stdin_filename: Optional[Path]
    # how to report
    output_format: str
    output_file: Optional[Path]
    color: str
    quiet: bool
    verbose: bool
    statistics: bool
    graph: bool
    exit_zero: bool
    baseline: Optional[Path]
    update_baseline: bool
    # fixing
    fix: bool
    unsafe_fixes: bool
    diff: bool
    # settings and speed
    config: Optional[Path]
    no_cache: bool
    cache_dir: Optional[Path]
    jobs: int
    # information
    show_files: bool
    show_settings: bool
    list_rules: bool
    explain: Optional[str]

    @property
    def machine(self) -> bool:
        return self.output_format != "text"

    @property
    def stdin(self) -> Optional[Path]:
        """The file the text on stdin stands for: ``--stdin-filename``, else ``-`` when ``-`` is the path."""
        if self.stdin_filename is not None:
            return self.stdin_filename
        return STDIN if STDIN in self.paths else None

    @property
    def stdin_file(self) -> Optional[Path]:
        """:attr:`stdin`, absolute: where the text on stdin stands in for a file's contents."""
        return (Path.cwd() / self.stdin).resolve() if self.stdin is not None else None

    @property
    def fixes_stdin(self) -> bool:
        """``--fix`` of the text on stdin: the fixed text goes to stdout, the report to stderr (as Ruff does)."""
        return self.stdin is not None and self.fix

    def given(self, name: str) -> bool:
        return bool(getattr(self, name))


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _refuse_conflicts(options: _Options) -> None:
    for first, second in _CONFLICTS:
        if options.given(first) and options.given(second):
            raise UsageError(f"{_flag(first)} cannot be combined with {_flag(second)}")
    for mode, formats in _MODE_FORMATS.items():
        if options.given(mode) and options.output_format not in formats:
            allowed = " or ".join(formats)
            raise UsageError(f"{_flag(mode)} prints {allowed}, not --output-format {options.output_format}")
    if options.unsafe_fixes and not (options.fix or options.diff):
        raise UsageError("--unsafe-fixes applies fixes: use it with --fix or --diff")
    if options.update_baseline and options.baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE")
    if options.stdin_filename is not None and any(path != STDIN for path in options.paths):
        raise UsageError("--stdin-filename checks stdin: give no PATHS (or `-`)")
    if STDIN in options.paths and len(options.paths) > 1:
        raise UsageError("`-` checks stdin: give no other PATHS")
    stdin_file = options.stdin_filename
    if stdin_file is not None and (stdin_file.name in ("", ".", "..") or stdin_file.is_dir()):
        raise UsageError(f"--stdin-filename names the file stdin holds, not a folder: {stdin_file}")


def _use_color(choice: str, tty: bool) -> bool:
    """``--color``; in ``auto``, ``FORCE_COLOR`` then ``NO_COLOR`` (either set and not empty) decide, then
    whether the output is a terminal."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return tty


class _Report:
    """Where the report goes: standard output (standard error when ``to_stderr``: stdout carries fixed text), or
    ``--output-file`` (written once, at the end)."""

    def __init__(self, path: Optional[Path], to_stderr: bool = False) -> None:
        self.path = path
        self.to_stderr = to_stderr
        self.parts: List[str] = []

    @property
    def tty(self) -> bool:
        return self.path is None and (sys.stderr if self.to_stderr else sys.stdout).isatty()

    def write(self, text: str) -> None:
        self.parts.append(text)

    def close(self, color: bool) -> None:
        text = "".join(self.parts)
        if self.path is None:
            click.echo(text, nl=False, color=color, err=self.to_stderr)
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(click.unstyle(text) if not color else text, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"{self.path}: cannot write the report: {error.strerror or error}") from error


class Progress:
    """``indexed 812/1400 files`` on stderr, rewritten in place, once a run has taken about a second: only on a
    terminal, never in CI, never with a machine format or ``--quiet``; the line is cleared when indexing ends."""

    #: Seconds of silence before the line shows, and between two updates.
    DELAY = 1.0
    INTERVAL = 0.1

    def __init__(self, stream: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.shown = 0.0

    @staticmethod
    def wanted(options: "_Options", stream: Any) -> bool:
        interactive = bool(getattr(stream, "isatty", lambda: False)())
        return interactive and not os.environ.get("CI") and not options.machine and not options.quiet

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done == total and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        elif now - self.started >= self.DELAY and now - self.shown >= self.INTERVAL and done < total:
            self.shown = now
            self.stream.write(f"\rindexed {done}/{total} files")
            self.stream.flush()


_GROUPS = ("What to check", "How to report", "Fixing", "Settings", "Information")
_F = TypeVar("_F", bound=Callable[..., Any])


class _GroupedOption(click.Option):
    def __init__(self, *args: Any, group: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.group = group


class _GroupedCommand(click.Command):
    """Help that lists the options under their group's heading."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records: Dict[str, List[Tuple[str, str]]] = {group: [] for group in _GROUPS}
        for param in self.get_params(ctx):
            if isinstance(param, click.Argument):
                continue  # the usage line shows PATHS, the description says what they are
            record = param.get_help_record(ctx)
            if record is not None:
                records[getattr(param, "group", "Information")].append(record)
        for group, rows in records.items():
            if rows:
                with formatter.section(group):
                    formatter.write_dl(rows)


def _option(group: str, *declarations: str, **attributes: Any) -> Callable[[_F], _F]:
    return click.option(*declarations, cls=_GroupedOption, group=group, **attributes)


_CHECK, _REPORT, _FIXING, _SETTINGS, _INFO = _GROUPS


@click.command(cls=_GroupedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_option(_CHECK, "--select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable instead.")
@_option(_CHECK, "--extend-select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable too.")
@_option(_CHECK, "--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes to disable.")
@_option(_CHECK, "--extend-exclude", multiple=True, metavar="PATTERN", help="More gitignore-style excludes.")
@_option(
    _CHECK,
    "--force-exclude",
    is_flag=True,
    help="Leave out named paths that exclude or git ignores (on in the pre-commit hooks).",
)
@_option(
    _CHECK,
    "--stdin-filename",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="Check the text on stdin as the contents of PATH, in the context of its project (with --fix: print it fixed).",
)
@_option(
    _REPORT,
    "--output-format",
    "--format",
    "output_format",
    type=click.Choice(_FORMATS),
    default="text",
    show_default=True,
    help="Output format (--format is an alias).",
)
@_option(_REPORT, "-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here.")
@_option(
    _REPORT,
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour text output (auto: on a terminal, unless NO_COLOR; FORCE_COLOR forces it).",
)
@_option(_REPORT, "-q", "--quiet", is_flag=True, help="Print the findings and errors only: no summary, no notes.")
@_option(_REPORT, "-v", "--verbose", is_flag=True, help="Show each finding's trace, and each file's timing.")
@_option(_REPORT, "--statistics", is_flag=True, help="Print a count of findings per rule instead of the findings.")
@_option(_REPORT, "--graph", is_flag=True, help="Print the tool-call paths as a Mermaid flowchart.")
@_option(_REPORT, "--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@_option(
    _REPORT,
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Report only the findings not recorded in FILE (an error if FILE does not exist).",
)
@_option(
    _REPORT,
    "--update-baseline",
    is_flag=True,
    help="With --baseline: record this run's findings in FILE (created or replaced, stale entries dropped).",
)
@_option(
    _FIXING,
    "--fix",
    is_flag=True,
    help="Apply safe fixes, to all files or none (a read-only file is refused), then report what is left.",
)
@_option(_FIXING, "--unsafe-fixes", is_flag=True, help="With --fix or --diff, apply unsafe fixes too.")
@_option(_FIXING, "--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if any).")
@_option(
    _SETTINGS,
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Read the settings from FILE instead of the root's pyproject.toml.",
)
@_option(_SETTINGS, "--no-cache", is_flag=True, help="Index every file afresh instead of reusing cached facts.")
@_option(
    _SETTINGS,
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Keep the cache in DIR (default: $DISPATCHLINT_CACHE_DIR, else the user's cache folder).",
)
@_option(
    _SETTINGS,
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Worker processes for indexing, at most (0: one per CPU; never more than the CPUs or the work).",
)
@_option(_INFO, "--show-files", is_flag=True, help="List the files the run analyses, and exit.")
@_option(_INFO, "--show-settings", is_flag=True, help="Print the resolved settings, and exit.")
@_option(_INFO, "--list-rules", is_flag=True, help="List the rules and exit.")
@_option(_INFO, "--explain", metavar="RULE", help="Print a rule's documentation (by code or name) and exit.")
@click.version_option(__version__, "-V", "--version", prog_name="dispatchlint", message="%(prog)s %(version)s")
def command(**values: Any) -> int:
    """Find agent tool calls that bypass the argument-coercion gate.

    The whole project around PATHS (default: the current folder) is analysed; findings are reported for the
    files under PATHS. `dispatchlint server` runs the language server instead (docs/editors.md).
    """
    options = _Options(**values)
    _refuse_conflicts(options)
    report = _Report(options.output_file, to_stderr=options.fixes_stdin)
    color = _use_color(options.color, report.tty)
    code = _run(options, report)
    report.close(color and not options.machine)
    return code


def _run(options: _Options, report: _Report) -> int:
    if options.list_rules:
        report.write(render_rule_list(_rule_docs(), options.machine))
        return EXIT_CLEAN
    if options.explain:
        docs = _rule_docs()
        by_name = {doc.name: code for code, doc in docs.items()}
        rule = options.explain.upper() if options.explain.upper() in RULES else by_name.get(options.explain.lower())
        if rule is None:
            raise UsageError(f"unknown rule: {options.explain!r}, neither a code nor a name (see --list-rules)")
        report.write(render_explanation(docs[rule], options.machine))
        return EXIT_CLEAN
    paths, run_options = _run_options(options)
    _refuse_to_overwrite_sources(options, paths, run_options)
    if options.show_files or options.show_settings:
        plans = plan_run(paths, run_options)
        shown = render_files(plans, Path.cwd(), options.machine) if options.show_files else None
        report.write(shown if shown is not None else render_settings(plans, options.machine))
        return EXIT_CLEAN
    baseline = options.baseline
    # Read before anything runs: a missing baseline is an error, never a silent recording (--update-baseline records)
    recorded = read_baseline(baseline) if baseline is not None and not options.update_baseline else None
    stdin = options.stdin_file
    outcome = (  # --diff shows the fixes instead of writing them, as Ruff's does; stdin's fixes write no file
        api.fix(
            paths,
            unsafe=options.unsafe_fixes,
            settings=run_options,
            write=not options.diff and stdin is None,
            waiting=_waiting,
            confined_to=stdin,
        )
        if options.fix or options.diff
        else None
    )
    passes = outcome.passes if outcome is not None else (api.check(paths, settings=run_options),)
    for number, analysis in enumerate(passes):
        if options.verbose:
            _print_timings(analysis.projects, analysis.seconds)
        if number == 0:  # what the user should know about the code as it was given
            _print_recovered(analysis.recovered, options)
            _print_notes(analysis.projects, options)
    results = passes[-1].projects
    #: With ``--fix``: how many findings the run reported before fixing (those fixed are not reported after).
    found_before = len(_reported(outcome.before.projects, recorded)[0]) if outcome and options.fix else None
    if options.graph:
        from dispatchlint.report.graph import render_graph  # the linked project's paths: --graph only

        cwd = Path.cwd()
        report.write(render_graph([(_shown_path(result.root, cwd), result.linked()[0]) for result in results]))
        return EXIT_CLEAN
    if outcome is not None and options.diff:
        return _diff(outcome, options, report)
    contents = dict(run_options.contents)  # the text of the files not on disk, as fixed
    if outcome is not None:
        contents.update((path, new) for path, (_, new) in outcome.changes.items() if path in contents)
        _print_fixes(outcome, options, stdin)
    if stdin is not None and options.fixes_stdin:
        click.echo(contents[stdin], nl=False)  # the whole text, fixed, byte for byte
    errors = [error for result in results for error in result.errors]
    for error in errors:
        click.echo(visible(f"error: {error}"), err=True)
    if baseline is not None and options.update_baseline:
        _note(options, _record_baseline(baseline, _reported(results, None)[0]))
        return EXIT_ERROR if errors else EXIT_CLEAN
    found, hidden = _reported(results, recorded)
    if hidden:
        _note(options, f"{hidden} finding{'s' if hidden != 1 else ''} hidden by the baseline {baseline}\n")
    fixed = max(0, found_before - len(found)) if found_before is not None else 0
    report.write(_render(results, found, options, report, contents, fixed))
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if found and not options.exit_zero else EXIT_CLEAN


def _reported(results: Sequence[RunResult], recorded: Optional[Set[str]]) -> Tuple[List[Keyed], int]:
    """The findings the run reports (those a baseline holds left out), and how many the baseline hid."""
    cwd = Path.cwd()
    found = [item for result in results for item in keyed(result.findings, result.root, cwd)]
    return split_by_baseline(found, recorded) if recorded is not None else (found, 0)


def _refuse_to_overwrite_sources(options: _Options, paths: Sequence[Path], run_options: RunOptions) -> None:
    """``--output-file`` and ``--baseline`` must not name a file the run analyses: the report (or the baseline)
    would replace it, after ``--fix`` had written it."""
    written = {name: getattr(options, name) for name in ("output_file", "baseline") if getattr(options, name)}
    if not written:
        return
    analysed = {source.path.resolve() for plan in plan_run(paths, run_options) for source in plan.files}
    for name, path in written.items():
        if path.resolve() in analysed:
            raise UsageError(f"{_flag(name)} {path} is one of the files analysed: writing there would replace it")


def _record_baseline(baseline: Path, found: Sequence[Keyed]) -> str:
    """Write the baseline; say how many findings it holds and, when it replaces one, how many entries went."""
    stale = ""
    if baseline.exists():
        try:
            dropped = len(read_baseline(baseline) - {item.key for item in found})
            stale = f" ({dropped} stale entr{'ies' if dropped != 1 else 'y'} dropped)"
        except BaselineError:
            stale = " (replacing an unreadable baseline)"
    write_baseline(baseline, found)
    count = len(found)
    return (
        f"Recorded {count} finding{'s' if count != 1 else ''} in {baseline}{stale}; later runs report only new ones.\n"
    )


def _rule_docs(results: Sequence[RunResult] = ()) -> Dict[str, RuleDoc]:
    """Each rule's documentation: as the run's results hold it (stored with them, so that a run answered from them
    loads no rule), else read from the rule classes (``--list-rules``, ``--explain``)."""
    from dispatchlint.report.reference import rule_docs
    from dispatchlint.rules import rule_pages

    return rule_docs(results[0].rules if results else rule_pages())


def _report(results: Sequence[RunResult], found: Sequence[Keyed], cwd: Path) -> Report:
    """What the machine formats print: the findings with their fingerprints and what each fix would change (when
    the run planned it), in the order of their absolute paths (the order of paths relative to ``cwd`` depends on
    it), the problems of every project, and the folder artifact paths are relative to (the project root, or the
    folder holding every project)."""
    from dispatchlint.report.reference import REFERENCE_URL

    roots = [str(result.root) for result in results] or [str(cwd)]
    edits = {result.root: result.edits for result in results}
    ordered = sorted(found, key=lambda item: (anchored(cwd, item.finding.path), *item.finding.sort_key()[1:]))
    return Report(
        findings=tuple(
            Reported(item.finding, item.fingerprint, edits[item.root].get(item.finding, ())) for item in ordered
        ),
        problems=tuple(problem for result in results for problem in result.problems),
        rules=_rule_docs(results),
        source_root=Path(os.path.commonpath(roots)),
        cwd=cwd,
        reference_url=REFERENCE_URL,
    )


def _run_options(options: _Options) -> Tuple[List[Path], RunOptions]:
    """The paths to check and what the command line adds to the project's settings (stdin read here)."""
    paths = list(options.paths)
    contents = {}
    stdin_file = options.stdin_file
    if stdin_file is not None:
        contents[stdin_file] = sys.stdin.buffer.read()
        paths = [stdin_file]
    run_options = RunOptions(
        select=_codes(options.select),
        extend_select=_codes(options.extend_select),
        ignore=_codes(options.ignore),
        extend_exclude=tuple(options.extend_exclude),
        config_file=options.config,
        contents=contents,
        use_cache=not options.no_cache,
        cache_dir=Path(os.path.abspath(options.cache_dir)) if options.cache_dir is not None else None,
        # What needs the linked project itself: the graph and the fixes.
        reuse_results=not (options.graph or options.diff or options.fix),
        fix_edits=options.output_format in _WITH_EDITS and not options.statistics,
        jobs=options.jobs,
        force_exclude=options.force_exclude,
        progress=Progress(sys.stderr) if Progress.wanted(options, sys.stderr) else None,
    )
    return paths, run_options


def _shown_path(path: Path, cwd: Path) -> str:
    """``path`` as the user sees it: relative to the working directory, with forward slashes."""
    return Path(os.path.relpath(path, cwd)).as_posix()


def _codes(values: Tuple[str, ...]) -> Tuple[str, ...]:
    return tuple(code.strip() for value in values for code in value.split(",") if code.strip())


def _render(
    results: Sequence[RunResult],
    found: Sequence[Keyed],
    options: _Options,
    report: _Report,
    contents: Mapping[Path, bytes],
    fixed: int,
) -> str:
    """The report; ``contents``: the text of files not read from disk (stdin), for the snippets; ``fixed``: how
    many findings ``--fix`` fixed, for the text summary."""
    findings = [item.finding for item in found]
    cwd = Path.cwd()
    if options.statistics:
        return render_statistics(findings, _rule_docs(results), options.machine)
    machine = {"json": render_json, "sarif": render_sarif, "github": render_github}.get(options.output_format)
    if machine is not None:
        return machine(_report(results, found, cwd))
    sources = {_shown_path(path, cwd): data.decode("utf-8", errors="replace") for path, data in contents.items()}
    color = _use_color(options.color, report.tty)
    return render_text(findings, color, cwd, options.verbose, summary=not options.quiet, sources=sources, fixed=fixed)


def _note(options: _Options, text: str) -> None:
    """A message for the user on stderr, which ``--quiet`` leaves out."""
    if text and not options.quiet:
        click.echo(visible_lines(text), err=True, nl=False)


def _print_notes(results: Sequence[RunResult], options: _Options) -> None:
    if sum(result.reported_files for result in results) == 0:
        _note(options, "warning: No Python files found under the given path(s)\n")
    _print_warnings([warning for result in results for warning in result.warnings], options)


def _print_warnings(warnings: Sequence[str], options: _Options) -> None:
    for warning in warnings:
        _note(options, f"warning: {warning}\n")


def _print_timings(results: Sequence[RunResult], total: float) -> None:
    """``--verbose``: the time each file took to index (or that the cache served it), then each project's
    stages, then the whole run's."""
    cwd = Path.cwd()
    for result in results:
        cached = 0
        for name, seconds in result.file_times:
            if seconds is None:
                cached += 1
                continue
            shown = visible(_shown_path(result.root / name, cwd))
            click.echo(f"timing: {shown}: indexed in {seconds * 1000:.1f} ms", err=True)
        stages = ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in result.stage_times)
        click.echo(f"timing: {len(result.file_times)} files ({cached} from the cache); {stages}", err=True)
    click.echo(f"timing: total {total * 1000:.1f} ms", err=True)


def _waiting(root: Path) -> None:
    click.echo(visible(f"Another dispatchlint --fix is running on {root}; waiting for it to finish"), err=True)


def _diff(outcome: api.FixResult, options: _Options, report: _Report) -> int:
    """``--diff``: print what ``--fix`` would change and write nothing; exit 1 when it would change something."""
    changes = outcome.changes
    report.write(render_diff(changes, Path.cwd()))
    rewritten = f"{len(changes)} file{'s' if len(changes) != 1 else ''} would be rewritten\n"
    _note(options, rewritten + _advice(outcome) + _outside(outcome) + _held(outcome))
    _print_warnings(outcome.warnings, options)
    return EXIT_FINDINGS if changes else EXIT_CLEAN


def _print_recovered(recovered: Sequence[Recovery], options: _Options) -> None:
    """Say which files of a ``--fix`` killed while it wrote them were put back, and which were left."""
    cwd = Path.cwd()
    for recovery in recovered:
        restored = len(recovery.restored)
        _note(
            options,
            f"Restored {restored} file{'s' if restored != 1 else ''} that an interrupted --fix had rewritten "
            f"({_shown_path(recovery.journal, cwd)})\n",
        )
        for path in recovery.edited:
            _note(options, f"warning: {_shown_path(path, cwd)} changed after an interrupted --fix; left as it is\n")


def _print_fixes(outcome: api.FixResult, options: _Options, stdin: Optional[Path]) -> None:
    """``--fix``: which files were rewritten and how, pyupgrade style (stdin's text: fixed, not written); the
    fixes held for ``--unsafe-fixes``."""
    for path in outcome.changes:
        shown = _shown_path(path, Path.cwd())
        done = f"Fixing stdin ({shown})" if path == stdin else f"Rewriting {shown}"
        _note(options, f"{done}: {'; '.join(outcome.notes[path])}\n")
    _note(options, _advice(outcome) + _outside(outcome) + _held(outcome))
    _print_warnings(outcome.warnings, options)


def _outside(outcome: api.FixResult) -> str:
    """The findings a fix of stdin left: their fix edits other files, which it never writes."""
    cwd = Path.cwd()
    lines = []
    for left in outcome.outside:
        finding = left.finding
        files = ", ".join(_shown_path(path, cwd) for path in left.files)
        lines.append(
            f"note: {finding.path}:{finding.span.line}:{finding.span.column}: {finding.code} not fixed: its fix "
            f"edits {files}, and a fix of stdin writes no file (run dispatchlint --fix on the saved files)\n"
        )
    return "".join(lines)


def _advice(outcome: api.FixResult) -> str:
    """What the fixes ask of the user (a dependency to declare where the fix could not)."""
    return "".join(f"note: {line}\n" for line in outcome.advice)


def _held(outcome: api.FixResult) -> str:
    held = outcome.held
    return f"{held} more fix{'es' if held != 1 else ''} available with --unsafe-fixes\n" if held else ""


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command; return its exit code (0 clean, 1 findings, 2 usage, configuration or internal error).

    The command runs on a deep stack: linking, the rules and the fix walk libcst trees and facts as deep as the
    deepest module Python accepts (see :mod:`dispatchlint.indexing._parse`).
    """
    try:
        with stopping_rolls_back():  # an interrupt while --fix writes lets it roll back first
            return on_deep_stack(lambda: _command(argv))
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("aborted", err=True)
        return EXIT_ERROR
    except click.ClickException as error:
        error.show()
        return EXIT_ERROR
    except (UsageError, ConfigError, FixError, BaselineError) as error:
        click.echo(visible_lines(f"error: {error}"), err=True)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - never a traceback for the user; say what failed
        click.echo(visible(f"internal error: {type(error).__name__}: {error} (please report it)"), err=True)
        return EXIT_ERROR


@click.command(name="server", context_settings={"help_option_names": ["-h", "--help"]})
def server_command() -> int:
    """Run the language server on standard input and output (docs/editors.md); needs the server extra."""
    from dispatchlint.server import serve

    serve()
    return EXIT_CLEAN


def _command(argv: Optional[Sequence[str]]) -> int:
    args = list(argv) if argv is not None else sys.argv[1:]
    if args[:1] == ["server"]:  # long-lived: outside the one-run collector scope below (``./server`` is a path)
        return int(server_command.main(args=args[1:], prog_name="dispatchlint server", standalone_mode=False) or 0)
    # One collector scope for the whole command: the facts the engine freezes stay out of the collector's reach
    # while the findings are narrowed and rendered (a full pass over them was a tenth of a warm run).
    with deep_recursion(), collecting_only_new_objects():
        return int(command.main(args=args, standalone_mode=False) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
