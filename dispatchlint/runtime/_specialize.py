"""Plans compiled once more, into plain Python functions specialised to one schema (as fastjsonschema compiles
a validator), so that a call costs about what a repair written by hand for that schema costs.

A ``TypedNode`` that walks objects or arrays becomes a function that reads the declared properties by name (not
the arguments key by key), tests each value's type against the few types its place keeps unchanged, and
converts a string in line for the common converters (``int()`` checked against the exact JSON literal, a table
of ``"true"``/``"false"`` spellings) before falling back to the converter itself. Every other node, and every
case a function does not specialise (subclasses, sanitized names, ``additionalProperties``, ``prefixItems``),
calls the node's own ``repair``: the generic plan stays the reference, and the property tests check that both
give the same answers.

Only identifiers made here and ``repr`` of ``str`` property names go into the generated source; every other
value the functions use (nodes, converters, sets of types) is passed in their namespace, never written as code.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from ._json import MAX_NUMBER_LENGTH, boolean_literal, integer_literal, number_literal
from ._plan import Node, TypedNode

#: Functions generated per schema at most, and properties per object: larger schemas keep the generic plan
#: for the rest (the work of generating stays bounded for hostile schemas).
MAX_FUNCTIONS = 64
MAX_PROPERTIES = 256
#: Nesting written in line inside one function (each level is a few indented blocks; Python bounds them).
INLINE_DEPTH = 4

#: The spellings of the boolean literals a model sends; other letter cases go through ``boolean_literal``.
_BOOLEANS = {"true": True, "false": False, "True": True, "False": False, "TRUE": True, "FALSE": False}
#: The literals of the integers models send most (counts, limits, offsets, priorities), looked up in one step.
_INTEGERS = {str(number): number for number in range(-128, 1025)}
_Step = Tuple[FrozenSet[type], Dict[type, Callable[[Any], Any]], Callable[[Any], Any]]


def specialize(node: Node) -> Callable[[Any], Any]:
    """A function equal to ``node.repair`` (same results, same identities), specialised where it pays."""
    if not _specializes(node):
        return node.repair
    try:
        generator = _Generator()
        root = generator.function(node)
        return generator.build()[root]  # type: ignore[no-any-return]
    except (SyntaxError, RecursionError, MemoryError):  # a schema too large to specialise keeps the generic plan
        return node.repair


def _specializes(node: Node) -> bool:
    return isinstance(node, TypedNode) and node.coerce and (_plain_objects(node) or _plain_arrays(node))


def _plain_objects(node: TypedNode) -> bool:
    """Objects walked by their declared properties only: no names to restore, no additional properties."""
    return (
        dict in node.handlers
        and not node.objects.aliases
        and node._repairing_additional is None
        and len(node._repairing_properties) <= MAX_PROPERTIES
        and all(type(name) is str for name in node._repairing_properties)
    )


def _plain_arrays(node: TypedNode) -> bool:
    """Arrays whose elements all follow ``items``."""
    return list in node.handlers and not node.arrays.prefix and node._repairing_items is not None


class _Generator:
    """Writes one function per specialised node that is not inlined into its parent.

    Inside a function, the value at depth ``d`` is ``item_d`` (its type ``item_type_d``, its repair ``new_d``),
    and the copy being made of it ``repaired_{d+1}``: places nested up to ``INLINE_DEPTH`` deep are written in
    line, deeper ones (and recursive schemas) call the function of their own node.
    """

    def __init__(self) -> None:
        self.namespace: Dict[str, Any] = {
            "BOOLEANS": _BOOLEANS,
            "boolean_literal": boolean_literal,
            "integer_literal": integer_literal,
            "number_literal": number_literal,
            "INTEGERS": _INTEGERS,
            "MAX_NUMBER_LENGTH": MAX_NUMBER_LENGTH,
            "isfinite": math.isfinite,
        }
        self.functions: Dict[int, str] = {}
        self.pending: List[Tuple[str, TypedNode]] = []
        self.source: List[str] = []
        self._bound: Dict[int, str] = {}

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
        done = 0
        while done < len(self.pending):  # deeper functions are queued while their parents are written
            name, node = self.pending[done]
            self._write(name, node)
            done += 1
        exec(compile("\n".join(self.source), "<dispatchlint.runtime specialised plan>", "exec"), self.namespace)
        return self.namespace

    def _write(self, name: str, node: TypedNode) -> None:
        lines = [f"def {name}(item_0):", "    item_type_0 = type(item_0)"]
        if node.exact:
            lines += [f"    if item_type_0 in {self.bind(node.exact)}:", "        return item_0"]
        lines += self._dispatch(node, 0, "    ", inline=True)
        lines.append("    return new_0")
        self.source.append("\n".join(lines) + "\n")

    def _dispatch(self, node: Node, depth: int, indent: str, inline: bool = False) -> List[str]:
        """Code that sets ``new_d`` to ``node.repair(item_d)``, knowing ``item_type_d``."""
        lines: List[str] = []
        branch = "if"
        if isinstance(node, TypedNode) and node.coerce and (inline or depth < INLINE_DEPTH):
            if _plain_objects(node):
                lines.append(f"{indent}if item_type_{depth} is dict:")
                lines += self._objects(node, depth, indent + "    ")
                branch = "elif"
            if _plain_arrays(node):
                lines.append(f"{indent}{branch} item_type_{depth} is list:")
                lines += self._arrays(node, depth, indent + "    ")
                branch = "elif"
            call = self.bind(node.repair)
        else:
            call = self.function(node)
        converter = node.handlers.get(str)
        if converter is not None:
            lines.append(f"{indent}{branch} item_type_{depth} is str:")
            lines += [f"{indent}    {line}" for line in self._from_string(converter, depth)]
            branch = "elif"
        if branch == "if":
            return lines + [f"{indent}new_{depth} = {call}(item_{depth})"]
        return lines + [f"{indent}else:", f"{indent}    new_{depth} = {call}(item_{depth})"]

    def _objects(self, node: TypedNode, depth: int, indent: str) -> List[str]:
        inner, repaired = depth + 1, f"repaired_{depth + 1}"
        lines = [f"{indent}{repaired} = None"]
        for key, step in node._repairing_properties.items():
            lines.append(f"{indent}if {key!r} in item_{depth}:")
            lines.append(f"{indent}    item_{inner} = item_{depth}[{key!r}]")
            store = f"{repaired}[{key!r}] = new_{inner}"
            lines += self._step(step, inner, indent + "    ", store, f"dict(item_{depth})")
        lines.append(f"{indent}new_{depth} = item_{depth} if {repaired} is None else {repaired}")
        return lines

    def _arrays(self, node: TypedNode, depth: int, indent: str) -> List[str]:
        step = node._repairing_items
        assert step is not None
        inner, repaired = depth + 1, f"repaired_{depth + 1}"
        lines = [f"{indent}{repaired} = None", f"{indent}for index_{inner}, item_{inner} in enumerate(item_{depth}):"]
        store = f"{repaired}[index_{inner}] = new_{inner}"
        lines += self._step(step, inner, indent + "    ", store, f"list(item_{depth})")
        lines.append(f"{indent}new_{depth} = item_{depth} if {repaired} is None else {repaired}")
        return lines

    def _step(self, step: _Step, depth: int, indent: str, store: str, copy: str) -> List[str]:
        """Repair ``item_d`` as its place would (``exact`` types kept, else the child's repair), then store it."""
        exact, _, repair = step
        child = repair.__self__  # type: ignore[attr-defined]
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

    def _from_string(self, converter: Callable[[str], Any], depth: int) -> List[str]:
        """``new_d = converter(item_d)``, with the common case first where it is cheaper than the call."""
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
        return [f"{new} = {self.bind(converter)}({item})"]


def generated_source(node: Node) -> Optional[str]:
    """The source of the functions ``specialize`` generates for ``node`` (for reading and for the tests)."""
    if not _specializes(node):
        return None
    generator = _Generator()
    generator.function(node)
    generator.build()
    return "\n".join(generator.source)
