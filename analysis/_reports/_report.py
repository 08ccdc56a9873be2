"""`write_report`: the files of `dims report`, from one snapshot of the dataset.

`DIR/reports/snapshot_date=YYYY-MM-DD/` gets `report.html`, `capacity_summary.parquet`,
`capacity_by_workspace.parquet`, `cost_by_deployment.parquet`,
`image_version_summary.parquet`, and a `cost_by_<keys>.parquet` per allocation asked for
(`by=`) with `cost_history.parquet` (those allocations' groups on every snapshot up to this
one: `dims._reports._cost_history`). A report priced with a price sheet goes to
`DIR/reports/prices=<sheet>/snapshot_date=…/`, so scenarios sit side by side and none
replaces another or the default one. Each file is written to a temporary name in the same
folder and renamed into place, so a reader (or a dashboard polling the folder) never sees
half a file, and an interrupted run leaves the previous report intact. Files get the
dataset's permissions (0666 less the umask, e.g. 0644), not a temporary file's private 0600.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dims._atomic import write_atomic
from dims._errors import ReportError
from dims._reports import _capacity as cap
from dims._reports import _charts as charts
from dims._reports import _costchange as costchange
from dims._reports import _costtrend as costtrend
from dims._reports import _headline as hl
from dims._reports import _history as history
from dims._reports import _html as h
from dims._reports import _images as images
from dims._reports import _prices as pr
from dims._reports import _versions as versions
from dims._reports._allocation import allocation_tables, cost_by, warn_labels_nobody_has
from dims._reports._cost_history import COST_HISTORY_COLUMNS, cost_history
from dims._reports._frames import (
    PARTITION,
    Snapshot,
    as_snapshot,
    load_snapshot,
    snapshot_days,
)
from dims._reports._history import DiffResult
from dims._reports._images import NewestShare
from dims._reports._measures import IDENTITY, TOTALS
from dims._storage import open_store, paths

#: 2: replicas and connections as int64, monthly cost columns, cost_by_deployment.parquet
#: 3: tenant_id in cost_by_deployment.parquet, capacity_by_workspace.parquet
#: 4: unpriced and unbounded deployments (null figures, counts), scale_inverted, cost_share,
#:    cost_by_<keys>.parquet, a price sheet's reports under prices=<sheet>/
REPORT_SCHEMA_VERSION = "4"
#: Snapshot dates the history table keeps (the newest); the chart shows every one.
HISTORY_TABLE_ROWS = 30
_COSTS = [pa.field(c, pa.float64()) for c in pr.COST_COLUMNS]
#: The figures of every grouping (`capacity_by`, `cost_by`), after its keys.
GROUP_FIELDS = [
    pa.field("deployments", pa.int64(), nullable=False),
    pa.field("deployments_unpriced", pa.int64(), nullable=False),
    pa.field("deployments_unbounded", pa.int64(), nullable=False),
    pa.field("replicas_min", pa.int64()),
    pa.field("replicas_max", pa.int64()),
    *(pa.field(c, pa.float64()) for c in TOTALS),
    pa.field("db_storage_gib", pa.float64()),
    pa.field("db_max_connections", pa.int64()),
    *_COSTS,
    pa.field(cap.SHARE, pa.float64()),
]
CAPACITY_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("component", pa.string(), nullable=False),
        pa.field("deployment_type", pa.string()),
        *GROUP_FIELDS,
    ]
)
#: The summary's figures per workspace instead of per component and type.
CAPACITY_BY_WORKSPACE_SCHEMA = pa.schema([pa.field("tenant_id", pa.string()), *GROUP_FIELDS])
COST_BY_DEPLOYMENT_SCHEMA = pa.schema(
    [
        pa.field("deployment_id", pa.string(), nullable=False),
        *(pa.field(c, pa.string()) for c in IDENTITY[1:]),
        pa.field("image_version", pa.string()),
        *_COSTS,
        pa.field("scale_inverted", pa.bool_(), nullable=False),
        pa.field("limits_unbounded", pa.bool_(), nullable=False),
        pa.field("unpriced_reason", pa.string()),
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

#: `cost_history.parquet` (with `--by`): each grouping's groups on every snapshot up to the
#: report's day (`dims._reports._cost_history`).
COST_HISTORY_FILE = "cost_history.parquet"
COST_HISTORY_SCHEMA = pa.schema(
    [
        pa.field("day", pa.string(), nullable=False),
        pa.field("grouping", pa.string(), nullable=False),
        pa.field("group", pa.string(), nullable=False),
        *(f for f in GROUP_FIELDS if f.name in COST_HISTORY_COLUMNS),
    ]
)
assert COST_HISTORY_SCHEMA.names == COST_HISTORY_COLUMNS


def allocation_schema(keys: Sequence[str]) -> pa.Schema:
    """The schema of `cost_by_<keys>.parquet`: the keys as text, then the group figures."""
    return pa.schema([*(pa.field(k, pa.string(), nullable=False) for k in keys), *GROUP_FIELDS])


def report_dir(
    out_dir: str | Path, snapshot_date: str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> Path | str:
    """Where a snapshot's report goes: a folder, or a prefix when the dataset is a URI; a
    price sheet's under `reports/prices=<its name>/`, beside the others."""
    if prices.name:
        return paths.join(
            out_dir, "reports", f"prices={prices.name}", f"{PARTITION}={snapshot_date}"
        )
    return paths.join(out_dir, "reports", f"{PARTITION}={snapshot_date}")


def _atomic_write(target: Path, write: Callable[[Path], object]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, write)


def _write_parquet(frame: pd.DataFrame, schema: pa.Schema, target: Path, kind: str) -> None:
    metadata = {"dims_report": kind, "dims_report_schema_version": REPORT_SCHEMA_VERSION}
    table = pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)
    table = table.replace_schema_metadata(metadata)
    _atomic_write(target, lambda path: pq.write_table(table, path, compression="zstd"))


def _usd(value: float | None) -> str:
    return "—" if value is None or value != value else f"${value:,.0f}"


def _signed(value: float) -> str:
    return f"{'+' if value >= 0 else '−'}${abs(value):,.0f}"


@dataclass
class _Page:
    """What the sections of one page share, computed once."""

    snap: Snapshot
    prices: pr.PriceSheet
    #: each allocation asked for (its keys) -> its table's name (`allocation_tables`)
    allocations: dict[tuple[str, ...], str]
    figures: dict[str, Any] = field(init=False)
    totals: dict[str, int | float] = field(init=False)
    groups: dict[str, tuple[pd.DataFrame, str]] = field(init=False)
    previous: str | None = field(init=False)
    change: DiffResult | None = field(init=False)
    found: pd.DataFrame = field(init=False)
    signals: pd.DataFrame = field(init=False)
    trend: pd.DataFrame = field(init=False)
    saved: float = field(init=False)

    def __post_init__(self) -> None:
        self.figures = hl.headline(self.snap, self.prices)
        self.totals = cap.fleet_totals(self.snap, self.prices)
        self.groups = hl.groups(self.snap, self.prices)
        self.previous = _previous_day(self.snap)
        self.change = None
        if self.previous is not None:
            older = load_snapshot(self.snap.out_dir, self.previous)
            self.change = history.compare(older, self.snap, self.prices)
        self.found = cap.anomalies(self.snap)
        self.signals = cap.rightsizing(self.snap, self.prices)
        self.saved = float(self.signals["savings_usd_month"].sum())
        self.trend = costtrend.cost_over_time(
            self.snap.out_dir, self.prices, up_to=self.snap.snapshot_date
        )

    def total_row(self, key: str, text: str = "total") -> dict[str, object]:
        return {**self.totals, key: text, cap.SHARE: 1.0}


def _previous_day(snap: Snapshot) -> str | None:
    dates = [d for d in snapshot_days(snap.out_dir) if d < snap.snapshot_date]
    return dates[-1] if dates else None


_COSTS_SHOWN = [*pr.COST_TOTALS, pr.STORAGE_COST]
_COUNTS_SHOWN = ["deployments", "deployments_unpriced", "deployments_unbounded"]


def _money_cards(page: _Page) -> str:
    month, figures = page.figures["usd_month"], page.figures
    unpriced, unbounded = figures["deployments_unpriced"], figures["deployments_unbounded"]
    left_out = f"{unpriced:,} unpriced deployments not included" if unpriced else ""
    items = [
        h.Card(
            "the month's cost: requests at max scale (what autoscaling may reach), with DB storage",
            _usd(month["requests_max_scale"]),
            "; ".join(
                part
                for part in (
                    f"between {_usd(month['requests_min_scale'])} at min scale and "
                    f"{_usd(month['requests_max_scale'])} at max scale",
                    left_out,
                )
                if part
            ),
        ),
        h.Card(
            "limits a month (what the fleet may burst to)",
            f"between {_usd(month['limits_min_scale'])} and {_usd(month['limits_max_scale'])}",
            "at min and max scale"
            + (
                f"; {unbounded:,} deployments with unbounded limits not included"
                if unbounded
                else ""
            ),
        ),
        h.Card("DB storage a month", _usd(month["db_storage"]), "included in each figure above"),
    ]
    if unpriced:
        reasons = ", ".join(f"{k} {v:,}" for k, v in figures["unpriced_reasons"].items())
        items.append(h.Card("unpriced deployments, in no figure", f"{unpriced:,}", reasons, True))
    if page.change is not None:
        items.append(_change_card(page.change))
    else:
        items.append(
            h.Card("change since the last snapshot", "—", "no earlier snapshot in this folder")
        )
    items.append(
        h.Card("saved a month if every right-sizing suggestion is taken", _usd(page.saved))
    )
    return h.cards(items, "money")


def _change_card(change: DiffResult) -> h.Card:
    column = pr.cost_column("request", "max")
    causes = change.cost_causes().groupby("cause", sort=False)[column].sum()
    biggest = causes.abs().sort_values(ascending=False).head(3).index
    note = ", ".join(f"{history.CAUSE_NAMES[c]} {_signed(causes[c])}" for c in biggest)
    totals = change.cost_totals
    delta = float(totals.loc[totals["measure"] == column, "delta"].sum())
    return h.Card(f"change since {change.from_date}, requests at max scale", _signed(delta), note)


def _trend_note(trend: pd.DataFrame) -> str:
    """The change of the month's cost (requests at max scale) over the whole history."""
    column = pr.cost_column("request", "max")
    if len(trend) < 2:
        return "One snapshot so far: the history starts here."
    first, last = trend.iloc[0], trend.iloc[-1]
    if pd.isna(first[column]) or pd.isna(last[column]):  # unknown is never a figure
        return (
            f"Over the history ({len(trend):,} snapshots since {first['snapshot_date']}): "
            "requests at max scale are not priced at its first or its last snapshot."
        )
    delta = float(last[column]) - float(first[column])
    return (
        f"Over the history ({len(trend):,} snapshots since {first['snapshot_date']}), requests "
        f"at max scale moved {_signed(delta)}: {_usd(first[column])} to {_usd(last[column])}."
    )


def _movers(change: DiffResult | None) -> str:
    """The deployments whose month's cost moved most since the previous snapshot."""
    if change is None:
        return ""
    top = costchange.movers(change.cost_changes)
    column = pr.cost_column("request", "max")
    if top.empty:
        return h.note(f"No deployment's month's cost changed since {change.from_date}.")
    items = "".join(
        f"<li>{h.esc(row['name'])} ({h.esc(row['deployment_type'])}) {_signed(row[column])}"
        f" — {h.esc(', '.join(history.CAUSE_NAMES.get(c, c) for c in row['causes'].split(', ')))}"
        "</li>"
        for row in top.to_dict(orient="records")
    )
    heading = h.heading(f"Top movers since {change.from_date} (requests at max scale)")
    return f'<div class="movers">{heading}<ol>{items}</ol></div>'


def _where(page: _Page) -> str:
    """Where the money is: the top groups of each kind, with their share."""
    blocks = []
    for kind, rows in page.figures["top"].items():
        items = "".join(
            f"<li>{h.esc(row['name'] or '(none)')} — {_usd(row['usd_month'])} "
            f"({100 * (row['share'] or 0):.1f} %)</li>"
            for row in rows
        )
        blocks.append(f"<div>{h.heading(f'Top {kind}')}<ol>{items}</ol></div>")
    return f'<div class="where">{"".join(blocks)}</div>'


def _share(value: float) -> str:
    """A share as a percentage; `—` for none (a fleet without deployments has no share)."""
    return "—" if pd.isna(value) else f"{100 * value:.1f} %"


def _overview(page: _Page, fleet: NewestShare, pending: int) -> h.Section:
    found = len(page.found)
    inverted = page.figures["deployments_scale_inverted"]
    return h.Section("overview", "The month").add(
        h.note(f"Priced with {page.prices.source}; requests at max scale unless said."),
        _money_cards(page),
        _movers(page.change),
        h.figure(charts.cost_over_time_chart(page.trend), _trend_note(page.trend)),
        _where(page),
        h.cards(
            [
                h.Card("deployments", f"{page.figures['deployments']:,}"),
                h.Card("newest image version", str(fleet["newest_version"] or "—")),
                h.Card("share on the newest version", _share(fleet["share_on_newest"])),
                h.Card("rollouts pending (active ≠ latest)", f"{pending:,}", warn=pending > 0),
                h.Card("resource anomalies", f"{found:,}", warn=found > 0),
                h.Card(
                    "max scale below min scale",
                    f"{inverted:,}",
                    "priced at min scale",
                    inverted > 0,
                ),
            ]
        ),
    )


def _group_table(page: _Page, frame: pd.DataFrame, key: str, where: str = "the Python API") -> str:
    return h.table(
        frame,
        total=page.total_row(key),
        columns=[key, *_COUNTS_SHOWN, *_COSTS_SHOWN, cap.SHARE],
        where=where,
    )


def _costs(page: _Page) -> h.Section:
    snap, prices = page.snap, page.prices
    by_type = page.groups["types"][0]
    unbounded = page.figures["deployments_unbounded"]
    section = h.Section("costs", "Costs").add(
        h.note(
            "What the fleet reserves (requests) or may burst to (limits) costs a month at "
            f"these prices: {prices.describe()}. Min scale is the floor, max scale what "
            "autoscaling may reach. DB storage is priced once per deployment and is included "
            "in every total; its own column says how much of each it is."
        ),
        h.figure(
            charts.cost_by_type_chart(by_type),
            (
                f"* Limits leave out the {unbounded:,} deployments whose limits are unbounded."
                if unbounded
                else None
            ),
        ),
        h.heading("By deployment type ($/month), most expensive first"),
        _group_table(page, by_type, "deployment_type"),
    )
    for kind, title in (("namespaces", "Kubernetes namespace"), ("teams", "team (label team)")):
        if kind in page.groups:
            frame, key = page.groups[kind]
            section.add(
                h.heading(f"By {title} ($/month), most expensive first"),
                h.figure(charts.allocation_chart(frame, key, f"Top 10 by {title}")),
                _group_table(page, frame, key),
            )
    shown = [
        ["deployment_type"],
        ["k8s_namespace"],
        ["tenant_id"],
        *([[key] for _, key in [page.groups["teams"]]] if "teams" in page.groups else []),
    ]
    for keys, name in page.allocations.items():
        if list(keys) in shown:
            continue  # its table is on the page already (its file is written all the same)
        section.add(
            h.heading(f"By {', '.join(keys)} ($/month; {name}.parquet)"),
            _group_table(page, cost_by(snap, keys, prices), keys[0], f"{name}.parquet"),
        )
    return section.add(*_more_costs(page))


def _more_costs(page: _Page) -> list[str]:
    """By workspace and component, and the most expensive deployments."""
    snap, prices = page.snap, page.prices
    shown = ["name", "deployment_type", "k8s_namespace", *_COSTS_SHOWN, *cap.FLAGS]
    return [
        h.heading("By workspace (tenant_id; capacity_by_workspace.parquet)"),
        _group_table(
            page,
            cap.capacity_by(snap, ["tenant_id"], prices),
            "tenant_id",
            "capacity_by_workspace.parquet",
        ),
        h.heading("By component ($/month)"),
        _group_table(page, cap.capacity_by(snap, ["component"], prices), "component"),
        h.heading("Most expensive deployments (cost_by_deployment.parquet)"),
        h.table(
            cap.cost_by_deployment(snap, prices), columns=shown, where="cost_by_deployment.parquet"
        ),
    ]


_TYPE_CAPACITY = [
    "deployments",
    "replicas_min",
    "replicas_max",
    "cpu_request_cores_min_scale",
    "cpu_request_cores_max_scale",
    "memory_request_gib_min_scale",
    "memory_request_gib_max_scale",
    "db_storage_gib",
    pr.cost_column("request", "max"),
    cap.SHARE,
]
#: the capacity totals at max scale, the columns of the tables that show one scale
_MAX_TOTALS = [c for c in TOTALS if c.endswith("_max_scale")]


def _capacity(page: _Page) -> h.Section:
    """The capacity section: what the fleet asks for, by type, component, pod, database."""
    snap = page.snap
    summary = cap.capacity_summary(snap, page.prices)
    by_component = cap.capacity_by(snap, ["component"], page.prices)
    over = cap.overcommit(snap)
    return h.Section("capacity", "Capacity").add(
        h.figure(
            charts.capacity_chart(summary),
            "Requested CPU and memory per deployment type, stacked by component, at min and "
            "max scale. Each panel has its own axis, so small types stay visible.",
        ),
        h.heading("By deployment type (all components), most expensive first"),
        h.table(
            page.groups["types"][0],
            total=page.total_row("deployment_type"),
            columns=["deployment_type", *_TYPE_CAPACITY],
        ),
        h.heading("By component, at max scale, most expensive first"),
        h.table(
            by_component,
            total=page.total_row("component"),
            columns=[
                "component",
                "deployments",
                "replicas_max",
                *_MAX_TOTALS,
                pr.cost_column("request", "max"),
                cap.SHARE,
            ],
        ),
        h.figure(
            charts.requests_limits_chart(over),
            "Limits above requests are what a component may burst to beyond its reservation; "
            "a component with a container that has no limit may use what the node has.",
        ),
        h.heading("Overcommit: limit ÷ request at max scale"),
        h.table(over, total={"component": "overall", **cap.overcommit_total(snap)}),
        h.heading("By component and deployment type (capacity_summary.parquet)"),
        h.table(
            summary,
            where="capacity_summary.parquet",
            columns=[
                "component",
                "deployment_type",
                *_COUNTS_SHOWN,
                "cpu_request_cores_min_scale",
                "cpu_request_cores_max_scale",
                "memory_request_gib_min_scale",
                "memory_request_gib_max_scale",
                pr.cost_column("request", "max"),
                cap.SHARE,
            ],
        ),
        *_databases_and_pods(snap),
    )


def _databases_and_pods(snap: Snapshot) -> list[str]:
    """The databases' storage and connections, and the pods with sidecars or init containers."""
    pods = cap.pod_requests(snap)
    with_containers = pods[(pods["sidecars"] + pods["init_containers"]) > 0].sort_values(
        ["pod_cpu_request_cores", "name"], ascending=[False, True], na_position="last"
    )
    return [
        h.heading("Database storage and connections"),
        h.table(
            cap.db_capacity(snap), total={"deployment_type": "all", **cap.db_capacity_total(snap)}
        ),
        h.heading("Sidecars and init containers: effective pod request per replica"),
        h.note(
            "Pod = max(main + sidecars, largest init container), per replica; deployments "
            "with sidecars or init containers, largest effective CPU request first; — where "
            "a quantity is unreadable."
        ),
        h.table(
            with_containers,
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


def _anomalies(page: _Page) -> h.Section:
    found, signals = page.found, page.signals
    kinds = found["anomaly"].value_counts().rename_axis("anomaly").rename("findings").reset_index()
    by_signal = (
        signals.groupby("signal")
        .agg(deployments=("deployment_id", "size"), savings_usd_month=("savings_usd_month", "sum"))
        .reset_index()
    )
    saved = page.saved
    return h.Section("anomalies", "Anomalies and right-sizing").add(
        h.table(kinds, max_rows=None),
        h.table(found, columns=["anomaly", "name", "deployment_type", "component", "detail"]),
        h.heading("Right-sizing: what each suggestion saves a month"),
        h.cards([h.Card("saved a month if every suggestion is taken", _usd(saved))]),
        h.note(
            "dev_above_dev_defaults: development deployments asking for more than development "
            "provides; bringing the main workload back to the development defaults saves the "
            "difference in its requests at max scale. prod_at_dev_defaults: production "
            "deployments still at the development defaults; a review, which saves nothing."
        ),
        h.table(by_signal, max_rows=None),
        h.table(
            signals,
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
        h.table(images.image_version_summary(snap), where="image_version_summary.parquet"),
        h.heading("Newest version per deployment type"),
        h.table(newest_share, max_rows=None, total={"deployment_type": "all", **fleet}),
        h.heading("Rollouts pending: active revision is not the latest revision"),
        h.note("Time since update is measured from the snapshot time, oldest update first."),
        h.table(
            pending,
            columns=["name", "deployment_type", "image_version", "updated_at", "time_since_update"],
        ),
    )


def _cost_causes(change: DiffResult) -> str:
    causes = change.cost_causes()
    causes["cause"] = causes["cause"].map(history.CAUSE_NAMES)
    return h.table(causes, max_rows=None)


def _changes(change: DiffResult) -> list[str]:
    """What changed since the previous snapshot: counts, dollars by cause, version moves."""
    counts = change.counts()
    moves = (
        change.version_changes.groupby(["change", "from_version", "to_version"], dropna=False)
        .size()
        .rename("deployments")
        .reset_index()
        .sort_values(["change", "deployments"], ascending=[False, False])
    )
    totals = change.capacity_totals
    return [
        h.heading(f"Changes since the previous snapshot ({change.from_date})"),
        h.cards(
            [
                h.Card("deployments added", f"{counts['added']:,}"),
                h.Card("deployments removed", f"{counts['removed']:,}"),
                h.Card("upgrades", f"{counts['upgrades']:,}"),
                h.Card("downgrades", f"{counts['downgrades']:,}", warn=counts["downgrades"] > 0),
                h.Card("capacity changed", f"{counts['capacity_changes']:,}"),
            ]
        ),
        h.heading("The month's cost change by cause ($/month; they add up to the change)"),
        _cost_causes(change),
        h.table(totals.assign(measure=totals["measure"].map(h.label)), max_rows=None),
        h.heading("Image version moves"),
        h.table(moves),
    ]


def _over_time(page: _Page) -> pd.DataFrame:
    """Deployments per version and day up to this snapshot's: with no earlier day, this
    snapshot's own counts (no other day to read)."""
    snap = page.snap
    if page.previous is not None:
        over_time = history.versions_over_time(snap.out_dir)
        return over_time[over_time["snapshot_date"].astype("str") <= snap.snapshot_date]
    counts = snap.deployments["image_version"].astype("object").value_counts(dropna=False)
    return pd.DataFrame(
        {
            "snapshot_date": snap.snapshot_date,
            "image_version": [None if pd.isna(v) else v for v in counts.index],
            "deployments": counts.to_numpy(),
            "share": counts.to_numpy() / max(len(snap.deployments), 1),
        }
    )


def _history(page: _Page) -> h.Section:
    section = h.Section("history", "History")
    over_time = _over_time(page)
    section.add(h.figure(charts.adoption_chart(over_time)))
    if page.change is not None:
        section.add(*_changes(page.change))
    else:
        section.add(
            h.note(
                "Only one snapshot so far: upgrades, downgrades and the month's change appear "
                "once a second snapshot is exported."
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
        h.table(pivot, more=HISTORY_TABLE_ROWS - h.SHOWN_ROWS, where="versions_over_time"),
    )


def build_html(
    snap: Snapshot, prices: pr.PriceSheet = pr.DEFAULT_PRICES, by: Sequence[str] = ()
) -> str:
    """The report page for one snapshot (also useful to embed in a notebook via IPython),
    with an allocation table per key of `by` (`"label:team"`, `"namespace,label:app"`)."""
    return _page_html(snap, prices, allocation_tables(by))


def _page_html(
    snap: Snapshot, prices: pr.PriceSheet, allocations: dict[tuple[str, ...], str]
) -> str:
    page = _Page(snap, prices, allocations)
    fleet = images.newest_share_total(snap)
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
    meta += f" · {len(snap.deployments):,} deployments · priced with {prices.source}"
    return h.page(
        "dims fleet report",
        meta,
        [
            _overview(page, fleet, len(pending)),
            _costs(page),
            _capacity(page),
            _versions(snap, fleet, pending),
            _history(page),
            _anomalies(page),
            notes,
        ],
        date=snap.snapshot_date,
    )


def _price_note(prices: pr.PriceSheet) -> str:
    return (
        f"Costs are monthly, in US dollars: {prices.describe()}. They price what is requested "
        "or allowed (limits), not what is used; DB storage (`db_storage_gi`) is priced once "
        "per deployment, whatever its replicas, and is included in every total."
    )


def write_report(
    source: Snapshot | str | Path,
    snapshot_date: str | date | None = None,
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
    by: Sequence[str] = (),
) -> Path | str:
    """Write the report files for one snapshot (default: the latest; or a loaded
    `Snapshot`), costs priced with `prices`, with a `cost_by_<keys>.parquet` and a table per
    allocation in `by` (`"label:team"`, `"namespace,label:app"`); returns the path of
    report.html (its URI when the dataset is on object storage: the files are made in a local
    temporary folder, then each uploaded whole). A price sheet's report goes beside the
    others (`report_dir`), never over them."""
    snap = as_snapshot(source, snapshot_date)
    # a bad key is one line before anything is computed or written; names made distinct
    tables = allocation_tables(by)
    pr.warn_unknown_types(prices, snap.deployments["deployment_type"].unique())
    warn_labels_nobody_has(snap, tables)
    folder = report_dir(snap.out_dir, snap.snapshot_date, prices)
    if isinstance(folder, Path):
        _refuse_links(Path(snap.out_dir), folder)
        written = _write_files(snap, prices, folder, tables)
        for stale in _stale_allocations((p.name for p in folder.iterdir()), tables):
            (folder / stale).unlink(missing_ok=True)
        return written
    with tempfile.TemporaryDirectory(prefix="dims-report-") as local:
        written = _write_files(snap, prices, Path(local), tables)
        store = open_store(folder)
        for path in sorted(Path(local).iterdir()):
            store.upload(path, path.name)
        for stale in _stale_allocations((f.base_name for f in store.files("")), tables):
            store.delete(stale)
        return store.uri_of(written.name)


def _stale_allocations(names: Iterable[str], tables: dict[tuple[str, ...], str]) -> list[str]:
    """The `cost_by_<keys>.parquet` files of a day's report that this run did not ask for:
    an earlier run's allocations, removed so that the folder (and `dims sql`'s views of it)
    holds this report's tables only, never a stale one beside them. On a disk that ignores
    case (macOS) the file just written may keep the old one's name: a name that is a wanted
    one but for case, where the wanted one is not listed as such, is that file, and kept."""
    wanted = {f"{name}.parquet" for name in tables.values()} | {"cost_by_deployment.parquet"}
    if tables:
        wanted.add(COST_HISTORY_FILE)
    listed = [
        n
        for n in names
        if (n.startswith("cost_by_") and n.endswith(".parquet")) or n == COST_HISTORY_FILE
    ]
    folded = {name.casefold() for name in wanted if name not in listed}
    return sorted(n for n in listed if n not in wanted and n.casefold() not in folded)


def _refuse_links(out: Path, folder: Path) -> None:
    """The dataset's rule for the reports: `reports/` or a day's folder in it that is a link
    would take the files outside `--out`; refused before anything is written."""
    link = paths.first_link(out, folder.relative_to(out))
    if link is not None:
        raise ReportError(
            f"{link} is a symbolic link; dims writes only inside --out and never through "
            "links it did not create: replace the link with a folder, or choose another --out"
        )


def _write_files(
    snap: Snapshot, prices: pr.PriceSheet, folder: Path, tables: dict[tuple[str, ...], str]
) -> Path:
    files: list[tuple[pd.DataFrame, pa.Schema, str]] = [
        (cap.capacity_summary(snap, prices), CAPACITY_SUMMARY_SCHEMA, "capacity_summary"),
        (
            cap.capacity_by(snap, ["tenant_id"], prices),
            CAPACITY_BY_WORKSPACE_SCHEMA,
            "capacity_by_workspace",
        ),
        (cap.cost_by_deployment(snap, prices), COST_BY_DEPLOYMENT_SCHEMA, "cost_by_deployment"),
        (images.image_version_summary(snap), IMAGE_VERSION_SUMMARY_SCHEMA, "image_version_summary"),
    ]
    for keys, name in tables.items():
        files.append((cost_by(snap, keys, prices), allocation_schema(keys), name))
    if tables:
        # every snapshot up to this one, a day at a time (`cost_history`)
        groupings = [",".join(keys) for keys in tables]
        over_time = cost_history(snap.out_dir, groupings, prices, to_date=snap.snapshot_date)
        files.append((over_time, COST_HISTORY_SCHEMA, "cost_history"))
    for frame, schema, kind in files:
        _write_parquet(frame, schema, folder / f"{kind}.parquet", kind)
    page = _page_html(snap, prices, tables)
    target = folder / "report.html"
    _atomic_write(target, lambda path: path.write_text(page, encoding="utf-8"))
    return target


def report_files(report: Path | str) -> list[str]:
    """The names of the files beside `report` (what `dims report` lists)."""
    if isinstance(report, Path):
        return sorted(p.name for p in report.parent.iterdir() if p.is_file())
    store = open_store(report.rsplit("/", 1)[0])
    return sorted(info.base_name for info in store.files(""))
