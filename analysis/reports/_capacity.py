"""Capacity: what the fleet asks the cluster for, at min and at max scale.

Units are in every column name: CPU in cores, memory in GiB (the service's `memory_mb` is read
as MiB, 1024 per GiB), DB storage in GiB. Assumptions, stated once here and in the report:

- A component's total is replicas × per-replica resources. Components without scale fields
  (executor, cache, db) count one replica, and so does a scale field that is null.
- Sidecars and init containers belong to the main workload's pod and count the way the
  Kubernetes scheduler counts them: per replica, max(main + sum of sidecars, the init
  phase's peak). A native sidecar (an init container with `restartPolicy: Always`) counts
  among the sidecars and beside every init container after it; a container request left
  empty defaults to its limit, as in Kubernetes. What they add on top of the main container
  is the pseudo-component `sidecars_init`.
- Replicas are whole pods: a fractional scale (1.5) rounds up (2).
- A missing value counts as zero in totals and is listed as an anomaly.
"""

from __future__ import annotations

import json
import math
from typing import Literal

import pandas as pd

from analysis import spec
from analysis.reports import _prices as pr
from analysis.reports._frames import Snapshot, as_snapshot, text_column, tidy_text
from analysis.reports._measures import (
    DB_COLUMNS,
    IDENTITY,
    MEASURES,
    MIB_PER_GIB,
    SCALES,
    TOTALS,
    decimals_of,
)
from analysis.tables import quantity_problem

#: The pseudo-component for what sidecars and init containers add to the main pod.
POD_EXTRA = "sidecars_init"
COMPONENT_ORDER = (*spec.COMPONENTS, POD_EXTRA)
#: counts: integer columns in every frame; connections are nullable (a group without a DB)
COUNTS = ("deployments", "replicas_min", "replicas_max")
NULLABLE_COUNTS = ("db_max_connections",)

#: The service's documented development defaults, per replica (1 CPU, 1 GB read as 1024 MiB,
#: one replica). Production starts at 2 CPU / 2 GB and up to 10 replicas.
DEV_DEFAULT_CPU_CORES = 1.0
DEV_DEFAULT_MEMORY_MIB = 1024.0
DEV_MAX_REPLICAS = 1.0
PRODUCTION_TYPES = frozenset({"prod"})

#: container table columns (cores and MiB, parsed from Kubernetes quantities by the export)
_CONTAINER_MEASURES = {
    "cpu_request_cores": ("cpu_request", 1.0),
    "cpu_limit_cores": ("cpu_limit", 1.0),
    "memory_request_gib": ("memory_request_mb", 1.0 / MIB_PER_GIB),
    "memory_limit_gib": ("memory_limit_mb", 1.0 / MIB_PER_GIB),
}
#: A container's request left empty is its limit (Kubernetes' defaulting).
_REQUEST_TO_LIMIT = {"cpu_request_cores": "cpu_limit", "memory_request_gib": "memory_limit_mb"}


def _column(frame: pd.DataFrame, name: str | None) -> pd.Series:
    """A numeric column as float, all-null when the spec or the file lacks it."""
    if name is None or name not in frame.columns:
        return pd.Series(float("nan"), index=frame.index, dtype="float64")
    return pd.to_numeric(frame[name], errors="coerce").astype("float64")


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


def _replicas(deployments: pd.DataFrame, field: str | None) -> pd.Series:
    """Replicas as a count: an empty scale is one replica, a fractional one rounds up (a
    scheduler cannot run part of a pod)."""
    return _column(deployments, field).fillna(1.0).map(math.ceil).astype("int64")


def _with_totals(frame: pd.DataFrame) -> pd.DataFrame:
    for measure in MEASURES:
        for scale in SCALES:
            frame[f"{measure}_{scale}_scale"] = (
                frame[measure].fillna(0.0) * frame[f"replicas_{scale}"]
            )
    return frame


def pod_requests(source: Snapshot | str) -> pd.DataFrame:
    """Per deployment, the main workload's pod per replica as Kubernetes schedules it.

    For each of CPU request/limit (cores) and memory request/limit (GiB): the main container
    (`main_*`), the sum of its sidecars (`sidecars_*`: native sidecars, init containers with
    `restartPolicy: Always`, included), the init phase's peak (`largest_init_*`: each init
    container in order beside the native sidecars started before it) and the effective pod
    figure (`pod_*` = max(main + sidecars, init peak)), which is what a node must have free
    to place one replica. `sidecars` counts native sidecars too; `init_containers` the rest.
    """
    return as_snapshot(source).derived("pod_requests", _pod_requests)


def _pod_requests(snap: Snapshot) -> pd.DataFrame:
    deployments = snap.deployments
    out = _identity(deployments)
    fields = spec.component_measures()["main"]
    out["replicas_min"] = _replicas(deployments, fields.get("min_scale"))
    out["replicas_max"] = _replicas(deployments, fields.get("max_scale"))
    pod = _PodContainers(snap.containers)
    out["sidecars"] = _per_deployment(out, pod.ids[pod.sidecar].value_counts()).astype("int64")
    plain_init = pod.init & ~pod.native
    out["init_containers"] = _per_deployment(out, pod.ids[plain_init].value_counts()).astype(
        "int64"
    )
    for measure, (main_field, factor) in MEASURES.items():
        values = pod.values(measure)
        main = _column(deployments, fields.get(main_field)).fillna(0.0) * factor
        sidecars = _per_deployment(out, values[pod.sidecar].groupby(pod.ids[pod.sidecar]).sum())
        init_peak = _per_deployment(out, pod.init_peak(values))
        out[f"main_{measure}"] = main
        out[f"sidecars_{measure}"] = sidecars
        out[f"largest_init_{measure}"] = init_peak
        out[f"pod_{measure}"] = (main + sidecars).where(main + sidecars >= init_peak, init_peak)
    return out.reset_index(drop=True)


class _PodContainers:
    """A snapshot's sidecars and init containers as Kubernetes places them in the pod.

    A native sidecar (an init container with `restartPolicy: Always`) starts in the init
    phase, in its order among the init containers, and runs beside the main container from
    then on: it counts among the sidecars, and beside every init container after it
    (`init_peak`), as the scheduler counts it (kubernetes/enhancements KEP 753).
    """

    def __init__(self, containers: pd.DataFrame) -> None:
        self.containers = containers
        self.ids = _text(containers, "deployment_id")
        kind = _text(containers, "kind")
        policy = _text(containers, "restart_policy")
        self.init = kind == "init"
        self.native = self.init & (policy == "Always")
        self.sidecar = (kind == "sidecar") | self.native
        self.position = _column(containers, "position")

    def values(self, measure: str) -> pd.Series:
        """A measure per container in the report's unit; a request left empty is its limit,
        as in Kubernetes; nothing at all counts 0 (and an unreadable quantity is an anomaly)."""
        field, factor = _CONTAINER_MEASURES[measure]
        values = _column(self.containers, field)
        if measure in _REQUEST_TO_LIMIT:
            values = values.fillna(_column(self.containers, _REQUEST_TO_LIMIT[measure]))
        return values.fillna(0.0) * factor

    def init_peak(self, values: pd.Series) -> pd.Series:
        """Per deployment id, the most the init phase asks at once: each init container with
        the native sidecars started before it, each native sidecar with those and itself."""
        init = pd.DataFrame(
            {"id": self.ids, "position": self.position, "value": values, "native": self.native}
        )[self.init].sort_values(["id", "position"], kind="stable")
        running = init["value"].where(init["native"], 0.0).groupby(init["id"]).cumsum()
        return (running + init["value"].where(~init["native"], 0.0)).groupby(init["id"]).max()


def _per_deployment(frame: pd.DataFrame, by_id: pd.Series) -> pd.Series:
    """`by_id` (indexed by deployment id) aligned to `frame`'s deployments, 0 where absent."""
    return frame["deployment_id"].map(by_id).astype("float64").fillna(0.0)


def component_capacity(source: Snapshot | str) -> pd.DataFrame:
    """One row per deployment × component it has, per replica and in total at min/max scale.

    `main` is listed for every deployment (so one with no resources still counts); other
    components only where the deployment sets one of their fields. `sidecars_init` rows carry
    what sidecars and init containers add to the main pod (see `pod_requests`).
    """
    return as_snapshot(source).derived("component_capacity", _component_capacity)


def _component_capacity(snap: Snapshot) -> pd.DataFrame:
    deployments = snap.deployments
    identity = _identity(deployments)
    frames = []
    for component in spec.COMPONENTS:
        fields = spec.component_measures()[component]
        frame = identity.copy()
        frame["component"] = component
        present = pd.Series(component == "main", index=deployments.index)
        for measure, (field, factor) in MEASURES.items():
            values = _column(deployments, fields.get(field))
            frame[measure] = values * factor
            present |= values.notna()
        frame["db_storage_gib"] = _column(deployments, fields.get("storage_gi"))
        frame["db_max_connections"] = _column(deployments, fields.get("max_connections"))
        present |= frame["db_storage_gib"].notna() | frame["db_max_connections"].notna()
        frame["replicas_min"] = _replicas(deployments, fields.get("min_scale"))
        frame["replicas_max"] = _replicas(deployments, fields.get("max_scale"))
        frames.append(frame[present])

    pods = pod_requests(snap)
    extra = pods[[*IDENTITY, "replicas_min", "replicas_max"]].copy()
    extra["component"] = POD_EXTRA
    for measure in MEASURES:
        extra[measure] = pods[f"pod_{measure}"] - pods[f"main_{measure}"]
    extra["db_storage_gib"] = float("nan")
    extra["db_max_connections"] = float("nan")
    has_containers = (pods["sidecars"] + pods["init_containers"]) > 0
    frames.append(extra[has_containers.to_numpy()])

    out = pd.concat(frames, ignore_index=True)
    out = _with_totals(out)
    out["component"] = out["component"].astype("str")
    out["db_max_connections"] = out["db_max_connections"].round().astype("Int64")
    columns = [*IDENTITY, "component", "replicas_min", "replicas_max", *MEASURES, *TOTALS]
    return out[[*columns, *DB_COLUMNS]]


def _component_sort(frame: pd.DataFrame) -> pd.DataFrame:
    if "component" not in frame.columns:
        return frame
    order = {c: i for i, c in enumerate(COMPONENT_ORDER)}
    keys = [
        c
        for c in frame.columns
        if c in ("component", "deployment_type", "k8s_namespace", "tenant_id")
    ]
    return frame.sort_values(
        keys, key=lambda s: s.map(order) if s.name == "component" else s.astype(str)
    ).reset_index(drop=True)


def _counts_as_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """Count columns as integers, `Int64` where a row may have none (connections)."""
    for name in (*COUNTS, *NULLABLE_COUNTS):
        if name in frame.columns:
            dtype: Literal["Int64", "int64"] = "Int64" if name in NULLABLE_COUNTS else "int64"
            frame[name] = frame[name].round().astype(dtype)
    return frame


def capacity_by(
    source: Snapshot | str | pd.DataFrame,
    by: list[str],
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
) -> pd.DataFrame:
    """Totals of `component_capacity` grouped by `by` (component, deployment_type, namespace),
    with their monthly cost under `prices` (the `prices.COST_COLUMNS`).

    `deployments` counts distinct deployments in the group; replicas, resources and costs are
    sums. `db_max_connections` is null for a group without a database.
    """
    rows = source if isinstance(source, pd.DataFrame) else component_capacity(source)
    rows = pr.add_costs(rows, prices)
    grouped = rows.groupby(by, dropna=False, sort=False)
    out = grouped[["replicas_min", "replicas_max", *TOTALS]].sum()
    out.insert(0, "deployments", grouped["deployment_id"].nunique())
    out["db_storage_gib"] = grouped["db_storage_gib"].sum(min_count=1)
    out["db_max_connections"] = grouped["db_max_connections"].sum(min_count=1)
    out[pr.COST_COLUMNS] = grouped[pr.COST_COLUMNS].sum()
    return _counts_as_ints(_component_sort(out.reset_index()))


def capacity_by_component(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    return capacity_by(source, ["component"], prices)


def capacity_by_type(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    return capacity_by(source, ["deployment_type"], prices)


def capacity_by_namespace(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """Namespaces by requested CPU at max scale, largest first (where the cluster feels it)."""
    out = capacity_by(source, ["k8s_namespace"], prices)
    return out.sort_values(
        ["cpu_request_cores_max_scale", "k8s_namespace"], ascending=[False, True]
    ).reset_index(drop=True)


def capacity_by_workspace(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """Totals and costs per workspace (`tenant_id`), largest requested CPU first: the content
    of `capacity_by_workspace.parquet`. A snapshot older than workspaces has one null row."""
    out = capacity_by(source, ["tenant_id"], prices)
    return out.sort_values(
        ["cpu_request_cores_max_scale", "tenant_id"], ascending=[False, True]
    ).reset_index(drop=True)


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

    Counts (deployments, replicas, DB connections) are ints; sums of measures are rounded to
    what the unit can mean (cores and GiB to 3 decimals, dollars to cents), so 17491.000427
    GiB reads 17491.0. `source` may also be a `component_capacity` frame.
    """
    rows = source if isinstance(source, pd.DataFrame) else component_capacity(source)
    rows = pr.add_costs(rows, prices)
    totals: dict[str, int | float] = {"deployments": int(rows["deployment_id"].nunique())}
    for name in ("replicas_min", "replicas_max", "db_max_connections"):
        totals[name] = round(float(rows[name].sum()))
    for name in (*TOTALS, "db_storage_gib", *pr.COST_COLUMNS):
        totals[name] = _rounded(name, float(rows[name].sum()))
    return totals


def _overcommit_columns(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    for resource in ("cpu", "memory"):
        unit = "cores" if resource == "cpu" else "gib"
        request = frame[f"{resource}_request_{unit}_max_scale"]
        limit = frame[f"{resource}_limit_{unit}_max_scale"]
        out[f"{resource}_request_{unit}_max_scale"] = request
        out[f"{resource}_limit_{unit}_max_scale"] = limit
        out[f"{resource}_overcommit"] = (limit / request).where(request > 0)
    return out


def overcommit(source: Snapshot | str) -> pd.DataFrame:
    """Limit ÷ request per component, at max scale (min scale gives the same ratio for one
    component). One row per component; the fleet's ratio is `overcommit_total`.

    Above 1 the fleet can burst past what the scheduler reserved; the ratio is NaN where
    nothing is requested.
    """
    by_component = capacity_by(component_capacity(source), ["component"])
    out = by_component[["component", "deployments"]].copy()
    return pd.concat([out, _overcommit_columns(by_component)], axis=1)


def overcommit_total(source: Snapshot | str) -> dict[str, float]:
    """The whole fleet's limit ÷ request at max scale, with the sums it divides."""
    totals = pd.DataFrame([fleet_totals(component_capacity(source))])
    row = _overcommit_columns(totals).iloc[0]
    return {str(name): float(value) for name, value in row.items()}


def _db_rows(source: Snapshot | str) -> pd.DataFrame:
    rows = component_capacity(source)
    return rows[rows["component"] == "db"]


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
            "db_max_connections": grouped["db_max_connections"].sum().round().astype("int64"),
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
        "db_max_connections": round(float(db["db_max_connections"].sum())),
    }


def deployment_totals(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """One row per deployment: its totals and monthly costs over every component (sidecars
    and init containers included)."""
    snap = as_snapshot(source)
    rows = pr.add_costs(component_capacity(snap), prices)
    measures = [*TOTALS, *DB_COLUMNS, *pr.COST_COLUMNS]
    sums = rows.groupby("deployment_id", sort=False)[measures].sum(min_count=1)
    filled = [*TOTALS, *pr.COST_COLUMNS]
    sums[filled] = sums[filled].fillna(0.0)
    identity = _identity(snap.deployments)
    identity["image_version"] = _text(snap.deployments, "image_version")
    aligned = sums.reindex(identity["deployment_id"].to_numpy()).reset_index(drop=True)
    out = pd.concat([identity.reset_index(drop=True), aligned], axis=1)
    return _counts_as_ints(out)


def cost_by_deployment(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """Monthly cost per deployment, most expensive (requests at max scale) first: the
    content of `cost_by_deployment.parquet`. Every `prices.COST_COLUMNS` column, in dollars."""
    totals = deployment_totals(source, prices)
    columns = [*IDENTITY, "image_version", *pr.COST_COLUMNS]
    ordered = totals.sort_values(
        [pr.cost_column("request", "max"), "deployment_id"], ascending=[False, True]
    )
    return ordered[columns].reset_index(drop=True)


def largest_deployments(
    source: Snapshot | str, n: int = 10, by: str = "cpu_request_cores_max_scale"
) -> pd.DataFrame:
    """The `n` deployments asking for the most of `by` (a `deployment_totals` column)."""
    totals = deployment_totals(source)
    ordered = totals.sort_values([by, "deployment_id"], ascending=[False, True])
    return ordered.head(n).reset_index(drop=True)


def anomalies(source: Snapshot | str) -> pd.DataFrame:
    """Resource settings that are probably mistakes, one row per (deployment, finding).

    Kinds: `resource_spec_absent` (no resource field at all — the dataset cannot tell an absent
    resource_spec from an empty one), `missing_resources` (a component sets some fields but
    not its CPU or memory request), `zero_resources`, `cpu_limit_below_request`,
    `memory_limit_below_request` and `max_scale_below_min_scale`; sidecars and init containers
    get the limit checks too, and `unreadable_quantity` for a quantity that is not a
    Kubernetes quantity (its column is null; the detail quotes it and says why).
    """
    snap = as_snapshot(source)
    found = _Findings(snap.deployments)
    numeric = [f for f in spec.resource_numeric_fields() if f in found.deployments.columns]
    absent = (
        found.deployments[numeric].isna().all(axis=1)
        if numeric
        else pd.Series(True, index=found.deployments.index)
    )
    found.add(absent, "resource_spec", "resource_spec_absent")
    for component in spec.COMPONENTS:
        _component_findings(found, component, absent)
    _container_findings(found, snap.containers)
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
        parts = [name + "=" + _shown(_column(self.deployments, name)[mask]) for name in shown]
        frame["detail"] = (
            pd.concat(parts, axis=1).agg(" ".join, axis=1) if parts else "no resource field is set"
        )
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
    # main is expected on every deployment; other components only where any field is set
    set_any = ~absent
    if component != "main":
        set_any &= cpu.notna() | cpu_limit.notna() | mem.notna() | mem_limit.notna()
    requests = [f for f in (names["cpu"], names["memory_mb"]) if f]
    found.add(set_any & (cpu.isna() | mem.isna()), component, "missing_resources", *requests)
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
        low, high = _column(deployments, low_field), _column(deployments, high_field)
        found.add(high < low, component, "max_scale_below_min_scale", low_field, high_field)


def _container_findings(found: _Findings, containers: pd.DataFrame) -> None:
    """Sidecars and init containers whose CPU or memory limit is below the request, or
    whose quantity is not a Kubernetes quantity."""
    if containers.empty:
        return
    _unreadable_quantities(found, containers)
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


#: A container's quantity columns: (column, JSON text column, section, key), as exported.
_QUANTITY_TEXT = (
    ("cpu_request", "resources_requests_json", "requests", "cpu"),
    ("cpu_limit", "resources_limits_json", "limits", "cpu"),
    ("memory_request_mb", "resources_requests_json", "requests", "memory"),
    ("memory_limit_mb", "resources_limits_json", "limits", "memory"),
)


def _unreadable_quantities(found: _Findings, containers: pd.DataFrame) -> None:
    """`unreadable_quantity`: a quantity sent that the export could not read (its column
    null, not 0); the detail quotes it with the reason (`analysis.tables.quantity_problem`)."""
    by_id = found.identity.set_index("deployment_id")
    for column, json_column, section, key in _QUANTITY_TEXT:
        if json_column not in containers.columns:
            continue  # a dataset written before these columns were read
        unread = _column(containers, column).isna() & containers[json_column].notna()
        sent = [_member(text, key) for text in containers.loc[unread, json_column]]
        why = [quantity_problem(value) for value in sent]
        rows = containers[unread][[reason is not None for reason in why]]
        found_here = [(v, reason) for v, reason in zip(sent, why, strict=True) if reason]
        if rows.empty:
            continue
        frame = by_id.reindex(_text(rows, "deployment_id")).reset_index()
        frame["component"] = (
            _text(rows, "kind").fillna("container") + ":" + _text(rows, "name").fillna("")
        ).to_numpy()
        frame["anomaly"] = "unreadable_quantity"
        frame["detail"] = [
            f"{section}.{key} {json.dumps(value, ensure_ascii=False)}: {reason}"
            for value, reason in found_here
        ]
        found.frames.append(frame)


def _member(text: str, key: str) -> object:
    """`key` of the JSON object `text` (None when it is no object or has no such key)."""
    value = json.loads(text)
    return value.get(key) if isinstance(value, dict) else None


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
    deployments = snap.deployments
    fields = spec.component_measures()["main"]
    out = _identity(deployments)
    cpu = _column(deployments, fields.get("cpu"))
    mem = _column(deployments, fields.get("memory_mb"))
    max_scale = _column(deployments, fields.get("max_scale"))
    out["cpu_request_cores"] = cpu
    out["memory_request_gib"] = mem / MIB_PER_GIB
    out["max_scale"] = _replicas(deployments, fields.get("max_scale"))
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
    rates = frame["deployment_type"].astype("object").map(prices.rates)
    cpu_rate = rates.map(lambda r: r.cpu_core_hour).astype("float64")
    mem_rate = rates.map(lambda r: r.memory_gib_hour).astype("float64")
    cpu = frame["cpu_request_cores"].fillna(0.0)
    mem = frame["memory_request_gib"].fillna(0.0)
    replicas = frame["max_scale"].astype("float64")
    default_mem_gib = DEV_DEFAULT_MEMORY_MIB / MIB_PER_GIB

    def monthly(cores: pd.Series, gib: pd.Series, count: pd.Series) -> pd.Series:
        return count * (cores * cpu_rate + gib * mem_rate) * prices.hours_per_month

    now = monthly(cpu, mem, replicas)
    after = monthly(
        cpu.clip(upper=DEV_DEFAULT_CPU_CORES),
        mem.clip(upper=default_mem_gib),
        replicas.clip(upper=DEV_MAX_REPLICAS),
    )
    return now - after
