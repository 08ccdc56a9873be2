"""A snapshot's costs in the FinOps Foundation's FOCUS 1.0 format, the open schema cloud
providers export their bills in, so the FinOps team's tools merge dims's figures with them.

Why 1.0: it is the version the official validator (`focus-validator` 1.0.0) checks; its
later releases need a newer Python and contradict themselves (docs/focus.md).

One row per deployment and component (`component_capacity`'s rows: main, queue, …, db,
`sidecars_init`), priced as the report prices it, on one basis (requests at max scale by
default, the report's headline figure: what the scheduler reserves once autoscaling has
scaled out; `x_CostBasis`, `x_CostScale` say which). So the rows sum to the report's figures
to the cent: per deployment `cost_by_deployment`, in total `fleet_totals`.

The choices FOCUS leaves to the provider, made here (docs/focus.md has them all):
- The charge is a month at the snapshot's sizes: BillingPeriod and ChargePeriod are the
  calendar month of the snapshot date (UTC), PricingQuantity the price sheet's hours in a
  month (730 by default, as the report), PricingUnit `Hours`.
- There is no discount, commitment or invoice apart from the price sheet: ListCost,
  ContractedCost, EffectiveCost and BilledCost are the same figure, the unit prices that
  figure per hour. dims measures no usage, so ConsumedQuantity and ConsumedUnit are null.
- Unpriced deployments are left out, never $0 (FOCUS's costs may not be null): the export
  counts them by reason. On the limits basis so are those whose limits are unbounded.
- Tags: the deployment's labels as they are (user-defined), then dims's own under the
  `dims/` prefix (type, namespace, workspace); a label keeps its key and value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from dims import _escape as escape
from dims._atomic import write_atomic
from dims._errors import ReportError
from dims._reports import _capacity as cap
from dims._reports import _prices as pr
from dims._reports._frames import Snapshot, as_snapshot
from dims._reports._measures import BASES, SCALES, total_column

FOCUS_VERSION = "1.0"
#: Who makes the resources available and who would bill them (FOCUS needs a name each).
PROVIDER = "Deployment and Integration Management Service"
BILLING_ACCOUNT_ID = "dims"
BILLING_ACCOUNT_NAME = "dims cost estimate"
SERVICE_NAME = "Deployments"
#: The prefix of the tags dims defines itself (FOCUS: provider-defined tags are prefixed).
TAG_PREFIX = "dims/"
#: FOCUS's ServiceCategory of each component (every other one is Compute).
SERVICE_CATEGORY = {"db": "Databases"}
#: What a file's name may end with, and the format written.
FORMATS = (".parquet", ".csv")

_TEXT = pa.string()
_MONEY = pa.float64()
_TIME = pa.timestamp("us", tz="UTC")

#: FOCUS 1.0's columns in the specification's order, then dims's own (`x_`), typed.
SCHEMA = pa.schema(
    [
        ("AvailabilityZone", _TEXT),
        ("BilledCost", _MONEY),
        ("BillingAccountId", _TEXT),
        ("BillingAccountName", _TEXT),
        ("BillingCurrency", _TEXT),
        ("BillingPeriodEnd", _TIME),
        ("BillingPeriodStart", _TIME),
        ("ChargeCategory", _TEXT),
        ("ChargeClass", _TEXT),
        ("ChargeDescription", _TEXT),
        ("ChargeFrequency", _TEXT),
        ("ChargePeriodEnd", _TIME),
        ("ChargePeriodStart", _TIME),
        ("CommitmentDiscountCategory", _TEXT),
        ("CommitmentDiscountId", _TEXT),
        ("CommitmentDiscountName", _TEXT),
        ("CommitmentDiscountStatus", _TEXT),
        ("CommitmentDiscountType", _TEXT),
        ("ConsumedQuantity", _MONEY),
        ("ConsumedUnit", _TEXT),
        ("ContractedCost", _MONEY),
        ("ContractedUnitPrice", _MONEY),
        ("EffectiveCost", _MONEY),
        ("InvoiceIssuerName", _TEXT),
        ("ListCost", _MONEY),
        ("ListUnitPrice", _MONEY),
        ("PricingCategory", _TEXT),
        ("PricingQuantity", _MONEY),
        ("PricingUnit", _TEXT),
        ("ProviderName", _TEXT),
        ("PublisherName", _TEXT),
        ("RegionId", _TEXT),
        ("RegionName", _TEXT),
        ("ResourceId", _TEXT),
        ("ResourceName", _TEXT),
        ("ResourceType", _TEXT),
        ("ServiceCategory", _TEXT),
        ("ServiceName", _TEXT),
        ("SkuId", _TEXT),
        ("SkuPriceId", _TEXT),
        ("SubAccountId", _TEXT),
        ("SubAccountName", _TEXT),
        ("Tags", _TEXT),
        ("x_SnapshotDate", pa.date32()),
        ("x_CostBasis", _TEXT),
        ("x_CostScale", _TEXT),
        ("x_Component", _TEXT),
        ("x_DeploymentType", _TEXT),
        ("x_Namespace", _TEXT),
        ("x_WorkspaceId", _TEXT),
        ("x_Replicas", pa.int64()),
        ("x_CpuCores", pa.float64()),
        ("x_MemoryGiB", pa.float64()),
        ("x_StorageGiB", pa.float64()),
        ("x_CpuCost", _MONEY),
        ("x_MemoryCost", _MONEY),
        ("x_StorageCost", _MONEY),
        ("x_CpuCoreHour", _MONEY),
        ("x_MemoryGiBHour", _MONEY),
        ("x_StorageGiBMonth", _MONEY),
        ("x_HoursPerMonth", pa.float64()),
        ("x_PriceSheet", _TEXT),
        ("x_ScaleInverted", pa.bool_()),
        ("x_LimitsUnbounded", pa.bool_()),
    ]
)


@dataclass(frozen=True)
class FocusExport:
    """The FOCUS rows of one snapshot and what was left out of them."""

    table: pa.Table
    basis: str
    scale: str
    #: deployments with rows
    deployments: int
    #: deployments left out (no row: their cost on this basis is unknown), by reason
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def effective_cost(self) -> float:
        """The sum of EffectiveCost, in US dollars (full precision)."""
        return float(np.sum(self.table.column("EffectiveCost").to_numpy()))

    def summary(self) -> dict[str, Any]:
        """What `dims report --json` says of the export (the file is added by the caller)."""
        return {
            "focus_version": FOCUS_VERSION,
            "basis": self.basis,
            "scale": self.scale,
            "rows": self.table.num_rows,
            "deployments": self.deployments,
            "effective_cost_usd": round(self.effective_cost, 2),
            "deployments_left_out": sum(self.left_out.values()),
            "left_out_reasons": dict(sorted(self.left_out.items())),
        }


def check_basis(basis: str, scale: str) -> None:
    if basis not in BASES or scale not in SCALES:
        raise ReportError(
            f"no cost basis {basis!r} at {scale!r} scale: the basis is one of "
            f"{', '.join(BASES)} and the scale one of {', '.join(SCALES)}"
        )


def focus_table(
    source: Snapshot | str,
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
    basis: str = "request",
    scale: str = "max",
) -> FocusExport:
    """The snapshot's costs as FOCUS 1.0 rows: one per deployment and component, priced on
    `basis` (request or limit) at `scale` (min or max) under `prices`.

    Deployments whose cost on that basis is unknown are left out and counted by reason
    (`FocusExport.left_out`): FOCUS has no null cost, and $0 would understate the bill.
    """
    check_basis(basis, scale)
    snap = as_snapshot(source)
    rows = pr.add_costs(cap.component_capacity(snap), prices)
    known = rows["unpriced_reason"].isna()
    if basis == "limit":
        known &= ~rows["limits_unbounded"].astype(bool)
    left = rows.loc[~known].drop_duplicates("deployment_id")
    reasons = left["unpriced_reason"].astype("object").fillna("limits_unbounded")
    rows = rows.loc[known].reset_index(drop=True)
    table = _table(snap, rows, prices, basis, scale)
    return FocusExport(
        table,
        basis,
        scale,
        deployments=int(rows["deployment_id"].nunique()),
        left_out={str(k): int(v) for k, v in reasons.value_counts().items()},
    )


def _month(day: date) -> tuple[datetime, datetime]:
    """The calendar month holding `day`, as FOCUS bounds it: [first day, next first day)."""
    start = datetime(day.year, day.month, 1, tzinfo=UTC)
    after = (day.year + 1, 1) if day.month == 12 else (day.year, day.month + 1)
    return start, datetime(*after, 1, tzinfo=UTC)


def _tags(snap: Snapshot, rows: pd.DataFrame) -> list[str]:
    """Each row's Tags: its deployment's labels as they are, then dims's own (prefixed)."""
    labels: dict[str, dict[str, object]] = {}
    for deployment, key, value in snap.labels[["deployment_id", "key", "value"]].itertuples(
        index=False
    ):
        labels.setdefault(str(deployment), {})[str(key)] = None if pd.isna(value) else value
    own = {"deployment_type": "deployment_type", "k8s_namespace": "k8s_namespace"}
    own["workspace"] = "tenant_id"
    tags = []
    for row in rows[["deployment_id", *own.values()]].itertuples(index=False):
        found = dict(labels.get(str(row[0]), {}))
        for (name, _), value in zip(own.items(), row[1:], strict=True):
            if not pd.isna(value):
                found.setdefault(f"{TAG_PREFIX}{name}", value)
        tags.append(json.dumps(found, sort_keys=True, ensure_ascii=False))
    return tags


def _costs(rows: pd.DataFrame, basis: str, scale: str) -> dict[str, np.ndarray]:
    def money(column: str) -> np.ndarray:
        return rows[column].to_numpy("float64", na_value=np.nan)

    return {
        "total": money(pr.cost_column(basis, scale)),
        "cpu": money(pr.cost_column(basis, scale, "cpu")),
        "memory": money(pr.cost_column(basis, scale, "memory")),
        "storage": money(pr.STORAGE_COST),
    }


def _table(
    snap: Snapshot, rows: pd.DataFrame, prices: pr.PriceSheet, basis: str, scale: str
) -> pa.Table:
    count = len(rows)
    day = date.fromisoformat(snap.snapshot_date)
    start, end = _month(day)
    costs = _costs(rows, basis, scale)
    hours = prices.hours_per_month
    columns: dict[str, Any] = {name: [None] * count for name in SCHEMA.names}
    columns.update(_identity(snap, rows, basis, scale))
    columns.update(
        BilledCost=costs["total"],
        EffectiveCost=costs["total"],
        ListCost=costs["total"],
        ContractedCost=costs["total"],
        ListUnitPrice=costs["total"] / hours if hours else costs["total"],
        ContractedUnitPrice=costs["total"] / hours if hours else costs["total"],
        PricingQuantity=np.full(count, hours),
        PricingUnit=["Hours"] * count,
        BillingPeriodStart=[start] * count,
        BillingPeriodEnd=[end] * count,
        ChargePeriodStart=[start] * count,
        ChargePeriodEnd=[end] * count,
        x_SnapshotDate=[day] * count,
    )
    columns.update(_measures(rows, costs, prices, basis, scale))
    arrays = [pa.array(columns[f.name], f.type) for f in SCHEMA]
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def _texts(column: pd.Series) -> list[str | None]:
    """A text column as Arrow takes it: None where the record had no value (pandas' NaN,
    which a string array refuses: a deployment without a tenant_id or listener_config)."""
    return column.astype("object").where(column.notna(), None).tolist()


def _identity(snap: Snapshot, rows: pd.DataFrame, basis: str, scale: str) -> dict[str, Any]:
    """The columns that say whose charge a row is and what it is for."""
    count = len(rows)
    component = rows["component"].astype("object").tolist()
    kind = _texts(rows["deployment_type"])
    sku = [f"{TAG_PREFIX}{k or 'untyped'}/{c}" for k, c in zip(kind, component, strict=True)]
    ids = _texts(rows["deployment_id"])
    names = _texts(rows["name"])
    replicas = rows[f"replicas_{scale}"].to_numpy("int64")
    return {
        "BillingAccountId": [BILLING_ACCOUNT_ID] * count,
        "BillingAccountName": [BILLING_ACCOUNT_NAME] * count,
        "BillingCurrency": ["USD"] * count,
        "ChargeCategory": ["Usage"] * count,
        "ChargeFrequency": ["Usage-Based"] * count,
        "ChargeDescription": [
            f"{c} of {k or 'untyped'} deployment {n or '(no name)'}: {basis}s at {scale} scale, "
            f"{r} replica{'s' if r != 1 else ''}, a month"
            for c, k, n, r in zip(component, kind, names, replicas, strict=True)
        ],
        "PricingCategory": ["Standard"] * count,
        "ProviderName": [PROVIDER] * count,
        "PublisherName": [PROVIDER] * count,
        "InvoiceIssuerName": [PROVIDER] * count,
        "ResourceId": ids,
        "ResourceName": names,
        "ResourceType": ["Deployment"] * count,
        "ServiceCategory": [SERVICE_CATEGORY.get(c, "Compute") for c in component],
        "ServiceName": [SERVICE_NAME] * count,
        "SkuId": sku,
        "SkuPriceId": [f"{s}/{i}/{basis}-{scale}" for s, i in zip(sku, ids, strict=True)],
        "SubAccountId": _texts(rows["tenant_id"]),
        "Tags": _tags(snap, rows),
        "x_CostBasis": [basis] * count,
        "x_CostScale": [scale] * count,
        "x_Component": component,
        "x_DeploymentType": kind,
        "x_Namespace": _texts(rows["k8s_namespace"]),
        "x_WorkspaceId": _texts(rows["tenant_id"]),
        "x_Replicas": replicas,
    }


def _measures(
    rows: pd.DataFrame,
    costs: dict[str, np.ndarray],
    prices: pr.PriceSheet,
    basis: str,
    scale: str,
) -> dict[str, Any]:
    """What the cost is made of: quantities, rates, parts, and the pricing flags."""
    rates = pr.rates_of(prices, rows["deployment_type"])
    count = len(rows)

    def floats(column: str) -> np.ndarray:
        return rows[column].to_numpy("float64", na_value=np.nan)

    return {
        "x_CpuCores": floats(total_column("cpu", basis, scale)),
        "x_MemoryGiB": floats(total_column("memory", basis, scale)),
        "x_StorageGiB": np.nan_to_num(floats("db_storage_gib")),
        "x_CpuCost": costs["cpu"],
        "x_MemoryCost": costs["memory"],
        "x_StorageCost": costs["storage"],
        "x_CpuCoreHour": rates["cpu_core_hour"],
        "x_MemoryGiBHour": rates["memory_gib_hour"],
        "x_StorageGiBMonth": rates["storage_gib_month"],
        "x_HoursPerMonth": np.full(count, prices.hours_per_month),
        "x_PriceSheet": [prices.name or "defaults"] * count,
        "x_ScaleInverted": rows["scale_inverted"].to_numpy(bool),
        "x_LimitsUnbounded": rows["limits_unbounded"].to_numpy(bool),
    }


def focus_format(path: str | Path) -> str:
    """`parquet` or `csv`, by the file's name; a ReportError for any other name."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ReportError(
            f"{path}: a FOCUS file is written as Parquet or CSV, chosen by its name: "
            f"end it with {' or '.join(FORMATS)}"
        )
    return suffix[1:]


def write_focus(export: FocusExport, path: str | Path) -> Path:
    """`export` written to `path` (Parquet, or CSV when it ends in .csv) whole or not at
    all: to a temporary file beside it, renamed into place (an earlier file stays until)."""
    target = Path(path)
    kind = focus_format(target)
    table = export.table
    if kind == "csv":
        write: Callable[[Path], object] = lambda temp: _write_csv(table, temp)  # noqa: E731
    else:
        write = lambda temp: _write_parquet(table, temp, export.basis)  # noqa: E731
    _atomic_write(target, write)
    return target


def _write_parquet(table: pa.Table, path: Path, basis: str) -> None:
    """The bill as Parquet, its FOCUS version and cost basis in the file's metadata: also
    for a bill of no row (every deployment unpriced), whose basis no row can tell."""
    import pyarrow.parquet as pq

    metadata = {"focus_version": FOCUS_VERSION, "dims_focus_basis": basis}
    pq.write_table(table.replace_schema_metadata(metadata), path, compression="zstd")


def csv_cells(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """A text column as CSV cells (`dims._escape.csv_cell`): a cell a spreadsheet would
    read as a formula (`=`, `+`, `-`, `@`, a tab or CR first) prefixed with `'`. For every
    CSV dims writes; never for Parquet, whose text is data, not a sheet's input."""
    import pyarrow.compute as pc

    first = pc.utf8_slice_codeunits(column, 0, 1)
    risky = pc.is_in(first, value_set=pa.array(escape.CSV_FORMULA_LEAD, _TEXT))
    if not pc.any(risky).as_py():
        return column
    cells = [None if v is None else escape.csv_cell(v) for v in column.to_pylist()]
    return pa.array(cells, _TEXT)


def _write_csv(table: pa.Table, path: Path) -> None:
    """CSV with FOCUS's Date/Time format (`2025-06-01T00:00:00Z`; pyarrow's CSV writer
    writes a space and fractions), every Decimal as a decimal (`730.0`, not `730`, which
    a reader of the text, the validator among them, takes for an integer column) and every
    text cell safe to open in a spreadsheet (`csv_cells`)."""
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    for at, column in enumerate(table.schema):
        if column.type == _TEXT:
            text = csv_cells(table[column.name])
        elif column.type == _TIME:
            seconds = table[column.name].cast(pa.timestamp("s", tz="UTC"))
            text = pc.strftime(seconds, format="%Y-%m-%dT%H:%M:%SZ")
        elif column.type == pa.float64():
            values = table[column.name].to_pylist()
            text = pa.array([None if v is None else repr(v) for v in values], _TEXT)
        else:
            continue
        table = table.set_column(at, column.name, text)
    pacsv.write_csv(table, path)


def _atomic_write(target: Path, write: Callable[[Path], object]) -> None:
    """`write` into a temporary file beside `target`, then renamed over it: a reader never
    sees half a file, and a failure leaves the earlier file (or none) as it was."""
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise ReportError(f"{target}: its folder {folder} does not exist: create it first")
    if target.is_dir():
        raise ReportError(f"{target} is a folder: name the FOCUS file to write in it")
    write_atomic(target, write)  # an OSError names `target`, never the temporary file
