"""Stage 3, the summaries: what a value reaching a tool is (raw, gated, unknown), followed backwards
across function boundaries: parameters through every invocation (read at the handing call for functions handed
on as values), return values through their ``return`` statements; and the trace of a raw value from its source,
hop by hop, for what is reported."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

from dispatchlint.analysis._names import ARGS_NAMES
from dispatchlint.analysis.facts import (
    WEAK_JSON,
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
)
from dispatchlint.analysis.link.callgraph import CallGraph
from dispatchlint.analysis.link.gates import Gates
from dispatchlint.analysis.link.model import (
    COMMAND_LINE_PARSERS,
    GATED,
    MAX_DEPTH,
    NOT_MODEL,
    RAW,
    RAW_WEAK,
    UNKNOWN,
    Invocation,
    Site,
    Step,
    Verdict,
    bind,
    combine,
    described,
    display_function,
)


class Taint:
    """Summaries of what values carry, computed on first use and memoised per parameter."""

    def __init__(self, graph: CallGraph, gates: Gates) -> None:
        self.graph = graph
        self.gates = gates
        #: The summary of each parameter: ``(function, parameter) -> verdict``, filled on first use.
        self._verdicts: Dict[Tuple[str, str], Verdict] = {}
        #: Whether some caller hands a parameter the model's text reply: ``(function, parameter) -> bool``.
        self._texts: Dict[Tuple[str, str], bool] = {}

    # ------------------------------------------------------------------------------------------ verdicts

    def evaluate(self, flow: Flow, module: ModuleFacts, function: str, depth: int = 0) -> Verdict:
        """Whether a value reaching a site is the model's raw arguments, gated arguments, or unknown."""
        if isinstance(flow, Raw):
            return RAW_WEAK if flow.why == WEAK_JSON else RAW
        if isinstance(flow, Either):
            return combine([self.evaluate(option, module, function, depth) for option in flow.options], every=True)
        if isinstance(flow, CallResult):
            class_name = self.graph.class_of(module, function)
            if flow.callee.rsplit(".", 1)[-1] in COMMAND_LINE_PARSERS:
                return NOT_MODEL
            if self.gates.is_gate_callee(module, flow.callee, function) and not flow.first_of_tuple:
                return GATED
            resolved = self.graph.resolve(module, flow.callee, function, class_name)
            if resolved is not None and resolved in self.gates.gated_entries and not flow.first_of_tuple:
                return GATED
            return self._returned_verdict(resolved, flow, module, function, depth)
        if isinstance(flow, Param):
            return self._param_verdict(module, flow, depth)
        return UNKNOWN

    def _returned_verdict(
        self, callee: Optional[str], flow: CallResult, module: ModuleFacts, function: str, depth: int
    ) -> Verdict:
        """What a project function gives back, judged from its ``return`` statements (``args = parse(call)``).
        A returned parameter stands for what this call passes for it."""
        found = self.graph.function(callee) if callee else None
        if found is None or depth > MAX_DEPTH:
            return UNKNOWN
        callee_module, definition = found
        verdicts = []
        for is_tuple, returned in definition.returns:
            if is_tuple != flow.first_of_tuple:
                continue
            if isinstance(returned, Param) and returned.function == definition.qualname:
                call = Call(function, flow.callee, flow.args, (), (), definition.span)
                bound = bind(call, definition, returned.name)
                verdicts.append(UNKNOWN if bound is None else self.evaluate(bound, module, function, depth + 1))
            else:
                verdicts.append(self.evaluate(returned, callee_module, definition.qualname, depth + 1))
        return combine(verdicts, every=True)

    def _param_verdict(self, module: ModuleFacts, flow: Param, depth: int) -> Verdict:
        qualified = f"{module.module}.{flow.function}"
        memo_key = (qualified, flow.name)
        if memo_key in self._verdicts:
            return self._verdicts[memo_key]
        found = self.graph.function(qualified)
        if found is None or depth > MAX_DEPTH:
            return UNKNOWN
        self._verdicts[memo_key] = UNKNOWN  # a cycle of calls says nothing
        definition = found[1]
        by_name = RAW_WEAK if flow.name in ARGS_NAMES else UNKNOWN
        verdicts = []
        for invocation in self.graph.invocations(qualified, definition):
            bound = bind(invocation.call, definition, flow.name)
            verdicts.append(UNKNOWN if bound is None else self._evaluate_passed(bound, invocation, depth + 1))
        # Callers decide when they can be read; where none can (no caller, or values this analysis cannot
        # follow), a parameter named like a tool call's arguments holds them as the model sent them.
        verdict = combine(verdicts, every=True) if verdicts else by_name
        if verdict == UNKNOWN and NOT_MODEL not in verdicts:
            verdict = by_name
        self._verdicts[memo_key] = verdict
        return verdict

    def _evaluate_passed(self, flow: Flow, invocation: Invocation, depth: int) -> Verdict:
        """What an invocation passes: a parameter of a receiver that was handed the function stands for what
        the handing call passed for it."""
        read, module, function = invocation.where_read(flow)
        return UNKNOWN if read is None else self.evaluate(read, module, function, depth)

    def site_verdict(self, module: ModuleFacts, function: str, flows: Sequence[Flow]) -> Verdict:
        return combine([self.evaluate(flow, module, function) for flow in flows], every=False)

    # ------------------------------------------------------------------------------------------ text protocols

    def parsed_tool_call(self, module: ModuleFacts, function: str, key: Flow, flows: Sequence[Flow]) -> bool:
        """A tool call the model wrote as text (``TOOL: search(query="x")``): the tool's name (``key``) and
        the arguments handed over come out of one parse of the model's text reply."""
        if not isinstance(key, Parsed) or not self.is_model_text(key.text, module, function, 0):
            return False
        return any(key in (flow.options if isinstance(flow, Either) else (flow,)) for flow in flows)

    def is_model_text(self, flow: Flow, module: ModuleFacts, function: str, depth: int) -> bool:
        """The value is the model's text reply, read here or handed in by some caller."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(flow, ModelText):
            return True
        if isinstance(flow, Parsed):
            return self.is_model_text(flow.text, module, function, depth + 1)
        if isinstance(flow, Either):
            return any(self.is_model_text(option, module, function, depth) for option in flow.options)
        if not isinstance(flow, Param):
            return False
        qualified = f"{module.module}.{flow.function}"
        memo_key = (qualified, flow.name)
        if memo_key not in self._texts:
            self._texts[memo_key] = False  # a cycle of calls says nothing
            self._texts[memo_key] = any(
                read is not None and self.is_model_text(read, read_module, read_function, depth + 1)
                for read, read_module, read_function in self._passed_reads(qualified, flow.name)
            )
        return self._texts[memo_key]

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

    def trace(self, site: Site, sink: str) -> Tuple[Step, ...]:
        """The path the model's arguments take to a site: where they come from, each call that hands them on,
        and the site itself (``sink``). Computed only for what is reported."""
        for function, flow in site.flows:
            path = self._explain(flow, site.module, function, 0, set())
            if path:
                return tuple(path) + (Step(site.module.path, site.span, sink),)
        return (Step(site.module.path, site.span, sink),)

    def call_trace(self, module: ModuleFacts, call: Call, sink: Step) -> Tuple[Step, ...]:
        """The trace of a call that hands raw arguments to a dispatching function (``site.bypasses``)."""
        flows = call.flows
        for flow in flows:
            path = self._explain(flow, module, call.function, 0, set())
            if path:
                return tuple(path) + (Step(module.path, call.span, "hands them to the dispatching function"), sink)
        return (Step(module.path, call.span, "hands them to the dispatching function"), sink)

    def _explain(
        self, flow: Flow, module: ModuleFacts, function: str, depth: int, seen: Set[Tuple[str, str]]
    ) -> List[Step]:
        """Steps from a source of raw arguments to ``flow`` (empty when it is not raw, or too far to follow)."""
        if depth > MAX_DEPTH:
            return []
        if isinstance(flow, Raw):
            where = flow.span or self._function_span(module, function)
            return [Step(module.path, where, f"source: the model's arguments (`{flow.why}`)")]
        if isinstance(flow, Either):
            for option in flow.options:
                path = self._explain(option, module, function, depth, seen)
                if path:
                    return path
            return []
        if isinstance(flow, Param):
            return self._explain_param(module, flow, depth, seen)
        if isinstance(flow, Parsed):
            path = self._explain_text(flow.text, module, function, depth + 1, seen)
            parse = Step(module.path, flow.at, "parsed into the tool's name and its arguments")
            return path + [parse] if path else []
        if isinstance(flow, CallResult) and not self.gates.is_gate_callee(module, flow.callee, function):
            for argument in flow.args:
                path = self._explain(argument, module, function, depth + 1, seen)
                if path and self.evaluate(flow, module, function) in (RAW, RAW_WEAK):
                    return path
        return []

    def _explain_param(self, module: ModuleFacts, flow: Param, depth: int, seen: Set[Tuple[str, str]]) -> List[Step]:
        qualified = f"{module.module}.{flow.function}"
        found = self.graph.function(qualified)
        if found is None or (qualified, flow.name) in seen:
            return []
        seen.add((qualified, flow.name))
        definition = found[1]
        for invocation in self.graph.invocations(qualified, definition):
            bound = bind(invocation.call, definition, flow.name)
            if bound is None or self._evaluate_passed(bound, invocation, depth + 1) not in (RAW, RAW_WEAK):
                continue
            step = Step(
                invocation.module.path,
                invocation.call.span,
                f"passed to {described(flow.function)} as `{flow.name}`",
            )
            read, module, function = invocation.where_read(bound)
            before = self._explain(read, module, function, depth + 1, seen) if read is not None else []
            if invocation.handed_for(bound):
                hops = [
                    Step(hop.module.path, hop.call.span, f"handed to `{display_function(hop.receiver.qualname)}`")
                    for hop in invocation.context
                ]
                return before + hops + [step]
            return before + [step]
        return []

    def _explain_text(
        self, flow: Flow, module: ModuleFacts, function: str, depth: int, seen: Set[Tuple[str, str]]
    ) -> List[Step]:
        """Steps from the model's text reply to ``flow`` (empty when it is not that text)."""
        if depth > MAX_DEPTH:
            return []
        if isinstance(flow, ModelText):
            where = flow.span or self._function_span(module, function)
            return [Step(module.path, where, "source: the model's text reply, a tool call written in it")]
        if isinstance(flow, Parsed):
            return self._explain_text(flow.text, module, function, depth + 1, seen)
        if isinstance(flow, Either):
            for option in flow.options:
                path = self._explain_text(option, module, function, depth, seen)
                if path:
                    return path
            return []
        if not isinstance(flow, Param):
            return []
        qualified = f"{module.module}.{flow.function}"
        found = self.graph.function(qualified)
        if found is None or (qualified, flow.name) in seen:
            return []
        seen.add((qualified, flow.name))
        for invocation in self.graph.invocations(qualified, found[1]):
            bound = bind(invocation.call, found[1], flow.name)
            read, read_module, read_function = invocation.where_read(bound) if bound is not None else (None, module, "")
            if read is None or not self.is_model_text(read, read_module, read_function, depth + 1):
                continue
            before = self._explain_text(read, read_module, read_function, depth + 1, seen)
            step = Step(
                invocation.module.path,
                invocation.call.span,
                f"passed to {described(flow.function)} as `{flow.name}`",
            )
            return before + [step]
        return []

    def _function_span(self, module: ModuleFacts, function: str) -> Span:
        found = self.graph.function(f"{module.module}.{function}") if function else None
        return found[1].span if found else Span(1, 1, 1, 1)
