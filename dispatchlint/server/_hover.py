"""What a hover says on a tool table or a dispatch site: which paths read the table, and whether each hands its
tools the arguments the gate repaired or the model's raw ones. Read from the linked project, so the answer is the
whole project's, whichever file the table and its readers are in."""

from __future__ import annotations

from typing import List, Optional, Tuple

from dispatchlint.linking import GATED, NOT_MODEL, ChainSite, LinkedTable, Project, Site, table_of
from dispatchlint.locations import Span
from dispatchlint.server._documents import contains


def hover(project: Project, path: str, line: int, column: int) -> Optional[Tuple[str, Span]]:
    """The hover text (Markdown) at 1-based ``line`` and ``column`` of the root-relative ``path``, and the span it
    is about; None where there is neither a dispatch site nor a table."""
    for site in project.sites:
        if site.tool_like and site.module.path == path and contains(site.span, line, column):
            return _site(project, site), site.span
    for table in project.catalog.tables.values():
        places = [(table.module.path, table.definition.span)] + [(e.module.path, e.span) for e in table.entries]
        for where, span in places:
            if where == path and contains(span, line, column):
                return _table(project, table), span
    return None


def verdict(site: Site) -> str:
    """What the site hands its tool, in one word."""
    if site.unguarded:
        return "raw"
    if site.verdict == GATED:
        return "gated"
    return "not the model's" if site.verdict == NOT_MODEL else "unknown"


def _site(project: Project, site: Site) -> str:
    where = f"`{site.function}`" if site.function else f"the module level of `{site.module.path}`"
    said = verdict(site)
    if isinstance(site, ChainSite):
        names = ", ".join(f"`{name}`" for name in site.arm.names)
        lines = [
            f"**Name-chain arm in {where}** ({names}): runs its tools with **{said}** arguments; the other tools go to "
            f"`{site.fallback}`."
        ]
    else:
        table = table_of(site)
        tool = f"a tool from `{table.display_name}`" if table is not None else f"the tool `{site.key}`"
        lines = [f"**Dispatch in {where}**: runs {tool} with **{said}** arguments."]
        if table is not None:
            lines += ["", *_readers(project, table)]
    return "\n".join(lines)


def _table(project: Project, table: LinkedTable) -> str:
    keys = sorted(table.keys)
    tools = f", {len(keys)} tool{'s' if len(keys) != 1 else ''}: " + ", ".join(f"`{k}`" for k in keys) if keys else ""
    lines = [f"**Tool table `{table.display_name}`** (`{table.module.module}`){tools}"]
    if table.wrapped:
        lines += ["", "Wrapped where it is defined: every reader gets the arguments the gate repaired."]
    return "\n".join(lines + ["", *_readers(project, table)])


def _readers(project: Project, table: LinkedTable) -> List[str]:
    """The dispatch sites that read ``table``, with what each hands its tools."""
    readers = [site for site in project.sites if site.tool_like and table_of(site) is table]
    if not readers:
        return [f"No dispatch path reads `{table.display_name}`."]
    count = len(readers)
    lines = [f"Read on {count} path{'s' if count != 1 else ''}:"]
    for site in sorted(readers, key=lambda s: (s.module.path, s.span.line, s.span.column)):
        where = f"`{site.function}`" if site.function else "module level"
        lines.append(f"- **{verdict(site)}** in {where}, `{site.module.path}:{site.span.line}`")
    return lines
