"""Rows already written that a later copy of the same deployment replaces.

A deployment that several workspaces list is exported once (`analysis.copies`). The copy
that loses usually comes later and is never read; when the winning copy comes after the
other was passed on, it comes at the end, on a page flagged `Page.replaces`, and by then
the earlier copy's rows are in the work folder's files: in `deployments` (by `id`) and in
every child table (by `deployment_id`). `replace_rows` rewrites every file row group by row
group without them, then appends the winners' rows batch by batch as they are read, so
memory holds one row group or one batch, never a table. Rows of tables without a deployment
column (rejected records, providers, repositories) are never removed: a copy already
rejected stays in rejected_records, as what the service sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from analysis.tables import TABLE_NAMES

from . import paths

__all__ = ["replace_rows"]

_ID = "id"
_DEPLOYMENT_ID = "deployment_id"
_TENANT = "tenant_id"


def replace_rows(
    tmp: Path, day: date, ids: Collection[str], late: Iterable[dict[str, pa.Table]]
) -> tuple[dict[str, int], pa.Table]:
    """Rewrite every table of `day` in `tmp` without the rows of deployments `ids`, then
    with the rows of each batch of `late` tables appended. Returns the rows per table after,
    and the deployments rows removed (id and tenant_id): what the caller counted of them."""
    value_set = pa.array(sorted(ids), pa.string())
    files = {name: paths.partition_dir(tmp, name, day) / paths.PART_FILE for name in TABLE_NAMES}
    rows = dict.fromkeys(TABLE_NAMES, 0)
    removed: dict[str, pa.Table] = {}
    with contextlib.ExitStack() as stack:
        writers = {}
        for name, path in files.items():
            schema = pq.read_schema(path)  # with the file's metadata (schema version, …)
            writers[name] = stack.enter_context(
                pq.ParquetWriter(path.with_suffix(".replacing"), schema, compression="zstd")
            )
            key = _ID if name == "deployments" else _DEPLOYMENT_ID
            rows[name], removed[name] = _copy_without(path, key, value_set, writers[name])
        for tables in late:
            for name, table in tables.items():
                if table.num_rows:
                    writer = writers[name]
                    writer.write_table(table.replace_schema_metadata(writer.schema.metadata))
                    rows[name] += table.num_rows
    for path in files.values():
        path.with_suffix(".replacing").replace(path)
    return rows, removed["deployments"]


def _copy_without(
    path: Path, key: str, ids: pa.Array, writer: pq.ParquetWriter
) -> tuple[int, pa.Table]:
    """`path`'s row groups into `writer` without the rows whose `key` is in `ids` (a table
    without that column: every row). Rows copied, and the removed rows' id and tenant_id."""
    copied, removed = 0, []
    with pq.ParquetFile(path) as source:
        has_key = key in source.schema_arrow.names
        for index in range(source.num_row_groups):
            group = source.read_row_group(index)
            if has_key:
                mask = pc.fill_null(pc.is_in(group[key], value_set=ids), False)
                removed.append(group.filter(mask).select([key, _TENANT]))
                group = group.filter(pc.invert(mask))
            if group.num_rows:
                writer.write_table(group)
                copied += group.num_rows
    empty = pa.table({_ID: pa.array([], pa.string()), _TENANT: pa.array([], pa.string())})
    gone = pa.concat_tables([t.rename_columns([_ID, _TENANT]) for t in removed] or [empty])
    return copied, gone
