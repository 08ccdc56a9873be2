"""Resource figures no cluster runs: read as unreadable values, never priced.

The published spec types every resource_spec figure (requests, limits, scale, DB storage and
connections) as a plain number, so a record may send `-2` cores or `1e300` MiB. No cluster
runs such a deployment, and priced as written it would make the fleet cheaper (a negative
figure) or a total infinite (a huge one). Such a figure is an *unreadable value*, as a
container quantity Kubernetes refuses is:

- a figure below zero, or above `LARGEST_FIGURE` (2^32, 4,294,967,296 cores, replicas, MiB,
  GiB or connections: beyond any cluster; `_quantities`, whose container quantities follow
  the same bound), is null in its column, never 0 (zero is a valid figure and stays one;
  `-0` reads as 0, so that no figure prints as `-0`);
- what it was is kept in the deployments column `unreadable_values_json`, a JSON object keyed
  by the field's dotted path in the spec (`source_config.resource_spec.cpu`; a value the
  service sent under its own name, `redis_cpu`, is keyed by the spec's, `cache_cpu`), the
  number as the record sent it (the value the parse kept, not its spelling: a whole number
  up to 2^53 as an integer, `-2.0` as `-2`);
- deployment_components' figures and derived totals that depend on it are null (a replica
  count too: an unreadable scale is not the one replica of an absent one);
- the export counts them (the manifest's `unreadable_values`, `UnreadableQuantityWarning`),
  and the reports treat the deployment as unpriced (`unreadable_quantity`).

Why 2^32 and not float64's 2^53 (where it stops counting whole units): a report sums counts
(replicas, connections) over every component of a fleet as whole numbers; at 2^32 apiece
seven components of 262,144 deployments still sum exactly, and 2^28 deployments stay within
int64, while a month of any figure at any rate a price sheet accepts stays finite (a rate
that would overflow a total is refused, naming the rate).

One vectorized pass over a batch's deployments table (`unreadable_figures`), after both
reading lanes (the careful reader and the compiled one) and before deployment_components
are derived, so neither lane needs to know the rule; the reports apply the same pass to days
written before it (schema 2), whose columns still hold such figures.
"""

from __future__ import annotations

import functools
import math

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from dims import _spec as spec

from ._arrays import column
from ._quantities import LARGEST_FIGURE

#: The deployments column holding each unreadable figure as sent, by dotted path.
UNREADABLE_VALUES_COLUMN = "unreadable_values_json"
#: Whole numbers up to this are written back as integers (float64 holds them exactly).
_EXACT = 2**53


@functools.cache
def figure_paths() -> dict[str, str]:
    """Each numeric resource_spec column -> its dotted path in the spec
    (`cpu` -> `source_config.resource_spec.cpu`)."""
    figures = set(spec.resource_numeric_fields())
    return {f.name: f.dotted for f in spec.deployment_scalar_fields() if f.name in figures}


def as_sent(value: float) -> int | float | str:
    """The number as the record sent it, for the JSON text: a whole number as an integer
    (exact up to 2^53), NaN and infinities as text (JSON has no such numbers)."""
    if not math.isfinite(value):
        return str(value)
    if value.is_integer() and abs(value) <= _EXACT:
        return int(value)
    return value


@functools.cache
def _scalars() -> tuple[pa.Scalar, pa.Scalar, pa.Scalar, pa.Scalar]:
    """0.0, LARGEST_FIGURE, a null float and False as Arrow scalars, made from an array: a
    Python value handed to pyarrow.compute would import pandas (an export never needs it)."""
    numbers = column([0.0, LARGEST_FIGURE, None], pa.float64())
    return numbers[0], numbers[1], numbers[2], column([False], pa.bool_())[0]


def _unreadable(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """True where a figure is set and outside 0..LARGEST_FIGURE (NaN included)."""
    zero, largest, _, false = _scalars()
    readable = pc.and_(pc.greater_equal(values, zero), pc.less_equal(values, largest))
    return pc.fill_null(pc.invert(readable), false)


def unreadable_figures(deployments: pa.Table) -> tuple[pa.Table, int]:
    """`deployments` with every resource figure no cluster runs null in its column and kept
    in `unreadable_values_json` (merged with what the column held), `-0` as 0; and how many
    such figures there were. A table without the column gets it (a day of schema 2)."""
    if UNREADABLE_VALUES_COLUMN not in deployments.column_names:
        deployments = _with_column(deployments, pa.nulls(deployments.num_rows, pa.string()))
    if not deployments.num_rows:
        return deployments, 0  # (a column of no chunks would make pyarrow import pandas)
    zero, _, null, _ = _scalars()
    sent: dict[str, dict[int, float]] = {}  # column -> {row: the value sent}
    for name in (c for c in figure_paths() if c in deployments.column_names):
        values = deployments[name]
        mask = _unreadable(values)
        if pc.any(mask).as_py():
            rows = pc.indices_nonzero(mask).to_pylist()
            sent[name] = dict(zip(rows, values.filter(mask).to_pylist(), strict=True))
            values = pc.if_else(mask, null, values)
        index = deployments.schema.get_field_index(name)
        deployments = deployments.set_column(index, name, pc.add(values, zero))  # -0 is 0
    if not sent:
        return deployments, 0
    index = deployments.schema.get_field_index(UNREADABLE_VALUES_COLUMN)
    texts = _merged_texts(deployments[UNREADABLE_VALUES_COLUMN].to_pylist(), sent)
    found = sum(len(rows) for rows in sent.values())
    return deployments.set_column(index, UNREADABLE_VALUES_COLUMN, texts), found


def _merged_texts(texts: list[str | None], sent: dict[str, dict[int, float]]) -> pa.Array:
    """The `unreadable_values_json` column with the figures `sent` added to each row's
    object, under their dotted paths."""
    paths = figure_paths()
    by_row: dict[int, dict[str, object]] = {}
    for name, values in sent.items():
        for row, value in values.items():
            by_row.setdefault(row, {})[paths[name]] = as_sent(value)
    for row, found in by_row.items():
        old = texts[row]
        texts[row] = orjson.dumps({**(orjson.loads(old) if old else {}), **found}).decode()
    return column(texts, pa.string())


def _with_column(deployments: pa.Table, texts: pa.Array) -> pa.Table:
    """`unreadable_values_json` put where the schema has it: just before snapshot_at."""
    at = deployments.schema.get_field_index("snapshot_at")
    at = deployments.num_columns if at < 0 else at
    return deployments.add_column(at, pa.field(UNREADABLE_VALUES_COLUMN, pa.string()), texts)


def unreadable_at(deployments: pa.Table, name: str) -> pa.Array:
    """True for each deployment whose figure of column `name` was unreadable (it is null in
    its column, and in `unreadable_values_json`)."""
    none = pc.is_valid(pa.nulls(deployments.num_rows, pa.float64()))
    if UNREADABLE_VALUES_COLUMN not in deployments.column_names:
        return none
    texts = deployments[UNREADABLE_VALUES_COLUMN]
    if texts.null_count == len(texts):  # none (and an empty table's column has no chunks)
        return none
    key = orjson.dumps(figure_paths()[name]).decode() + ":"  # a key: the quote delimits it
    found = pc.match_substring(texts, key)
    return pc.fill_null(found, _scalars()[3]).combine_chunks()
