"""The storage layer: the Parquet dataset on disk, and saved dumps read back.

- `paths`: where everything lives in a dataset folder (writer and readers agree on it);
- `writer`: one snapshot written whole or not at all (`export_snapshot`);
- `reader`: the snapshots read back (`read_table`, DuckDB views);
- `dumps`: saved service output (`--from-json`) read as pages of records.
"""

from __future__ import annotations

from .dumps import read_dump
from .reader import DatasetError, duckdb_connection, read_arrow, read_table, snapshot_dates
from .writer import ExportResult, check_writable, export_snapshot

__all__ = [
    "DatasetError",
    "ExportResult",
    "check_writable",
    "duckdb_connection",
    "export_snapshot",
    "read_arrow",
    "read_dump",
    "read_table",
    "snapshot_dates",
]
