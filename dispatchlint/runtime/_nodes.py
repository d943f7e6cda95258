"""The nodes a schema compiles into: each repairs the values at its place in the schema.

Every node answers three questions about a value at its place in the schema:

- ``admits(kind)``: is a value of this JSON kind accepted here, judging by its kind alone?
- ``fits(value)``: is the value accepted as it is, inside too? (Only unions ask, to choose a branch.)
- ``repair(value)``: the value with what can be repaired repaired; the very same object when nothing changed.

Each node also gives its parent a fast path: ``repairs`` (False: ``repair`` is the identity, the parent never
calls it), ``exact`` (Python types whose values ``repair`` returns unchanged: ``type(v) in exact`` replaces a
call) and ``handlers`` (Python type -> the function ``repair`` would end up in for it: a string converter
chosen for the admitted kinds, the object walk, the array walk), called directly. That is why a call with
valid arguments costs little more than walking them, and a mistyped one little more than converting.

``_compiler`` builds the nodes of a schema; ``_specialize`` writes functions equal to a node's ``repair``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from ._budget import charge
from ._json import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    JSON_TYPES,
    LITERAL_KINDS,
    MISSING,
    NUMBER,
    OBJECT,
    PYTHON_TYPES,
    STRING,
    boolean_literal,
    integer_literal,
    is_ambiguous_single,
    json_equal,
    json_kind,
    number_literal,
    scalar_literal,
    strict_json,
)

_SCALAR_TYPES = frozenset({type(None), bool, int, float, str})
_CONTAINER_KINDS = frozenset({ARRAY, OBJECT})
_NUMERIC = (INTEGER, NUMBER)


class Node:
    """A place in a schema. Subclasses set ``repairs``, ``exact`` and ``handlers`` (see the module docstring)."""

    __slots__ = ("repairs", "exact", "handlers")

    repairs: bool
    exact: FrozenSet[type]
    handlers: Dict[type, Callable[[Any], Any]]

    def admits(self, kind: Optional[str]) -> bool:
        raise NotImplementedError

    def fits(self, value: Any) -> bool:
        raise NotImplementedError

    def repair(self, value: Any) -> Any:
        raise NotImplementedError


class _AnyNode(Node):
    """A place the plan does not constrain: no schema, ``true``, too deep, or a schema it does not understand."""

    __slots__ = ()

    def __init__(self) -> None:
        self.repairs = False
        self.exact = frozenset(python_type for types in PYTHON_TYPES.values() for python_type in types)
        self.handlers = {}

    def admits(self, kind: Optional[str]) -> bool:
        return True

    def fits(self, value: Any) -> bool:
        return True

    def repair(self, value: Any) -> Any:
        return value


ANY: Node = _AnyNode()

#: How a parent repairs a child: the child's ``exact``, ``handlers`` and ``repair``.
Step = Tuple[FrozenSet[type], Dict[type, Callable[[Any], Any]], Callable[[Any], Any]]


@dataclass(frozen=True)
class ObjectRules:
    """What a schema says about objects."""

    #: Property name -> node (every declared property, for ``fits``).
    properties: Dict[Any, Node]
    #: Names that must be present (for ``fits`` only: a missing property cannot be repaired).
    required: Tuple[str, ...]
    #: Node for keys that are not properties; None when they are not constrained.
    additional: Optional[Node]
    #: Provider-safe alias -> registry name, for the names ``sanitize_schema`` renames.
    aliases: Dict[str, str]


@dataclass(frozen=True)
class ArrayRules:
    """What a schema says about arrays."""

    #: Nodes for the first elements (``prefixItems``, or ``items`` given as a list).
    prefix: Tuple[Node, ...]
    #: Node for the other elements; None when they are not constrained.
    items: Optional[Node]


NO_OBJECT_RULES = ObjectRules({}, (), None, {})
NO_ARRAY_RULES = ArrayRules((), None)


def _step(node: Optional[Node]) -> Optional[Step]:
    """How a parent repairs a child: None when the child never changes a value."""
    return (node.exact, node.handlers, node.repair) if node is not None and node.repairs else None


class TypedNode(Node):
    """A schema's own keywords: ``type`` and the object and array keywords (``enum``/``const``: ``EnumNode``)."""

    __slots__ = (
        "admitted",
        "objects",
        "arrays",
        "coerce",
        "repairing_properties",
        "repairing_additional",
        "repairing_prefix",
        "repairing_items",
        "first_item",
        "_walks_objects",
        "_walks_arrays",
        "_checks_objects",
        "_checks_arrays",
    )

    def __init__(
        self,
        admitted: Optional[FrozenSet[str]],
        objects: ObjectRules,
        arrays: ArrayRules,
        coerce: bool,
    ) -> None:
        #: JSON kinds accepted here (``integer`` is added wherever ``number`` is); None: every kind.
        self.admitted = admitted
        self.objects = objects
        self.arrays = arrays
        #: False in the rename-only plans of ``unrename_args``: names are restored, values never converted.
        self.coerce = coerce
        # How this node repairs its children (read by the specialiser too): only children that can change a
        # value have a step.
        steps = ((name, _step(node)) for name, node in objects.properties.items())
        self.repairing_properties: Dict[Any, Step] = {name: step for name, step in steps if step is not None}
        self.repairing_additional = _step(objects.additional)
        self.repairing_prefix = tuple(_step(node) for node in arrays.prefix)
        self.repairing_items = _step(arrays.items)
        self._walks_objects = self.admits(OBJECT) and bool(
            objects.aliases or self.repairing_properties or self.repairing_additional
        )
        self._walks_arrays = self.admits(ARRAY) and (self.repairing_items is not None or any(self.repairing_prefix))
        self._checks_objects = bool(
            objects.required
            or objects.aliases
            or objects.additional is not None
            or any(node is not ANY for node in objects.properties.values())
        )
        self._checks_arrays = arrays.items is not None or any(node is not ANY for node in arrays.prefix)
        #: The node of an array's first element where arrays are admitted: what a single value is wrapped into.
        self.first_item: Optional[Node] = None
        if admitted is not None and ARRAY in admitted:
            self.first_item = arrays.prefix[0] if arrays.prefix else arrays.items or ANY
        self.repairs = self._walks_objects or self._walks_arrays or self._converts()
        self.handlers = {}
        from_string = self._string_converter()
        if from_string is not None:
            self.handlers[str] = from_string
        if self._walks_objects:
            self.handlers[dict] = self._repair_members
        if self._walks_arrays:
            self.handlers[list] = self._repair_items
        self.exact = frozenset(
            python_type
            for kind in (JSON_TYPES if admitted is None else admitted)
            if not (kind == OBJECT and self._walks_objects or kind == ARRAY and self._walks_arrays)
            for python_type in PYTHON_TYPES[kind]
        )

    def _converts(self) -> bool:
        """Whether some value of a kind not admitted here has a conversion (see ``_convert``)."""
        admitted = self.admitted
        if not self.coerce or admitted is None:
            return False
        floats_to_integers = INTEGER in admitted and NUMBER not in admitted
        strings_parsed = STRING not in admitted and bool(admitted & (LITERAL_KINDS | _CONTAINER_KINDS))
        return ARRAY in admitted or floats_to_integers or strings_parsed

    def _string_converter(self) -> Optional[Callable[[str], Any]]:
        """The fastest correct way to repair a string here; None where strings are admitted or kept."""
        admitted = self.admitted
        if not self.coerce or admitted is None or STRING in admitted:
            return None
        if admitted & _CONTAINER_KINDS:
            return self._convert_string
        literal_kinds = admitted & LITERAL_KINDS
        if literal_kinds == {BOOLEAN}:
            return boolean_literal
        if literal_kinds == {INTEGER}:
            return integer_literal
        if literal_kinds == {INTEGER, NUMBER}:
            return number_literal
        return self._scalar_from_string

    def admits(self, kind: Optional[str]) -> bool:
        return self.admitted is None or kind in self.admitted

    def fits(self, value: Any) -> bool:
        kind = json_kind(value)
        if not self.admits(kind):
            return False
        if kind == OBJECT:
            return not self._checks_objects or self._members_fit(value)
        if kind == ARRAY:
            return not self._checks_arrays or self._items_fit(value)
        return True

    def _members_fit(self, value: Any) -> bool:
        objects = self.objects
        if any(name not in value for name in objects.required):
            return False
        for key, item in value.items():
            node = objects.properties.get(key)
            if node is None:
                original = objects.aliases.get(key)
                if original is not None and original not in value:
                    return False  # a sanitized name: repair would restore it
                node = objects.additional
            if node is not None and not node.fits(item):
                return False
        return True

    def _items_fit(self, value: Any) -> bool:
        prefix, items = self.arrays.prefix, self.arrays.items
        for index, item in enumerate(value):
            node = prefix[index] if index < len(prefix) else items
            if node is not None and not node.fits(item):
                return False
        return True

    def repair(self, value: Any) -> Any:
        value_type = type(value)
        if value_type in self.exact:
            return value
        handler = self.handlers.get(value_type)
        if handler is not None:
            return handler(value)
        kind = json_kind(value)
        if self.admits(kind):  # subclasses of the JSON types, tuples, and kinds admitted without a walk
            if kind == OBJECT and self._walks_objects:
                return self._repair_members(value)
            if kind == ARRAY and self._walks_arrays:
                return self._repair_items(value)
            return value
        return self._convert(value, kind) if self.coerce else value

    def _repair_members(self, value: Any) -> Any:
        if self.objects.aliases:
            value = self._restore_names(value)
        repairing, additional = self.repairing_properties, self.repairing_additional
        properties = self.objects.properties
        repaired = None
        for key, item in value.items():
            step = repairing.get(key)
            if step is None:
                if additional is None or key in properties:
                    continue
                step = additional
            exact, handlers, repair = step
            item_type = type(item)
            if item_type in exact:
                continue
            new = handlers.get(item_type, repair)(item)
            if new is not item:
                if repaired is None:
                    repaired = dict(value)
                repaired[key] = new
        return value if repaired is None else repaired

    def _restore_names(self, value: Any) -> Any:
        """Sanitized names back to registry names; when both names are present, both are kept."""
        aliases = self.objects.aliases
        if aliases.keys().isdisjoint(value):
            return value
        restored = {}
        renamed = False
        for key, item in value.items():
            original = aliases.get(key)
            if original is not None and original not in value:
                key, renamed = original, True
            restored[key] = item
        return restored if renamed else value

    def _repair_items(self, value: Any) -> Any:
        prefix, items = self.repairing_prefix, self.repairing_items
        prefix_length = len(prefix)
        repaired = None
        for index, item in enumerate(value):
            step = items if index >= prefix_length else prefix[index]
            if step is None:
                continue
            exact, handlers, repair = step
            item_type = type(item)
            if item_type in exact:
                continue
            new = handlers.get(item_type, repair)(item)
            if new is not item:
                if repaired is None:
                    repaired = list(value)
                repaired[index] = new
        return value if repaired is None else repaired

    def _convert(self, value: Any, kind: Optional[str]) -> Any:
        """The one conversion of a value whose kind is not admitted here; the value itself if none or several."""
        found = self.conversions(value, kind)
        return found[0] if len(found) == 1 else value

    def conversions(self, value: Any, kind: Optional[str]) -> List[Any]:
        """The distinct repairs of a value whose kind is not admitted here: its literal, and ``[item]``."""
        if kind == STRING:
            converted = self.parse(value)
        elif kind == NUMBER and self.admits(INTEGER) and value.is_integer():
            converted = int(value)
        else:
            converted = MISSING
        found = [] if converted is MISSING else [converted]
        wrapped = self._wrap(value, kind)
        if wrapped is not MISSING and not (found and json_equal(converted, wrapped)):
            found.append(wrapped)
        return found

    def _convert_string(self, text: str) -> Any:
        return self._convert(text, STRING)

    def _scalar_from_string(self, text: str) -> Any:
        scalar = self._admitted_scalar(text.strip())
        return text if scalar is MISSING else scalar

    def _admitted_scalar(self, stripped: str) -> Any:
        scalar = scalar_literal(stripped)
        return scalar if scalar is not MISSING and self.admits(json_kind(scalar)) else MISSING

    def parse(self, text: str) -> Any:
        """The admitted value ``text`` is the JSON literal of (containers repaired in turn), or MISSING."""
        stripped = text.strip()
        head = stripped[:1]
        if head == "[" or head == "{":
            kind = ARRAY if head == "[" else OBJECT
            if not self.admits(kind):
                return MISSING
            parsed = strict_json(stripped)
            if parsed is MISSING:
                return MISSING
            if kind == ARRAY:
                return self._repair_items(parsed) if self._walks_arrays else parsed
            return self._repair_members(parsed) if self._walks_objects else parsed
        return self._admitted_scalar(stripped)

    def _wrap(self, value: Any, kind: Optional[str]) -> Any:
        """``[item]`` where an array is wanted: the value as its first element admits it or repairs it, or MISSING.

        A string that may be a list written as text (separators, brackets) or no list at all (empty, ``null``)
        is wrapped only when the element repairs it into another kind (``"5"`` for integers, ``'{"a": 1}'``
        for objects): then it was one value's literal.
        """
        first = self.first_item
        if first is None or kind is None or kind == ARRAY:
            return MISSING
        if kind == STRING:
            stripped = value.strip()
            if not stripped or stripped == "null":
                return MISSING
        if first.admits(kind):
            if kind == STRING and is_ambiguous_single(value):
                return MISSING
            return [first.repair(value)]
        item = first.repair(value)
        return [item] if item is not value and first.fits(item) else MISSING


class EnumNode(Node):
    """``enum`` and ``const``: what is admitted is the listed values (``const`` lists one), of a kind ``type``
    admits when it is given.

    A listed value is never touched. Another value becomes a listed value when exactly one repair gets there:
    the ones its kind has at this place (``inner``, whose admitted kinds are the listed values' kinds), and for
    a string, the JSON literal it holds (``"2"`` with ``enum: [1, 2, 3]``, ``"true"`` with ``const: true``).
    A repair that would leave the enum is not made.
    """

    __slots__ = ("members", "inner", "_parses", "_strings", "_numbers", "_booleans", "_null", "_others")

    def __init__(self, members: Tuple[Any, ...], inner: TypedNode) -> None:
        self.members = members
        self.inner = inner
        kinds = [json_kind(member) for member in members]
        #: A string may hold the literal of a listed value that is not a string.
        self._parses = inner.coerce and any(kind != STRING and inner.admits(kind) for kind in kinds)
        self.repairs = inner.repairs or self._parses
        self.exact = inner.exact - {str} if self._parses else inner.exact
        self.handlers = {}
        # Membership by hashing for plain scalars (1 == 1.0 hashes alike, as JSON compares numbers).
        self._strings = frozenset(m for m, kind in zip(members, kinds) if kind == STRING and type(m) is str)
        self._numbers = frozenset(m for m, kind in zip(members, kinds) if kind in _NUMERIC and type(m) in (int, float))
        self._booleans = frozenset(m for m in members if type(m) is bool)
        self._null = any(member is None for member in members)
        self._others = tuple(m for m in members if type(m) not in (str, int, float, bool) and m is not None)

    def admits(self, kind: Optional[str]) -> bool:
        return self.inner.admits(kind)

    def fits(self, value: Any) -> bool:
        return self._listed(value) and self.inner.fits(value)

    def _listed(self, value: Any) -> bool:
        value_type = type(value)
        if value_type is str:
            return value in self._strings or self._listed_slowly(value)
        if value_type is bool:
            return value in self._booleans
        if value_type is int or value_type is float:
            return value in self._numbers
        if value is None:
            return self._null
        return self._listed_slowly(value)

    def _listed_slowly(self, value: Any) -> bool:
        return bool(self._others) and any(json_equal(value, member) for member in self._others)

    def repair(self, value: Any) -> Any:
        if self._listed(value):
            return value
        inner = self.inner
        if not inner.coerce:  # renaming only: names are restored inside whatever the values
            return inner.repair(value)
        kind = json_kind(value)
        if inner.admits(kind):
            found = [inner.repair(value)]
            if kind == STRING and self._parses:
                found.append(inner.parse(value))
        else:
            found = inner.conversions(value, kind)
        distinct: List[Any] = []
        for candidate in found:
            if candidate is MISSING or candidate is value or not self.fits(candidate):
                continue
            if not any(json_equal(candidate, seen) for seen in distinct):
                distinct.append(candidate)
        return distinct[0] if len(distinct) == 1 else value


class UnionNode(Node):
    """``anyOf``/``oneOf`` whose branches cannot be merged into one ``TypedNode`` (see ``_merge_disjoint``).

    A value of a kind some branch admits keeps its kind: it is kept when a branch fits it, repaired by the
    branch when only one branch admits its kind, else by the one distinct repair that makes it fit. A value of
    a kind no branch admits takes the one distinct conversion the branches offer, counting a conversion only
    when its branch fits it or is the only branch to admit its kind (so that the next call keeps it: the
    repair is idempotent). Otherwise: kept.
    """

    __slots__ = ("branches",)

    def __init__(self, branches: Tuple[Node, ...]) -> None:
        self.branches = branches
        self.handlers = {}
        self.repairs = any(branch.repairs for branch in branches)
        # A scalar of a kind some branch admits comes back unchanged whatever the branches say inside.
        self.exact = frozenset(t for branch in branches for t in branch.exact if t in _SCALAR_TYPES)

    def admits(self, kind: Optional[str]) -> bool:
        return any(branch.admits(kind) for branch in self.branches)

    def fits(self, value: Any) -> bool:
        charge()
        return any(branch.fits(value) for branch in self.branches)

    def repair(self, value: Any) -> Any:
        charge()
        kind = json_kind(value)
        admitting = [branch for branch in self.branches if branch.admits(kind)]
        candidates: List[Any] = []
        if admitting:
            if any(branch.fits(value) for branch in admitting):
                return value
            if len(admitting) == 1:
                return admitting[0].repair(value)
            for branch in admitting:
                repaired = branch.repair(value)
                if repaired is not value and branch.fits(repaired):
                    candidates.append(repaired)
        else:
            for branch in self.branches:
                repaired = branch.repair(value)
                if repaired is not value and (branch.fits(repaired) or self._only_admitter(branch, repaired)):
                    candidates.append(repaired)
        distinct: List[Any] = []
        for candidate in candidates:
            if not any(json_equal(candidate, seen) for seen in distinct):
                distinct.append(candidate)
        return distinct[0] if len(distinct) == 1 else value

    def _only_admitter(self, branch: Node, value: Any) -> bool:
        kind = json_kind(value)
        return not any(other.admits(kind) for other in self.branches if other is not branch)


class AllNode(Node):
    """Several constraints at one place (``allOf``, ``$ref`` or ``anyOf`` beside other keywords).

    Compiled only when at most one member can repair: a value must fit all members, and a repair is kept only
    when every member admits the repaired value's kind.
    """

    __slots__ = ("members", "repairer")

    def __init__(self, members: Tuple[Node, ...], repairer: Optional[Node]) -> None:
        self.members = members
        self.repairer = repairer
        self.handlers = {}
        self.repairs = repairer is not None
        self.exact = frozenset()

    def admits(self, kind: Optional[str]) -> bool:
        return all(member.admits(kind) for member in self.members)

    def fits(self, value: Any) -> bool:
        charge()
        return all(member.fits(value) for member in self.members)

    def repair(self, value: Any) -> Any:
        if self.repairer is None:
            return value
        charge()
        repaired = self.repairer.repair(value)
        return repaired if repaired is value or self.admits(json_kind(repaired)) else value


NEVER: Node = TypedNode(frozenset(), NO_OBJECT_RULES, NO_ARRAY_RULES, coerce=False)
