"""One snapshot of the Parquet dataset, loaded once into the frames the reports need.

Reading the dataset is `dims._storage`'s job; this module only shapes what the
reports take from it. Reports identify snapshots by their ISO date text (the partition
value), so frames from several snapshots concatenate and sort without conversions: hence
`snapshot_days` (text) beside the reader's `snapshot_dates` (dates), and
`read_written_table` (None for a table a snapshot lacks) beside its `read_table` (which
raises).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np
import pandas as pd

from dims import _storage as storage
from dims._errors import DatasetError as DatasetError
from dims._storage import history_counts
from dims._storage.paths import PARTITION, location
from dims._tables import unreadable_figures

__all__ = [
    "PARTITION",
    "Snapshot",
    "among",
    "as_snapshot",
    "history_counts",
    "load_deployment",
    "load_snapshot",
    "read_written_table",
    "resolve_day",
    "snapshot_days",
    "text_column",
    "tidy_text",
]

_T = TypeVar("_T")


def among(values: pd.Series, others: pd.Series | set[str]) -> np.ndarray:
    """Which of `values` (text, ids say) are among `others`, one bool each.

    `Series.isin` on pandas' text dtype goes through pyarrow, many times slower than a hash
    table of Python objects (docs/benchmarks.md), and a comparison of two snapshots makes
    five of them."""
    pool = others.astype("object") if isinstance(others, pd.Series) else list(others)
    found: np.ndarray = pd.Index(values.astype("object")).isin(pool)
    return found


#: The columns of `Snapshot.labels`.
LABEL_COLUMNS = ["deployment_id", "key", "value"]

#: The one dtype of text columns (ids, names, types, versions) in every report frame: pandas'
#: default string dtype, missing values as NaN.
TEXT: Final = "str"


def text_column(frame: pd.DataFrame, name: str) -> pd.Series[str]:
    """`frame[name]` as the report frames' one text dtype (all missing when it is absent)."""
    if name not in frame.columns:
        return pd.Series(None, index=frame.index, dtype=TEXT)
    return frame[name].astype(TEXT)


def tidy_text(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every object column that holds text converted to the one text dtype."""
    for name in frame.columns:
        if frame[name].dtype == object:
            values = frame[name].dropna()
            if values.map(lambda v: isinstance(v, str)).all():
                frame[name] = frame[name].astype(TEXT)
    return frame


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=TEXT) for c in columns})


def snapshot_days(out_dir: str | Path, table: str = "deployments") -> list[str]:
    """Snapshot dates present for `table`, oldest first, as ISO text."""
    return [d.isoformat() for d in storage.snapshot_dates(out_dir, table)]


def resolve_day(out_dir: str | Path, snapshot_date: str | date | None) -> str:
    """`snapshot_date` checked against the dataset (the latest when None), as ISO text."""
    return storage.resolve_date(out_dir, snapshot_date).isoformat()


def read_written_table(
    out_dir: str | Path, table: str, snapshot_date: str, columns: list[str] | None = None
) -> pd.DataFrame | None:
    """One table of one snapshot, or None when that table was not written.

    A file that cannot be read is still an error (DatasetError): a report must not show a
    table as empty because a stranger's file sits in its place.
    """
    if not storage.has_snapshot(out_dir, table, date.fromisoformat(snapshot_date)):
        return None
    return storage.read_table(out_dir, table, snapshot_date, columns)


@dataclass
class Snapshot:
    """The frames of one snapshot date that the reports are computed from."""

    #: The dataset: a folder, or an object-store URI (text).
    out_dir: Path | str
    snapshot_date: str
    deployments: pd.DataFrame
    #: init containers and sidecars; empty when the table is absent
    containers: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: labels (not annotations): deployment_id, key, value (null for a JSON null)
    labels: pd.DataFrame = field(default_factory=lambda: _empty(LABEL_COLUMNS))
    #: derived frames computed once per snapshot (several reports share them)
    cache: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    #: other derived objects computed once per snapshot, shared as they are
    memos: dict[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        """A summary: a notebook shows the frames themselves when asked, not in the repr."""
        return (
            f"Snapshot(out_dir={str(self.out_dir)!r}, snapshot_date={self.snapshot_date!r}, "
            f"deployments={len(self.deployments):,} rows, containers={len(self.containers):,} rows)"
        )

    def derived(self, name: str, build: Callable[[Snapshot], pd.DataFrame]) -> pd.DataFrame:
        """`build(self)`, computed once per snapshot; each caller gets its own copy."""
        if name not in self.cache:
            self.cache[name] = build(self)
        return self.cache[name].copy()

    def memo(self, name: str, build: Callable[[Snapshot], _T]) -> _T:
        """`build(self)`, computed once per snapshot and shared (for objects that are not
        changed after they are made)."""
        if name not in self.memos:
            self.memos[name] = build(self)
        value: _T = self.memos[name]
        return value

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
    "resources_requests_json",
    "resources_limits_json",
]


def _labels(table: Any) -> pd.DataFrame:
    """The rows of `deployment_labels` that are labels, not annotations, as text."""
    import pyarrow.compute as pc

    labels = table.filter(pc.equal(table["kind"], "label")).select(LABEL_COLUMNS)
    return pd.DataFrame({c: labels[c].to_pandas().astype(TEXT) for c in LABEL_COLUMNS})


def load_snapshot(
    out_dir: str | Path,
    snapshot_date: str | date | None = None,
    tenant_ids: Sequence[str] | None = None,
    deployment_columns: Sequence[str] | None = None,
) -> Snapshot:
    """The snapshot dated `snapshot_date` (default: the latest) of the dataset in `out_dir`;
    with `tenant_ids`, only those workspaces' deployments (default: the whole organisation).

    With `deployment_columns`, only those columns of the deployments are read (those the day
    lacks are left out, as always): a caller that compares two days at 100,000 deployments
    would otherwise hold every column of both, most of which it never looks at."""
    day = storage.resolve_date(out_dir, snapshot_date)
    # Both tables from the same export, even while a re-export replaces that day.
    found = storage.read_tables(
        out_dir,
        {
            "deployments": None if deployment_columns is None else list(deployment_columns),
            "deployment_containers": CONTAINER_COLUMNS,
            "deployment_labels": ["deployment_id", "kind", "key", "value"],
        },
        day,
    )
    # A day written before the rule for figures no cluster runs (schema 2) still holds them
    # in their columns: read by the same rule as an export applies (`dims._tables`).
    deployments = storage.as_frame(unreadable_figures(found["deployments"])[0], day)
    if "deployment_containers" in found:
        containers = storage.as_frame(found["deployment_containers"], day)
    else:
        containers = pd.DataFrame({c: pd.Series(dtype="object") for c in CONTAINER_COLUMNS})
    labels = _labels(found["deployment_labels"]) if "deployment_labels" in found else None
    if tenant_ids is not None:
        deployments = deployments[deployments["tenant_id"].isin(list(tenant_ids))]
        deployments = deployments.reset_index(drop=True)
        containers = containers[containers["deployment_id"].isin(deployments["id"])]
        containers = containers.reset_index(drop=True)
        if labels is not None:
            labels = labels[labels["deployment_id"].isin(deployments["id"])]
            labels = labels.reset_index(drop=True)
    snap = Snapshot(location(out_dir), day.isoformat(), deployments, containers)
    if labels is not None:
        snap.labels = labels
    return snap


def load_deployment(
    out_dir: str | Path, key: str, snapshot_date: str | date | None = None
) -> Snapshot:
    """The snapshot reduced to the deployments whose id or exact name is `key`, and their
    containers: what `dims explain` needs, read with predicate pushdown on `id`/`name` and
    `deployment_id` rather than the whole fleet (every rule explain applies is per
    deployment). No rows when none answers to `key`: the caller then reads the fleet for
    the nearest names. Labels are not read (explain shows none)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    day = storage.resolve_date(out_dir, snapshot_date)
    named = (pc.field("id") == key) | (pc.field("name") == key)
    ids = storage.read_arrow(out_dir, "deployments", day, ["id"], named)["id"].to_pylist()
    # Both tables again in one consistent read (the same export), now the ids are known.
    found = storage.read_tables(
        out_dir,
        {"deployments": None, "deployment_containers": CONTAINER_COLUMNS},
        day,
        {
            "deployments": named,
            "deployment_containers": pc.field("deployment_id").isin(pa.array(ids, pa.string())),
        },
    )
    deployments = storage.as_frame(unreadable_figures(found["deployments"])[0], day)
    if "deployment_containers" in found:
        containers = storage.as_frame(found["deployment_containers"], day)
    else:
        containers = pd.DataFrame({c: pd.Series(dtype="object") for c in CONTAINER_COLUMNS})
    return Snapshot(location(out_dir), day.isoformat(), deployments, containers)


def as_snapshot(source: Snapshot | str | Path, snapshot_date: str | date | None = None) -> Snapshot:
    """Report functions take a loaded Snapshot or a dataset folder (the latest snapshot)."""
    if isinstance(source, Snapshot):
        return source
    return load_snapshot(source, snapshot_date)
