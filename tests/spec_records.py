"""Deployment records drawn from openapi.yaml's schema, for every property test that needs them.

The schema is the one source of field names: `$ref`s are inlined from `spec.document()` and
the resolved schema is turned into a Hypothesis strategy (`from_spec_schema`), so a field added
to openapi.yaml is drawn here without touching this file. What the leaves are made of is a
`Values`:

- `PLAIN` (tests/tables/test_properties.py): any JSON of the right type, read back exactly;
- `HOSTILE` (the whole-CLI suite, the lanes' check): what a mock of the published service
  sends and the realistic sandbox fleet never does: numbers over the whole float range and
  integers past 64 bits and past float range, text with terminal control (ESC/CSI/OSC 52,
  CR, BEL, newlines), bidi controls, quotes and spreadsheet formula prefixes, free-form
  objects of any shape, the published service's spellings (`redis_cpu`,
  `langgraph_config_path`, from `x-dims-original-name`) and fields the spec does not name at
  every level. Its pieces of text and its numbers are those the sandbox's spec-records mode
  draws from (`dims.sandbox.HOSTILE_TEXT`, `EDGE_NUMBERS`...).

Every optional object may be absent or null (`fixed_dictionaries`' optional keys, and the
spec's `null` types), and `fleets()` draws lists of such records with unique ids, some sharing
names, namespaces and image versions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from dims import _spec as spec
from dims.sandbox import EDGE_INTEGERS, EDGE_NUMBERS, HOSTILE_TEXT, ORDINARY_NUMBERS

MAX_ITEMS = 2
MAX_FREEFORM_KEYS = 3
#: The extension naming a property's published spelling (spec.ORIGINAL_NAME_KEY).
ORIGINAL = spec.ORIGINAL_NAME_KEY


# --- the schema, resolved and bounded -------------------------------------------------------


def types_of(node: dict[str, Any]) -> set[str]:
    """The JSON types a resolved node allows (its `anyOf` options' included)."""
    kind = node.get("type")
    if kind is None and "anyOf" in node:
        return set().union(*(types_of(option) for option in node["anyOf"]))
    return set(kind) if isinstance(kind, list) else {kind} if kind else set()


def resolve(node: Any, schemas: dict[str, Any]) -> Any:
    """Inline every `$ref`, forbid unnamed properties, bound arrays and free-form objects."""
    if isinstance(node, list):
        return [resolve(item, schemas) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = schemas[node["$ref"].rsplit("/", 1)[-1]]
        return resolve({**target, **{k: v for k, v in node.items() if k != "$ref"}}, schemas)
    out = {key: resolve(value, schemas) for key, value in node.items()}
    if "anyOf" in out:  # the options carry their own bounds
        return out
    kinds = types_of(out)
    if "properties" in out:
        out.setdefault("additionalProperties", False)
    elif "object" in kinds:  # free-form (labels, securityContext, volume sources...)
        out["maxProperties"] = MAX_FREEFORM_KEYS
    if "array" in kinds:
        out["maxItems"] = MAX_ITEMS
    if "number" in kinds and "integer" not in kinds:
        out["type"] = sorted(kinds | {"integer"})  # a JSON number may be written 3 or 3.0
    return out


@functools.cache
def deployment_schema() -> dict[str, Any]:
    """The spec's Deployment, with `id` required and not null (the documented choice of
    dims._tables: child tables need it, so a record without one is rejected)."""
    schemas = spec.document()["components"]["schemas"]
    resolved = resolve(schemas["Deployment"], schemas)
    resolved["properties"]["id"] = {"type": "string", "format": "uuid"}
    resolved["required"] = ["id"]
    return resolved


def _fixed_offsets() -> st.SearchStrategy[timezone]:
    minutes = st.integers(-(23 * 60 + 59), 23 * 60 + 59)
    return st.one_of(st.just(UTC), minutes.map(lambda m: timezone(timedelta(minutes=m))))


def in_years_1_to_9999(moment: datetime) -> bool:
    """Whether an instant falls in years 1-9999 in UTC (naive: read as UTC), the date-times
    dims takes: no reader's datetime holds others (`0001-01-01T00:00:00+01:00`)."""
    try:
        moment.astimezone(UTC) if moment.tzinfo else moment
    except OverflowError:
        return False
    return True


@st.composite
def rfc3339(draw: st.DrawFn) -> str:
    """RFC 3339 date-times as services write them: any year, any offset, `Z` or `+hh:mm`,
    a space or `T`, with or without fractions of a second (up to microseconds); the
    instant in years 1-9999 in UTC."""
    moment = draw(st.datetimes(timezones=_fixed_offsets()).filter(in_years_1_to_9999))
    spec_ = draw(st.sampled_from(["seconds", "milliseconds", "microseconds", "auto"]))
    text = moment.isoformat(sep=draw(st.sampled_from("T ")), timespec=spec_)
    if moment.utcoffset() == timedelta(0) and draw(st.booleans()):
        text = text.removesuffix("+00:00") + "Z"
    return text


def any_json(text: st.SearchStrategy[str], integers: st.SearchStrategy[int]) -> st.SearchStrategy:
    """Any JSON value made of these strings and integers (free-form parts: labels,
    securityContext, fields the spec does not name)."""
    return st.recursive(
        st.none()
        | st.booleans()
        | integers
        | st.floats(allow_nan=False, allow_infinity=False)
        | text,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=8,
    )


#: Any JSON value, plain.
ANY_JSON = any_json(st.text(), st.integers())


# --- what the leaves are made of ------------------------------------------------------------


@dataclass(frozen=True)
class Values:
    """The strategies a drawn record's leaves come from, and what else it may carry."""

    text: st.SearchStrategy[str] = field(default_factory=st.text)
    #: A JSON `number` (the schema's number fields accept integers too: see `_resolve`).
    number: st.SearchStrategy[Any] = field(
        default_factory=lambda: st.floats(allow_nan=False, allow_infinity=False)
    )
    integer: st.SearchStrategy[int] = field(default_factory=st.integers)
    free_form: st.SearchStrategy[Any] = ANY_JSON
    free_form_key: st.SearchStrategy[str] = field(default_factory=st.text)
    #: Up to this many fields the spec does not name, added to every object with properties.
    unnamed: int = 0
    #: Whether a property with a published spelling may come under it (or under both).
    published_names: bool = False


PLAIN = Values()

#: Beyond the sandbox's numbers (EDGE_NUMBERS, EDGE_INTEGERS, shared with its spec-records
#: mode): an integer past float64's range, which no parser's float holds. `fleets` puts it in
#: rarely: a record holding one is rejected whole, with its reason.
BEYOND_FLOAT = 10**400


def _hostile_text() -> st.SearchStrategy[str]:
    piece = st.sampled_from(HOSTILE_TEXT) | st.text(max_size=3)
    return st.text() | st.lists(piece, min_size=1, max_size=4).map("".join)


def _hostile_values() -> Values:
    text = _hostile_text()
    integers = st.integers() | st.sampled_from(EDGE_INTEGERS)
    number = (
        st.sampled_from(ORDINARY_NUMBERS)
        | st.sampled_from(EDGE_NUMBERS)
        | st.floats(allow_nan=False, allow_infinity=False)
        | integers
    )
    return Values(
        text=text,
        number=number,
        integer=integers,
        free_form=any_json(text, integers),
        free_form_key=text,
        unnamed=2,
        published_names=True,
    )


HOSTILE = _hostile_values()


# --- the strategy ---------------------------------------------------------------------------


def from_spec_schema(node: dict[str, Any], values: Values = PLAIN) -> st.SearchStrategy[Any]:
    """Values valid by a resolved schema node (the subset of JSON Schema openapi.yaml uses),
    their leaves drawn from `values`.

    hypothesis-jsonschema's `from_schema` would do this, but its object strategy relies on
    Hypothesis internals that 6.170 changed (`'many' object has no attribute 'more'`).
    """
    if "anyOf" in node:
        return st.one_of([from_spec_schema(option, values) for option in node["anyOf"]])
    return st.one_of([_of_kind(kind, node, values) for kind in sorted(types_of(node)) or ["any"]])


def _of_kind(kind: str, node: dict[str, Any], values: Values) -> st.SearchStrategy[Any]:
    """Values of one of the node's types (`any`: any JSON)."""
    scalars: dict[str, st.SearchStrategy[Any]] = {
        "null": st.none(),
        "boolean": st.booleans(),
        "integer": values.integer,
        "number": values.number,
    }
    if kind in scalars:
        return scalars[kind]
    if kind == "string":
        formats = {"uuid": st.uuids().map(str), "date-time": rfc3339()}
        return formats.get(node.get("format"), values.text)
    if kind == "array":
        items = from_spec_schema(node.get("items", {}), values)
        return st.lists(items, max_size=node.get("maxItems", MAX_ITEMS))
    if kind == "object" and "properties" in node:
        return _object(node, values)
    if kind == "object":
        maximum = node.get("maxProperties", MAX_FREEFORM_KEYS)
        return st.dictionaries(values.free_form_key, values.free_form, max_size=maximum)
    return values.free_form


def _object(node: dict[str, Any], values: Values) -> st.SearchStrategy[dict[str, Any]]:
    """An object of the node's properties (the optional ones maybe absent), spelled as the
    published service may spell them, with fields the spec does not name."""
    properties = {k: from_spec_schema(v, values) for k, v in node["properties"].items()}
    required = set(node.get("required", ()))
    drawn = st.fixed_dictionaries(
        {k: v for k, v in properties.items() if k in required},
        optional={k: v for k, v in properties.items() if k not in required},
    )
    spellings = {k: v[ORIGINAL] for k, v in node["properties"].items() if ORIGINAL in v}
    if values.published_names and spellings:
        drawn = _spelled(drawn, spellings, properties)
    if not values.unnamed:
        return drawn
    named = set(node["properties"]) | set(spellings.values())
    keys = st.text(min_size=1, max_size=8) | values.text
    extras = st.dictionaries(
        keys.filter(lambda k: k not in named), values.free_form, max_size=values.unnamed
    )
    return st.tuples(extras, drawn).map(lambda pair: {**pair[0], **pair[1]})


@st.composite
def _spelled(
    draw: st.DrawFn,
    objects: st.SearchStrategy[dict[str, Any]],
    spellings: dict[str, str],
    properties: dict[str, st.SearchStrategy[Any]],
) -> dict[str, Any]:
    """Each field that has a published spelling under the spec's name, the published one, or
    both (the second with a value of its own: dims counts the conflict)."""
    out = dict(draw(objects))
    for name, original in spellings.items():
        if name not in out:
            continue
        how = draw(st.sampled_from(["spec", "published", "both"]))
        if how == "published":
            out[original] = out.pop(name)
        elif how == "both":
            out[original] = draw(properties[name])
    return out


@functools.cache
def spec_records(values: Values = PLAIN) -> st.SearchStrategy[dict[str, Any]]:
    """Deployment records the spec admits, and fields it does not name at the top level."""
    known = set(deployment_schema()["properties"])
    extra_keys = st.text(min_size=1, max_size=8).filter(lambda k: k not in known)
    extras = st.dictionaries(extra_keys, values.free_form, max_size=2)
    return st.tuples(from_spec_schema(deployment_schema(), values), extras).map(
        lambda pair: {**pair[1], **pair[0]}
    )


def valid_records() -> st.SearchStrategy[dict[str, Any]]:
    """Records valid by the spec, plain leaves (they read back exactly)."""
    return spec_records(PLAIN)


def hostile_records() -> st.SearchStrategy[dict[str, Any]]:
    """Records the spec admits, hostile leaves (see `HOSTILE`)."""
    return spec_records(HOSTILE)


def unique_ids(records: list[dict[str, Any]]) -> bool:
    return len({r["id"] for r in records}) == len(records)


# --- fleets ---------------------------------------------------------------------------------


def resource_spec_path() -> tuple[str, ...]:
    """Where a record's resource figures sit (`source_config.resource_spec`), from the spec."""
    cpu = spec.resource_numeric_fields()[0]
    return next(f.path[:-1] for f in spec.scalar_fields("Deployment") if f.name == cpu)


def schema_at(path: tuple[str, ...]) -> dict[str, Any]:
    """The resolved object schema at a path of nested objects (its non-null option)."""
    node = deployment_schema()
    for step in path:
        node = node["properties"][step]
        node = next((o for o in node.get("anyOf", ()) if "properties" in o), node)
    return node


def complete(resources: dict[str, Any], number: Callable[[], Any]) -> None:
    """Each component that sets a figure sets them all (`spec.component_measures`): one that
    lacks a request is unpriced whole, and drawn figures are rarely all there by chance."""
    for measures in spec.component_measures().values():
        fields = list(measures.values())
        if any(resources.get(f) is not None for f in fields):
            for name in fields:
                if resources.get(name) is None:
                    resources[name] = number()


def _nested(record: dict[str, Any], *path: str) -> dict[str, Any]:
    """The object at `path` in `record`, made (replacing a null) where it is missing."""
    target = record
    for step in path:
        if not isinstance(target.get(step), dict):
            target[step] = {}
        target = target[step]
    return target


@st.composite
def fleets(
    draw: st.DrawFn, min_size: int = 1, max_size: int = 5, values: Values = HOSTILE
) -> list[dict[str, Any]]:
    """A fleet the spec admits: records with unique ids, some sharing a name, a namespace or
    an image version (the places where names collide and groups form)."""
    records = draw(
        st.lists(
            spec_records(values),
            min_size=min_size,
            max_size=max_size,
            unique_by=lambda record: record["id"],
        )
    )
    shared = draw(st.lists(values.text, min_size=1, max_size=2))
    where = resource_spec_path()
    resources = from_spec_schema(schema_at(where), values)
    for record in records:
        if draw(st.integers(0, 3)) > 0:  # most carry resources: the figures priced
            drawn = _nested(record, *where[:-1])[where[-1]] = draw(resources)
            if draw(st.booleans()):
                complete(drawn, lambda: draw(values.number))
        if draw(st.integers(0, 19)) == 0:
            figure = draw(st.sampled_from(spec.resource_numeric_fields()))
            _nested(record, *where)[figure] = BEYOND_FLOAT
        if draw(st.integers(0, 3)) == 0:
            record["name"] = draw(st.sampled_from(shared))
        if draw(st.integers(0, 3)) == 0:
            record["image_version"] = draw(st.sampled_from([*shared, "0.10.1", "0.4.12"]))
        if draw(st.integers(0, 3)) == 0:
            listener = _nested(record, "source_config", "listener_config")
            listener["k8s_namespace"] = draw(st.sampled_from(shared))
    return records
