"""The unit that flows from a source (the service or a saved dump) into the tables.

It also holds the one rule for a deployment's type, because both the fetch (which counts
how each record got its type) and the tables (which write it) must apply the same rule:
the record's own `source_config.deployment_type` when it is a string (any value, types
newer than the spec included), else the type of the listing that returned the record,
else none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import spec

#: Where a record names its own type: `source_config.deployment_type` (openapi.yaml).
_OWN_TYPE_PATH = spec.own_type_path()


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
    value = record
    for key in _OWN_TYPE_PATH:
        if type(value) is not dict:
            return None
        value = value.get(key)
    return value if type(value) is str else None
