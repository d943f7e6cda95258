"""DL301 fix (unsafe): restore sanitized names first, then repair by key.

The gate ends with ``return unrename_args(parameters, repaired)``; the fix restores the names of the incoming
arguments as soon as the names it needs are known (``args = unrename_args(parameters, args)`` right after
``parameters = ...``) and returns the repaired value as it is. Unsafe: code between the two steps may have relied
on the sanitized names (a log line, a key test).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from dispatchlint.analysis import _syntax as syn
from dispatchlint.analysis.facts import FunctionDef, ModuleFacts
from dispatchlint.analysis.link import Project
from dispatchlint.fix._plan import ProjectPlan
from dispatchlint.fix._source import Sources


@dataclass(frozen=True)
class ReorderFix:
    module: ModuleFacts
    function: FunctionDef
    #: The statement the restoring call goes before, and the statement that restored names last.
    before: cst.BaseStatement
    restore: cst.SimpleStatementLine
    #: ``args = unrename_args(parameters, args)`` as the gate will write it.
    restoring: cst.Call
    args: str
    repaired: str

    def apply(self, plan: ProjectPlan) -> None:
        file = plan.file(self.module)
        restoring = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(self.args))], self.restoring.deep_clone())]
        )
        file.replace(self.before, lambda updated: cst.FlattenSentinel([restoring, updated]))
        file.replace(self.restore, self._without_restoring)
        file.note(f"restore names before repairing them in `{self.function.name}`")

    def _without_restoring(self, updated: cst.CSTNode) -> Union[cst.CSTNode, cst.RemovalSentinel]:
        assert isinstance(updated, cst.SimpleStatementLine)
        small = updated.body[0]
        if isinstance(small, cst.Return):
            return updated.with_changes(body=[small.with_changes(value=cst.Name(self.repaired))])
        assert isinstance(small, cst.Assign)
        target = small.targets[0].target
        if isinstance(target, cst.Name) and target.value == self.repaired:
            return cst.RemovalSentinel.REMOVE
        return updated.with_changes(body=[small.with_changes(value=cst.Name(self.repaired))])


def reorder_fix(
    project: Project, sources: Sources, module: ModuleFacts, function: FunctionDef
) -> Union[ReorderFix, str]:
    source = sources.get(module.path)
    name = source.node_at(function.span, cst.Name)
    node = source.parent(name) if name is not None else None
    args = next((param for param in function.params if param in syn.ARGS_NAMES), None)
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock) or args is None:
        return "the gate's arguments parameter cannot be found"
    body = list(node.body.body)
    found = _restoring_statement(project, module, function, body)
    if found is None:
        return "the gate does not restore names in one plain statement of its body"
    index, call = found
    names = [arg.value.value for arg in call.args if isinstance(arg.value, cst.Name)]
    repaired = [name for name in names if _derived(body[:index], name, args)]
    if len(repaired) != 1:
        return "the value whose names are restored cannot be told"
    needed = set(names) - {repaired[0]}
    insert_at = max([i + 1 for i in range(index) if _assigns(body[i]) & needed], default=0)
    first_read = next((i for i in range(index) if args in _names_in(body[i])), index)
    if insert_at > first_read:
        return f"`{args}` is read before the names the restoring call needs are known"
    restoring = call.with_changes(
        args=[arg.with_changes(value=cst.Name(args)) if _is_name(arg.value, repaired[0]) else arg for arg in call.args]
    )
    restore = body[index]
    assert isinstance(restore, cst.SimpleStatementLine)
    return ReorderFix(module, function, body[insert_at], restore, restoring, args, repaired[0])


def _restoring_statement(
    project: Project, module: ModuleFacts, function: FunctionDef, body: Sequence[cst.BaseStatement]
) -> Optional[Tuple[int, cst.Call]]:
    """The one statement that restores names: ``return unrename(...)`` or ``name = unrename(...)``."""
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if isinstance(small, cst.Assign) and not (
            len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
        ):
            continue
        value = small.value if isinstance(small, (cst.Return, cst.Assign)) else None
        if isinstance(value, cst.Call):
            callee = syn.dotted_name(value.func)
            if callee is not None and project.gates.is_sanitizer(module, callee, function.qualname):
                return index, value
    return None


def _derived(statements: Sequence[cst.BaseStatement], name: str, args: str) -> bool:
    """``name`` is assigned from an expression that reads the gate's arguments."""
    return any(name in _assigns(statement) and args in _names_in(statement) for statement in statements)


def _assigns(statement: cst.BaseStatement) -> Set[str]:
    if not isinstance(statement, cst.SimpleStatementLine):
        return set()
    found: Set[str] = set()
    for small in statement.body:
        targets: List[cst.BaseExpression] = []
        if isinstance(small, cst.Assign):
            targets = [target.target for target in small.targets]
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            targets = [small.target]
        found.update(target.value for target in targets if isinstance(target, cst.Name))
    return found


def _names_in(node: cst.CSTNode) -> Set[str]:
    return {found.value for found in syn.walk(node) if isinstance(found, cst.Name)}


def _is_name(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name
