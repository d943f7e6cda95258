"""Syntactic patterns the indexer recognises, as pure functions over libcst nodes.

Name-test chains (``if name == "todo": ... elif name in {...}``), linear scans (``next(t for t in tools if
t.name == name)``), table-shaped dict literals, registering-decorator keys, parameters and assignment targets.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from dispatchlint.indexing import syntax as syn


def reads_properties(node: cst.CSTNode) -> bool:
    """``x["properties"]`` or ``x.get("properties")``."""
    if isinstance(node, cst.Subscript):
        return syn.subscript_key(node) == "properties"
    pair = syn.get_call(node) if isinstance(node, cst.Call) else None
    return pair is not None and syn.string_value(pair[1]) == "properties"


def reads_annotations(node: cst.CSTNode) -> bool:
    """``param.annotation`` or ``get_type_hints(func)``: the declared types of a callable's parameters, which a
    gate that repairs against the tool function's own annotations reads where others read a schema (only
    asking a signature which parameters exist is not that)."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "annotation"
    if not isinstance(node, cst.Call) or not node.args:
        return False
    callee = syn.dotted_name(node.func)
    return callee is not None and callee.split(".")[-1] == "get_type_hints"


#: A tool's model of its arguments, as frameworks and projects name it (LangChain's ``args_schema``, an
#: ``input_model``, a ``parameters_model``): calling it with the arguments validates them.
_ARGUMENT_MODEL = re.compile(r"(?:^|_)(?:args|arguments|input|inputs|params|parameters)_?(?:schema|model)$", re.I)


def constructs_argument_model(node: cst.CSTNode) -> bool:
    """``tool.args_schema(**args)`` (or with the arguments as the one positional value): the arguments validated
    by building the tool's model of them, a pydantic model that raises on what does not fit and converts what
    does."""
    if not isinstance(node, cst.Call) or not node.args:
        return False
    callee = syn.dotted_name(node.func)
    if callee is None or not _ARGUMENT_MODEL.search(callee.split(".")[-1]):
        return False
    spread = [arg for arg in node.args if arg.star == "**"]
    return bool(spread) or (len(node.args) == 1 and not node.args[0].star and node.args[0].keyword is None)


#: JSON Schema's type names that a coercer converts to (``string`` and ``object`` name too much else).
_SCHEMA_TYPES = frozenset({"integer", "number", "boolean", "array"})


def compares_schema_types(node: cst.CSTNode) -> bool:
    """``kind == "integer"`` or ``kind in {"number", "float"}``: a value compared with JSON Schema's type names,
    as a coercer does before converting by the declared type."""
    if not isinstance(node, cst.Comparison):
        return False
    compared = [node.left] + [target.comparator for target in node.comparisons]
    for side in compared:
        many = isinstance(side, (cst.Set, cst.Tuple, cst.List))
        elements = [item.value for item in side.elements] if many else [side]  # type: ignore[attr-defined]
        if any(syn.string_value(element) in _SCHEMA_TYPES for element in elements):
            return True
    return False


def reads_model_text(node: cst.CSTNode) -> bool:
    """The text of a model's reply: ``response.choices[0].message.content`` (``["message"]["content"]``),
    ``response.content[0].text``, ``response.output_text``."""
    if isinstance(node, cst.Attribute):
        attribute, inner = node.attr.value, node.value
        if attribute == "content":
            return isinstance(inner, cst.Attribute) and inner.attr.value == "message"
        if attribute == "text":
            return (
                isinstance(inner, cst.Subscript)
                and isinstance(inner.value, cst.Attribute)
                and inner.value.attr.value == "content"
            )
        return attribute == "output_text" and syn.dotted_name(inner) not in ("self", "cls")
    if isinstance(node, cst.Subscript) and syn.subscript_key(node) == "content":
        return isinstance(node.value, cst.Subscript) and syn.subscript_key(node.value) == "message"
    return False


#: ``re`` functions that match a pattern against their second argument (a compiled pattern's methods take the
#: text first).
REGEX_MATCHES = frozenset({"match", "search", "fullmatch"})
#: Methods that take a piece out of a string or a match without changing where it comes from.
TEXT_PIECES = frozenset(
    {
        "group",
        "groups",
        "groupdict",
        "split",
        "rsplit",
        "splitlines",
        "partition",
        "rpartition",
        "strip",
        "lstrip",
        "rstrip",
        "removeprefix",
        "removesuffix",
    }
)


_CONVERSIONS = frozenset({"int", "float", "bool", "str", "list", "dict", "loads", "literal_eval"})


def rewrites_values(node: cst.CSTNode) -> bool:
    """An item assignment, a dict comprehension or a value conversion: what repairing arguments looks like."""
    if isinstance(node, cst.Assign):
        return any(isinstance(target.target, cst.Subscript) for target in node.targets)
    if isinstance(node, cst.DictComp):
        return True
    if isinstance(node, cst.Call):
        callee = syn.dotted_name(node.func)
        return callee is not None and callee.split(".")[-1] in _CONVERSIONS
    return False


def renames_keys(node: cst.CSTNode) -> bool:
    """A mapping rebuilt under translated keys, its values kept: ``{names.get(k, k): v for k, v in ...}`` or
    ``out[names[k]] = v``. Restoring sanitized property names looks like this; repairing values does not."""
    if isinstance(node, cst.DictComp):
        targets = set(target_names(node.for_in.target))
        key, value = node.key, node.value
        return (
            not isinstance(key, cst.Name)
            and isinstance(value, cst.Name)
            and value.value in targets
            and any(isinstance(inner, cst.Name) and inner.value in targets for inner in syn.walk(key))
        )
    if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name):
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                index = syn.subscript_index(target.target)
                if isinstance(index, (cst.Subscript, cst.Call)):
                    return True
    return False


#: The last word of a name that holds what a tool or a service returned, not what the model asked for.
_RESULT_WORDS = re.compile(
    r"(^|_)(result|results|output|outputs|response|resp|observation|reply|stdout|content|body|text|payload|"
    r"envelope|raw_result|tool_result|return_value)$"
)


def names_a_result(node: cst.BaseExpression) -> bool:
    """Whether an expression names a result (``result``, ``tool_output``, ``resp.text``): parsing it is reading
    a tool's output or a service's response, never the model's tool-call arguments."""
    dotted = syn.dotted_name(node)
    if dotted is None:
        return False
    return bool(_RESULT_WORDS.search(dotted.split(".")[-1].lower()))


def all_calls(node: Union[cst.CSTNode, Sequence[cst.CSTNode]]) -> Iterable[cst.Call]:
    """Calls under ``node`` in source order, not entering nested function or class definitions."""
    roots: Sequence[cst.CSTNode] = [node] if isinstance(node, cst.CSTNode) else node
    for root in roots:
        yield from syn.iter_calls(root)


def param_names(params: cst.Parameters) -> Tuple[str, ...]:
    return tuple(param.name.value for param in all_params(params))


def all_params(params: cst.Parameters) -> List[cst.Param]:
    found = list(params.posonly_params) + list(params.params)
    if isinstance(params.star_arg, cst.Param):
        found.append(params.star_arg)
    found.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        found.append(params.star_kwarg)
    return found


def decorator_key(decorator: cst.BaseExpression) -> Optional[str]:
    """The tool name a registering decorator is given: ``@tool("name")`` or ``@tool(name="name")``."""
    if not isinstance(decorator, cst.Call):
        return None
    for arg in decorator.args:
        if arg.keyword is None or arg.keyword.value == "name":
            value = syn.string_value(arg.value)
            if value is not None:
                return value
    return None


def looks_like_function_list(node: Union[cst.List, cst.Tuple]) -> bool:
    """``[search, fetch, plan]``: a list of callables written as names, which a scan can look up by name."""
    elements = list(node.elements)
    return bool(elements) and all(
        isinstance(el, cst.Element)
        and isinstance(el.value, (cst.Name, cst.Attribute))
        and not is_literal_name(el.value)
        for el in elements
    )


def ends_abruptly(block: Sequence[cst.CSTNode]) -> bool:
    """The block's last statement raises or returns: what follows the block is not reached from its end."""
    if not block:
        return False
    last = block[-1]
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Raise, cst.Return))


def describes(value: cst.BaseExpression) -> Optional[str]:
    """The name a value describes: ``get_tool_info(tool)``, ``tool.info``, ``await describe(tool)`` -> ``tool``."""
    if isinstance(value, cst.Await):
        value = value.expression
    if isinstance(value, cst.Call) and len(value.args) == 1 and not value.args[0].star:
        value = value.args[0].value
    elif isinstance(value, cst.Attribute):
        value = value.value
    return value.value if isinstance(value, cst.Name) else None


def name_comparison(test: cst.BaseExpression) -> Optional[Tuple[str, cst.BaseExpression]]:
    """``(variable, key)`` for ``variable.name == key`` or ``variable.__name__ == key`` (either side), the name
    also read by a call (``await tool.name() == key``) or from what describes the variable
    (``get_tool_info(tool).name == key``), alone or in a conjunction (``is_function_tool(t) and t.name == key``)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return name_comparison(test.left) or name_comparison(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    if not isinstance(comparison.operator, cst.Equal):
        return None
    for side, other in ((test.left, comparison.comparator), (comparison.comparator, test.left)):
        if isinstance(side, cst.Await):
            side = side.expression
        if isinstance(side, cst.Call) and not side.args:
            side = side.func
        if (
            isinstance(side, cst.Attribute)
            and side.attr.value in ("name", "__name__")
            and syn.string_value(other) is None
        ):
            described = side.value.value if isinstance(side.value, cst.Name) else None
            if described is None and isinstance(side.value, cst.Call):
                described = describes(side.value)
            if described is not None:
                return described, other
    return None


def iterated(iterable: cst.BaseExpression) -> Optional[str]:
    """What a loop scans, as written: ``self.tools``, or a call's result (``await self._tools_for_execution()``
    as ``self._tools_for_execution()``)."""
    if isinstance(iterable, cst.Await):
        iterable = iterable.expression
    if isinstance(iterable, cst.Call) and not iterable.args:
        callee = syn.dotted_name(iterable.func)
        return f"{callee}()" if callee is not None else None
    return syn.dotted_name(iterable)


def linear_scan(expression: cst.BaseExpression) -> Optional[Tuple[str, cst.BaseExpression]]:
    """``(iterable, key)`` for ``next(t for t in tools if t.name == key)`` (with or without a default), the tools
    also a call's result (``mcp._tool_manager.list_tools()``)."""
    if not (isinstance(expression, cst.Call) and syn.dotted_name(expression.func) == "next" and expression.args):
        return None
    generator = expression.args[0].value
    if not isinstance(generator, cst.GeneratorExp) or not isinstance(generator.elt, cst.Name):
        return None
    clause = generator.for_in
    iterable = iterated(clause.iter)
    if clause.inner_for_in is not None or iterable is None or len(clause.ifs) != 1:
        return None
    if not isinstance(clause.target, cst.Name) or clause.target.value != generator.elt.value:
        return None
    compared = name_comparison(clause.ifs[0].test)
    if compared is None or compared[0] != generator.elt.value:
        return None
    return iterable, compared[1]


def simple_assignments(statement: cst.CSTNode) -> List[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``(target, value)`` pairs of a statement's plain assignments, tuples unpacked pairwise."""
    pairs: List[Tuple[cst.BaseExpression, cst.BaseExpression]] = []
    if not isinstance(statement, cst.SimpleStatementLine):
        return pairs
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                pairs.extend(paired(target.target, small.value))
    return pairs


def paired(
    target: cst.BaseExpression, value: cst.BaseExpression
) -> List[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements) and not any(
            isinstance(el, cst.StarredElement) for el in list(target.elements) + list(value.elements)
        ):
            return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        return []
    return [(target, value)]


def target_names(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: List[str] = []
        for element in target.elements:
            names.extend(target_names(element.value))
        return names
    return []


def looks_like_table(node: cst.Dict) -> bool:
    """A dict literal whose values are callables (names, attributes, lambdas, calls) under string keys."""
    elements = [el for el in node.elements if isinstance(el, cst.DictElement)]
    if len(elements) != len(node.elements) or not elements:
        return not node.elements
    if not all(syn.string_value(el.key) is not None for el in elements):
        return False
    callable_like = (cst.Name, cst.Attribute, cst.Lambda, cst.Call)
    return all(isinstance(el.value, callable_like) and not is_literal_name(el.value) for el in elements)


def is_literal_name(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("True", "False", "None")


def name_test(test: cst.BaseExpression) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """``(variable, names)`` for ``var == "x"``, ``"x" == var``, ``var in ("x", "y")`` (``or`` of those too)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        left, right = name_test(test.left), name_test(test.right)
        if left is not None and right is not None and left[0] == right[0]:
            return left[0], left[1] + right[1]
        return None
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    subject, other = test.left, comparison.comparator
    if isinstance(comparison.operator, cst.Equal):
        for variable, literal in ((subject, other), (other, subject)):
            name, value = syn.dotted_name(variable), syn.string_value(literal)
            if name is not None and value is not None:
                return name, (value,)
        return None
    if isinstance(comparison.operator, cst.In) and isinstance(other, (cst.Tuple, cst.List, cst.Set)):
        name = syn.dotted_name(subject)
        values = tuple(syn.string_value(el.value) for el in other.elements)
        if name is not None and values and all(isinstance(value, str) for value in values):
            return name, tuple(value for value in values if value is not None)
    return None


def match_names(pattern: cst.MatchPattern) -> Tuple[str, ...]:
    """The string literals a ``case`` pattern matches (``case "todo":``, ``case "memory" | "mem":``)."""
    if isinstance(pattern, cst.MatchValue):
        value = syn.string_value(pattern.value)
        return (value,) if value is not None else ()
    if isinstance(pattern, cst.MatchOr):
        names = [match_names(element.pattern) for element in pattern.patterns]
        return tuple(name for found in names for name in found) if all(names) else ()
    return ()


def mapping_source(iterable: cst.BaseExpression) -> Optional[str]:
    """``RAW`` for ``RAW.items()``, ``RAW.values()`` or ``RAW`` iterated by a comprehension."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
        if iterable.func.attr.value in ("items", "values"):
            return syn.dotted_name(iterable.func.value)
        return None
    return syn.dotted_name(iterable)


def leaves(body: cst.BaseSuite) -> bool:
    """Whether a block always ends by leaving (``return``, ``raise``, ``continue``, ``break``)."""
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    return bool(statements) and _statement_leaves(statements[-1])


def _statement_leaves(statement: cst.CSTNode) -> bool:
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return bool(statement.body) and isinstance(statement.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            return leaves(statement.body) and _statement_leaves(orelse)
        return leaves(statement.body) and isinstance(orelse, cst.Else) and leaves(orelse.body)
    return False


def keyed_by_object(key: cst.BaseExpression, element: str) -> bool:
    """A comprehension key read from the element itself (``t.name``, ``t.get_function_name()``, ``t["name"]``)
    but not ``f.__name__``: the values are tool objects that carry their names, not plain functions."""
    if isinstance(key, cst.Attribute) and key.attr.value == "__name__":
        return False
    return any(isinstance(node, cst.Name) and node.value == element for node in syn.walk(key))
