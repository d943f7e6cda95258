"""The ``dispatchlint`` command. :func:`main` is the whole command and is directly testable."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import click

from dispatchlint import __version__
from dispatchlint.baseline import new_findings, read_baseline, write_baseline
from dispatchlint.config import ConfigError
from dispatchlint.engine import RunResult, UsageError, analyse
from dispatchlint.fix import FixError, plan_fixes, render_diff, write_all
from dispatchlint.report import (
    render_github,
    render_graph,
    render_json,
    render_sarif,
    render_statistics,
    render_text,
)
from dispatchlint.rules import SAFE, all_rules

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: Fix passes at most: each pass re-analyses what the previous one wrote.
_FIX_PASSES = 4


def _codes(values: Tuple[str, ...]) -> List[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def _list_rules() -> str:
    rules = all_rules()
    lines = [f"{code}  {cls.name:<24} {'default' if cls.default else 'opt-in'}" for code, cls in rules.items()]
    return "\n".join(lines) + "\n"


def _explain(code: str) -> str:
    rules = all_rules()
    cls = rules.get(code.upper())
    if cls is None:
        raise UsageError(f"unknown rule code: {code!r} (see --list-rules)")
    return f"# {cls.code} {cls.name}\n\n{cls.documentation()}\n"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable (comma-separated).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes to disable (comma-separated).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print a count of findings per rule instead of the findings.")
@click.option(
    "--fix",
    is_flag=True,
    help="Apply safe fixes, to all files or none (a read-only file is refused), then report what is left.",
)
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, apply unsafe fixes too.")
@click.option(
    "--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing (exit 1 if there are any)."
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record today's findings in FILE if it does not exist; otherwise report only findings not in it.",
)
@click.option("--no-cache", is_flag=True, help="Index every file afresh instead of reusing cached facts.")
@click.option(
    "--jobs", type=click.IntRange(min=0), default=0, metavar="N", help="Worker processes for indexing (0: one per CPU)."
)
@click.option("--graph", is_flag=True, help="Print the tool-call paths as a Mermaid diagram instead of findings.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Text output: show each finding's trace (source, every hop, the sink)."
)
@click.option("--list-rules", is_flag=True, help="List the rules and exit.")
@click.option("--explain", metavar="CODE", help="Print a rule's documentation and exit.")
@click.version_option(__version__, prog_name="dispatchlint")
def command(
    paths: Tuple[Path, ...],
    output_format: str,
    select: Tuple[str, ...],
    ignore: Tuple[str, ...],
    exit_zero: bool,
    statistics: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    baseline: Optional[Path],
    no_cache: bool,
    jobs: int,
    graph: bool,
    verbose: bool,
    list_rules: bool,
    explain: Optional[str],
) -> int:
    """Find agent tool calls that bypass the argument-coercion gate.

    The whole project around PATHS (default: the current folder) is analysed; findings are reported for the
    files under PATHS.
    """
    if list_rules:
        click.echo(_list_rules(), nl=False)
        return EXIT_CLEAN
    if explain:
        click.echo(_explain(explain), nl=False)
        return EXIT_CLEAN

    def run() -> RunResult:
        return analyse(list(paths), _codes(select), _codes(ignore), use_cache=not no_cache, jobs=jobs)

    result = run()
    if graph:
        click.echo(render_graph(result.project), nl=False)
        return EXIT_CLEAN
    if diff:
        return _diff(result, unsafe_fixes)
    if fix:
        # A fix can make another possible (a chain coerced ahead makes its tool's hand-rolled parsing
        # redundant): apply until nothing changes, so that a second --fix has nothing left to do.
        hint = ""
        for _ in range(_FIX_PASSES):
            changed, hint = _fix(result, unsafe_fixes)
            if not changed:
                break
            result = run()
        click.echo(hint, err=True, nl=False)
    for error in result.errors:
        click.echo(f"error: {error}", err=True)
    findings = result.findings
    if baseline is not None:
        if not baseline.exists():
            write_baseline(baseline, findings, Path.cwd())
            click.echo(f"Recorded {len(findings)} finding(s) in {baseline}; later runs report only new ones.", err=True)
            return EXIT_ERROR if result.errors else EXIT_CLEAN
        findings = new_findings(findings, read_baseline(baseline), Path.cwd())
    if statistics:
        click.echo(render_statistics(findings), nl=False)
    elif output_format == "json":
        click.echo(render_json(findings), nl=False)
    elif output_format == "sarif":
        click.echo(render_sarif(findings), nl=False)
    elif output_format == "github":
        click.echo(render_github(findings), nl=False)
    else:
        color = sys.stdout.isatty()
        click.echo(render_text(findings, color, Path.cwd(), verbose), nl=False, color=color)
    if result.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN


def _fixes(result: RunResult, unsafe: bool) -> Tuple[Dict[Path, Tuple[bytes, bytes]], Dict[Path, List[str]], str]:
    """The new contents of the files the chosen fixes change, what each rewrite does, and a hint on held fixes."""
    chosen = [f for f in result.findings if f.fixable and (unsafe or f.fix_safety == SAFE)]
    held = sum(1 for f in result.findings if f.fixable) - len(chosen)
    outcome = plan_fixes(result, chosen, Path.cwd())
    hint = f"{held} more fix{'es' if held != 1 else ''} available with --unsafe-fixes\n" if held else ""
    return outcome.changes, outcome.notes, hint


def _diff(result: RunResult, unsafe: bool) -> int:
    """``--diff``: print what ``--fix`` would change and write nothing; exit 1 when it would change something."""
    changes, _, hint = _fixes(result, unsafe)
    click.echo(render_diff(changes, Path.cwd()), nl=False)
    click.echo(f"{len(changes)} file{'s' if len(changes) != 1 else ''} would be rewritten\n{hint}", err=True, nl=False)
    return EXIT_FINDINGS if changes else EXIT_CLEAN


def _fix(result: RunResult, unsafe: bool) -> Tuple[bool, str]:
    """One ``--fix`` pass: rewrite the files (all or none) and tell the user which, pyupgrade style. Whether any
    changed, and the hint on fixes held back."""
    changes, notes, hint = _fixes(result, unsafe)
    write_all(changes)
    for path in changes:
        shown = Path(os.path.relpath(path, Path.cwd())).as_posix()
        click.echo(f"Rewriting {shown}: {'; '.join(notes[path])}", err=True)
    return bool(changes), hint


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command; return its exit code (0 clean, 1 findings, 2 usage, configuration or internal error)."""
    try:
        return int(command.main(args=list(argv) if argv is not None else None, standalone_mode=False) or 0)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return EXIT_ERROR
    except click.ClickException as error:
        error.show()
        return EXIT_ERROR
    except (UsageError, ConfigError, FixError) as error:
        click.echo(f"error: {error}", err=True)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - never a traceback for the user; say what failed
        click.echo(f"internal error: {type(error).__name__}: {error} (please report it)", err=True)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
