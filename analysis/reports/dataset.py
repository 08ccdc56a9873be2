"""Reading one snapshot of the Parquet dataset into the frames the reports need.

Reports read the documented layout (`DIR/<table>/snapshot_date=YYYY-MM-DD/*.parquet`)
directly, the way DuckDB or Spark would, so they work on any dataset that follows the
contract: one written by `dims export`, copied from elsewhere, or written by an older dims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

PARTITION = "snapshot_date"
_DATE_DIR = re.compile(rf"^{PARTITION}=(\d{{4}}-\d{{2}}-\d{{2}})$")


class DatasetError(Exception):
    """The dataset is missing, empty, or lacks the requested snapshot."""


def snapshot_dates(out_dir: str | Path, table: str = "deployments") -> list[str]:
    """Snapshot dates present for `table`, oldest first (ISO dates sort as text)."""
    root = Path(out_dir) / table
    if not root.is_dir():
        return []
    dates = []
    for child in root.iterdir():
        match = _DATE_DIR.match(child.name)
        if match and child.is_dir() and any(child.glob("*.parquet")):
            dates.append(match[1])
    return sorted(dates)


def resolve_date(out_dir: str | Path, snapshot_date: str | date | None) -> str:
    """`snapshot_date` checked against the dataset, or the latest one when None."""
    dates = snapshot_dates(out_dir)
    if not dates:
        raise DatasetError(
            f"no snapshot in {Path(out_dir) / 'deployments'}: "
            "run `dims export` (or `dims demo`) first"
        )
    if snapshot_date is None:
        return dates[-1]
    snapshot_date = str(snapshot_date)
    if snapshot_date not in dates:
        raise DatasetError(
            f"no snapshot dated {snapshot_date} in {out_dir}; available: {', '.join(dates)}"
        )
    return snapshot_date


def read_table(
    out_dir: str | Path,
    table: str,
    snapshot_date: str,
    columns: list[str] | None = None,
) -> pd.DataFrame | None:
    """One table of one snapshot as a DataFrame, or None when that table was not written.

    Requested columns that a file lacks (an older schema) come back as nulls, so reports
    degrade instead of failing on a dataset written by another version.
    """
    folder = Path(out_dir) / table / f"{PARTITION}={snapshot_date}"
    files = sorted(folder.glob("*.parquet"))
    if not files:
        return None
    tables = []
    for path in files:
        available = set(pq.read_schema(path).names)
        wanted = None if columns is None else [c for c in columns if c in available]
        tables.append(pq.read_table(path, columns=wanted))
    frame = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    for column in columns or ():
        if column not in frame.columns:
            frame[column] = pd.NA
    frame[PARTITION] = snapshot_date
    return frame


@dataclass
class Snapshot:
    """The frames of one snapshot date that the reports are computed from."""

    out_dir: Path
    snapshot_date: str
    deployments: pd.DataFrame
    #: init containers and sidecars; empty when the table is absent
    containers: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: derived frames computed once per snapshot (several reports share them)
    cache: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def snapshot_at(self) -> pd.Timestamp | None:
        """When the snapshot was taken; ages (time since update) are measured from it."""
        if "snapshot_at" not in self.deployments or self.deployments.empty:
            return None
        value = self.deployments["snapshot_at"].max()
        return None if pd.isna(value) else pd.Timestamp(value)


CONTAINER_COLUMNS = [
    "deployment_id",
    "kind",
    "position",
    "name",
    "image",
    "restart_policy",
    "cpu_request",
    "cpu_limit",
    "memory_request_mb",
    "memory_limit_mb",
]


def load_snapshot(out_dir: str | Path, snapshot_date: str | date | None = None) -> Snapshot:
    """The snapshot dated `snapshot_date` (default: the latest) of the dataset in `out_dir`."""
    date = resolve_date(out_dir, snapshot_date)
    deployments = read_table(out_dir, "deployments", date)
    assert deployments is not None  # resolve_date saw its files
    containers = read_table(out_dir, "deployment_containers", date, columns=CONTAINER_COLUMNS)
    if containers is None:
        containers = pd.DataFrame({c: pd.Series(dtype="object") for c in CONTAINER_COLUMNS})
    return Snapshot(Path(out_dir), date, deployments, containers)


def as_snapshot(source: Snapshot | str | Path, snapshot_date: str | date | None = None) -> Snapshot:
    """Report functions take a loaded Snapshot or a dataset folder (the latest snapshot)."""
    if isinstance(source, Snapshot):
        return source
    return load_snapshot(source, snapshot_date)
