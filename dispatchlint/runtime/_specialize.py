"""Plans compiled once more, into plain Python functions specialised to one schema (as fastjsonschema compiles
a validator), so that a call costs about what a repair written by hand for that schema costs.

A ``TypedNode`` that walks objects or arrays becomes a function that reads the declared properties by name (not
the arguments key by key), tests each value's type against the few types its place keeps unchanged, converts a
string in line for the common converters (``int()`` checked against the exact JSON literal, a table of
``"true"``/``"false"`` spellings), and parses an array or object sent as JSON text before walking it. Every other
node, and every case a function does not specialise (subclasses, sanitized names, ``additionalProperties``,
``prefixItems``), calls the node's own ``repair``: the generic plan stays the reference, and the property tests
check that both give the same answers.

What is generated is bounded, whatever the schema: a node is written in line into its parent's function only
when that is the one place it is used and it is not its own subschema again (a recursive reference); otherwise
it is called. Past ``MAX_FUNCTIONS`` functions, ``MAX_LINES`` lines of source or ``MAX_SECONDS`` of writing, the
remaining nodes keep their generic ``repair``.

Only identifiers made here and ``repr`` of ``str`` property names go into the generated source; every other
value the functions use (nodes, converters, sets of types) is passed in their namespace, never written as code.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from ._compiler import CompiledSchema
from ._json import (
    ARRAY,
    MAX_NUMBER_LENGTH,
    MISSING,
    OBJECT,
    STRING,
    boolean_literal,
    integer_literal,
    number_literal,
    strict_json,
)
from ._nodes import Node, Step, TypedNode

#: Functions generated per schema at most, and properties per object: larger schemas keep the generic plan
#: for the rest.
MAX_FUNCTIONS = 64
MAX_PROPERTIES = 256
#: Lines of source generated per schema at most (compiling them takes 5 to 15 ms on a busy two-core machine;
#: the schemas of bench/runtime.py need 100 to 220), and the time spent writing them: the work of specialising
#: stays bounded for hostile schemas.
MAX_LINES = 600
MAX_SECONDS = 0.005
#: Nesting written in line inside one function (each level is a few indented blocks; Python bounds them).
INLINE_DEPTH = 4

#: The spellings of the boolean literals a model sends; other letter cases go through ``boolean_literal``.
_BOOLEANS = {"true": True, "false": False, "True": True, "False": False, "TRUE": True, "FALSE": False}
#: The literals of the integers models send most (counts, limits, offsets, priorities), looked up in one step.
_INTEGERS = {str(number): number for number in range(-128, 1025)}
#: The brackets of the JSON text of an array and of an object.
_BRACKETS = {ARRAY: ("[", "]"), OBJECT: ("{", "}")}


@dataclass(frozen=True)
class Specialisation:
    """What specialising one schema made."""

    #: Equal to the generic ``repair`` of the schema's root (same results, same identities).
    repair: Callable[[Any], Any]
    #: The functions generated, and their lines of source (0 and 0: nothing was worth specialising).
    functions: int
    lines: int


def specialize(compiled: CompiledSchema) -> Specialisation:
    """The root's ``repair``, specialised where it pays, within the bounds of this module."""
    root = compiled.root
    if not _specializes(root):
        return Specialisation(root.repair, 0, 0)
    try:
        generator = _Generator(compiled)
        name = generator.function(root)
        namespace = generator.build()
    except (SyntaxError, RecursionError, MemoryError):  # a schema too large to specialise keeps the generic plan
        return Specialisation(root.repair, 0, 0)
    lines = sum(source.count("\n") for source in generator.source)
    return Specialisation(namespace[name], len(generator.source), lines)


def _specializes(node: Node) -> bool:
    return isinstance(node, TypedNode) and node.coerce and (_plain_objects(node) or _plain_arrays(node))


def _plain_objects(node: TypedNode) -> bool:
    """Objects walked by their declared properties only: no names to restore, no additional properties."""
    return (
        dict in node.handlers
        and not node.objects.aliases
        and node.repairing_additional is None
        and len(node.repairing_properties) <= MAX_PROPERTIES
        and all(type(name) is str for name in node.repairing_properties)
    )


def _plain_arrays(node: TypedNode) -> bool:
    """Arrays whose elements all follow ``items``."""
    return list in node.handlers and not node.arrays.prefix and node.repairing_items is not None


def _children(node: TypedNode) -> List[Node]:
    """The nodes a specialised function of ``node`` repairs values by (one entry per place)."""
    children: List[Node] = []
    if _plain_objects(node):
        children += [node.objects.properties[key] for key in node.repairing_properties]
    if _plain_arrays(node) and node.arrays.items is not None:
        children.append(node.arrays.items)
    return children


def _uses(root: TypedNode) -> Dict[int, int]:
    """id(node) -> how many places of the specialisable nodes reachable from ``root`` repair by that node."""
    uses: Dict[int, int] = {id(root): 1}
    pending = [root]
    while pending:
        for child in _children(pending.pop()):
            uses[id(child)] = uses.get(id(child), 0) + 1
            if uses[id(child)] == 1 and isinstance(child, TypedNode) and _specializes(child):
                pending.append(child)
    return uses


def _parsed_kind(node: TypedNode) -> Optional[str]:
    """The container kind a string here is the JSON text of, when ``repair`` is then exactly the walk of the
    parsed value; None when the generic conversion must decide.

    At a place that admits arrays but not strings, the text of an array is parsed and walked; wrapping the text
    as one element is a second candidate only if the element could take it, which an element that admits neither
    strings nor arrays cannot (its own conversions of a ``[`` text give nothing). An object's text is parsed and
    walked where objects are admitted and arrays are not (nothing to wrap it into).
    """
    admitted = node.admitted
    if admitted is None or STRING in admitted:
        return None
    if ARRAY in admitted:
        first = node.first_item
        plain_element = isinstance(first, TypedNode) and first.admitted is not None
        if _plain_arrays(node) and plain_element and not first.admitted & {STRING, ARRAY}:  # type: ignore[union-attr]
            return ARRAY
        return None
    return OBJECT if OBJECT in admitted and _plain_objects(node) else None


class _Generator:
    """Writes one function per specialised node that is not written in line into its parent.

    Inside a function, the value at depth ``d`` is ``item_d`` (its type ``item_type_d``, its repair ``new_d``),
    and the copy being made of it ``repaired_{d+1}``: places nested up to ``INLINE_DEPTH`` deep are written in
    line, deeper ones, shared ones and recursive ones call the function of their own node.
    """

    def __init__(self, compiled: CompiledSchema) -> None:
        self.namespace: Dict[str, Any] = {
            "BOOLEANS": _BOOLEANS,
            "boolean_literal": boolean_literal,
            "integer_literal": integer_literal,
            "number_literal": number_literal,
            "strict_json": strict_json,
            "MISSING": MISSING,
            "INTEGERS": _INTEGERS,
            "MAX_NUMBER_LENGTH": MAX_NUMBER_LENGTH,
            "isfinite": math.isfinite,
        }
        self.functions: Dict[int, str] = {}
        self.pending: List[Tuple[str, TypedNode]] = []
        self.source: List[str] = []
        self._bound: Dict[int, str] = {}
        self._origins = compiled.origins
        self._uses = _uses(compiled.root) if isinstance(compiled.root, TypedNode) else {}
        #: The origins of the nodes being written in line, outermost first (a recursive reference is called).
        self._inlined: List[Optional[int]] = []

    def bind(self, value: Any) -> str:
        """A name for ``value`` in the generated functions' namespace."""
        known = self._bound.get(id(value))
        if known is not None and self.namespace[known] is value:
            return known
        name = self._bound[id(value)] = f"c{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def function(self, node: Node) -> str:
        """The name of a callable equal to ``node.repair``: a generated function, or the node's own method."""
        known = self.functions.get(id(node))
        if known is not None:
            return known
        if isinstance(node, TypedNode) and _specializes(node) and len(self.pending) < MAX_FUNCTIONS:
            name = f"repair_{len(self.pending)}"
            self.pending.append((name, node))
        else:
            name = self.bind(node.repair)
        self.functions[id(node)] = name
        return name

    def build(self) -> Dict[str, Any]:
        """The namespace in which every queued function is defined: generated within the bounds, else generic."""
        deadline = time.perf_counter() + MAX_SECONDS
        lines_left = MAX_LINES
        done = 0
        while done < len(self.pending):  # deeper functions are queued while their parents are written
            name, node = self.pending[done]
            done += 1
            source = self._write(name, node) if lines_left > 0 and time.perf_counter() < deadline else None
            if source is not None and source.count("\n") <= lines_left:
                lines_left -= source.count("\n")
                self.source.append(source)
            else:  # past a bound: this node keeps its generic repair (its callers look it up by name)
                lines_left = 0
                self.namespace[name] = node.repair
        exec(compile("\n".join(self.source), "<dispatchlint.runtime specialised plan>", "exec"), self.namespace)
        return self.namespace

    def _write(self, name: str, node: TypedNode) -> str:
        lines = [f"def {name}(item_0):", "    item_type_0 = type(item_0)"]
        if node.exact:
            lines += [f"    if item_type_0 in {self.bind(node.exact)}:", "        return item_0"]
        lines += self._dispatch(node, 0, "    ", inline=True)
        lines.append("    return new_0")
        return "\n".join(lines) + "\n"

    def _inlines(self, node: Node, depth: int) -> bool:
        """Whether ``node`` is written in line at ``depth`` rather than called: not when it is used in several
        places, is a recursive reference, or parses an array's JSON text (its function walks what it parsed)."""
        return (
            isinstance(node, TypedNode)
            and node.coerce
            and depth < INLINE_DEPTH
            and self._uses.get(id(node), 0) <= 1
            and self._origins.get(id(node)) not in self._inlined
            and _parsed_kind(node) != ARRAY
        )

    def _dispatch(self, node: Node, depth: int, indent: str, inline: bool = False) -> List[str]:
        """Code that sets ``new_d`` to ``node.repair(item_d)``, knowing ``item_type_d``."""
        lines: List[str] = []
        branch = "if"
        in_line = isinstance(node, TypedNode) and (inline or self._inlines(node, depth))
        if isinstance(node, TypedNode) and in_line:
            self._inlined.append(self._origins.get(id(node)))
            if _plain_objects(node):
                lines.append(f"{indent}if item_type_{depth} is dict:")
                lines += self._objects(node, depth, indent + "    ")
                branch = "elif"
            if _plain_arrays(node):
                lines.append(f"{indent}{branch} item_type_{depth} is list:")
                lines += self._arrays(node, depth, indent + "    ")
                branch = "elif"
            self._inlined.pop()
            call = self.bind(node.repair)
        else:
            call = self.function(node)
        converter = node.handlers.get(str)
        if converter is not None:
            lines.append(f"{indent}{branch} item_type_{depth} is str:")
            # The JSON text of a container is walked by the node's own function: not where it is written in line.
            parses = inline or not in_line
            lines += [f"{indent}    {line}" for line in self._from_string(node, converter, depth, parses)]
            branch = "elif"
        if branch == "if":
            return lines + [f"{indent}new_{depth} = {call}(item_{depth})"]
        return lines + [f"{indent}else:", f"{indent}    new_{depth} = {call}(item_{depth})"]

    def _objects(self, node: TypedNode, depth: int, indent: str) -> List[str]:
        inner, repaired = depth + 1, f"repaired_{depth + 1}"
        lines = [f"{indent}{repaired} = None"]
        for key, step in node.repairing_properties.items():
            lines.append(f"{indent}if {key!r} in item_{depth}:")
            lines.append(f"{indent}    item_{inner} = item_{depth}[{key!r}]")
            store = f"{repaired}[{key!r}] = new_{inner}"
            child = node.objects.properties[key]
            lines += self._step(step, child, inner, indent + "    ", store, f"dict(item_{depth})")
        lines.append(f"{indent}new_{depth} = item_{depth} if {repaired} is None else {repaired}")
        return lines

    def _arrays(self, node: TypedNode, depth: int, indent: str) -> List[str]:
        step, child = node.repairing_items, node.arrays.items
        assert step is not None and child is not None
        inner, repaired = depth + 1, f"repaired_{depth + 1}"
        lines = [f"{indent}{repaired} = None", f"{indent}for index_{inner}, item_{inner} in enumerate(item_{depth}):"]
        store = f"{repaired}[index_{inner}] = new_{inner}"
        lines += self._step(step, child, inner, indent + "    ", store, f"list(item_{depth})")
        lines.append(f"{indent}new_{depth} = item_{depth} if {repaired} is None else {repaired}")
        return lines

    def _step(self, step: Step, child: Node, depth: int, indent: str, store: str, copy: str) -> List[str]:
        """Repair ``item_d`` as its place would (``exact`` types kept, else the child's repair), then store it."""
        exact: FrozenSet[type] = step[0]
        lines = [f"{indent}item_type_{depth} = type(item_{depth})"]
        if len(exact) == 1:
            lines.append(f"{indent}if item_type_{depth} is not {self.bind(next(iter(exact)))}:")
        elif exact:
            lines.append(f"{indent}if item_type_{depth} not in {self.bind(exact)}:")
        else:
            lines.append(f"{indent}if True:")
        inner = indent + "    "
        lines += self._dispatch(child, depth, inner)
        repaired = f"repaired_{depth}"
        lines += [
            f"{inner}if new_{depth} is not item_{depth}:",
            f"{inner}    if {repaired} is None:",
            f"{inner}        {repaired} = {copy}",
            f"{inner}    {store}",
        ]
        return lines

    def _careful_integer(self, depth: int, fallback: str) -> List[str]:
        """``new_d``: the integer ``item_d`` is the exact JSON literal of, else ``fallback(item_d)``."""
        item, new = f"item_{depth}", f"new_{depth}"
        # ASCII digits without a leading zero, as long as the generic bound allows, are an integer's JSON
        # literal as they are (int() raises only where a process lowered Python's own bound). Signs, spaces
        # and the rest take the careful path.
        return [
            f"if {item}.isdigit() and {item}.isascii() and 0 < len({item}) <= MAX_NUMBER_LENGTH"
            f" and ({item}[0] != '0' or len({item}) == 1):",
            "    try:",
            f"        {new} = int({item})",
            "    except ValueError:",
            f"        {new} = {fallback}({item})",
            "else:",
            f"    {new} = {fallback}({item})",
        ]

    def _from_string(self, node: Node, converter: Callable[[str], Any], depth: int, parses: bool) -> List[str]:
        """``new_d = converter(item_d)``, with the common case first where it is cheaper than the call (``parses``:
        the JSON text of a container parsed here, then walked by the node's function)."""
        item, new = f"item_{depth}", f"new_{depth}"
        if converter is boolean_literal:
            return [f"{new} = BOOLEANS.get({item})", f"if {new} is None:", f"    {new} = boolean_literal({item})"]
        if converter is integer_literal:
            return [
                f"{new} = INTEGERS.get({item})",
                f"if {new} is None:",
                *(f"    {line}" for line in self._careful_integer(depth, "integer_literal")),
            ]
        if converter is number_literal:
            return [
                f"{new} = INTEGERS.get({item})",
                f"if {new} is None:",
                *(f"    {line}" for line in self._careful_integer(depth, "number_literal")[:-2]),
                "    else:",
                "        try:",
                f"            {new} = float({item})",
                "        except ValueError:  # not a number in any spelling",
                f"            {new} = {item}",
                # The shortest repr of a finite float is always a JSON number literal: when it is the text
                # itself, the text was one. Other spellings ("0.50", "1E3", " 1") take the careful path.
                "        else:",
                f"            if not (isfinite({new}) and repr({new}) == {item}):",
                f"                {new} = number_literal({item})",
            ]
        parsed_kind = _parsed_kind(node) if parses and isinstance(node, TypedNode) else None
        if parsed_kind is None:
            return [f"{new} = {self.bind(converter)}({item})"]
        # A container's JSON text, with nothing around it: parsed, then walked by this node's own function.
        opening, closing = _BRACKETS[parsed_kind]
        parsed = f"parsed_{depth}"
        return [
            f"if {item}[:1] == {opening!r} and {item}[-1:] == {closing!r}:",
            f"    {parsed} = strict_json({item})",
            f"    {new} = {item} if {parsed} is MISSING else {self.function(node)}({parsed})",
            "else:",
            f"    {new} = {self.bind(converter)}({item})",
        ]
