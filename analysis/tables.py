"""Deployment, provider and repository records -> Arrow tables with explicit schemas.

Why this shape:
- Every column is derived from `analysis.spec` (openapi.yaml): adding a scalar field to the
  spec adds a column here, a new array or free-form field becomes a `<name>_json` column,
  and fields the spec does not name land in `unknown_fields_json`. Only the routing of
  named arrays to child tables (secrets, volumes, containers, ...) is written down here.
- Schemas are explicit (`TABLE_SCHEMAS`), never inferred, and use only types every reader
  handles (Spark, DuckDB, Trino, Power BI): strings, float64, int64, bool and
  `timestamp[us, UTC]`; no unsigned ints, maps, lists, structs or extension types.
- Records are validated while they are read, one pass per record: a record that does not
  match the spec goes whole to `rejected_records` with a one-line reason naming the field,
  and nothing of it reaches the other tables.
- Secret values (spec fields with `format: password`: secrets[].value, env[].value) are
  never copied out of the record; env values only with `include_env_values=True`. Reasons
  never quote a value found inside a secret-bearing object, and `record_json` is redacted.
- Rows accumulate in Python lists and become Arrow arrays once per batch (`Flattener.take`),
  so an export can stream row groups while memory stays bounded by one batch.
- Two readers, one result. The careful reader here (dicts parsed by orjson, every field
  checked in Python, every reject with its reason) is the reference. Records that arrive as
  raw JSON text (`msgspec.Raw`, from `read_dump(raw=True)`) go first to the fast typed
  reader (`analysis.typed_reader`), derived from the same plans, which writes the same rows
  or gives the record back to the careful reader (about 40% off an export's time).

Documented choices (the spec is silent on them):
- A deployment without an `id` is rejected ("id: missing"): child tables need it.
- Timestamps without an offset are read as UTC.
- `secret_count` is null when the record has no `secrets` array (unknown, not zero).
- deployment_components: replicas of a component without scale fields, or whose scale is
  null, count as 1 (the assumption the capacity reports share).
- Unknown fields inside secret entries and env entries are kept by path with their value
  redacted, since they may hold secret material.
- Fields inside parts stored whole as JSON text (e.g. a container's volumeMounts) stay in
  that JSON text and are not repeated in `unknown_fields_json`.
- Paths in reasons and in `unknown_fields_json` are dotted with list positions in brackets:
  `source_config.resource_spec.sidecars[0].ports`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analysis import spec
from analysis.errors import DumpError, ExportError
from analysis.gcpause import paused_gc
from analysis.pages import Page
from analysis.quantities import cpu_cores, memory_mib
from analysis.secrets import REDACTED

if TYPE_CHECKING:
    from analysis.typed_reader import TypedReader

#: Bumped whenever a table or column changes meaning; written into every Parquet file.
SCHEMA_VERSION = 1
SCHEMA_VERSION_KEY = b"dims.schema_version"

TIMESTAMP = pa.timestamp("us", tz="UTC")

_ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "uuid": pa.string(),
    "datetime": TIMESTAMP,
    "number": pa.float64(),
    "integer": pa.int64(),
    "boolean": pa.bool_(),
}
_EXPECTED = {
    "string": "string",
    "uuid": "string (uuid)",
    "datetime": "date-time string",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
}

#: Named arrays of objects -> the child table holding their items (the only hand routing).
_LABEL_KINDS = {"labels": "label", "annotations": "annotation"}
_CONTAINER_KINDS = {"init_containers": "init", "sidecars": "sidecar"}
_ITEM_TABLES = {
    "secrets": "deployment_secrets",
    "secret_references": "deployment_secret_references",
    "image_pull_secrets": "deployment_image_pull_secrets",
    "volumes": "deployment_volumes",
    "volume_mounts": "deployment_volume_mounts",
}
#: Container property holding env entries (its own table) and holding resources.
_ENV_PROP = "env"
_RESOURCES_PROP = "resources"


class RejectedRecordError(ExportError):
    """Raised in strict mode for the first record that cannot be read."""


def snake_case(name: str) -> str:
    """`mountPath` -> `mount_path`, `downwardAPI` -> `downward_api`: wire names to columns."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


# --- spec facts that analysis.spec does not expose (read from the raw document) ---------


@functools.cache
def _raw_property(schema_name: str, prop: str) -> dict[str, Any]:
    return spec.document()["components"]["schemas"][schema_name]["properties"][prop]


def _types_of(node: dict[str, Any]) -> set[str]:
    if "anyOf" in node:
        return {t for option in node["anyOf"] for t in _types_of(option)}
    if "$ref" in node:
        return {"object"}
    kind = node.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if kind else set()


@functools.cache
def is_nullable(schema_name: str, prop: str) -> bool:
    """Whether the spec allows null for the property."""
    return "null" in _types_of(_raw_property(schema_name, prop))


def is_password(schema_name: str, prop: str) -> bool:
    """Whether the property is a secret value (`format: password`, see spec.Prop.secret)."""
    return spec.schema(schema_name).properties[prop].secret


def _must_be_object(schema_name: str, prop: str) -> bool:
    """A free-form property declared `type: object` (labels), as opposed to any JSON value."""
    return _types_of(_raw_property(schema_name, prop)) - {"null"} == {"object"}


@functools.cache
def _has_own_password(schema_name: str) -> bool:
    """Whether the object itself carries a secret value (a secret entry, an env entry)."""
    return any(is_password(schema_name, p) for p in spec.schema(schema_name).names)


@functools.cache
def _holds_password(schema_name: str, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether a password field is reachable from the schema (so redaction must look inside)."""
    if schema_name in _seen:
        return False
    for prop in spec.schema(schema_name).properties.values():
        if is_password(schema_name, prop.name):
            return True
        if prop.ref and _holds_password(prop.ref, _seen | {schema_name}):
            return True
    return False


# --- reading values ---------------------------------------------------------------------


class _Reject(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.reason = f"{path}: {message}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _describe(value: Any, show: bool) -> str:
    """`string 'abc'`, `number 3`, `object`: what was found, quoting short scalars only."""
    kind = _json_type(value)
    if not show or isinstance(value, dict | list) or value is None:
        return kind
    text = repr(value) if isinstance(value, str) else json.dumps(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind} {text}"


def to_json_text(value: Any) -> str:
    """JSON text with sorted keys, for free-form values of any JSON type."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # an integer beyond 64 bits, from a non-orjson parser
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EXACT_INT = 2**53  # the largest integers a float64 holds exactly


def _convert(value: Any, kind: str, path: str, show: bool) -> Any:
    """The column value for a non-null JSON scalar, or _Reject naming the field."""
    t = type(value)
    if kind == "string" or kind == "uuid":
        if t is str:
            return value
    elif kind == "number":
        if t is float:
            return value
        if t is int:
            try:
                return float(value)
            except OverflowError:
                raise _Reject(path, "number out of range") from None
    elif kind == "datetime":
        if t is str:
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                raise _Reject(
                    path, f"expected date-time string, got {_describe(value, show)}"
                ) from None
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    elif kind == "boolean":
        if t is bool:
            return value
    elif kind == "integer":
        if t is int and _INT64_MIN <= value <= _INT64_MAX:
            return value
        if t is float and value.is_integer() and _INT64_MIN <= value <= _INT64_MAX:
            return int(value)
    raise _Reject(path, f"expected {_EXPECTED[kind]}, got {_describe(value, show)}")


# --- reading plans: one per object schema, compiled from the spec -----------------------

# Step operations. A step is a tuple (op, kind, index, nullable, extra). Scalars have one op
# per kind so that the common case (the right type) is a type test and a store, no call.
_NUMBER = 0  # float64 column
_TEXT = 1  # string or uuid column
_BOOLEAN = 2
_OTHER_SCALAR = 3  # datetime, integer: converted by _convert
_NESTED = 4  # an object ($ref): read into the same row; extra = its _Plan
_CALL = 5  # a routed part: extra(value, path, row)
_PASSWORD = 6  # validate as string; store at index only when index is not None
_JSON = 7  # validate the shape; store JSON text at index
_CHECK = 8  # validate the shape; store nothing (handled by the table's own step)
_SCALAR_OPS = {"number": _NUMBER, "string": _TEXT, "uuid": _TEXT, "boolean": _BOOLEAN}


@dataclass
class _Plan:
    schema: str
    steps: dict[str, tuple[int, str, int | None, bool, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    #: Inside a secret-bearing object: reasons quote no values, unknown values are redacted.
    sensitive: bool = False
    #: read(obj, path, row, unknown): the compiled reader (see `_compile_reader`).
    read: Callable[[dict, str, list, dict], None] = field(default=lambda *_: None, repr=False)


def _check_shape(value: Any, prop: spec.Prop, must_object: bool, path: str, show: bool) -> None:
    """Validate an array (and its scalar or object items) or a free-form object."""
    if prop.kind == "array":
        if type(value) is not list:
            raise _Reject(path, f"expected array, got {_describe(value, show)}")
        if prop.items_kind in _ARROW_TYPES:
            for i, item in enumerate(value):  # the spec's items are not nullable
                _convert(item, prop.items_kind, f"{path}[{i}]", show)
        elif prop.items_kind == "object":
            for i, item in enumerate(value):
                if type(item) is not dict:
                    raise _Reject(f"{path}[{i}]", f"expected object, got {_describe(item, show)}")
                if prop.ref is not None:
                    _check_object(item, prop.ref, f"{path}[{i}]", show)
    elif must_object and type(value) is not dict:
        raise _Reject(path, f"expected object, got {_describe(value, show)}")


def _check_object(obj: dict, schema_name: str, path: str, show: bool) -> None:
    """Validate an object stored as JSON text against its schema (it has no columns)."""
    for prop in spec.schema(schema_name).properties.values():
        value = obj.get(prop.name)
        if value is None:
            continue  # every property of these schemas is optional and nullable
        item_path = f"{path}.{prop.name}"
        if prop.kind in _ARROW_TYPES:
            _convert(value, prop.kind, item_path, show)
        elif prop.kind == "object" and prop.ref is not None:
            if type(value) is not dict:
                raise _Reject(item_path, f"expected object, got {_describe(value, show)}")
            _check_object(value, prop.ref, item_path, show)
        else:
            _check_shape(value, prop, prop.kind == "freeform", item_path, show)


def _read_one(key: str, value: Any, plan: _Plan, path: str, row: list, unknown: dict) -> None:
    """Read one property of an object (the careful path: every case, every reason)."""
    step = plan.steps.get(key)
    if step is None:
        unknown[path + key] = REDACTED if plan.sensitive else value
        return
    if value is None:
        if step[3]:
            return
        raise _Reject(path + key, f"expected {_EXPECTED.get(step[1], step[1])}, got null")
    op = step[0]
    if op == _NUMBER:
        t = type(value)
        if t is float:
            row[step[2]] = value
            return
        if t is int and -_EXACT_INT <= value <= _EXACT_INT:
            row[step[2]] = value  # Arrow stores it as float64 exactly
            return
    elif op == _TEXT:
        if type(value) is str:
            row[step[2]] = value
            return
    elif op == _BOOLEAN:
        if type(value) is bool:
            row[step[2]] = value
            return
    elif op == _NESTED:
        if type(value) is not dict:
            raise _Reject(path + key, f"expected object, got {_describe(value, False)}")
        step[4].read(value, f"{path}{key}.", row, unknown)
        return
    elif op == _CALL:
        step[4](value, path + key, row)
        return
    elif op == _PASSWORD:
        if type(value) is not str:
            raise _Reject(path + key, f"expected string, got {_json_type(value)}")
        if step[2] is not None:
            row[step[2]] = value
        return
    elif op in (_JSON, _CHECK):
        prop, must_object, hide = step[4]
        _check_shape(value, prop, must_object, path + key, not (plan.sensitive or hide))
        if op == _JSON:
            row[step[2]] = to_json_text(value)
        return
    # A scalar of another kind, or of the wrong type: the careful path converts or rejects.
    row[step[2]] = _convert(value, step[1], path + key, not plan.sensitive)


def _read_object(obj: dict, plan: _Plan, path: str, row: list, unknown: dict) -> None:
    """Read one JSON object into `row` following `plan`; unknown keys go to `unknown`."""
    plan.read(obj, path, row, unknown)


#: Python type names of array items whose shape `_shape_test` checks inline.
_ITEM_TYPES = {"string": "str", "uuid": "str", "boolean": "bool", "object": "dict"}


def _shape_test(shape: tuple[spec.Prop, bool, bool]) -> str | None:
    """An expression true when `v` has the shape `_check_shape` accepts (None: no shortcut).

    Only the common shapes are tested inline; a value that fails the test (or null) takes
    the careful path, which accepts it or rejects it with the reason.
    """
    prop, must_object, _hide = shape
    if prop.kind == "array":
        item = _ITEM_TYPES.get(prop.items_kind or "")
        if item is None or prop.ref is not None:  # items with a schema: the careful path
            return None
        return f"type(v) is list and all(type(x) is {item} for x in v)"
    if must_object:
        return "type(v) is dict"
    return "v is not None"  # any JSON value


def _compile_reader(plan: _Plan) -> Callable[[dict, str, list, dict], None]:
    """The plan as straight-line Python: the hot loop of every export.

    One generated function per object schema reads each property the spec names with
    `obj.get` and stores it when its type is the expected one (a type test and a store);
    anything else (null where null is not allowed, a wrong type, a datetime, a JSON column)
    goes to `_read_one`, the careful path, which converts or rejects with a reason.
    Unknown keys are found with one set test. Properties are read in spec order, so when a
    record has several problems the reason names the first in spec order.
    """
    names: dict[str, Any] = {
        "_KNOWN": frozenset(plan.steps),
        "_STEPS": plan.steps,
        "_PLAN": plan,
        "_one": _read_one,
        "_Reject": _Reject,
        "_E": _EXACT_INT,
        "_json": to_json_text,
        "REDACTED": REDACTED,
    }
    lines = [
        "def read(obj, path, row, unknown):",
        "    if not _KNOWN.issuperset(obj):",
        "        for key in obj:",
        "            if key not in _STEPS:",
        f"                unknown[path + key] = {'REDACTED' if plan.sensitive else 'obj[key]'}",
        "    get = obj.get",
    ]
    for n, (key, (op, _kind, index, nullable, extra)) in enumerate(plan.steps.items()):
        k = repr(key)
        careful = f"_one({k}, v, _PLAN, path, row, unknown)"
        other = "v is not None" if nullable else f"v is not None or {k} in obj"
        fits = _shape_test(extra) if op in (_JSON, _CHECK) else None
        lines.append(f"    v = get({k})")
        if op == _NUMBER:
            lines += [
                "    if type(v) is float:",
                f"        row[{index}] = v",
                "    elif type(v) is int and -_E <= v <= _E:",
                f"        row[{index}] = v",
            ]
        elif op in (_TEXT, _BOOLEAN):
            lines += [
                f"    if type(v) is {'str' if op == _TEXT else 'bool'}:",
                f"        row[{index}] = v",
            ]
        elif op == _NESTED:
            names[f"_sub{n}"] = extra
            lines += [
                "    if type(v) is dict:",
                f"        _sub{n}.read(v, path + {key + '.'!r}, row, unknown)",
            ]
        elif op == _CALL:
            names[f"_call{n}"] = extra
            lines += [
                "    if v is not None:",
                f"        _call{n}(v, path + {k}, row)",
            ]
        elif op in (_JSON, _CHECK) and fits is not None:
            store = f"row[{index}] = _json(v)" if op == _JSON else "pass"
            lines += [f"    if {fits}:", f"        {store}"]
        else:
            lines += [f"    if {other}:", f"        {careful}"]
        if op in (_NUMBER, _TEXT, _BOOLEAN, _NESTED, _CALL) or fits is not None:
            lines += [f"    elif {other}:", f"        {careful}"]
    for key in plan.required:
        lines += [
            f"    if {key!r} not in obj:",
            f"        raise _Reject(path + {key!r}, 'missing')",
        ]
    exec(compile("\n".join(lines), f"<reader {plan.schema}>", "exec"), names)
    return names["read"]


@dataclass
class _Columns:
    """Column names and types of a table under construction, with name -> index."""

    names: list[str] = field(default_factory=list)
    types: list[pa.DataType] = field(default_factory=list)
    #: Columns placed in advance (the wide table's order) that a plan may claim once.
    reserved: set[str] = field(default_factory=set)

    def add(self, name: str, arrow_type: pa.DataType) -> int:
        if name in self.reserved:
            self.reserved.discard(name)
            index = self.names.index(name)
            if self.types[index] != arrow_type:
                raise ValueError(f"openapi.yaml: column {name!r} changes type")
            return index
        if name in self.names:
            raise ValueError(f"openapi.yaml: column {name!r} would appear twice")
        self.names.append(name)
        self.types.append(arrow_type)
        return len(self.names) - 1

    def schema(self) -> pa.Schema:
        return pa.schema(list(zip(self.names, self.types, strict=True)))


def _plan_for(
    schema_name: str,
    columns: _Columns,
    *,
    column_of: Callable[[str, str], str] = lambda prefix, name: prefix + snake_case(name),
    prefix: str = "",
    calls: Mapping[str, Callable] | None = None,
    checks: Iterable[str] = (),
    include_passwords: bool = False,
    enforce_required: bool = False,
) -> _Plan:
    """Compile the reading plan of an object schema, adding its columns to `columns`.

    Scalars get typed columns; arrays and free-form values `<name>_json` text columns;
    nested objects are expanded with their name as a column prefix; `calls` routes a
    property to a handler (a child table); `checks` are validated but stored by the caller.
    """
    calls = calls or {}
    checks = set(checks)
    plan = _Plan(schema=schema_name, sensitive=_has_own_password(schema_name))
    deferred_passwords: list[tuple[str, spec.Prop]] = []
    for prop in spec.schema(schema_name).properties.values():
        nullable = is_nullable(schema_name, prop.name)
        name = prop.name
        if name in calls:
            plan.steps[name] = (_CALL, prop.kind, None, nullable, calls[name])
        elif is_password(schema_name, name):
            deferred_passwords.append((name, prop))
        elif prop.kind in _ARROW_TYPES:
            index = columns.add(column_of(prefix, name), _ARROW_TYPES[prop.kind])
            op = _SCALAR_OPS.get(prop.kind, _OTHER_SCALAR)
            plan.steps[name] = (op, prop.kind, index, nullable, None)
        elif prop.kind == "object" and prop.ref:
            sub = _plan_for(
                prop.ref,
                columns,
                column_of=column_of,
                prefix=f"{prefix}{snake_case(name)}_",
                calls=calls,
                checks=checks,
                include_passwords=include_passwords,
                enforce_required=enforce_required,
            )
            plan.steps[name] = (_NESTED, "object", None, nullable, sub)
        else:
            # Items that hold secret values (env entries) are never quoted in a reason.
            hide = bool(prop.ref) and _has_own_password(prop.ref)
            shape = (prop, _must_be_object(schema_name, name), hide)
            if name in checks:
                plan.steps[name] = (_CHECK, prop.kind, None, nullable, shape)
            else:
                index = columns.add(f"{prefix}{snake_case(name)}_json", pa.string())
                plan.steps[name] = (_JSON, prop.kind, index, nullable, shape)
    # Password columns (env values, with the flag) go last, away from the usual columns.
    for name, _prop in deferred_passwords:
        index = columns.add(column_of(prefix, name), pa.string()) if include_passwords else None
        plan.steps[name] = (_PASSWORD, "string", index, is_nullable(schema_name, name), None)
    if enforce_required:
        plan.required = tuple(
            p.name for p in spec.schema(schema_name).properties.values() if p.required
        )
    plan.read = _compile_reader(plan)
    return plan


# --- redaction ----------------------------------------------------------------------------


def redact(value: Any, schema_name: str = "Deployment") -> Any:
    """A copy of a record with every secret value replaced by REDACTED.

    Follows the spec to the password fields; where the record's shape differs from the spec
    on the way to one (e.g. `secrets` is a string), the whole part is replaced, since it may
    hold the secret itself.
    """
    if type(value) is list and schema_name == "Deployment":  # records nested by mistake
        return [redact(item, schema_name) for item in value]
    if type(value) is not dict:
        return value
    return _redact_object(value, schema_name)


def _redact_object(obj: dict, schema_name: str) -> dict:
    out = dict(obj)
    properties = spec.schema(schema_name).properties
    # Unknown fields of a secret-bearing object (a secret entry, an env entry) may hold
    # secret material: redacted here as in unknown_fields_json.
    sensitive = _has_own_password(schema_name)
    for key, value in obj.items():
        prop = properties.get(key)
        if prop is None and sensitive:
            out[key] = REDACTED
            continue
        if prop is None or value is None:
            continue
        if is_password(schema_name, key):
            out[key] = REDACTED
        elif prop.ref and _holds_password(prop.ref):
            if prop.kind == "object":
                out[key] = _redact_object(value, prop.ref) if type(value) is dict else REDACTED
            elif type(value) is list:
                out[key] = [
                    _redact_object(item, prop.ref) if type(item) is dict else REDACTED
                    for item in value
                ]
            else:
                out[key] = REDACTED
    return out


# --- table definitions --------------------------------------------------------------------


@dataclass
class _ItemTable:
    """A child table: one row per item of an array (or of several arrays)."""

    name: str
    columns: _Columns
    plan: _Plan


def _snapshot_field() -> pa.Field:
    return pa.field("snapshot_at", TIMESTAMP)


def _deployment_columns() -> _Columns:
    """The wide table: `id` first, then every spec scalar under its leaf name, then extras."""
    columns = _Columns()
    fields = spec.deployment_scalar_fields()
    ordered = sorted(fields, key=lambda f: f.path != ("id",))  # stable: id first
    for f in ordered:
        columns.add(f.name, _ARROW_TYPES[f.kind])
    columns.reserved = {f.name for f in ordered}
    return columns


class _Layout:
    """Every table's columns and reading plans, for one include_env_values setting."""

    def __init__(self, include_env_values: bool, flattener: Flattener | None) -> None:
        f = flattener
        # Child tables first: the deployment plan routes arrays to them.
        self.items: dict[str, _ItemTable] = {}
        for prop_name, table in _ITEM_TABLES.items():
            ref = _find_array_ref(prop_name)
            cols = _Columns()
            cols.add("deployment_id", pa.string())
            cols.add("position", pa.int64())
            checks = _volume_sources(ref) if table == "deployment_volumes" else ()
            plan = _plan_for(ref, cols, checks=checks)
            if checks:
                cols.add("source_type", pa.string())
                cols.add("source_json", pa.string())
            self.items[table] = _ItemTable(table, cols, plan)

        container_ref = _find_array_ref(next(iter(_CONTAINER_KINDS)))
        cols = _Columns()
        for name, arrow_type in (
            ("deployment_id", pa.string()),
            ("kind", pa.string()),
            ("position", pa.int64()),
        ):
            cols.add(name, arrow_type)
        plan = _plan_for(container_ref, cols, checks=(_ENV_PROP,))
        for name in ("cpu_request", "cpu_limit", "memory_request_mb", "memory_limit_mb"):
            cols.add(name, pa.float64())
        self.containers = _ItemTable("deployment_containers", cols, plan)

        env_ref = spec.ref_of(container_ref, _ENV_PROP)
        cols = _Columns()
        for name, arrow_type in (
            ("deployment_id", pa.string()),
            ("container_kind", pa.string()),
            ("container_position", pa.int64()),
            ("container", pa.string()),
            ("position", pa.int64()),
        ):
            cols.add(name, arrow_type)
        plan = _plan_for(env_ref, cols, include_passwords=include_env_values)
        self.env = _ItemTable("deployment_container_env", cols, plan)

        # The wide deployments table.
        self.wide = _deployment_columns()
        calls: dict[str, Callable] = {}
        if f is not None:
            calls.update({k: f._item_reader(self, t) for k, t in _ITEM_TABLES.items()})
            calls.update(
                {k: f._container_reader(self, kind) for k, kind in _CONTAINER_KINDS.items()}
            )
            calls.update({k: f._label_reader(kind) for k, kind in _LABEL_KINDS.items()})
        else:  # schemas only
            calls.update(dict.fromkeys((*_ITEM_TABLES, *_CONTAINER_KINDS, *_LABEL_KINDS), None))
        self.deployment_plan = _plan_for(
            "Deployment",
            self.wide,
            column_of=lambda _prefix, name: name,  # columns already made, by leaf name
            calls=calls,
        )
        if self.wide.reserved:
            raise ValueError(f"openapi.yaml: scalar fields not reached: {self.wide.reserved}")
        self.deployment_type_index = self.wide.add("deployment_type", pa.string())
        #: dotted path of a field the real service sends beyond the spec -> its column
        self.service_columns = {
            path: self.wide.add(column, pa.string())
            for path, column in spec.service_fields().items()
            if column != "deployment_type"
        }
        self.secret_count_index = self.wide.add("secret_count", pa.int64())
        self.unknown_index = self.wide.add("unknown_fields_json", pa.string())

        self.providers, self.provider_plan = _record_table("OAuthProvider")
        self.repositories, self.repository_plan = _record_table("Repository")

    def schemas(self) -> dict[str, pa.Schema]:
        def with_snapshot(columns: _Columns) -> pa.Schema:
            return columns.schema().append(_snapshot_field())

        out = {"deployments": with_snapshot(self.wide)}
        out["deployment_components"] = _components_schema()
        for table in self.items.values():
            out[table.name] = with_snapshot(table.columns)
        out[self.containers.name] = with_snapshot(self.containers.columns)
        out[self.env.name] = with_snapshot(self.env.columns)
        out["deployment_labels"] = pa.schema(
            [
                ("deployment_id", pa.string()),
                ("kind", pa.string()),
                ("key", pa.string()),
                ("value", pa.string()),
                _snapshot_field(),
            ]
        )
        out["oauth_providers"] = with_snapshot(self.providers)
        out["repositories"] = with_snapshot(self.repositories)
        out["rejected_records"] = pa.schema(
            [
                ("source", pa.string()),
                ("record_index", pa.int64()),
                ("reason", pa.string()),
                ("record_json", pa.string()),
                _snapshot_field(),
            ]
        )
        return out


def _find_array_ref(prop_name: str) -> str:
    """The item schema of the array property `prop_name`, wherever it sits under Deployment."""
    found = {
        prop.ref
        for name in _schemas_under("Deployment")
        for prop in spec.schema(name).properties.values()
        if prop.name == prop_name and prop.kind == "array" and prop.ref
    }
    if len(found) != 1:
        raise ValueError(
            f"openapi.yaml: expected one array {prop_name!r} of objects, found {found}"
        )
    return found.pop()


def _schemas_under(root: str) -> list[str]:
    out, todo = [], [root]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.append(name)
        todo.extend(p.ref for p in spec.schema(name).properties.values() if p.ref)
    return out


def _volume_sources(volume_ref: str) -> tuple[str, ...]:
    """A volume's source properties: its free-form objects (configMap, secret, ...)."""
    return tuple(
        p.name for p in spec.schema(volume_ref).properties.values() if p.kind == "freeform"
    )


def _record_table(schema_name: str) -> tuple[_Columns, _Plan]:
    columns = _Columns()
    plan = _plan_for(schema_name, columns, enforce_required=True)
    columns.add("unknown_fields_json", pa.string())
    return columns, plan


def _defaults(schema_name: str) -> dict[str, Any]:
    return {
        p.name: p.default
        for p in spec.schema(schema_name).properties.values()
        if p.default is not None
    }


# --- deployment_components, derived from the wide table ------------------------------------

_SCALE = ("min_scale", "max_scale")


def _component_measures() -> tuple[list[str], list[str]]:
    """(every measure in spec order, the per-replica ones that get totals).

    Per-replica measures are those every component has, scale excluded: cpu, cpu_limit,
    memory_mb, memory_limit_mb. Component-specific ones (db storage_gi, max_connections)
    are not multiplied by replicas.
    """
    by_component = spec.component_measures()
    measures: list[str] = []
    for fields_ in by_component.values():
        measures.extend(m for m in fields_ if m not in measures)
    shared = [m for m in measures if all(m in f for f in by_component.values())]
    return measures, [m for m in shared if m not in _SCALE]


def _components_schema() -> pa.Schema:
    measures, per_replica = _component_measures()
    names = ["deployment_id", "component"]
    types: list[pa.DataType] = [pa.string(), pa.string()]
    for m in (*measures, "replicas_min", "replicas_max"):
        names.append(m)
        types.append(pa.float64())
    for m in per_replica:
        for end in ("min", "max"):
            names.append(f"{m}_total_{end}")
            types.append(pa.float64())
    names += ["deployment_type", "snapshot_at"]
    types += [pa.string(), TIMESTAMP]
    return pa.schema(list(zip(names, types, strict=True)))


def _components_from(deployments: pa.Table) -> pa.Table:
    schema = _components_schema()
    measures, per_replica = _component_measures()
    n = deployments.num_rows
    nulls = pa.nulls(n, pa.float64())
    ones = pa.array([1.0] * n, pa.float64())
    parts = []
    for component, fields_ in spec.component_measures().items():
        values = {
            m: deployments[fields_[m]].combine_chunks() if m in fields_ else nulls for m in measures
        }
        # One replica where the component has no scale fields or its scale is null: the
        # documented assumption the capacity reports share.
        values["replicas_min"] = pc.coalesce(values["min_scale"], ones)
        values["replicas_max"] = pc.coalesce(values["max_scale"], ones)
        for m in per_replica:
            values[f"{m}_total_min"] = pc.multiply(values[m], values["replicas_min"])
            values[f"{m}_total_max"] = pc.multiply(values[m], values["replicas_max"])
        values["deployment_id"] = deployments["id"].combine_chunks()
        values["component"] = pa.array([component] * n, pa.string())
        values["deployment_type"] = deployments["deployment_type"].combine_chunks()
        values["snapshot_at"] = deployments["snapshot_at"].combine_chunks()
        parts.append(pa.table([values[name] for name in schema.names], schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


# --- the public schemas ------------------------------------------------------------------


def table_schemas(include_env_values: bool = False) -> dict[str, pa.Schema]:
    """Every table's explicit Arrow schema (the env table differs with include_env_values)."""
    return _Layout(include_env_values, None).schemas()


#: The schemas of an export without env values: what readers, tests and docs rely on.
TABLE_SCHEMAS: dict[str, pa.Schema] = table_schemas()
TABLE_NAMES: tuple[str, ...] = tuple(TABLE_SCHEMAS)


# --- the flattener ------------------------------------------------------------------------


class Flattener:
    """Accumulates pages of records as columns; `take()` hands them over as Arrow tables.

    Streaming use: `add_page` as pages arrive, `take` whenever `pending` is large enough to
    make a row group, and once at the end. `counts` tracks records read and rejected.
    """

    def __init__(
        self,
        *,
        snapshot_at: datetime | None = None,
        include_env_values: bool = False,
        strict: bool = False,
    ) -> None:
        at = snapshot_at or datetime.now(UTC)
        self.snapshot_at = at if at.tzinfo else at.replace(tzinfo=UTC)
        self.include_env_values = include_env_values
        self.strict = strict
        self._rows: dict[str, list] = {name: [] for name in TABLE_NAMES}
        self._layout = _Layout(include_env_values, self)
        self.schemas = self._layout.schemas()
        self._unknown: dict[str, Any] = {}
        self._id: str | None = None
        self._secret_count: int | None = None
        self._typed: TypedReader | None = None
        self._provider_defaults = _defaults("OAuthProvider")
        self._repository_defaults = _defaults("Repository")
        #: deployments read, deployments rejected, and all rejected (providers, repositories too)
        self.counts = {"records": 0, "rejected": 0}
        #: deployments the fast typed reader took (the careful reader read the rest)
        self.typed_records = 0
        self.pending = 0

    # ----- deployments

    def add_page(self, page: Page) -> None:
        """Flatten every record of a page; unreadable ones become rejected_records rows.

        Records given as raw JSON text (`msgspec.Raw`, from `read_dump(raw=True)`) are read
        by the fast typed reader when it can; otherwise, and for parsed records, by the
        careful reader, which validates every field and gives rejects their reasons.
        """
        # Imported here: the typed reader is derived from this module's plans.
        from analysis.typed_reader import FALLBACK_ERRORS

        layout = self._layout
        wide_rows = self._rows["deployments"]
        row_lists = list(self._rows.values())
        plan = layout.deployment_plan
        width = len(layout.wide.names)
        type_i, count_i, unknown_i = (
            layout.deployment_type_index,
            layout.secret_count_index,
            layout.unknown_index,
        )
        service_columns = layout.service_columns.items()
        typed = self._typed_reader()
        typed_count = 0
        with paused_gc():
            for i, record in enumerate(page.records):
                marks = list(map(len, row_lists))
                if type(record) is msgspec.Raw:
                    try:
                        row = typed.read(record)
                    except (_Reject, *FALLBACK_ERRORS):
                        for rows, mark in zip(row_lists, marks, strict=True):
                            del rows[mark:]
                        record = _parse_raw(record, page.source, page.first_index + i)
                    else:
                        if row[type_i] is None:
                            row[type_i] = page.listed_type(self._id)
                        row[count_i] = self._secret_count
                        wide_rows.append(row)
                        typed_count += 1
                        continue
                try:
                    if type(record) is not dict:
                        raise _Reject("record", f"expected object, got {_json_type(record)}")
                    record_id = record.get("id")
                    if record_id is None:
                        raise _Reject("id", "missing" if "id" not in record else "null")
                    if type(record_id) is not str:
                        raise _Reject(
                            "id", f"expected string (uuid), got {_describe(record_id, True)}"
                        )
                    self._id = record_id
                    self._secret_count = None
                    unknown = self._unknown = {}
                    row = [None] * width
                    plan.read(record, "", row, unknown)
                except _Reject as reject:
                    for rows, mark in zip(row_lists, marks, strict=True):
                        del rows[mark:]
                    self._reject(page.source, page.first_index + i, reject.reason, record)
                    continue
                row[type_i] = page.type_of(record)
                row[count_i] = self._secret_count
                if unknown:
                    row[unknown_i] = to_json_text(unknown)
                    for path, index in service_columns:
                        value = unknown.get(path)
                        if type(value) is str:
                            row[index] = value
                wide_rows.append(row)
        n = len(page.records)
        self.typed_records += typed_count
        self.counts["records"] += n
        self.pending += n

    def _typed_reader(self) -> TypedReader:
        from analysis.typed_reader import TypedReader

        if self._typed is None:
            self._typed = TypedReader(self, self._layout)
        return self._typed

    def _reject(
        self, source: str, index: int, reason: str, record: Any, schema: str = "Deployment"
    ) -> None:
        self.counts["rejected"] += 1
        if self.strict:
            raise RejectedRecordError(
                f"record rejected: {source} record {index}: {reason} "
                "(drop --strict to export the rest and list it in rejected_records)"
            )
        self._rows["rejected_records"].append(
            (source, index, reason, to_json_text(redact(record, schema)))
        )

    def _item_reader(self, layout: _Layout, table_name: str) -> Callable:
        table = layout.items[table_name]
        rows = self._rows[table_name]
        plan, width = table.plan, len(table.columns.names)
        is_secrets = table_name == "deployment_secrets"
        sources = _volume_sources(plan.schema) if table_name == "deployment_volumes" else ()
        source_set = frozenset(sources)

        def read(value: Any, path: str, _row: list) -> None:
            if type(value) is not list:
                raise _Reject(path, f"expected array, got {_json_type(value)}")
            read_item, unknown, deployment_id = plan.read, self._unknown, self._id
            for position, item in enumerate(value):
                if type(item) is not dict:
                    raise _Reject(
                        f"{path}[{position}]",
                        f"expected object, got {_describe(item, not plan.sensitive)}",
                    )
                row = [None] * width
                row[0] = deployment_id
                row[1] = position
                read_item(item, f"{path}[{position}].", row, unknown)
                if sources and not source_set.isdisjoint(item):
                    present = {s: item[s] for s in sources if item.get(s) is not None}
                    if len(present) == 1:
                        ((kind, obj),) = present.items()
                        row[-2], row[-1] = kind, to_json_text(obj)
                    elif present:
                        row[-2], row[-1] = ",".join(present), to_json_text(present)
                rows.append(row)
            if is_secrets:
                self._secret_count = len(value)

        return read

    def _container_reader(self, layout: _Layout, kind: str) -> Callable:
        table, env = layout.containers, layout.env
        rows, env_rows = self._rows[table.name], self._rows[env.name]
        width, env_width = len(table.columns.names), len(env.columns.names)
        name_i = table.columns.names.index("name")

        def read(value: Any, path: str, _row: list) -> None:
            if type(value) is not list:
                raise _Reject(path, f"expected array, got {_json_type(value)}")
            for position, item in enumerate(value):
                item_path = f"{path}[{position}]"
                if type(item) is not dict:
                    raise _Reject(item_path, f"expected object, got {_describe(item, True)}")
                row = [None] * width
                row[0], row[1], row[2] = self._id, kind, position
                table.plan.read(item, item_path + ".", row, self._unknown)
                resources = item.get(_RESOURCES_PROP) or {}
                requests = resources.get("requests") or {}
                limits = resources.get("limits") or {}
                if type(requests) is dict and type(limits) is dict:
                    row[-4] = _quantity(cpu_cores, requests.get("cpu"))
                    row[-3] = _quantity(cpu_cores, limits.get("cpu"))
                    row[-2] = _quantity(memory_mib, requests.get("memory"))
                    row[-1] = _quantity(memory_mib, limits.get("memory"))
                rows.append(row)
                for env_position, entry in enumerate(item.get(_ENV_PROP) or ()):
                    env_path = f"{item_path}.{_ENV_PROP}[{env_position}]"
                    if type(entry) is not dict:
                        raise _Reject(env_path, f"expected object, got {_json_type(entry)}")
                    env_row = [None] * env_width
                    env_row[:5] = (self._id, kind, position, row[name_i], env_position)
                    env.plan.read(entry, env_path + ".", env_row, self._unknown)
                    env_rows.append(env_row)

        return read

    def _label_reader(self, kind: str) -> Callable:
        rows = self._rows["deployment_labels"]

        def read(value: Any, path: str, _row: list) -> None:
            if type(value) is not dict:
                raise _Reject(path, f"expected object, got {_describe(value, True)}")
            for key, item in value.items():
                text = item if type(item) is str or item is None else to_json_text(item)
                rows.append((self._id, kind, key, text))

        return read

    # ----- providers and repositories

    def add_providers(self, records: Iterable[Any], *, source: str = "oauth_providers") -> None:
        """Add OAuth provider records (spec 2.1), applying the spec's defaults."""
        layout = self._layout
        self._add_records(
            records,
            source,
            "OAuthProvider",
            layout.provider_plan,
            layout.providers,
            self._rows["oauth_providers"],
            self._provider_defaults,
        )

    def add_repositories(self, records_by_integration: Mapping[str, Iterable[Any]]) -> None:
        """Add repository records (spec 2.2), keyed by the integration that listed them."""
        layout = self._layout
        for integration_id, records in records_by_integration.items():
            self._add_records(
                records,
                f"repositories integration={integration_id}",
                "Repository",
                layout.repository_plan,
                layout.repositories,
                self._rows["repositories"],
                self._repository_defaults,
            )

    def _add_records(
        self,
        records: Iterable[Any],
        source: str,
        schema_name: str,
        plan: _Plan,
        columns: _Columns,
        rows: list,
        defaults: dict[str, Any],
    ) -> None:
        width = len(columns.names)
        for i, record in enumerate(records):
            try:
                if type(record) is not dict:
                    raise _Reject("record", f"expected object, got {_json_type(record)}")
                unknown: dict[str, Any] = {}
                row = [None] * width
                _read_object({**defaults, **record}, plan, "", row, unknown)
            except _Reject as reject:
                self._reject(source, i, reject.reason, record, schema_name)
                continue
            row[-1] = to_json_text(unknown) if unknown else None
            rows.append(row)

    # ----- output

    def take(self, *, spent: list | None = None) -> dict[str, pa.Table]:
        """Every table (empty ones too) for the rows added since the last take; clears them.

        Freeing millions of row objects takes a while; with `spent`, the row lists are put
        there instead, so a caller can free them while the tables are being written.
        """
        at = pa.scalar(self.snapshot_at, type=TIMESTAMP)
        out: dict[str, pa.Table] = {}
        with paused_gc():
            for name, schema in self.schemas.items():
                if name == "deployment_components":
                    continue
                rows = self._rows[name]
                taken = rows.copy()  # the readers hold `rows` itself: clear it in place
                rows.clear()
                out[name] = _to_table(taken, schema, at)
                if spent is not None:
                    spent.append(taken)
                del taken
        out["deployment_components"] = _components_from(out["deployments"])
        self.pending = 0
        return {name: out[name] for name in self.schemas}


def _parse_raw(record: msgspec.Raw, source: str, index: int) -> Any:
    """A raw record parsed for the careful reader; text that is not JSON stops the export."""
    try:
        return orjson.loads(memoryview(record))
    except orjson.JSONDecodeError as exc:
        raise DumpError(f"{source}: record {index} is not valid JSON: {exc}") from None


def _to_table(rows: list, schema: pa.Schema, at: pa.Scalar) -> pa.Table:
    """Rows (every column but snapshot_at) as a table of `schema`.

    The rows are converted as one struct array (pyarrow reads each tuple in C++) and split
    into its columns: about twice as fast as transposing them in Python first.
    """
    row_type = pa.struct(list(schema)[:-1])  # every row lacks snapshot_at
    rows_array = pa.array(map(tuple, rows), type=row_type, size=len(rows))
    return pa.Table.from_arrays([*rows_array.flatten(), pa.repeat(at, len(rows))], schema=schema)


@functools.lru_cache(maxsize=4096)
def _cached_quantity(parse: Callable[[Any], float | None], text: str) -> float | None:
    return parse(text)


def _quantity(parse: Callable[[Any], float | None], value: Any) -> float | None:
    """parse(value), remembered for text: a fleet repeats a handful of quantities."""
    return _cached_quantity(parse, value) if type(value) is str else parse(value)


# --- conveniences for notebooks -----------------------------------------------------------


def flatten(
    pages: Iterable[Page],
    *,
    providers: Iterable[Any] = (),
    repositories: Mapping[str, Iterable[Any]] | None = None,
    snapshot_at: datetime | None = None,
    include_env_values: bool = False,
) -> dict[str, pa.Table]:
    """Every table for the given pages, providers and repositories, in memory."""
    flattener = Flattener(snapshot_at=snapshot_at, include_env_values=include_env_values)
    for page in pages:
        flattener.add_page(page)
    flattener.add_providers(providers)
    if repositories:
        flattener.add_repositories(repositories)
    return flattener.take()


def flatten_providers(records: Iterable[Any], *, snapshot_at: datetime | None = None) -> pa.Table:
    """The oauth_providers table for provider records (rejected ones are left out)."""
    return flatten((), providers=records, snapshot_at=snapshot_at)["oauth_providers"]


def flatten_repositories(
    records_by_integration: Mapping[str, Iterable[Any]], *, snapshot_at: datetime | None = None
) -> pa.Table:
    """The repositories table for repository records keyed by integration id."""
    return flatten((), repositories=records_by_integration, snapshot_at=snapshot_at)["repositories"]


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """A DataFrame keeping nulls in integer and boolean columns (nullable dtypes)."""
    mapping = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return table.to_pandas(types_mapper=mapping.get)


def _as_pages(pages_or_records: Iterable[Any]) -> list[Page]:
    items = list(pages_or_records)
    if all(isinstance(item, Page) for item in items):
        return items
    return [Page(records=items, source="records")]


def to_dataframes(
    pages_or_records: Iterable[Any],
    *,
    providers: Iterable[Any] = (),
    repositories: Mapping[str, Iterable[Any]] | None = None,
    snapshot_at: datetime | None = None,
    include_env_values: bool = False,
) -> dict[str, pd.DataFrame]:
    """Every table as a pandas DataFrame, from Pages or from a plain list of records."""
    tables = flatten(
        _as_pages(pages_or_records),
        providers=providers,
        repositories=repositories,
        snapshot_at=snapshot_at,
        include_env_values=include_env_values,
    )
    return {name: to_pandas(table) for name, table in tables.items()}


def deployments_dataframe(pages_or_records: Iterable[Any]) -> pd.DataFrame:
    """The wide deployments table as a DataFrame, from Pages or a plain list of records."""
    return to_pandas(flatten(_as_pages(pages_or_records))["deployments"])
