"""Capacity: what the fleet asks the cluster for, at min and at max scale.

Units are in every column name: CPU in cores, memory in GiB (the service's `memory_mb` is read
as MiB, 1024 per GiB), DB storage in GiB. Assumptions, stated once here and in the report:

- A component's total is replicas × per-replica resources. Components without scale fields
  (executor, cache, db) count one replica, and so does a scale field that is null.
- Replicas are whole pods: a fractional scale (1.5) rounds up (2). Max scale is never below
  min scale: max-scale figures use max(min_scale, max_scale), and the deployment is flagged
  `scale_inverted` where its max is written below its min.
- Sidecars and init containers belong to the main workload's pod and count the way the
  Kubernetes scheduler counts them: per replica, max(main + sum of sidecars, the init
  phase's peak) (`dims._reports._pods`). What they add on top of the main container is
  the pseudo-component `sidecars_init`.
- Unknown is null, never 0 (`dims._reports._pricing`): an unpriced deployment
  (`unpriced_reason`) has null figures and one whose limits are unbounded
  (`limits_unbounded`) null limits-basis figures, on every row of it; sums leave them out
  and say how many (`deployments_unpriced`, `deployments_unbounded`). The flags are the
  deployment's, on each of its rows, so every grouping adds up to the fleet's totals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from dims import _spec as spec
from dims._reports import _prices as pr
from dims._reports._frames import Snapshot, as_snapshot, text_column, tidy_text
from dims._reports._measures import (
    BASES,
    DB_COLUMNS,
    IDENTITY,
    MEASURES,
    MIB_PER_GIB,
    SCALES,
    TOTALS,
    decimals_of,
)
from dims._reports._pods import QUANTITIES, PodContainers, numeric
from dims._reports._pricing import (
    compute_set,
    not_set,
    pricing_status,
    replicas,
    resource_spec_absent,
    scale_inverted,
    unreadable,
    unreadable_sent,
)
from dims._reports._sums import codes_of, distinct, group_codes, sums
from dims._tables import figure_problem

#: The pseudo-component for what sidecars and init containers add to the main pod.
POD_EXTRA = "sidecars_init"
COMPONENT_ORDER = (*spec.COMPONENTS, POD_EXTRA)
#: counts: integer columns in every frame; connections are nullable (a group without a DB)
COUNTS = (
    "deployments",
    "deployments_unpriced",
    "deployments_unbounded",
    "replicas_min",
    "replicas_max",
)
NULLABLE_COUNTS = ("db_max_connections",)
#: The deployment's pricing flags, carried on each of its rows (see `dims._reports._pricing`).
FLAGS = ["scale_inverted", "limits_unbounded", "unpriced_reason"]
#: What every table of costs is ordered by, most expensive first, and its share of the total.
COST_ORDER = pr.cost_column("request", "max")
SHARE = "cost_share"

#: The service's documented development defaults, per replica (1 CPU, 1 GB read as 1024 MiB,
#: one replica). Production starts at 2 CPU / 2 GB and up to 10 replicas.
DEV_DEFAULT_CPU_CORES = 1.0
DEV_DEFAULT_MEMORY_MIB = 1024.0
DEV_MAX_REPLICAS = 1.0
PRODUCTION_TYPES = frozenset({"prod"})


def _column(frame: pd.DataFrame, name: str | None) -> pd.Series:
    """A numeric column as float, all-null when the spec or the file lacks it."""
    return numeric(frame, name)


def _text(frame: pd.DataFrame, name: str) -> pd.Series:
    return text_column(frame, name)


def _identity(deployments: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "deployment_id": _text(deployments, "id"),
            "name": _text(deployments, "name"),
            "deployment_type": _text(deployments, "deployment_type"),
            "k8s_namespace": _text(deployments, "k8s_namespace"),
            "tenant_id": _text(deployments, "tenant_id"),
        },
        index=deployments.index,
    )


def _scales(deployments: pd.DataFrame, fields: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Replicas at min and at max scale: whole pods, and never fewer at max than at min;
    unknown (NaN) where the scale was sent unreadable (a figure no cluster runs)."""
    scales = []
    for end in ("min_scale", "max_scale"):
        count = replicas(deployments, fields.get(end)).to_numpy("float64")
        scales.append(np.where(unreadable(deployments, fields.get(end)), np.nan, count))
    return scales[0], np.maximum(scales[0], scales[1])


def _as_counts(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """Replica columns as nullable integers (unknown where a scale was unreadable)."""
    for column in columns:
        frame[column] = frame[column].round().astype("Int64")
    return frame


_REPLICAS = ("replicas_min", "replicas_max")


def _deployments(snap: Snapshot) -> pd.DataFrame:
    """The snapshot's deployments indexed by position, as every frame here aligns them."""
    return snap.deployments.reset_index(drop=True)


def identity_of(snap: Snapshot) -> pd.DataFrame:
    """Who each deployment is (`IDENTITY` and its image_version), by position; shared, so
    read only."""

    def build(s: Snapshot) -> pd.DataFrame:
        deployments = _deployments(s)
        out = _identity(deployments)
        out["image_version"] = _text(deployments, "image_version")
        return out

    return snap.memo("identity", build)


def _containers(snap: Snapshot) -> PodContainers:
    return snap.memo(
        "pod_containers", lambda s: PodContainers(s.containers, identity_of(s)["deployment_id"])
    )


def status_of(snap: Snapshot) -> pd.DataFrame:
    """Each deployment's pricing flags (`FLAGS`), by position; shared, so read only."""
    return snap.memo("pricing_status", lambda s: pricing_status(_deployments(s), _containers(s)))


def pod_requests(source: Snapshot | str) -> pd.DataFrame:
    """Per deployment, the main workload's pod per replica as Kubernetes schedules it.

    For each of CPU request/limit (cores) and memory request/limit (GiB): the main container
    (`main_*`), the sum of its sidecars (`sidecars_*`: native sidecars, init containers with
    `restartPolicy: Always`, included), the init phase's peak (`largest_init_*`: each init
    container in order beside the native sidecars started before it) and the effective pod
    figure (`pod_*` = max(main + sidecars, init peak)), which is what a node must have free
    to place one replica. `sidecars` counts native sidecars too; `init_containers` the rest.
    A container's empty request is its limit (0 when both are empty); a figure that depends
    on a missing limit (unbounded) or an unreadable quantity is null, never 0, and so are
    the replicas of an unreadable scale.
    """
    return _as_counts(_pods_of(as_snapshot(source)).copy(), _REPLICAS)


def _pods_of(snap: Snapshot) -> pd.DataFrame:
    """`pod_requests`, shared (not copied): for callers that only read it."""
    return snap.memo("pod_requests", _pod_requests)


def _pod_requests(snap: Snapshot) -> pd.DataFrame:
    deployments = _deployments(snap)
    out = identity_of(snap)[IDENTITY].copy()
    fields = spec.component_measures()["main"]
    out["replicas_min"], out["replicas_max"] = _scales(deployments, fields)
    pod = _containers(snap)
    out["sidecars"] = pod.count(pod.sidecar)
    out["init_containers"] = pod.count(pod.init & ~pod.native)
    for measure, (main_field, factor) in MEASURES.items():
        values = pod.value(measure)
        main = _column(deployments, fields.get(main_field)).to_numpy() * factor
        sidecars = pod.per_deployment(values, pod.sidecar)
        init_peak = pod.init_peak(values)
        out[f"main_{measure}"] = main
        out[f"sidecars_{measure}"] = sidecars
        out[f"largest_init_{measure}"] = init_peak
        out[f"pod_{measure}"] = np.maximum(main + sidecars, init_peak)
    return out


def component_capacity(source: Snapshot | str) -> pd.DataFrame:
    """One row per deployment × component it has, per replica and in total at min/max scale.

    `main` is listed for every deployment (so one with no resources still counts); other
    components only where the deployment sets one of their fields. `sidecars_init` rows carry
    what sidecars and init containers add to the main pod (see `pod_requests`). Per-replica
    figures are as written (null where missing; 0 for a component that asks no compute, such
    as a DB with storage alone); totals follow the pricing rules (`FLAGS`, one set per
    deployment on each of its rows).
    """
    snap = as_snapshot(source)
    rows = _rows_of(snap)
    at = rows["position"].to_numpy()
    identity = identity_of(snap)[IDENTITY].take(at).reset_index(drop=True)
    flags = status_of(snap).take(at).reset_index(drop=True)
    figures = rows.drop(columns="position")
    figures["component"] = figures["component"].astype("str")
    figures["db_max_connections"] = figures["db_max_connections"].round().astype("Int64")
    out = pd.concat([identity, _as_counts(figures, _REPLICAS), flags], axis=1)
    columns = [*IDENTITY, "component", "replicas_min", "replicas_max", *MEASURES, *TOTALS]
    return out[[*columns, *DB_COLUMNS, *FLAGS]]


def replica_costs_of(snap: Snapshot, prices: pr.PriceSheet) -> pd.DataFrame:
    """One row per deployment × component (the rows of `component_capacity`, in its order),
    narrow: `deployment_id`, `component` (its index in `COMPONENT_ORDER`), `replicas_min`,
    `replicas_max` (rounded, NaN where unknown) and `per_replica_<basis>`, the monthly cost
    of one replica on each basis (0 where unpriced, `prices.replica_costs`). What a change of
    scale is priced by, without the wide frame's identity, measures and flags."""
    rows = _rows_of(snap)
    at = rows["position"].to_numpy()
    status = status_of(snap)
    out = {
        "deployment_id": identity_of(snap)["deployment_id"].to_numpy()[at],
        "component": rows["component"].cat.codes.to_numpy(dtype="int64"),
        **{column: np.round(rows[column].to_numpy(dtype="float64")) for column in _REPLICAS},
    }
    priced = pd.DataFrame(
        {
            "deployment_type": identity_of(snap)["deployment_type"].take(at).reset_index(drop=True),
            "unpriced_reason": status["unpriced_reason"].take(at).reset_index(drop=True),
            "limits_unbounded": status["limits_unbounded"].to_numpy(dtype=bool)[at],
            **{m: rows[m].to_numpy() for m in MEASURES},
        }
    )
    for basis in BASES:
        out[f"per_replica_{basis}"] = np.nan_to_num(pr.replica_costs(priced, prices, basis))
    return pd.DataFrame(out)


def _rows_of(snap: Snapshot) -> pd.DataFrame:
    """The rows of `component_capacity` as figures only, each with its deployment's
    `position` (identity and flags are taken by position when needed); shared, read only."""
    return snap.memo("component_rows", _component_rows)


def _component_arrays(
    deployments: pd.DataFrame, component: str, absent: pd.Series
) -> dict[str, np.ndarray]:
    """One component's rows: the deployments that set any of its fields (main: all)."""
    fields = spec.component_measures()[component]
    asks = compute_set(deployments, component, absent).to_numpy()
    arrays = {}
    for measure, (field, factor) in MEASURES.items():
        values = _column(deployments, fields.get(field)).to_numpy() * factor
        arrays[measure] = values if component == "main" else np.where(asks, values, 0.0)
    for column, field in (
        ("db_storage_gib", "storage_gi"),
        ("db_max_connections", "max_connections"),
    ):
        arrays[column] = _column(deployments, fields.get(field)).to_numpy()
    arrays["replicas_min"], arrays["replicas_max"] = _scales(deployments, fields)
    sent = [
        unreadable(deployments, fields.get(f)).to_numpy() for f in ("storage_gi", "max_connections")
    ]
    present = asks | ~np.isnan(arrays["db_storage_gib"]) | ~np.isnan(arrays["db_max_connections"])
    present |= np.logical_or.reduce(sent)  # a DB figure sent unreadable: the DB is there
    at = np.arange(len(deployments)) if component == "main" else np.flatnonzero(present)
    chosen = {name: values[at] for name, values in arrays.items()}
    return {
        "position": at,
        "component": np.full(len(at), COMPONENT_ORDER.index(component)),
        **chosen,
    }


def _pod_extra_arrays(snap: Snapshot) -> dict[str, np.ndarray]:
    """`sidecars_init`: what the pod asks beyond its main container, per replica."""
    pods = _pods_of(snap)
    at = np.flatnonzero(((pods["sidecars"] + pods["init_containers"]) > 0).to_numpy())
    arrays = {"position": at, "component": np.full(len(at), COMPONENT_ORDER.index(POD_EXTRA))}
    for measure in MEASURES:
        arrays[measure] = (pods[f"pod_{measure}"] - pods[f"main_{measure}"]).to_numpy()[at]
    arrays["db_storage_gib"] = arrays["db_max_connections"] = np.full(len(at), np.nan)
    arrays["replicas_min"] = pods["replicas_min"].to_numpy()[at]
    arrays["replicas_max"] = pods["replicas_max"].to_numpy()[at]
    return arrays


def _component_rows(snap: Snapshot) -> pd.DataFrame:
    deployments = _deployments(snap)
    absent = resource_spec_absent(deployments)
    parts = [_component_arrays(deployments, c, absent) for c in spec.COMPONENTS]
    parts.append(_pod_extra_arrays(snap))
    arrays = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    at = arrays["position"]
    status = status_of(snap)
    priced = status["unpriced_reason"].isna().to_numpy()[at]
    bounded = priced & ~status["limits_unbounded"].to_numpy(dtype=bool)[at]
    for measure in MEASURES:
        known = bounded if "_limit_" in measure else priced
        for scale in SCALES:
            total = arrays[measure] * arrays[f"replicas_{scale}"]
            arrays[f"{measure}_{scale}_scale"] = np.where(known, total, np.nan)
    for column in DB_COLUMNS:
        arrays[column] = np.where(priced, arrays[column], np.nan)
    frame = pd.DataFrame(arrays)
    codes = frame["component"].to_numpy(dtype="int64")
    frame["component"] = pd.Categorical.from_codes(codes, categories=pd.Index(COMPONENT_ORDER))
    return frame


def _counts_as_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """Count columns as integers, `Int64` where a row may have none (connections)."""
    for name in (*COUNTS, *NULLABLE_COUNTS):
        if name in frame.columns:
            dtype: Literal["Int64", "int64"] = "Int64" if name in NULLABLE_COUNTS else "int64"
            frame[name] = frame[name].round().astype(dtype)
    return frame


def _costs_of(snap: Snapshot, prices: pr.PriceSheet) -> pd.DataFrame:
    """The monthly costs of each row of `_rows_of` (computed once per snapshot and sheet)."""

    def build(s: Snapshot) -> pd.DataFrame:
        rows = _rows_of(s)
        at = rows["position"].to_numpy()
        kinds = identity_of(s)["deployment_type"]
        rates = {k: v[at] for k, v in pr.rates_of(prices, kinds).items()}
        status = status_of(s)
        priced = status["unpriced_reason"].isna().to_numpy()[at]
        bounded = priced & ~status["limits_unbounded"].to_numpy(dtype=bool)[at]
        costs = pr.cost_arrays(rows, rates, prices.hours_per_month, priced, bounded)
        frame = pd.DataFrame(costs, index=rows.index)
        checked = pd.concat([rows[pr.QUANTITY_COLUMNS], frame], axis=1)  # not every column
        pr.check_costs(checked, kinds.take(at), prices)
        return frame

    return snap.memo(f"costs {prices!r}", build)


#: The figures every grouping sums.
SUMMED = ["replicas_min", "replicas_max", *TOTALS, *DB_COLUMNS, *pr.COST_COLUMNS]


def _floats(frame: pd.DataFrame, column: str) -> np.ndarray:
    return frame[column].to_numpy("float64", na_value=np.nan)


def _row_figures(snap: Snapshot, prices: pr.PriceSheet) -> dict[str, np.ndarray]:
    """Each row's figures (per replica, totals, costs) as arrays; shared, read only."""

    def build(s: Snapshot) -> dict[str, np.ndarray]:
        rows, costs = _rows_of(s), _costs_of(s, prices)
        figures = {c: _floats(rows, c) for c in [*SUMMED[:2], *MEASURES, *TOTALS, *DB_COLUMNS]}
        figures.update({c: costs[c].to_numpy() for c in pr.COST_COLUMNS})
        return figures

    return snap.memo(f"row figures {prices!r}", build)


def _deployment_figures(snap: Snapshot, prices: pr.PriceSheet) -> dict[str, np.ndarray]:
    """Each deployment's figures (its rows summed), by position; shared, read only. Its flags
    are the same on all its rows, so a sum by any key of these is the sum of the rows."""

    def build(s: Snapshot) -> dict[str, np.ndarray]:
        rows = _row_figures(s, prices)
        at = _rows_of(s)["position"].to_numpy()
        return sums({c: rows[c] for c in SUMMED}, at, len(identity_of(s)))

    return snap.memo(f"deployment figures {prices!r}", build)


@dataclass(frozen=True)
class Keyed:
    """Rows to sum: their figures, their deployment (a code per row) and its flags, and the
    keys they are grouped by (a code per row, and what each code stands for)."""

    figures: Mapping[str, np.ndarray]
    members: np.ndarray
    priced: np.ndarray
    unbounded: np.ndarray
    keys: dict[str, tuple[np.ndarray, pd.Index]]
    #: one row per deployment: counting deployments needs no de-duplication
    one_row_each: bool = False


def _codes(snap: Snapshot, key: str) -> tuple[np.ndarray, pd.Index]:
    """An identity column's code per deployment, and what each code stands for (shared)."""

    def build(s: Snapshot) -> tuple[np.ndarray, pd.Index]:
        return codes_of(identity_of(s)[key])

    return snap.memo(f"codes {key}", build)


def keyed(
    snap: Snapshot,
    prices: pr.PriceSheet,
    by: list[str],
    per_deployment: dict[str, pd.Series] | None = None,
) -> Keyed:
    """The snapshot keyed by `by` (`component` or an identity column), then by the
    `per_deployment` values (one per deployment, by position: a label's, say): its
    component rows where `component` is a key, else its deployments (fewer rows to sum)."""
    identity, status = identity_of(snap), status_of(snap)
    by_component = "component" in by
    if by_component:
        rows = _rows_of(snap)
        at, figures = rows["position"].to_numpy(), _row_figures(snap, prices)
    else:
        at, figures = np.arange(len(identity)), _deployment_figures(snap, prices)
    keys = {}
    for key in by:
        if key == "component":
            keys[key] = (rows["component"].cat.codes.to_numpy("int64"), pd.Index(COMPONENT_ORDER))
        else:
            codes, uniques = _codes(snap, key)
            keys[key] = (codes[at], uniques)
    for key, values in (per_deployment or {}).items():
        codes, uniques = codes_of(values)
        keys[key] = (codes[at], uniques)
    return Keyed(
        figures,
        at,
        status["unpriced_reason"].isna().to_numpy()[at],
        status["limits_unbounded"].to_numpy(dtype=bool)[at],
        keys,
        not by_component,
    )


def _keyed_frame(frame: pd.DataFrame, prices: pr.PriceSheet, by: list[str]) -> Keyed:
    """Rows of a `component_capacity` frame keyed by `by` (its own columns)."""
    costed = pr.add_costs(frame, prices)
    priced, bounded = pr.pricing_flags(costed)
    columns = [*SUMMED, *(c for c in MEASURES if c in costed.columns)]
    return Keyed(
        {c: _floats(costed, c) for c in columns},
        codes_of(costed["deployment_id"])[0],
        priced,
        priced & ~bounded,
        {key: codes_of(costed[key]) for key in by},
    )


def _distinct(data: Keyed, groups: np.ndarray, count: int, where: np.ndarray) -> np.ndarray:
    if data.one_row_each:
        return np.bincount(groups[where], minlength=count).astype("int64")
    return distinct(data.members, groups, count, where)


def aggregate(data: Keyed) -> pd.DataFrame:
    """The figures of every group of `keyed`: counts, sums of what is known, costs."""
    groups, first = group_codes([codes for codes, _ in data.keys.values()])
    count = len(first)
    out: dict[str, object] = {
        key: uniques.take(codes[first]) for key, (codes, uniques) in data.keys.items()
    }
    everyone = np.ones(len(groups), dtype=bool)
    out["deployments"] = _distinct(data, groups, count, everyone)
    out["deployments_unpriced"] = _distinct(data, groups, count, ~data.priced)
    out["deployments_unbounded"] = _distinct(data, groups, count, data.priced & data.unbounded)
    out.update(sums({c: data.figures[c] for c in SUMMED}, groups, count))
    frame = pd.DataFrame(out)
    for key in data.keys:
        frame[key] = frame[key].astype("str")
    frame["replicas_min"] = frame["replicas_min"].fillna(0)
    frame["replicas_max"] = frame["replicas_max"].fillna(0)
    return _counts_as_ints(ranked(frame, list(data.keys)))


def ranked(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`frame` (groups with costs) most expensive first (requests at max scale; unpriced
    groups last), with each group's share of the total (`cost_share`)."""
    cost = frame[COST_ORDER]
    total = cost.sum()
    frame[SHARE] = cost / total if total > 0 else np.nan
    order = [COST_ORDER, *keys]
    ascending = [False, *([True] * len(keys))]
    return frame.sort_values(order, ascending=ascending, na_position="last").reset_index(drop=True)


def capacity_by(
    source: Snapshot | str | pd.DataFrame,
    by: list[str],
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
) -> pd.DataFrame:
    """Totals of `component_capacity` grouped by `by` (component, deployment_type,
    k8s_namespace, tenant_id), with their monthly cost under `prices` (the
    `prices.COST_COLUMNS`), most expensive first.

    `deployments` counts distinct deployments in the group, `deployments_unpriced` those in
    no figure (null costs), `deployments_unbounded` the priced ones left out of the limits
    basis; replicas, resources and costs are sums of what is known (null when nothing is).
    `cost_share` is the group's share of the total, requests at max scale.
    `db_max_connections` is null for a group without a database.
    """
    if isinstance(source, pd.DataFrame):
        return aggregate(_keyed_frame(source, prices, by))
    snap = as_snapshot(source)
    return snap.memo(f"by {by} {prices!r}", lambda s: aggregate(keyed(s, prices, by))).copy()


def capacity_summary(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """component × deployment_type totals and costs: the content of `capacity_summary.parquet`."""
    return capacity_by(source, ["component", "deployment_type"], prices)


def _rounded(column: str, value: float) -> float:
    places = decimals_of(column)
    return round(value, places) if places is not None else value


def fleet_totals(
    source: Snapshot | str | pd.DataFrame, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> dict[str, int | float]:
    """The whole fleet's totals (all components, sidecars and init containers included).

    Counts (deployments, those unpriced and those unbounded, replicas, DB connections) are
    ints; sums of measures are rounded to what the unit can mean (cores and GiB to 3
    decimals, dollars to cents), so 17491.000427 GiB reads 17491.0. A sum leaves out what
    is unknown (`deployments_unpriced` of every figure, `deployments_unbounded` more of the
    limits basis) and is NaN when nothing is known. `source` may also be a
    `component_capacity` frame.
    """
    if not isinstance(source, pd.DataFrame):
        snap = as_snapshot(source)
        return dict(snap.memo(f"fleet totals {prices!r}", lambda s: _fleet_totals(s, prices)))
    return _fleet_totals(source, prices)


def _fleet_totals(source: Snapshot | pd.DataFrame, prices: pr.PriceSheet) -> dict[str, int | float]:
    if isinstance(source, pd.DataFrame):
        data = _keyed_frame(source.assign(_all=0), prices, ["_all"])
        inverted = source.get("scale_inverted", pd.Series(False, index=source.index))
        members = codes_of(source["deployment_id"])[0]
    else:
        data = keyed(source, prices, [])
        data.keys["_all"] = (np.zeros(len(data.members), "int64"), pd.Index([0]))
        inverted = status_of(source)["scale_inverted"].take(data.members)
        members = data.members
    if len(data.members) == 0:
        return _empty_totals()
    row = aggregate(data).iloc[0]
    totals: dict[str, int | float] = {name: int(row[name]) for name in COUNTS}
    chosen = members[inverted.to_numpy(dtype=bool)]
    totals["deployments_scale_inverted"] = len(np.unique(chosen))
    totals["db_max_connections"] = _known_count(row["db_max_connections"])  # NA: nothing set
    for name in (*TOTALS, "db_storage_gib", *pr.COST_COLUMNS):
        totals[name] = _rounded(name, float(row[name]))
    return totals


def _known_count(value: float) -> int | float:
    """A summed count as an int, NaN where nothing was known to sum (no deployment set it):
    an unknown count is never 0."""
    return float("nan") if pd.isna(value) else round(float(value))


def _empty_totals() -> dict[str, int | float]:
    """The totals of a fleet of no deployment: nothing counted, nothing known."""
    totals: dict[str, int | float] = dict.fromkeys([*COUNTS, "deployments_scale_inverted"], 0)
    unknown = [*TOTALS, *DB_COLUMNS, *pr.COST_COLUMNS]
    totals.update(dict.fromkeys(unknown, float("nan")))
    return totals


def _ratios(data: Keyed, groups: np.ndarray, count: int) -> dict[str, np.ndarray]:
    """Limit ÷ request at max scale per group: over the rows whose limit is known (both
    sums cover the same rows), infinite where a priced row has no limit of that resource."""
    out: dict[str, np.ndarray] = {}
    for resource, unit in (("cpu", "cores"), ("memory", "gib")):
        request = data.figures[f"{resource}_request_{unit}_max_scale"]
        limit = data.figures[f"{resource}_limit_{unit}_max_scale"]
        missing = data.priced & np.isnan(data.figures[f"{resource}_limit_{unit}"])
        summed = sums(
            {
                "request": request,
                "limit": limit,
                "bounded": np.where(np.isnan(limit), np.nan, request),
            },
            groups,
            count,
        )
        unbounded = np.bincount(groups, weights=missing, minlength=count) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(summed["request"] > 0, summed["limit"] / summed["bounded"], np.nan)
        out[f"{resource}_request_{unit}_max_scale"] = summed["request"]
        out[f"{resource}_limit_{unit}_max_scale"] = summed["limit"]
        out[f"{resource}_overcommit"] = np.where(unbounded, np.inf, ratio)
    return out


def overcommit(source: Snapshot | str) -> pd.DataFrame:
    """Limit ÷ request per component, at max scale (min scale gives the same ratio for one
    component). One row per component, most expensive first; the fleet's ratio is
    `overcommit_total`.

    Above 1 the fleet can burst past what the scheduler reserved. The ratio is infinite
    (the report says "unbounded") where a priced row of the component has no limit of that
    resource, and NaN where nothing is requested; it divides sums over the same rows (the
    deployments whose limits are bounded).
    """
    snap = as_snapshot(source)
    by_component = capacity_by(snap, ["component"])
    data = keyed(snap, pr.DEFAULT_PRICES, ["component"])
    codes = data.keys["component"][0]
    ratios = pd.DataFrame(_ratios(data, codes, len(COMPONENT_ORDER)), index=COMPONENT_ORDER)
    out = by_component[["component", "deployments", "deployments_unbounded"]].copy()
    shown = ratios.reindex(by_component["component"].to_numpy()).reset_index(drop=True)
    return pd.concat([out, shown], axis=1)


def overcommit_total(source: Snapshot | str) -> dict[str, float]:
    """The whole fleet's limit ÷ request at max scale, with the sums it divides (infinite
    where any priced deployment lacks a limit of that resource)."""
    data = keyed(as_snapshot(source), pr.DEFAULT_PRICES, ["component"])  # per-row limits
    groups = np.zeros(len(data.members), "int64")
    return {name: float(values[0]) for name, values in _ratios(data, groups, 1).items()}


def _db_rows(source: Snapshot | str) -> pd.DataFrame:
    """The `db` rows: storage and connections with each deployment's type."""
    snap = as_snapshot(source)
    rows = _rows_of(snap)
    db = (rows["component"] == "db").to_numpy()  # picked column by column: not every column
    at = rows["position"].to_numpy()[db]
    return pd.DataFrame(
        {
            "deployment_id": identity_of(snap)["deployment_id"].take(at).to_numpy(),
            "deployment_type": identity_of(snap)["deployment_type"].take(at).to_numpy(),
            "db_storage_gib": rows["db_storage_gib"].to_numpy()[db],
            "db_max_connections": rows["db_max_connections"].to_numpy()[db],
        }
    )


def db_capacity(source: Snapshot | str) -> pd.DataFrame:
    """DB storage (GiB) and connections, one row per deployment_type (the fleet's figures are
    `db_capacity_total`, so summing a column here gives the fleet, never twice)."""
    db = _db_rows(source)
    grouped = db.groupby("deployment_type", dropna=False)
    out = pd.DataFrame(
        {
            "deployments_with_db": grouped["deployment_id"].nunique().astype("int64"),
            "db_storage_gib": grouped["db_storage_gib"].sum(),
            "db_storage_gib_mean": grouped["db_storage_gib"].mean(),
            "db_storage_gib_max": grouped["db_storage_gib"].max(),
            "db_max_connections": grouped["db_max_connections"]
            .sum(min_count=1)
            .round()
            .astype("Int64"),
        }
    ).reset_index()
    out["deployment_type"] = out["deployment_type"].astype("str")
    return out


def db_capacity_total(source: Snapshot | str) -> dict[str, int | float]:
    """The whole fleet's DB figures, the columns of `db_capacity` over every type."""
    db = _db_rows(source)
    storage = db["db_storage_gib"]
    return {
        "deployments_with_db": int(db["deployment_id"].nunique()),
        "db_storage_gib": _rounded("db_storage_gib", float(storage.sum())),
        "db_storage_gib_mean": float(storage.mean()) if storage.notna().any() else float("nan"),
        "db_storage_gib_max": float(storage.max()) if storage.notna().any() else float("nan"),
        "db_max_connections": _known_count(db["db_max_connections"].sum(min_count=1)),
    }


def deployment_totals(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """One row per deployment: its totals and monthly costs over every component (sidecars
    and init containers included), and its pricing flags (`FLAGS`): null figures where the
    deployment is unpriced, null limits-basis figures where its limits are unbounded."""
    return totals_of(as_snapshot(source), prices).copy()


def totals_of(snap: Snapshot, prices: pr.PriceSheet) -> pd.DataFrame:
    """`deployment_totals`, shared (not copied): for callers that only read it."""
    return snap.memo(f"deployment_totals {prices!r}", lambda s: _deployment_totals(s, prices))


def _deployment_totals(snap: Snapshot, prices: pr.PriceSheet) -> pd.DataFrame:
    figures = _deployment_figures(snap, prices)
    summed = pd.DataFrame({c: figures[c] for c in [*TOTALS, *DB_COLUMNS, *pr.COST_COLUMNS]})
    identity = identity_of(snap).reset_index(drop=True)
    return _counts_as_ints(pd.concat([identity, summed, status_of(snap)], axis=1))


def cost_by_deployment(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """Monthly cost per deployment, most expensive (requests at max scale) first and unpriced
    ones last: the content of `cost_by_deployment.parquet`. Every `prices.COST_COLUMNS`
    column, in dollars, then the pricing flags `scale_inverted`, `limits_unbounded` and
    `unpriced_reason`."""
    totals = totals_of(as_snapshot(source), prices)
    columns = [*IDENTITY, "image_version", *pr.COST_COLUMNS, *FLAGS]
    ordered = totals.sort_values(
        [COST_ORDER, "deployment_id"], ascending=[False, True], na_position="last"
    )
    return ordered[columns].reset_index(drop=True)


def largest_deployments(
    source: Snapshot | str, n: int = 10, by: str = "cpu_request_cores_max_scale"
) -> pd.DataFrame:
    """The `n` deployments asking for the most of `by` (a `deployment_totals` column)."""
    totals = totals_of(as_snapshot(source), pr.DEFAULT_PRICES)
    ordered = totals.sort_values([by, "deployment_id"], ascending=[False, True], na_position="last")
    return ordered.head(n).reset_index(drop=True)


def anomalies(source: Snapshot | str) -> pd.DataFrame:
    """Resource settings that are probably mistakes, one row per (deployment, finding).

    Kinds: `resource_spec_absent` (no resource field at all — the dataset cannot tell an absent
    resource_spec from an empty one), `missing_resources` (a component sets some fields but
    not its CPU or memory request), `zero_resources`, `cpu_limit_below_request`,
    `memory_limit_below_request` and `scale_inverted` (max_scale below min_scale, as whole
    replicas: max-scale figures use min_scale); sidecars and init containers get the limit
    checks too, and `unreadable_quantity` for a quantity that is not a Kubernetes quantity,
    or a resource_spec figure no cluster runs (negative, or above 2^32; its column is null:
    the detail quotes it and says why). The first, the second and the last are also why a
    deployment is unpriced (`cost_by_deployment`'s `unpriced_reason`).
    """
    snap = as_snapshot(source)
    found = _Findings(_deployments(snap))
    absent = resource_spec_absent(found.deployments)
    found.add(absent, "resource_spec", "resource_spec_absent")
    for component in spec.COMPONENTS:
        _component_findings(found, component, absent)
    _unreadable_figures(found)
    if not snap.containers.empty:
        _container_findings(found, snap.containers)
        _unreadable_quantities(found, _containers(snap))
    return found.frame()


def _shown(values: pd.Series) -> pd.Series:
    """Numbers as a finding's detail shows them (`null` for none)."""
    return values.map(lambda v: "null" if pd.isna(v) else f"{v:g}")


class _Findings:
    """The anomalies found so far in one snapshot's deployments, one frame per check."""

    def __init__(self, deployments: pd.DataFrame) -> None:
        self.deployments = deployments
        self.identity = _identity(deployments)
        self.frames: list[pd.DataFrame] = []

    def add(self, mask: pd.Series, component: str, kind: str, *shown: str) -> None:
        """Record `kind` for the rows in `mask`, with the named fields' values as detail."""
        if not mask.any():
            return
        frame = self.identity[mask].copy()
        frame["component"] = component
        frame["anomaly"] = kind
        detail: pd.Series | str = "no resource field is set"
        for n, name in enumerate(shown):
            part = name + "=" + _shown(_column(self.deployments, name)[mask])
            detail = part if n == 0 else detail + " " + part
        frame["detail"] = detail
        self.frames.append(frame)

    def frame(self) -> pd.DataFrame:
        """Every finding, by kind, type and name (an empty frame has the columns too)."""
        columns = [*IDENTITY, "component", "anomaly", "detail"]
        if not self.frames:
            return pd.DataFrame({c: pd.Series(dtype="str") for c in columns})
        out = tidy_text(pd.concat(self.frames, ignore_index=True)[columns])
        return out.sort_values(
            ["anomaly", "deployment_type", "name"], na_position="last"
        ).reset_index(drop=True)


def _component_findings(found: _Findings, component: str, absent: pd.Series) -> None:
    """A component's missing, zero and inverted settings (limits below requests, max below
    min scale)."""
    deployments = found.deployments
    fields = spec.component_measures()[component]
    names = {m: fields.get(m) for m in ("cpu", "cpu_limit", "memory_mb", "memory_limit_mb")}
    cpu, cpu_limit, mem, mem_limit = (_column(deployments, f) for f in names.values())
    # main is expected on every deployment; other components where they ask for compute
    set_any = compute_set(deployments, component, absent)
    requests = [f for f in (names["cpu"], names["memory_mb"]) if f]
    missing = not_set(deployments, names["cpu"]) | not_set(deployments, names["memory_mb"])
    found.add(set_any & missing, component, "missing_resources", *requests)
    found.add(set_any & ((cpu == 0) | (mem == 0)), component, "zero_resources", *requests)
    for request, limit, values, kind in (
        ("cpu", "cpu_limit", (cpu, cpu_limit), "cpu_limit_below_request"),
        ("memory_mb", "memory_limit_mb", (mem, mem_limit), "memory_limit_below_request"),
    ):
        request_field, limit_field = names[request], names[limit]
        if request_field and limit_field:
            found.add(values[1] < values[0], component, kind, request_field, limit_field)
    low_field, high_field = fields.get("min_scale"), fields.get("max_scale")
    if low_field and high_field:
        inverted = scale_inverted(deployments, fields)
        found.add(inverted, component, "scale_inverted", low_field, high_field)


def _container_findings(found: _Findings, containers: pd.DataFrame) -> None:
    """Sidecars and init containers whose CPU or memory limit is below the request."""
    by_id = found.identity.set_index("deployment_id")
    for resource, request_col, limit_col, unit in (
        ("cpu", "cpu_request", "cpu_limit", "cores"),
        ("memory", "memory_request_mb", "memory_limit_mb", "MiB"),
    ):
        request, limit = _column(containers, request_col), _column(containers, limit_col)
        bad = limit < request
        if not bad.any():
            continue
        rows = containers[bad]
        frame = by_id.reindex(_text(rows, "deployment_id")).reset_index()
        frame["component"] = (
            _text(rows, "kind").fillna("container") + ":" + _text(rows, "name").fillna("")
        ).to_numpy()
        frame["anomaly"] = f"{resource}_limit_below_request"
        frame["detail"] = (
            f"request {unit}=" + _shown(request[bad]) + f" limit {unit}=" + _shown(limit[bad])
        ).to_numpy()
        found.frames.append(frame)


def _unreadable_figures(found: _Findings) -> None:
    """`unreadable_quantity` for each resource_spec figure no cluster runs (null in its
    column, kept in `unreadable_values_json`); the detail quotes it with the reason."""
    rows: list[dict[str, object]] = []
    for label, sent in unreadable_sent(found.deployments).items():
        who = found.identity.loc[label].to_dict()
        for field, value in sent.items():
            why = figure_problem(float(value)) if isinstance(value, int | float) else None
            rows.append(
                {
                    **who,
                    "component": spec.component_of(field)[0],
                    "anomaly": "unreadable_quantity",
                    "detail": f"{field} {json.dumps(value)}: {why or 'not a number'}",
                }
            )
    if rows:
        found.frames.append(pd.DataFrame(rows))


def _unreadable_quantities(found: _Findings, pod: PodContainers) -> None:
    """`unreadable_quantity`: a quantity sent that the export could not read (its column
    null, not 0); the detail quotes it with the reason (`dims._tables.quantity_problem`)."""
    by_id = found.identity.set_index("deployment_id")
    for measure, quantity in QUANTITIES.items():
        unreadable = pod.unreadable[measure]
        if unreadable.rows.empty:
            continue
        rows = pod.containers.loc[unreadable.rows]
        frame = by_id.reindex(_text(rows, "deployment_id")).reset_index()
        frame["component"] = (
            _text(rows, "kind").fillna("container") + ":" + _text(rows, "name").fillna("")
        ).to_numpy()
        frame["anomaly"] = "unreadable_quantity"
        frame["detail"] = [
            f"{quantity.section}.{quantity.key} {json.dumps(value, ensure_ascii=False)}: {why}"
            for value, why in zip(unreadable.sent, unreadable.reasons, strict=True)
        ]
        found.frames.append(frame)


def rightsizing(source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES) -> pd.DataFrame:
    """Signals the data allows about size, not load (the dataset has no usage figures), with
    what acting on each saves a month.

    `dev_above_dev_defaults`: a development-type deployment asking for more CPU, memory or
    replicas than development provides — production load on a development tier, or a
    leftover. The suggestion brings its main workload back to the development defaults
    (1 CPU, 1024 MiB, 1 replica; never up), and `savings_usd_month` is the difference in its
    main workload's monthly cost, requests at max scale, under `prices`.
    `prod_at_dev_defaults`: a production deployment whose main workload still has the
    development defaults (1 CPU, 1024 MiB) — probably never sized. Its suggestion is a review,
    which saves nothing (sizing up costs more): `savings_usd_month` is 0.
    """
    snap = as_snapshot(source)
    deployments = _deployments(snap)
    fields = spec.component_measures()["main"]
    out = _identity(deployments)
    cpu = _column(deployments, fields.get("cpu"))
    mem = _column(deployments, fields.get("memory_mb"))
    out["cpu_request_cores"] = cpu
    out["memory_request_gib"] = mem / MIB_PER_GIB
    max_scale = _scales(deployments, fields)[1]  # never below min_scale; NaN: unreadable
    out["max_scale"] = pd.array(np.round(max_scale), dtype="Int64")
    kind = out["deployment_type"].astype("object")
    is_prod = kind.isin(PRODUCTION_TYPES)
    is_dev = kind.fillna("").str.startswith("dev")
    at_defaults = (cpu == DEV_DEFAULT_CPU_CORES) & (mem == DEV_DEFAULT_MEMORY_MIB)
    above = (
        (cpu > DEV_DEFAULT_CPU_CORES)
        | (mem > DEV_DEFAULT_MEMORY_MIB)
        | (max_scale > DEV_MAX_REPLICAS)
    )
    signal = pd.Series(None, index=out.index, dtype="str")
    signal[is_prod & at_defaults] = "prod_at_dev_defaults"
    signal[is_dev & above] = "dev_above_dev_defaults"
    out["signal"] = signal
    out["suggestion"] = signal.map(SUGGESTIONS).astype("str")
    out["savings_usd_month"] = _dev_default_savings(out, prices).where(
        signal == "dev_above_dev_defaults", 0.0
    )
    flagged = out[out["signal"].notna()]
    return flagged.sort_values(
        ["signal", "savings_usd_month", "name"], ascending=[True, False, True]
    ).reset_index(drop=True)


SUGGESTIONS = {
    "dev_above_dev_defaults": (
        f"bring the main workload down to the development defaults ({DEV_DEFAULT_CPU_CORES:g} "
        f"CPU, {DEV_DEFAULT_MEMORY_MIB:g} MiB, {DEV_MAX_REPLICAS:g} replica), or make it prod"
    ),
    "prod_at_dev_defaults": "review its size: production still at the development defaults",
}


def _dev_default_savings(frame: pd.DataFrame, prices: pr.PriceSheet) -> pd.Series:
    """Monthly cost of the main workload's requests at max scale, now minus at the dev
    defaults (each of CPU, memory and replicas capped at its default, never raised)."""
    rates = pr.rates_of(prices, frame["deployment_type"])
    cpu_rate, mem_rate = rates["cpu_core_hour"], rates["memory_gib_hour"]
    cpu = frame["cpu_request_cores"].fillna(0.0)
    mem = frame["memory_request_gib"].fillna(0.0)
    replicas = frame["max_scale"].astype("float64")
    default_mem_gib = DEV_DEFAULT_MEMORY_MIB / MIB_PER_GIB

    def monthly(cores: pd.Series, gib: pd.Series, count: pd.Series) -> pd.Series:
        return pd.Series(count * (cores * cpu_rate + gib * mem_rate) * prices.hours_per_month)

    now = monthly(cpu, mem, replicas)
    after = monthly(
        cpu.clip(upper=DEV_DEFAULT_CPU_CORES),
        mem.clip(upper=default_mem_gib),
        replicas.clip(upper=DEV_MAX_REPLICAS),
    )
    return now - after
