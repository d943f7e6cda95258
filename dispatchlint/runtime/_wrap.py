"""Wrapping executors, so that every reader of a tool table gets repaired arguments.

The fix for a second table of tools that bypasses the gate is to wrap the table once, where it is defined:
``TOOLS = wrap_table({...}, SCHEMAS)``. Every path that reads the table then calls a wrapper that repairs the
arguments first, whatever the path (sequential loop, thread pool, ``await``), and no path needs to change.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
import types
import typing
from dataclasses import dataclass
from collections.abc import Mapping as AbstractMapping
from collections.abc import MutableMapping as AbstractMutableMapping
from typing import Any, Callable, Container, Dict, List, Mapping, Optional, Set, Tuple, TypeVar, Union, cast

from ._coerce import RepairCallback, log, repaired_arguments, report_repairs
from ._schema import tool_parameters
from .contract import ARGUMENT_PARAMETER_NAMES, SCHEMA_ENVELOPE_KEYS

#: Where schemas come from: a mapping from tool name, or a callable from tool name, to the tool's parameters
#: schema or whole tool definition. A tool without schema (None, absent, or LookupError) passes through; so
#: does a call for which the source raised anything else, logged on the ``dispatchlint.runtime`` logger the first
#: time for each tool and error type (a registry that is down would log every call). The source is asked again on
#: every call, so the tool's arguments are repaired again once it answers.
SchemaSource = Union[Mapping[str, Any], Callable[[str], Any], None]
#: A position (``1`` for ``fn(agent, args, ctx)``) or a parameter name (``"args"``).
ArgumentsSlotHint = Union[int, str, None]

#: Any callable: not bound to ``Callable``, since a table of sync and async functions is typed ``dict[str,
#: function]``, which a ``Callable`` bound refuses.
Executor = TypeVar("Executor")
Key = TypeVar("Key")
Value = TypeVar("Value")
#: (position, keyword name) of the parameter that receives the arguments mapping; either may be None.
_Slot = Tuple[Optional[int], Optional[str]]

_MAPPING_ANNOTATION = re.compile(r"(?:typing\.|t\.|collections\.abc\.|abc\.)?(?:Dict|dict|Mapping|MutableMapping)")
_MAPPING_ORIGINS = (dict, AbstractMapping, AbstractMutableMapping)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
# Keys that make a mapping one schema rather than a table of schemas by tool name.
_SCHEMA_MARKERS = frozenset(
    {"type", "properties", "function", "$ref", "anyOf", "oneOf", "allOf", *SCHEMA_ENVELOPE_KEYS}
)


def wrap_table(
    table: Mapping[Key, Value],
    schemas: SchemaSource,
    *,
    args_at: ArgumentsSlotHint = None,
    on_repair: Optional[RepairCallback] = None,
) -> Dict[Key, Value]:
    """A new table whose executors repair their arguments against their tool's schema before running.

    It wraps the tools ``table`` holds when ``wrap_table`` is called (a new dict, typed like ``table``; ``table``
    itself is not changed): a tool added to ``table`` afterwards is not in it; add it to the result wrapped by
    ``coerced``, or wrap the table again. ``schemas``, on the other hand, is looked up by the tool's name on
    every call, so a schema registered later is used; each schema is compiled once.

    Sync and async executors are wrapped alike (what the wrapper keeps of the executor is said below).
    ``on_repair`` is called for every repaired value (a callback that raises is logged on the
    ``dispatchlint.runtime`` logger, and the call goes on). Values that are not callable are kept as they are.

    ``args_at`` says where the arguments are: a position counted from 0 (``1`` for ``fn(agent, args, ctx)``;
    a negative one is a ``ValueError``, anything but an int, a str or None a ``TypeError``) or a parameter name.
    Without it, each executor's signature decides:

    1. a parameter named like an arguments mapping (``args``, ``arguments``, ``params``, ``kwargs``,
       ``fn_args``, ... see ``contract.ARGUMENT_PARAMETER_NAMES``), else the first parameter annotated as a ``dict`` or
       ``Mapping``, receives the arguments, by position or by keyword; unless the tool's schema (when known at
       wrap time) has a property named like one of the executor's parameters, which makes them the tool's own;
    2. otherwise the executor's parameters are the arguments, by name (``fn(**args)``, for executors that take
       the schema's properties as parameters or ``**kwargs``), however they are passed; positional-only
       parameters, those before a ``*args`` and ``*args`` itself are left alone (for a callable that is not
       a Python function: its keyword arguments are the arguments).

    The wrapper of a Python function has the function's own parameters, defaults and local names, so that
    what introspection reads answers as before: ``inspect.signature``, ``__wrapped__``, ``__name__``,
    ``__qualname__``, ``__doc__``, and ``__code__`` (``co_varnames``, ``co_argcount``, ... as openai/swarm
    reads to decide whether to pass ``context_variables``). A bound method's wrapper is a method bound to the
    same object. Other callables (objects, builtins, decorated functions) get a ``(*args, **kwargs)`` wrapper
    with their ``__signature__``.
    """
    _check_arguments_slot(args_at)
    lookup = _schema_lookup(schemas)
    return {
        name: cast(Value, _wrap_executor(str(name), executor, lookup, args_at, on_repair))
        if callable(executor)
        else executor
        for name, executor in table.items()
    }


def coerced(
    name: str,
    schema_or_schemas: Any,
    *,
    args_at: ArgumentsSlotHint = None,
    on_repair: Optional[RepairCallback] = None,
) -> Callable[[Executor], Executor]:
    """Decorator: the executor of tool ``name`` repairs its arguments before running, like ``wrap_table``.

    ``schema_or_schemas`` is the tool's schema (parameters or whole tool definition), or a ``SchemaSource``
    to look ``name`` up in: a mapping that has schema keywords (``type``, ``properties``, ``parameters``, ...)
    at its top is taken as the schema itself.
    """
    _check_arguments_slot(args_at)
    if isinstance(schema_or_schemas, AbstractMapping) and not _SCHEMA_MARKERS.isdisjoint(schema_or_schemas):
        lookup = _schema_lookup({name: schema_or_schemas})
    else:
        lookup = _schema_lookup(schema_or_schemas)

    def decorate(executor: Executor) -> Executor:
        return cast(Executor, _wrap_executor(name, cast(Callable[..., Any], executor), lookup, args_at, on_repair))

    return decorate


def _check_arguments_slot(args_at: ArgumentsSlotHint) -> None:
    """Refuse, when the table is wrapped, an ``args_at`` that can name no parameter."""
    if args_at is None or isinstance(args_at, str):
        return
    if type(args_at) is not int:
        raise TypeError(f"args_at must be a position, a parameter name or None, not {type(args_at).__name__}")
    if args_at < 0:
        raise ValueError(f"args_at must be a position counted from 0 (the first argument), not {args_at}")


def _schema_lookup(schemas: SchemaSource) -> Callable[[str], Any]:
    """The tool's schema from ``schemas``, or None; a source that raises means no schema for that call."""
    if schemas is None:
        return _no_schema
    if isinstance(schemas, AbstractMapping):
        source: Callable[[str], Any] = schemas.get
    elif callable(schemas):
        source = schemas
    else:
        raise TypeError(f"schemas must be a mapping, a callable or None, not {type(schemas).__name__}")

    logged: Set[Tuple[str, type]] = set()
    logging_lock = threading.Lock()

    def lookup(name: str) -> Any:
        try:
            return source(name)
        except LookupError:  # a registry that raises KeyError for a tool it has no schema for
            return None
        except Exception as error:  # logged once per tool and error type: a registry that is down fails every call
            with logging_lock:
                first = (name, type(error)) not in logged
                logged.add((name, type(error)))
            if first:
                log.exception(
                    "the schema source raised %s for tool %r; its arguments pass unrepaired while it does (the "
                    "source is asked again on every call; logged once for this tool and error type)",
                    type(error).__name__,
                    name,
                )
            return None

    return lookup


def _no_schema(name: str) -> None:
    return None


class _Gate:
    """Repairs one tool's arguments and reports each repair."""

    __slots__ = ("name", "lookup", "on_repair")

    def __init__(self, name: str, lookup: Callable[[str], Any], on_repair: Optional[RepairCallback]) -> None:
        self.name = name
        self.lookup = lookup
        self.on_repair = on_repair

    def __call__(self, args: Any) -> Any:
        parameters = self.lookup(self.name)
        if parameters is None:
            return args
        repaired = repaired_arguments(parameters, args)
        if repaired is not args and self.on_repair is not None:
            report_repairs(self.name, parameters, args, repaired, self.on_repair)
        return repaired


def _wrap_executor(
    name: str,
    executor: Callable[..., Any],
    lookup: Callable[[str], Any],
    args_at: ArgumentsSlotHint,
    on_repair: Optional[RepairCallback],
) -> Callable[..., Any]:
    gate = _Gate(name, lookup, on_repair)
    slot = _arguments_slot(executor, args_at, lookup(name))
    if slot is None:

        def repair_call(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
            return args, gate(kwargs) if kwargs else kwargs

    else:
        index, keyword = slot

        def repair_call(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
            if index is not None and index < len(args):
                value = args[index]
                repaired = gate(value)
                if repaired is not value:
                    args = args[:index] + (repaired,) + args[index + 1 :]
            elif keyword is not None and keyword in kwargs:
                value = kwargs[keyword]
                repaired = gate(value)
                if repaired is not value:
                    kwargs = {**kwargs, keyword: repaired}
            return args, kwargs

    def call(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        args, kwargs = repair_call(args, kwargs)
        return executor(*args, **kwargs)

    faithful = _faithful_wrapper(executor, call)
    if faithful is not None:
        return faithful
    if _is_async(executor):

        @functools.wraps(executor)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            return await call(args, kwargs)

        return _with_signature(run_async, executor)

    @functools.wraps(executor)
    def run(*args: Any, **kwargs: Any) -> Any:
        return call(args, kwargs)

    return _with_signature(run, executor)


def _with_signature(wrapper: Callable[..., Any], executor: Callable[..., Any]) -> Callable[..., Any]:
    """``wrapper`` answering ``inspect.signature`` and ``getfullargspec`` as ``executor`` does, where it can."""
    try:
        wrapper.__signature__ = inspect.signature(executor)  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # builtins and other callables without a signature
        pass
    return wrapper


#: Code flags of functions whose wrapper would have to be a generator too: they keep the plain wrapper.
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def _faithful_wrapper(executor: Callable[..., Any], call: Callable[..., Any]) -> Optional[Callable[..., Any]]:
    """A wrapper whose code has the executor's own parameters (names, kinds, order, defaults) and local names.

    Projects read a tool's code to decide how to call it (openai/swarm passes ``context_variables`` only when
    ``func.__code__.co_varnames`` holds that name), so the wrapper's ``__code__`` must read as the executor's:
    ``co_varnames``, ``co_argcount``, ``co_posonlyargcount``, ``co_kwonlyargcount``, the ``*args``/``**kwargs``
    flags and whether it is a coroutine function. It hands ``call`` the arguments as ``(positional, keywords)``
    (see ``_CodeParameters.forwarding``). A bound method is wrapped as a method bound to the same object.
    None for anything but a plain Python function or coroutine function whose code is its signature (not a
    decorated one).
    """
    function, bound_to = executor, None
    if isinstance(executor, types.MethodType):
        function, bound_to = executor.__func__, executor.__self__
    if not isinstance(function, types.FunctionType) or any(
        hasattr(function, name) for name in ("__wrapped__", "__signature__")
    ):
        return None
    code = function.__code__
    if code.co_flags & _GENERATOR_FLAGS:
        return None
    parameters = _CodeParameters.of(code)
    caller = _free_name("call", code.co_varnames)
    is_async = bool(code.co_flags & inspect.CO_COROUTINE)
    body = [f"        return {'await ' if is_async else ''}{caller}({parameters.forwarding(bound_to is not None)})"]
    if parameters.local_names:  # never run: the executor's other local names, so that co_varnames reads as its
        body.append(f"        {' = '.join(parameters.local_names)} = None")
    source = "\n".join(
        [
            f"def make({caller}):",
            f"    {'async ' if is_async else ''}def wrapper({parameters.definition()}):",
            *body,
            "    return wrapper",
        ]
    )
    namespace: Dict[str, Any] = {}
    exec(compile(source, f"<dispatchlint.runtime wrapper of {function.__qualname__}>", "exec"), namespace)
    wrapper = namespace["make"](call)
    wrapper.__code__ = _named_like(wrapper.__code__, code)
    wrapper.__defaults__ = function.__defaults__
    wrapper.__kwdefaults__ = function.__kwdefaults__
    functools.update_wrapper(wrapper, function)
    if bound_to is None:
        return cast(Callable[..., Any], wrapper)
    wrapper.__wrapped__ = executor  # unwrapping gives the bound method, as before
    wrapper.__signature__ = inspect.signature(function)  # the unbound one: binding drops the object's parameter
    return types.MethodType(wrapper, bound_to)


@dataclass(frozen=True)
class _CodeParameters:
    """The parameters of a function's code, as its ``co_varnames`` and counts give them."""

    positional: Tuple[str, ...]
    positional_only: int
    keyword_only: Tuple[str, ...]
    varargs: Optional[str]
    varkw: Optional[str]
    #: The other local names (of variables that are not cells), in their order.
    local_names: Tuple[str, ...]

    @classmethod
    def of(cls, code: types.CodeType) -> _CodeParameters:
        names = code.co_varnames
        after = code.co_argcount + code.co_kwonlyargcount
        has_varargs, has_varkw = bool(code.co_flags & inspect.CO_VARARGS), bool(code.co_flags & inspect.CO_VARKEYWORDS)
        return cls(
            positional=names[: code.co_argcount],
            positional_only=code.co_posonlyargcount,
            keyword_only=names[code.co_argcount : after],
            varargs=names[after] if has_varargs else None,
            varkw=names[after + has_varargs] if has_varkw else None,
            local_names=tuple(name for name in names[after + has_varargs + has_varkw :] if name.isidentifier()),
        )

    def definition(self) -> str:
        """The parameter list of a ``def`` with these parameters (defaults are set on the function after)."""
        parameters = list(self.positional)
        if self.positional_only:
            parameters.insert(self.positional_only, "/")
        if self.varargs is not None:
            parameters.append(f"*{self.varargs}")
        elif self.keyword_only:
            parameters.append("*")
        parameters += self.keyword_only
        if self.varkw is not None:
            parameters.append(f"**{self.varkw}")
        return ", ".join(parameters)

    def forwarding(self, bound: bool) -> str:
        """``(positional, keywords)`` that bind as the call did: positional-only parameters by position (every
        one before a ``*args``, and ``*args``), the others by name. A bound method's object is not forwarded."""
        forwarded = self.positional[1:] if bound else self.positional
        if self.varargs is not None:
            by_position = [*forwarded, f"*{self.varargs}"]
            by_name = list(self.keyword_only)
        else:
            split = max(0, self.positional_only - bound)
            by_position, by_name = list(forwarded[:split]), [*forwarded[split:], *self.keyword_only]
        keywords = [f"{name!r}: {name}" for name in by_name] + ([f"**{self.varkw}"] if self.varkw else [])
        return f"({''.join(f'{value}, ' for value in by_position)}), {{{', '.join(keywords)}}}"


def _free_name(stem: str, taken: Container[str]) -> str:
    name = f"_dispatchlint_{stem}"
    while name in taken:
        name += "_"
    return name


def _named_like(code: types.CodeType, original: types.CodeType) -> types.CodeType:
    """``code`` with the name (and, from Python 3.11, the qualified name) of ``original``: error messages and
    tracebacks name the executor."""
    if hasattr(code, "co_qualname"):
        return code.replace(co_name=original.co_name, co_qualname=original.co_qualname)
    return code.replace(co_name=original.co_name)


def _is_async(executor: Callable[..., Any]) -> bool:
    """Coroutine functions, and objects whose ``__call__`` is one (the wrapper must be awaitable too)."""
    return inspect.iscoroutinefunction(executor) or inspect.iscoroutinefunction(type(executor).__call__)


def _arguments_slot(executor: Callable[..., Any], hint: ArgumentsSlotHint, schema: Any) -> Optional[_Slot]:
    """Where the executor receives the arguments mapping; None: its keyword arguments are the arguments."""
    try:
        parameters = list(inspect.signature(executor).parameters.values())
    except (TypeError, ValueError):  # builtins and other callables without a signature
        parameters = []
    positional = [parameter for parameter in parameters if parameter.kind in _POSITIONAL]
    if isinstance(hint, int):
        return _slot(positional[hint], positional) if hint < len(positional) else (hint, None)
    if isinstance(hint, str):
        named = next((parameter for parameter in parameters if parameter.name == hint), None)
        return _slot(named, positional) if named is not None else (None, hint)
    candidates = [p for p in parameters if p.kind in _POSITIONAL or p.kind == inspect.Parameter.KEYWORD_ONLY]
    chosen = next((p for p in candidates if p.name.lower() in ARGUMENT_PARAMETER_NAMES), None)
    if chosen is None:
        chosen = next((p for p in candidates if _is_mapping_annotation(p.annotation)), None)
    properties = _property_names(schema)
    if chosen is None or any(parameter.name in properties for parameter in candidates):
        return None  # the executor takes the tool's properties as its own parameters (swarm's context_variables: dict)
    return _slot(chosen, positional)


def _slot(parameter: inspect.Parameter, positional: List[inspect.Parameter]) -> _Slot:
    index = positional.index(parameter) if parameter in positional else None
    return index, (None if parameter.kind == inspect.Parameter.POSITIONAL_ONLY else parameter.name)


def _is_mapping_annotation(annotation: Any) -> bool:
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):  # postponed annotations (from __future__ import annotations)
        return _MAPPING_ANNOTATION.fullmatch(annotation.split("[", 1)[0].strip()) is not None
    origin = typing.get_origin(annotation) or annotation
    try:
        return origin in _MAPPING_ORIGINS or (isinstance(origin, type) and issubclass(origin, dict))
    except TypeError:  # unhashable or exotic annotation objects
        return False


def _property_names(schema: Any) -> Container[Any]:
    parameters = tool_parameters(schema)
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    return properties if isinstance(properties, dict) else ()
