"""Capacity and image-version reports over the Parquet dataset, as pandas DataFrames.

Every function takes a dataset folder (the latest snapshot is used) or a `Snapshot` from
`load_snapshot(out_dir, snapshot_date)` — load once when calling several in a notebook:

    snap = load_snapshot("dims-data")
    capacity_summary(snap); image_version_summary(snap); anomalies(snap)

`write_report` writes the files of `dims report`; `diff` is `dims diff`.
"""

from analysis.reports.capacity import (
    anomalies,
    capacity_by,
    capacity_by_component,
    capacity_by_namespace,
    capacity_by_type,
    capacity_summary,
    component_capacity,
    db_capacity,
    deployment_totals,
    fleet_totals,
    largest_deployments,
    overcommit,
    pod_requests,
    rightsizing,
)
from analysis.reports.dataset import DatasetError, Snapshot, load_snapshot, snapshot_dates
from analysis.reports.history import DiffResult, diff, version_changes, versions_over_time
from analysis.reports.images import (
    deployments_behind,
    image_version_summary,
    newest_share_by_type,
    newest_version,
    pending_rollouts,
    versions_by_type,
)
from analysis.reports.report import build_html, write_report

__all__ = [
    "DatasetError",
    "DiffResult",
    "Snapshot",
    "anomalies",
    "build_html",
    "capacity_by",
    "capacity_by_component",
    "capacity_by_namespace",
    "capacity_by_type",
    "capacity_summary",
    "component_capacity",
    "db_capacity",
    "deployment_totals",
    "deployments_behind",
    "diff",
    "fleet_totals",
    "image_version_summary",
    "largest_deployments",
    "load_snapshot",
    "newest_share_by_type",
    "newest_version",
    "overcommit",
    "pending_rollouts",
    "pod_requests",
    "rightsizing",
    "snapshot_dates",
    "version_changes",
    "versions_by_type",
    "versions_over_time",
    "write_report",
]
