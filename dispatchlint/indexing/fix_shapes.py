"""The shape of the code where a fix would edit it, read while the file's tree is at hand.

Deciding whether a finding can be fixed needs more than the facts say: whether a table's definition stands alone
on its line, how an executor takes its parameters, which statement a hand-rolled parse can lose. The indexer
records those shapes (:class:`~dispatchlint.indexing.facts.Shapes`) with the facts, so that a check decides
fixability without parsing anything again; only ``--fix`` and ``--diff`` parse the files they rewrite, and find
the nodes by the same positions (:class:`Nodes`).
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Type, TypeVar, Union, cast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from dispatchlint.indexing import syntax as syn
from dispatchlint.indexing.facts import (
    ArgShape,
    BodyStep,
    Definition,
    Ladder,
    ModuleFacts,
    ParseEdit,
    Signature,
    Span,
    StoredValue,
    TableShape,
)

Node = TypeVar("Node", bound=cst.CSTNode)
#: A statement in a block (what ``Module.body`` and ``IndentedBlock.body`` hold).
Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]

_TABLE_VALUES = (cst.Dict, cst.DictComp, cst.Call)
#: Runners that take the callable first (``pool.submit(fn, ...)``) or second (``loop.run_in_executor(None, fn)``).
RUNNERS_FIRST = ("submit", "to_thread", "partial", "run_sync", "start_soon", "apply_async", "spawn")
RUNNERS_SECOND = ("run_in_executor",)


def positions(tree: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """Where each node of ``tree`` starts and ends, from one code-generation pass over it.

    ``MetadataWrapper.resolve(PositionProvider)`` makes that pass and then walks the whole tree once more with
    an empty batch of visitors (libcst runs the batchable providers after the others, even when there are none),
    a third of its time; the provider's own pass is what it returns.
    """
    computed = PositionProvider()._gen(MetadataWrapper(tree, unsafe_skip_copy=True))
    return cast(Mapping[cst.CSTNode, CodeRange], computed)  # the provider computes every position eagerly


class Nodes:
    """A tree's nodes by the position they start at, and each node's parent."""

    def __init__(self, tree: cst.Module, positions: Mapping[cst.CSTNode, CodeRange]) -> None:
        self.tree = tree
        self.positions = positions
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self._starts: Dict[Tuple[int, int], List[cst.CSTNode]] = {}
        stack: List[cst.CSTNode] = [tree]
        while stack:
            node = stack.pop()
            for child in syn.children(node):
                self.parents[child] = node
                start = positions[child].start
                self._starts.setdefault((start.line, start.column + 1), []).append(child)
                stack.append(child)

    def node_at(self, span: Span, kind: Type[Node]) -> Optional[Node]:
        """The outermost node of type ``kind`` that starts where ``span`` starts."""
        found = [node for node in self._starts.get((span.line, span.column), []) if isinstance(node, kind)]
        return max(found, key=self._extent) if found else None

    def expression_at(self, span: Span) -> Optional[cst.BaseExpression]:
        """The outermost expression that starts where ``span`` starts (a key, a test, a call)."""
        return self.node_at(span, cst.BaseExpression)  # type: ignore[type-abstract]

    def _extent(self, node: cst.CSTNode) -> Tuple[int, int]:
        end = self.positions[node].end
        return (end.line, end.column)

    def parent(self, node: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
        return self.parents.get(node) if node is not None else None

    def top_level_statement(self, node: cst.CSTNode) -> Statement:
        """The module-level statement that holds ``node`` (a table, a function, a class)."""
        current = node
        while True:
            parent = self.parents.get(current)
            if parent is None or isinstance(parent, cst.Module):
                assert isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
                return current
            current = parent

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def ladder_statement(self, chain: Span) -> Optional[cst.If]:
        """The ``if`` statement that starts the ladder the chain at ``chain`` is part of: a chain that resumes
        after an arm of another kind (``elif self.manager.has_tool(name): ... elif name == "clarify":``) starts in
        an ``elif``, and one coercion ahead of the whole statement serves every chain in it."""
        test = self.expression_at(chain)
        statement = self.parent(test) if test is not None else None
        if not isinstance(statement, cst.If):
            return None
        parent = self.parent(statement)
        while isinstance(parent, cst.If) and parent.orelse is statement:
            statement, parent = parent, self.parent(parent)
        return statement

    def parsing_node(self, span: Span) -> Optional[cst.CSTNode]:
        """What deleting the hand-rolled parse at ``span`` removes: its ``if isinstance(x, str)`` guard, its line
        (or its statement, on a line of several), or the call itself (replaced by its argument, whitespace
        stripping and all); None when the parsing does more than that."""
        call = self.node_at(span, cst.Call)
        if call is None or len([arg for arg in call.args if arg.keyword is None]) != 1 or call.args[0].star:
            return None
        argument = syn.whitespace_stripped(call.args[0].value)
        assign = self.parent(call)
        if isinstance(assign, cst.Assign) and _assigns_to_itself(assign, argument):
            line = self.parent(assign)
            if not isinstance(line, cst.SimpleStatementLine):
                return None
            if len(line.body) > 1:
                return assign
            guard = self.parent(self.parent(line))  # If <- IndentedBlock <- line
            if isinstance(guard, cst.If) and _only_parses(guard, line, argument):
                return guard
            return line
        return call if _is_parameter_read(argument) else None

    def string_guarded(self, span: Span) -> bool:
        """Whether the string use at ``span`` (a :class:`~dispatchlint.indexing.facts.StringUse`) runs only when
        what it uses is a string: under ``isinstance(x, str)`` (an ``if``, a conditional expression, an ``and``),
        in the ``else`` of ``not isinstance(x, str)``, or after ``if not isinstance(x, str): return ...``."""
        use = self._exactly_at(span)
        used = _string_used(use) if use is not None else None
        if use is None or used is None:
            return False
        text = _code(used)
        child: cst.CSTNode = use
        parent = self.parent(child)
        while parent is not None:
            if _guards(parent, child, text):
                return True
            if isinstance(parent, cst.IndentedBlock) and isinstance(child, cst.BaseStatement):
                before = parent.body[: next(i for i, statement in enumerate(parent.body) if statement is child)]
                if any(_exits_unless_string(statement, text) for statement in before):
                    return True
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            child, parent = parent, self.parent(parent)
        return False

    def _exactly_at(self, span: Span) -> Optional[cst.CSTNode]:
        for node in self._starts.get((span.line, span.column), []):
            end = self.positions[node].end
            if (end.line, end.column + 1) == (span.end_line, span.end_column):
                return node
        return None


def module_shapes(facts: ModuleFacts, nodes: Nodes) -> Dict[str, object]:
    """The shapes that need the tree's parents: dispatch calls, name-test ladders, their fallbacks, parses."""
    dispatch_args = []
    for dispatch in facts.dispatches:
        call = nodes.node_at(dispatch.span, cst.Call)
        if call is not None:
            offset = 1 if dispatch.via in RUNNERS_FIRST else 2 if dispatch.via in RUNNERS_SECOND else 0
            dispatch_args.append((dispatch.span, arg_shapes(call.args[offset:])))
    ladders = []
    fallbacks = []
    for chain in facts.chains:
        statement = nodes.ladder_statement(chain.span)
        if statement is not None:
            ladders.append(
                (chain.span, Ladder(_span(nodes, statement), tuple(sorted(_mappings_read_by_arms(statement)))))
            )
        for _, span in chain.fallbacks:
            call = nodes.node_at(span, cst.Call)
            if call is not None:
                fallbacks.append((span, arg_shapes(call.args)))
    parses = []
    for parse in facts.json_parses:
        node = nodes.parsing_node(parse.span)
        edit = ParseEdit.NONE
        if isinstance(node, cst.If):
            edit = ParseEdit.DELETE_GUARD
        elif isinstance(node, cst.SimpleStatementLine):
            edit = ParseEdit.DELETE_LINE
        elif isinstance(node, cst.Assign):
            edit = ParseEdit.DELETE_STATEMENT
        elif isinstance(node, cst.Call):
            edit = ParseEdit.UNWRAP
        parses.append((parse.span, edit))
    return {
        "dispatch_args": tuple(dispatch_args),
        "ladders": tuple(ladders),
        "fallback_args": tuple(fallbacks),
        "parses": tuple(parses),
    }


def _span(nodes: Nodes, node: cst.CSTNode) -> Span:
    code_range = nodes.positions[node]
    return Span(code_range.start.line, code_range.start.column + 1, code_range.end.line, code_range.end.column + 1)


def arg_shapes(args: Sequence[cst.Arg]) -> Tuple[ArgShape, ...]:
    return tuple(
        ArgShape(arg.star, arg.keyword is not None, arg.value.value if isinstance(arg.value, cst.Name) else "")
        for arg in args
    )


# ---------------------------------------------------------------------------------------------- signatures


def signature_of(node: Union[cst.FunctionDef, cst.Lambda]) -> Signature:
    params = node.params
    positional = tuple(param.name.value for param in list(params.posonly_params) + list(params.params))
    has_defaults = any(param.default is not None for param in list(params.posonly_params) + list(params.params))
    plain = not (
        has_defaults or params.kwonly_params or params.star_kwarg is not None or isinstance(params.star_arg, cst.Param)
    )
    is_async = isinstance(node, cst.FunctionDef) and node.asynchronous is not None
    return Signature(positional, plain, is_async)


def stored_value(value: cst.BaseExpression) -> StoredValue:
    return StoredValue(signature_of(value) if isinstance(value, cst.Lambda) else None, syn.dotted_name(value) or "")


# ---------------------------------------------------------------------------------------------- tables


def table_shape(
    small: cst.CSTNode, line: Optional[cst.SimpleStatementLine], at_module_top: bool, scope: str
) -> TableShape:
    """How the assignment ``small`` (on ``line``; None when it is not a statement line of its own) is written."""
    if not isinstance(small, (cst.Assign, cst.AnnAssign)) or line is None:
        return TableShape(Definition.NOT_ASSIGNMENT, False)
    if len(line.body) != 1 or (isinstance(small, cst.Assign) and len(small.targets) != 1):
        return TableShape(Definition.SHARED_LINE, False)
    if scope == "module" and not at_module_top:
        return TableShape(Definition.IN_BLOCK, False)
    value = small.value
    if value is None or not isinstance(value, _TABLE_VALUES):
        return TableShape(Definition.NOT_LITERAL, False)
    if isinstance(value, cst.Dict):
        holds = bool(value.elements)
    elif isinstance(value, cst.Call):
        holds = bool(value.args)
    else:
        holds = True
    return TableShape(Definition.PLAIN, holds)


# ---------------------------------------------------------------------------------------------- top-level names


def top_level_names(tree: cst.Module) -> Set[str]:
    """Names a module binds at its top level (and in top-level ``if``/``try`` blocks)."""
    names: Set[str] = set()
    for statement in _flat_statements(tree.body):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                names.update(_bound_by(small))
    return names


def _flat_statements(body: Sequence[cst.BaseStatement]) -> List[cst.BaseStatement]:
    found: List[cst.BaseStatement] = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, (cst.If, cst.Try)):
            blocks = [statement.body, *(handler.body for handler in getattr(statement, "handlers", ()))]
            if isinstance(statement.orelse, cst.Else):
                blocks.append(statement.orelse.body)
            for block in blocks:
                if isinstance(block, cst.IndentedBlock):
                    found.extend(_flat_statements(block.body))
    return found


def _bound_by(small: cst.BaseSmallStatement) -> List[str]:
    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
        bound = []
        for alias in small.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound.append(alias.asname.name.value)
            else:
                bound.append(cst.Module([]).code_for_node(alias.name).split(".")[0])
        return bound
    if isinstance(small, cst.Assign):
        return [target.target.value for target in small.targets if isinstance(target.target, cst.Name)]
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
        return [small.target.value]
    return []


# ---------------------------------------------------------------------------------------------- chains


def _mappings_read_by_arms(chain: cst.If) -> Set[str]:
    """Names the chain's arms read arguments from: ``args["x"]``, ``args.get("x")``, ``**args``."""
    read: Set[str] = set()
    current: Optional[cst.If] = chain
    while current is not None:
        for node in syn.walk(current.body):
            if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                read.add(node.value.value)
            elif isinstance(node, cst.Arg) and node.star == "**" and isinstance(node.value, cst.Name):
                read.add(node.value.value)
            elif isinstance(node, cst.Call):
                pair = syn.get_call(node)
                if pair is not None and isinstance(pair[0], cst.Name):
                    read.add(pair[0].value)
        current = current.orelse if isinstance(current.orelse, cst.If) else None
    return read


# ---------------------------------------------------------------------------------------------- parses


def _string_used(use: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """What a string use uses: the receiver of a string method, the sliced value, or what a parse parses."""
    if isinstance(use, cst.Subscript):
        return use.value
    if not isinstance(use, cst.Call):
        return None
    if isinstance(use.func, cst.Attribute) and use.func.attr.value in syn.STRING_METHODS:
        return use.func.value
    return syn.whitespace_stripped(use.args[0].value) if use.args else None


def _string_test(test: cst.BaseExpression, text: str) -> int:
    """1: ``test`` holds only when the expression ``text`` is a string (``isinstance(x, str)``, ``type(x) is
    str``); -1: only when it is not (``not isinstance(x, str)``); 0: neither."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return -_string_test(test.expression, text)
    checked: Optional[cst.BaseExpression] = None
    kinds: Optional[cst.BaseExpression] = None
    if isinstance(test, cst.Call) and syn.dotted_name(test.func) == "isinstance" and len(test.args) == 2:
        checked, kinds = test.args[0].value, test.args[1].value
    elif (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.Equal))
        and isinstance(test.left, cst.Call)
        and syn.dotted_name(test.left.func) == "type"
        and len(test.left.args) == 1
    ):
        checked, kinds = test.left.args[0].value, test.comparisons[0].comparator
    if checked is None or kinds is None:
        return 0
    names = (
        [syn.dotted_name(element.value) for element in kinds.elements]
        if isinstance(kinds, cst.Tuple)
        else [syn.dotted_name(kinds)]
    )
    is_string = "str" in names and set(names) <= {"str", "bytes"}
    return int(is_string and _code(checked) == text)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _guards(parent: cst.CSTNode, child: cst.CSTNode, text: str) -> bool:
    """``child`` runs only where ``text`` is a string, by the test of ``parent``."""
    if isinstance(parent, (cst.If, cst.IfExp)):
        sign = _string_test(parent.test, text)
        return (sign == 1 and child is parent.body) or (sign == -1 and child is parent.orelse)
    if isinstance(parent, cst.BooleanOperation) and child is parent.right:
        sign = _string_test(parent.left, text)
        return (sign == 1 and isinstance(parent.operator, cst.And)) or (
            sign == -1 and isinstance(parent.operator, cst.Or)
        )
    return False


def _exits_unless_string(statement: cst.CSTNode, text: str) -> bool:
    """``if not isinstance(x, str): return x`` (or raise, continue, break): what follows sees only strings."""
    if not isinstance(statement, cst.If) or statement.orelse is not None or _string_test(statement.test, text) != -1:
        return False
    body = statement.body.body
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _assigns_to_itself(assign: cst.Assign, argument: cst.BaseExpression) -> bool:
    return (
        len(assign.targets) == 1
        and isinstance(argument, cst.Name)
        and isinstance(assign.targets[0].target, cst.Name)
        and assign.targets[0].target.value == argument.value
    )


def _only_parses(guard: cst.If, line: Optional[cst.CSTNode], argument: cst.BaseExpression) -> bool:
    """``if isinstance(x, str):`` whose body is the one parsing line, with no ``elif``/``else``."""
    test = guard.test
    return (
        guard.orelse is None
        and isinstance(guard.body, cst.IndentedBlock)
        and list(guard.body.body) == [line]
        and isinstance(test, cst.Call)
        and syn.dotted_name(test.func) == "isinstance"
        and len(test.args) == 2
        and isinstance(argument, cst.Name)
        and isinstance(test.args[0].value, cst.Name)
        and test.args[0].value.value == argument.value
        and syn.dotted_name(test.args[1].value) == "str"
    )


def _is_parameter_read(argument: cst.BaseExpression) -> bool:
    """A name, ``args["p"]`` or ``args.get("p")``: reading it gives the repaired value as it is."""
    if isinstance(argument, cst.Name):
        return True
    if isinstance(argument, cst.Subscript):
        return syn.subscript_key(argument) is not None and isinstance(argument.value, cst.Name)
    pair = syn.get_call(argument)
    return pair is not None and isinstance(argument, cst.Call) and len(argument.args) == 1


# ---------------------------------------------------------------------------------------------- gate bodies


def body_steps(body: Iterable[cst.BaseStatement], arguments: str) -> Tuple[BodyStep, ...]:
    """Each statement of a function's body: what it assigns, whether it reads ``arguments``, and the call it
    returns or assigns, alone on its line (where a gate restores sanitized names)."""
    steps = []
    for statement in body:
        callee = ""
        passed: Tuple[str, ...] = ()
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            small = statement.body[0]
            single = not isinstance(small, cst.Assign) or (
                len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            )
            value = small.value if isinstance(small, (cst.Return, cst.Assign)) and single else None
            if isinstance(value, cst.Call):
                callee = syn.dotted_name(value.func) or ""
                passed = tuple(arg.value.value for arg in value.args if isinstance(arg.value, cst.Name))
        steps.append(
            BodyStep(tuple(sorted(assigned_names(statement))), arguments in names_in(statement), callee, passed)
        )
    return tuple(steps)


def assigned_names(statement: cst.BaseStatement) -> Set[str]:
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


def names_in(node: cst.CSTNode) -> Set[str]:
    return {found.value for found in syn.walk(node) if isinstance(found, cst.Name)}
