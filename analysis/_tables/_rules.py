"""The rules every reader applies: spec facts, value conversion, plans and shape checks.

Both readers of records (the careful one in `_careful.py` and the compiled lane in
`_typed.py` and `_gathered.py`) are derived from these, so a rule (what a date-time is,
which shapes a free-form part may take, what a secret is) exists once.
"""

from __future__ import annotations

import functools
import itertools
import json
import linecache
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pyarrow as pa

from dims import _spec as spec
from dims._tables._quantities import readable

#: A row under construction: one value per column of its table.
Row = list[Any]
#: Fields the spec does not name, by dotted path.
Unknown = dict[str, Any]
#: A compiled reader: read(obj, path, row, unknown).
ReadFn = Callable[[dict[str, Any], str, Row, Unknown], None]
#: A routed part's handler: read(value, path, row).
RoutedFn = Callable[[Any, str, Row], None]
#: A plan's step: (op, kind, column index or None, nullable, extra).
Step = tuple[int, str, int | None, bool, Any]

TIMESTAMP = pa.timestamp("us", tz="UTC")

ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "uuid": pa.string(),
    "datetime": TIMESTAMP,
    "number": pa.float64(),
    "integer": pa.int64(),
    "boolean": pa.bool_(),
}
EXPECTED = {
    "string": "string",
    "uuid": "string (uuid)",
    "datetime": "date-time string",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
}


def snake_case(name: str) -> str:
    """`mountPath` -> `mount_path`, `downwardAPI` -> `downward_api`: wire names to columns."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


# --- spec facts that dims._spec does not expose (read from the raw document) ---------


@functools.cache
def _raw_property(schema_name: str, prop: str) -> dict[str, Any]:
    node: dict[str, Any] = spec.document()["components"]["schemas"][schema_name]["properties"][prop]
    return node


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


def must_be_object(schema_name: str, prop: str) -> bool:
    """A free-form property declared `type: object` (labels), as opposed to any JSON value."""
    return _types_of(_raw_property(schema_name, prop)) - {"null"} == {"object"}


@functools.cache
def has_own_password(schema_name: str) -> bool:
    """Whether the object itself carries a secret value (a secret entry, an env entry)."""
    return any(is_password(schema_name, p) for p in spec.schema(schema_name).names)


@functools.cache
def holds_password(schema_name: str, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether a password field is reachable from the schema (so redaction must look inside)."""
    if schema_name in _seen:
        return False
    for prop in spec.schema(schema_name).properties.values():
        if is_password(schema_name, prop.name):
            return True
        if prop.ref and holds_password(prop.ref, _seen | {schema_name}):
            return True
    return False


# --- reading values ---------------------------------------------------------------------


class Reject(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.reason = f"{path}: {message}"


def json_type(value: Any) -> str:
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


def describe(value: Any, show: bool) -> str:
    """`string 'abc'`, `number 3`, `object`: what was found, quoting short scalars only."""
    kind = json_type(value)
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


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EXACT_INT = 2**53  # the largest integers a float64 holds exactly


class DateTimeOutOfRange(ValueError):
    """A date-time whose instant falls outside years 1-9999 in UTC (`0001-01-01T00:00:00+01:00`
    is in year 0): no timestamp column holds it for every reader (Python's datetime, so
    pyarrow's `to_pylist` and pandas' objects, stop at those years)."""


#: RFC 3339's leap second: `HH:MM:60` after a full date (`2016-12-31T23:59:60Z`).
_LEAP_SECOND = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}.[0-9]{2}:[0-9]{2}:(60)(?![0-9])")


def parse_datetime(text: str) -> datetime:
    """A date-time as both readers read it: ISO 8601, and UTC when it names no offset.

    A leap second (second 60, where RFC 3339 allows one: at 23:59 in UTC) is read as second
    59 of the same minute, fraction kept, as Java's `Instant.parse` reads it; the instant
    must fall in years 1-9999 in UTC. ValueError when it is not one (`DateTimeOutOfRange`
    for the years): the careful reader turns that into a reason.
    """
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = _leap_second(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        parsed.astimezone(UTC)
    except OverflowError:
        raise DateTimeOutOfRange(text) from None
    return parsed


def _leap_second(text: str) -> datetime:
    """A date-time with a leap second, read as second 59; ValueError for any other text, and
    for second 60 where no leap second can be (any minute but 23:59 in UTC)."""
    found = _LEAP_SECOND.match(text)
    if found is None:
        raise ValueError(f"not a date-time: {text!r}")
    at = found.start(1)
    parsed = datetime.fromisoformat(f"{text[:at]}59{text[at + 2 :]}")
    offset = parsed.utcoffset() or timedelta(0)
    minute_in_utc = (parsed.hour * 60 + parsed.minute - offset // timedelta(minutes=1)) % 1440
    if minute_in_utc != 23 * 60 + 59:
        raise ValueError(f"second 60 is a leap second only at 23:59 UTC: {text!r}")
    return parsed


def _wrong(value: Any, kind: str, path: str, show: bool) -> Reject:
    return Reject(path, f"expected {EXPECTED[kind]}, got {describe(value, show)}")


def _to_text(value: Any, kind: str, path: str, show: bool) -> Any:
    if type(value) is str:
        return value
    raise _wrong(value, kind, path, show)


def _to_number(value: Any, kind: str, path: str, show: bool) -> Any:
    if type(value) is float:
        return value
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            raise Reject(path, "number out of range") from None
    raise _wrong(value, kind, path, show)


def _to_datetime(value: Any, kind: str, path: str, show: bool) -> Any:
    if type(value) is str:
        try:
            return parse_datetime(value)
        except DateTimeOutOfRange:
            found = describe(value, show)
            raise Reject(path, f"date-time outside years 1-9999 in UTC, got {found}") from None
        except ValueError:
            pass
    raise _wrong(value, kind, path, show)


def _to_boolean(value: Any, kind: str, path: str, show: bool) -> Any:
    if type(value) is bool:
        return value
    raise _wrong(value, kind, path, show)


def _to_integer(value: Any, kind: str, path: str, show: bool) -> Any:
    t = type(value)
    if t is int and INT64_MIN <= value <= INT64_MAX:
        return value
    if t is float and value.is_integer() and INT64_MIN <= value <= INT64_MAX:
        return int(value)
    raise _wrong(value, kind, path, show)


_CONVERTERS: dict[str, Callable[[Any, str, str, bool], Any]] = {
    "string": _to_text,
    "uuid": _to_text,
    "number": _to_number,
    "datetime": _to_datetime,
    "boolean": _to_boolean,
    "integer": _to_integer,
}


def convert(value: Any, kind: str, path: str, show: bool) -> Any:
    """The column value for a non-null JSON scalar of `kind`, or Reject naming the field."""
    return _CONVERTERS[kind](value, kind, path, show)


# --- reading plans: one per object schema, compiled from the spec -----------------------

# Step operations. A step is a tuple (op, kind, index, nullable, extra). Scalars have one op
# per kind so that the common case (the right type) is a type test and a store, no call.
NUMBER = 0  # float64 column
TEXT = 1  # string or uuid column
BOOLEAN = 2
OTHER_SCALAR = 3  # datetime, integer: converted by convert
NESTED = 4  # an object ($ref): read into the same row; extra = its Plan
CALL = 5  # a routed part: extra(value, path, row)
PASSWORD = 6  # validate as string; store at index only when index is not None
JSON = 7  # validate the shape; store JSON text at index
CHECK = 8  # validate the shape; store nothing (handled by the table's own step)
#: The published service's spelling of a scalar (`redis_cpu` for `cache_cpu`): fills the
#: column its spec name left null; a different value beside it goes to the unknown fields.
#: extra = the spec's name. Planned after every property, so the spec's name is read first.
ORIGINAL = 9
SCALAR_OPS = {"number": NUMBER, "string": TEXT, "uuid": TEXT, "boolean": BOOLEAN}


@dataclass
class Plan:
    schema: str
    steps: dict[str, Step] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    #: Inside a secret-bearing object: reasons quote no values, unknown values are redacted.
    sensitive: bool = False
    #: read(obj, path, row, unknown): the compiled reader (see `_careful.py`).
    read: ReadFn = field(default=lambda *_: None, repr=False)


def check_shape(value: Any, prop: spec.Prop, must_object: bool, path: str, show: bool) -> None:
    """Validate an array (and its scalar or object items) or a free-form object."""
    if prop.kind == "array":
        if type(value) is not list:
            raise Reject(path, f"expected array, got {describe(value, show)}")
        if prop.items_kind in ARROW_TYPES:
            for i, item in enumerate(value):  # the spec's items are not nullable
                convert(item, prop.items_kind, f"{path}[{i}]", show)
        elif prop.items_kind == "object":
            for i, item in enumerate(value):
                if type(item) is not dict:
                    raise Reject(f"{path}[{i}]", f"expected object, got {describe(item, show)}")
                if prop.ref is not None:
                    check_object(item, prop.ref, f"{path}[{i}]", show)
    elif must_object and type(value) is not dict:
        raise Reject(path, f"expected object, got {describe(value, show)}")


def check_object(obj: dict[str, Any], schema_name: str, path: str, show: bool) -> None:
    """Validate an object stored as JSON text against its schema (it has no columns)."""
    for prop in spec.schema(schema_name).properties.values():
        value = obj.get(prop.name)
        if value is None:
            continue  # every property of these schemas is optional and nullable
        item_path = f"{path}.{prop.name}"
        if prop.kind in ARROW_TYPES:
            convert(value, prop.kind, item_path, show)
        elif prop.kind == "object" and prop.ref is not None:
            if type(value) is not dict:
                raise Reject(item_path, f"expected object, got {describe(value, show)}")
            check_object(value, prop.ref, item_path, show)
        else:
            check_shape(value, prop, prop.kind == "freeform", item_path, show)


#: Python type names of array items whose shape `shape_test` checks inline.
_ITEM_TYPES = {"string": "str", "uuid": "str", "boolean": "bool", "object": "dict"}


def shape_test(shape: tuple[spec.Prop, bool, bool]) -> str | None:
    """An expression true when `v` has the shape `check_shape` accepts (None: no shortcut).

    Only the common shapes are tested inline; a value that fails the test (or null) takes
    the careful path, which accepts it or rejects it with the reason.
    """
    prop, must_object, _hide = shape
    if prop.kind == "array":
        item = _ITEM_TYPES.get(prop.items_kind or "")
        if item is None:
            return None
        if prop.ref is not None:  # items with a schema: inline only for flat ones
            fields = _flat_fields_test(prop.ref)
            return None if fields is None else f"type(v) is list and all({fields} for x in v)"
        return f"type(v) is list and all(type(x) is {item} for x in v)"
    if must_object:
        return "type(v) is dict"
    return "v is not None"  # any JSON value


def _flat_fields_test(schema_name: str) -> str | None:
    """An expression true when `x` is an object `check_object` accepts for a schema whose
    properties are all text or boolean (volume mounts: a container may list many); None
    for other schemas. Every property of such schemas is optional and nullable."""
    tests = ["type(x) is dict"]
    for prop in spec.schema(schema_name).properties.values():
        item = _ITEM_TYPES.get(prop.kind)
        if item is None or item == "dict":
            return None
        got = f"x.get({prop.name!r})"
        tests.append(f"({got} is None or type({got}) is {item})")
    return " and ".join(tests)


# --- rules of the routed parts, written once for both readers ----------------------------


def label_text(value: Any, dump: Callable[[Any], str] = to_json_text) -> str | None:
    """A label's or annotation's value as the table stores it: itself when text or null,
    else JSON text (`dump`: the fast reader passes a stricter one that refuses what only
    the careful reader can store exactly)."""
    return value if type(value) is str or value is None else dump(value)


def volume_source(
    present: dict[str, Any], dump: Callable[[Any], str] = to_json_text
) -> tuple[str, str]:
    """A volume's (source_type, source_json) from the sources it names (one, usually)."""
    if len(present) == 1:
        ((kind, source),) = present.items()
        return kind, dump(source)
    return ",".join(present), dump(present)


Quantities = tuple[float | None, float | None, float | None, float | None]


def container_quantities(requests: dict[str, Any], limits: dict[str, Any]) -> Quantities:
    """A container's (cpu request, cpu limit, memory request, memory limit) in cores and MiB,
    from its Kubernetes quantities (`500m`, `256Mi`)."""
    found = (requests.get("cpu"), limits.get("cpu"), requests.get("memory"), limits.get("memory"))
    try:  # a fleet repeats a handful of combinations
        return _cached_quantities(*found)
    except TypeError:  # a value that is an object or an array: nothing to remember it by
        return _quantities(*found)


def _quantities(cpu: Any, cpu_limit: Any, memory: Any, memory_limit: Any) -> Quantities:
    """Each in its column's unit, None where unreadable (`_quantities.readable`)."""
    return (
        readable(cpu, "cpu"),
        readable(cpu_limit, "cpu"),
        readable(memory, "memory"),
        readable(memory_limit, "memory"),
    )


#: typed: 1, 1.0 and True are different quantities (True is none)
_cached_quantities = functools.lru_cache(maxsize=4096, typed=True)(_quantities)


# --- generated code --------------------------------------------------------------------

_generated = itertools.count(1)


def compile_function(source: list[str], label: str, namespace: dict[str, Any]) -> Any:
    """Compile generated source defining `read` in `namespace`, and return that function.

    The source is registered with `linecache` under a unique file name, so tracebacks,
    debuggers and profilers through generated code show the generated lines.
    """
    text = "\n".join(source) + "\n"
    filename = f"<dims generated: {label} #{next(_generated)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)
    return namespace.pop("read")
