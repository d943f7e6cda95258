"""Plain per-module facts: what the indexer extracts from one file.

Everything here is frozen plain data (strings, ints, tuples of dataclasses), so facts can be cached on disk and
computed in worker processes. Names in facts are *as written in the source* (``"mm.TOOLS"``, ``"self.tools"``);
the linker resolves them to qualified names across modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterator, Optional, Tuple, Union

from dispatchlint.locations import Location as Location
from dispatchlint.locations import ParseError as ParseError
from dispatchlint.locations import ParseErrorKind as ParseErrorKind
from dispatchlint.locations import Span as Span
from dispatchlint.locations import Suppression as Suppression
from dispatchlint.locations import SuppressionScope as SuppressionScope


# --------------------------------------------------------------------------------------------------------------
# Data flow of an argument expression, as far as one function can tell.


@dataclass(frozen=True)
class Raw:
    """The value is the model's arguments, untouched (a wire parse, ``tool_call.function.arguments``...)."""

    why: str
    #: Where the arguments come from (the start of a finding's trace); not part of the value's identity.
    span: Optional[Span] = field(default=None, compare=False)


#: ``Raw.why`` of a ``json.loads`` of a string not known to be a tool call's arguments (weaker evidence).
WEAK_JSON = "json.loads"


@dataclass(frozen=True)
class Param:
    """The value is (a piece of) parameter ``name`` of ``function``; its callers decide what it is."""

    function: str
    name: str


@dataclass(frozen=True)
class CallResult:
    """The value is the result of calling ``callee`` (as written) with ``args``; a gate call guards.
    ``first_of_tuple``: the first item of the tuple it returns (``args, error = parse(call)``). ``in_place``: the
    value is still ``args[0]``, which ``callee`` was handed as a statement (``validate(args, schema)``): guarded
    when the callee is a gate, else what it was."""

    callee: str
    args: Tuple["Flow", ...]
    first_of_tuple: bool = False
    in_place: bool = False


@dataclass(frozen=True)
class Either:
    """The value is one of several flows (assignments in different branches)."""

    options: Tuple["Flow", ...]


@dataclass(frozen=True)
class ModelText:
    """The value is (a piece of) the model's text reply (``response.choices[0].message.content``). Not the
    arguments of a tool call: only a tool call written in the text (``TOOL: search(query="x")``), its name and
    its arguments parsed out of it by the same :class:`Parsed`, makes it a source."""

    #: Where the reply is read (the start of a finding's trace); not part of the value's identity.
    span: Optional[Span] = field(default=None, compare=False)


@dataclass(frozen=True)
class Parsed:
    """The value is a piece of ``text`` taken apart by one regular-expression match (``at``: where it is made,
    the parse's identity), then by its groups, splits and the mapping filled from them."""

    text: "Flow"
    at: Span


@dataclass(frozen=True)
class Unknown:
    """Nothing can be said."""


Flow = Union[Raw, Param, CallResult, Either, ModelText, Parsed, Unknown]
UNKNOWN = Unknown()


def params_in(flow: Flow) -> Iterator[Param]:
    """The parameters a value is (a piece of), or is computed from."""
    if isinstance(flow, Param):
        yield flow
    elif isinstance(flow, Either):
        for option in flow.options:
            yield from params_in(option)
    elif isinstance(flow, CallResult):
        for argument in flow.args:
            yield from params_in(argument)
    elif isinstance(flow, Parsed):
        yield from params_in(flow.text)


# --------------------------------------------------------------------------------------------------------------
# Values stored in tables.


class ValueKind(str, Enum):
    """What a table value or a registered callable is, as written."""

    #: A dotted name.
    REF = "ref"
    #: A lambda: ``ValueRef.target`` is the callee its body calls, if any; ``call_args`` every callee in its body.
    LAMBDA = "lambda"
    #: A call: ``target`` is the callee; ``call_args`` the dotted names passed.
    CALL = "call"
    #: A nested function of the enclosing function: ``target`` is its qualified name.
    DEF = "def"
    #: A parameter of the enclosing function (such as the decorated function in a decorator).
    PARAM = "param"
    #: The element itself in ``{t.name: t for t in tools}``: tool objects, not functions.
    OBJECT = "object"
    #: Anything else.
    OTHER = "other"


@dataclass(frozen=True)
class ValueRef:
    """A table value or a registered callable, as written (see :class:`ValueKind`)."""

    kind: ValueKind
    target: str = ""
    call_args: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    key: Optional[str]
    value: ValueRef
    span: Span


#: The name a table literal built in a ``return`` statement is known by (``return {"search": SearchTool()}``).
RETURNED_TABLE = "<return>"


@dataclass(frozen=True)
class TableDef:
    """A mapping from tool name to callable, defined by a literal or a comprehension (or a list of callables
    that is scanned by name).

    ``scope`` is ``"module"``, ``"class"``, ``"instance"`` or ``"local"``; ``owner`` the class or function that
    holds it (qualified within the module), empty for module scope.
    """

    name: str
    scope: str
    owner: str
    span: Span
    entries: Tuple[Entry, ...]
    comprehension: Optional[ValueRef] = None
    annotation: str = ""
    #: A list of callables looked up by a linear scan on their names, rather than a mapping.
    is_list: bool = False
    #: The table a comprehension rebuilds (``{k: wrap(k, v) for k, v in RAW.items()}``), as written.
    source: str = ""


@dataclass(frozen=True)
class TableFill:
    """``T[key] = value`` or ``T.update({...})`` inside ``function`` (empty: module level)."""

    table: str
    function: str
    key: Optional[str]
    key_param: Optional[str]
    value: ValueRef
    span: Span


@dataclass(frozen=True)
class ReturnedItem:
    """A name a function returns as one item of a tuple: ``functions`` is item 1 of ``return schemas, functions``."""

    index: int
    name: str


@dataclass(frozen=True)
class Alias:
    """``name = target`` where target is a dotted name, a call or a parameter of ``function`` (a table handed
    to a constructor: ``self.tools = tools``); ``owner`` as in TableDef."""

    name: str
    scope: str
    owner: str
    target: ValueRef
    span: Span
    function: str = ""
    #: For a name unpacked from what a call returns (``_, self.functions, _ = setup(tools)``), its position.
    item: Optional[int] = None


# --------------------------------------------------------------------------------------------------------------
# Sites.


class SiteKind(str, Enum):
    """How a tool runs at a site. ``via`` (on dispatches and sites) names the runner, method or attribute."""

    #: The looked-up callable is called (``T[k](...)``, ``T.get(k)`` then a call).
    CALL = "call"
    #: It is handed to a runner that calls it (``pool.submit``, ``asyncio.to_thread``, ``functools.partial``).
    RUNNER = "runner"
    #: A method of a looked-up tool object is called (``tool.call(ctx, **args)``).
    METHOD = "method"
    #: An attribute reaches past a tool object's own validation (``tool._run(...)``, ``tool.func(...)``).
    BYPASS = "bypass"
    #: An arm of an if/elif chain on the tool name (linked sites only).
    CHAIN = "chain"
    #: A registered executor called by name with the wire-parsed arguments (linked sites only).
    DIRECT = "direct"
    #: A tool's name and the wire-parsed arguments handed to a name bound nowhere the analysis can see (a
    #: function a registry injects at run time; linked sites only).
    UNSEEN = "unseen"


@dataclass(frozen=True)
class Dispatch:
    """A call of a callable taken from a table-like expression.

    ``table`` is the expression as written (``"TOOLS"``, ``"self._tools"``); ``resolver`` is set instead when the
    callable is the result of calling a project function (``fn = resolve(name); fn(args)``).
    """

    function: str
    table: str
    resolver: str
    key: str
    key_is_name: bool
    args: Tuple[Flow, ...]
    kind: SiteKind
    span: Span
    #: The callable is this parameter of ``function``; its callers say where they looked it up.
    through_param: str = ""
    #: The object is built right here by calling this (``SearchTool()._run(...)``), not looked up.
    constructed: str = ""
    #: The class the looked-up object is declared as (``tool_map: dict[str, SamplingTool]``).
    object_type: str = ""
    #: The runner, method or attribute of ``kind`` (``submit``, ``call``, ``_run``).
    via: str = ""
    #: The flow of the key the callable is looked up by (a tool name parsed out of the model's text, say).
    key_flow: Flow = UNKNOWN
    #: Found by a scan of ``table`` comparing each item's name with the key (``for tool in self._tools: if
    #: get_tool_info(tool).name == name``), not by subscript or ``.get``.
    scanned: bool = False
    #: The object ``getattr`` finds the callable on, as written (``self``, ``self.db``).
    found_on: str = ""


@dataclass(frozen=True)
class Lookup:
    """A function returns a value taken from a table (a resolver)."""

    function: str
    table: str
    key_param: Optional[str]
    span: Span
    #: The method of the looked-up object returned instead of the object (``return function.execute``).
    method: str = ""


@dataclass(frozen=True)
class Call:
    """A call of a dotted callee, with the flow of each argument (positional, then keyword)."""

    function: str
    callee: str
    positional: Tuple[Flow, ...]
    keywords: Tuple[Tuple[str, Flow], ...]
    star: Tuple[Flow, ...]
    span: Span
    #: Arguments written as a string literal, a dotted name or a lambda calling a dotted name:
    #: ``(slot, "str" | "ref" | "lambda", value)``, where slot is the position (``"0"``) or the keyword; for
    #: registration calls (``registry.register("recall", recall)``).
    literals: Tuple[Tuple[str, str, str], ...] = ()
    #: Arguments that are callables looked up by name: ``(slot, table, resolver, key, key is a tool name)``.
    looked_up: Tuple[Tuple[str, str, str, str, bool], ...] = ()
    #: Arguments that are functions of this module handed on as values: ``(slot, qualified name)`` of a lambda
    #: or a nested ``def`` (``run_middleware(name, args, lambda a: fn(agent, a, ctx))``, ``execute=_execute``).
    functions: Tuple[Tuple[str, str], ...] = ()

    @property
    def flows(self) -> Tuple[Flow, ...]:
        """Every argument's flow: positional, keyword, then starred."""
        return self.positional + tuple(flow for _, flow in self.keywords) + self.star


@dataclass(frozen=True)
class ChainArm:
    """One ``if``/``elif`` arm: the tool names it tests, what its calls pass and whom they call."""

    names: Tuple[str, ...]
    flows: Tuple[Flow, ...]
    callees: Tuple[str, ...]
    span: Span
    #: Where the arm's body is (the calls in it are the arm's, not dispatch sites of their own).
    body: Optional[Span] = None
    #: Functions and lambdas the arm defines and hands on (``def _execute(next_args): return todo(...)``):
    #: their calls run the arm's tool, later, with whatever the code they are handed to passes them.
    closures: Tuple[str, ...] = ()


@dataclass(frozen=True)
class NameChain:
    """An if/elif chain on a tool-name variable whose fallback hands the name on.

    ``fallbacks`` are the calls in the fallback that are handed the name (or a copy of it), in source order:
    ``(callee as written, span)``; the linker keeps the chain when one of them is a gated entry.
    """

    function: str
    variable: str
    arms: Tuple[ChainArm, ...]
    fallbacks: Tuple[Tuple[str, Span], ...]
    span: Span


@dataclass(frozen=True)
class JsonParse:
    """``json.loads``/``ast.literal_eval`` of a parameter (or ``args["p"]``, or either with its whitespace
    stripped: ``json.loads(steps.strip())``) inside ``function``."""

    function: str
    parameter: str
    parser: str
    span: Span


@dataclass(frozen=True)
class StringUse:
    """A use of a parameter (or ``args["p"]``) inside ``function`` that takes it for a string and would fail, or
    do something else, on the array, number or mapping a gate makes of it: a parse (``json.loads``), a method only
    strings have (``.strip()``, ``.encode()``, ``.split()``), a slice. Uses under ``isinstance(x, str)``, which
    handle both, are not recorded."""

    function: str
    parameter: str
    #: What the use does, as a message shows it (``json.loads``, ``.strip()``, ``a slice``).
    operation: str
    span: Span


@dataclass(frozen=True)
class IdentityRead:
    """A read of what a callable is, rather than a call of it, inside ``function``: its code
    (``fn.__code__.co_varnames``), its defaults, its source, its argument spec, its identity (``fn is other``,
    ``id(fn)``). Of a value taken from a table (``table``, as written) or of a parameter (``parameter``): a wrapper
    put in the table is another object, with other code (``inspect.signature``, which follows ``__wrapped__``, and
    ``__name__``, which ``functools.wraps`` copies, read the same)."""

    function: str
    table: str
    parameter: str
    #: What is read, as a message shows it (```__code__```, ```inspect.getfullargspec```, ```is```).
    read: str
    span: Span


@dataclass(frozen=True)
class SchemaDef:
    """A tool's parameter schema found statically: property name -> declared JSON types (empty: unknown)."""

    tool: str
    properties: Tuple[Tuple[str, Tuple[str, ...]], ...]
    span: Span
    table_key_of: str = ""


@dataclass(frozen=True)
class FunctionDef:
    qualname: str
    name: str
    class_name: str
    params: Tuple[str, ...]
    annotations: Tuple[Tuple[str, str], ...]
    decorators: Tuple[ValueRef, ...]
    decorator_keys: Tuple[Optional[str], ...]
    is_async: bool
    reads_schema_properties: bool
    #: A validating call in the function (or a closure of it) is handed a value from a parameter or the wire: a
    #: provider validating the tool declarations it builds from loop variables validates nothing it is handed.
    validates_arguments: bool
    property_read_lines: Tuple[int, ...]
    span: Span
    #: Builds or rewrites values (item assignment, a dict comprehension, ``json.loads``/``int``/``float``...):
    #: with ``reads_schema_properties``, what a gate by behaviour does.
    rewrites_values: bool = False
    #: What each ``return`` gives back: ``(returns a tuple, flow of the value or of the tuple's first item)``.
    returns: Tuple[Tuple[bool, Flow], ...] = ()
    #: Names the function returns as written (``return run_agent``, ``return self._tools``); ``<return>`` for a
    #: table literal built in the ``return`` statement itself.
    returns_names: Tuple[str, ...] = ()
    #: Names the function returns as items of a tuple (``return schemas, functions, by_name``).
    returns_items: Tuple[ReturnedItem, ...] = ()
    #: Callees whose result the function returns as it is (``return convert_tools(tools)``): what they return,
    #: it returns.
    returns_calls: Tuple[str, ...] = ()
    #: Builds a mapping whose keys are other keys translated (``{originals.get(k, k): v for k, v in ...}``):
    #: what restoring sanitized property names does.
    renames_keys: bool = False
    #: Reads the declared types of a callable's parameters (``param.annotation``): with ``rewrites_values``, a
    #: gate by behaviour that repairs against the tool function's annotations rather than a schema.
    reads_annotations: bool = False
    #: Compares a value with JSON Schema's type names (``param_type in {"integer", "int"}``): it converts by the
    #: type a tool declares for each parameter, whatever holds the declaration.
    compares_schema_types: bool = False
    #: The ``**kwargs`` parameter, if any: what a call passes by keyword beyond the named parameters.
    keywords_param: str = ""
    #: The ``*args`` parameter, if any: what a call passes by position beyond the named parameters.
    positional_param: str = ""
    #: The parameters whose values (or pieces of them) a validating call in the function is handed: what it
    #: validates (``model_validate(tool.definition)`` validates a tool's definition, not its arguments).
    validated_params: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassDef:
    qualname: str
    bases: Tuple[str, ...]
    span: Span
    #: As for functions: a registering decorator puts the class in a table (``@register_tool("search")``).
    decorators: Tuple[ValueRef, ...] = ()
    decorator_keys: Tuple[Optional[str], ...] = ()
    #: The names the class body annotates, in order: a dataclass's fields, the parameters of its ``__init__``.
    fields: Tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------------------------
# The shape of the code at the facts' places: what deciding a fix needs, recorded at index time so that a check
# never parses a file twice. Keyed by the span of the fact they describe.


@dataclass(frozen=True)
class Signature:
    """A ``def``'s parameters, as a generated wrapper must mirror them."""

    #: Positional parameter names, ``self``/``cls`` included.
    positional: Tuple[str, ...]
    #: No defaults, no ``*args``/``**kwargs``, no keyword-only parameters.
    plain: bool
    is_async: bool


@dataclass(frozen=True)
class StoredValue:
    """The expression a table entry or a fill stores (``"k": value``, ``T[k] = value``)."""

    #: Its parameters, when it is a lambda.
    lambda_signature: Optional[Signature]
    #: The dotted name it is, if it is one (``self._read_doc``).
    dotted: str


class Definition(str, Enum):
    """How a table's definition is written, which says whether the wrap fix can rewrite it."""

    #: ``NAME = {...}`` (or a comprehension, or a call) alone on its line.
    PLAIN = "plain"
    NOT_ASSIGNMENT = "not an assignment"
    SHARED_LINE = "shares its line"
    #: A module-level table defined inside an ``if`` or ``try`` block.
    IN_BLOCK = "in a block"
    NOT_LITERAL = "not a literal"


@dataclass(frozen=True)
class TableShape:
    definition: Definition
    #: The literal, comprehension or call holds values (``{}`` and ``dict()`` do not).
    holds_values: bool


class FillNode(str, Enum):
    """What stores a value that enters a table after its definition."""

    #: ``T[key] = value``.
    ASSIGN = "assign"
    #: An element of ``T.update({...})``.
    ELEMENT = "element"
    #: A keyword of ``T.update(key=value)``.
    KEYWORD = "keyword"
    NONE = "none"


@dataclass(frozen=True)
class ArgShape:
    """One argument of a call as written: ``star`` is ``""``, ``"*"`` or ``"**"``; ``name`` the plain name passed,
    if it is one."""

    star: str
    keyword: bool
    name: str


class ParseEdit(str, Enum):
    """How a hand-rolled parse can be taken out."""

    #: Delete ``if isinstance(x, str): x = json.loads(x)``.
    DELETE_GUARD = "delete guard"
    #: Delete the line ``x = json.loads(x)``.
    DELETE_LINE = "delete line"
    #: Delete ``x = json.loads(x)`` from a line of several statements (``x = json.loads(x); ctx.turn += 1``).
    DELETE_STATEMENT = "delete statement"
    #: ``json.loads(args["p"])`` becomes ``args["p"]``.
    UNWRAP = "unwrap"
    #: The parsing does more than turn a JSON string into the value.
    NONE = "none"


@dataclass(frozen=True)
class Ladder:
    """The ``if`` statement a name-test chain's ladder starts with, and the mappings its arms read."""

    span: Span
    reads: Tuple[str, ...]


@dataclass(frozen=True)
class BodyStep:
    """A statement of a function's body, as reordering a gate sees it."""

    assigns: Tuple[str, ...]
    #: The function's arguments parameter appears in it.
    reads_arguments: bool
    #: ``return f(...)`` or ``name = f(...)``, alone on its line: ``f`` as written, and the names passed to it.
    callee: str = ""
    passed: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Shapes:
    """The code's shape where the fixes would edit it, each keyed by the span of the fact it describes."""

    #: Names the module binds at top level (and in top-level ``if``/``try`` blocks).
    top_level_names: Tuple[str, ...] = ()
    #: A function's name span -> its ``def``'s signature.
    signatures: Tuple[Tuple[Span, Signature], ...] = ()
    #: An entry's or a fill's span -> the value it stores.
    stored: Tuple[Tuple[Span, StoredValue], ...] = ()
    #: A table definition's (or an alias's) span -> how it is written.
    tables: Tuple[Tuple[Span, TableShape], ...] = ()
    fills: Tuple[Tuple[Span, FillNode], ...] = ()
    #: A dispatch's span -> the arguments it passes the tool (after a runner's callable).
    dispatch_args: Tuple[Tuple[Span, Tuple[ArgShape, ...]], ...] = ()
    #: A chain's span -> its ladder.
    ladders: Tuple[Tuple[Span, Ladder], ...] = ()
    #: A chain fallback's call span -> its arguments.
    fallback_args: Tuple[Tuple[Span, Tuple[ArgShape, ...]], ...] = ()
    parses: Tuple[Tuple[Span, ParseEdit], ...] = ()
    #: A function's name span -> its body's statements, for functions with an arguments parameter.
    bodies: Tuple[Tuple[Span, Tuple[BodyStep, ...]], ...] = ()


@dataclass(frozen=True)
class ModuleFacts:
    """Everything the rules need to know about one file."""

    path: str
    module: str
    is_package: bool
    parse_error: Optional[ParseError] = None
    imports: Tuple[Tuple[str, str], ...] = ()
    functions: Tuple[FunctionDef, ...] = ()
    classes: Tuple[ClassDef, ...] = ()
    tables: Tuple[TableDef, ...] = ()
    fills: Tuple[TableFill, ...] = ()
    aliases: Tuple[Alias, ...] = ()
    dispatches: Tuple[Dispatch, ...] = ()
    lookups: Tuple[Lookup, ...] = ()
    calls: Tuple[Call, ...] = ()
    chains: Tuple[NameChain, ...] = ()
    json_parses: Tuple[JsonParse, ...] = ()
    string_uses: Tuple[StringUse, ...] = ()
    identity_reads: Tuple[IdentityRead, ...] = ()
    schemas: Tuple[SchemaDef, ...] = ()
    suppressions: Tuple[Suppression, ...] = ()
    #: Callables handed to a model call's ``tools=[...]`` (``(function the call is in, reference)``): the
    #: provider's SDK derives each one's schema from its signature (``client.chat(tools=[add_two_numbers])``).
    offered_tools: Tuple[Tuple[str, str], ...] = ()
    shapes: Shapes = Shapes()
