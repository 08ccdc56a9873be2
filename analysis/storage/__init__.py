"""The storage layer: the Parquet dataset in a folder or on object storage, and saved dumps
read back.

- `paths`: where everything lives in a dataset folder (writer and readers agree on it);
- `writer`: one snapshot written whole or not at all (`open_snapshot`: a session handed
  finished tables), published through `target` (the seam) by `writer.LocalTarget` or
  `remote_target.ObjectStoreTarget`, with its typed `manifest`;
- `remote`: a dataset root named by URI (`s3://bucket/prefix`) through `pyarrow.fs`;
- `workspaces`: a day as the union of its workspaces; `replaced`: rows of a deployment's
  copy that a later copy replaces, taken out of the work folder;
- `reader`: the snapshots read back (`read_table`, DuckDB views);
- `dumps`: saved service output (`--from-json`) read as pages of records.

The names below are imported on first use, so that writing a snapshot does not load
pandas and DuckDB, which only reading needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from ..errors import DatasetError as DatasetError
    from .dumps import read_dump
    from .reader import duckdb_connection, read_arrow, read_table, snapshot_dates
    from .writer import SnapshotWriter, check_writable, open_snapshot

_HOMES = {
    "DatasetError": "..errors",  # importable from here as before; exported by analysis
    "SnapshotWriter": ".writer",
    "check_writable": ".writer",
    "duckdb_connection": ".reader",
    "open_snapshot": ".writer",
    "read_arrow": ".reader",
    "read_dump": ".dumps",
    "read_table": ".reader",
    "snapshot_dates": ".reader",
}

__all__ = [
    "SnapshotWriter",
    "check_writable",
    "duckdb_connection",
    "open_snapshot",
    "read_arrow",
    "read_dump",
    "read_table",
    "snapshot_dates",
]


__getattr__, __dir__ = exports(__name__, globals(), _HOMES)
