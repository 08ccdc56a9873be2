"""`dims catalog`: one DuckDB database file of views over the dataset, for BI tools.

Superset, Metabase, Grafana's DuckDB source or Evidence open one file and see the dataset as
`dims sql` does: `<table>` the latest snapshot (counts right by default), `<table>_history`
every snapshot, `<table>_intervals` the validity intervals of deployments and components
(dims._storage._intervals), the report tables of the latest day when `dims report` wrote
them, and
`dims_catalog` (one row: which dataset, which day, when written). The file holds views only,
no data: each names the Parquet files by absolute path (a folder) or by `s3://` URI (object
storage), the files of the manifests' days only, so a BI tool reads the files themselves.

Why the views list files and do not glob: a glob would also read a half-written day or a
stranger's file; a list is what was whole when the catalog was written. Re-run `dims catalog`
after each export (the views then follow the new latest day); the file is written beside its
target and renamed over it, so a tool opening it sees the old catalog or the new one.

On object storage DuckDB reads the files through its httpfs extension with credentials the
BI tool supplies (`CREATE SECRET`): the file holds no key, token or secret, only the URIs and
the endpoint's settings as text in `dims_catalog.setup_sql`. Writing the views needs the
files' schemas, so dims reads their footers through its own store (pyarrow, the AWS_*
variables) lent to DuckDB for that while (not stored), since httpfs is downloaded at run
time and may not be available.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .._errors import DatasetError, first_line
from .._escape import sql_name, sql_text
from .._extras import require
from .._tables import TABLE_NAMES
from . import paths
from ._intervals import INTERVAL_KEYS, intervals_sql, intervals_view_name
from ._reader import (
    PathLike,
    duckdb_name,
    history_files,
    history_keys,
    latest_date,
    latest_files,
    parquet_view_sql,
    report_tables,
)
from ._remote import Store, open_store

#: The view that says what the catalog holds.
INFO_VIEW = "dims_catalog"


@dataclass(frozen=True)
class Catalog:
    """What `write_catalog` wrote: the file, the dataset, its latest day and the views."""

    file: Path
    dataset: str
    snapshot_date: date
    views: tuple[str, ...]


def write_catalog(out_dir: PathLike, file: PathLike) -> Catalog:
    """A DuckDB database at `file` holding only views over the dataset in `out_dir` (a
    folder or an object-store URI), written whole or not at all (a temporary file renamed
    over it). Raises DatasetError when the dataset has no snapshot or a file cannot be named,
    MissingExtraError without DuckDB (`dims[sql]`)."""
    require("sql", "dims.write_catalog")
    target = Path(file).absolute()
    if paths.is_remote(out_dir):
        store = open_store(str(out_dir))
        day = latest_date(store.uri)
        views = _remote_views(store, day)
        dataset = store.uri
    else:
        root = Path(out_dir).resolve()
        day = latest_date(root)
        views = _local_views(root, day)
        dataset = str(root)
        store = None
    views[INFO_VIEW] = _info_sql(dataset, day, store)
    _write(target, views, store)
    return Catalog(target, dataset, day, tuple(views))


def _unnameable(where: str) -> DatasetError:
    return DatasetError(
        f"{where}: DuckDB cannot name a file of this folder exactly (a backslash beside "
        "*, ? or [ in its path): move the dataset to a plainer path for a catalog"
    )


def _local_views(root: Path, day: date) -> dict[str, str]:
    """Each view's query: latest and history of every table present, then the reports."""
    views: dict[str, str] = {}
    for table in TABLE_NAMES:
        if paths.has_partition(root, table, day):
            files = latest_files(root, table, day)
            if files is None:
                raise _unnameable(str(root / table))
            if files:
                views[table] = parquet_view_sql(files)
        history = history_files(root, table)
        if history is None:
            raise _unnameable(str(root / table))
        if history:
            views[f"{table}_history"] = parquet_view_sql(history)
            if table in INTERVAL_KEYS:
                views[intervals_view_name(table)] = intervals_sql(table)
    for name, where in report_tables(root, day).items():
        named = duckdb_name(Path(where))
        if named is None:
            raise _unnameable(where)
        views.setdefault(name, _single_file_sql(named))
    return views


def _single_file_sql(where: str) -> str:
    return f"select * from read_parquet({sql_text(where)})"


def _remote_views(store: Store, day: date) -> dict[str, str]:
    """As `_local_views`, naming each object by its URI: the latest day's files as its
    manifest names them, the history of every day that has a manifest."""
    from ._remote_target import manifest_days, read_manifest

    manifest = read_manifest(store, day)
    latest = manifest.files if manifest is not None else {}
    partitions = {paths.partition_name(d) for d in manifest_days(store)}
    views: dict[str, str] = {}
    for table in TABLE_NAMES:
        if table in latest:
            views[table] = parquet_view_sql([store.uri_of(latest[table])])
        keys = history_keys(store, table, partitions)
        if keys:
            views[f"{table}_history"] = parquet_view_sql([store.uri_of(k) for k in keys])
            if table in INTERVAL_KEYS:
                views[intervals_view_name(table)] = intervals_sql(table)
    for name, key in report_tables(store.uri, day).items():
        views.setdefault(name, _single_file_sql(store.uri_of(key)))
    return views


def _info_sql(dataset: str, day: date, store: Store | None) -> str:
    """`dims_catalog`: the dataset, its day, when the catalog was written and, on object
    storage, the SQL a tool runs first (the secret's values left for it to fill in)."""
    setup = _setup_sql(store) if store is not None else ""
    written = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"select {sql_text(dataset)} as dataset, date {sql_text(day.isoformat())} as "
        f"snapshot_date, timestamptz {sql_text(written + '+00')} as written_at, "
        f"{sql_text(setup)} as setup_sql"
    )


def _setup_sql(store: Store) -> str:
    """What DuckDB needs to read the views' URIs: httpfs and a secret of the tool's own.
    Only the endpoint and region are filled in (from AWS_ENDPOINT_URL, AWS_REGION): neither
    is a credential."""
    options = ["TYPE s3", "KEY_ID '<access key id>'", "SECRET '<secret access key>'"]
    endpoint = os.environ.get("AWS_ENDPOINT_URL", "")
    if endpoint:
        host = endpoint.split("://", 1)[-1].rstrip("/")
        options.append(f"ENDPOINT {sql_text(host)}")
        options.append("URL_STYLE 'path'")
        options.append(f"USE_SSL {str(not endpoint.startswith('http://')).lower()}")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        options.append(f"REGION {sql_text(region)}")
    scheme = store.uri.split("://", 1)[0]
    return f"INSTALL httpfs; LOAD httpfs; CREATE SECRET dims_{scheme} ({', '.join(options)});"


def _write(target: Path, views: dict[str, str], store: Store | None) -> None:
    """The views into a new database beside `target`, then renamed over it."""
    import duckdb

    if not target.parent.is_dir():
        raise DatasetError(f"{target}: its folder does not exist: create it first")

    def write(temp: Path) -> None:
        temp.unlink()  # DuckDB makes the file itself (an empty file is no database)
        try:
            connection = duckdb.connect(str(temp))
            try:
                if store is not None:
                    connection.register_filesystem(store_filesystem(store))
                for view, query in views.items():
                    connection.execute(f"create view {sql_name(view)} as {query}")
                connection.execute("checkpoint")
            except duckdb.Error as exc:
                raise DatasetError(
                    f"cannot write the catalog {target}: {first_line(exc)}"
                ) from None
            finally:
                connection.close()
        finally:
            with contextlib.suppress(FileNotFoundError):
                Path(f"{temp}.wal").unlink()
        with contextlib.suppress(FileNotFoundError):
            # a stale log of the earlier file would be replayed into the new one
            Path(f"{target}.wal").unlink()

    write_atomic(target, write)


def store_filesystem(store: Store) -> Any:
    """`store`'s filesystem as DuckDB takes one from Python (fsspec), under the URI's
    scheme: DuckDB reads `s3://bucket/key` through dims's own credentials, in memory only.
    A BI tool can lend DuckDB the same (`connection.register_filesystem(...)`) instead of
    httpfs."""
    from fsspec.implementations.arrow import ArrowFSWrapper

    class _StoreFileSystem(ArrowFSWrapper):  # type: ignore[misc]
        protocol = store.uri.split("://", 1)[0]
        root_marker = ""

        @classmethod
        def _strip_protocol(cls, path: Any) -> Any:
            text = str(path)
            return text.split("://", 1)[1] if "://" in text else text

    return _StoreFileSystem(store.fs)
