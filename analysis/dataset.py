"""Reading the Parquet dataset back: which snapshots exist, and one table of one snapshot.

The layout is `DIR/<table>/snapshot_date=YYYY-MM-DD/part-<n>.parquet` (export.py writes it).
Readers glob only `snapshot_date=*` folders, so an export's temporary dot-folder is never
seen. Reports, `dims diff` and the notebooks read through here.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import DimsError
from .tables import to_pandas

PARTITION = "snapshot_date"
_PARTITION_DIR = re.compile(rf"^{PARTITION}=(\d{{4}}-\d{{2}}-\d{{2}})$")

PathLike = str | os.PathLike[str]


class DatasetError(DimsError):
    """The dataset is missing, empty, or lacks the requested snapshot."""


def snapshot_dates(out_dir: PathLike, table: str = "deployments") -> list[date]:
    """The snapshot dates present for `table`, oldest first."""
    root = Path(out_dir) / table
    if not root.is_dir():
        return []
    found = []
    for child in root.iterdir():
        match = _PARTITION_DIR.match(child.name)
        if match and child.is_dir() and any(child.glob("*.parquet")):
            try:
                found.append(date.fromisoformat(match[1]))
            except ValueError:
                continue  # e.g. 2025-13-40: not a snapshot this tool wrote
    return sorted(found)


def resolve_date(
    out_dir: PathLike, snapshot_date: date | str | None, table: str = "deployments"
) -> date:
    """`snapshot_date` checked against the dataset, or the latest one when None."""
    dates = snapshot_dates(out_dir, table)
    if not dates:
        raise DatasetError(
            f"no snapshot of {table} in {out_dir}: run `dims export` (or `dims demo`) first"
        )
    if snapshot_date is None:
        return dates[-1]
    day = date.fromisoformat(snapshot_date) if isinstance(snapshot_date, str) else snapshot_date
    if day not in dates:
        listed = ", ".join(d.isoformat() for d in dates)
        raise DatasetError(f"no {table} snapshot dated {day} in {out_dir}; there are: {listed}")
    return day


def partition_dir(out_dir: PathLike, table: str, day: date) -> Path:
    return Path(out_dir) / table / f"{PARTITION}={day.isoformat()}"


def read_arrow(
    out_dir: PathLike,
    table: str,
    snapshot_date: date | str | None = None,
    columns: list[str] | None = None,
) -> pa.Table:
    """One table of one snapshot (the latest when no date is given) as an Arrow table.

    Requested columns a file lacks (a dataset written by an older schema) come back as
    nulls, so readers degrade instead of failing.
    """
    day = resolve_date(out_dir, snapshot_date, table)
    files = sorted(partition_dir(out_dir, table, day).glob("*.parquet"))
    parts = []
    for path in files:
        available = set(pq.read_schema(path).names)
        wanted = None if columns is None else [c for c in columns if c in available]
        parts.append(pq.read_table(path, columns=wanted))
    result = pa.concat_tables(parts, promote_options="permissive")
    for column in columns or ():
        if column not in result.column_names:
            result = result.append_column(column, pa.nulls(result.num_rows))
    return result


def read_table(
    out_dir: PathLike,
    table: str,
    snapshot_date: date | str | None = None,
    columns: list[str] | None = None,
) -> pd.DataFrame:
    """One table of one snapshot as a DataFrame, with its `snapshot_date` (ISO text)."""
    day = resolve_date(out_dir, snapshot_date, table)
    frame = to_pandas(read_arrow(out_dir, table, day, columns))
    frame[PARTITION] = day.isoformat()
    return frame
