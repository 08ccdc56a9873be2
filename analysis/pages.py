"""The unit that flows from a source (the service or a saved dump) into the tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Page:
    """A batch of raw deployment records, as parsed JSON, with where they came from.

    Records stay raw (dicts from orjson, or whatever JSON value the source held) so that
    flattening can validate each one and keep bad ones aside instead of failing the page.
    """

    records: list[Any]
    #: Where the records came from, for rejected_records.source: `page offset=40 type=prod`
    #: for the service, `dump.json[1200..1299]` style text for a file.
    source: str
    #: The deployment_type filter whose listing returned these records, if any.
    deployment_type: str | None = None
    #: Index of the first record within its source (page offset or position in a dump).
    first_index: int = 0
