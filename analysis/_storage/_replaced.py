"""Rows already written that a later copy of the same deployment replaces.

A deployment that several workspaces list is exported once (`dims._fetch._copies`). The copy
that loses usually comes later and is never read; when the winning copy comes after the
other was passed on, it comes at the end, on a page flagged `Page.replaces`, and by then
the earlier copy's rows are in the work folder's files: in `deployments` (by `id`) and in
every child table (by `deployment_id`). `Replacement` rewrites every file row group by row
group without them, then appends the winners' rows batch by batch as they are read, so
memory holds one row group or one batch, never a table. Rows of tables without a deployment
column (rejected records, providers, repositories) are never removed: a copy already
rejected stays in rejected_records, as what the service sent.

`Replacement` is pushed to (`write` each batch's tables, then `close`): it never pulls a
source, so the writer's session hands it what the caller hands the session.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Mapping
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dims._tables import TABLE_NAMES

from . import paths

__all__ = ["Replacement"]

_ID = "id"
_DEPLOYMENT_ID = "deployment_id"
_TENANT = "tenant_id"
_SUFFIX = ".replacing"


class Replacement:
    """Every table of `day` in `tmp` rewritten without the rows of deployments `ids` (done
    when made: `removed` holds those rows' id and tenant_id, what the caller counted of
    them); then each `write`'s tables appended; `close` puts the new files in place and
    gives the rows per table, `abandon` leaves the old ones."""

    def __init__(self, tmp: Path, day: date, ids: Collection[str]) -> None:
        value_set = pa.array(sorted(ids), pa.string())
        self.files = {n: paths.partition_dir(tmp, n, day) / paths.PART_FILE for n in TABLE_NAMES}
        self.rows = dict.fromkeys(TABLE_NAMES, 0)
        self._writers: dict[str, pq.ParquetWriter] = {}
        removed: dict[str, pa.Table] = {}
        try:
            for name, path in self.files.items():
                schema = pq.read_schema(path)  # with the file's metadata (schema version, …)
                self._writers[name] = pq.ParquetWriter(
                    path.with_suffix(_SUFFIX), schema, compression="zstd"
                )
                key = _ID if name == "deployments" else _DEPLOYMENT_ID
                self.rows[name], removed[name] = _copy_without(
                    path, key, value_set, self._writers[name]
                )
        except BaseException:
            self.abandon()
            raise
        self.removed: pa.Table = removed["deployments"]

    def write(self, tables: Mapping[str, pa.Table]) -> None:
        """One batch of the winners' tables, appended to each table's file."""
        for name, table in tables.items():
            if table.num_rows:
                writer = self._writers[name]
                writer.write_table(table.replace_schema_metadata(writer.schema.metadata))
                self.rows[name] += table.num_rows

    def close(self) -> dict[str, int]:
        """Every new file finished and in place of the old one; rows per table."""
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        for path in self.files.values():
            path.with_suffix(_SUFFIX).replace(path)
        return dict(self.rows)

    def abandon(self) -> None:
        """After a failure: the new files dropped, the old ones as they were."""
        for writer in self._writers.values():
            with contextlib.suppress(Exception):
                writer.close()
        self._writers.clear()
        for path in self.files.values():
            path.with_suffix(_SUFFIX).unlink(missing_ok=True)


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
