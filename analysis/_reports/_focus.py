"""A snapshot's costs in the FinOps Foundation's FOCUS format, the open schema cloud
providers export their bills in, so the FinOps team's tools merge dims's figures with them.

FOCUS 1.2 by default, the version the Foundation's current validator (`focus-validator`
2.2.1) checks; 1.0 on request (`--focus-version 1.0`) for tools that read only that, the
same file as before 1.2 came. docs/finops-and-bi.md has every choice; in short:

One row per deployment and component (`component_capacity`'s rows: main, queue, …, db,
`sidecars_init`), priced as the report prices it, on one basis (requests at max scale by
default, the report's headline figure: what the scheduler reserves once autoscaling has
scaled out, the worst case of that; `x_CostBasis`, `x_CostScale` say which, and 1.2's
`x_CostBasisDescription` and ChargeDescription say it in words). So the rows sum to the
report's figures to the cent: per deployment `cost_by_deployment`, in total `fleet_totals`.

The choices FOCUS leaves to the provider, made here:
- The charge is a month at the snapshot's sizes: BillingPeriod and ChargePeriod are the
  calendar month of the snapshot date (UTC), PricingQuantity the price sheet's hours in a
  month (730 by default, as the report), PricingUnit `Hours`.
- There is no discount, commitment or invoice apart from the price sheet: ListCost,
  ContractedCost, EffectiveCost and BilledCost are the same figure, the unit prices that
  figure per hour; 1.2's InvoiceId is null (an estimate is on no invoice) and its
  PricingCurrency is the BillingCurrency, USD. dims measures no usage, so ConsumedQuantity
  and ConsumedUnit are null.
- Unpriced deployments are left out, never $0 (FOCUS's costs may not be null): the export
  counts them by reason. On the limits basis so are those whose limits are unbounded.
- Tags: the deployment's labels as they are (user-defined), then dims's own under the
  `dims/` prefix (type, namespace, workspace); a label keeps its key and value.
- 1.2: one ServiceName per ServiceCategory and ServiceSubcategory (`SERVICES`), and the
  ChargeDescription in ASCII (`escape.ascii_text`: names of any script stay readable).

Every column is built as an Arrow array (pyarrow.compute, string joins over the whole
column, the tags joined per deployment): no Python object per row, so the bill costs
little beside the report (benchmarks/report.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dims import _escape as escape
from dims._atomic import write_atomic
from dims._errors import ReportError
from dims._reports import _capacity as cap
from dims._reports import _prices as pr
from dims._reports._frames import Snapshot, as_snapshot
from dims._reports._measures import BASES, SCALES, total_column

#: The FOCUS versions dims writes, the default first.
FOCUS_VERSIONS = ("1.2", "1.0")
FOCUS_VERSION = FOCUS_VERSIONS[0]
#: Who makes the resources available and who would bill them (FOCUS needs a name each).
PROVIDER = "Deployment and Integration Management Service"
BILLING_ACCOUNT_ID = "dims"
BILLING_ACCOUNT_NAME = "dims cost estimate"
SERVICE_NAME = "Deployments"
#: The prefix of the tags dims defines itself (FOCUS: provider-defined tags are prefixed).
TAG_PREFIX = "dims/"
#: FOCUS's ServiceCategory of each component (every other one is Compute).
SERVICE_CATEGORY = {"db": "Databases"}
#: FOCUS 1.2's service of each category: its ServiceName and ServiceSubcategory (1.2: a
#: ServiceName has one ServiceCategory and one ServiceSubcategory). A deployment's
#: components run as containers; its database is the one its type names, of no known kind.
SERVICES = {
    "Compute": ("Deployments", "Containers"),
    "Databases": ("Deployment databases", "Other (Databases)"),
}
#: What a file's name may end with, and the format written.
FORMATS = (".parquet", ".csv")
#: Each basis and scale in words: which case of the month's cost the rows carry.
BASIS_WORDS = {
    ("request", "max"): "requests at max scale, the worst case: what the scheduler reserves "
    "once autoscaling has scaled every deployment out",
    ("request", "min"): "requests at min scale, the least: what the scheduler reserves with "
    "no deployment scaled out",
    ("limit", "max"): "limits at max scale, the ceiling: the most the deployments may use, "
    "every one scaled out",
    ("limit", "min"): "limits at min scale: the most the deployments may use unscaled",
}

_TEXT = pa.string()
_MONEY = pa.float64()
_TIME = pa.timestamp("us", tz="UTC")

#: FOCUS 1.0's columns in the specification's order.
_COLUMNS_1_0: list[tuple[str, pa.DataType]] = [
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
]
#: dims's own columns (`x_`), the same in every version.
_COLUMNS_X: list[tuple[str, pa.DataType]] = [
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
#: The columns FOCUS 1.2 adds to 1.0's (for the Cost and Usage dataset); dims puts null in
#: those of what it has none of (capacity reservations, commitments, an invoice).
_ADDED_1_2: list[tuple[str, pa.DataType]] = [
    ("CapacityReservationId", _TEXT),
    ("CapacityReservationStatus", _TEXT),
    ("CommitmentDiscountQuantity", pa.float64()),
    ("CommitmentDiscountUnit", _TEXT),
    ("InvoiceId", _TEXT),
    ("PricingCurrency", _TEXT),
    ("PricingCurrencyContractedUnitPrice", _MONEY),
    ("PricingCurrencyEffectiveCost", _MONEY),
    ("PricingCurrencyListUnitPrice", _MONEY),
    ("ServiceSubcategory", _TEXT),
    ("SkuMeter", _TEXT),
    ("SkuPriceDetails", _TEXT),
]
#: Each version's schema: its FOCUS columns in the specification's (alphabetical) order,
#: then dims's own, typed.
SCHEMAS = {
    "1.0": pa.schema(_COLUMNS_1_0 + _COLUMNS_X),
    "1.2": pa.schema(
        sorted(_COLUMNS_1_0 + _ADDED_1_2) + _COLUMNS_X + [("x_CostBasisDescription", _TEXT)]
    ),
}
SCHEMA = SCHEMAS[FOCUS_VERSION]


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
    #: the FOCUS version of `table`
    version: str = FOCUS_VERSION

    @property
    def effective_cost(self) -> float:
        """The sum of EffectiveCost, in US dollars (full precision)."""
        return float(np.sum(self.table.column("EffectiveCost").to_numpy()))

    def summary(self) -> dict[str, Any]:
        """What `dims report --json` says of the export (the file is added by the caller)."""
        return {
            "focus_version": self.version,
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


def check_version(version: str) -> None:
    if version not in FOCUS_VERSIONS:
        raise ReportError(
            f"no FOCUS version {version!r}: dims writes {' or '.join(FOCUS_VERSIONS)}"
        )


def focus_table(
    source: Snapshot | str,
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
    basis: str = "request",
    scale: str = "max",
    version: str = FOCUS_VERSION,
) -> FocusExport:
    """The snapshot's costs as FOCUS rows (`version`: 1.2 or 1.0): one per deployment and
    component, priced on `basis` (request or limit) at `scale` (min or max) under `prices`.

    Deployments whose cost on that basis is unknown are left out and counted by reason
    (`FocusExport.left_out`): FOCUS has no null cost, and $0 would understate the bill.
    """
    check_basis(basis, scale)
    check_version(version)
    snap = as_snapshot(source)
    rows = pr.add_costs(cap.component_capacity(snap), prices)
    known = rows["unpriced_reason"].isna()
    if basis == "limit":
        known &= ~rows["limits_unbounded"].astype(bool)
    left = rows.loc[~known].drop_duplicates("deployment_id")
    reasons = left["unpriced_reason"].astype("object").fillna("limits_unbounded")
    rows = rows.loc[known].reset_index(drop=True)
    columns = _columns(snap, rows, prices, basis, scale, version)
    schema = SCHEMAS[version]
    table = pa.Table.from_arrays([columns[f.name] for f in schema], schema=schema)
    return FocusExport(
        table,
        basis,
        scale,
        deployments=int(rows["deployment_id"].nunique()),
        left_out={str(k): int(v) for k, v in reasons.value_counts().items()},
        version=version,
    )


def _month(day: date) -> tuple[datetime, datetime]:
    """The calendar month holding `day`, as FOCUS bounds it: [first day, next first day)."""
    start = datetime(day.year, day.month, 1, tzinfo=UTC)
    after = (day.year + 1, 1) if day.month == 12 else (day.year, day.month + 1)
    return start, datetime(*after, 1, tzinfo=UTC)


def _text(column: pd.Series) -> pa.Array:
    """A text column as Arrow text, null where the record had no value (pandas' NaN: a
    deployment without a tenant_id or listener_config), never the text "nan"."""
    return pa.array(column, _TEXT, from_pandas=True)


def _join(*parts: pa.Array | str) -> pa.Array:
    """The parts joined element by element (a str is the same in every row)."""
    return pc.binary_join_element_wise(*parts, "")


def _json_string(text: pa.Array) -> pa.Array:
    """Each text as a JSON string literal, as `json.dumps(..., ensure_ascii=False)` writes
    it: quoted, `\\` and `"` escaped, each control character as `\\n`, `\\u001b`, …"""
    text = pc.replace_substring(text, "\\", "\\\\")
    text = pc.replace_substring(text, '"', '\\"')
    if pc.any(pc.match_substring_regex(text, "[\\x00-\\x1f]")).as_py():
        named = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
        for code in range(0x20):
            char = chr(code)
            text = pc.replace_substring(text, char, named.get(char, f"\\u{code:04x}"))
    return _join('"', text, '"')


def _tags(snap: Snapshot, rows: pd.DataFrame) -> pa.Array:
    """Each row's Tags: its deployment's labels as they are, then dims's own (prefixed; a
    label of the same key wins, and of a key twice the later label), as one JSON object of
    sorted keys per deployment (what `json.dumps(sort_keys=True)` writes), joined in Arrow:
    the `"key": value` texts of a deployment (by its number: no sort of ids) joined in one
    list, then taken for each of its rows."""
    codes, uniques = pd.factorize(rows["deployment_id"])
    ids = pa.array(uniques, _TEXT)
    first = np.unique(codes, return_index=True)[1]
    labels = snap.labels
    owner = pc.index_in(_text(labels["deployment_id"]), ids)
    mine = pc.is_valid(owner).to_numpy(zero_copy_only=False)
    labels = labels[mine]
    parts = [
        pa.table(
            {
                "owner": owner.filter(pa.array(mine)),
                "key": _text(labels["key"]),
                "value": _text(labels["value"]),
                "rank": pa.array(-np.arange(len(labels), dtype=np.int64)),  # later first
            }
        )
    ]
    own = {"deployment_type": "deployment_type", "k8s_namespace": "k8s_namespace"}
    own["workspace"] = "tenant_id"
    for name, column in own.items():
        values = _text(rows[column].iloc[first])
        present = pc.is_valid(values)
        count = pc.sum(present).as_py() or 0
        parts.append(
            pa.table(
                {
                    "owner": pa.array(np.arange(len(ids), dtype=np.int32)).filter(present),
                    "key": pa.repeat(pa.scalar(f"{TAG_PREFIX}{name}", _TEXT), count),
                    "value": values.filter(present),
                    "rank": pa.array(np.ones(count, np.int64)),  # after every label
                }
            )
        )
    pairs = pa.concat_tables(parts).sort_by(
        [("owner", "ascending"), ("key", "ascending"), ("rank", "ascending")]
    )
    owners = pairs["owner"].combine_chunks()
    keep = pc.or_(_changes(owners), _changes(pairs["key"].combine_chunks()))
    pairs = pairs.filter(keep)  # a key once per deployment
    value = pc.if_else(pc.is_null(pairs["value"]), "null", _json_string(pairs["value"]))
    text = _join(_json_string(pairs["key"]), ": ", value).combine_chunks()
    sorted_owners = pairs["owner"].to_numpy()
    offsets = np.searchsorted(sorted_owners, np.arange(len(ids) + 1)).astype(np.int32)
    joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), text), ", ")
    return _join("{", joined, "}").take(pa.array(codes))


def _changes(values: pa.Array) -> pa.Array:
    """True where a value differs from the one before it (the first value: True)."""
    if len(values) == 0:
        return pa.array([], pa.bool_())
    differs = pc.not_equal(values[1:], values[:-1])
    return pa.concat_arrays([pa.array([True]), pc.fill_null(differs, True)])


def _or(text: pa.Array, default: str) -> pa.Array:
    """`text`, with `default` where it is null or empty (as `text or default` reads)."""
    empty = pc.fill_null(pc.equal(text, ""), True)
    return pc.if_else(empty, default, text)


def _repeat(value: Any, count: int, kind: pa.DataType = _TEXT) -> pa.Array:
    return pa.repeat(pa.scalar(value, kind), count)


def _ascii(text: pa.Array) -> pa.Array:
    """`text` in ASCII (`escape.ascii_text`), in Python only for the values that need it:
    the distinct names of other scripts or with control characters, not every row."""
    needs = pc.invert(pc.fill_null(pc.match_substring_regex(text, "^[ -~]*$"), True))
    if not pc.any(needs).as_py():
        return text
    odd = pc.unique(text.filter(needs))
    fixed = pa.array([escape.ascii_text(v) for v in odd.to_pylist()], _TEXT)
    at = pc.index_in(text, odd)
    return pc.if_else(needs, fixed.take(at), text)


def _columns(
    snap: Snapshot,
    rows: pd.DataFrame,
    prices: pr.PriceSheet,
    basis: str,
    scale: str,
    version: str,
) -> dict[str, pa.Array]:
    """Every column of `version`'s schema as an Arrow array; null where dims has nothing."""
    count = len(rows)
    day = date.fromisoformat(snap.snapshot_date)
    start, end = _month(day)
    hours = prices.hours_per_month
    total = _money(rows, pr.cost_column(basis, scale))
    unit = pc.divide(total, hours) if hours else total
    columns = {f.name: pa.nulls(count, f.type) for f in SCHEMAS[version]}
    columns.update(_identity(snap, rows, basis, scale, version))
    columns.update(
        BilledCost=total,
        EffectiveCost=total,
        ListCost=total,
        ContractedCost=total,
        ListUnitPrice=unit,
        ContractedUnitPrice=unit,
        PricingQuantity=_repeat(float(hours), count, pa.float64()),
        PricingUnit=_repeat("Hours", count),
        BillingPeriodStart=_repeat(start, count, _TIME),
        BillingPeriodEnd=_repeat(end, count, _TIME),
        ChargePeriodStart=_repeat(start, count, _TIME),
        ChargePeriodEnd=_repeat(end, count, _TIME),
        x_SnapshotDate=_repeat(day, count, pa.date32()),
    )
    columns.update(_measures(rows, prices, basis, scale, total))
    if version != "1.0":
        columns.update(
            PricingCurrency=columns["BillingCurrency"],
            PricingCurrencyContractedUnitPrice=unit,
            PricingCurrencyEffectiveCost=total,
            PricingCurrencyListUnitPrice=unit,
            SkuPriceDetails=_price_details(columns),
        )
    return {name: columns[name] for name in SCHEMAS[version].names}


def _money(rows: pd.DataFrame, column: str) -> pa.Array:
    return pa.array(rows[column].to_numpy("float64", na_value=np.nan), _MONEY)


def _price_details(columns: dict[str, pa.Array]) -> pa.Array:
    """1.2's SkuPriceDetails: the SKU's rates, each for one PricingUnit (an hour), as a
    JSON object (`x_` keys: FOCUS defines none of them)."""
    hours = columns["x_HoursPerMonth"]
    rates = {
        "x_CpuCoreHour": columns["x_CpuCoreHour"],
        "x_MemoryGiBHour": columns["x_MemoryGiBHour"],
        "x_StorageGiBHour": pc.divide(columns["x_StorageGiBMonth"], hours),
    }
    parts: list[pa.Array | str] = []
    for name, rate in rates.items():
        parts += [", " if parts else "{", f'"{name}": ', pc.cast(rate, _TEXT)]
    return _join(*parts, "}")


def _identity(
    snap: Snapshot, rows: pd.DataFrame, basis: str, scale: str, version: str
) -> dict[str, pa.Array]:
    """The columns that say whose charge a row is and what it is for."""
    count = len(rows)
    component = _text(rows["component"])
    kind = _text(rows["deployment_type"])
    kind_or = _or(kind, "untyped")
    sku = _join(TAG_PREFIX, kind_or, "/", component)
    ids = _text(rows["deployment_id"])
    names = _text(rows["name"])
    replicas = pa.array(rows[f"replicas_{scale}"].to_numpy("int64"))
    category = pc.fill_null(
        pc.index_in(component, pa.array(list(SERVICE_CATEGORY), _TEXT)), len(SERVICE_CATEGORY)
    )
    categories = pa.array([*SERVICE_CATEGORY.values(), "Compute"], _TEXT).take(category)
    named = _or(names, "(no name)")
    replicas_text = _join(
        pc.cast(replicas, _TEXT), pc.if_else(pc.equal(replicas, 1), " replica", " replicas")
    )
    described = _description(component, kind_or, named, replicas_text, basis, scale, version)
    provider = _repeat(PROVIDER, count)  # one array for the three columns naming it
    columns = {
        "BillingAccountId": _repeat(BILLING_ACCOUNT_ID, count),
        "BillingAccountName": _repeat(BILLING_ACCOUNT_NAME, count),
        "BillingCurrency": _repeat("USD", count),
        "ChargeCategory": _repeat("Usage", count),
        "ChargeFrequency": _repeat("Usage-Based", count),
        "ChargeDescription": described,
        "PricingCategory": _repeat("Standard", count),
        "ProviderName": provider,
        "PublisherName": provider,
        "InvoiceIssuerName": provider,
        "ResourceId": ids,
        "ResourceName": names,
        "ResourceType": _repeat("Deployment", count),
        "ServiceCategory": categories,
        "ServiceName": _repeat(SERVICE_NAME, count),
        "SkuId": sku,
        "SkuPriceId": _join(sku, "/", ids, f"/{basis}-{scale}"),
        "SubAccountId": _text(rows["tenant_id"]),
        "Tags": _tags(snap, rows),
        "x_CostBasis": _repeat(basis, count),
        "x_CostScale": _repeat(scale, count),
        "x_Component": component,
        "x_DeploymentType": kind,
        "x_Namespace": _text(rows["k8s_namespace"]),
        "x_WorkspaceId": _text(rows["tenant_id"]),
        "x_Replicas": replicas,
    }
    if version != "1.0":
        columns.update(_columns_of_1_2(categories, columns["SubAccountId"], basis, scale, count))
    return columns


def _description(
    component: pa.Array, kind: pa.Array, named: pa.Array, replicas: pa.Array,
    basis: str, scale: str, version: str,
) -> pa.Array:  # fmt: skip
    """ChargeDescription: what the row is for, and on what basis."""
    if version == "1.0":
        return _join(
            component, " of ", kind, " deployment ", named,
            f": {basis}s at {scale} scale, ", replicas, ", a month",
        )  # fmt: skip
    # ASCII (1.2's validator): the type, component and name are service text
    words = BASIS_WORDS[basis, scale].split(":")[0]
    return _join(
        _ascii(component), " of ", _ascii(kind), " deployment ", _ascii(named), ", ",
        replicas, f", a month: an estimate on {words}",
    )  # fmt: skip


def _columns_of_1_2(
    categories: pa.Array, sub_accounts: pa.Array, basis: str, scale: str, count: int
) -> dict[str, pa.Array]:
    """The columns FOCUS 1.2 adds or names otherwise (ServiceName by category)."""
    service = pa.array(list(SERVICES), _TEXT)
    at = pc.index_in(categories, service)
    names_of = pa.array([n for n, _ in SERVICES.values()], _TEXT)
    return {
        "ServiceName": names_of.take(at),
        "ServiceSubcategory": pa.array([s for _, s in SERVICES.values()], _TEXT).take(at),
        "SkuMeter": _repeat(f"Capacity {basis}s", count),
        "SubAccountName": sub_accounts,
        "x_CostBasisDescription": _repeat(BASIS_WORDS[basis, scale], count),
    }


def _measures(
    rows: pd.DataFrame, prices: pr.PriceSheet, basis: str, scale: str, total: pa.Array
) -> dict[str, pa.Array]:
    """What the cost is made of: quantities, rates, parts, and the pricing flags."""
    rates = pr.rates_of(prices, rows["deployment_type"])
    count = len(rows)

    def floats(column: str) -> pa.Array:
        return pa.array(rows[column].to_numpy("float64", na_value=np.nan), pa.float64())

    return {
        "x_CpuCores": floats(total_column("cpu", basis, scale)),
        "x_MemoryGiB": floats(total_column("memory", basis, scale)),
        "x_StorageGiB": pa.array(np.nan_to_num(floats("db_storage_gib").to_numpy())),
        "x_CpuCost": _money(rows, pr.cost_column(basis, scale, "cpu")),
        "x_MemoryCost": _money(rows, pr.cost_column(basis, scale, "memory")),
        "x_StorageCost": _money(rows, pr.STORAGE_COST),
        "x_CpuCoreHour": pa.array(rates["cpu_core_hour"], _MONEY),
        "x_MemoryGiBHour": pa.array(rates["memory_gib_hour"], _MONEY),
        "x_StorageGiBMonth": pa.array(rates["storage_gib_month"], _MONEY),
        "x_HoursPerMonth": _repeat(float(prices.hours_per_month), count, pa.float64()),
        "x_PriceSheet": _repeat(prices.name or "defaults", count),
        "x_ScaleInverted": pa.array(rows["scale_inverted"].to_numpy(bool)),
        "x_LimitsUnbounded": pa.array(rows["limits_unbounded"].to_numpy(bool)),
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
        write = lambda temp: _write_parquet(table, temp, export.basis, export.version)  # noqa: E731
    _atomic_write(target, write)
    return target


def _write_parquet(table: pa.Table, path: Path, basis: str, version: str) -> None:
    """The bill as Parquet, its FOCUS version and cost basis in the file's metadata: also
    for a bill of no row (every deployment unpriced), whose basis no row can tell."""
    import pyarrow.parquet as pq

    metadata = {"focus_version": version, "dims_focus_basis": basis}
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


#: Their names at the package `dims._reports` (imported from here on first use, dims._lazy).
FOCUS_BASIS_WORDS = BASIS_WORDS
FOCUS_SCHEMAS = SCHEMAS
