"""Plans: each schema compiled once, kept in a bounded cache, and specialised once it is used often.

A plan's first calls run the generic node tree, so that the first call of a schema costs what compiling and
walking it costs; after ``SPECIALISE_AFTER`` calls the plan is specialised (``_specialize``, itself bounded in
size and time), which pays off over the many calls a schema in use gets.

Plans are found by the schema's identity (one dict lookup), then by its content: a schema source that builds a
new dict on every call gets the plan of an equal schema instead of a compile. The cache holds ``CACHE_SIZE``
plans; past that, a plan taken at random makes room, so that a working set a little larger than the cache
still finds most of its plans (dropping the oldest would miss on every call of a round over the set).
"""

from __future__ import annotations

import enum
import io
import pickle
import random
import threading
from typing import Any, Callable, Dict, Optional

from ._budget import UnionBudgetError, budgeted
from ._compiler import CompiledSchema, compile_schema
from ._specialize import Specialisation, specialize

#: Plans kept per mode (repairing, renaming only).
CACHE_SIZE = 512
#: Calls a plan serves with its generic tree before it is specialised.
SPECIALISE_AFTER = 16

#: Taken by the one thread that specialises a plan; a thread that finds it taken runs the generic tree.
_SPECIALISING = threading.Lock()


class Tier(enum.Enum):
    """Which of a plan's functions a call runs."""

    #: What the runtime runs: the generic tree for the first calls, then the specialised function.
    CURRENT = "current"
    #: The generic node tree: the reference the specialised functions must agree with.
    GENERIC = "generic"
    #: The specialised function, made now if it was not yet.
    SPECIALISED = "specialised"


class Plan:
    """A schema compiled: its node tree, and ``repair``, the function a call runs (the generic tree, replaced by
    the specialised function once the plan has served ``SPECIALISE_AFTER`` calls). Each function starts the
    call's union budget when the plan has unions, and raises ``UnionBudgetError`` when that runs out."""

    __slots__ = ("schema", "content", "compiled", "generic", "repair", "_specialisation", "_specialised", "_calls")

    def __init__(self, schema: Any, content: Optional[bytes], compiled: CompiledSchema) -> None:
        #: Kept alive, so that its id, the cache key, is not reused while the plan is cached.
        self.schema = schema
        #: The schema's content key (see ``content_key``), or None when it is not plain data.
        self.content = content
        self.compiled = compiled
        self.generic = self._within_budget(compiled.root.repair)
        self._specialisation: Optional[Specialisation] = None
        self._specialised: Optional[Callable[[Any], Any]] = None
        self._calls = 0
        self.repair: Callable[[Any], Any] = self._warming_up

    @property
    def warm(self) -> bool:
        """Whether calls run the specialised function now."""
        return self._specialised is not None and self.repair is self._specialised

    def specialisation(self) -> Specialisation:
        """What specialising the schema makes, made on first use."""
        if self._specialisation is None:
            self._specialisation = specialize(self.compiled)
        return self._specialisation

    def specialised(self) -> Callable[[Any], Any]:
        """The specialised function (the generic tree where nothing is worth specialising), within budget."""
        if self._specialised is None:
            self._specialised = self._within_budget(self.specialisation().repair)
        return self._specialised

    def _within_budget(self, repair: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return budgeted(repair) if self.compiled.has_unions else repair

    def _warming_up(self, value: Any) -> Any:
        self._calls += 1
        if self._calls >= SPECIALISE_AFTER and _SPECIALISING.acquire(blocking=False):
            try:
                self.repair = self.specialised()
            finally:
                _SPECIALISING.release()
        return self.generic(value)


class _PlainPickler(pickle.Pickler):
    """Pickles plain data only: the types pickle writes itself (dict, list, tuple, str, int, float, bool, None,
    bytes, sets); any other object (a class instance, a subclass, a function) is refused."""

    def reducer_override(self, obj: Any) -> Any:
        raise pickle.PicklingError(f"{type(obj).__name__} is not plain data")


def content_key(schema: Any) -> Optional[bytes]:
    """Bytes equal only for schemas of equal content, type for type (``1``, ``1.0`` and ``True`` differ); None
    for a schema holding anything but plain data, or nested deeper than the stack.

    Pickle writes each object once however often it is shared (a schema whose subschemas are shared, or
    cyclic, costs its size, not the number of paths through it); an equal schema whose parts are shared in
    another way may get another key, and so its own plan.
    """
    buffer = io.BytesIO()
    try:
        _PlainPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(schema)
    except Exception:  # not plain data, or RecursionError
        return None
    return buffer.getvalue()


class PlanCache:
    """The plans of one mode (repairing or renaming only), by schema identity and by content."""

    def __init__(self, coerce: bool, size: int = CACHE_SIZE) -> None:
        self.coerce = coerce
        self.size = size
        #: id(schema) -> plan: the lookup every call makes first.
        self.by_identity: Dict[int, Plan] = {}
        self._by_content: Dict[bytes, Plan] = {}
        self._lock = threading.Lock()
        self._random = random.Random(0)  # which plan makes room: seeded, so that a run can be repeated
        #: Schemas compiled so far (cache misses), for the tests and the bench.
        self.compiles = 0

    def plan(self, schema: Any) -> Plan:
        """The plan of ``schema``: cached by identity, else by content, else compiled now."""
        plan = self.by_identity.get(id(schema))
        if plan is not None:
            return plan
        content = content_key(schema)
        plan = None if content is None else self._by_content.get(content)
        if plan is not None:
            return plan
        plan = Plan(schema, content, compile_schema(schema, self.coerce))
        with self._lock:  # only misses take it: a hit is one or two dict lookups
            self.compiles += 1
            while len(self.by_identity) >= self.size:
                self._drop(self._random.choice(list(self.by_identity.values())))
            self.by_identity[id(schema)] = plan
            if content is not None:
                self._by_content[content] = plan
        return plan

    def _drop(self, plan: Plan) -> None:
        del self.by_identity[id(plan.schema)]
        if plan.content is not None and self._by_content.get(plan.content) is plan:
            del self._by_content[plan.content]


#: One cache per mode: repairing (``coerce_args``) and renaming only (``unrename_args``).
PLANS: Dict[bool, PlanCache] = {True: PlanCache(True), False: PlanCache(False)}


def apply_schema(parameters: Any, value: Any, coerce: bool, tier: Tier = Tier.CURRENT) -> Any:
    """``value`` repaired (``coerce``) or renamed only, by the plan of a parameters schema or tool definition.

    Each call gets a fresh union budget; when it runs out, the value comes back as it is. ``tier`` chooses the
    function: the plan's current one, or (for the tests) the generic tree or the specialised function.
    """
    cache = PLANS[coerce]
    plan = cache.by_identity.get(id(parameters)) or cache.plan(parameters)
    if tier is Tier.CURRENT:
        repair = plan.repair
    else:
        repair = plan.generic if tier is Tier.GENERIC else plan.specialised()
    try:
        return repair(value)
    except UnionBudgetError:
        return value
