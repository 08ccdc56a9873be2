"""Reading the Parquet dataset back: which snapshots exist, one table of one snapshot, and
DuckDB views that are right by default (the latest snapshot unless you ask for history).

The layout is `DIR/<table>/snapshot_date=YYYY-MM-DD/part-<n>.parquet` (dims._storage.paths; the
writer is dims._storage._writer). Readers look only in `snapshot_date=*` folders, so the writer's
work folders, manifests and replaced versions are never seen. Reports, `dims diff`,
`dims sql` and the notebooks read through here.

Why files are read the way they are: a re-export of a day swaps each file in place
(`os.replace`), so every file is opened once (a native Arrow file, no Python callbacks) and
its footer and data are read through that one handle: both come from the same version,
never one from each (a reader that opens a path again for the data can mix them). A file that is not
Parquet, or Parquet that dims did not write, is a one-line DatasetError naming it.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import warnings
from collections.abc import Collection, Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _tables
from .._errors import DatasetError as DatasetError
from .._errors import NameCollisionWarning, first_line, one_line
from .._escape import sql_name, sql_text
from .._extras import require
from . import paths
from ._intervals import INTERVAL_KEYS, intervals_sql, intervals_view_name
from ._remote import Store, open_store

if TYPE_CHECKING:
    import duckdb
    import pandas as pd  # only the DataFrame readers need it: `dims sql` never imports it
    import pyarrow as pa  # imported where used: `dims sql "select 1"` needs no Arrow
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

PARTITION = paths.PARTITION
_EXPORT_ID = paths.EXPORT_ID_KEY
#: Times a read starts over when a re-export moved a file between listing and opening it.
_ATTEMPTS = 3
#: Times read_tables reads again when its tables came from different exports.
_CONSISTENT_ATTEMPTS = 12
#: What DuckDB's read_parquet takes for a glob in a path.
_DUCKDB_GLOB = re.compile(r"([*?\[])")

PathLike = str | os.PathLike[str]


def snapshot_dates(out_dir: PathLike, table: str = "deployments") -> list[date]:
    """The snapshot dates present for `table`, oldest first.

    On object storage, the days that have a manifest (every table of such a day was
    published before its manifest); objects of other days are not a snapshot yet.
    """
    if paths.is_remote(out_dir):
        from ._remote_target import manifest_days

        return manifest_days(open_store(str(out_dir)))
    return paths.partition_days(out_dir, table)


def has_snapshot(out_dir: PathLike, table: str, day: date) -> bool:
    """Does the dataset hold `table` for `day`? In a folder, only that day is looked at."""
    if paths.is_remote(out_dir):
        return day in snapshot_dates(out_dir, table)
    return paths.has_partition(out_dir, table, day)


def resolve_date(
    out_dir: PathLike, snapshot_date: date | str | None, table: str = "deployments"
) -> date:
    """`snapshot_date` checked against the dataset, or the latest one when None.

    In a folder, only that day's folder (or the newest ones) is looked into: the cost of
    finding one snapshot does not grow with the number of snapshots kept. (On object storage
    one listing of the manifests says which days are whole.)
    """
    if snapshot_date is None:
        if paths.is_remote(out_dir):
            dates = snapshot_dates(out_dir, table)
            latest = dates[-1] if dates else None
        else:
            latest = paths.latest_partition_day(out_dir, table)
        if latest is None:
            raise _no_snapshot(out_dir, table)
        return latest
    day = date.fromisoformat(snapshot_date) if isinstance(snapshot_date, str) else snapshot_date
    if has_snapshot(out_dir, table, day):
        return day
    dates = snapshot_dates(out_dir, table)
    if not dates:
        raise _no_snapshot(out_dir, table)
    listed = ", ".join(d.isoformat() for d in dates)
    raise DatasetError(f"no {table} snapshot dated {day} in {out_dir}; there are: {listed}")


def _no_snapshot(out_dir: PathLike, table: str) -> DatasetError:
    return DatasetError(
        f"no snapshot of {table} in {out_dir}: run `dims export` (or `dims demo`) first"
    )


def latest_date(out_dir: PathLike) -> date:
    """The date of the latest snapshot (the latest `deployments` partition)."""
    return resolve_date(out_dir, None)


def partition_dir(out_dir: PathLike, table: str, day: date) -> Path:
    return paths.partition_dir(out_dir, table, day)


def read_arrow(
    out_dir: PathLike,
    table: str,
    snapshot_date: date | str | None = None,
    columns: list[str] | None = None,
    where: pc.Expression | None = None,
) -> pa.Table:
    """One table of one snapshot (the latest when no date is given) as an Arrow table.

    Columns a file lacks (a dataset written by an older schema) come back as nulls, so
    readers degrade instead of failing. `where` keeps only the rows it holds for, read with
    predicate pushdown (row groups whose statistics rule it out are skipped): one
    deployment's rows without decoding the fleet's.
    """
    import pyarrow as pa

    day = resolve_date(out_dir, snapshot_date, table)
    if paths.is_remote(out_dir):
        read = _read_remote(open_store(str(out_dir)), table, day, columns, where)
    else:
        read = _read_local(Path(out_dir), table, day, columns, where)
    if not read:
        raise DatasetError(f"no {table} files for {day} in {out_dir}: is an export replacing it?")
    result = pa.concat_tables([part for part, _ in read], promote_options="permissive")
    schema = _tables.TABLE_SCHEMAS.get(table)
    wanted = columns if columns is not None else (schema.names if schema is not None else [])
    for column in wanted:
        if column not in result.column_names:
            kind = schema.field(column).type if schema and column in schema.names else pa.null()
            result = result.append_column(column, pa.nulls(result.num_rows, kind))
    made_by = b",".join(sorted({made_by for _, made_by in read}))  # one id, unless mixed
    return result.replace_schema_metadata({**(result.schema.metadata or {}), _EXPORT_ID: made_by})


def _read_local(
    out_dir: Path, table: str, day: date, columns: list[str] | None, where: pc.Expression | None
) -> list[tuple[pa.Table, bytes]]:
    """The day's part files of `table` in a folder; started over when a re-export moved one."""
    for attempt in range(_ATTEMPTS):
        files = sorted(partition_dir(out_dir, table, day).glob("*.parquet"))
        try:
            return [_read_file(path, columns, where) for path in files]
        except FileNotFoundError as exc:
            if attempt + 1 == _ATTEMPTS:
                raise DatasetError(
                    f"{exc.filename} vanished while it was read, {_ATTEMPTS} times: "
                    "is an export replacing that day? Try again when it is done"
                ) from None
    return []


def _read_remote(
    store: Store, table: str, day: date, columns: list[str] | None, where: pc.Expression | None
) -> list[tuple[pa.Table, bytes]]:
    """The file the day's manifest names for `table`, written by the manifest's export.

    A file from another export, or one that does not parse, means the day is being replaced
    right now (its objects are overwritten one by one before the new manifest is written):
    read again, then give up with one line rather than return a mix of two versions.
    """
    from ._remote_target import read_manifest

    failure: DatasetError | None = None
    for attempt in range(_CONSISTENT_ATTEMPTS):
        time.sleep(0.05 * attempt)
        manifest = read_manifest(store, day)
        key = manifest.files.get(table) if manifest is not None else None
        if manifest is None or key is None:
            return []
        try:
            read = _read_object(store, key, columns, where)
        except DatasetError as exc:
            failure = exc  # read while it was overwritten, or really not Parquet
            continue
        if read[1] == manifest.export_id.encode():
            return [read]
        failure = None
    raise failure or DatasetError(
        f"the {day} snapshot in {store.uri} is being replaced ({table}'s file is not the one "
        "its manifest names): try again when the export is done; if none is running, an "
        "export stopped mid-publish and the next export finishes it"
    )


def _read_object(
    store: Store, key: str, columns: list[str] | None, where: pc.Expression | None
) -> tuple[pa.Table, bytes]:
    """One object read whole with one GET, then parsed: footer and data from one version.

    (Ranged reads, as a seekable S3 file makes them, may take the footer from one version
    and the pages from the next when the object is overwritten in between.)
    """
    import pyarrow as pa

    data = store.read_bytes(key)
    if data is None:
        raise DatasetError(f"{store.uri_of(key)} is missing: is an export replacing that day?")
    with _bad_file_is_one_line(store.uri_of(key)):
        return _read_parquet(pa.BufferReader(data), store.uri_of(key), columns, where)


def export_id(table: pa.Table) -> str:
    """Which export wrote a table read_arrow returned (empty for files older than ids)."""
    return ((table.schema.metadata or {}).get(_EXPORT_ID) or b"").decode()


def read_tables(
    out_dir: PathLike,
    tables: Mapping[str, list[str] | None],
    snapshot_date: date | str | None = None,
    where: Mapping[str, pc.Expression] | None = None,
) -> dict[str, pa.Table]:
    """Several tables of one snapshot (table -> columns, None for all), all written by the same
    export: read again when a re-export of that day replaced some between two reads.

    Tables the snapshot lacks are left out of the result; `where` (table -> a row filter,
    as `read_arrow`'s) keeps only some rows of a table.
    """
    day = resolve_date(out_dir, snapshot_date)
    for attempt in range(_CONSISTENT_ATTEMPTS):
        time.sleep(0.01 * attempt)  # a publish takes milliseconds: let it finish
        found = {
            name: read_arrow(out_dir, name, day, columns, (where or {}).get(name))
            for name, columns in tables.items()
            if has_snapshot(out_dir, name, day)
        }
        if len({export_id(table) for table in found.values()}) <= 1:
            return found
    raise DatasetError(
        f"the {day} snapshot in {out_dir} was replaced {_CONSISTENT_ATTEMPTS} times while it "
        "was read (or its tables come from different exports): "
        "try again when the export is done"
    )


def _read_file(
    path: Path, columns: list[str] | None, where: pc.Expression | None = None
) -> tuple[pa.Table, bytes]:
    """One part file, read through one handle, and the id of the export that wrote it.

    A file dims did not write is a DatasetError.
    """
    import pyarrow as pa

    with _bad_file_is_one_line(path), pa.OSFile(str(path)) as handle:
        return _read_parquet(handle, path, columns, where)


def _read_parquet(
    handle: pa.NativeFile,
    name: Path | str,
    columns: list[str] | None,
    where: pc.Expression | None = None,
) -> tuple[pa.Table, bytes]:
    import pyarrow.parquet as pq

    parquet = _dims_parquet(pq.ParquetFile(handle), name)
    names = parquet.schema_arrow.names
    wanted = None if columns is None else [c for c in columns if c in names]
    if where is None:
        table = parquet.read(columns=wanted)
    else:
        import pyarrow.dataset as ds

        fragment = ds.ParquetFileFormat().make_fragment(handle)
        table = fragment.to_table(schema=parquet.schema_arrow, columns=wanted, filter=where)
        table = table.replace_schema_metadata(parquet.schema_arrow.metadata)
    return table, (parquet.schema_arrow.metadata or {}).get(_EXPORT_ID, b"")


def check_part_file(path: Path) -> None:
    """Raise DatasetError (one line, naming `path`) unless it is a Parquet file dims wrote."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with _bad_file_is_one_line(path), pa.OSFile(str(path)) as handle:
        _dims_parquet(pq.ParquetFile(handle), path)


def _dims_parquet(parquet: pq.ParquetFile, path: Path | str) -> pq.ParquetFile:
    if _tables.SCHEMA_VERSION_KEY not in (parquet.schema_arrow.metadata or {}):
        raise DatasetError(
            f"{path} is not part of a dims snapshot (its Parquet metadata has no "
            f"{_tables.SCHEMA_VERSION_KEY.decode()}): move it out of the dataset folder"
        )
    return parquet


@contextlib.contextmanager
def _bad_file_is_one_line(path: Path | str) -> Iterator[None]:
    """Arrow's and the OS's errors about `path` as one DatasetError line (a vanished file is
    left alone: the caller starts over)."""
    import pyarrow as pa

    try:
        yield
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException) as exc:
        reason = one_line(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 160)
        raise DatasetError(
            f"cannot read {path}: {reason}; it is not a Parquet file of a dims snapshot: "
            "move it out of the dataset folder, or export that day again"
        ) from None


def read_table(
    out_dir: PathLike,
    table: str,
    snapshot_date: date | str | None = None,
    columns: list[str] | None = None,
) -> pd.DataFrame:
    """One table of one snapshot as a DataFrame, with its `snapshot_date` (ISO text).

    With no date, the latest snapshot: `read_table("dims-data", "deployments")` is the fleet
    as it is now, each deployment once.
    """
    day = resolve_date(out_dir, snapshot_date, table)
    return as_frame(read_arrow(out_dir, table, day, columns), day)


def as_frame(table: pa.Table, day: date) -> pd.DataFrame:
    """An Arrow table of the dataset as a DataFrame: nullable integer and boolean columns,
    and its `snapshot_date` as ISO text."""
    frame = _tables.to_pandas(table)
    frame[PARTITION] = day.isoformat()
    return frame


def duckdb_connection(
    out_dir: PathLike, views: Collection[str] | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with two views per table of the dataset in `out_dir`.

    `<table>` (e.g. `deployments`) holds the latest snapshot only, so counts are right by
    default; `<table>_history` holds every snapshot. Both carry `snapshot_date` (a DATE).
    The latest snapshot is the latest `deployments` partition, the same for every table;
    its files are checked to be dims's (a stranger's file is a DatasetError naming it).
    `views` (names, any case) limits the views made to those (None, or names none of which
    is a view, as `show tables` or `information_schema.tables` name: all of them; empty:
    none, for a query that reads no table, `select 1`: no history is registered, and so
    DuckDB, which imports pandas to scan any Python object, imports none; nor is pyarrow
    imported, nor the report tables' folder listed).

    The report tables of that day (`capacity_summary`, `cost_by_deployment`, …: the files
    `dims report` wrote to `reports/snapshot_date=<day>/` at the default prices) are views too,
    under their file names, when they exist (and a dataset table of the same name wins).

    Why the cost does not grow with the history: a `<table>` view reads only the latest
    day's files. A `<table>_history` view is a lazy Arrow dataset with the table's own
    schema (no file is opened until a query scans it; files of an older schema read their
    missing columns as nulls), not a DuckDB glob, which would read every day's footer when
    the view is made.

    On object storage the views are Arrow datasets (read through `pyarrow.fs`) registered
    with DuckDB: DuckDB's own S3 reader is its httpfs extension, which is downloaded at run
    time and so is not available offline; Arrow's is native and needs nothing more.
    Only the files the manifests name are in the views. DuckDB is the `sql` extra
    (`pip install 'dims[sql]'`); without it this raises MissingExtraError.
    """
    require("sql", "dims.duckdb_connection")
    import duckdb

    day = latest_date(out_dir)
    wanted = None if views is None else {name.lower() for name in views}
    if wanted == set():  # a query that reads no table: no view, and so no Arrow imported
        return duckdb.connect()
    reports = report_tables(out_dir, day)
    if wanted and not wanted & _view_names(reports):
        wanted = None  # the query names no view (`show tables`): it asks what there is
    connection = duckdb.connect()
    try:
        if paths.is_remote(out_dir):
            _register_remote(connection, open_store(str(out_dir)), day, wanted)
        else:
            _create_local_views(connection, Path(out_dir), day, wanted)
        _register_reports(connection, out_dir, reports, wanted)
    except BaseException as exc:
        connection.close()
        if not isinstance(exc, duckdb.Error):
            raise
        raise DatasetError(f"cannot read the dataset in {out_dir}: {first_line(exc)}") from None
    return connection


#: Where `dims report` writes a day's report tables (at the default prices), from the root.
REPORTS = "reports"


def _view_names(reports: Mapping[str, str]) -> set[str]:
    """Every view a connection can have: each table, its history, each report table."""
    return {name.lower() for name in (*_dataset_views(), *reports)}


def report_tables(out_dir: PathLike, day: date) -> dict[str, str]:
    """The report tables of `day` (name -> the file's path or its object key), those
    `dims report` wrote at the default prices; none when it did not run that day.

    Each is a view under its file's name, so no two may be one name as DuckDB compares
    names (ignoring case), nor a dataset table's or its history's: a file whose name is
    taken (`Deployments.parquet`, or `cost_by_label_team` beside `cost_by_label_Team` from
    an earlier run) is left out with a `NameCollisionWarning` naming it, and the dataset's
    table, or the first in name order, keeps the name."""
    folder = paths.join(out_dir, REPORTS, paths.partition_name(day))
    if isinstance(folder, Path):
        found = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        named = [(f.stem, str(f)) for f in found]
    else:
        prefix = f"{REPORTS}/{paths.partition_name(day)}"
        keys = [i.path for i in open_store(str(out_dir)).files(prefix)]
        named = [(k.rsplit("/", 1)[-1][: -len(".parquet")], k) for k in sorted(keys)]
        named = [(name, key) for name, key in named if key.endswith(".parquet")]
    taken = {name.casefold(): name for name in _dataset_views()}
    tables: dict[str, str] = {}
    for name, where in named:
        if name.casefold() in taken:
            warnings.warn(NameCollisionWarning(_taken(where, taken[name.casefold()])), stacklevel=2)
            continue
        taken[name.casefold()] = name
        tables[name] = where
    return tables


def _dataset_views() -> list[str]:
    return [
        *_tables.TABLE_NAMES,
        *(f"{t}_history" for t in _tables.TABLE_NAMES),
        *(intervals_view_name(t) for t in _tables.TABLE_NAMES if t in INTERVAL_KEYS),
    ]


def _create_intervals(
    connection: duckdb.DuckDBPyConnection, table: str, wanted: set[str] | None
) -> None:
    """`<table>_intervals` over the history view just registered (dims._storage._intervals)."""
    if table in INTERVAL_KEYS and (wanted is None or intervals_view_name(table) in wanted):
        view = sql_name(intervals_view_name(table))
        connection.execute(f"create view {view} as {intervals_sql(table)}")


def _taken(where: str, other: str) -> str:
    return (
        f"{where}: not a view: its name is that of the view {other} (names ignore case); "
        f"read it with read_parquet({sql_text(where)}), or rename the file"
    )


def _register_reports(
    connection: duckdb.DuckDBPyConnection,
    out_dir: PathLike,
    reports: Mapping[str, str],
    wanted: set[str] | None,
) -> None:
    """The day's report tables as views. In a folder, DuckDB's own reader over the file (its
    footer checked now), as `dims catalog` makes them: a Python object given to DuckDB makes
    it import pandas, which `dims sql` otherwise never needs. On object storage, read now
    (each is one small file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = open_store(str(out_dir)) if paths.is_remote(out_dir) else None
    for name, where in reports.items():
        if wanted is not None and name.lower() not in wanted:
            continue
        named = _duckdb_file(Path(where)) if store is None else None
        if named is not None:
            with _bad_file_is_one_line(where), pa.OSFile(where) as handle:
                pq.ParquetFile(handle)
            connection.execute(
                f"create view {sql_name(name)} as select * from read_parquet({sql_text(named)})"
            )
            continue
        data = store.read_bytes(where) if store is not None else None
        source: Any = pa.BufferReader(data) if data is not None else where
        with _bad_file_is_one_line(where):
            connection.register(name, pq.read_table(source))


def _create_local_views(
    connection: duckdb.DuckDBPyConnection, out_dir: Path, day: date, wanted: set[str] | None
) -> None:
    for table in _tables.TABLE_NAMES:
        if paths.has_partition(out_dir, table, day) and (wanted is None or table in wanted):
            named = latest_files(out_dir, table, day)
            if named is not None:
                _create_view(connection, table, named)
            else:  # a name DuckDB cannot read exactly: the day's rows, read now
                _register_day(connection, table, read_arrow(out_dir, table, day), day)
        history = f"{table}_history"
        intervals = intervals_view_name(table) if table in INTERVAL_KEYS else None
        if wanted is None or history in wanted or intervals in wanted:
            dataset = _history_dataset(out_dir, table)
            if dataset is not None:
                connection.register(history, dataset)
                _create_intervals(connection, table, wanted)


def latest_files(out_dir: Path, table: str, day: date) -> list[str] | None:
    """The day's part files of `table` in a folder, each checked to be dims's (a stranger's
    file is a DatasetError naming it), as DuckDB's `read_parquet` names exactly those files;
    None where a name cannot be given to DuckDB (`_duckdb_file`). `dims sql`'s `<table>`
    views and `dims catalog`'s read these."""
    files = sorted(partition_dir(out_dir, table, day).glob("*.parquet"))
    for path in files:
        check_part_file(path)
    named = [_duckdb_file(path) for path in files]
    return [name for name in named if name] if all(named) else None


def history_files(out_dir: Path, table: str) -> list[str] | None:
    """Every day's part files of `table` in a folder as DuckDB names them (see
    `latest_files`; not opened here: a history may hold thousands)."""
    named = [_duckdb_file(Path(f)) for f in _history_files(Path(out_dir) / table)]
    return [name for name in named if name] if all(named) else None


def parquet_view_sql(files: list[str], union: bool = True) -> str:
    """The query of a view over exactly `files` (names `read_parquet` takes as they are),
    with `snapshot_date` from the Hive folder names and the columns of every file (`union`),
    or the first file's columns (DuckDB still matches them by name, and a file that lacks
    one is an error, never a silent null)."""
    listed = ", ".join(sql_text(file) for file in files)
    union_by_name = ", union_by_name = true" if union else ""
    return f"select * from read_parquet([{listed}], hive_partitioning = true{union_by_name})"


def _register_remote(
    connection: duckdb.DuckDBPyConnection, store: Store, day: date, wanted: set[str] | None
) -> None:
    """`<table>`: the latest snapshot read now, every table from its manifest's export (held
    in memory, so a re-export during the query cannot mix versions); `<table>_history`: lazy
    Arrow datasets over the files of every day that has a manifest."""
    from ._remote_target import manifest_days

    partitions = {paths.partition_name(d) for d in manifest_days(store)}
    names = [t for t in _tables.TABLE_NAMES if wanted is None or t in wanted]
    latest = read_tables(store.uri, dict.fromkeys(names), day) if names else {}
    for table in _tables.TABLE_NAMES:
        intervals = intervals_view_name(table) if table in INTERVAL_KEYS else None
        if wanted is None or f"{table}_history" in wanted or intervals in wanted:
            dataset = _remote_history(store, table, partitions)
            if dataset is not None:
                connection.register(f"{table}_history", dataset)
                _create_intervals(connection, table, wanted)
        if table in latest:
            _register_day(connection, table, latest[table], day)


def _register_day(
    connection: duckdb.DuckDBPyConnection, table: str, found: pa.Table, day: date
) -> None:
    """One day's rows of `table`, read already, as the view `table` (with snapshot_date)."""
    import pyarrow as pa

    date_column = pa.array([day] * found.num_rows, pa.date32())
    connection.register(table, found.append_column(PARTITION, date_column))


def history_counts(out_dir: PathLike, table: str, by: list[str]) -> pd.DataFrame:
    """Rows of `table` per snapshot date and per value of the `by` columns, over every
    snapshot: what a history chart needs, computed without loading the rows.

    Only the `by` columns are read, file by file (a streaming aggregate in DuckDB), so memory
    stays small however long the history. In a folder DuckDB's own Parquet reader reads the
    day's files by name (sooner than through an Arrow dataset: docs/benchmarks.md, the
    history row); on object storage, or where a name cannot be given to DuckDB
    exactly, the same lazy dataset as `<table>_history`.
    Columns: `snapshot_date` (ISO text), the `by` columns, `rows`; sorted by date.
    Without DuckDB (the `sql` extra not installed) Arrow counts the same rows, batch by batch
    (`_count_history_by_arrow`; tests/storage/test_long_history.py holds the two equal).
    """
    try:
        import duckdb
    except ImportError:  # `dims[sql]` not installed: the reports need no DuckDB
        return _history_frame(_count_history_by_arrow(out_dir, table, by))

    keys = ", ".join(sql_name(name) for name in [PARTITION, *by])
    query = f"select {keys}, count(*) as rows from history group by all order by {keys}"
    try:  # the days' schemas alike (the usual case): no union of every day's schema
        counted = _count_history(out_dir, table, query, union=False)
    except duckdb.Error:
        try:  # a day without a `by` column (an older dataset), or a file that cannot be read
            counted = _count_history(out_dir, table, query, union=True)
        except duckdb.Error as exc:
            raise DatasetError(
                f"cannot read the history of {table} in {out_dir}: {first_line(exc)}"
            ) from None
    return _history_frame(counted)


def _history_frame(counted: pa.Table) -> pd.DataFrame:
    frame = _tables.to_pandas(counted)
    frame[PARTITION] = [str(day)[:10] for day in frame[PARTITION]]
    return frame


def _count_history_by_arrow(out_dir: PathLike, table: str, by: list[str]) -> pa.Table:
    """`history_counts`' table counted by Arrow: each batch grouped, then the groups summed,
    so memory holds groups, never the history's rows."""
    import pyarrow as pa

    dataset = _history_dataset(out_dir, table)
    if dataset is None:
        raise _no_snapshot(out_dir, table)
    keys = [PARTITION, *by]
    try:
        parts = [
            pa.Table.from_batches([batch]).group_by(keys).aggregate([([], "count_all")])
            for batch in dataset.to_batches(columns=keys)
        ]
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(
            f"cannot read the history of {table} in {out_dir}: {first_line(exc)}"
        ) from None
    if not parts:
        raise _no_snapshot(out_dir, table)
    summed = pa.concat_tables(parts).group_by(keys).aggregate([("count_all", "sum")])
    counted = summed.rename_columns([*keys, "rows"]).select([*keys, "rows"])
    return counted.sort_by([(key, "ascending") for key in keys])


def _count_history(out_dir: PathLike, table: str, query: str, union: bool) -> pa.Table:
    import duckdb

    with duckdb.connect() as connection:
        # DuckDB reads the files' footers when it makes the view: a bad one fails there
        _history_view(connection, out_dir, table, union)
        return connection.sql(query).to_arrow_table()


def _history_view(
    connection: duckdb.DuckDBPyConnection, out_dir: PathLike, table: str, union: bool = True
) -> None:
    """`history`: every day's rows of `table`, with `snapshot_date` from the folder names."""
    named = None if paths.is_remote(out_dir) else history_files(Path(out_dir), table)
    if named:
        connection.execute(f"create view history as {parquet_view_sql(named, union)}")
        return
    dataset = _history_dataset(out_dir, table)
    if dataset is None:
        raise _no_snapshot(out_dir, table)
    connection.register("history", dataset)


def _history_files(folder: Path) -> list[str]:
    """Every day's part files of a table: the `*/*.parquet` of its snapshot folders."""
    return [
        str(path)
        for path in sorted(folder.glob(f"{PARTITION}=*/*.parquet"))
        if paths.partition_day(path.parent.name) is not None
    ]


def _history_dataset(out_dir: PathLike, table: str) -> Any:
    """Every snapshot of `table` as a lazy Arrow dataset (None when there is none)."""
    if paths.is_remote(out_dir):
        from ._remote_target import manifest_days

        store = open_store(str(out_dir))
        partitions = {paths.partition_name(d) for d in manifest_days(store)}
        return _remote_history(store, table, partitions)
    folder = Path(out_dir) / table
    files = _history_files(folder)
    return _arrow_dataset(table, files, str(folder)) if files else None


def history_keys(store: Store, table: str, partitions: set[str]) -> list[str]:
    """The keys of `table`'s objects in the `partitions` (`snapshot_date=…` folders: those
    of the days that have a manifest)."""
    return [
        info.path
        for info in store.files(table)
        if info.path.count("/") == 2 and info.path.split("/")[1] in partitions
    ]


def _remote_history(store: Store, table: str, partitions: set[str]) -> Any:
    """The table's objects of the days that have a manifest, as a lazy Arrow dataset."""
    keys = history_keys(store, table, partitions)
    if not keys:
        return None
    located = [store.path(key) for key in keys]
    return _arrow_dataset(table, located, store.path(table), store.fs)


def _arrow_dataset(table: str, files: list[str], base: str, filesystem: Any = None) -> Any:
    """A lazy Arrow dataset of `files` with the table's schema and its Hive date partition."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    partition = pa.schema([pa.field(PARTITION, pa.date32())])
    return ds.dataset(
        files,
        schema=pa.unify_schemas([_tables.TABLE_SCHEMAS[table], partition]),
        format="parquet",
        filesystem=filesystem,
        partitioning=ds.partitioning(partition, flavor="hive"),
        partition_base_dir=base,
    )


def duckdb_name(path: Path) -> str | None:
    """`path` as DuckDB's `read_parquet` reads exactly that file (see `_duckdb_file`)."""
    return _duckdb_file(path)


def _duckdb_file(path: Path) -> str | None:
    """`path` as DuckDB's `read_parquet` reads exactly that file, never a pattern.

    DuckDB takes every path it is given for a glob (a list's items too): `--out ds[1]` would
    read `ds1`'s files, `ds*` every dataset beside it. Its glob characters are bracketed
    (`[*]` matches only `*`); None where DuckDB cannot name the file (a backslash beside
    them: its glob matches no name holding one).
    """
    text = str(path)
    if not _DUCKDB_GLOB.search(text):
        return text
    if "\\" in text:
        return None
    return _DUCKDB_GLOB.sub(r"[\1]", text)


def _create_view(connection: duckdb.DuckDBPyConnection, name: str, files: list[str]) -> None:
    """A view read by DuckDB's own reader at each query (a long-lived connection sees a
    re-exported file whole: the file is opened, footer and data, at each scan)."""
    connection.execute(f"create view {sql_name(name)} as {parquet_view_sql(files)}")
