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

The names below are imported on first use (`dims._lazy`), so that `dims explain` or a
notebook asking for one report loads only that report's modules, not all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dims import _lazy

# older paths of three classes (their home is `dims._errors`, their door `analysis`)
from dims._errors import DatasetError as DatasetError
from dims._errors import PriceSheetError as PriceSheetError
from dims._errors import ReportError as ReportError
from dims._errors import UnknownPriceTypeWarning as UnknownPriceTypeWarning

if TYPE_CHECKING:
    from ._allocation import UNALLOCATED as UNALLOCATED
    from ._allocation import allocated as allocated
    from ._allocation import allocation_keys as allocation_keys
    from ._allocation import cost_by as cost_by
    from ._capacity import anomalies as anomalies
    from ._capacity import capacity_by as capacity_by
    from ._capacity import capacity_summary as capacity_summary
    from ._capacity import component_capacity as component_capacity
    from ._capacity import cost_by_deployment as cost_by_deployment
    from ._capacity import db_capacity as db_capacity
    from ._capacity import db_capacity_total as db_capacity_total
    from ._capacity import deployment_totals as deployment_totals
    from ._capacity import fleet_totals as fleet_totals
    from ._capacity import largest_deployments as largest_deployments
    from ._capacity import overcommit as overcommit
    from ._capacity import overcommit_total as overcommit_total
    from ._capacity import pod_requests as pod_requests
    from ._capacity import rightsizing as rightsizing
    from ._charts import component_colors as component_colors
    from ._cost_history import cost_history as cost_history
    from ._cost_history import group_cost_changes as group_cost_changes
    from ._explain import Explanation as Explanation
    from ._explain import explain as explain
    from ._explain_text import explain_lines as explain_lines
    from ._focus import FOCUS_BASIS_WORDS as FOCUS_BASIS_WORDS
    from ._focus import FOCUS_SCHEMAS as FOCUS_SCHEMAS
    from ._focus import FOCUS_VERSION as FOCUS_VERSION
    from ._focus import FOCUS_VERSIONS as FOCUS_VERSIONS
    from ._focus import FocusExport as FocusExport
    from ._focus import focus_format as focus_format
    from ._focus import focus_table as focus_table
    from ._focus import write_focus as write_focus
    from ._frames import Snapshot as Snapshot
    from ._frames import load_deployment as load_deployment
    from ._frames import load_snapshot as load_snapshot
    from ._frames import snapshot_days as snapshot_days
    from ._headline import headline as headline
    from ._headline import headline_lines as headline_lines
    from ._history import DiffResult as DiffResult
    from ._history import changed_deployments as changed_deployments
    from ._history import diff as diff
    from ._history import version_changes as version_changes
    from ._history import versions_over_time as versions_over_time
    from ._images import deployments_behind as deployments_behind
    from ._images import image_version_summary as image_version_summary
    from ._images import newest_share_by_type as newest_share_by_type
    from ._images import newest_share_total as newest_share_total
    from ._images import newest_version as newest_version
    from ._images import pending_rollouts as pending_rollouts
    from ._images import versions_by_type as versions_by_type
    from ._metrics import MAX_SERIES as MAX_SERIES
    from ._metrics import MIN_SERIES as MIN_SERIES
    from ._metrics import MetricFamily as MetricFamily
    from ._metrics import MetricSample as MetricSample
    from ._metrics import format_metrics as format_metrics
    from ._metrics import metric_families as metric_families
    from ._metrics import metrics_text as metrics_text
    from ._prices import COST_CEILING_USD as COST_CEILING_USD
    from ._prices import DEFAULT_PRICES as DEFAULT_PRICES
    from ._prices import HOURS_PER_MONTH as HOURS_PER_MONTH
    from ._prices import PriceSheet as PriceSheet
    from ._prices import load_prices as load_prices
    from ._report import build_html as build_html
    from ._report import report_files as report_files
    from ._report import write_report as write_report
    from ._versions import parse_version as parse_version
    from ._versions import sort_versions as sort_versions
    from ._versions import version_key as version_key
    from ._versions import version_rank as version_rank

__getattr__, __dir__, __all__ = _lazy.exports(__name__, globals())
