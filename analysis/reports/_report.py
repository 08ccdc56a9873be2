"""`write_report`: the files of `dims report`, from one snapshot of the dataset.

`DIR/reports/snapshot_date=YYYY-MM-DD/` gets `report.html`, `capacity_summary.parquet`,
`capacity_by_workspace.parquet`, `cost_by_deployment.parquet` and
`image_version_summary.parquet`. Each file is written to a
temporary name in the same folder and renamed into place, so a reader (or a dashboard polling
the folder) never sees half a file, and an interrupted run leaves the previous report intact.
Files get the dataset's permissions (0666 less the umask, e.g. 0644), not a temporary file's
private 0600.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.errors import ReportError
from analysis.reports import _capacity as cap
from analysis.reports import _charts as charts
from analysis.reports import _history as history
from analysis.reports import _html as h
from analysis.reports import _images as images
from analysis.reports import _prices as pr
from analysis.reports import _versions as versions
from analysis.reports._frames import PARTITION, Snapshot, load_snapshot, snapshot_days
from analysis.reports._images import NewestShare
from analysis.reports._measures import IDENTITY, TOTALS
from analysis.storage import open_store, paths

#: 2: replicas and connections as int64, monthly cost columns, cost_by_deployment.parquet
#: 3: tenant_id in cost_by_deployment.parquet, capacity_by_workspace.parquet
REPORT_SCHEMA_VERSION = "3"
#: Snapshot dates the history table lists (the newest); the chart shows every one.
HISTORY_TABLE_ROWS = 30
_COSTS = [pa.field(c, pa.float64()) for c in pr.COST_COLUMNS]

CAPACITY_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("component", pa.string(), nullable=False),
        pa.field("deployment_type", pa.string()),
        pa.field("deployments", pa.int64(), nullable=False),
        pa.field("replicas_min", pa.int64()),
        pa.field("replicas_max", pa.int64()),
        *(pa.field(c, pa.float64()) for c in TOTALS),
        pa.field("db_storage_gib", pa.float64()),
        pa.field("db_max_connections", pa.int64()),
        *_COSTS,
    ]
)
#: The summary's figures per workspace instead of per component and type.
CAPACITY_BY_WORKSPACE_SCHEMA = pa.schema(
    [pa.field("tenant_id", pa.string()), *list(CAPACITY_SUMMARY_SCHEMA)[2:]]
)
COST_BY_DEPLOYMENT_SCHEMA = pa.schema(
    [
        pa.field("deployment_id", pa.string(), nullable=False),
        *(pa.field(c, pa.string()) for c in IDENTITY[1:]),
        pa.field("image_version", pa.string()),
        *_COSTS,
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


def report_dir(out_dir: str | Path, snapshot_date: str) -> Path | str:
    """Where a snapshot's report goes: a folder, or a prefix when the dataset is a URI."""
    return paths.join(out_dir, "reports", f"{PARTITION}={snapshot_date}")


def _file_mode() -> int:
    """0666 less the process umask: the mode `open()` gives new files, as the dataset has."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _atomic_write(target: Path, write: Callable[[Path], object]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temp = Path(name)
    try:
        write(temp)
        os.chmod(temp, _file_mode())  # mkstemp's 0600 would hide the report from its readers
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
    """A key figure: whole numbers of cores and GiB read better on a card than decimals."""
    return f"{value:,.0f}{unit}"


def _usd(value: float) -> str:
    return f"${value:,.0f}"


_TYPE_CAPACITY = [
    "deployment_type",
    "deployments",
    "replicas_min",
    "replicas_max",
    "cpu_request_cores_min_scale",
    "cpu_request_cores_max_scale",
    "memory_request_gib_min_scale",
    "memory_request_gib_max_scale",
    "db_storage_gib",
]
_COSTS_SHOWN = [*pr.COST_TOTALS, pr.STORAGE_COST]


def _overview(
    snap: Snapshot, totals: Mapping[str, float], fleet: NewestShare, pending: int, found: int
) -> h.Section:
    def span(measure: str) -> str:
        low, high = totals[f"{measure}_min_scale"], totals[f"{measure}_max_scale"]
        return f"{_fmt(low)} / {_fmt(high)}"

    newest = fleet["newest_version"]
    return h.Section("overview", "Overview").add(
        h.cards(
            [
                ("deployments", f"{len(snap.deployments):,}", False),
                ("monthly cost, requests at min scale", _usd(totals[pr.COST_TOTALS[0]]), False),
                ("monthly cost, requests at max scale", _usd(totals[pr.COST_TOTALS[1]]), False),
                ("CPU requested at min / max scale (cores)", span("cpu_request_cores"), False),
                ("memory requested at min / max scale (GiB)", span("memory_request_gib"), False),
                ("DB storage (GiB)", _fmt(totals["db_storage_gib"]), False),
                ("newest image version", str(newest or "—"), False),
                ("share on the newest version", f"{100 * fleet['share_on_newest']:.1f} %", False),
                ("rollouts pending (active ≠ latest)", f"{pending:,}", pending > 0),
                ("resource anomalies", f"{found:,}", found > 0),
            ]
        )
    )


def _costs(
    snap: Snapshot, rows: pd.DataFrame, totals: Mapping[str, float], prices: pr.PriceSheet
) -> h.Section:
    by_type = cap.capacity_by(rows, ["deployment_type"], prices)
    by_component = cap.capacity_by(rows, ["component"], prices)
    by_namespace = cap.capacity_by(rows, ["k8s_namespace"], prices).sort_values(
        [pr.cost_column("request", "max"), "k8s_namespace"], ascending=[False, True]
    )
    per_deployment = cap.cost_by_deployment(snap, prices)
    total_row = {**totals, "deployment_type": "total", "component": "total"}
    return h.Section("costs", "Costs").add(
        h.note(
            "What the fleet reserves (requests) or may burst to (limits) costs a month at "
            f"these prices: {prices.describe()}. Min scale is the floor, max scale what "
            "autoscaling may reach; DB storage is priced once per deployment."
        ),
        h.figure(
            charts.cost_by_type_chart(by_type),
            "Each type has its own axis: compare bars within a panel, read the axis across.",
        ),
        h.heading("By deployment type ($/month)"),
        h.table(
            h.with_total(by_type, total_row),
            max_rows=None,
            total_label="total",
            columns=["deployment_type", "deployments", *_COSTS_SHOWN],
        ),
        h.heading("By component ($/month)"),
        h.table(
            h.with_total(by_component, total_row),
            max_rows=None,
            total_label="total",
            columns=["component", "deployments", *_COSTS_SHOWN],
        ),
        h.heading("By Kubernetes namespace ($/month), most expensive first"),
        h.table(by_namespace, max_rows=15, columns=["k8s_namespace", "deployments", *_COSTS_SHOWN]),
        h.heading("Most expensive deployments (cost_by_deployment.parquet)"),
        h.table(
            per_deployment,
            max_rows=15,
            columns=["name", "deployment_type", "k8s_namespace", *_COSTS_SHOWN],
        ),
    )


def _capacity(snap: Snapshot, rows: pd.DataFrame, totals: Mapping[str, float]) -> h.Section:
    """The capacity section: what the fleet asks for, by type, component, namespace, pod."""
    summary = cap.capacity_summary(snap)
    total_row = {**totals, "component": "total", "deployment_type": "total"}
    return h.Section("capacity", "Capacity").add(
        *_capacity_by_type_and_component(snap, rows, summary, total_row),
        *_capacity_summary_table(summary),
        *_namespaces_and_databases(snap),
        *_pod_requests(snap),
        *_largest_deployments(snap),
    )


#: the capacity totals at max scale, the columns of the tables that show one scale
_MAX_TOTALS = [c for c in TOTALS if c.endswith("_max_scale")]


def _capacity_by_type_and_component(
    snap: Snapshot, rows: pd.DataFrame, summary: pd.DataFrame, total_row: Mapping[str, object]
) -> list[str]:
    """The stacked chart, the tables by type and by component, and the overcommit."""
    by_component = cap.capacity_by(rows, ["component"])
    by_type = cap.capacity_by(rows, ["deployment_type"])
    return [
        h.figure(
            charts.capacity_chart(summary),
            "Requested CPU and memory per deployment type, stacked by component, at min and "
            "max scale. Each panel has its own axis, so small types stay visible.",
        ),
        h.heading("By deployment type (all components)"),
        h.table(
            h.with_total(by_type, total_row),
            max_rows=None,
            total_label="total",
            columns=_TYPE_CAPACITY,
        ),
        h.heading("By workspace (tenant_id; capacity_by_workspace.parquet)"),
        h.table(
            cap.capacity_by_workspace(snap),
            max_rows=30,
            columns=["tenant_id", *_TYPE_CAPACITY[1:], pr.cost_column("request", "max")],
        ),
        h.heading("By component, at max scale"),
        h.table(
            h.with_total(by_component, total_row),
            max_rows=None,
            total_label="total",
            columns=["component", "deployments", "replicas_max", *_MAX_TOTALS],
        ),
        h.figure(
            charts.requests_limits_chart(by_component),
            "Limits above requests are what a component may burst to beyond its reservation.",
        ),
        h.heading("Overcommit: limit ÷ request at max scale"),
        h.note("Above 1× a workload may burst beyond what the scheduler reserved for it."),
        h.table(
            h.with_total(
                cap.overcommit(snap), {"component": "overall", **cap.overcommit_total(snap)}
            ),
            max_rows=None,
            total_label="overall",
        ),
    ]


def _capacity_summary_table(summary: pd.DataFrame) -> list[str]:
    """capacity_summary.parquet as a table: requests by component and type."""
    return [
        h.heading("By component and deployment type, requests (capacity_summary.parquet)"),
        h.table(
            summary,
            max_rows=None,
            columns=[
                "component",
                "deployment_type",
                "deployments",
                "cpu_request_cores_min_scale",
                "cpu_request_cores_max_scale",
                "memory_request_gib_min_scale",
                "memory_request_gib_max_scale",
            ],
        ),
    ]


def _namespaces_and_databases(snap: Snapshot) -> list[str]:
    """Capacity by Kubernetes namespace (chart and table), then the databases'."""
    by_namespace = cap.capacity_by_namespace(snap)
    return [
        h.figure(charts.namespace_chart(by_namespace)),
        h.heading("By Kubernetes namespace"),
        h.table(by_namespace, max_rows=30, columns=["k8s_namespace", *_TYPE_CAPACITY[1:]]),
        h.heading("Database storage and connections"),
        h.table(
            h.with_total(
                cap.db_capacity(snap), {"deployment_type": "all", **cap.db_capacity_total(snap)}
            ),
            max_rows=None,
            total_label="all",
        ),
    ]


def _pod_requests(snap: Snapshot) -> list[str]:
    """The effective pod request of deployments with sidecars or init containers."""
    pods = cap.pod_requests(snap)
    return [
        h.heading("Sidecars and init containers: effective pod request per replica"),
        h.note(
            "Pod = max(main + sidecars, largest init container), per replica; deployments "
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
                "pod_memory_request_gib",
            ],
        ),
    ]


def _largest_deployments(snap: Snapshot) -> list[str]:
    """The ten deployments asking for the most CPU, and the ten for the most memory."""
    shown = ["name", "deployment_type", "k8s_namespace", "image_version", *_MAX_TOTALS]
    return [
        h.heading("Largest deployments by CPU requested at max scale"),
        h.table(cap.largest_deployments(snap, 10, "cpu_request_cores_max_scale"), columns=shown),
        h.heading("Largest deployments by memory requested at max scale"),
        h.table(cap.largest_deployments(snap, 10, "memory_request_gib_max_scale"), columns=shown),
    ]


def _anomalies(snap: Snapshot, found: pd.DataFrame, prices: pr.PriceSheet) -> h.Section:
    signals = cap.rightsizing(snap, prices)
    kinds = found["anomaly"].value_counts().rename_axis("anomaly").rename("findings").reset_index()
    by_signal = (
        signals.groupby("signal")
        .agg(deployments=("deployment_id", "size"), savings_usd_month=("savings_usd_month", "sum"))
        .reset_index()
    )
    saved = float(signals["savings_usd_month"].sum())
    return h.Section("anomalies", "Anomalies and right-sizing").add(
        h.table(kinds, max_rows=None),
        h.table(
            found,
            max_rows=60,
            columns=["anomaly", "name", "deployment_type", "component", "detail"],
        ),
        h.heading("Right-sizing: what each suggestion saves a month"),
        h.cards([("saved a month if every suggestion is taken", _usd(saved), False)]),
        h.note(
            "dev_above_dev_defaults: development deployments asking for more than development "
            "provides; bringing the main workload back to the development defaults saves the "
            "difference in its requests at max scale. prod_at_dev_defaults: production "
            "deployments still at the development defaults; a review, which saves nothing."
        ),
        h.table(by_signal, max_rows=None),
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
                "savings_usd_month",
                "suggestion",
            ],
        ),
    )


def _versions(snap: Snapshot, fleet: NewestShare, pending: pd.DataFrame) -> h.Section:
    newest_share = images.newest_share_by_type(snap)
    return h.Section("versions", "Image versions").add(
        h.figure(
            charts.version_distribution_chart(
                images.versions_by_type(snap), fleet["newest_version"]
            )
        ),
        h.heading("Deployments per image version (image_version_summary.parquet)"),
        h.table(images.image_version_summary(snap), max_rows=None),
        h.heading("Newest version per deployment type"),
        h.table(
            h.with_total(newest_share, {"deployment_type": "all", **fleet}),
            max_rows=None,
            total_label="all",
        ),
        h.heading("Rollouts pending: active revision is not the latest revision"),
        h.note("Time since update is measured from the snapshot time, oldest update first."),
        h.table(
            pending,
            max_rows=40,
            columns=["name", "deployment_type", "image_version", "updated_at", "time_since_update"],
        ),
    )


def _history(snap: Snapshot) -> h.Section:
    section = h.Section("history", "History")
    dates = [d for d in snapshot_days(snap.out_dir) if d <= snap.snapshot_date]
    over_time = history.versions_over_time(snap.out_dir)
    over_time = over_time[over_time["snapshot_date"].isin(dates)]
    section.add(h.figure(charts.adoption_chart(over_time)))
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
        section.add(
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
            h.table(
                result.capacity_totals.assign(
                    measure=result.capacity_totals["measure"].map(h.label)
                ),
                max_rows=None,
            ),
            h.heading("Image version moves"),
            h.table(moves, max_rows=40),
        )
    else:
        section.add(
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
    # Newest first, a bounded number: years of daily snapshots stay a page, not a book.
    pivot = pivot.sort_values("snapshot_date", ascending=False)
    return section.add(
        h.heading("Deployments per version and snapshot date, newest first"),
        h.table(pivot, max_rows=HISTORY_TABLE_ROWS),
    )


def build_html(snap: Snapshot, prices: pr.PriceSheet = pr.DEFAULT_PRICES) -> str:
    """The report page for one snapshot (also useful to embed in a notebook via IPython)."""
    rows = cap.component_capacity(snap)
    totals = cap.fleet_totals(rows, prices)
    fleet = images.newest_share_total(snap)
    found = cap.anomalies(snap)
    pending = images.pending_rollouts(snap)
    notes = h.Section("assumptions", "Assumptions").add(
        '<ul class="assumptions">'
        + "".join(f"<li>{h.inline_code(a)}</li>" for a in (*h.ASSUMPTIONS, _price_note(prices)))
        + "</ul>"
    )
    snapshot_at = snap.snapshot_at
    meta = f"Snapshot {snap.snapshot_date}"
    if snapshot_at is not None:
        meta += f" · taken {snapshot_at.strftime('%Y-%m-%d %H:%M UTC')}"
    meta += f" · {len(snap.deployments):,} deployments"
    return h.page(
        f"dims fleet report — {snap.snapshot_date}",
        meta,
        [
            _overview(snap, totals, fleet, len(pending), len(found)),
            _costs(snap, rows, totals, prices),
            _capacity(snap, rows, totals),
            _versions(snap, fleet, pending),
            _history(snap),
            _anomalies(snap, found, prices),
            notes,
        ],
    )


def _price_note(prices: pr.PriceSheet) -> str:
    return (
        f"Costs are monthly, in US dollars: {prices.describe()}. They price what is requested "
        "or allowed (limits), not what is used; DB storage (`db_storage_gi`) is priced once "
        "per deployment, whatever its replicas."
    )


def write_report(
    out_dir: str | Path,
    snapshot_date: str | date | None = None,
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
) -> Path | str:
    """Write the report files for one snapshot (default: the latest), costs priced with
    `prices`; returns the path of report.html (its URI when the dataset is on object
    storage: the files are made in a local temporary folder, then each uploaded whole)."""
    snap = load_snapshot(out_dir, snapshot_date)
    pr.warn_unknown_types(prices, snap.deployments["deployment_type"].unique())
    folder = report_dir(out_dir, snap.snapshot_date)
    if isinstance(folder, Path):
        _refuse_links(Path(out_dir), folder)
        return _write_files(snap, prices, folder)
    with tempfile.TemporaryDirectory(prefix="dims-report-") as local:
        written = _write_files(snap, prices, Path(local))
        store = open_store(folder)
        for path in sorted(Path(local).iterdir()):
            store.upload(path, path.name)
        return store.uri_of(written.name)


def _refuse_links(out: Path, folder: Path) -> None:
    """The dataset's rule for the reports: `reports/` or a day's folder in it that is a link
    would take the files outside `--out`; refused before anything is written."""
    link = paths.first_link(out, folder.relative_to(out))
    if link is not None:
        raise ReportError(
            f"{link} is a symbolic link; dims writes only inside --out and never through "
            "links it did not create: replace the link with a folder, or choose another --out"
        )


def _write_files(snap: Snapshot, prices: pr.PriceSheet, folder: Path) -> Path:
    _write_parquet(
        cap.capacity_summary(snap, prices),
        CAPACITY_SUMMARY_SCHEMA,
        folder / "capacity_summary.parquet",
        "capacity_summary",
    )
    _write_parquet(
        cap.capacity_by_workspace(snap, prices),
        CAPACITY_BY_WORKSPACE_SCHEMA,
        folder / "capacity_by_workspace.parquet",
        "capacity_by_workspace",
    )
    _write_parquet(
        cap.cost_by_deployment(snap, prices),
        COST_BY_DEPLOYMENT_SCHEMA,
        folder / "cost_by_deployment.parquet",
        "cost_by_deployment",
    )
    _write_parquet(
        images.image_version_summary(snap),
        IMAGE_VERSION_SUMMARY_SCHEMA,
        folder / "image_version_summary.parquet",
        "image_version_summary",
    )
    page = build_html(snap, prices)
    target = folder / "report.html"
    _atomic_write(target, lambda path: path.write_text(page, encoding="utf-8"))
    return target


def report_files(report: Path | str) -> list[str]:
    """The names of the files beside `report` (what `dims report` lists)."""
    if isinstance(report, Path):
        return sorted(p.name for p in report.parent.iterdir() if p.is_file())
    store = open_store(report.rsplit("/", 1)[0])
    return sorted(info.base_name for info in store.files(""))
