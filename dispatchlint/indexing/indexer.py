"""Parse one module and index it into plain facts (:mod:`dispatchlint.indexing.facts`).

The indexer walks statements in order, like a tiny abstract interpreter: it keeps, per scope, what each local
name holds (a :data:`~dispatchlint.indexing.facts.Flow` of the model's arguments, a callable looked up in a
table, a piece of a parameter), merges branches so that an assignment made in one branch does not count as
dominating, and records tables, fills, dispatch sites, calls, name-test chains, json parses and schemas. It never
resolves anything across modules: names stay as written, for the linker.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
    Union,
    cast,
)

import libcst as cst
from libcst.metadata import CodeRange

from dispatchlint.indexing import _patterns as pat
from dispatchlint.indexing import fix_shapes as shp
from dispatchlint.indexing import syntax as syn
from dispatchlint import framework_models
from dispatchlint._process import collecting_only_new_objects, deep_recursion, on_deep_stack, without_cycle_collection
from dispatchlint.indexing._parse import python_rejects, refuse_exponential_parse
from dispatchlint.indexing.grammar import Grammar
from dispatchlint.indexing.fix_shapes import RUNNERS_FIRST, RUNNERS_SECOND
from dispatchlint.indexing.annotations import class_schema_key
from dispatchlint.indexing._schemas import SCHEMA_KEYS, SchemaCollector
from dispatchlint.indexing.comments import find_suppressions
from dispatchlint.indexing.facts import (
    UNKNOWN,
    WEAK_JSON,
    Alias,
    Call,
    CallResult,
    ChainArm,
    ClassDef,
    Dispatch,
    Either,
    BodyStep,
    Entry,
    FillNode,
    Flow,
    FunctionDef,
    JsonParse,
    Lookup,
    ModelText,
    ModuleFacts,
    NameChain,
    Param,
    Parsed,
    ParseError,
    ParseErrorKind,
    ReturnedItem,
    RETURNED_TABLE,
    Raw,
    SchemaDef,
    Shapes,
    Signature,
    IdentityRead,
    SiteKind,
    StringUse,
    Span,
    Suppression,
    StoredValue,
    TableDef,
    TableShape,
    TableFill,
    Unknown,
    ValueKind,
    ValueRef,
    params_in,
)

#: Callees that run their first argument (or second, for run_in_executor) with the remaining arguments.
_JSON_PARSERS = {"json.loads", "orjson.loads", "ujson.loads", "simplejson.loads", "json5.loads", "ast.literal_eval"}
#: What turns a tool call's JSON text into its arguments: the parsers above and lenient ones (``json_repair``'s,
#: which a DL201 fix could not simply delete: without ``return_objects`` it returns repaired text).
_ARGUMENT_PARSERS = _JSON_PARSERS | {"json_repair.repair_json", "json_repair.loads"}
#: Attributes of a function that a wrapper does not share with it (``functools.wraps`` copies the others).
_CODE_ATTRIBUTES = frozenset(("__code__", "__defaults__", "__kwdefaults__", "__closure__", "__globals__", "__func__"))
#: Functions that read a callable's code or identity rather than call it (``inspect.signature`` follows
#: ``__wrapped__`` unless told not to: see ``_identity_reads``).
_CODE_READERS = frozenset(
    (
        "id inspect.getfullargspec inspect.getargspec inspect.getsource inspect.getsourcelines inspect.getsourcefile "
        "inspect.getfile inspect.getclosurevars inspect.getcallargs"
    ).split()
)
_CONSTANTS = frozenset(("None", "True", "False", "NotImplemented", "Ellipsis"))
_COPIES = {"dict", "copy.copy", "copy.deepcopy", "deepcopy", "copy"}
_VALIDATORS = {"validate", "model_validate", "validate_python", "validate_json", "parse_obj", "iter_errors"}


def _validator(callee: str) -> bool:
    """A call that validates what it is given: ``jsonschema.validate``, ``Model.model_validate``, a
    ``Draft7Validator``."""
    return callee.split(".")[-1] in _VALIDATORS or "Validator" in callee


def _named_for_validating(callee: str) -> bool:
    """A validator, or a helper named for one (``validate_schema(args, schema)``, ``self._validate_args``): as a
    statement, it raises on what it refuses; whether it is the project's gate is the linker's to say."""
    return _validator(callee) or callee.split(".")[-1].lstrip("_").startswith("validate_")


_MAX_FLOW_DEPTH = 6
_V = TypeVar("_V")
#: What a branch-local table held for a name it did not hold.
_ABSENT = object()


class _Callable(NamedTuple):
    """What a local name can hold as a callable: a value looked up in a table (by subscript, ``.get`` or a
    linear scan comparing ``.name``), or the result of a call to a possible resolver."""

    table: str
    resolver: str
    key: str
    key_is_name: bool
    param: str = ""
    constructed: str = ""
    #: The class the looked-up value is declared as (the value type of an annotated mapping).
    declared: str = ""
    #: What the key holds (see ``Dispatch.key_flow``).
    key_flow: Flow = UNKNOWN
    #: The raw entry taken from the looked-up tool object (``func = tool.func``): calling it reaches past the
    #: object's validating entry.
    reached: str = ""
    #: What other branches bound the same name to (``func = table.get(name)`` in one, ``func = tool.func`` of a
    #: linear scan in another): each is a way the call may run a tool.
    alternatives: Tuple["_Callable", ...] = ()
    #: Found by a scan of ``table`` comparing each item's name with the key (not by subscript or ``.get``).
    scanned: bool = False
    #: The object ``getattr`` finds the callable on, as written (see ``Dispatch.found_on``).
    found_on: str = ""


@dataclass
class _Scope:
    kind: str  # "module", "class" or "function"
    qualname: str
    class_name: str
    params: Tuple[str, ...] = ()
    env: Dict[str, Flow] = field(default_factory=dict)
    callables: Dict[str, _Callable] = field(default_factory=dict)
    pieces: Dict[str, str] = field(default_factory=dict)
    nested: Dict[str, str] = field(default_factory=dict)
    #: Loop variables over a dotted iterable (``for tool in self.tools``), for linear-scan lookups.
    scans: Dict[str, str] = field(default_factory=dict)
    #: Names that describe a loop variable of ``scans`` (``tool_info = get_tool_info(tool)``): comparing their
    #: name with a key looks the loop variable up.
    scan_views: Dict[str, str] = field(default_factory=dict)
    #: What the function's ``return`` statements give back (see ``FunctionDef.returns``).
    returns: List[Tuple[bool, Flow]] = field(default_factory=list)
    #: Names the function returns as written (see ``FunctionDef.returns_names``).
    returned_names: List[str] = field(default_factory=list)
    #: Names returned as items of a tuple, and callees whose result is returned (see ``FunctionDef``).
    returned_items: List[ReturnedItem] = field(default_factory=list)
    returned_calls: List[str] = field(default_factory=list)
    #: Parameters annotated with a plain class name (``tool: BaseTool``), seen by closures too.
    types: Dict[str, str] = field(default_factory=dict)
    #: Names declared as mappings of a class (``tool_map: dict[str, SamplingTool]``): their values' class.
    value_types: Dict[str, str] = field(default_factory=dict)
    #: Names declared as sequences of a class (``tools: list[BaseTool]``): their items' class.
    element_types: Dict[str, str] = field(default_factory=dict)

    #: The writes made to ``env``, ``callables`` and ``pieces`` in each branch being walked, innermost last
    #: (see :meth:`put`): a branch is undone from its own writes, never by copying the whole state.
    journal: List[List[Tuple[Dict[str, Any], str, object]]] = field(default_factory=list)

    def child_state(self) -> Tuple[Dict[str, Flow], Dict[str, _Callable], Dict[str, str]]:
        return dict(self.env), dict(self.callables), dict(self.pieces)

    def put(self, table: Dict[str, _V], name: str, value: _V) -> None:
        """``table[name] = value`` for one of the branch-local tables (``env``, ``callables``, ``pieces``); a
        flow too large to follow is stored as unknown (see :func:`_bounded`)."""
        if self.journal:
            self.journal[-1].append((table, name, table.get(name, _ABSENT)))
        table[name] = _bounded(value) if table is self.env else value  # type: ignore[arg-type,assignment]

    def drop(self, table: Dict[str, _V], name: str) -> None:
        """``table.pop(name)`` for one of the branch-local tables."""
        if name in table:
            if self.journal:
                self.journal[-1].append((table, name, table[name]))
            del table[name]


class IndexFailure(Exception):
    """A bug of ours met in one file: which stage of its analysis failed, and how."""

    def __init__(self, stage: str, error: BaseException) -> None:
        super().__init__(f"internal error while {stage} ({type(error).__name__}: {error})")
        self.stage = stage


def index_source(
    path: str, module: str, is_package: bool, source: bytes, grammar: Grammar = Grammar.INTERPRETER
) -> ModuleFacts:
    """Parse ``source`` once and return its facts (or why it does not parse); raise :class:`IndexFailure`, or
    :class:`TooComplex` for a file libcst would take exponential time to parse.

    What Python's compiler rejects is a parse error whatever libcst makes of it, unless ``grammar`` is the
    newest one (then libcst decides); what it accepts is parsed and indexed on a deep stack (see
    :mod:`dispatchlint.indexing._parse`).
    """
    return on_deep_stack(lambda: _compile_then_index(path, module, is_package, source, grammar))


def _compile_then_index(path: str, module: str, is_package: bool, source: bytes, grammar: Grammar) -> ModuleFacts:
    rejected = python_rejects(source, path)
    if rejected is not None and grammar is Grammar.INTERPRETER:
        return ModuleFacts(path, module, is_package, rejected)
    refuse_exponential_parse(source)
    with deep_recursion():
        facts = _index_accepted(path, module, is_package, source)
    if rejected is not None and facts.parse_error is not None:  # no grammar accepts it: Python's words are clearer
        return ModuleFacts(path, module, is_package, rejected)
    return facts


def _index_accepted(path: str, module: str, is_package: bool, source: bytes) -> ModuleFacts:
    try:
        with without_cycle_collection():
            tree = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        message = str(error).splitlines()[0] if str(error) else "syntax error"
        span = Span(error.editor_line, error.editor_column, error.editor_line, error.editor_column)
        return ModuleFacts(path, module, is_package, ParseError(message, span, ParseErrorKind.LIBCST))
    except Exception as error:  # noqa: BLE001 - Python accepts the file: libcst's failure is named as such
        failure = ParseError(f"{type(error).__name__}: {error}", Span(1, 1, 1, 1), ParseErrorKind.LIBCST)
        return ModuleFacts(path, module, is_package, failure)
    try:
        with without_cycle_collection():
            code_ranges = shp.positions(tree)
        with collecting_only_new_objects():
            indexer = _ModuleIndexer(path, module, is_package, tree, code_ranges)
            indexer.run()
            facts = indexer.facts(find_suppressions(source.decode(tree.encoding, errors="replace")))
            shapes = replace(facts.shapes, top_level_names=tuple(sorted(shp.top_level_names(tree))))
            if facts.dispatches or facts.chains or facts.json_parses or facts.string_uses:
                nodes = shp.Nodes(tree, code_ranges)
                shapes = replace(shapes, **shp.module_shapes(facts, nodes))  # type: ignore[arg-type]
                unguarded = tuple(use for use in facts.string_uses if not nodes.string_guarded(use.span))
                facts = replace(facts, string_uses=unguarded)
            return replace(facts, shapes=shapes)
    except Exception as error:  # noqa: BLE001 - reported per file, the other files are still analysed
        raise IndexFailure("indexing", error) from error


class _ModuleIndexer:
    def __init__(
        self,
        path: str,
        module: str,
        is_package: bool,
        tree: cst.Module,
        positions: Mapping[cst.CSTNode, CodeRange],
    ) -> None:
        self.path = path
        self.module = module
        self.is_package = is_package
        self.tree = tree
        self.positions = positions
        self.imports: Dict[str, str] = {}
        self.constants: Dict[str, cst.BaseExpression] = {}
        #: The values of literals, these constants followed (filled before anything is evaluated).
        self.literals = syn.Literals(self.constants)
        self.functions: List[FunctionDef] = []
        self.classes: List[ClassDef] = []
        self.tables: List[TableDef] = []
        self.fills: List[TableFill] = []
        self.aliases: List[Alias] = []
        self.dispatches: List[Dispatch] = []
        self.lookups: List[Lookup] = []
        self.calls: List[Call] = []
        self.chains: List[NameChain] = []
        self.json_parses: List[JsonParse] = []
        self.string_uses: Dict[Span, StringUse] = {}
        self.identity_reads: Dict[Span, IdentityRead] = {}
        self.schemas: List[SchemaDef] = []
        self.offered_tools: List[Tuple[str, str]] = []
        self.chain_members: Set[cst.If] = set()
        #: Qualified names already given to a function of this module: a redefinition (``def _execute`` in
        #: each arm of a chain) is a function of its own, named ``_execute@LINE``.
        self.defined: Set[str] = set()
        #: The qualified name given to each function, keyed by its ``def``'s name node or its ``lambda`` node.
        self.function_names: Dict[cst.CSTNode, str] = {}
        #: Chain arms whose closures get their names once the arm's body has been walked:
        #: ``(chain index, arm index, the closure nodes)``.
        self.pending_closures: List[Tuple[int, int, Tuple[cst.CSTNode, ...]]] = []
        #: The statement line being indexed (None inside a one-line suite), and whether it is a module-level one.
        self.line: Optional[cst.SimpleStatementLine] = None
        self.line_at_top = False
        self.top_statements = {id(statement) for statement in tree.body}
        self.signatures: List[Tuple[Span, Signature]] = []
        self.stored: List[Tuple[Span, StoredValue]] = []
        self.table_shapes: List[Tuple[Span, TableShape]] = []
        self.fill_nodes: List[Tuple[Span, FillNode]] = []
        self.bodies: List[Tuple[Span, Tuple[BodyStep, ...]]] = []
        #: ``(class, attribute) -> class``: what a method built an instance attribute from
        #: (``self.knowledge_tool = KnowledgeSearchTool(url)``), for the methods walked after it.
        self.attribute_types: Dict[Tuple[str, str], str] = {}
        #: ``(class, attribute) -> annotation``: what a class declares an instance attribute holds
        #: (``self._tools: dict[str, Tool] = {}``, or ``tools: list[AgentTool]`` in its body).
        self.attribute_annotations: Dict[Tuple[str, str], str] = {}
        #: function -> the parameters a validating call in it (or in a closure of it) is handed.
        self.validated_params: Dict[str, Set[str]] = {}
        #: The functions with a validating call handed a value from a parameter or the wire.
        self.validates_handed: Set[str] = set()

    # ---------------------------------------------------------------------------------------------- plumbing

    def span(self, node: cst.CSTNode) -> Span:
        code_range = self.positions[node]
        return Span(code_range.start.line, code_range.start.column + 1, code_range.end.line, code_range.end.column + 1)

    def facts(self, suppressions: Tuple[Suppression, ...]) -> ModuleFacts:
        return ModuleFacts(
            path=self.path,
            module=self.module,
            is_package=self.is_package,
            imports=tuple(sorted(self.imports.items())),
            functions=tuple(self.functions),
            classes=tuple(self.classes),
            tables=tuple(self.tables),
            fills=tuple(self.fills),
            aliases=tuple(self.aliases),
            dispatches=tuple(self.dispatches),
            lookups=tuple(self.lookups),
            calls=tuple(self.calls),
            chains=tuple(self._chains_with_closures()),
            json_parses=tuple(self.json_parses),
            string_uses=tuple(self.string_uses.values()),
            identity_reads=tuple(self.identity_reads.values()),
            schemas=tuple(self.schemas),
            suppressions=suppressions,
            offered_tools=tuple(self.offered_tools),
            shapes=Shapes(
                signatures=tuple(self.signatures),
                stored=tuple(self.stored),
                tables=tuple(self.table_shapes),
                fills=tuple(self.fill_nodes),
                bodies=tuple(self.bodies),
            ),
        )

    def run(self) -> None:
        for statement in self.tree.body:
            self._collect_constant(statement)
        self._prepass()
        self._block(self.tree.body, _Scope("module", "", ""))

    def _chains_with_closures(self) -> List[NameChain]:
        chains = list(self.chains)
        for chain_index, arm_index, nodes in self.pending_closures:
            chain = chains[chain_index]
            names = tuple(self.function_names[node] for node in nodes if node in self.function_names)
            arms = list(chain.arms)
            arms[arm_index] = replace(arms[arm_index], closures=names)
            chains[chain_index] = replace(chain, arms=tuple(arms))
        return chains

    def _unique_qualname(self, qualname: str, node: cst.CSTNode) -> str:
        if qualname in self.defined:
            qualname = f"{qualname}@{self.span(node).line}"
        self.defined.add(qualname)
        self.function_names[node] = qualname
        return qualname

    def _prepass(self) -> None:
        """One walk over the module for what needs no scope: schemas, and per function whether it reads a
        schema's ``properties`` (where), rewrites values and calls a validator (gates by behaviour)."""
        self.property_reads: Dict[cst.FunctionDef, List[int]] = {}
        self.validating: Set[cst.FunctionDef] = set()
        self.rewriting: Set[cst.FunctionDef] = set()
        self.renaming: Set[cst.FunctionDef] = set()
        self.annotation_reading: Set[cst.FunctionDef] = set()
        self.schema_type_comparing: Set[cst.FunctionDef] = set()
        schemas = SchemaCollector(self.literals, self.span)
        stack: List[Tuple[cst.CSTNode, Tuple[cst.FunctionDef, ...]]] = [(self.tree, ())]
        while stack:
            node, functions = stack.pop()
            if isinstance(node, cst.FunctionDef):
                functions = functions + (node,)
                self.property_reads.setdefault(node, [])
            schemas.visit(node)
            if isinstance(node, cst.Call):
                callee = syn.dotted_name(node.func) or ""
                if _validator(callee) or pat.constructs_argument_model(node):
                    self.validating.update(functions)
            if functions and pat.rewrites_values(node):
                self.rewriting.update(functions)
            if functions and pat.renames_keys(node):
                self.renaming.add(functions[-1])
            if functions and pat.reads_annotations(node):
                self.annotation_reading.add(functions[-1])
            if functions and pat.compares_schema_types(node):
                self.schema_type_comparing.add(functions[-1])
            if functions and pat.reads_properties(node):
                line = self.span(node).line
                for function in functions:
                    self.property_reads[function].append(line)
            stack.extend((child, functions) for child in reversed(syn.children(node)))
        self.schemas = schemas.found

    def _collect_constant(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        self.constants[target.value] = small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    if isinstance(small.target, cst.Name):
                        self.constants[small.target.value] = small.value

    def resolve_local(self, dotted: str) -> str:
        """Expand the first component of ``dotted`` through this module's imports (for well-known callees)."""
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return dotted
        return f"{target}.{rest}" if rest else target

    # ---------------------------------------------------------------------------------------------- statements

    def _block(self, statements: Sequence[cst.CSTNode], scope: _Scope) -> None:
        index = 0
        while index < len(statements):
            statement = statements[index]
            if isinstance(statement, cst.If):
                self._name_chain(statements, index, scope)
            self._statement(statement, scope)
            index += 1

    def _statement(self, statement: cst.CSTNode, scope: _Scope) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.line, self.line_at_top = statement, id(statement) in self.top_statements
                self._small_statement(small, scope)
        elif isinstance(statement, cst.FunctionDef):
            self._function(statement, scope)
        elif isinstance(statement, cst.ClassDef):
            self._class(statement, scope)
        elif isinstance(statement, cst.If):
            self._if(statement, scope)
        elif isinstance(statement, (cst.For, cst.While)):
            self._loop(statement, scope)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            self._try(statement, scope)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                self._expression(item.item, scope)
                if item.asname is not None:
                    self._bind_unknown(item.asname.name, scope)
            self._block(statement.body.body, scope)
        elif isinstance(statement, cst.BaseSmallStatement):  # the body of a one-line ``if x: return f(y)``
            self.line, self.line_at_top = None, False
            self._small_statement(statement, scope)
        elif isinstance(statement, cst.Match):
            self._expression(statement.subject, scope)
            self._match_chain(statement, scope)
            self._branches([case.body.body for case in statement.cases], scope, keep_original=True)

    def _if(self, statement: cst.If, scope: _Scope) -> None:
        """An if/elif chain is one set of alternatives, walked flat rather than as libcst nests it (one level
        per ``elif``), where each level merged again every name bound deeper: quadratic in the arms."""
        self._test(statement, scope)
        arms: List[Sequence[cst.CSTNode]] = [statement.body.body]
        elifs: List[Optional[cst.If]] = [None]
        last = statement
        while isinstance(last.orelse, cst.If):
            last = last.orelse
            arms.append(last.body.body)
            elifs.append(last)
        if isinstance(last.orelse, cst.Else):
            arms.append(last.orelse.body.body)
        self._branches(arms, scope, keep_original=last.orelse is None, elifs=elifs)

    def _test(self, statement: cst.If, scope: _Scope) -> None:
        self._expression(statement.test, scope)
        scanned = pat.name_comparison(statement.test)
        variable = scope.scan_views.get(scanned[0], scanned[0]) if scanned is not None else ""
        if scanned is not None and variable in scope.scans:
            # ``for tool in tools: if tool.name == name: ...`` (or ``get_tool_info(tool).name``): inside, ``tool``
            # is the tool looked up by name.
            key = scanned[1]
            found = _Callable(scope.scans[variable], "", self._text(key), True, scanned=True)
            scope.put(scope.callables, variable, found)

    def _loop(self, statement: Union[cst.For, cst.While], scope: _Scope) -> None:
        if isinstance(statement, cst.For):
            self._expression(statement.iter, scope)
            self._bind_unknown(statement.target, scope)
            self._bind_text(statement.target, self._flow(statement.iter, scope), scope)
            iterable = pat.iterated(statement.iter)
            if isinstance(statement.target, cst.Name) and iterable is not None:
                scope.scans[statement.target.value] = iterable
            if isinstance(statement.target, cst.Name):  # for tool in tools, tools: list[BaseTool]
                item_class = scope.element_types.get(syn.dotted_name(statement.iter) or "")
                if item_class is not None:
                    scope.types[statement.target.value] = item_class
                else:
                    scope.types.pop(statement.target.value, None)
        else:
            self._expression(statement.test, scope)
        self._branches([statement.body.body], scope, keep_original=True)
        if statement.orelse is not None:
            self._block(statement.orelse.body.body, scope)

    def _try(self, statement: Union[cst.Try, cst.TryStar], scope: _Scope) -> None:
        """The body (with its ``else``) or any handler may have run; ``finally`` always does. A handler that
        raises or returns never reaches what follows: there, the whole body ran (``validate(args)`` in a ``try``
        whose handler re-raises has validated ``args`` after it)."""
        orelse = statement.orelse
        main = list(statement.body.body) + (list(orelse.body.body) if orelse is not None else [])
        handlers: List[Sequence[cst.CSTNode]] = [handler.body.body for handler in statement.handlers]
        falls_through = [True] + [not pat.ends_abruptly(handler) for handler in handlers]
        self._branches([main] + handlers, scope, keep_original=any(falls_through[1:]), reaches_after=falls_through)
        if statement.finalbody is not None:
            self._block(statement.finalbody.body.body, scope)

    def _branches(
        self,
        branches: Sequence[Sequence[cst.CSTNode]],
        scope: _Scope,
        keep_original: bool,
        elifs: Sequence[Optional[cst.If]] = (),
        reaches_after: Sequence[bool] = (),
    ) -> None:
        """Walk alternative branches from the same state and merge what each name may hold afterwards.

        Each branch is undone from the writes it made, and only the names some branch wrote are merged, from
        the branches that wrote them: the cost is the branches' own, not the size of the scope (a module of a
        thousand names and a thousand ``if`` statements) nor the branches times the names (an if/elif chain
        whose every arm binds a name of its own).

        ``elifs`` makes the branches the arms of an if/elif chain, ``elifs[i]`` the ``elif`` leading to arm
        ``i`` (None for the first): its test runs only when no arm before it was taken, so what the test binds
        holds in that arm, every later one, and the original state kept after them (``keep_original``: no arm
        may have been taken). A name of the chain merges as the chain nests (see :func:`_either_nested`).
        ``reaches_after[i]`` False: branch ``i`` is walked for its facts, but never ends where the code after
        the branches starts (it raises), so it is left out of the merge.
        """
        written: Dict[Tuple[int, str], Tuple[Dict[str, Any], str, List[Tuple[int, object]]]] = {}

        def record(index: int, log: Sequence[Tuple[Dict[str, Any], str, object]]) -> None:
            outcome: Dict[Tuple[int, str], Tuple[Dict[str, Any], str]] = {}
            for table, name, _ in log:
                outcome[(id(table), name)] = (table, name)
            for key, (table, name) in outcome.items():
                written.setdefault(key, (table, name, []))[2].append((index, table.get(name, _ABSENT)))

        scope.journal.append([])
        tested = scope.journal[-1]  # what the ``elif`` tests walked so far bound
        for index, branch in enumerate(branches):
            elif_ = elifs[index] if index < len(elifs) else None
            if elif_ is not None:
                self._name_chain([elif_], 0, scope)
                self._test(elif_, scope)
            scope.journal.append([])
            self._block(branch, scope)
            log = scope.journal.pop()
            merged = index >= len(reaches_after) or reaches_after[index]
            if merged:
                record(index, tested + log)
            _undo(log)
        if keep_original:
            record(len(branches), tested)
        _undo(scope.journal.pop())
        count = sum(index >= len(reaches_after) or reaches_after[index] for index in range(len(branches)))
        count += int(keep_original)
        for table, name, hits in written.values():
            before = table.get(name, _ABSENT)
            runs = _runs(hits, count, before)
            if table is scope.env:
                # a name a branch did not bind holds nothing known there
                flows = [(UNKNOWN if value is _ABSENT else cast(Flow, value), times) for value, times in runs]
                scope.put(scope.env, name, _either_nested(flows) if elifs else _either(tuple(f for f, _ in flows)))
            elif table is scope.callables:
                # what any branch looked up may be called: the first branch's, with the others' beside it
                held = _with_alternatives([cast(_Callable, value) for value, _ in runs if value is not _ABSENT])
                self._put_or_drop(scope, scope.callables, name, held)
            else:
                # a parameter piece only when every branch agrees
                agreed = runs[0][0] if all(value == runs[0][0] for value, _ in runs) else _ABSENT
                self._put_or_drop(scope, scope.pieces, name, agreed)

    @staticmethod
    def _put_or_drop(scope: _Scope, table: Dict[str, Any], name: str, value: object) -> None:
        if value is _ABSENT:
            scope.drop(table, name)
        else:
            scope.put(table, name, value)

    def _small_statement(self, small: cst.BaseSmallStatement, scope: _Scope) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                dotted = syn.dotted_name(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.imports[alias.asname.name.value] = dotted
                else:
                    head = dotted.split(".")[0]
                    self.imports[head] = head
        elif isinstance(small, cst.ImportFrom):
            self._import_from(small)
        elif isinstance(small, cst.Assign):
            self._expression(small.value, scope)
            for target in small.targets:
                for name, value in pat.paired(target.target, small.value):
                    self._assign(name, value, scope, small)
                self._unpack_call(target.target, small.value, scope)
        elif isinstance(small, cst.AnnAssign):
            annotation = self.tree.code_for_node(small.annotation.annotation)
            self._annotated_attribute(small.target, annotation, scope)
            if small.value is not None:
                self._expression(small.value, scope)
                self._assign(small.target, small.value, scope, small, annotation)
        elif isinstance(small, cst.AugAssign):
            self._expression(small.value, scope)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                self._expression(small.value, scope)
                self._returned(small.value, scope, small)
        elif isinstance(small, cst.Expr):
            self._expression(small.value, scope)
            self._validated_in_place(small.value, scope)
        else:
            for child in small.children:
                if isinstance(child, cst.BaseExpression):
                    self._expression(child, scope)

    def _validated_in_place(self, expression: cst.BaseExpression, scope: _Scope) -> None:
        """``validate(args, schema)`` as a statement raises on what does not fit: after it, ``args`` holds what
        the validator passed, as if it had returned it (the call is a gate's when the validator is one)."""
        call = expression.expression if isinstance(expression, cst.Await) else expression
        if not isinstance(call, cst.Call):
            return
        callee = syn.dotted_name(call.func)
        if callee is None or not _named_for_validating(callee):
            return
        for arg in call.args:
            if isinstance(arg.value, cst.Name) and not arg.star and arg.value.value in scope.env:
                name = arg.value.value
                scope.put(scope.env, name, CallResult(callee, (scope.env[name],), in_place=True))
                return

    def _import_from(self, node: cst.ImportFrom) -> None:
        base = syn.dotted_name(node.module) if node.module is not None else ""
        if node.relative:
            package_parts = self.module.split(".") if self.module else []
            if not self.is_package and package_parts:
                package_parts = package_parts[:-1]
            up = len(node.relative) - 1
            if up:
                package_parts = package_parts[: len(package_parts) - up] if up <= len(package_parts) else []
            base = ".".join(part for part in package_parts + ([base] if base else []) if part)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = syn.dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            self.imports[local] = f"{base}.{name}" if base else name

    # ---------------------------------------------------------------------------------------------- scopes

    def _function(self, node: cst.FunctionDef, scope: _Scope) -> None:
        qualname = f"{scope.qualname}.{node.name.value}" if scope.qualname else node.name.value
        qualname = self._unique_qualname(qualname, node.name)
        class_name = scope.qualname if scope.kind == "class" else scope.class_name
        params = pat.param_names(node.params)
        annotations = tuple(
            (param.name.value, self.tree.code_for_node(param.annotation.annotation))
            for param in pat.all_params(node.params)
            if param.annotation is not None
        )
        decorators = tuple(self._value_ref(decorator.decorator, scope) for decorator in node.decorators)
        decorator_keys = tuple(pat.decorator_key(decorator.decorator) for decorator in node.decorators)
        property_lines = tuple(sorted(self.property_reads.get(node, ())))
        for decorator in node.decorators:
            self._expression(decorator.decorator, scope)
        inner = self._function_scope(qualname, class_name, scope, node.params)
        for param, annotation in annotations:
            _declare(inner, param, annotation)
        self._block(node.body.body, inner)
        validates = node in self.validating and any(
            handed == qualname or handed.startswith(qualname + ".") for handed in self.validates_handed
        )
        if scope.kind == "function":
            scope.put(scope.env, node.name.value, UNKNOWN)
            scope.nested[node.name.value] = qualname
        name_span = self.span(node.name)
        self.signatures.append((name_span, shp.signature_of(node)))
        arguments = next((param for param in params if param in syn.ARGS_NAMES), None)
        if arguments is not None and isinstance(node.body, cst.IndentedBlock):
            self.bodies.append((name_span, shp.body_steps(node.body.body, arguments)))
        self.functions.append(
            FunctionDef(
                qualname=qualname,
                name=node.name.value,
                class_name=class_name if scope.kind != "module" or class_name else "",
                params=params,
                annotations=annotations,
                decorators=decorators,
                decorator_keys=decorator_keys,
                is_async=node.asynchronous is not None,
                reads_schema_properties=bool(property_lines),
                validates_arguments=validates,
                property_read_lines=property_lines,
                span=name_span,
                returns=tuple(inner.returns),
                rewrites_values=node in self.rewriting,
                returns_names=tuple(inner.returned_names),
                returns_items=tuple(inner.returned_items),
                returns_calls=tuple(inner.returned_calls),
                renames_keys=node in self.renaming,
                reads_annotations=node in self.annotation_reading,
                compares_schema_types=node in self.schema_type_comparing,
                keywords_param=node.params.star_kwarg.name.value if node.params.star_kwarg is not None else "",
                positional_param=star.name.value if isinstance(star := node.params.star_arg, cst.Param) else "",
                validated_params=tuple(sorted(self.validated_params.get(qualname, ()))),
            )
        )

    @staticmethod
    def _function_scope(qualname: str, class_name: str, outer: _Scope, params: cst.Parameters) -> _Scope:
        """The scope of a ``def`` or a lambda. A closure sees what its enclosing function held when it was
        defined; each parameter holds what its callers pass, and one defaulting to a name of the enclosing
        function (``async def run(tc=tc, tool=tool)``, ``lambda a, fn=fn: fn(a)``) holds what that name held,
        the idiom that binds a loop's values to a closure."""
        inner = _Scope("function", qualname, class_name)
        if outer.kind == "function":
            inner.env, inner.callables, inner.pieces = outer.child_state()
            inner.nested = dict(outer.nested)
            inner.types = dict(outer.types)
            inner.value_types = dict(outer.value_types)
            inner.element_types = dict(outer.element_types)
        inner.params = pat.param_names(params)
        for param in pat.all_params(params):
            name = param.name.value
            inner.env[name] = Param(inner.qualname, name)
            for shadowed in (inner.callables, inner.pieces, inner.types, inner.value_types, inner.element_types):
                shadowed.pop(name, None)
            default = param.default.value if isinstance(param.default, cst.Name) else None
            if default is None or outer.kind != "function":
                continue
            if default in outer.callables:
                inner.callables[name] = outer.callables[default]
            if default in outer.env and not isinstance(outer.env[default], Unknown):
                inner.env[name] = outer.env[default]
        return inner

    def _lambda(self, node: cst.Lambda, scope: _Scope) -> str:
        """A lambda is a function of its own, named after its position: its parameters are what its caller
        passes (``run_middleware`` calling ``execute(args)``), its closure what the enclosing scope held."""
        position = self.span(node)
        name = f"<lambda:{position.line}:{position.column}>"
        if node in self.function_names:
            return self.function_names[node]
        qualname = self._unique_qualname(f"{scope.qualname}.{name}" if scope.qualname else name, node)
        params = pat.param_names(node.params)
        inner = self._function_scope(qualname, scope.class_name, scope, node.params)
        self._expression(node.body, inner)
        self._returned(node.body, inner, node.body)
        self.functions.append(
            FunctionDef(
                qualname=qualname,
                name="<lambda>",
                class_name="",
                params=params,
                annotations=(),
                decorators=(),
                decorator_keys=(),
                is_async=False,
                reads_schema_properties=False,
                validates_arguments=False,
                property_read_lines=(),
                span=position,
                returns=tuple(inner.returns),
                returns_names=tuple(inner.returned_names),
                returns_items=tuple(inner.returned_items),
                returns_calls=tuple(inner.returned_calls),
            )
        )
        return qualname

    def _class(self, node: cst.ClassDef, scope: _Scope) -> None:
        qualname = f"{scope.qualname}.{node.name.value}" if scope.qualname else node.name.value
        bases = tuple(filter(None, (syn.dotted_name(arg.value) for arg in node.bases if arg.keyword is None)))
        decorators = tuple(self._value_ref(decorator.decorator, scope) for decorator in node.decorators)
        keys = tuple(pat.decorator_key(decorator.decorator) for decorator in node.decorators)
        for decorator in node.decorators:
            self._expression(decorator.decorator, scope)
        fields = tuple(
            small.target.value
            for statement in node.body.body
            if isinstance(statement, cst.SimpleStatementLine)
            for small in statement.body
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)
        )
        self.classes.append(ClassDef(qualname, bases, self.span(node.name), decorators, keys, fields))
        self._class_schema(qualname, node)
        self._block(node.body.body, _Scope("class", qualname, qualname))

    def _class_schema(self, qualname: str, node: cst.ClassDef) -> None:
        """``class Retrieval(BaseTool): parameters = {"type": "object", "properties": {...}}``: the schema of
        whatever tool the class is registered as (the linker knows the name)."""
        for statement in node.body.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                target = small.target if isinstance(small, cst.AnnAssign) else None
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                value = getattr(small, "value", None)
                if not (isinstance(target, cst.Name) and target.value in SCHEMA_KEYS and value is not None):
                    continue
                schema = self.literals.value(value)
                if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
                    properties = syn.schema_properties(schema)
                    self.schemas.append(SchemaDef(class_schema_key(qualname), properties, self.span(target)))

    # ---------------------------------------------------------------------------------------------- assignments

    def _annotated_attribute(self, target: cst.BaseExpression, annotation: str, scope: _Scope) -> None:
        """Record what an instance attribute is declared to hold, for the methods walked after this one."""
        if not scope.class_name:
            return
        owner, _, attribute = (syn.dotted_name(target) or "").partition(".")
        if scope.kind == "class" and isinstance(target, cst.Name):
            self.attribute_annotations[(scope.class_name, target.value)] = annotation
        elif scope.kind == "function" and owner == "self" and attribute and "." not in attribute:
            self.attribute_annotations[(scope.class_name, attribute)] = annotation

    @staticmethod
    def _comprehended_class(value: cst.BaseExpression, scope: _Scope) -> str:
        """The class of the values of a mapping built from a declared sequence by name (``{t.name: t for t in
        tools}`` of ``tools: List[BaseTool]``), in either branch of a conditional; '' when not known."""
        branches = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        for branch in branches:
            if not (isinstance(branch, cst.DictComp) and isinstance(branch.value, cst.Name)):
                continue
            loop = branch.for_in
            if isinstance(loop.target, cst.Name) and loop.target.value == branch.value.value:
                held = scope.element_types.get(syn.dotted_name(loop.iter) or "")
                if held:
                    return held
        return ""

    def _declared_holding(
        self, holder: str, scope: _Scope, declared: Dict[str, str], read: Callable[[str], Optional[str]]
    ) -> str:
        """The class of what a table or list holds, by its annotation: a local's (``declared``), or an instance
        attribute's (``self._tools``)."""
        if holder in declared:
            return declared[holder]
        owner, _, attribute = holder.partition(".")
        annotation = self.attribute_annotations.get((scope.class_name, attribute)) if owner == "self" else None
        return (read(annotation) or "") if annotation else ""

    def _bind_unknown(self, target: cst.BaseExpression, scope: _Scope) -> None:
        for name in pat.target_names(target):
            scope.put(scope.env, name, UNKNOWN)
            scope.drop(scope.callables, name)
            scope.drop(scope.pieces, name)

    def _assign(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
        scope: _Scope,
        statement: cst.CSTNode,
        annotation: str = "",
    ) -> None:
        if isinstance(target, cst.Subscript):
            self._item_fill(target, value, scope, statement)
            self._parsed_item(target, value, scope)
            return
        table_scope, owner, name = self._binding(target, scope)
        if name is None:
            self._bind_unknown(target, scope)
            return
        if table_scope is not None:
            self._table_or_alias(name, table_scope, owner, value, statement, annotation, scope)
        if syn.dotted_name(target) == f"self.{name}" and scope.class_name and _constructed_class(value):
            self.attribute_types[(scope.class_name, name)] = _constructed_class(value)
        if syn.dotted_name(target) == f"self.{name}" and scope.class_name and not annotation:
            held = self._comprehended_class(value, scope)
            if held and (scope.class_name, name) not in self.attribute_annotations:
                # ``self.tools = {tool.name: tool for tool in tools}`` of ``tools: List[BaseTool]``
                self.attribute_annotations[(scope.class_name, name)] = f"Dict[str, {held}]"
        if isinstance(target, cst.Name):
            described = pat.describes(value)
            if described in scope.scans:
                scope.scan_views[target.value] = described
            else:
                scope.scan_views.pop(target.value, None)
            constructed = _constructed_class(value)
            if annotation or constructed:
                _declare(scope, name, annotation or constructed)
            scope.put(scope.env, name, self._flow(value, scope))
            source = self._callable_source(value, scope)
            if source is not None:
                scope.put(scope.callables, name, source)
            else:
                scope.drop(scope.callables, name)
            piece = self._param_piece(value, scope)
            if piece is not None:
                scope.put(scope.pieces, name, piece)
            else:
                scope.drop(scope.pieces, name)

    def _unpack_call(self, target: cst.BaseExpression, value: cst.BaseExpression, scope: _Scope) -> None:
        """``args, error = parse(call)``: the first name holds the first item of what the call returns;
        ``key, value = item.split("=", 1)``: each name a piece of the text split."""
        if not (isinstance(target, (cst.Tuple, cst.List)) and target.elements and isinstance(value, cst.Call)):
            return
        callee = syn.dotted_name(value.func)
        for index, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement) or callee is None:
                break  # after a starred name, positions count from the end
            table_scope, owner, name = self._binding(element.value, scope)
            if table_scope is not None and name is not None and name != "_":
                function = scope.qualname if scope.kind == "function" else ""
                ref = ValueRef(ValueKind.CALL, callee)
                self.aliases.append(Alias(name, table_scope, owner, ref, self.span(element.value), function, index))
        first = target.elements[0].value
        flow = self._flow(value, scope)
        if isinstance(first, cst.Name) and isinstance(flow, CallResult):
            scope.put(scope.env, first.value, CallResult(flow.callee, flow.args, first_of_tuple=True))
        self._bind_text(target, flow, scope)

    @staticmethod
    def _bind_text(target: cst.BaseExpression, flow: Flow, scope: _Scope) -> None:
        """Every name of a loop's or an unpacking's target is a piece of the text the value is a piece of."""
        if isinstance(flow, (ModelText, Parsed)):
            for name in pat.target_names(target):
                scope.put(scope.env, name, flow)

    def _binding(self, target: cst.BaseExpression, scope: _Scope) -> Tuple[Optional[str], str, Optional[str]]:
        """Where an assignment target lives: (table scope or None, owner, name)."""
        if isinstance(target, cst.Name):
            kind = {"module": "module", "class": "class", "function": "local"}[scope.kind]
            owner = scope.qualname if scope.kind != "module" else ""
            return kind, owner, target.value
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value in ("self", "cls")
            and scope.class_name
        ):
            kind = "instance" if target.value.value == "self" else "class"
            return kind, scope.class_name, target.attr.value
        return None, "", None

    def _table_or_alias(
        self,
        name: str,
        table_scope: str,
        owner: str,
        value: cst.BaseExpression,
        statement: cst.CSTNode,
        annotation: str,
        scope: _Scope,
    ) -> None:
        span = self.span(statement)
        tables = len(self.tables)
        if isinstance(value, cst.Dict) and pat.looks_like_table(value):
            entries = tuple(
                Entry(syn.string_value(element.key), self._value_ref(element.value, scope), self.store(element))
                for element in value.elements
                if isinstance(element, cst.DictElement)
            )
            self.tables.append(TableDef(name, table_scope, owner, span, entries, None, annotation))
        elif isinstance(value, (cst.List, cst.Tuple)) and pat.looks_like_function_list(value):
            entries = tuple(
                Entry(None, self._value_ref(element.value, scope), self.span(element.value))
                for element in value.elements
            )
            self.tables.append(TableDef(name, table_scope, owner, span, entries, None, annotation, is_list=True))
        elif _builds_objects(value):
            objects = ValueRef(ValueKind.OBJECT)
            self.tables.append(TableDef(name, table_scope, owner, span, (), objects, annotation, is_list=True))
        elif isinstance(value, cst.DictComp):
            comprehension = self._value_ref(value.value, scope)
            target = value.for_in.target
            element = value.value
            if (
                isinstance(target, cst.Name)
                and isinstance(element, cst.Name)
                and target.value == element.value
                and pat.keyed_by_object(value.key, element.value)
            ):
                comprehension = ValueRef(ValueKind.OBJECT)  # {t.name: t for t in tools}: the tool objects themselves
            if comprehension.kind != ValueKind.OTHER:
                source = pat.mapping_source(value.for_in.iter) or ""
                self.tables.append(
                    TableDef(name, table_scope, owner, span, (), comprehension, annotation, source=source)
                )
        elif isinstance(value, cst.Call) and syn.dotted_name(value.func) == "dict" and not value.args:
            self.tables.append(TableDef(name, table_scope, owner, span, (), None, annotation))
        elif isinstance(value, cst.Call) and syn.dotted_name(value.func) == "dict":
            entries = tuple(
                Entry(arg.keyword.value, self._value_ref(arg.value, scope), self.store(arg))
                for arg in value.args
                if arg.keyword is not None
            )
            if entries and all(entry.value.kind != ValueKind.OTHER for entry in entries):
                self.tables.append(TableDef(name, table_scope, owner, span, entries, None, annotation))
        elif isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
            self._table_or_alias(name, table_scope, owner, value.left, statement, annotation, scope)
        elif isinstance(value, (cst.Name, cst.Attribute, cst.Call)):
            ref = self._value_ref(value, scope)
            if ref.kind in (ValueKind.REF, ValueKind.CALL, ValueKind.PARAM):
                function = scope.qualname if scope.kind == "function" else ""
                self.aliases.append(Alias(name, table_scope, owner, ref, span, function))
                if ref.kind == ValueKind.CALL and ref.call_args:  # may wrap a table (``T = wrap_table(RAW, ...)``)
                    self.table_shapes.append(
                        (span, shp.table_shape(statement, self.line, self.line_at_top, table_scope))
                    )
        if len(self.tables) > tables and not isinstance(value, cst.BooleanOperation):
            self.table_shapes.append((span, shp.table_shape(statement, self.line, self.line_at_top, table_scope)))

    def store(self, node: Union[cst.DictElement, cst.Arg]) -> Span:
        """The span of an entry's key (a dict element's, a keyword's), recording the value stored under it."""
        key = node.key if isinstance(node, cst.DictElement) else node.keyword
        assert key is not None
        span = self.span(key)
        self.stored.append((span, shp.stored_value(node.value)))
        return span

    def _item_fill(
        self, target: cst.Subscript, value: cst.BaseExpression, scope: _Scope, statement: cst.CSTNode
    ) -> None:
        table = syn.dotted_name(target.value)
        key = syn.subscript_index(target)
        if table is None or key is None:
            return
        ref = self._value_ref(value, scope)
        if ref.kind == ValueKind.OTHER:
            return
        key_flow = self._flow(key, scope)
        span = self.span(statement)
        if isinstance(statement, cst.Assign):
            self.fill_nodes.append((span, FillNode.ASSIGN))
            self.stored.append((span, shp.stored_value(statement.value)))
        else:
            self.fill_nodes.append((span, FillNode.NONE))
        self.fills.append(
            TableFill(
                table=table,
                function=scope.qualname if scope.kind == "function" else "",
                key=syn.string_value(key),
                key_param=key_flow.name if isinstance(key_flow, Param) else None,
                value=ref,
                span=span,
            )
        )

    def _parsed_item(self, target: cst.Subscript, value: cst.BaseExpression, scope: _Scope) -> None:
        """``kwargs[key.strip()] = value.strip()``, key and value pieces of one parse: the mapping is filled
        from that parse (the arguments of a tool call written in text)."""
        index = syn.subscript_index(target)
        if not isinstance(target.value, cst.Name) or index is None:
            return
        key, stored = self._flow(index, scope), self._flow(value, scope)
        if isinstance(key, Parsed) and key == stored:
            scope.put(scope.env, target.value.value, key)

    def _update_fill(self, call: cst.Call, scope: _Scope) -> None:
        table = syn.dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None
        if table is None:
            return
        function = scope.qualname if scope.kind == "function" else ""
        for arg in call.args:
            pairs: List[Tuple[Optional[str], cst.BaseExpression, Union[cst.DictElement, cst.Arg], FillNode]]
            if arg.keyword is not None:
                pairs = [(arg.keyword.value, arg.value, arg, FillNode.KEYWORD)]
            elif isinstance(arg.value, cst.Dict) and pat.looks_like_table(arg.value):
                pairs = [
                    (syn.string_value(el.key), el.value, el, FillNode.ELEMENT)
                    for el in arg.value.elements
                    if isinstance(el, cst.DictElement)
                ]
            else:
                continue
            for key, value, holder, kind in pairs:
                ref = self._value_ref(value, scope)
                if ref.kind != ValueKind.OTHER:
                    span = self.store(holder)
                    self.fill_nodes.append((span, kind))
                    self.fills.append(TableFill(table, function, key, None, ref, span))

    def _value_ref(self, value: cst.BaseExpression, scope: _Scope) -> ValueRef:
        dotted = syn.dotted_name(value)
        if dotted is not None:
            if dotted in scope.nested:
                return ValueRef(ValueKind.DEF, scope.nested[dotted])
            if scope.kind == "function" and dotted in scope.params:
                return ValueRef(ValueKind.PARAM, dotted)
            base, _, attribute = dotted.partition(".")
            if attribute and base in scope.types:  # tool.run of tool: BaseTool is BaseTool's run, bound
                return ValueRef(ValueKind.REF, f"{scope.types[base]}.{attribute}")
            return ValueRef(ValueKind.REF, dotted)
        if isinstance(value, cst.Lambda):
            body = value.body
            callee = syn.dotted_name(body.func) if isinstance(body, cst.Call) else None
            inner = tuple(filter(None, (syn.dotted_name(call.func) for call in syn.iter_calls(body))))
            return ValueRef(ValueKind.LAMBDA, callee or "", inner)
        if isinstance(value, cst.Call):
            callee = syn.dotted_name(value.func)
            if callee is not None:
                names = tuple(filter(None, (syn.dotted_name(arg.value) for arg in value.args if arg.keyword is None)))
                return ValueRef(ValueKind.CALL, callee, names)
        return ValueRef(ValueKind.OTHER)

    # ---------------------------------------------------------------------------------------------- expressions

    def _expression(self, expression: cst.CSTNode, scope: _Scope) -> None:
        """Record every call in an expression and every lambda in it (a function of its own, whose calls run
        later), then bind what assignment expressions assign (``if (fn := TOOLS.get(name)): fn(args)``)."""
        calls, lambdas = syn.calls_and_lambdas(expression)
        for call in calls:
            self._call(call, scope)
        for lambda_node in lambdas:
            self._lambda(lambda_node, scope)
        for node in syn.walk(expression):
            if isinstance(node, cst.NamedExpr):
                self._assign(node.target, node.value, scope, node)
            elif scope.kind == "function":
                self._string_use(node, scope)
                self._identity_reads(node, scope)

    def _identity_reads(self, node: cst.CSTNode, scope: _Scope) -> None:
        """``fn.__code__``, ``inspect.getfullargspec(fn)``, ``fn is other``: of a value taken from a table, or of a
        parameter (which its callers may hand a table's value)."""
        read: List[Tuple[cst.BaseExpression, str]] = []
        if isinstance(node, cst.Attribute) and node.attr.value in _CODE_ATTRIBUTES:
            read.append((node.value, f"`{node.attr.value}`"))
        elif isinstance(node, cst.Call) and node.args and not node.args[0].star:
            callee = self.resolve_local(syn.dotted_name(node.func) or "")
            unwrapped = any(
                arg.keyword is not None and arg.keyword.value == "follow_wrapped" for arg in node.args
            )  # inspect.signature(fn, follow_wrapped=False): the wrapper's own
            if callee in _CODE_READERS or (callee == "inspect.signature" and unwrapped):
                read.append((node.args[0].value, f"`{callee}`"))
        elif isinstance(node, cst.Comparison):
            operands = [node.left, *(target.comparator for target in node.comparisons)]
            constant = any(isinstance(operand, cst.Name) and operand.value in _CONSTANTS for operand in operands)
            if not constant and any(isinstance(target.operator, (cst.Is, cst.IsNot)) for target in node.comparisons):
                read.extend((operand, "`is`") for operand in operands)  # ``fn is None`` holds for a wrapper too
        for value, what in read:
            table, parameter = self._callable_origin(value, scope)
            if table or parameter:
                span = self.span(node)
                self.identity_reads.setdefault(span, IdentityRead(scope.qualname, table, parameter, what, span))

    def _callable_origin(self, value: cst.BaseExpression, scope: _Scope) -> Tuple[str, str]:
        """``(table, "")`` for a value looked up in a table (``fn`` of ``fn = TOOLS[name]``, ``TOOLS[name]``,
        ``TOOLS.get(name)``), ``("", name)`` for a parameter of the function, else ``("", "")``."""
        if isinstance(value, cst.Name):
            held = scope.callables.get(value.value)
            if held is not None and held.table:
                return held.table, ""
            flow = scope.env.get(value.value)
            if isinstance(flow, Param) and flow.function == scope.qualname and flow.name == value.value:
                return "", value.value
            return "", ""
        pair = syn.get_call(value)
        mapping = value.value if isinstance(value, cst.Subscript) else pair[0] if pair is not None else None
        table = syn.dotted_name(mapping) if mapping is not None else None
        return (table or "", "")

    def _string_use(self, node: cst.CSTNode, scope: _Scope) -> None:
        """``steps.strip()`` or ``args["steps"][1:]``: a parameter taken for a string (parses: see ``_call``)."""
        used: Optional[cst.BaseExpression] = None
        operation = ""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in syn.STRING_METHODS:
                used, operation = node.func.value, f"`.{node.func.attr.value}()`"
        elif isinstance(node, cst.Subscript) and any(isinstance(item.slice, cst.Slice) for item in node.slice):
            used, operation = node.value, "a slice"
        piece = self._param_piece(used, scope) if used is not None else None
        if piece is not None:
            span = self.span(node)
            self.string_uses.setdefault(span, StringUse(scope.qualname, piece, operation, span))

    def _offered_tools(self, call: cst.Call, function: str) -> None:
        """The callables a call offers the model as tools (``tools=[add_two_numbers, get_weather]``, directly or
        through a module constant): their schemas come from their signatures."""
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value != "tools":
                continue
            listed = arg.value
            if isinstance(listed, cst.Name) and listed.value in self.constants:
                listed = self.constants[listed.value]
            if isinstance(listed, (cst.List, cst.Tuple)):
                for element in listed.elements:
                    reference = syn.dotted_name(element.value) if isinstance(element, cst.Element) else None
                    if reference is not None:
                        self.offered_tools.append((function, reference))

    def _call(self, call: cst.Call, scope: _Scope) -> None:
        function = scope.qualname if scope.kind == "function" else ""
        self._dispatch(call, scope, function)
        callee = syn.callee_name(call.func)
        if callee is None:
            return
        if callee.endswith(".update") and call.args:
            self._update_fill(call, scope)
        positional = tuple(self._flow(arg.value, scope) for arg in call.args if arg.keyword is None and not arg.star)
        keywords = tuple(
            (arg.keyword.value, self._flow(arg.value, scope)) for arg in call.args if arg.keyword is not None
        )
        star = tuple(self._flow(arg.value, scope) for arg in call.args if arg.star)
        if _validator(callee) or pat.constructs_argument_model(call):
            handed = positional + tuple(flow for _, flow in keywords) + star
            for flow in handed:
                for param in params_in(flow):
                    self.validated_params.setdefault(param.function, set()).add(param.name)
            if any(_origin_known(flow) for flow in handed):
                self.validates_handed.add(function)
            self.validates_handed.update(param.function for flow in handed for param in params_in(flow))
        self._offered_tools(call, function)
        literals = []
        looked_up = []
        functions = []
        for position, arg in enumerate(call.args):
            if arg.star:
                break
            slot = arg.keyword.value if arg.keyword is not None else str(position)
            text, ref = syn.string_value(arg.value), syn.dotted_name(arg.value)
            if text is not None:
                literals.append((slot, "str", text))
            elif ref is not None:
                literals.append((slot, "ref", ref))
                if ref in scope.nested:
                    functions.append((slot, scope.nested[ref]))
            elif isinstance(arg.value, cst.Lambda):
                functions.append((slot, self._lambda(arg.value, scope)))
                if isinstance(arg.value.body, cst.Call):
                    called = syn.dotted_name(arg.value.body.func)
                    if called is not None:
                        literals.append((slot, "lambda", called))
            if isinstance(arg.value, cst.Name) and arg.value.value in scope.callables:
                source = scope.callables[arg.value.value]
                looked_up.append((slot, source.table, source.resolver, source.key, source.key_is_name))
        self.calls.append(
            Call(
                function,
                callee,
                positional,
                keywords,
                star,
                self.span(call),
                tuple(literals),
                tuple(looked_up),
                tuple(functions),
            )
        )
        if self.resolve_local(callee) in _JSON_PARSERS and call.args and scope.kind == "function":
            piece = self._param_piece(syn.whitespace_stripped(call.args[0].value), scope)
            if piece is not None:
                parser = self.resolve_local(callee)
                span = self.span(call)
                self.json_parses.append(JsonParse(function, piece, parser, span))
                self.string_uses[span] = StringUse(function, piece, f"`{parser}`", span)

    def _dispatch(self, call: cst.Call, scope: _Scope, function: str) -> None:
        source = self._callable_source(call.func, scope)
        args: Sequence[cst.Arg] = call.args
        kind, via = SiteKind.CALL, ""
        if source is None and isinstance(call.func, cst.Name) and self._own_param(call.func.value, scope):
            # ``tool_fn(**tool_args)`` of a callable handed in: its callers say where they looked it up
            source = _Callable("", "", "", False, call.func.value)
        if source is None:
            source, kind, via = self._bypass_source(call.func, scope)
        if source is None and kind is SiteKind.CALL:
            source = self._registry_lookup(call.func)
        if source is None:
            callee = syn.dotted_name(call.func) or ""
            last = callee.split(".")[-1]
            position = 0 if last in RUNNERS_FIRST else 1 if last in RUNNERS_SECOND else None
            if position is None or len(call.args) <= position:
                return
            source = self._callable_source(call.args[position].value, scope, resolver_calls=False)
            args, kind, via = call.args[position + 1 :], SiteKind.RUNNER, last
        if source is None:
            return
        flows = tuple(self._flow(arg.value, scope) for arg in args)
        for option in (source,) + source.alternatives:
            reached = kind is SiteKind.CALL and bool(option.reached)
            self.dispatches.append(
                Dispatch(
                    function,
                    option.table,
                    option.resolver,
                    option.key,
                    option.key_is_name,
                    flows,
                    SiteKind.BYPASS if reached else kind,
                    self.span(call),
                    option.param,
                    option.constructed,
                    option.declared,
                    option.reached if reached else via,
                    option.key_flow,
                    option.scanned,
                    option.found_on,
                )
            )

    def _registry_lookup(self, func: cst.BaseExpression) -> Optional[_Callable]:
        """``docket.add(key, **options)(**arguments)``: what a method of an object returns for a key, called."""
        if not (isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) and func.args):
            return None
        resolver, first = syn.dotted_name(func.func), func.args[0]
        if resolver is None or "." not in resolver or first.keyword is not None or first.star:
            return None
        return _Callable("", resolver, self._text(first.value), syn.is_tool_name_key(first.value))

    def _bypass_source(self, func: cst.BaseExpression, scope: _Scope) -> Tuple[Optional[_Callable], SiteKind, str]:
        """``T[name].func(...)``, ``tool._run(...)``: a call that reaches past a looked-up tool object."""
        reached: List[str] = []
        while isinstance(func, cst.Attribute):
            reached.append(func.attr.value)
            func = func.value
        if not reached or reached[0] not in framework_models.RAW_ENTRIES:
            # ``tool.func.async_call(...)`` calls a method of the wrapped object, not the bare function
            if len(reached) != 1:
                return None, SiteKind.CALL, ""
            # ``tool = TOOLS.get(name); tool.call(ctx, **args)``, ``get_tool(name).execute(**args)``: a method of a
            # tool object looked up by name, here or by the callers that hand it in
            source = self._callable_source(func, scope)
            if source is None and isinstance(func, cst.Name) and self._own_param(func.value, scope):
                source = _Callable("", "", "", False, func.value, declared=scope.types.get(func.value, ""))
            return source, SiteKind.METHOD, reached[0]
        kind, via = SiteKind.BYPASS, reached[0]
        if isinstance(func, cst.Call) and not func.args and syn.dotted_name(func.func) is not None:
            # ``SearchTool()._run(**call["args"])``: a tool object built right here
            return _Callable("", "", "", False, constructed=syn.dotted_name(func.func) or ""), kind, via
        source = self._callable_source(func, scope, resolver_calls=False)
        built = self.attribute_types.get((scope.class_name, reached[1])) if len(reached) == 2 else None
        if source is None and built is not None and syn.dotted_name(func) == "self":
            # ``self.knowledge_tool._run(...)``, the attribute built from a class in an earlier method
            return _Callable("", "", "", False, constructed=built), kind, via
        if source is None and isinstance(func, cst.Name):
            # a tool object handed in by the caller (its callers say where they looked it up), or captured from
            # an enclosing function; ``tool: BaseTool`` says what it is when no caller looked it up
            declared = scope.types.get(func.value, "")
            if self._own_param(func.value, scope):
                return _Callable("", "", "", False, func.value, constructed=declared), kind, via
            if declared:
                return _Callable("", "", "", False, constructed=declared), kind, via
        return source, kind, via

    def _cast_operand(self, expression: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The value of ``typing.cast(T, value)``, which is ``value`` itself at run time."""
        if not (isinstance(expression, cst.Call) and len(expression.args) == 2):
            return None
        callee = syn.dotted_name(expression.func)
        if callee is None or self.resolve_local(callee) != "typing.cast":
            return None
        value = expression.args[1]
        return value.value if value.keyword is None and not value.star else None

    @staticmethod
    def _own_param(name: str, scope: _Scope) -> bool:
        """``name`` still holds the parameter of that name of the function being walked."""
        flow = scope.env.get(name)
        return isinstance(flow, Param) and flow.function == scope.qualname and flow.name == name

    def _callable_source(
        self, expression: cst.BaseExpression, scope: _Scope, resolver_calls: bool = True
    ) -> Optional[_Callable]:
        """What callable an expression denotes: ``T[key]``, ``T.get(key)``, a linear scan, a name holding one,
        ``resolve(key)``, awaited or not (``await registry.get_async(name)``)."""
        if isinstance(expression, cst.Await):
            expression = expression.expression
        operand = self._cast_operand(expression)
        if operand is not None:
            expression = operand
        if isinstance(expression, cst.IfExp):
            # ``getattr(self, name) if name in tools else None``: the branch that can hold a callable
            branches = [branch for branch in (expression.body, expression.orelse) if not syn.is_none(branch)]
            return self._callable_source(branches[0], scope, resolver_calls) if len(branches) == 1 else None
        if isinstance(expression, cst.Subscript):
            table = _table_expression(expression.value)
            key = syn.subscript_index(expression)
            if table is not None and key is not None and syn.string_value(key) is None:
                declared = self._declared_holding(table, scope, scope.value_types, syn.mapping_value_class)
                key_flow = self._flow(key, scope)
                return _Callable(
                    table, "", self._text(key), syn.is_tool_name_key(key), declared=declared, key_flow=key_flow
                )
            return None
        pair = syn.get_call(expression)
        if pair is not None:
            table = _table_expression(pair[0])
            if table is not None and syn.string_value(pair[1]) is None:
                declared = self._declared_holding(table, scope, scope.value_types, syn.mapping_value_class)
                key_flow = self._flow(pair[1], scope)
                return _Callable(
                    table, "", self._text(pair[1]), syn.is_tool_name_key(pair[1]), declared=declared, key_flow=key_flow
                )
            return None
        if isinstance(expression, cst.Name):
            return scope.callables.get(expression.value)
        if (
            isinstance(expression, cst.Attribute)
            and expression.attr.value in framework_models.RAW_ENTRIES
            and isinstance(expression.value, cst.Name)
        ):
            # ``func = tool.func`` of a tool object looked up by name (a linear scan's match, a table's value)
            holder = expression.value.value
            looked_up = scope.callables.get(holder)
            if looked_up is not None and not looked_up.reached:
                return looked_up._replace(reached=expression.attr.value, alternatives=())
            if looked_up is None and self._own_param(holder, scope):
                # ``fn = self.fn``, ``func = tool.func`` of a tool object handed in: as if called in place
                declared = scope.types.get(holder, "")
                return _Callable("", "", "", False, holder, constructed=declared, reached=expression.attr.value)
            return None
        scan = pat.linear_scan(expression)
        if scan is not None:
            declared = self._declared_holding(scan[0], scope, scope.element_types, syn.sequence_element_class)
            return _Callable(scan[0], "", self._text(scan[1]), True, declared=declared, scanned=True)
        if isinstance(expression, cst.Call) and resolver_calls:
            callee = syn.dotted_name(expression.func)
            keys = [arg.value for arg in expression.args if not arg.star and syn.is_tool_name_key(arg.value)]
            # a constant names where to look (``get_function_from_module(CORE_TOOL_MODULE_NAME, function_name)``)
            keys.sort(key=lambda key: isinstance(key, cst.Name) and key.value.isupper())
            if callee is not None and keys:  # resolve(name), resolve_executor(agent, name), getattr(self, name)
                found_on = self._text(expression.args[0].value) if callee == "getattr" else ""
                return _Callable("", callee, self._text(keys[0]), True, found_on=found_on)
        return None

    def _returned(self, value: cst.BaseExpression, scope: _Scope, statement: cst.CSTNode) -> None:
        if scope.kind != "function":
            return
        returned = syn.dotted_name(value)
        if returned is not None:
            scope.returned_names.append(returned)
        elif isinstance(value, (cst.Dict, cst.DictComp)):
            before = len(self.tables)
            self._table_or_alias(RETURNED_TABLE, "local", scope.qualname, value, statement, "", scope)
            if len(self.tables) > before:
                scope.returned_names.append(RETURNED_TABLE)
        if isinstance(value, cst.Tuple):
            for index, element in enumerate(value.elements):
                item = syn.dotted_name(element.value)
                if item is not None and not isinstance(element, cst.StarredElement):
                    scope.returned_items.append(ReturnedItem(index, item))
        elif isinstance(value, cst.Call):
            forwarded = syn.dotted_name(value.func)
            if forwarded is not None:
                scope.returned_calls.append(forwarded)
        if isinstance(value, cst.Tuple) and value.elements:
            scope.returns.append((True, self._flow(value.elements[0].value, scope)))
        else:
            scope.returns.append((False, self._flow(value, scope)))
        source, method = self._callable_source(value, scope), ""
        if source is None and isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name):
            # ``for function in functions: if function.name == name: return function.execute``
            source, method = scope.callables.get(value.value.value), value.attr.value
        if source is None or (method and source.reached):
            return
        key_flow = scope.env.get(source.key, UNKNOWN)
        self.lookups.append(
            Lookup(
                function=scope.qualname,
                table=source.table or f"{source.resolver}()",
                key_param=key_flow.name if isinstance(key_flow, Param) else None,
                span=self.span(statement),
                method=method,
            )
        )

    def _flow(self, node: cst.BaseExpression, scope: _Scope, depth: int = 0) -> Flow:
        """What an expression holds, in terms of the model's arguments."""
        if depth > _MAX_FLOW_DEPTH:
            return UNKNOWN
        if isinstance(node, cst.Name):
            return scope.env.get(node.value, UNKNOWN)
        if isinstance(node, cst.Await):
            return self._flow(node.expression, scope, depth + 1)
        if isinstance(node, cst.Attribute):
            base = syn.dotted_name(node.value)
            if (
                framework_models.holds_arguments(node.attr.value)
                and (
                    base not in ("self", "cls")
                    or (base == "self" and framework_models.TOOL_CALL_RECORD_CLASS.search(scope.class_name))
                )
                and not _declared_elsewise(base, scope)
            ):
                # ``call.args``; ``self.args`` inside a record of a tool call (``class ToolCall: name; args``),
                # not of a tool, whose ``args`` are what it declares
                return Raw(f".{node.attr.value}", self.span(node))
            if pat.reads_model_text(node):
                return ModelText(self.span(node))
            return _piece_of(self._flow(node.value, scope, depth + 1))
        if isinstance(node, cst.Subscript):
            key = syn.subscript_key(node)
            if key is not None and framework_models.holds_arguments(key):
                return Raw(f"[{key!r}]", self.span(node))
            if pat.reads_model_text(node):
                return ModelText(self.span(node))
            return _piece_of(self._flow(node.value, scope, depth + 1))
        if isinstance(node, cst.Call):
            operand = self._cast_operand(node)
            if operand is not None:
                return self._flow(operand, scope, depth + 1)
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in framework_models.ARGUMENT_METHODS:
                # part.args_as_dict(): a framework's argument decoder
                return Raw(f".{node.func.attr.value}()", self.span(node))
            return self._call_flow(node, scope, depth)
        if isinstance(node, cst.Dict):
            starred = [el.value for el in node.elements if isinstance(el, cst.StarredDictElement)]
            if starred and len(starred) == len(node.elements):
                return _either(tuple(self._flow(value, scope, depth + 1) for value in starred))
            return UNKNOWN
        if isinstance(node, cst.BooleanOperation):
            return _either((self._flow(node.left, scope, depth + 1), self._flow(node.right, scope, depth + 1)))
        if isinstance(node, cst.IfExp):
            return _either((self._flow(node.body, scope, depth + 1), self._flow(node.orelse, scope, depth + 1)))
        return UNKNOWN

    def _call_flow(self, node: cst.Call, scope: _Scope, depth: int) -> Flow:
        callee = syn.dotted_name(node.func)
        if callee is not None and self.resolve_local(callee) in _ARGUMENT_PARSERS:
            if node.args and pat.names_a_result(node.args[0].value):
                return UNKNOWN  # a tool's (or a service's) output, not the model's arguments
            inner = self._flow(node.args[0].value, scope, depth + 1) if node.args else UNKNOWN
            options = inner.options if isinstance(inner, Either) else (inner,)  # json.loads(raw or "{}")
            if any(isinstance(o, Raw) or (isinstance(o, Param) and o.name in syn.ARGS_NAMES) for o in options):
                return Raw("arguments", self.span(node))
            if isinstance(inner, Parsed):  # json.loads(match.group(2)): still a piece of that parse
                return Either((Raw(WEAK_JSON, self.span(node)), inner))
            return Raw(WEAK_JSON, self.span(node))
        text = self._text_flow(node, scope, depth)
        if text is not None:
            return text
        pair = syn.get_call(node)
        if pair is not None:
            key = syn.string_value(pair[1])
            if (
                key is not None
                and framework_models.holds_arguments(key)
                and syn.dotted_name(pair[0]) not in ("self", "cls")
            ):
                return Raw(f".get({key!r})", self.span(node))
            return _piece_of(self._flow(pair[0], scope, depth + 1))
        if callee is None:
            return UNKNOWN
        if callee in _COPIES and node.args:
            return self._flow(node.args[0].value, scope, depth + 1)
        if callee.endswith(".copy") and isinstance(node.func, cst.Attribute):
            return _piece_of(self._flow(node.func.value, scope, depth + 1))
        args = tuple(self._flow(arg.value, scope, depth + 1) for arg in node.args)
        return CallResult(callee, args)

    def _text_flow(self, node: cst.Call, scope: _Scope, depth: int) -> Optional[Flow]:
        """A regular-expression match of a text (a new :class:`Parsed`), or a piece of a text or of a match
        (``line.split("TOOL:")[1].strip()``, ``match.group(1)``); None for any other call."""
        func = node.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method in pat.TEXT_PIECES:
            receiver = self._flow(func.value, scope, depth + 1)
            return receiver if isinstance(receiver, (ModelText, Parsed)) else None
        if method not in pat.REGEX_MATCHES:
            return None
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if self.resolve_local(syn.dotted_name(func.value) or "") == "re":
            text_at = 1
        elif self._compiled_pattern(func.value):
            text_at = 0
        else:
            return None
        if len(positional) <= text_at:
            return None
        text = self._flow(positional[text_at], scope, depth + 1)
        if isinstance(text, (ModelText, Param, Parsed)):
            return Parsed(text, self.span(node))
        return None

    def _compiled_pattern(self, node: cst.BaseExpression) -> bool:
        """``re.compile(...)``, written here or as a module constant (``TOOL_LINE = re.compile(...)``)."""
        if isinstance(node, cst.Name):
            node = self.constants.get(node.value, node)
        return isinstance(node, cst.Call) and self.resolve_local(syn.dotted_name(node.func) or "") == "re.compile"

    def _param_piece(self, node: cst.BaseExpression, scope: _Scope) -> Optional[str]:
        """The tool parameter an expression reads: a named parameter, ``args["p"]``, ``args.get("p")``."""
        if scope.kind != "function":
            return None
        if isinstance(node, cst.Name):
            if node.value in scope.pieces:
                return scope.pieces[node.value]
            flow = scope.env.get(node.value)
            if (
                isinstance(flow, Param)
                and flow.function == scope.qualname
                and flow.name == node.value
                and node.value not in ("self", "cls")
            ):
                return node.value
            return None
        if isinstance(node, cst.BooleanOperation):  # args.get("p") or {}
            return self._param_piece(node.left, scope)
        mapping: Optional[cst.BaseExpression] = None
        key: Optional[str] = None
        if isinstance(node, cst.Subscript):
            mapping, key = node.value, syn.subscript_key(node)
        else:
            pair = syn.get_call(node)
            if pair is not None:
                mapping, key = pair[0], syn.string_value(pair[1])
        if mapping is None or key is None or not isinstance(mapping, cst.Name):
            return None
        flow = scope.env.get(mapping.value)
        if self._is_own_arguments(flow, scope):
            return key
        if isinstance(flow, CallResult) and any(self._is_own_arguments(arg, scope) for arg in flow.args):
            return key  # params = self._verify_args(params): the same arguments, checked by a helper
        return None

    @staticmethod
    def _is_own_arguments(flow: Optional[Flow], scope: _Scope) -> bool:
        return isinstance(flow, Param) and flow.function == scope.qualname and flow.name in syn.ARGS_NAMES

    def _text(self, node: cst.CSTNode) -> str:
        return self.tree.code_for_node(node)

    # ---------------------------------------------------------------------------------------------- name chains

    def _name_chain(self, statements: Sequence[cst.CSTNode], index: int, scope: _Scope) -> None:
        """Record an if/elif chain on a name whose fallback hands that name on (``else: handle(name, args)``)."""
        first = statements[index]
        assert isinstance(first, cst.If)
        tested = pat.name_test(first.test)
        if tested is None or first in self.chain_members:
            return  # not a name test, or an ``elif`` of a chain already considered from its ``if``
        if index > 0 and isinstance(statements[index - 1], cst.If):
            previous = pat.name_test(statements[index - 1].test)  # type: ignore[attr-defined]
            if previous is not None and previous[0] == tested[0]:
                return  # already recorded as part of the run that starts earlier
        variable = tested[0]
        arms: List[Tuple[cst.If, Tuple[str, ...]]] = []
        fallback_body: Optional[Sequence[cst.CSTNode]] = None
        position = index
        ended_with_else = False
        while position < len(statements):
            statement = statements[position]
            if not isinstance(statement, cst.If):
                fallback_body = [statement]
                break
            current: Optional[cst.If] = statement
            ended_with_else = False
            while current is not None:
                test = pat.name_test(current.test)
                if test is None or test[0] != variable:
                    fallback_body = [current]
                    ended_with_else = True
                    break
                arms.append((current, test[1]))
                self.chain_members.add(current)
                orelse = current.orelse
                if isinstance(orelse, cst.If):
                    current = orelse
                elif isinstance(orelse, cst.Else):
                    fallback_body = orelse.body.body
                    ended_with_else = True
                    current = None
                else:
                    current = None
            if ended_with_else:
                break
            position += 1
        if not ended_with_else:
            # No ``else``: the statement after the chain runs for an arm that does not leave (return, raise,
            # continue, break), so such an arm is not an alternative to the fallback but a step before it.
            arms = [(arm, names) for arm, names in arms if pat.leaves(arm.body)]
        if arms and fallback_body:
            tested_arms = [(arm.test, names, arm.body) for arm, names in arms]
            self._record_chain(variable, tested_arms, fallback_body, first.test, scope)

    def _match_chain(self, statement: cst.Match, scope: _Scope) -> None:
        """``match name: case "todo": ... case _: handle(name, args)``: the same chain, written as a match."""
        variable = syn.dotted_name(statement.subject)
        if variable is None:
            return
        arms = []
        fallback_body: Optional[Sequence[cst.CSTNode]] = None
        for case in statement.cases:
            names = pat.match_names(case.pattern)
            if names and case.guard is None:
                arms.append((case.pattern, names, case.body))
            elif isinstance(case.pattern, cst.MatchAs) and case.pattern.pattern is None and case.guard is None:
                fallback_body = case.body.body
                break
            else:
                return
        if arms and fallback_body:
            self._record_chain(variable, arms, fallback_body, statement.subject, scope)

    def _record_chain(
        self,
        variable: str,
        arms: Sequence[Tuple[cst.CSTNode, Tuple[str, ...], cst.BaseSuite]],
        fallback_body: Sequence[cst.CSTNode],
        anchor: cst.CSTNode,
        scope: _Scope,
    ) -> None:
        fallbacks = self._fallback_calls(fallback_body, variable)
        if not fallbacks:
            return
        chain_arms = []
        for arm_index, (test, names, body) in enumerate(arms):
            closures = tuple(syn.definitions_in(body))
            if closures:
                self.pending_closures.append((len(self.chains), arm_index, closures))
            calls = list(pat.all_calls(body))
            flows = tuple(
                self._flow(arg.value, scope)
                for call in calls
                for arg in call.args
                if not isinstance(arg.value, cst.Name) or arg.value.value != variable
            )
            callees = tuple(filter(None, (syn.dotted_name(call.func) for call in calls)))
            chain_arms.append(ChainArm(names, flows, callees, self.span(test), self.span(body)))
        function = scope.qualname if scope.kind == "function" else ""
        self.chains.append(NameChain(function, variable, tuple(chain_arms), fallbacks, self.span(anchor)))

    def _fallback_calls(self, body: Sequence[cst.CSTNode], variable: str) -> Tuple[Tuple[str, Span], ...]:
        """The calls in the fallback that are handed the tested name (or a copy of it, such as the ``_tn`` of
        ``_tn, _ta = tool_name, args`` captured for a lambda), in source order; the calls of the closures it
        defines too (``def _execute(next_args): return handle_function_call(function_name, next_args)``, run by
        a middleware it hands ``_execute`` to)."""
        names = {variable}
        found: List[Tuple[str, Span]] = []
        for statement in body:
            for call in syn.iter_calls(statement, into_functions=True):
                callee = syn.callee_name(call.func)
                passes_name = any(isinstance(arg.value, cst.Name) and arg.value.value in names for arg in call.args)
                if callee is not None and passes_name:
                    found.append((callee, self.span(call)))
            for target, value in pat.simple_assignments(statement):
                if syn.dotted_name(value) in names and isinstance(target, cst.Name):
                    names.add(target.value)
        return tuple(found)


# -------------------------------------------------------------------------------------------------- helpers


def _declare(scope: _Scope, name: str, annotation: str) -> None:
    """Record what an annotation says ``name`` holds: an object of a class, or a mapping of such objects."""
    declarations = (
        (scope.types, syn.annotated_class(annotation)),
        (scope.value_types, syn.mapping_value_class(annotation)),
        (scope.element_types, syn.sequence_element_class(annotation)),
    )
    for kinds, declared in declarations:
        if declared is not None:
            kinds[name] = declared
        else:
            kinds.pop(name, None)


def _constructed_class(value: cst.BaseExpression) -> str:
    """``tool = SearchTool()``: the class an object is built from, by the convention that classes are
    capitalised (a call of anything else says nothing of what it returns)."""
    if isinstance(value, cst.Call):
        callee = syn.dotted_name(value.func) or ""
        if callee.rpartition(".")[2][:1].isupper():
            return callee
    return ""


def _declared_elsewise(base: Optional[str], scope: _Scope) -> bool:
    """``spec.args`` of ``spec: NamedSpec``: a name declared a class whose name says nothing of a model's call
    holds that class's own ``args`` (a configuration's constructor arguments), not a tool call's."""
    declared = scope.types.get(base or "")
    return (
        declared is not None
        and declared.rpartition(".")[2] not in framework_models.UNINFORMATIVE_ANNOTATIONS
        and not framework_models.CALL_CARRIER_CLASS.search(declared)
    )


def _builds_objects(value: cst.BaseExpression) -> bool:
    """``[ReadFile(), ListDir()]``, ``[Function(path) for path in folder.glob("*.py")]``: a list of objects built
    from classes, which a scan of their names can look tools up in."""
    if isinstance(value, cst.ListComp):
        return bool(_constructed_class(value.elt))
    return (
        isinstance(value, (cst.List, cst.Tuple))
        and bool(value.elements)
        and all(isinstance(element, cst.Element) and _constructed_class(element.value) for element in value.elements)
    )


def _table_expression(node: cst.BaseExpression) -> Optional[str]:
    """A table as written: a dotted name, or ``f()`` for what a call without arguments returns
    (``self._get_tools()[name]``)."""
    dotted = syn.dotted_name(node)
    if dotted is None and isinstance(node, cst.Call) and not node.args:
        head = syn.dotted_name(node.func)
        return f"{head}()" if head is not None else None
    return dotted


def _undo(log: Sequence[Tuple[Dict[str, Any], str, object]]) -> None:
    """Put back what the writes of ``log`` replaced, newest first."""
    for table, name, previous in reversed(log):
        if previous is _ABSENT:
            table.pop(name, None)
        else:
            table[name] = previous


def _runs(hits: Sequence[Tuple[int, object]], count: int, before: object) -> List[Tuple[object, int]]:
    """What a name holds after each of ``count`` branches, in order, as runs of (value, branches): ``hits`` are
    the branches that bound it (index and value), in order; every other branch left it as it was before."""
    runs: List[Tuple[object, int]] = []
    position = 0
    for index, value in hits:
        if index > position:
            runs.append((before, index - position))
        runs.append((value, 1))
        position = index + 1
    if count > position:
        runs.append((before, count - position))
    return runs


def _with_alternatives(held: Sequence[_Callable]) -> object:
    """One callable standing for what several branches bound a name to (``_ABSENT`` when none did)."""
    singles: List[_Callable] = []
    for option in held:
        for single in (option._replace(alternatives=()),) + option.alternatives:
            if single not in singles:
                singles.append(single)
    return singles[0]._replace(alternatives=tuple(singles[1:])) if singles else _ABSENT


def _either_nested(runs: Sequence[Tuple[Flow, int]]) -> Flow:
    """What a name may hold after an if/elif chain whose arms left it as ``runs`` (see :func:`_runs`): each arm
    against what the arms after it merge to, as Python nests the chain (an ``elif`` is the ``else`` of the arm
    before). The eight-alternative bound of :func:`_either` applies at every level, so what the first arms
    bind survives a long chain. A run of arms that leave the name alone folds only until the merge stops
    changing (from then on it gives the same flows seen at the same places), so a long chain costs the arms
    that bind the name."""
    merged: Optional[Flow] = None
    for value, times in reversed(runs):
        for _ in range(times):
            folded = value if merged is None else _either((value, merged))
            unchanged = folded == merged  # equal flows may still differ in where they were seen
            merged = folded
            if unchanged:
                break
    assert merged is not None
    return merged


#: The most nodes a name's flow may have, counted as a tree. A value rebuilt from itself in branch after branch
#: (``out = replace(out, ...)`` in every arm of a long function) shares its parts in memory, but doubles as a
#: tree with each branch: compared, stored and decoded as one, it grew to gigabytes.
_MAX_FLOW_NODES = 512


def _bounded(flow: Flow) -> Flow:
    """``flow``, or unknown when it has more than :data:`_MAX_FLOW_NODES` nodes: nothing is said of it, so no
    finding rests on a flow the analysis could not follow."""
    budget = _MAX_FLOW_NODES
    stack: List[Flow] = [flow]
    while stack:
        node = stack.pop()
        budget -= 1
        if budget < 0:
            return UNKNOWN
        if isinstance(node, Either):
            stack.extend(node.options)
        elif isinstance(node, CallResult):
            stack.extend(node.args)
        elif isinstance(node, Parsed):
            stack.append(node.text)
    return flow


def _either(options: Tuple[Flow, ...]) -> Flow:
    flat: List[Flow] = []
    for option in options:
        for inner in option.options if isinstance(option, Either) else (option,):
            if inner not in flat:
                flat.append(inner)
    if len(flat) == 1:
        return flat[0]
    if len(flat) > 8:
        return UNKNOWN
    return Either(tuple(flat))


def _origin_known(flow: Flow) -> bool:
    """The value comes from a parameter, the wire or the model's text (not from nowhere the analysis follows)."""
    if isinstance(flow, (Param, Raw, ModelText, Parsed)):
        return True
    if isinstance(flow, Either):
        return any(_origin_known(option) for option in flow.options)
    if isinstance(flow, CallResult):
        return any(_origin_known(argument) for argument in flow.args)
    return False


def _piece_of(flow: Flow) -> Flow:
    """A piece of the arguments is as raw (or as guarded) as the arguments themselves; a piece of a text, or of
    a parse of it, is a piece of that text."""
    return flow if isinstance(flow, (Raw, Param, CallResult, Either, ModelText, Parsed)) else UNKNOWN
