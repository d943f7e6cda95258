"""DL002 unused-suppression."""

from __future__ import annotations

from typing import Iterable

from dispatchlint.indexing.facts import SuppressionScope
from dispatchlint.linking import Project
from dispatchlint.rules.rule import Case, Finding, Rule
from dispatchlint.rules._examples import REGISTRY
from dispatchlint.rules.suppression import IdleSuppression, PerFileIgnores, SuppressionIndex, covers

_GATE = """
def coerce_tool_args(tool_name, args):
    return dict(args)
"""

_LOOP = """
from agent.registry import handle_function_call

def _plan(agent, args, ctx):
    return list(args["steps"])

BUILTIN_EXECUTORS = {{"plan": _plan}}

def run_tool(agent, name, args, ctx):
    fn = BUILTIN_EXECUTORS.get(name)
    if fn:
        return fn(agent, args, ctx){comment}
    return handle_function_call(name, args)
"""


def _project(comment: str) -> "dict[str, str]":
    return {
        "agent/__init__.py": "",
        "agent/gate.py": _GATE,
        "agent/registry.py": REGISTRY,
        "agent/loop.py": _LOOP.format(comment=comment),
    }


class UnusedSuppression(Rule):
    """## What it does
    Reports a suppression comment (`# dispatchlint: ignore[...]`, `# noqa: DL...`,
    `# dispatchlint: ignore-file[...]`), or one code of it, that hides no finding, and a code in one that names
    no rule. Every rule is consulted, enabled or not, so a suppression kept for an opt-in rule is not reported.
    A bare `# noqa` is shared with other linters and is never reported.

    ## Why is this bad?
    A suppression outlives the finding it was written for: once the table is wrapped, the comment still sits
    there and silently hides the next unguarded dispatch on that line. A misspelt code (`DL1O1`) hides nothing
    at all while looking as if it did.

    ## Example
    ```python
    fn = BUILTIN_EXECUTORS.get(name)
    args = coerce_tool_args(name, args)
    return fn(agent, args, ctx)  # dispatchlint: ignore[DL101]
    ```

    ## Use instead
    ```python
    fn = BUILTIN_EXECUTORS.get(name)
    args = coerce_tool_args(name, args)
    return fn(agent, args, ctx)
    ```

    ## Fix safety
    No fix is offered: delete the comment, or the code, by hand.
    """

    code = "DL002"
    name = "unused-suppression"
    VALID = [
        Case(_project("  # dispatchlint: ignore[DL101]")),
        Case(_project("  # noqa: DL1")),
        Case(_project("  # noqa: E501")),
        Case({**_project(""), "agent/loop.py": "# dispatchlint: ignore-file[DL101]\n" + _LOOP.format(comment="")}),
    ]
    INVALID = [
        Case(_project("  # dispatchlint: ignore[DL101, DL201]"), (("agent/loop.py", 12),)),
        Case(_project("  # noqa: DL1O1"), (("agent/loop.py", 12),)),
        Case(
            {**_project(""), "agent/registry.py": REGISTRY + "# dispatchlint: ignore\n"},
            (("agent/registry.py", 12),),
        ),
    ]

    def check(self, project: Project) -> Iterable[Finding]:
        """Run every other rule, record which suppressions hide their findings, and report the rest."""
        suppressions = SuppressionIndex(project.modules, Rule.registry)
        per_file = PerFileIgnores(project.config.per_file_ignores)
        for code, rule in sorted(Rule.registry.items()):
            if code == self.code:
                continue
            for finding in rule().check(project):
                if not per_file.ignores(finding):
                    suppressions.hides(finding)
        for item in suppressions.idle():
            if item.code is not None and covers(item.code, self.code):
                continue  # a suppression of this rule is judged by nobody
            yield Finding(self.code, self.name, self._message(item), item.path, item.suppression.span)

    @staticmethod
    def _message(item: IdleSuppression) -> str:
        where = "in this file" if item.suppression.scope == SuppressionScope.FILE else "on this line"
        if item.unknown:
            return f"`{item.code}` in this suppression names no rule (see `--list-rules`): it hides nothing"
        if item.code is None:
            return f"this suppression hides nothing: no rule reports anything {where}; remove it"
        return f"`{item.code}` in this suppression hides nothing: no {item.code} finding {where}; remove it"
