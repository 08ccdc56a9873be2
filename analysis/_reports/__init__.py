"""Capacity and image-version reports over the Parquet dataset, as pandas DataFrames.

Every function takes a dataset folder (the latest snapshot is used) or a `Snapshot` from
`load_snapshot(out_dir, snapshot_date)` — load once when calling several in a notebook:

    snap = load_snapshot("dims-data")
    capacity_summary(snap); image_version_summary(snap); anomalies(snap)

Frames are tidy: one row per entity (no "all" or "total" rows: the fleet's figures come from
`fleet_totals`, `overcommit_total`, `db_capacity_total` and `newest_share_total`), counts
as integers, text (ids, names, types, versions) in pandas' one string dtype `str`.

Costs: every capacity frame carries monthly costs in US dollars (`*_usd_month`) under a
`PriceSheet` (default: OpenCost's custom-pricing defaults, 730 hours a month); pass
`prices=load_prices("prices.yaml")` to use your own. Costs are never silently lower than the
truth: an unpriced deployment (`unpriced_reason`) has null costs and one with unbounded
limits (`limits_unbounded`) null limits-basis costs, and every total says how many it leaves
out (`deployments_unpriced`, `deployments_unbounded`). `cost_by(snap, "label:team")`
allocates by a label (or namespace, workspace, type), OpenCost's way, and `allocated` names
each deployment's group; `headline(snap)` is the month in a few figures.

Workspaces: every frame about deployments carries `tenant_id`; `capacity_by(snap,
["tenant_id"])` breaks the organisation down by workspace, and `load_snapshot(…, tenant_ids=[…])` or
`diff(…, tenant_ids=[…])` narrow a report or a diff to some workspaces.

Image versions sort in version order, not as text (0.10.1 is newer than 0.4.12):
`sort_versions`, `version_rank` (a pandas sort key), `version_key`, `parse_version`.

`write_report` writes the files of `dims report` (`report_files` lists them); `diff` is
`dims diff`, and `changed_deployments(diff(...))` the deployments it lists.

Inside, each module one job: `_frames` (a snapshot loaded once), `_measures`, `_prices`,
`_capacity`, `_images` and `_versions`, `_history` (across snapshots, `diff`), `_charts`,
`_html` and `_report` (the HTML report and its files).
"""

# older paths of three classes (their home is `dims._errors`, their door `analysis`)
from dims._errors import DatasetError as DatasetError
from dims._errors import PriceSheetError as PriceSheetError
from dims._errors import ReportError as ReportError
from dims._errors import UnknownPriceTypeWarning as UnknownPriceTypeWarning
from dims._reports._allocation import UNALLOCATED, allocated, cost_by
from dims._reports._allocation import parse_keys as allocation_keys
from dims._reports._capacity import (
    anomalies,
    capacity_by,
    capacity_summary,
    component_capacity,
    cost_by_deployment,
    db_capacity,
    db_capacity_total,
    deployment_totals,
    fleet_totals,
    largest_deployments,
    overcommit,
    overcommit_total,
    pod_requests,
    rightsizing,
)
from dims._reports._charts import component_colors
from dims._reports._cost_history import cost_history, group_cost_changes
from dims._reports._explain import Explanation, explain
from dims._reports._explain_text import lines as explain_lines
from dims._reports._focus import BASIS_WORDS as FOCUS_BASIS_WORDS
from dims._reports._focus import (
    FOCUS_VERSION,
    FOCUS_VERSIONS,
    FocusExport,
    focus_format,
    focus_table,
    write_focus,
)
from dims._reports._focus import SCHEMAS as FOCUS_SCHEMAS
from dims._reports._frames import Snapshot, load_deployment, load_snapshot, snapshot_days
from dims._reports._headline import headline
from dims._reports._headline import lines as headline_lines
from dims._reports._history import (
    DiffResult,
    changed_deployments,
    diff,
    version_changes,
    versions_over_time,
)
from dims._reports._images import (
    deployments_behind,
    image_version_summary,
    newest_share_by_type,
    newest_share_total,
    newest_version,
    pending_rollouts,
    versions_by_type,
)
from dims._reports._metrics import (
    MAX_SERIES,
    MIN_SERIES,
    MetricFamily,
    MetricSample,
    format_metrics,
    metric_families,
    metrics_text,
)
from dims._reports._prices import (
    COST_CEILING_USD,
    DEFAULT_PRICES,
    HOURS_PER_MONTH,
    PriceSheet,
    load_prices,
)
from dims._reports._report import build_html, report_files, write_report
from dims._reports._versions import parse_version, sort_versions, version_key, version_rank

__all__ = [
    "COST_CEILING_USD",
    "DEFAULT_PRICES",
    "FOCUS_BASIS_WORDS",
    "FOCUS_SCHEMAS",
    "FOCUS_VERSION",
    "FOCUS_VERSIONS",
    "HOURS_PER_MONTH",
    "MAX_SERIES",
    "MIN_SERIES",
    "UNALLOCATED",
    "DiffResult",
    "Explanation",
    "FocusExport",
    "MetricFamily",
    "MetricSample",
    "PriceSheet",
    "Snapshot",
    "allocated",
    "allocation_keys",
    "anomalies",
    "build_html",
    "capacity_by",
    "capacity_summary",
    "changed_deployments",
    "component_capacity",
    "component_colors",
    "cost_by",
    "cost_by_deployment",
    "cost_history",
    "db_capacity",
    "db_capacity_total",
    "deployment_totals",
    "deployments_behind",
    "diff",
    "explain",
    "explain_lines",
    "fleet_totals",
    "focus_format",
    "focus_table",
    "format_metrics",
    "group_cost_changes",
    "headline",
    "headline_lines",
    "image_version_summary",
    "largest_deployments",
    "load_deployment",
    "load_prices",
    "load_snapshot",
    "metric_families",
    "metrics_text",
    "newest_share_by_type",
    "newest_share_total",
    "newest_version",
    "overcommit",
    "overcommit_total",
    "parse_version",
    "pending_rollouts",
    "pod_requests",
    "report_files",
    "rightsizing",
    "snapshot_days",
    "sort_versions",
    "version_changes",
    "version_key",
    "version_rank",
    "versions_by_type",
    "versions_over_time",
    "write_focus",
    "write_report",
]
