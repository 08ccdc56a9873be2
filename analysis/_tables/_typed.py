"""The fast reader: deployment records as raw JSON text, decoded into msgspec Structs.

Why it exists: the careful reader (`_careful.py`) parses every record into
dicts with orjson and then checks every field's type in Python; per-record Python work was
most of an export's time (benchmarks/export.py). msgspec decodes JSON straight into typed
Structs, checking types in C as it goes, so what is left in Python is copying values into
rows.

Why it can be trusted: it is derived from the careful reader's own plans (`rules.Plan`),
so it has the same columns in the same places, and it accepts a record only when it is sure
to write exactly the rows the careful reader would. Anything else gives the record back
(`Fallback`, or msgspec's own errors) and the careful reader reads it from the same text,
with every check and reason it has. What gives a record back:
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
`tests/tables/test_typed_reader.py` checks, record by record, that both readers write the same rows.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, cast

import msgspec
import orjson

from dims import _spec as spec
from dims._compiled import left_out
from dims._secrets import REDACTED

from . import _rules as t
from ._layout import CONTAINER_KINDS, ENV_PROP, ITEM_TABLES, LABEL_KINDS, RESOURCES_PROP, Layout
from ._layout import volume_sources as _volume_sources
from ._rules import Plan, compile_function

try:
    if left_out("unknownkeys"):  # DIMS_NO_C, for benchmarks/cmodules.py
        raise ImportError("_unknownkeys left out (DIMS_NO_C)")
    from . import _unknownkeys as unknownkeys
except ImportError:  # built by `pip install` (hatch_build.py); the orjson walk still works
    unknownkeys = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from ._rows import RowState

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


@dataclass(frozen=True, slots=True)
class _At:
    """Where generated statements read from and write to, and what the caller routes."""

    obj: str
    calls: Mapping[str, str]
    typed: frozenset[str]
    indent: str
    row: str
    path: str

    def options(self) -> dict[str, Any]:
        return {"calls": self.calls, "typed": self.typed, "indent": self.indent,
                "row": self.row, "path": self.path}  # fmt: skip


class _Code:
    """Python source for reading a plan's Struct into a row, with the names it uses."""

    def __init__(self, service_columns: Mapping[str, int]) -> None:
        #: dotted path of a service field -> the row index of its column
        self.service_columns = service_columns
        self.names: dict[str, Any] = {
            "UNSET": UNSET,
            "Fallback": Fallback,
            "_dumps": orjson.dumps,
            "_SORTED": orjson.OPT_SORT_KEYS,
            "_shape": t.check_shape,
            "_parse_datetime": t.parse_datetime,
        }

    def name(self, prefix: str, value: Any) -> str:
        name = f"_{prefix}{len(self.names)}"
        self.names[name] = value
        return name

    def plan(
        self,
        plan: Plan,
        obj: str,
        calls: Mapping[str, str],
        typed: frozenset[str] = frozenset(),
        indent: str = "    ",
        row: str = "row",
        path: str = "",
    ) -> tuple[dict[int, str], list[str]]:
        """(column index -> expression, statements) reading `obj`, a Struct of `plan`.

        Plain values are expressions, so that a caller can build the row in one display;
        the rest are statements storing into `row`. `calls` maps routed properties to the
        name of their handler; `typed` are checked parts whose type makes the check moot.
        Expected extras found go to the dict `unknown` by dotted path (Deployment only), and
        a string `source_config.deployment_type` to `own_type`.
        """
        at = _At(obj, calls, typed, indent, row, path)
        exprs: dict[int, str] = {}
        lines: list[str] = []
        names = attributes(plan)
        for n, (key, step) in enumerate(plan.steps.items()):
            op, kind, index, _nullable, _extra = step
            value = f"{obj}.{names[key]}"
            if op in (t.NUMBER, t.TEXT, t.BOOLEAN) or (op == t.OTHER_SCALAR and kind != "datetime"):
                exprs[cast(int, index)] = value
            elif op == t.PASSWORD:
                if index is not None:
                    exprs[index] = value
            else:
                lines += self._statements(n, key, step, value, at)
        return exprs, lines + self._extras(plan, at)

    def _statements(self, n: int, key: str, step: t.Step, value: str, at: _At) -> list[str]:
        """A property read by statements: a date-time, a nested object, a routed part, or
        free-form JSON (the careful shape test and checks)."""
        op, _kind, index, nullable, extra = step
        indent, row = at.indent, at.row
        if op == t.OTHER_SCALAR:  # a date-time: the one rule both readers apply
            return [
                f"{indent}v = {value}",
                f"{indent}if v is not None:",
                f"{indent}    try:",
                f"{indent}        {row}[{index}] = _parse_datetime(v)",
                f"{indent}    except ValueError:",
                f"{indent}        raise Fallback from None",
            ]
        if op == t.NESTED:
            sub = f"{at.obj}_{n}"
            inner = _At(sub, at.calls, at.typed, indent + "    ", row, f"{at.path}{key}.")
            sub_exprs, sub_lines = self.plan(extra, sub, **inner.options())
            lines = [f"{indent}{sub} = {value}", f"{indent}if {sub} is not None:"]
            lines += [f"{indent}    {row}[{i}] = {e}" for i, e in sub_exprs.items()]
            return lines + sub_lines
        if op == t.CALL:
            return [
                f"{indent}v = {value}",
                f"{indent}if v is not None:",
                f"{indent}    {at.calls[key]}(v)",
            ]
        if op == t.ORIGINAL:  # after the spec's name (rules.ORIGINAL): fills it, or is kept
            return [
                f"{indent}v = {value}",
                f"{indent}if v is not None:",
                f"{indent}    if {row}[{index}] is None:",
                f"{indent}        {row}[{index}] = v",
                f"{indent}    elif {row}[{index}] != v:",
                f"{indent}        unknown[{at.path + key!r}] = v",
            ]
        if key in at.typed:
            return []
        prop = self.name("prop", extra[0])
        store = f"{row}[{index}] = _dumps(v, option=_SORTED).decode()" if op == t.JSON else "pass"
        return [
            f"{indent}v = {value}",
            f"{indent}if v is not UNSET:",
            f"{indent}    if v is None:",
            f"{indent}        {'pass' if nullable else 'raise Fallback'}",
            f"{indent}    elif {t.shape_test(extra) or 'False'}:",
            f"{indent}        {store}",
            f"{indent}    else:",
            f"{indent}        _shape(v, {prop}, {extra[1]!r}, '', False)",
            f"{indent}        {store}",
        ]

    def _extras(self, plan: Plan, at: _At) -> list[str]:
        """Expected extras found go to `unknown` by dotted path; a string own type to
        `own_type`, a service field's string to its column."""
        indent, lines = at.indent, []
        for name in extras(plan):
            lines += [
                f"{indent}v = {at.obj}.{extra_attribute(name)}",
                f"{indent}if v is not UNSET:",
                f"{indent}    unknown[{at.path + name!r}] = v",
            ]
            if (plan.schema, name) == OWN_TYPE:
                lines += [f"{indent}    if type(v) is str:", f"{indent}        own_type = v"]
            column = self.service_columns.get(at.path + name)
            if column is not None:
                lines += [
                    f"{indent}    if type(v) is str:",
                    f"{indent}        {at.row}[{column}] = v",
                ]
        return lines

    def function(self, source: list[str], label: str) -> Callable[..., Any]:
        read: Callable[..., Any] = compile_function(source, f"typed reader {label}", self.names)
        return read


def _row_display(width: int, exprs: Mapping[int, str]) -> str:
    return "[" + ", ".join(exprs.get(i, "None") for i in range(width)) + "]"


class TypedReader:
    """Reads raw deployment records into the rows of a RowState; raises when it cannot.

    On any of `FALLBACK_ERRORS` (or the careful checks' own rejection) the caller drops the
    rows added since the record began and gives the record to the careful reader.
    """

    def __init__(self, state: RowState, layout: Layout) -> None:
        self._state = state
        code = _Code(layout.service_columns)
        code.names.update(_f=state, _quantities=t.container_quantities)
        code.names.update(_volume_source=t.volume_source, _strict_json=strict_json)
        calls: dict[str, str] = {}
        for prop, table_name in ITEM_TABLES.items():
            calls[prop] = code.name("items", self._items(code, layout.items[table_name]))
        for prop, kind in CONTAINER_KINDS.items():
            calls[prop] = code.name("containers", self._containers(code, layout, kind))
        for prop, kind in LABEL_KINDS.items():
            calls[prop] = code.name("labels", self._labels(kind))
        plan = layout.deployment_plan
        self._decoder = RecordDecoder(layout)
        exprs, lines = code.plan(plan, "o", calls)
        width = len(layout.wide.names)
        self._read = code.function(
            [
                "def read(o, unknown):",
                "    own_type = None",
                f"    row = {_row_display(width, exprs)}",
                *lines,
                "    if unknown:",
                f"        row[{layout.unknown_index}] = _dumps(unknown, option=_SORTED).decode()",
                f"    row[{layout.deployment_type_index}] = own_type",
                "    return row",
            ],
            plan.schema,
        )

    def read(self, raw: msgspec.Raw) -> list[Any]:
        """The record's wide row; child rows go straight to the state's row lists.

        A record with fields the spec does not name stays on this path: the strict decode
        refuses it, it is decoded again ignoring them, and `UnknownFields` finds them in
        the raw text exactly as the careful reader would. deployment_type is the record's
        own when it carries one, else None (the caller puts in the listing's);
        secret_count is left to the caller.
        """
        unknown: dict[str, Any] = {}
        record = self._decoder.decode(raw, unknown)
        state = self._state
        state.deployment_id = record.id
        state.secret_count = None
        row: list[Any] = self._read(record, unknown)
        return row

    def _items(self, code: _Code, table: Any) -> Callable[[list[Any]], None]:
        """A child table's handler: one row per item, built in one list display."""
        plan, width = table.plan, len(table.columns.names)
        rows = code.name("rows", self._state.rows[table.name])
        exprs, lines = code.plan(plan, "o", {}, indent="        ")
        exprs.update({0: "did", 1: "position"})
        source = [
            "def read(value):",
            "    did = _f.deployment_id",
            f"    append = {rows}.append",
            "    for position, o in enumerate(value):",
            f"        row = {_row_display(width, exprs)}",
            *lines,
        ]
        if table.name == "deployment_volumes":  # the one source a volume names, as JSON
            names = attributes(plan)
            source.append("        present = {}")
            for name in _volume_sources(plan.schema):
                source += [
                    f"        v = o.{names[name]}",
                    "        if v is not None and v is not UNSET:",
                    f"            present[{name!r}] = v",
                ]
            source += [
                "        if present:",
                "            row[-2], row[-1] = _volume_source(present, _strict_json)",
            ]
        source.append("        append(row)")
        if table.name == "deployment_secrets":
            source.append("    _f.secret_count = len(value)")
        return code.function(source, table.name)

    def _containers(self, code: _Code, layout: Layout, kind: str) -> Callable[[list[Any]], None]:
        """Init containers or sidecars: their rows, resource quantities and env entries."""
        table, env = layout.containers, layout.env
        rows = code.name("rows", self._state.rows[table.name])
        env_rows = code.name("rows", self._state.rows[env.name])
        typed = frozenset({ENV_PROP})
        exprs, lines = code.plan(table.plan, "o", {}, typed, indent="        ")
        exprs.update({0: "did", 1: repr(kind), 2: "position"})
        env_exprs, env_lines = code.plan(
            env.plan, "e", {}, indent="                ", row="env_row"
        )
        env_exprs.update({0: "did", 1: repr(kind), 2: "position", 3: "name", 4: "env_position"})
        names = attributes(table.plan)
        name = exprs[table.columns.names.index("name")]
        source = [
            "def read(value):",
            "    did = _f.deployment_id",
            f"    append, env_append = {rows}.append, {env_rows}.append",
            "    for position, o in enumerate(value):",
            f"        row = {_row_display(len(table.columns.names), exprs)}",
            *lines,
            f"        r = o.{names[RESOURCES_PROP]}",
            "        if r is not None:",
            "            row[-4:] = _quantities(r.requests or {}, r.limits or {})",
            "        append(row)",
            f"        entries = o.{names[ENV_PROP]}",
            "        if entries:",
            f"            name = {name}",
            "            for env_position, e in enumerate(entries):",
            f"                env_row = {_row_display(len(env.columns.names), env_exprs)}",
            *env_lines,
            "                env_append(env_row)",
        ]
        return code.function(source, f"{table.name} {kind}")

    def _labels(self, kind: str) -> Callable[[dict[str, Any]], None]:
        state, rows = self._state, self._state.rows["deployment_labels"]

        def read(value: dict[str, Any]) -> None:
            deployment_id = state.deployment_id
            for key, item in value.items():
                rows.append((deployment_id, kind, key, t.label_text(item, strict_json)))

        return read


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


def strict_json(value: Any) -> str:
    """JSON text as orjson writes it, raising (a fallback to the careful reader) for an
    integer beyond 64 bits, which the careful reader's parse reads differently."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
