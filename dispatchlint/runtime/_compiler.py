"""The schema compiler: a parameters schema (or tool definition) into the tree of nodes that repairs by it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Optional, Sequence, Set, Tuple

from ._json import ARRAY, INTEGER, JSON_TYPES, MISSING, NULL, NUMBER, OBJECT, json_kind
from ._names import provider_aliases
from ._nodes import (
    ANY,
    NEVER,
    NO_ARRAY_RULES,
    NO_OBJECT_RULES,
    AllNode,
    ArrayRules,
    EnumNode,
    Node,
    ObjectRules,
    TypedNode,
    UnionNode,
)
from ._schema import MAX_DEPTH, resolve_local_ref, tool_parameters


@dataclass(frozen=True)
class CompiledSchema:
    """A parameters schema compiled into nodes."""

    root: Node
    #: Whether some node is a union or a conjunction: a call then needs a union budget (see ``_budget``).
    has_unions: bool
    #: id(node) -> the index of the subschema it was compiled from (the innermost, for a ``$ref`` that is only a
    #: reference): two nodes with one origin are one subschema at two depths, a recursive reference.
    origins: Dict[int, int]


def compile_schema(parameters: Any, coerce: bool) -> CompiledSchema:
    """The nodes of a parameters schema or tool definition: repairing values (``coerce``) or restoring names only."""
    root = tool_parameters(parameters)
    compiler = _Compiler(root, coerce)
    node = compiler.compile(root, 0)
    has_unions = any(isinstance(compiled, (UnionNode, AllNode)) for compiled in compiler.nodes.values())
    return CompiledSchema(node, has_unions, compiler.origins)


class _Compiler:
    """One schema compiled; nodes are memoized per (subschema object, depth), so that shared and recursive
    subschemas cost once per depth and every walk ends at ``MAX_DEPTH``."""

    def __init__(self, root: Any, coerce: bool) -> None:
        self._root = root
        self._coerce = coerce
        self.nodes: Dict[Tuple[int, int], Node] = {}
        self.origins: Dict[int, int] = {}
        self._subschemas: Dict[int, int] = {}

    def compile(self, schema: Any, depth: int) -> Node:
        if schema is False:
            return NEVER
        if not isinstance(schema, dict) or depth >= MAX_DEPTH:
            return ANY
        key = (id(schema), depth)
        node = self.nodes.get(key)
        if node is None:
            node = self.nodes[key] = self._keywords(schema, depth + 1)
            origin = self._subschemas.setdefault(id(schema), len(self._subschemas))
            self.origins.setdefault(id(node), origin)
        return node

    def _keywords(self, schema: Dict[Any, Any], depth: int) -> Node:
        members = []
        if "$ref" in schema:
            target = resolve_local_ref(self._root, schema["$ref"])
            members.append(ANY if target is MISSING else self.compile(target, depth))
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches:
                members.append(_union([self.compile(branch, depth) for branch in branches]))
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            members.extend(self.compile(member, depth) for member in all_of)
        members.append(self._typed(schema, depth))
        return _conjunction(members)

    def _typed(self, schema: Dict[Any, Any], depth: int) -> Node:
        admitted = _admitted_kinds(schema)
        enum = _allowed_values(schema)
        objects = self._object_rules(schema, depth)
        arrays = self._array_rules(schema, depth)
        if enum is None:
            if admitted is None and objects is NO_OBJECT_RULES and arrays is NO_ARRAY_RULES:
                return ANY
            return TypedNode(admitted, objects, arrays, self._coerce)
        listed = _listed_kinds(enum)
        inner = TypedNode(listed if admitted is None else admitted & listed, objects, arrays, self._coerce)
        return EnumNode(enum, inner)

    def _object_rules(self, schema: Dict[Any, Any], depth: int) -> ObjectRules:
        declared = schema.get("properties")
        properties = (
            {name: self.compile(sub, depth) for name, sub in declared.items()} if isinstance(declared, dict) else {}
        )
        required = schema.get("required")
        required_names = tuple(name for name in required if isinstance(name, str)) if isinstance(required, list) else ()
        additional = None
        if "patternProperties" not in schema:  # keys matching a pattern are not "additional": leave them all
            additional = self._optional(schema.get("additionalProperties"), depth)
        aliases = {alias: name for name, alias in provider_aliases(properties).items()}
        if not (aliases or required_names or additional is not None) and all(n is ANY for n in properties.values()):
            return NO_OBJECT_RULES
        return ObjectRules(properties, required_names, additional, aliases)

    def _array_rules(self, schema: Dict[Any, Any], depth: int) -> ArrayRules:
        prefix_schemas, rest = schema.get("prefixItems"), schema.get("items")
        if isinstance(rest, list):  # drafts 4 to 2019-09: "items" as a list, then "additionalItems"
            prefix_schemas, rest = rest, schema.get("additionalItems")
        prefix = tuple(self.compile(sub, depth) for sub in prefix_schemas) if isinstance(prefix_schemas, list) else ()
        items = self._optional(rest, depth)
        if items is None and all(node is ANY for node in prefix):
            return NO_ARRAY_RULES
        return ArrayRules(prefix, items)

    def _optional(self, schema: Any, depth: int) -> Optional[Node]:
        """The node for an optional subschema keyword; None when it constrains nothing."""
        if schema is None:
            return None
        node = self.compile(schema, depth)
        return None if node is ANY else node


def _admitted_kinds(schema: Dict[Any, Any]) -> Optional[FrozenSet[str]]:
    """The kinds ``type`` (and OpenAPI's ``nullable``) admit; None when ``type`` is absent or not understood."""
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(isinstance(name, str) and name in JSON_TYPES for name in names):
        return None
    kinds = set(names)
    if schema.get("nullable") is True:
        kinds.add(NULL)
    if NUMBER in kinds:
        kinds.add(INTEGER)
    return frozenset(kinds)


def _allowed_values(schema: Dict[Any, Any]) -> Optional[Tuple[Any, ...]]:
    if "const" in schema:
        return (schema["const"],)
    enum = schema.get("enum")
    return tuple(enum) if isinstance(enum, list) else None


def _listed_kinds(members: Tuple[Any, ...]) -> FrozenSet[str]:
    """The kinds of an enum's values (an integer is a number too, as with ``type``)."""
    kinds = {kind for kind in map(json_kind, members) if kind is not None}
    if NUMBER in kinds:
        kinds.add(INTEGER)
    return frozenset(kinds)


def _union(branches: Sequence[Node]) -> Node:
    if any(branch is ANY for branch in branches):
        return ANY  # one branch admits every value as it is
    if len(branches) == 1:
        return branches[0]
    return _merge_disjoint(branches) or UnionNode(tuple(branches))


def _merge_disjoint(branches: Sequence[Node]) -> Optional[Node]:
    """One ``TypedNode`` equivalent to a union of plain typed branches that admit disjoint kinds.

    ``anyOf: [{type: string}, {type: null}]`` is ``type: [string, null]``: since no two branches admit the same
    kind, the branch a value belongs to is known from its kind, and the union rules give the same answers as
    the type-list rules. This keeps ``Optional`` fields (the common case) off the slow union path.
    """
    typed = [branch for branch in branches if isinstance(branch, TypedNode)]
    if len(typed) < len(branches):
        return None
    kinds: Set[str] = set()
    for branch in typed:
        if branch.admitted is None or kinds & branch.admitted:
            return None
        kinds |= branch.admitted
    objects = next((branch.objects for branch in typed if branch.admits(OBJECT)), NO_OBJECT_RULES)
    arrays = next((branch.arrays for branch in typed if branch.admits(ARRAY)), NO_ARRAY_RULES)
    return TypedNode(frozenset(kinds), objects, arrays, typed[0].coerce)


def _conjunction(members: Sequence[Node]) -> Node:
    constraining = [member for member in members if member is not ANY]
    if len(constraining) <= 1:
        return constraining[0] if constraining else ANY
    repairing = [member for member in constraining if member.repairs]
    if len(repairing) > 1:
        return ANY  # two repairs could disagree: a schema we do not understand, so values are left alone
    return AllNode(tuple(constraining), repairing[0] if repairing else None)
