"""`write_report`: the files of `dims report`, from one snapshot of the dataset.

`DIR/reports/snapshot_date=YYYY-MM-DD/` gets `report.html`, `capacity_summary.parquet` and
`image_version_summary.parquet`. Each file is written to a temporary name in the same folder
and renamed into place, so a reader (or a dashboard polling the folder) never sees half a file,
and an interrupted run leaves the previous report intact.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis import versions
from analysis.reports import capacity as cap
from analysis.reports import charts, history, images
from analysis.reports import html as h
from analysis.reports.dataset import PARTITION, Snapshot, load_snapshot, snapshot_dates

REPORT_SCHEMA_VERSION = "1"

CAPACITY_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("component", pa.string(), nullable=False),
        pa.field("deployment_type", pa.string()),
        pa.field("deployments", pa.int64(), nullable=False),
        pa.field("replicas_min", pa.float64()),
        pa.field("replicas_max", pa.float64()),
        *(pa.field(c, pa.float64()) for c in cap.TOTALS),
        pa.field("db_storage_gib", pa.float64()),
        pa.field("db_max_connections", pa.float64()),
    ]
)
IMAGE_VERSION_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("image_version", pa.string()),
        pa.field("deployments", pa.int64(), nullable=False),
        pa.field("versions_behind", pa.int64()),
        pa.field("share", pa.float64()),
        pa.field("version_order", pa.int64()),
        pa.field("is_newest", pa.bool_()),
        pa.field("parseable", pa.bool_()),
    ]
)


def report_dir(out_dir: str | Path, snapshot_date: str) -> Path:
    return Path(out_dir) / "reports" / f"{PARTITION}={snapshot_date}"


def _atomic_write(target: Path, write: Callable[[Path], None]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temp = Path(name)
    try:
        write(temp)
        os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def _write_parquet(frame: pd.DataFrame, schema: pa.Schema, target: Path, kind: str) -> None:
    metadata = {"dims_report": kind, "dims_report_schema_version": REPORT_SCHEMA_VERSION}
    table = pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)
    table = table.replace_schema_metadata(metadata)
    _atomic_write(target, lambda path: pq.write_table(table, path, compression="zstd"))


def _fmt(value: float, unit: str = "") -> str:
    return f"{value:,.1f}{unit}" if value % 1 else f"{value:,.0f}{unit}"


def build_html(snap: Snapshot) -> str:
    """The report page for one snapshot (also useful to embed in a notebook via IPython)."""
    rows = cap.component_capacity(snap)
    summary = cap.capacity_summary(snap)
    by_component = cap.capacity_by(rows, ["component"])
    by_type = cap.capacity_by(rows, ["deployment_type"])
    by_namespace = cap.capacity_by_namespace(snap)
    totals = cap.fleet_totals(rows)
    over = cap.overcommit(snap)
    db = cap.db_capacity(snap)
    pods = cap.pod_requests(snap)
    found = cap.anomalies(snap)
    signals = cap.rightsizing(snap)
    version_summary = images.image_version_summary(snap)
    by_version_type = images.versions_by_type(snap)
    newest_share = images.newest_share_by_type(snap)
    pending = images.pending_rollouts(snap)
    newest = images.newest_version(snap)

    fleet = newest_share[newest_share["deployment_type"] == "all"].iloc[0]
    total_row = {"component": "total", **totals}
    component_table = pd.concat([by_component, pd.DataFrame([total_row])], ignore_index=True)
    per_replica = ["component", "deployments", "replicas_min", "replicas_max", *cap.TOTALS]

    overview = h.Section("overview", "Overview").add(
        h.cards(
            [
                ("deployments", f"{len(snap.deployments):,}", False),
                (
                    "CPU requested at max scale (cores)",
                    _fmt(totals["cpu_request_cores_max_scale"]),
                    False,
                ),
                (
                    "memory requested at max scale (GiB)",
                    _fmt(totals["memory_request_gib_max_scale"]),
                    False,
                ),
                (
                    "CPU requested at min scale (cores)",
                    _fmt(totals["cpu_request_cores_min_scale"]),
                    False,
                ),
                (
                    "memory requested at min scale (GiB)",
                    _fmt(totals["memory_request_gib_min_scale"]),
                    False,
                ),
                ("DB storage (GiB)", _fmt(totals["db_storage_gib"]), False),
                ("newest image version", str(newest or "—"), False),
                ("share on the newest version", f"{100 * fleet['share_on_newest']:.1f} %", False),
                ("rollouts pending (active ≠ latest)", f"{len(pending):,}", len(pending) > 0),
                ("resource anomalies", f"{len(found):,}", len(found) > 0),
            ]
        )
    )

    capacity_section = h.Section("capacity", "Capacity").add(
        h.figure(
            charts.capacity_chart(summary),
            "Requested CPU and memory per deployment type, stacked by component; "
            "hatched bars at min scale, solid at max scale.",
        ),
        h.heading("By component (cores, GiB)"),
        h.table(component_table, max_rows=None, total_label="total", columns=per_replica),
        h.heading("By deployment type (all components)"),
        h.table(by_type, max_rows=None),
        h.heading("By component and deployment type (capacity_summary.parquet)"),
        h.table(summary, max_rows=None),
        h.figure(charts.namespace_chart(by_namespace)),
        h.heading("By Kubernetes namespace"),
        h.table(by_namespace, max_rows=30),
        h.heading("Overcommit: limit ÷ request at max scale"),
        h.note("Above 1× a workload may burst beyond what the scheduler reserved for it."),
        h.table(over, max_rows=None, total_label="overall"),
        h.heading("Database storage and connections"),
        h.table(db, max_rows=None, total_label="all"),
        h.heading("Sidecars and init containers: effective pod request per replica"),
        h.note(
            "pod = max(main + sidecars, largest init container), per replica; deployments "
            "with sidecars or init containers, largest effective CPU request first."
        ),
        h.table(
            pods[(pods["sidecars"] + pods["init_containers"]) > 0].sort_values(
                ["pod_cpu_request_cores", "name"], ascending=[False, True]
            ),
            max_rows=20,
            columns=[
                "name",
                "deployment_type",
                "sidecars",
                "init_containers",
                "main_cpu_request_cores",
                "sidecars_cpu_request_cores",
                "largest_init_cpu_request_cores",
                "pod_cpu_request_cores",
                "main_memory_request_gib",
                "sidecars_memory_request_gib",
                "largest_init_memory_request_gib",
                "pod_memory_request_gib",
            ],
        ),
    )
    shown = [
        "name",
        "deployment_type",
        "k8s_namespace",
        "image_version",
        *(c for c in cap.TOTALS if c.endswith("_max_scale")),
        "deployment_id",
    ]
    capacity_section.add(
        h.heading("Largest deployments by CPU requested at max scale"),
        h.table(cap.largest_deployments(snap, 10, "cpu_request_cores_max_scale"), columns=shown),
        h.heading("Largest deployments by memory requested at max scale"),
        h.table(cap.largest_deployments(snap, 10, "memory_request_gib_max_scale"), columns=shown),
    )

    kinds = found["anomaly"].value_counts().rename_axis("anomaly").rename("findings").reset_index()
    anomaly_section = h.Section("anomalies", "Anomalies and right-sizing").add(
        h.table(kinds, max_rows=None),
        h.table(
            found,
            max_rows=60,
            columns=["anomaly", "name", "deployment_type", "component", "detail", "deployment_id"],
        ),
        h.heading("Right-sizing signals"),
        h.note(
            "prod_at_dev_defaults: production deployments still at the development defaults; "
            "dev_above_dev_defaults: development deployments asking for more than development "
            "provides."
        ),
        h.table(
            signals["signal"]
            .value_counts()
            .rename_axis("signal")
            .rename("deployments")
            .reset_index(),
            max_rows=None,
        ),
        h.table(
            signals,
            max_rows=40,
            columns=[
                "signal",
                "name",
                "deployment_type",
                "cpu_request_cores",
                "memory_request_gib",
                "max_scale",
                "deployment_id",
            ],
        ),
    )

    version_section = h.Section("versions", "Image versions").add(
        h.figure(charts.version_distribution_chart(by_version_type, newest)),
        h.heading("Deployments per image version (image_version_summary.parquet)"),
        h.table(version_summary, max_rows=None),
        h.heading("Newest version per deployment type"),
        h.table(newest_share, max_rows=None, total_label="all"),
        h.heading("Rollouts pending: active revision is not the latest revision"),
        h.note("Time since update is measured from the snapshot time, oldest update first."),
        h.table(
            pending,
            max_rows=40,
            columns=[
                "name",
                "deployment_type",
                "image_version",
                "updated_at",
                "time_since_update",
                "deployment_id",
            ],
        ),
    )

    history_section = h.Section("history", "History")
    dates = [d for d in snapshot_dates(snap.out_dir) if d <= snap.snapshot_date]
    over_time = history.versions_over_time(snap.out_dir)
    over_time = over_time[over_time["snapshot_date"].isin(dates)]
    history_section.add(h.figure(charts.adoption_chart(over_time)))
    if len(dates) >= 2:
        previous = dates[-2]
        changes = history.version_changes(snap.out_dir, previous, snap.snapshot_date)
        moves = (
            changes.groupby(["change", "from_version", "to_version"], dropna=False)
            .size()
            .rename("deployments")
            .reset_index()
            .sort_values(["change", "deployments"], ascending=[False, False])
        )
        result = history.diff(snap.out_dir, previous, snap.snapshot_date)
        counts = result.counts()
        history_section.add(
            h.heading(f"Changes since the previous snapshot ({previous})"),
            h.cards(
                [
                    ("deployments added", f"{counts['added']:,}", False),
                    ("deployments removed", f"{counts['removed']:,}", False),
                    ("upgrades", f"{counts['upgrades']:,}", False),
                    ("downgrades", f"{counts['downgrades']:,}", counts["downgrades"] > 0),
                    ("capacity changed", f"{counts['capacity_changes']:,}", False),
                ]
            ),
            h.table(result.capacity_totals, max_rows=None),
            h.heading("Image version moves"),
            h.table(moves, max_rows=40),
        )
    else:
        history_section.add(
            h.note(
                "Only one snapshot so far: upgrades and downgrades appear once a second "
                "snapshot is exported."
            )
        )
    pivot = over_time.pivot_table(
        index="snapshot_date",
        columns="image_version",
        values="deployments",
        aggfunc="sum",
        fill_value=0,
    )
    pivot = pivot.reindex(columns=versions.sort_versions(pivot.columns)).reset_index()
    history_section.add(
        h.heading("Deployments per version and snapshot date"), h.table(pivot, max_rows=None)
    )

    notes = h.Section("assumptions", "Assumptions").add(
        '<ul class="assumptions">'
        + "".join(f"<li>{h.esc(a)}</li>" for a in h.ASSUMPTIONS)
        + "</ul>"
    )
    snapshot_at = snap.snapshot_at
    meta = f"snapshot_date {snap.snapshot_date}"
    if snapshot_at is not None:
        meta += f" · taken {snapshot_at.strftime('%Y-%m-%d %H:%M UTC')}"
    meta += f" · {len(snap.deployments):,} deployments"
    return h.page(
        f"dims fleet report — {snap.snapshot_date}",
        meta,
        [overview, capacity_section, version_section, history_section, anomaly_section, notes],
    )


def write_report(out_dir: str | Path, snapshot_date: str | date | None = None) -> Path:
    """Write the report files for one snapshot (default: the latest); returns report.html."""
    snap = load_snapshot(out_dir, snapshot_date)
    folder = report_dir(out_dir, snap.snapshot_date)
    _write_parquet(
        cap.capacity_summary(snap),
        CAPACITY_SUMMARY_SCHEMA,
        folder / "capacity_summary.parquet",
        "capacity_summary",
    )
    _write_parquet(
        images.image_version_summary(snap),
        IMAGE_VERSION_SUMMARY_SCHEMA,
        folder / "image_version_summary.parquet",
        "image_version_summary",
    )
    page = build_html(snap)
    target = folder / "report.html"
    _atomic_write(target, lambda path: path.write_text(page, encoding="utf-8"))
    return target
