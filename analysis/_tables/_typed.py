"""The Structs the compiled lane reads: raw deployment records decoded by msgspec, with the
fields the spec does not name found apart.

Why it exists: the careful reader (`_careful.py`) parses every record into dicts with orjson
and then checks every field's type in Python. msgspec decodes JSON straight into typed
Structs, checking types in C as it goes; the compiled lane (`_gathered.py`, `_gather.c`) then
walks the Structs into Arrow buffers. Where `_gather.c` was not built there is no fast
reader: raw records go to the careful reader, and the export says so once
(`_flattener.Flattener`).

Why it can be trusted: the Structs are derived from the careful reader's own plans
(`rules.Plan`), so they have the same fields in the same places, and the lane accepts a
record only when it is sure to write exactly the rows the careful reader would. Anything
else gives the record back (`Fallback`, or msgspec's own errors) and the careful reader
reads it from the same text, with every check and reason it has. What gives a record back:
- null where the spec does not allow it; a wrong type;
- a date-time the careful conversion refuses; an integer outside int64;
- free-form JSON the careful reader would store differently: an integer beyond 64 bits,
  which orjson reads as a float;
- an array whose items only the careful checks can judge (they run here too and fail).
A field the spec does not name does not give the record back. The strict Structs refuse
it, which says that the record has one (most records have none, and are decoded once);
then `UnknownFields` finds every such field in the raw text where the careful reader would
look (a scan in C, `_unknownkeys.c`, that builds no values), the record is decoded by
lenient twins of the Structs that ignore them, and only their values are parsed, so
`unknown_fields_json` is the same (a newer service's fields cost the fast path little).
Where the scan is not sure, one orjson parse of the record finds them.
`tests/tables/test_compiled_lane.py` checks, record by record, that both readers write the
same rows.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
import orjson

from dims import _spec as spec
from dims._compiled import left_out
from dims._secrets import REDACTED

from . import _rules as t
from ._layout import CONTAINER_KINDS, ENV_PROP, ITEM_TABLES, LABEL_KINDS, Layout
from ._rules import Plan

try:
    if left_out("unknownkeys"):  # DIMS_NO_C, for benchmarks/cmodules.py
        raise ImportError("_unknownkeys left out (DIMS_NO_C)")
    from . import _unknownkeys as unknownkeys
except ImportError:  # built by `pip install` (hatch_build.py); the orjson walk still works
    unknownkeys = None  # type: ignore[assignment]

UNSET = msgspec.UNSET
_INT64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_SCALAR_TYPES: dict[str, Any] = {
    "string": str,
    "uuid": str,
    "datetime": str,  # converted in the reader exactly as rules.convert does
    "number": float,
    "integer": _INT64,
    "boolean": bool,
}


class Fallback(Exception):
    """The record needs the careful reader."""


#: What a record the fast reader does not accept raises: the careful reader takes it.
#: orjson's encode error comes from an integer beyond 64 bits in free-form JSON: msgspec
#: keeps it exact where orjson reads it as a float, so the careful reader must store it.
FALLBACK_ERRORS = (
    Fallback,
    msgspec.ValidationError,
    msgspec.DecodeError,
    UnicodeDecodeError,
    orjson.JSONEncodeError,
    orjson.JSONDecodeError,
)


def _expected_extras() -> dict[str, tuple[str, ...]]:
    """Fields the real service sends beyond the interface spec, by schema (openapi.yaml's
    `x-dims-service-fields`). The careful reader keeps them as unknown fields; declaring
    them lets the fast reader do the same instead of giving every such record back."""
    out: dict[str, tuple[str, ...]] = {}
    for path in spec.service_fields():
        *parents, name = path.split(".")
        schema = spec.ref_of("Deployment", *parents)
        out[schema] = (*out.get(schema, ()), name)
    return out


EXPECTED_EXTRAS = _expected_extras()
#: Where the record's own type sits (`source_config.deployment_type`): (schema, field).
OWN_TYPE = (
    spec.ref_of("Deployment", *spec.own_type_path()[:-1]),
    spec.own_type_path()[-1],
)


def extras(plan: Plan) -> tuple[str, ...]:
    """The plan's expected extras that the spec does not name (yet)."""
    return tuple(n for n in EXPECTED_EXTRAS.get(plan.schema, ()) if n not in plan.steps)


def extra_attribute(name: str) -> str:
    return f"extra_{name}"


def _attribute(name: str, position: int) -> str:
    return name if name.isidentifier() and not keyword.iskeyword(name) else f"f{position}_"


#: Array items whose shape a msgspec type checks as `rules.check_shape` does.
_ITEM_SHAPES: dict[str, Any] = {
    "string": str,
    "uuid": str,
    "boolean": bool,
    "object": dict[str, Any],
}


def shape_type(shape: tuple[spec.Prop, bool, bool]) -> Any:
    """The msgspec type of a free-form part that accepts exactly what `rules.check_shape`
    accepts, so that the decode checks its shape in C; None where only the careful check
    can judge it (items with a schema, or of other kinds)."""
    prop, must_object, _hide = shape
    if prop.kind == "array":
        item = _ITEM_SHAPES.get(prop.items_kind or "")
        return None if item is None or prop.ref is not None else list[item]  # type: ignore[valid-type]
    return dict[str, Any] if must_object else Any  # any JSON value: nothing to check


def _free_form_type(shape: tuple[spec.Prop, bool, bool], nullable: bool) -> Any:
    """A free-form part's type: its shape's where a msgspec type checks it, else Any."""
    checked = shape_type(shape)
    if checked is None or checked is Any:
        return Any
    return checked | None if nullable else checked


def attributes(plan: Plan) -> dict[str, str]:
    return {key: _attribute(key, n) for n, key in enumerate(plan.steps)}


def struct_for(
    plan: Plan,
    types: Mapping[str, Any],
    _cache: dict[int, Any] | None = None,
    *,
    strict: bool = True,
) -> Any:
    """The Struct type of the objects a plan reads: one field per step, unknown ones refused
    (`strict`) or ignored (a record with unknown fields: `UnknownFields` finds them).

    `types` gives the type of a property the plan routes elsewhere (child-table arrays,
    labels, a container's env entries). Scalars default to None (missing reads as null);
    null is accepted only where the spec allows it. Free-form and JSON-text parts have an
    UNSET default, so that the reader can tell null from missing; their type checks their
    shape where a msgspec type can (`shape_type`), else it is `Any` and the reader runs the
    careful shape checks.
    """
    cache = {} if _cache is None else _cache
    if id(plan) in cache:
        return cache[id(plan)]
    fields: list[tuple[str, Any, Any]] = []
    names = attributes(plan)
    for key, (op, kind, _index, nullable, extra) in plan.steps.items():
        if key not in types and op in (t.JSON, t.CHECK):
            kind_type: Any = _free_form_type(extra, nullable)
            default: Any = UNSET
        else:
            if key in types:
                kind_type = types[key]
            elif op == t.NESTED:
                kind_type = struct_for(extra, types, cache, strict=strict)
            elif op == t.PASSWORD:
                kind_type = str
            else:
                kind_type = _SCALAR_TYPES[kind]
            if nullable:
                kind_type = kind_type | None
            default = None
        attribute = names[key]
        if attribute != key:
            default = msgspec.field(default=default, name=key)
        fields.append((attribute, kind_type, default))
    for name in extras(plan):
        fields.append((extra_attribute(name), Any, msgspec.field(default=UNSET, name=name)))
    struct = msgspec.defstruct(
        f"{'Typed' if strict else 'Lenient'}{plan.schema}",
        fields,
        forbid_unknown_fields=strict,
        gc=False,
        kw_only=True,
    )
    cache[id(plan)] = struct
    return struct


class RecordDecoder:
    """Raw deployment records decoded into the Structs of the layout's plans, with the
    fields the spec does not name found apart (what both fast readers start from)."""

    def __init__(self, layout: Layout) -> None:
        strict_types: dict[int, Any] = {}
        lenient_types: dict[int, Any] = {}
        #: decode(raw) with the strict Structs, which refuse any field the spec does not name
        self.strict = _decoder(layout, strict=True, cache=strict_types)
        self._decode_lenient = _decoder(layout, strict=False, cache=lenient_types)
        #: plan id -> its Struct type: (strict ones, lenient ones)
        self.struct_types = (strict_types, lenient_types)
        self._unknown_fields = UnknownFields(layout)

    def decode(self, raw: msgspec.Raw, unknown: dict[str, Any]) -> Any:
        """The record's Structs; the fields the spec does not name go to `unknown`.

        The strict Structs refuse any unknown field, which says that the record has one
        (most have none, and are decoded once); then the lenient Structs ignore them and
        `UnknownFields` finds them in the raw text exactly as the careful reader would.
        Raises one of `FALLBACK_ERRORS` for a record the careful reader must read.
        """
        try:
            record = self.strict(raw)
        except msgspec.ValidationError as exc:
            record = self.lenient(raw, exc, unknown)
        if record.id is None:
            raise Fallback  # the careful reader rejects it: "id: missing" or "id: null"
        return record

    def lenient(self, raw: msgspec.Raw, refused: Exception, unknown: dict[str, Any]) -> Any:
        """The record the strict Structs refused (`refused`), when they refused a field the
        spec does not name: decoded ignoring such fields, which go to `unknown`; any other
        refusal is raised again."""
        if not (
            isinstance(refused, msgspec.ValidationError)
            and str(refused).startswith("Object contains unknown field")
        ):
            raise refused
        record = self._decode_lenient(raw)
        found = self._unknown_fields.find(raw)
        if found:
            self._unknown_fields.parse(raw, found, unknown)
        else:  # the scan was not sure (or saw none, against msgspec): one parse tells
            self._unknown_fields.collect(raw, unknown)
        return record


def _decoder(
    layout: Layout, *, strict: bool, cache: dict[int, Any]
) -> Callable[[msgspec.Raw], Any]:
    """The decoder of raw deployment records into the Structs of the layout's plans
    (`cache`: filled with each plan's Struct type, by the plan's id)."""
    types: dict[str, Any] = {}
    for prop, table_name in ITEM_TABLES.items():
        item = struct_for(layout.items[table_name].plan, {}, cache, strict=strict)
        types[prop] = list[item]  # type: ignore[valid-type]
    env = struct_for(layout.env.plan, {}, cache, strict=strict)
    env_types = {ENV_PROP: list[env]}  # type: ignore[valid-type]
    container = struct_for(layout.containers.plan, env_types, cache, strict=strict)
    for prop in CONTAINER_KINDS:
        types[prop] = list[container]  # type: ignore[valid-type]
    for prop in LABEL_KINDS:
        types[prop] = dict[str, Any]
    root = struct_for(layout.deployment_plan, types, cache, strict=strict)
    decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(root)
    return decoder.decode


class UnknownFields:
    """The fields of a raw record the spec does not name, by dotted path, as the careful
    reader records them: where it looks (nested objects, child-table items, env entries),
    redacted inside secret-bearing objects, never inside parts kept whole as JSON text.

    It runs on records the lenient Structs accepted, so every part has its expected shape,
    and parses them as the careful reader does (orjson): the same values, and a record
    orjson cannot read falls back to the careful reader, which rejects it the same way.
    """

    def __init__(self, layout: Layout) -> None:
        self._root = layout.deployment_plan
        #: routed property -> (its items' plan, the env entries' plan inside each item)
        self._routes: dict[str, tuple[Plan, Plan | None]] = {
            prop: (layout.items[table].plan, None) for prop, table in ITEM_TABLES.items()
        }
        for prop in CONTAINER_KINDS:
            self._routes[prop] = (layout.containers.plan, layout.env.plan)
        self._levels: dict[int, _Level] = {}
        self._compiled: unknownkeys.Levels | None = None

    def find(self, raw: msgspec.Raw) -> list[tuple[str, int, int, bool]] | None:
        """Each unknown field's (path, start, end, sensitive), found by a scan of the raw
        text in C that builds no values; None when the scan is not sure (escaped keys, a
        repeated key it would look inside, text it does not expect): then `collect`."""
        if unknownkeys is None:
            return None
        if self._compiled is None:
            self._compiled = unknownkeys.compile(self._tree(self._root, None))
        return unknownkeys.scan(raw, self._compiled)

    def parse(
        self, raw: msgspec.Raw, found: list[tuple[str, int, int, bool]], out: dict[str, Any]
    ) -> None:
        """The values `find` found, each parsed alone by orjson (as the careful reader parses
        the whole record: a value it cannot read gives the record back), redacted inside
        secret-bearing objects. A key given twice keeps its last value, as a parse does."""
        text = memoryview(raw)
        for path, start, end, sensitive in found:
            value = orjson.loads(text[start:end])
            out[path] = REDACTED if sensitive else value

    def _tree(self, plan: Plan, env: Plan | None) -> tuple[bool, dict[str, Any]]:
        """The levels `unknownkeys.compile` takes: (sensitive, {key: None or (shape, tree)})."""
        level = self._level(plan, env)
        known: dict[str, Any] = dict.fromkeys(level.known)
        for key, shape, inner_plan, inner_env in level.inner:
            known[key] = (shape, self._tree(inner_plan, inner_env))
        return bool(plan.sensitive), known

    def collect(self, raw: msgspec.Raw, out: dict[str, Any]) -> None:
        # One parse of the whole record (orjson, as the careful reader parses it), then
        # set differences of key views, in C: about a quarter of the cost of splitting each
        # nested object's raw text again, level by level.
        self._walk(orjson.loads(memoryview(raw)), self._root, "", out, None)

    def _level(self, plan: Plan, env: Plan | None) -> _Level:
        """What to look for in an object of `plan`, worked out once per plan."""
        level = self._levels.get(id(plan) * 2 + (env is not None))
        if level is None:
            inner: list[tuple[str, str, Plan, Plan | None]] = []
            for key, (op, _kind, _index, _nullable, extra) in plan.steps.items():
                if op == t.NESTED:
                    inner.append((key, "object", extra, None))
                elif op == t.CALL and key in self._routes:
                    inner.append((key, "items", *self._routes[key]))
                elif op == t.CHECK and key == ENV_PROP and env is not None:
                    inner.append((key, "items", env, None))
            level = _Level(frozenset(plan.steps) | frozenset(extras(plan)), tuple(inner))
            self._levels[id(plan) * 2 + (env is not None)] = level
        return level

    def _walk(
        self,
        fields: dict[str, Any],
        plan: Plan,
        path: str,
        out: dict[str, Any],
        env: Plan | None,
    ) -> None:
        level = self._level(plan, env)
        # Keys neither a step nor an expected extra (the generated reader keeps those).
        for key in fields.keys() - level.known:
            out[path + key] = REDACTED if plan.sensitive else fields[key]
        for key, shape, inner_plan, inner_env in level.inner:
            value = fields.get(key)
            if value is None:
                continue
            if shape == "object":
                self._walk(value, inner_plan, f"{path}{key}.", out, None)
            else:
                for i, item in enumerate(value):
                    self._walk(item, inner_plan, f"{path}{key}[{i}].", out, inner_env)


@dataclass(frozen=True, slots=True)
class _Level:
    """The keys an object of a plan may have, and the parts to look inside."""

    known: frozenset[str]
    #: (key, "object" or "items", the plan inside, the env entries' plan of those items)
    inner: tuple[tuple[str, str, Plan, Plan | None], ...]
