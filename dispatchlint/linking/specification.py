"""Stage 2b, the project's own specification: what its gated path says the model's arguments are.

A project with a gate has written down, on its gated path, what it considers the model's arguments. When it
hands a callable to some receiver (a dataclass field, a middleware runner, a framework adapter) and that
callable passes its parameter to the gate, or to an entry that gates, whatever the receiver calls its callables
with is, in the project's own words, the model's arguments. Every other callable handed to the same receiver in
the same place is called with them too: its parameter there is a source, even where nothing this analysis can
follow calls it (``_SequentialDispatch(execute=_execute)`` beside ``_SequentialDispatch(lambda next_args:
inline_executor(agent, next_args, ctx))``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import DefaultDict, Dict, List, Optional, Tuple

from dispatchlint.indexing.facts import Call, Either, Flow, FunctionDef, ModuleFacts, Param, Span
from dispatchlint.linking.callgraph import CallGraph
from dispatchlint.linking.gates import Gates
from dispatchlint.linking.model import param_at
from dispatchlint.linking.symbols import SymbolKind


@dataclass(frozen=True)
class CallbackRole:
    """Where a callable is handed: the receiver (qualified, or as written when it is not the project's) and
    the parameter or field it arrives in (or the slot as written)."""

    receiver: str
    parameter: str


@dataclass(frozen=True)
class LearnedSource:
    """A callable's parameter that receives what the project's gated callable of the same role hands its gate."""

    role: CallbackRole
    #: The gated callable of the same role, and where it hands its parameter to the gate.
    gated_by: str
    module: ModuleFacts
    span: Span


@dataclass(frozen=True)
class _Handed:
    module: ModuleFacts
    qualified: str
    definition: FunctionDef


class Specification:
    """The sources the project's gated path declares, beyond the models of SDKs and frameworks."""

    def __init__(self, graph: CallGraph, gates: Gates) -> None:
        self.graph = graph
        self.gates = gates
        #: ``(callable qualified, parameter) -> why it is a source``.
        self.sources: Dict[Tuple[str, str], LearnedSource] = {}
        self._learn()

    def source(self, qualified: str, parameter: str) -> Optional[LearnedSource]:
        return self.sources.get((qualified, parameter))

    def _learn(self) -> None:
        roles: DefaultDict[CallbackRole, List[_Handed]] = defaultdict(list)
        for module in self.graph.modules:
            for call in module.calls:
                for slot, qualified in self._handed_callables(module, call):
                    located = self.graph.function(qualified)
                    role = self._role(module, call, slot)
                    if located is not None and role is not None:
                        roles[role].append(_Handed(located[0], qualified, located[1]))
        for role, unordered in sorted(roles.items(), key=lambda item: (item[0].receiver, item[0].parameter)):
            handed = sorted(unordered, key=lambda item: item.qualified)  # the evidence named is the same in any order
            gated = [(item, found) for item in handed for found in [self._gated_position(item)] if found is not None]
            if not gated:
                continue
            for item in handed:
                for gated_item, (position, span) in gated:
                    params = _own_params(item.definition)
                    if gated_item.qualified == item.qualified or position >= len(params):
                        continue
                    key = (item.qualified, params[position])
                    self.sources.setdefault(key, LearnedSource(role, gated_item.qualified, gated_item.module, span))

    def _handed_callables(self, module: ModuleFacts, call: Call) -> List[Tuple[str, str]]:
        """``(slot, qualified)`` of each lambda, nested function or project function a call hands on as a value."""
        found = [(slot, f"{module.module}.{handed}") for slot, handed in call.functions]
        handed_slots = {slot for slot, _ in call.functions}
        class_name = self.graph.class_of(module, call.function)
        for slot, kind, value in call.literals:
            if kind == "ref" and slot not in handed_slots:
                target = self.graph.resolve(module, value, call.function, class_name)
                if target is not None and self.graph.function(target) is not None:
                    found.append((slot, target))
        return found

    def _role(self, module: ModuleFacts, call: Call, slot: str) -> Optional[CallbackRole]:
        """The receiver and the parameter a slot of a call fills: a function's parameter, a dataclass's field
        (its ``__init__`` written or generated), or the slot as written for a receiver outside the project."""
        resolved = self.graph.resolve(module, call.callee, call.function, self.graph.class_of(module, call.function))
        if resolved is None:
            return CallbackRole(call.callee, slot)
        if self.graph.symbols.kind(resolved) is SymbolKind.CLASS:
            initializer = self.graph.symbols.member(resolved, "__init__")
            located = self.graph.function(initializer) if initializer else None
            if located is not None:
                parameter = param_at(call, located[1], slot)
                return CallbackRole(resolved, parameter) if parameter else None
            found = self.graph.symbols.class_def(resolved)
            fields = found[0].fields if found is not None else ()
            if slot.isdigit():
                return CallbackRole(resolved, fields[int(slot)]) if int(slot) < len(fields) else None
            return CallbackRole(resolved, slot)
        located = self.graph.function(resolved)
        if located is None:
            return CallbackRole(resolved, slot)
        parameter = param_at(call, located[1], slot)
        return CallbackRole(resolved, parameter) if parameter else None

    def _gated_position(self, handed: _Handed) -> Optional[Tuple[int, Span]]:
        """The position of the parameter a handed callable passes to the gate (or to an entry that gates), and
        where: the project's word that its receiver calls it with the model's arguments there."""
        params = _own_params(handed.definition)
        for module, call in self.graph.calls_in(handed.qualified, nested=True):
            class_name = self.graph.class_of(module, call.function)
            gates = self.gates.is_gate_callee(module, call.callee, call.function) or (
                self.graph.resolve(module, call.callee, call.function, class_name) in self.gates.gated_entries
            )
            if not gates:
                continue
            for position, parameter in enumerate(params):
                if any(_is_param(flow, handed.definition.qualname, parameter) for flow in call.flows):
                    return position, call.span
        return None


def _own_params(definition: FunctionDef) -> Tuple[str, ...]:
    """The parameters a caller fills, ``self`` and ``cls`` left out."""
    params = definition.params
    return params[1:] if definition.class_name and params[:1] in (("self",), ("cls",)) else params


def _is_param(flow: Flow, function: str, parameter: str) -> bool:
    if isinstance(flow, Either):
        return any(_is_param(option, function, parameter) for option in flow.options)
    return isinstance(flow, Param) and flow.function == function and flow.name == parameter
