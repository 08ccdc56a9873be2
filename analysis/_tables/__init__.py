"""Deployment, provider and repository records -> Arrow tables with explicit schemas.

Why this shape:
- Every column is derived from `dims._spec` (openapi.yaml): adding a scalar field to the
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
- Two readers, one result. The careful reader (dicts parsed by orjson, every field
  checked in Python, every reject with its reason) is the reference. Records that arrive as
  raw JSON text (`msgspec.Raw`, from `read_dump(raw=True)`) go first to the compiled lane
  (`_gathered`: msgspec Structs, derived from the same plans, read by `_gather.c` straight
  into Arrow buffers), which writes the same rows or gives the record back to the careful
  reader. Where `_gather.c` was not built, the careful reader reads them all, and the export
  says so once (`NotCompiledWarning`).

The package's inside, from the bottom up (each module imports only those above it; the
names users and the other layers need are exported here):
- `_quantities`: Kubernetes' resource quantities (`500m`, `256Mi`), parsed or refused with
  a reason (`parse_quantity`, `quantity_problem`), and the largest figure a cluster runs
  (`LARGEST_FIGURE`, `figure_problem`);
- `_rules`: spec facts, value conversion, reading plans and shape checks: what both readers
  apply, written once;
- `_arrays`: rows of typed values laid out as Arrow arrays, in C (`_columnar.c`, built at
  install by hatch_build.py), pyarrow converting what it is not sure of;
- `_careful`: the careful reader (plans compiled from the spec into Python);
- `_redaction`: secret values out of anything kept or shown;
- `_figures`: resource_spec figures no cluster runs made unreadable values, in one pass
  over a batch's deployments, whichever lane read them (`unreadable_figures`);
- `_layout`: every table's columns and plans (the dataset's schema, `TABLE_SCHEMAS`);
- `_rows`: the rows of every table and the record being read, shared by both readers;
- `_typed`: the msgspec Structs derived from the plans that raw records decode into, with
  the scan for unknown fields in C (`_unknownkeys.c`);
- `_gathered`: the compiled lane: those Structs read into Arrow buffers by `_gather.c`;
- `_lanes`: a batch's rows of both lanes (compiled, Python) put in record order once, at
  `take`, so that records the careful reader takes cost no flush of the compiled lane;
- `_flattener`: pages in, Arrow tables out (`Flattener`), and conveniences for notebooks;
- `_batches`: batches of pages read by worker processes, their tables back in order
  (`Batches`, for the orchestrator).

Documented choices (the spec is silent on them):
- A deployment without an `id` is rejected ("id: missing"): child tables need it.
- A field the published service names otherwise (`x-dims-original-name` in openapi.yaml:
  `redis_cpu` for `cache_cpu`) is read into the spec's column under either name. Sent
  under both with different values, the spec's name wins and the other value is kept in
  `unknown_fields_json` (counted: `OriginalNameConflictWarning`, the manifest).
- Timestamps without an offset are read as UTC. A leap second (`2016-12-31T23:59:60Z`, valid
  RFC 3339 where a leap second can be: at 23:59 in UTC, whatever the offset written) is
  read as second 59 of that minute, its fraction kept, as Java's `Instant.parse` reads it:
  no timestamp type of Arrow, Parquet, Python or Spark has a second 60, and the instant
  stays within its minute. Second 60 at any other minute is no date-time. An instant
  outside years 1-9999 in UTC (`0001-01-01T00:00:00+01:00` is in year 0) is refused
  ("date-time outside years 1-9999 in UTC"): Python's datetime, hence pyarrow's
  `to_pylist` and pandas' objects, cannot hold it. Every reader applies this rule
  (`_rules.parse_datetime`; the compiled lane's C reading of the common form alike).
- A container's resource quantity that Kubernetes' grammar refuses (`"١٢"`, `"２"`, `" 2 "`,
  `"1GB"`; `parse_quantity`) is a rejected value, not a rejected record: the
  container's row is kept, that quantity's column (`cpu_request`, ...) is null, never 0,
  its text stays in `resources_requests_json` / `resources_limits_json`, the export counts
  them (`UnreadableQuantityWarning`, the manifest's `unreadable_quantities`), and the
  capacity report lists each as an `unreadable_quantity` anomaly with its reason.
- A resource_spec figure no cluster runs (negative, or above 2^32: a request, limit, scale,
  DB storage or connection count, under either spelling) is an unreadable value, not a
  rejected record: null in its column, never 0, kept in `unreadable_values_json` by dotted
  path, counted (the manifest's `unreadable_values`, `UnreadableQuantityWarning`); so is a
  container quantity that is negative or above 2^32 cores or MiB (`_figures`).
- `secret_count` is null when the record has no `secrets` array (unknown, not zero).
- deployment_components: replicas of a component without scale fields, or whose scale is
  null, count as 1 (the assumption the capacity reports share); where the scale was sent
  unreadable they are null, and so is every total that depends on an unreadable figure.
- Unknown fields inside secret entries and env entries are kept by path with their value
  redacted, since they may hold secret material.
- Fields inside parts stored whole as JSON text (e.g. a container's volumeMounts) stay in
  that JSON text and are not repeated in `unknown_fields_json`.
- Paths in reasons and in `unknown_fields_json` are dotted with list positions in brackets:
  `source_config.resource_spec.sidecars[0].ports`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dims import _lazy

# older paths of three classes (their home is `dims._errors`, their door `analysis`)
from dims._errors import OriginalNameConflictWarning as OriginalNameConflictWarning
from dims._errors import RejectedRecordError as RejectedRecordError
from dims._errors import UnreadableQuantityWarning as UnreadableQuantityWarning
from dims._secrets import REDACTED as REDACTED

from ._quantities import problem as quantity_problem  # small, and _layout imports it anyway

# Imported on first use (dims._lazy): a reader that needs only the layout (`dims sql`, the
# table names and schemas) does not load the flattener and what it imports.
if TYPE_CHECKING:
    from ._batches import BATCH_RECORDS as BATCH_RECORDS
    from ._batches import Batches as Batches
    from ._batches import default_workers as default_workers
    from ._batches import read_batch as read_batch
    from ._batches import workers_after as workers_after
    from ._figures import UNREADABLE_VALUES_COLUMN as UNREADABLE_VALUES_COLUMN
    from ._figures import figure_paths as figure_paths
    from ._figures import unreadable_figures as unreadable_figures
    from ._flattener import Flattener as Flattener
    from ._flattener import deployments_dataframe as deployments_dataframe
    from ._flattener import flatten as flatten
    from ._flattener import flatten_providers as flatten_providers
    from ._flattener import flatten_repositories as flatten_repositories
    from ._flattener import to_dataframes as to_dataframes
    from ._flattener import to_pandas as to_pandas
    from ._layout import SCHEMA_VERSION as SCHEMA_VERSION
    from ._layout import SCHEMA_VERSION_KEY as SCHEMA_VERSION_KEY
    from ._layout import TABLE_NAMES as TABLE_NAMES
    from ._layout import TABLE_SCHEMAS as TABLE_SCHEMAS
    from ._layout import table_schemas as table_schemas
    from ._quantities import LARGEST_FIGURE as LARGEST_FIGURE
    from ._quantities import cpu_cores as cpu_cores
    from ._quantities import figure_problem as figure_problem
    from ._quantities import memory_mib as memory_mib
    from ._quantities import parse_quantity as parse_quantity
    from ._redaction import redact as redact
    from ._rules import TIMESTAMP as TIMESTAMP
    from ._rules import is_nullable as is_nullable
    from ._rules import is_password as is_password
    from ._rules import snake_case as snake_case
    from ._rules import to_json_text as to_json_text

__getattr__, __dir__, __all__ = _lazy.exports(__name__, globals())
__all__ += ["REDACTED", "quantity_problem"]  # imported above
