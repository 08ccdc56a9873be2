"""The storage layer, the sink: the Parquet dataset in a folder or on object storage, written
from finished tables and read back.

Two modules are public, being the dataset's contracts that readers in any tool follow:
`paths` (where everything lives: `<table>/snapshot_date=<day>/part-0.parquet`, `_manifests/`,
`filtered/<slug>/`) and `manifest` (the manifest's type, read and written, and its JSON
Schema). The rest is inside, each module one job:
- `_writer`: one snapshot written whole or not at all (`open_snapshot`: a session handed
  finished tables), published through `_target` (the seam) by `_writer.LocalTarget` or
  `_remote_target.ObjectStoreTarget` (staged, committed, manifest-last; leases);
- `_remote`: a dataset root named by URI (`s3://bucket/prefix`) through `pyarrow.fs`;
- `_workspaces`: a day as the union of its workspaces; `_replaced`: rows of a deployment's
  copy that a later copy replaces, taken out of the work folder;
- `_reader`: the snapshots read back (`read_table`, DuckDB views);
- `_catalog`: those views written to a DuckDB file for BI tools (`dims catalog`).

The names below are imported on first use, so that writing a snapshot does not load
pandas and DuckDB, which only reading needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from ._catalog import Catalog, store_filesystem, write_catalog
    from ._reader import (
        as_frame,
        duckdb_connection,
        has_snapshot,
        history_counts,
        read_arrow,
        read_table,
        read_tables,
        resolve_date,
        snapshot_dates,
    )
    from ._remote import Store, open_store
    from ._workspaces import headline
    from ._writer import (
        Counts,
        Published,
        SnapshotWriter,
        check_writable,
        describe_replaced,
        open_snapshot,
    )

_HOMES = {
    # an older path of DatasetError (its home is `dims._errors`, its door `analysis`)
    "DatasetError": "..errors",
    "Catalog": "._catalog",
    "Counts": "._writer",
    "Published": "._writer",
    "SnapshotWriter": "._writer",
    "Store": "._remote",
    "as_frame": "._reader",
    "check_writable": "._writer",
    "describe_replaced": "._writer",
    "duckdb_connection": "._reader",
    "has_snapshot": "._reader",
    "headline": "._workspaces",
    "history_counts": "._reader",
    "open_snapshot": "._writer",
    "open_store": "._remote",
    "read_arrow": "._reader",
    "read_table": "._reader",
    "read_tables": "._reader",
    "resolve_date": "._reader",
    "snapshot_dates": "._reader",
    "store_filesystem": "._catalog",
    "write_catalog": "._catalog",
}

__all__ = [
    "Catalog",
    "Counts",
    "Published",
    "SnapshotWriter",
    "Store",
    "as_frame",
    "check_writable",
    "describe_replaced",
    "duckdb_connection",
    "has_snapshot",
    "headline",
    "history_counts",
    "open_snapshot",
    "open_store",
    "read_arrow",
    "read_table",
    "read_tables",
    "resolve_date",
    "snapshot_dates",
    "store_filesystem",
    "write_catalog",
]


__getattr__, __dir__ = _lazy.exports(__name__, globals(), _HOMES)
