"""dims: what a fleet of agent deployments runs, what it costs, which image versions it is on.

The one door. Everything a user needs is a name here; everything under it (`dims._x`) is
the house, free to change:

- the SDK: `Client` and `AsyncClient` (`client.deployments.list()`, listings that page by
  themselves, `with_options`, `with_raw_response`, typed errors), openai-python's shape;
- the export: `take_snapshot` (the service, one or several workspaces) and
  `snapshot_from_dump` write one day of the Parquet dataset;
- the dataset: `read_table`, `read_tables`, `snapshot_dates`, `duckdb_connection`,
  `write_catalog`, the `Manifest` and the tables' schemas;
- the reports: `load_snapshot` once, then `capacity_by`, `cost_by`, `fleet_totals`,
  `headline`, `diff`, `explain`, `write_report`, `write_focus`, `metric_families`, …;
- the gate: `check` with `load_rules`;
- every error and warning dims gives on purpose (`DimsError`, `DimsWarning` at their roots);
- `sandbox`, the embedded service `dims demo` runs.

Names are imported on first use (`dims._lazy`), so that `dims --help` or an export loads only
what it needs. The list below is the public set: tests/spec/test_structure.py holds it, and
docs/reference/dims.md documents each name once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy

if TYPE_CHECKING:
    from . import sandbox as sandbox
    from ._connection import RetryPolicy as RetryPolicy
    from ._errors import APIConnectionError as APIConnectionError
    from ._errors import APIStatusError as APIStatusError
    from ._errors import APITimeoutError as APITimeoutError
    from ._errors import AuthenticationError as AuthenticationError
    from ._errors import CodeHostWarning as CodeHostWarning
    from ._errors import ConfigurationError as ConfigurationError
    from ._errors import DatasetError as DatasetError
    from ._errors import DeadlineExceededError as DeadlineExceededError
    from ._errors import DeploymentLookupError as DeploymentLookupError
    from ._errors import DimsError as DimsError
    from ._errors import DimsWarning as DimsWarning
    from ._errors import DumpError as DumpError
    from ._errors import DuplicateDeploymentsWarning as DuplicateDeploymentsWarning
    from ._errors import ExportError as ExportError
    from ._errors import ExportWaitWarning as ExportWaitWarning
    from ._errors import GroupNameWarning as GroupNameWarning
    from ._errors import LeaseLost as LeaseLost
    from ._errors import ListingShiftedWarning as ListingShiftedWarning
    from ._errors import ManifestError as ManifestError
    from ._errors import MissingExtraError as MissingExtraError
    from ._errors import NameCollisionWarning as NameCollisionWarning
    from ._errors import NotCompiledWarning as NotCompiledWarning
    from ._errors import NotFoundError as NotFoundError
    from ._errors import ObjectStoreError as ObjectStoreError
    from ._errors import OriginalNameConflictWarning as OriginalNameConflictWarning
    from ._errors import PaginationError as PaginationError
    from ._errors import PagingWarning as PagingWarning
    from ._errors import PermissionDeniedError as PermissionDeniedError
    from ._errors import PriceSheetError as PriceSheetError
    from ._errors import RateLimitError as RateLimitError
    from ._errors import RejectedRecordError as RejectedRecordError
    from ._errors import ReportError as ReportError
    from ._errors import ResponseFormatError as ResponseFormatError
    from ._errors import ResponseTooLargeError as ResponseTooLargeError
    from ._errors import RulesError as RulesError
    from ._errors import SeriesLimitWarning as SeriesLimitWarning
    from ._errors import ServerError as ServerError
    from ._errors import TenantMismatchWarning as TenantMismatchWarning
    from ._errors import UnknownGroupWarning as UnknownGroupWarning
    from ._errors import UnknownPriceTypeWarning as UnknownPriceTypeWarning
    from ._errors import UnreadableQuantityWarning as UnreadableQuantityWarning
    from ._errors import ValidationError as ValidationError
    from ._errors import WorkerLost as WorkerLost
    from ._errors import WorkspacesFailed as WorkspacesFailed
    from ._options import DeploymentFilters as DeploymentFilters
    from ._options import ExportOptions as ExportOptions
    from ._options import Filters as Filters
    from ._policy import CheckResult as CheckResult
    from ._policy import Rules as Rules
    from ._policy import check as check
    from ._policy import load_rules as load_rules
    from ._progress import Progress as Progress
    from ._reports import DEFAULT_PRICES as DEFAULT_PRICES
    from ._reports import HOURS_PER_MONTH as HOURS_PER_MONTH
    from ._reports import MAX_SERIES as MAX_SERIES
    from ._reports import UNALLOCATED as UNALLOCATED
    from ._reports import DiffResult as DiffResult
    from ._reports import Explanation as Explanation
    from ._reports import FocusExport as FocusExport
    from ._reports import PriceSheet as PriceSheet
    from ._reports import Snapshot as Snapshot
    from ._reports import allocated as allocated
    from ._reports import anomalies as anomalies
    from ._reports import capacity_by as capacity_by
    from ._reports import capacity_summary as capacity_summary
    from ._reports import changed_deployments as changed_deployments
    from ._reports import component_colors as component_colors
    from ._reports import cost_by as cost_by
    from ._reports import cost_by_deployment as cost_by_deployment
    from ._reports import cost_history as cost_history
    from ._reports import db_capacity as db_capacity
    from ._reports import db_capacity_total as db_capacity_total
    from ._reports import deployments_behind as deployments_behind
    from ._reports import diff as diff
    from ._reports import explain as explain
    from ._reports import explain_lines as explain_lines
    from ._reports import fleet_totals as fleet_totals
    from ._reports import focus_table as focus_table
    from ._reports import format_metrics as format_metrics
    from ._reports import group_cost_changes as group_cost_changes
    from ._reports import headline as headline
    from ._reports import image_version_summary as image_version_summary
    from ._reports import largest_deployments as largest_deployments
    from ._reports import load_prices as load_prices
    from ._reports import load_snapshot as load_snapshot
    from ._reports import metric_families as metric_families
    from ._reports import metrics_text as metrics_text
    from ._reports import newest_share_by_type as newest_share_by_type
    from ._reports import newest_share_total as newest_share_total
    from ._reports import newest_version as newest_version
    from ._reports import overcommit as overcommit
    from ._reports import overcommit_total as overcommit_total
    from ._reports import pending_rollouts as pending_rollouts
    from ._reports import report_files as report_files
    from ._reports import rightsizing as rightsizing
    from ._reports import snapshot_days as snapshot_days
    from ._reports import sort_versions as sort_versions
    from ._reports import version_key as version_key
    from ._reports import version_rank as version_rank
    from ._reports import versions_by_type as versions_by_type
    from ._reports import versions_over_time as versions_over_time
    from ._reports import write_focus as write_focus
    from ._reports import write_report as write_report
    from ._sdk import APIResponse as APIResponse
    from ._sdk import AsyncClient as AsyncClient
    from ._sdk import AsyncDeploymentListing as AsyncDeploymentListing
    from ._sdk import Client as Client
    from ._sdk import ClientOptions as ClientOptions
    from ._sdk import DeploymentListing as DeploymentListing
    from ._sdk import take_snapshot as take_snapshot
    from ._snapshot import ExportResult as ExportResult
    from ._snapshot import snapshot_from_dump as snapshot_from_dump
    from ._storage import duckdb_connection as duckdb_connection
    from ._storage import read_table as read_table
    from ._storage import read_tables as read_tables
    from ._storage import snapshot_dates as snapshot_dates
    from ._storage import write_catalog as write_catalog
    from ._storage.manifest import Manifest as Manifest
    from ._tables import SCHEMA_VERSION as SCHEMA_VERSION
    from ._tables import TABLE_NAMES as TABLE_NAMES
    from ._tables import TABLE_SCHEMAS as TABLE_SCHEMAS

__getattr__, __dir__, __all__ = _lazy.exports(__name__, globals())
