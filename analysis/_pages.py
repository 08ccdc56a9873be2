"""The unit that flows from a source (the service or a saved dump) into the tables.

It also holds what the fetch and the tables both need to know of a record, so that they
apply one rule:
- its type: the record's own `source_config.deployment_type` when it is a string (any
  value, types newer than the spec included), else the type of the listing that returned
  the record, else none;
- its keys (`keys_of`): id, own type and integration id, read from a parsed record or
  probed from raw JSON text without building the record; `id_and_tenant` reads only the
  id and the record's own tenant_id (the top level: cheaper), for the copies filter.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from . import _rawjson as rawjson
from . import _spec as spec

#: Where a record names its own type: `source_config.deployment_type` (openapi.yaml).
_OWN_TYPE_PATH = spec.own_type_path()
#: Where a record names the code-host integration it builds from.
_INTEGRATION_PATH = ("source_config", "integration_id")


@dataclass(frozen=True, slots=True)
class Page:
    """A batch of raw deployment records, as parsed JSON, with where they came from.

    Records stay raw (dicts from orjson, or whatever JSON value the source held) so that
    flattening can validate each one and keep bad ones aside instead of failing the page.
    """

    records: list[Any]
    #: Where the records came from, for rejected_records.source: `page offset=40` for the
    #: service, `dump.json[1200..1299]` style text for a file.
    source: str
    #: The deployment_type filter whose listing returned these records, if any.
    deployment_type: str | None = None
    #: Index of the first record within its source (page offset or position in a dump).
    first_index: int = 0
    #: deployment_type by record id, learnt from the per-type listings (shared, read-only).
    tags: Mapping[str, str] | None = None
    #: The workspace (`X-Tenant-Id`) the page was fetched from; None when none was sent.
    tenant_id: str | None = None

    def type_of(self, record: Any) -> str | None:
        """The record's deployment_type: its own when it names one, else the listings'."""
        own = own_type(record)
        if own is not None:
            return own
        return self.listed_type(record.get("id") if type(record) is dict else None)

    def listed_type(self, record_id: Any) -> str | None:
        """The type the service's listings give `record_id` (not the record's own)."""
        if self.deployment_type is not None:
            return self.deployment_type
        if self.tags is not None and type(record_id) is str:
            return self.tags.get(record_id)
        return None


def own_type(record: Any) -> str | None:
    """The record's own `source_config.deployment_type`, when it carries one as a string."""
    return _at(record, _OWN_TYPE_PATH)


def _at(record: Any, path: tuple[str, ...]) -> str | None:
    value = record
    for key in path:
        if type(value) is not dict:
            return None
        value = value.get(key)
    return value if type(value) is str else None


@dataclass(frozen=True, slots=True)
class RecordKeys:
    """What the fetch needs of a record: each a string, or None when the record lacks it."""

    id: str | None
    own_type: str | None
    integration_id: str | None


class _Probe:
    """Reads only some paths of raw JSON text: each level is a Struct whose other fields
    msgspec skips in C, and whose deeper objects stay raw until needed."""

    def __init__(self, paths: tuple[tuple[str, ...], ...], name: str = "Probe") -> None:
        children: dict[str, list[tuple[str, ...]]] = {}
        for path in paths:
            children.setdefault(path[0], []).append(path[1:])
        self.deeper = {
            key: _Probe(tuple(r for r in rests if r), f"{name}_{key}")
            for key, rests in children.items()
            if any(rests)
        }
        fields = [(key, msgspec.Raw if key in self.deeper else Any, None) for key in children]
        self.decode = msgspec.json.Decoder(msgspec.defstruct(name, fields, gc=False)).decode

    def read(self, raw: msgspec.Raw, paths: tuple[tuple[str, ...], ...]) -> list[Any]:
        """The value at each path (None where the text holds another shape or nothing),
        decoding each level once."""
        try:
            found = self.decode(raw)
        except msgspec.ValidationError:  # not an object here
            return [None] * len(paths)
        out: list[Any] = []
        for key, group in itertools.groupby(paths, key=lambda path: path[0]):
            rests = tuple(path[1:] for path in group)
            value = getattr(found, key)
            if not rests[0]:
                out.append(value)
            elif value is None:
                out += [None] * len(rests)
            else:
                out += self.deeper[key].read(value, rests)
        return out


#: Grouped by their first key (the probe reads each level once, in this order).
_PATHS = tuple(sorted({("id",), _OWN_TYPE_PATH, _INTEGRATION_PATH}))
_PROBE = _Probe(_PATHS)


def keys_of(record: Any) -> RecordKeys:
    """The id, own type and integration id of a parsed record or of raw JSON text."""
    if type(record) is msgspec.Raw:
        try:
            values = _PROBE.read(record, _PATHS)
        except msgspec.DecodeError:  # a value msgspec refuses (a lone surrogate): the rest
            values = _grammar_keys(record)  # of the record still names it
        found = dict(zip(_PATHS, (v if type(v) is str else None for v in values), strict=True))
    else:
        found = {path: _at(record, path) for path in _PATHS}
    return RecordKeys(found[("id",)], found[_OWN_TYPE_PATH], found[_INTEGRATION_PATH])


class _Owner(msgspec.Struct, gc=False):
    """The top level of a record as the copies filter reads it (other fields skipped in C)."""

    id: Any = None
    tenant_id: Any = None


_OWNER_DECODE = msgspec.json.Decoder(_Owner).decode


def id_and_tenant(record: Any) -> tuple[str | None, str | None]:
    """The id and own tenant_id of a parsed record or of raw JSON text (each a string, or
    None): what deciding between two workspaces' copies of a deployment needs."""
    if type(record) is msgspec.Raw:
        try:
            found = _OWNER_DECODE(record)
        except msgspec.DecodeError:  # not an object, or text only a full parse refuses
            return None, None
        record_id, tenant = found.id, found.tenant_id
    elif type(record) is dict:
        record_id, tenant = record.get("id"), record.get("tenant_id")
    else:
        return None, None
    return (
        record_id if type(record_id) is str else None,
        tenant if type(tenant) is str else None,
    )


def _grammar_keys(record: msgspec.Raw) -> list[Any]:
    """The keys of a raw record msgspec refuses, read by the grammar alone; a key that is
    not Unicode text is none (the tables reject the record either way)."""
    try:
        parsed = rawjson.grammar_loads(record)
    except ValueError:
        return [None] * len(_PATHS)
    values = (_at(parsed, path) for path in _PATHS)
    return [v if v is not None and rawjson.is_text(v) else None for v in values]
