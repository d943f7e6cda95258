"""What the link stages share: the linked records (tables, entries, sites, invocations), verdicts, the names
the analysis knows (gates, framework packages, tool entries) and small helpers over calls and flows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Dict, List, Optional, Sequence, Set, Tuple

from dispatchlint.indexing.annotations import ARGS_NAMES
from dispatchlint.indexing.facts import (
    WEAK_JSON,
    Call,
    CallResult,
    ChainArm,
    Either,
    Flow,
    FunctionDef,
    ModuleFacts,
    NameChain,
    Param,
    RETURNED_TABLE,
    Raw,
    SiteKind,
    Span,
    TableDef,
    ValueKind,
)
from dispatchlint.framework_models import (
    COMMAND_LINE_PARSERS as COMMAND_LINE_PARSERS,
    COMMAND_LINE_REGISTRATIONS as COMMAND_LINE_REGISTRATIONS,
    FRAMEWORK_PACKAGES as FRAMEWORK_PACKAGES,
    INSPECTING_METHOD as INSPECTING_METHOD,
    TOOL_ENTRY_METHODS as TOOL_ENTRY_METHODS,
    TOOLISH as TOOLISH,
)
from dispatchlint.runtime import contract


class Verdict(str, Enum):
    """What a value reaching a tool is, as far as the model's arguments go."""

    #: Repaired by a gate on the way.
    GATED = "gated"
    #: The model's arguments, seen flowing from the wire (``json.loads``, ``tool_call.function.arguments``).
    RAW = "raw"
    #: Probably the model's arguments (a parameter named like them whose callers cannot be followed, or the
    #: ``json.loads`` of some string): raw only with corroborating evidence that the path runs a tool.
    RAW_WEAK = "raw-weak"
    #: Nothing can be said.
    UNKNOWN = "unknown"
    #: Known not to be the model's arguments (an argparse namespace): a parameter fed only this is not raw,
    #: whatever its name.
    NOT_MODEL = "not-model"


GATED, RAW, RAW_WEAK, UNKNOWN, NOT_MODEL = (
    Verdict.GATED,
    Verdict.RAW,
    Verdict.RAW_WEAK,
    Verdict.UNKNOWN,
    Verdict.NOT_MODEL,
)

DEFAULT_GATE = "coerce_tool_args"
RUNTIME_PACKAGE = contract.PACKAGE
SANITIZER_NAME = re.compile(r"un_?rename|unsaniti[sz]|desaniti[sz]|restore\w*name|original_name", re.IGNORECASE)
#: Parameter names that make a function look like a tool executor (``def _plan(agent, args, ctx)``); not the
#: generic ``kwargs``/``params`` that any factory takes.
EXECUTOR_ARGS = ARGS_NAMES - {"kwargs", "params"}
#: Annotations under which a parameter named like a tool call's arguments holds something else: the words of a
#: command line (``args: List[str]``, ``argv: Sequence[str]``) or their parse (``args: argparse.Namespace``).
_NOT_AN_ARGUMENT_MAPPING = re.compile(
    r"^['\"]?(?:typing\.)?(?:List|list|Sequence|Tuple|tuple|Iterable|Set|set|FrozenSet|frozenset)\b"
    r"|(?:^|\.)Namespace['\"]?$"
)


def named_like_arguments(definition: FunctionDef, name: str) -> bool:
    """A parameter named like a tool call's arguments (``args``, ``arguments``, ``kwargs``) whose annotation does
    not say it holds something else: a tool call's arguments are a mapping (or the JSON text of one)."""
    if name not in ARGS_NAMES:
        return False
    annotation = dict(definition.annotations).get(name)
    return annotation is None or not _NOT_AN_ARGUMENT_MAPPING.search(annotation.strip())


HANDLER_KEYWORDS = ("handler", "fn", "func", "function", "executor", "callback", "implementation")


@dataclass(frozen=True)
class LinkedEntry:
    """One tool in a table, wherever it was put there (literal, fill, decorator)."""

    key: Optional[str]
    module: ModuleFacts
    span: Span
    executors: Tuple[str, ...]
    wrapped: bool
    #: The value is a class (an argument model or a tool class), not a function.
    is_class: bool = False
    #: For a tool class, the methods that run the tool (``Search.call``): its executors once instantiated.
    methods: Tuple[str, ...] = ()


@dataclass
class LinkedTable:
    qualname: str
    module: ModuleFacts
    definition: TableDef
    entries: List[LinkedEntry] = field(default_factory=list)
    wrapped: bool = False
    configured: bool = False
    #: Built as ``{t.name: t for t in tools}``: the values are tool objects, whose calls this cannot judge.
    holds_objects: bool = False

    @property
    def display_name(self) -> str:
        definition = self.definition
        if definition.name == RETURNED_TABLE:  # built in a ``return``: known by the call that returns it
            return f"{display_function(definition.owner)}()"
        if definition.scope in ("class", "instance"):
            return f"{definition.owner}.{definition.name}"
        return definition.name

    @property
    def keys(self) -> Set[str]:
        return {entry.key for entry in self.entries if entry.key is not None}


@dataclass(frozen=True)
class Site:
    """A place where a tool runs, with the verdict on what it is handed. Each kind of place is a subclass with
    the facts only it has: :class:`TableSite`, :class:`ChainSite`, :class:`CallSite`."""

    module: ModuleFacts
    function: str
    span: Span
    kind: SiteKind
    key: str
    tool_like: bool
    verdict: Verdict
    #: What the site hands the tool: ``(function the flow is read in, flow)``, for the finding's trace.
    flows: Tuple[Tuple[str, Flow], ...]
    #: Independent evidence that this is a tool path (not only a parameter's name).
    corroborated: bool

    @property
    def method(self) -> str:
        """The method of a looked-up tool object that the site calls (``tool.call(ctx, **args)``), if any."""
        return ""

    @property
    def reaches_past(self) -> bool:
        """The call reaches past a tool object's own validation (``tool.func(...)``, ``tool._run(...)``)."""
        return self.kind is SiteKind.BYPASS

    @property
    def unguarded(self) -> bool:
        """A tool runs here with the model's arguments as they arrived."""
        return self.tool_like and (self.verdict == RAW or (self.verdict == RAW_WEAK and self.corroborated))


@dataclass(frozen=True)
class TableSite(Site):
    """A tool taken from a table (or a registry, or what a resolver returns) or built in place, then run: called,
    handed to a runner, a method of it called, or reached past (``kind`` says which, ``via`` with what)."""

    #: None for a tool object built at the site, found by a linear scan of a list, or known by its declared type.
    table: Optional[LinkedTable]
    #: The runner, method or attribute of ``kind`` (``submit``, ``call``, ``_run``).
    via: str
    #: When some callers of the dispatching function pass gated arguments and others raw ones, the raw calls
    #: (module, call): those are the bypasses, not the dispatch itself.
    bypasses: Tuple[Tuple[ModuleFacts, Call], ...] = ()
    #: The tool object is built at the site by calling this (``SearchTool()._run(...)``), or declared this type.
    constructed: str = ""
    #: The method called runs a callable the object holds with its arguments, unvalidated: a sink of its own,
    #: whether or not the project gates that method elsewhere.
    sink_method: bool = False
    #: The method that registered the bare function ``via`` with the registry this site calls through.
    registered_by: str = ""
    #: The resolver that returned the tool for its name where no table behind it can be seen
    #: (``registry.get_tool_function``).
    resolver: str = ""
    #: The site is in a method of the tool's own class, which runs the callable its object holds
    #: (``self.fn(**json.loads(call.args))``): no lookup, the object is the tool.
    own_callable: bool = False

    @property
    def method(self) -> str:
        return self.via if self.kind is SiteKind.METHOD else ""


@dataclass(frozen=True)
class ChainSite(Site):
    """An arm of an if/elif chain on the tool's name that runs its tools itself, next to a fallback that hands
    the other tools to the gated entry."""

    chain: NameChain
    arm: ChainArm
    #: The gated entry the fallback calls (qualified), and that call.
    fallback: str
    fallback_span: Span


@dataclass(frozen=True)
class CallSite(Site):
    """A tool's executor called by name with the wire-parsed arguments (``DIRECT``), or a tool's name and those
    arguments handed to a function bound at run time (``UNSEEN``); ``key`` names the tools."""


def table_of(site: Site) -> Optional[LinkedTable]:
    """The table a site reads its tool from, if any."""
    return site.table if isinstance(site, TableSite) else None


@dataclass(frozen=True)
class Hop:
    """A call that hands a function on to a receiver (``run_middleware(name, args, lambda a: fn(a))``)."""

    module: ModuleFacts
    call: Call
    receiver: FunctionDef


@dataclass(frozen=True)
class Invocation:
    """A call that runs a function: a direct call, or a call of the parameter it was handed to.

    ``context`` is set for the latter: the calls that handed the function on, outermost first, each with the
    receiver's definition, so that what a receiver passes from its own parameters is read at the call that
    handed it the function, not at every call of the receiver (``run_middleware(name, gated, lambda a: fn(a))``
    and ``run_middleware(name, raw, ...)`` differ, however many receivers hand the function on).
    """

    module: ModuleFacts
    call: Call
    context: Tuple[Hop, ...] = ()

    def handed_for(self, flow: Flow) -> bool:
        """The flow is a parameter of the receiver that was handed the function: the handing call says what it
        is, not the receiver's other callers."""
        return bool(self.context) and _parameter_of(flow, self.context[-1].receiver)

    def where_read(self, flow: Flow) -> Tuple[Optional[Flow], ModuleFacts, str]:
        """Where a flow this invocation passes is read: at the handing calls, from the innermost out, while it
        is a parameter of their receivers (None when a call passes nothing there), or else where it is."""
        read: Optional[Flow] = flow
        module, function = self.module, self.call.function
        for hop in reversed(self.context):
            if read is None or not _parameter_of(read, hop.receiver):
                break
            assert isinstance(read, Param)
            read, module, function = bind(hop.call, hop.receiver, read.name), hop.module, hop.call.function
        return read, module, function


def _parameter_of(flow: Flow, receiver: FunctionDef) -> bool:
    return isinstance(flow, Param) and base_name(flow.function) == base_name(receiver.qualname)


def combine(verdicts: Sequence[Verdict], every: bool) -> Verdict:
    """Join verdicts. ``every``: all paths must be gated (alternatives); else any gated value guards a call."""
    if not verdicts:
        return UNKNOWN
    if every and all(verdict == GATED for verdict in verdicts):
        return GATED
    if not every and GATED in verdicts:
        return GATED
    for verdict in (RAW, RAW_WEAK):
        if verdict in verdicts:
            return verdict
    return UNKNOWN


def within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (inner.end_line, inner.end_column) <= (
        outer.end_line,
        outer.end_column,
    )


def position_of(call: Call, definition: FunctionDef, parameter: str) -> Optional[int]:
    """The positional index at which ``call`` passes ``parameter`` (a method called as ``x.m()`` skips self)."""
    params = list(definition.params)
    if parameter not in params:
        return None
    index = params.index(parameter)
    bound = "." in call.callee or definition.name == "__init__"  # x.m(...) and Class(...) pass self implicitly
    if definition.class_name and params[0] in ("self", "cls") and bound:
        index -= 1
    return index if index >= 0 else None


def bind(call: Call, definition: FunctionDef, parameter: str) -> Optional[Flow]:
    """The flow a call passes for ``parameter`` of ``definition``."""
    if parameter and parameter == definition.keywords_param:
        # ``**kwargs`` holds what the call passes by keyword beyond the named parameters, and what it unpacks
        named = set(definition.params)
        gathered = tuple(flow for name, flow in call.keywords if name not in named) + call.star
        return (Either(gathered) if len(gathered) > 1 else gathered[0]) if gathered else None
    for name, flow in call.keywords:
        if name == parameter:
            return flow
    index = position_of(call, definition, parameter)
    if index is not None and index < len(call.positional):
        return call.positional[index]
    if index is not None and call.star:
        return Either(call.star) if len(call.star) > 1 else call.star[0]
    return None


def bound_literal(
    literals: Dict[str, Tuple[str, str]], definition: FunctionDef, parameter: str, call: Call, kind: str
) -> Optional[str]:
    """The literal (string or dotted name) a call passes for ``parameter``."""
    index = position_of(call, definition, parameter)
    for slot in (parameter, str(index)):
        found = literals.get(slot)
        if found is not None and found[0] == kind:
            return found[1]
    return None


def reads_as_model_arguments(flow: Flow, parsed: bool = False) -> bool:
    """What a call hands on reads as the model's arguments: wire-parsed, or a parameter named like them;
    ``parsed``: any ``json.loads`` result too (a string of unknown origin, parsed)."""
    if isinstance(flow, Raw):
        return parsed or flow.why != WEAK_JSON
    if isinstance(flow, Param):
        return flow.name in ARGS_NAMES
    if isinstance(flow, Either):
        return any(reads_as_model_arguments(option, parsed) for option in flow.options)
    if isinstance(flow, CallResult):
        return any(reads_as_model_arguments(argument, parsed) for argument in flow.args)
    return False


def wire_parsed_here(flow: Flow) -> bool:
    """The value comes from the wire within the function itself (not through a parameter)."""
    if isinstance(flow, Raw):
        return True
    if isinstance(flow, Either):
        return any(wire_parsed_here(option) for option in flow.options)
    return False


def mentions_param(flow: Flow, function: str) -> bool:
    if isinstance(flow, Param):
        return True
    if isinstance(flow, Either):
        return any(mentions_param(option, function) for option in flow.options)
    if isinstance(flow, CallResult):
        return any(mentions_param(arg, function) for arg in flow.args)
    return False


def parent_of(qualname: str) -> str:
    return qualname.rpartition(".")[0]


_REDEFINITION = re.compile(r"@\d+")


def base_name(qualified: str) -> str:
    """A function's name without the ``@LINE`` of a redefinition: every ``def _execute`` of a chain's arms is
    called by the same ``_execute(...)``."""
    return _REDEFINITION.sub("", qualified) if "@" in qualified else qualified


def param_at(call: Call, definition: FunctionDef, slot: str) -> Optional[str]:
    """The parameter of ``definition`` that ``call`` fills at ``slot`` (a position or a keyword)."""
    if not slot.isdigit():
        return slot if slot in definition.params else None
    params = list(definition.params)
    index = int(slot)
    bound = "." in call.callee or definition.name == "__init__"
    if definition.class_name and params and params[0] in ("self", "cls") and bound:
        index += 1
    return params[index] if index < len(params) else None


def stored_attributes(module: ModuleFacts, definition: FunctionDef, parameter: str) -> List[str]:
    """Instance attributes a method stores a parameter in (``self._run_fn = run``)."""
    return [
        alias.name
        for alias in module.aliases
        if alias.function == definition.qualname
        and alias.scope == "instance"
        and alias.target.kind == ValueKind.PARAM
        and alias.target.target == parameter
    ]


def described(qualname: str) -> str:
    """``the lambda in `execute_tool```, ```_execute``` : a function as a trace step names it."""
    shown = display_function(qualname) or "<module>"
    return f"the lambda in `{shown}`" if qualname.rsplit(".", 1)[-1].startswith("<lambda") else f"`{shown}`"


def display_function(qualname: str) -> str:
    """A function's name as a reader knows it: no ``@LINE`` of a redefinition, a lambda shown as its owner's."""
    parts = [part for part in base_name(qualname).split(".") if not part.startswith("<lambda")]
    return ".".join(parts)
