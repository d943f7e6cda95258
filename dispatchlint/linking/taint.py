"""Stage 3, the summaries: what a value reaching a tool is (raw, gated, unknown), followed backwards
across function boundaries: parameters through every invocation (read at the handing call for functions handed
on as values), return values through their ``return`` statements; and the trace of a raw value from its source,
hop by hop, for what is reported.

The summaries are the least solution of one equation per parameter (what its invocations pass), per function
return (what its ``return`` statements give back) and per text parameter (whether some caller hands it the
model's text reply), solved to a fixpoint on demand: no depth cap, and the same answer whatever order the
modules, sites or calls are met in. A trace is a derivation of a site's verdict (within twice the fewest calls),
so it always starts at a source.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import astuple
from enum import Enum
from typing import Callable, DefaultDict, Dict, List, Optional, Sequence, Set, Tuple, TypeVar, Union

from dispatchlint import framework_models
from dispatchlint.indexing.facts import (
    WEAK_JSON,
    ClassDef,
    Call,
    CallResult,
    Either,
    Flow,
    ModelText,
    ModuleFacts,
    Param,
    Parsed,
    Raw,
    Span,
    FunctionDef,
)
from dispatchlint.linking.callgraph import CallGraph
from dispatchlint.linking.gates import Gates
from dispatchlint.linking.specification import LearnedSource, Specification
from dispatchlint.locations import Location
from dispatchlint.linking.model import (
    COMMAND_LINE_PARSERS,
    GATED,
    NOT_MODEL,
    RAW,
    RAW_WEAK,
    UNKNOWN,
    Invocation,
    Site,
    Verdict,
    bind,
    combine,
    described,
    display_function,
    named_like_arguments,
)


class Summary(str, Enum):
    """The three kinds of equation the summaries solve."""

    #: What a parameter of a function holds: the join of what its invocations pass.
    PARAMETER = "parameter"
    #: What a function gives back (its ``return`` statements other than a bare parameter of its own).
    RETURN = "return"
    #: Whether some invocation hands a parameter the model's text reply.
    TEXT = "text"


#: One unknown of the equations: ``(kind, qualified function, parameter)``; for a return, the parameter slot
#: says which value (``"value"`` or ``"first of tuple"``).
Key = Tuple[Summary, str, str]
#: A value not computed yet, or part of a cycle of calls that nothing outside feeds.
BOTTOM = None
Value = Union[Verdict, bool, None]
_T = TypeVar("_T")

_RAW_VERDICTS = (RAW, RAW_WEAK)


def is_record(definition: ClassDef) -> bool:
    """A class whose instances only hold what they are built from (see ``framework_models.RECORD_BASES``)."""
    bases = {base.rpartition(".")[2] for base in definition.bases}
    decorators = {ref.target.partition("(")[0].rpartition(".")[2] for ref in definition.decorators}
    return bool(definition.fields) and bool(
        bases & framework_models.RECORD_BASES or decorators & framework_models.RECORD_DECORATORS
    )


def join(verdicts: Sequence[Optional[Verdict]]) -> Optional[Verdict]:
    """``combine(..., every=True)`` of the verdicts known so far: a value not computed yet takes no part (the
    least fixpoint starts below every verdict); all unknown yet is still unknown."""
    known = [verdict for verdict in verdicts if verdict is not None]
    if not known:
        return BOTTOM if verdicts else UNKNOWN
    return combine(known, every=True)


class Fixpoint:
    """A demand-driven worklist solver (each unknown is computed once it is first asked for, and again whenever
    an unknown it read rises), over equations that only ever make values rise, so its answer is their least
    solution, whatever the order of the questions. A cycle that nothing outside feeds ends as ``UNKNOWN``."""

    def __init__(self, equation: Callable[[Key], Value]) -> None:
        self._equation = equation
        self.values: Dict[Key, Value] = {}
        self._readers: DefaultDict[Key, Set[Key]] = defaultdict(set)
        self._current: Optional[Key] = None
        self._pending: List[Key] = []
        self._queued: Set[Key] = set()
        #: Unknowns met since the last time everything was solved: the only ones that can still be at the bottom.
        self._met: List[Key] = []

    def get(self, key: Key) -> Value:
        """The value known so far; an unknown not met before starts at the bottom and is queued, so that solving
        never recurses, however long the chains of calls (what reads it is solved again when it rises)."""
        if self._current is not None:
            self._readers[key].add(self._current)
        if key not in self.values:
            self.values[key] = False if key[0] is Summary.TEXT else BOTTOM
            self._met.append(key)
            self._queue(key)
        return self.values[key]

    def _queue(self, key: Key) -> None:
        if key not in self._queued:
            self._queued.add(key)
            heapq.heappush(self._pending, key)

    def answer(self, question: Callable[[], _T]) -> _T:
        """The value of an expression over the unknowns, once every unknown it reads is solved."""
        while True:
            before = len(self.values)
            answer = question()
            if not self._settle() and len(self.values) == before:
                return answer

    def _compute(self, key: Key) -> None:
        self._current = key
        try:
            value = self._equation(key)
        finally:
            self._current = None
        if value != self.values[key]:
            self.values[key] = value
            for reader in self._readers[key]:
                self._queue(reader)

    def _settle(self) -> bool:
        """Solve until nothing rises; whether anything was left to solve. Unknowns still at the bottom then are
        cycles of calls with no outside input: they say nothing (``UNKNOWN``), and what reads them rises from
        there."""
        worked = False
        while True:
            while self._pending:
                key = heapq.heappop(self._pending)
                self._queued.discard(key)
                self._compute(key)
                worked = True
            cycles = sorted(key for key in self._met if self.values[key] is BOTTOM)
            self._met = []
            if not cycles:
                return worked
            for key in cycles:
                self.values[key] = UNKNOWN
                self._queue(key)


class _Search:
    """One depth of the search for a trace: how many calls it may still go back through, the parameters on
    the way (a cycle is not followed twice), and whether the depth cut anything short."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.path: Set[Tuple[str, str]] = set()
        self.cut = False

    def enter(self, key: Tuple[str, str]) -> bool:
        if key in self.path:
            return False
        if self.budget == 0:
            self.cut = True
            return False
        self.path.add(key)
        self.budget -= 1
        return True

    def leave(self, key: Tuple[str, str]) -> None:
        self.path.discard(key)
        self.budget += 1


class Taint:
    """The summaries of what values carry, solved to a fixpoint as sites ask for them."""

    def __init__(self, graph: CallGraph, gates: Gates, specification: Specification) -> None:
        self.graph = graph
        self.gates = gates
        self.specification = specification
        self._solver = Fixpoint(self._equation)

    # ------------------------------------------------------------------------------------------ verdicts

    def evaluate(self, flow: Flow, module: ModuleFacts, function: str) -> Verdict:
        """Whether a value reaching a site is the model's raw arguments, gated arguments, or unknown."""
        verdict = self._solver.answer(lambda: self._evaluate(flow, module, function))
        return UNKNOWN if verdict is None else verdict

    def site_verdict(self, module: ModuleFacts, function: str, flows: Sequence[Flow]) -> Verdict:
        """Any gated value guards a call; otherwise the worst of what it passes."""
        return combine([self.evaluate(flow, module, function) for flow in flows], every=False)

    def may_carry_gated(self, flow: Flow, module: ModuleFacts, function: str) -> bool:
        """Some path gives the value the gate's output (``args = gate(...)``, then perhaps a hook's rewrite)."""
        if isinstance(flow, Either):
            return any(self.may_carry_gated(option, module, function) for option in flow.options)
        return self.evaluate(flow, module, function) is GATED

    def _evaluate(self, flow: Flow, module: ModuleFacts, function: str) -> Optional[Verdict]:
        if isinstance(flow, Raw):
            return RAW_WEAK if flow.why == WEAK_JSON else RAW
        if isinstance(flow, Either):
            return join([self._evaluate(option, module, function) for option in flow.options])
        if isinstance(flow, CallResult):
            if flow.callee.rsplit(".", 1)[-1] in COMMAND_LINE_PARSERS:
                return NOT_MODEL
            if self._gates_call(flow, module, function):
                return GATED
            if flow.in_place:
                return self._evaluate(flow.args[0], module, function)
            return self._returned(flow, module, function)
        if isinstance(flow, Param):
            verdict = self._solver.get((Summary.PARAMETER, f"{module.module}.{flow.function}", flow.name))
            assert not isinstance(verdict, bool)
            return verdict
        return UNKNOWN

    def _gates_call(self, flow: CallResult, module: ModuleFacts, function: str) -> bool:
        """The call is a gate, or an entry every path of which runs one (not the first item of what it returns)."""
        if flow.first_of_tuple:
            return False
        if self.gates.is_gate_callee(module, flow.callee, function):
            return True
        return self._callee(flow, module, function) in self.gates.gated_entries

    def _callee(self, flow: CallResult, module: ModuleFacts, function: str) -> Optional[str]:
        return self.graph.resolve(module, flow.callee, function, self.graph.class_of(module, function))

    def _returned(self, flow: CallResult, module: ModuleFacts, function: str) -> Optional[Verdict]:
        """What a project function gives back (``args = parse(call)``): what its ``return`` statements return,
        a returned parameter of its own standing for what this call passes for it."""
        callee = self._callee(flow, module, function)
        found = self.graph.function(callee) if callee else None
        if found is None:
            return self._record(flow, module, function, callee)
        definition = found[1]
        verdicts: List[Optional[Verdict]] = []
        others = False
        for is_tuple, returned in definition.returns:
            if is_tuple != flow.first_of_tuple:
                continue
            if isinstance(returned, Param) and returned.function == definition.qualname:
                call = Call(function, flow.callee, flow.args, (), (), definition.span)
                bound = bind(call, definition, returned.name)
                verdicts.append(UNKNOWN if bound is None else self._evaluate(bound, module, function))
            else:
                others = True
        if others:  # what the other ``return`` statements give back, summarised once for every caller
            slot = "first of tuple" if flow.first_of_tuple else "value"
            other = self._solver.get((Summary.RETURN, f"{found[0].module}.{definition.qualname}", slot))
            assert not isinstance(other, bool)
            verdicts.append(other)
        return join(verdicts) if verdicts else UNKNOWN

    def _record(self, flow: CallResult, module: ModuleFacts, function: str, callee: Optional[str]) -> Optional[Verdict]:
        """A project record built from the model's arguments (``Action(name=..., kwargs=json.loads(arguments))``)
        carries them: what is read from it later is a piece of them. Gated or weak pieces make no record gated."""
        located = self.graph.symbols.class_def(callee) if callee else None
        if located is None or not is_record(located[0]):
            return UNKNOWN
        verdicts = [self._evaluate(argument, module, function) for argument in flow.args]
        return join([verdict if verdict in (None, RAW) else UNKNOWN for verdict in verdicts])

    def _equation(self, key: Key) -> Value:
        kind, qualified, name = key
        if kind is Summary.PARAMETER:
            return self._parameter_equation(qualified, name)
        if kind is Summary.RETURN:
            return self._return_equation(qualified, name == "first of tuple")
        return self._text_equation(qualified, name)

    def _parameter_equation(self, qualified: str, name: str) -> Optional[Verdict]:
        found = self.graph.function(qualified)
        if found is None:
            return UNKNOWN
        if f"{qualified}:{name}" in self.graph.config.sources:
            return RAW
        definition = found[1]
        by_name = RAW_WEAK if named_like_arguments(definition, name) else UNKNOWN
        verdicts: List[Optional[Verdict]] = []
        invocations = self.graph.invocations(qualified, definition)
        for invocation in invocations:
            bound = bind(invocation.call, definition, name)
            verdicts.append(UNKNOWN if bound is None else self._passed(bound, invocation))
        if not verdicts:
            if self.specification.source(qualified, name) is not None:
                return RAW
            return NOT_MODEL if self.graph.handed_to_command_line(qualified) else by_name
        # Callers decide when they can be read; where none can (values this analysis cannot follow), a
        # parameter named like a tool call's arguments holds them as the model sent them, unless it is the
        # ``**kwargs`` every caller fills keyword by keyword: a mapping each caller builds itself.
        verdict = join(verdicts)
        built_by_callers = name == definition.keywords_param and not any(i.call.star for i in invocations)
        if verdict == UNKNOWN and NOT_MODEL not in verdicts and not built_by_callers:
            return by_name
        return verdict

    def _return_equation(self, qualified: str, first_of_tuple: bool) -> Optional[Verdict]:
        found = self.graph.function(qualified)
        if found is None:
            return UNKNOWN
        module, definition = found
        returned = [
            flow
            for is_tuple, flow in definition.returns
            if is_tuple == first_of_tuple and not (isinstance(flow, Param) and flow.function == definition.qualname)
        ]
        return join([self._evaluate(flow, module, definition.qualname) for flow in returned]) if returned else UNKNOWN

    def _passed(self, flow: Flow, invocation: Invocation) -> Optional[Verdict]:
        """What an invocation passes: a parameter of a receiver that was handed the function stands for what
        the handing call passed for it."""
        read, module, function = invocation.where_read(flow)
        return UNKNOWN if read is None else self._evaluate(read, module, function)

    # ------------------------------------------------------------------------------------------ text protocols

    def parsed_tool_call(self, module: ModuleFacts, function: str, key: Flow, flows: Sequence[Flow]) -> bool:
        """A tool call the model wrote as text (``TOOL: search(query="x")``): the tool's name (``key``) and
        the arguments handed over come out of one parse of the model's text reply."""
        if not isinstance(key, Parsed) or not self.is_model_text(key.text, module, function):
            return False
        return any(key in (flow.options if isinstance(flow, Either) else (flow,)) for flow in flows)

    def is_model_text(self, flow: Flow, module: ModuleFacts, function: str) -> bool:
        """The value is the model's text reply, read here or handed in by some caller."""
        return self._solver.answer(lambda: self._is_text(flow, module, function))

    def _is_text(self, flow: Flow, module: ModuleFacts, function: str) -> bool:
        if isinstance(flow, ModelText):
            return True
        if isinstance(flow, Parsed):
            return self._is_text(flow.text, module, function)
        if isinstance(flow, Either):
            return any(self._is_text(option, module, function) for option in flow.options)
        if not isinstance(flow, Param):
            return False
        return self._solver.get((Summary.TEXT, f"{module.module}.{flow.function}", flow.name)) is True

    def _text_equation(self, qualified: str, parameter: str) -> bool:
        return any(
            read is not None and self._is_text(read, read_module, read_function)
            for read, read_module, read_function in self._passed_reads(qualified, parameter)
        )

    def _passed_reads(self, qualified: str, parameter: str) -> List[Tuple[Optional[Flow], ModuleFacts, str]]:
        """What each invocation of a function passes for ``parameter``, and where that is read."""
        found = self.graph.function(qualified)
        if found is None:
            return []
        definition = found[1]
        reads = []
        for invocation in self.graph.invocations(qualified, definition):
            bound = bind(invocation.call, definition, parameter)
            if bound is not None:
                reads.append(invocation.where_read(bound))
        return reads

    # ------------------------------------------------------------------------------------------ traces

    def trace(self, site: Site, sink: str) -> Tuple[Location, ...]:
        """The path the model's arguments take to a site: where they come from, each call that hands them on,
        and the site itself (``sink``). Empty when no source can be shown: then there is nothing to report."""
        path = self._derivation([(site.module, function, flow) for function, flow in site.flows])
        return tuple(path) + (Location(site.module.path, site.span, sink),) if path else ()

    def call_trace(self, module: ModuleFacts, call: Call, sink: Location) -> Tuple[Location, ...]:
        """The trace of a call that hands raw arguments to a dispatching function (``site.bypasses``)."""
        path = self._derivation([(module, call.function, flow) for flow in call.flows])
        hand = Location(module.path, call.span, "hands them to the dispatching function")
        return tuple(path) + (hand, sink) if path else ()

    def _derivation(self, flows: Sequence[Tuple[ModuleFacts, str, Flow]]) -> List[Location]:
        """A derivation of the first raw flow with at most twice the fewest calls between its source and the
        site: searched within a bound on the calls that doubles until a search finds one or is not cut short (a
        cycle of calls never hides the way in, and a path of a thousand calls costs a few searches)."""
        budget = 1
        while True:
            search = _Search(budget)
            for module, function, flow in flows:
                found = self._explain(flow, module, function, search)
                if found:
                    return found
            if not search.cut:
                return []
            budget *= 2

    def _explain(self, flow: Flow, module: ModuleFacts, function: str, search: _Search) -> List[Location]:
        """Steps from a source of raw arguments to ``flow``, through at most ``budget`` calls (empty when it is
        not raw, or comes from further away)."""
        if isinstance(flow, Raw):
            where = flow.span or self._function_span(module, function)
            return [Location(module.path, where, f"source: the model's arguments (`{flow.why}`)")]
        if isinstance(flow, Either):
            for option in flow.options:
                found = self._explain(option, module, function, search)
                if found:
                    return found
            return []
        if isinstance(flow, Param):
            return self._explain_param(module, flow, search)
        if isinstance(flow, Parsed):
            found = self._explain_text(flow.text, module, function, search)
            parse = Location(module.path, flow.at, "parsed into the tool's name and its arguments")
            return found + [parse] if found else []
        if isinstance(flow, CallResult) and self.evaluate(flow, module, function) in _RAW_VERDICTS:
            if flow.in_place:
                return self._explain(flow.args[0], module, function, search)
            if not self.gates.is_gate_callee(module, flow.callee, function):
                for argument in flow.args:
                    found = self._explain(argument, module, function, search)
                    if found:
                        return found
            return self._explain_returned(flow, module, function, search)
        return []

    def _explain_returned(
        self, flow: CallResult, module: ModuleFacts, function: str, search: _Search
    ) -> List[Location]:
        """A project function that returns raw arguments it reads itself (``return json.loads(call.arguments)``)."""
        callee = self._callee(flow, module, function)
        found = self.graph.function(callee) if callee else None
        key = (callee or "", "<return>")
        if found is None or not search.enter(key):
            return []
        callee_module, definition = found
        try:
            return self._explain_returns(flow, module, function, callee_module, definition, search)
        finally:
            search.leave(key)

    def _explain_returns(
        self,
        flow: CallResult,
        module: ModuleFacts,
        function: str,
        callee_module: ModuleFacts,
        definition: FunctionDef,
        search: _Search,
    ) -> List[Location]:
        for is_tuple, returned in definition.returns:
            if is_tuple != flow.first_of_tuple or (
                isinstance(returned, Param) and returned.function == definition.qualname
            ):
                continue
            if self.evaluate(returned, callee_module, definition.qualname) not in _RAW_VERDICTS:
                continue
            before = self._explain(returned, callee_module, definition.qualname, search)
            if before:
                step = Location(
                    module.path,
                    self._function_span(module, function),
                    f"returned by `{display_function(definition.qualname)}`",
                )
                return before + [step]
        return []

    def _explain_param(self, module: ModuleFacts, flow: Param, search: _Search) -> List[Location]:
        qualified = f"{module.module}.{flow.function}"
        found = self.graph.function(qualified)
        if f"{qualified}:{flow.name}" in self.graph.config.sources:
            where = found[1].span if found else self._function_span(module, flow.function)
            return [
                Location(module.path, where, f"source: `{flow.name}`, the model's arguments (configured in `sources`)")
            ]
        learned = self._learned_source(qualified, flow.name)
        if learned is not None:
            return [
                Location(
                    module.path,
                    found[1].span if found else self._function_span(module, flow.function),
                    f"source: `{flow.name}`, what `{display_function(learned.role.receiver)}` calls its "
                    f"`{learned.role.parameter}` with: the model's arguments, which "
                    f"`{display_function(learned.gated_by)}` hands the gate "
                    f"({learned.module.path}:{learned.span.line})",
                )
            ]
        if found is None or not search.enter((qualified, flow.name)):
            return []
        definition = found[1]
        try:
            for invocation in self._ordered(self.graph.invocations(qualified, definition)):
                bound = bind(invocation.call, definition, flow.name)
                if bound is None:
                    continue
                read, read_module, read_function = invocation.where_read(bound)
                if read is None or self.evaluate(read, read_module, read_function) not in _RAW_VERDICTS:
                    continue
                before = self._explain(read, read_module, read_function, search)
                if not before:
                    continue
                step = _passed_step(invocation, flow)
                if invocation.handed_for(bound):
                    hops = [
                        Location(
                            hop.module.path, hop.call.span, f"handed to `{display_function(hop.receiver.qualname)}`"
                        )
                        for hop in invocation.context
                    ]
                    return before + hops + [step]
                return before + [step]
            return self._named_source(module, flow, definition)
        finally:
            search.leave((qualified, flow.name))

    def _learned_source(self, qualified: str, parameter: str) -> Optional[LearnedSource]:
        """What the project's gated path says a parameter holds, where no call of its function can be followed
        (where one can, that call says what it passes)."""
        learned = self.specification.source(qualified, parameter)
        found = self.graph.function(qualified) if learned is not None else None
        if found is None or self.graph.invocations(qualified, found[1]):
            return None
        return learned

    def _named_source(self, module: ModuleFacts, flow: Param, definition: FunctionDef) -> List[Location]:
        """A parameter named like a tool call's arguments whose invocations say nothing (none in the project, or
        none this analysis can read): it holds them as the code that calls it hands them over."""
        if not named_like_arguments(definition, flow.name):
            return []
        if self.evaluate(flow, module, flow.function) is not RAW_WEAK:
            return []
        return [
            Location(
                module.path,
                definition.span,
                f"source: `{flow.name}` of {described(flow.function)}, a tool call's arguments as its callers "
                "outside what can be followed hand them over",
            )
        ]

    @staticmethod
    def _ordered(invocations: Sequence[Invocation]) -> List[Invocation]:
        """Invocations in the order of their places, so a trace does not depend on the order modules are read."""
        return sorted(invocations, key=lambda invocation: (invocation.module.path, astuple(invocation.call.span)))

    def _explain_text(self, flow: Flow, module: ModuleFacts, function: str, search: _Search) -> List[Location]:
        """Steps from the model's text reply to ``flow`` (empty when it is not that text)."""
        if isinstance(flow, ModelText):
            where = flow.span or self._function_span(module, function)
            return [Location(module.path, where, "source: the model's text reply, a tool call written in it")]
        if isinstance(flow, Parsed):
            return self._explain_text(flow.text, module, function, search)
        if isinstance(flow, Either):
            for option in flow.options:
                found = self._explain_text(option, module, function, search)
                if found:
                    return found
            return []
        if not isinstance(flow, Param):
            return []
        qualified = f"{module.module}.{flow.function}"
        located = self.graph.function(qualified)
        if located is None or not search.enter((qualified, flow.name)):
            return []
        try:
            for invocation in self._ordered(self.graph.invocations(qualified, located[1])):
                bound = bind(invocation.call, located[1], flow.name)
                read, read_module, read_function = (
                    invocation.where_read(bound) if bound is not None else (None, module, "")
                )
                if read is None or not self.is_model_text(read, read_module, read_function):
                    continue
                before = self._explain_text(read, read_module, read_function, search)
                if not before:
                    continue
                step = _passed_step(invocation, flow)
                return before + [step]
            return []
        finally:
            search.leave((qualified, flow.name))

    def _function_span(self, module: ModuleFacts, function: str) -> Span:
        found = self.graph.function(f"{module.module}.{function}") if function else None
        return found[1].span if found else Span(1, 1, 1, 1)


def _passed_step(invocation: Invocation, flow: Param) -> Location:
    """The trace step of a call that hands a parameter what it holds."""
    return Location(
        invocation.module.path, invocation.call.span, f"passed to {described(flow.function)} as `{flow.name}`"
    )
