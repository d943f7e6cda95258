"""Configured names that name nothing in the project: a misspelt gate silently changes every verdict, so the
run says so (a warning: the run goes on; a configured gate that is gone while tools run raw is DL003).

A gate or a sanitizer is known when the project defines it or calls a function of that name (it may come from
an installed package); a table when the project defines a table of that name; a schema source when its module
is one of the project's.
"""

from __future__ import annotations

from typing import List, Sequence, Set

from dispatchlint.linking import Project


def missing_gates(project: Project) -> List[str]:
    """The configured ``gates`` the project neither defines nor calls."""
    return _named_nowhere(project, project.config.gates)


def _named_nowhere(project: Project, names: Sequence[str]) -> List[str]:
    """The functions of ``names`` the project neither defines nor calls (by their last name: one from an
    installed package is called, not defined)."""
    if not names:
        return []
    defined: Set[str] = set()
    called: Set[str] = set()
    for module in project.modules:
        defined.update(f"{module.module}.{function.qualname}" for function in module.functions)
        called.update(call.callee.split(".")[-1] for call in module.calls)
    return [name for name in names if name not in defined and name.split(".")[-1] not in called]


def unresolved_settings(project: Project) -> List[str]:
    """One message per configured ``gates``, ``sanitizers``, ``sources``, ``tables`` or ``schemas`` name found
    nowhere."""
    config = project.config
    messages = []
    for key, names in (("gates", config.gates), ("sanitizers", config.sanitizers)):
        for name in _named_nowhere(project, names):
            messages.append(f"`{key}` entry {name!r} is neither defined nor called in the project")
    for source in config.sources:
        function, _, parameter = source.partition(":")
        located = project.graph.function(function)
        if located is None or parameter not in located[1].params:
            messages.append(f"`sources` entry {source!r} names no parameter of a function in the project")
    tables = {table.qualname for table in project.catalog.tables.values()}
    tables |= {table.definition.name for table in project.catalog.tables.values()}
    for name in config.tables:
        if name not in tables:
            messages.append(f"`tables` entry {name!r} names no table in the project")
    if config.schemas:
        module_name = config.schemas.partition(":")[0].strip()
        if not any(module.module == module_name for module in project.modules):
            messages.append(f"`schemas` names module {module_name!r}, which is not in the project")
    return messages
