"""The FOCUS 1.0 bill as dims built it before its columns were Arrow arrays: a Python
object per row (the tags one `json.dumps` each, the texts f-strings). Slow, but plainly
right, so it is the independent computation `dims._reports._focus` is held to
(tests/reports/test_focus.py: the same table, on fleets with hostile text and missing
optional objects), and the 1.2 bill's columns that 1.0 shares."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from dims._reports import Snapshot
from dims._reports import _capacity as cap
from dims._reports import _prices as pr
from dims._reports._focus import (
    BILLING_ACCOUNT_ID,
    BILLING_ACCOUNT_NAME,
    PROVIDER,
    SCHEMAS,
    SERVICE_CATEGORY,
    SERVICE_NAME,
    TAG_PREFIX,
)
from dims._reports._measures import total_column

SCHEMA = SCHEMAS["1.0"]


def focus_rows(
    snap: Snapshot, prices: pr.PriceSheet = pr.DEFAULT_PRICES, basis: str = "request",
    scale: str = "max",
) -> pa.Table:  # fmt: skip
    """The FOCUS 1.0 table of `snap`, row by row."""
    rows = pr.add_costs(cap.component_capacity(snap), prices)
    known = rows["unpriced_reason"].isna()
    if basis == "limit":
        known &= ~rows["limits_unbounded"].astype(bool)
    return _table(snap, rows.loc[known].reset_index(drop=True), prices, basis, scale)


def _month(day: date) -> tuple[datetime, datetime]:
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
