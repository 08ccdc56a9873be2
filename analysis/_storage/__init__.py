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
- `_workspaces`: a day as the union of its workspaces, and the one decision of which copy
  of a deployment it keeps (`dims._copies.rank`), made at publish;
- `_reader`: the snapshots read back (`read_table`, DuckDB views);
- `_catalog`: those views written to a DuckDB file for BI tools (`dims catalog`).

The names below are imported on first use (`dims._lazy`), so that writing a snapshot does not
load pandas and DuckDB, which only reading needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from ._catalog import Catalog as Catalog
    from ._catalog import store_filesystem as store_filesystem
    from ._catalog import write_catalog as write_catalog
    from ._reader import as_frame as as_frame
    from ._reader import duckdb_connection as duckdb_connection
    from ._reader import has_snapshot as has_snapshot
    from ._reader import history_counts as history_counts
    from ._reader import read_arrow as read_arrow
    from ._reader import read_table as read_table
    from ._reader import read_tables as read_tables
    from ._reader import resolve_date as resolve_date
    from ._reader import snapshot_dates as snapshot_dates
    from ._remote import Store as Store
    from ._remote import open_store as open_store
    from ._workspaces import headline as headline
    from ._writer import Counts as Counts
    from ._writer import Published as Published
    from ._writer import SnapshotWriter as SnapshotWriter
    from ._writer import check_writable as check_writable
    from ._writer import describe_replaced as describe_replaced
    from ._writer import open_snapshot as open_snapshot

__getattr__, __dir__, __all__ = _lazy.exports(__name__, globals())
