"""Independent, plain-Python figures over raw fleet dicts, for checking the reports.

Nothing here imports analysis.tables (its quantities included) or analysis.reports: the reports
read Parquet written by the export, these read the raw JSON-shaped records, so a shared bug
cannot make both sides agree. Only the field names come from analysis.spec (the contract).
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

from analysis import spec

MEASURES = {  # report column -> (resource_spec measure, factor to the report unit)
    "cpu_request_cores": ("cpu", 1.0),
    "cpu_limit_cores": ("cpu_limit", 1.0),
    "memory_request_gib": ("memory_mb", 1 / 1024),
    "memory_limit_gib": ("memory_limit_mb", 1 / 1024),
}
CONTAINER_KEYS = {  # report column -> (resources section, key)
    "cpu_request_cores": ("requests", "cpu"),
    "cpu_limit_cores": ("limits", "cpu"),
    "memory_request_gib": ("requests", "memory"),
    "memory_limit_gib": ("limits", "memory"),
}
_BYTES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 1e3, "M": 1e6, "G": 1e9}


def cpu(value: Any) -> float | None:
    """`100m`, `0.25`, `2`, 1 -> cores (the forms the sandbox fleet uses)."""
    if value is None:
        return None
    text = str(value)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def memory_gib(value: Any) -> float | None:
    """`128Mi`, `1.5Gi`, `512M` -> GiB."""
    if value is None:
        return None
    text = str(value)
    for suffix in sorted(_BYTES, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * _BYTES[suffix] / 2**30
    return float(text) / 2**30


def resource_spec(record: dict) -> dict:
    return ((record.get("source_config") or {}).get("resource_spec")) or {}


def namespace(record: dict) -> str | None:
    return ((record.get("source_config") or {}).get("listener_config") or {}).get("k8s_namespace")


def _container_value(container: dict, measure: str) -> float:
    resources = container.get("resources") or {}
    section, key = CONTAINER_KEYS[measure]
    raw = (resources.get(section) or {}).get(key)
    if raw is None and section == "requests":  # Kubernetes: request defaults to the limit
        raw = (resources.get("limits") or {}).get(key)
    parse = cpu if key == "cpu" else memory_gib
    return parse(raw) or 0.0


def components(record: dict) -> dict[str, dict[str, float]]:
    """component -> per-replica figures and replicas, as the report's assumptions define them.

    Includes the `sidecars_init` pseudo-component when the pod has sidecars or init containers.
    """
    rs = resource_spec(record)
    out: dict[str, dict[str, float]] = {}
    for component, fields in spec.component_measures().items():
        values = {m: rs.get(f) for m, f in fields.items()}
        resource_keys = ("cpu", "cpu_limit", "memory_mb", "memory_limit_mb")
        present = component == "main" or any(
            values.get(k) is not None for k in (*resource_keys, "storage_gi", "max_connections")
        )
        if not present:
            continue
        row = {
            "replicas_min": replicas(values.get("min_scale")),
            "replicas_max": replicas(values.get("max_scale")),
            "db_storage_gib": float(values.get("storage_gi") or 0.0),
            "db_max_connections": float(values.get("max_connections") or 0.0),
        }
        for out_name, (measure, factor) in MEASURES.items():
            row[out_name] = float(values.get(measure) or 0.0) * factor
        out[component] = row
    sidecars = rs.get("sidecars") or []
    inits = rs.get("init_containers") or []
    if sidecars or inits:
        main = out["main"]
        extra = {"replicas_min": main["replicas_min"], "replicas_max": main["replicas_max"]}
        extra["db_storage_gib"] = extra["db_max_connections"] = 0.0
        for measure in MEASURES:
            side, init_peak = pod_parts(sidecars, inits, measure)
            extra[measure] = max(main[measure] + side, init_peak) - main[measure]
        out["sidecars_init"] = extra
    return out


def replicas(scale: Any) -> float:
    """Pods of a component: 1 when no scale is set, else the scale rounded up (whole pods)."""
    return 1.0 if scale is None else float(math.ceil(scale))


def pod_parts(sidecars: list[dict], inits: list[dict], measure: str) -> tuple[float, float]:
    """(what runs beside the main container, the init phase's peak), the way the Kubernetes
    scheduler adds them up: an init container with restartPolicy Always is a native sidecar,
    running from its turn in the init phase on, beside the later init containers too."""
    side = sum(_container_value(c, measure) for c in sidecars)
    running = peak = 0.0  # native sidecars started so far; the most asked at once
    for container in inits:
        value = _container_value(container, measure)
        if container.get("restartPolicy") == "Always":
            running += value
            side += value
            peak = max(peak, running)
        else:
            peak = max(peak, running + value)
    return side, peak


def totals(record: dict) -> dict[str, float]:
    """One deployment's totals at min and max scale over every component."""
    out: dict[str, float] = {}
    for row in components(record).values():
        for measure in MEASURES:
            for scale in ("min", "max"):
                key = f"{measure}_{scale}_scale"
                out[key] = out.get(key, 0.0) + row[measure] * row[f"replicas_{scale}"]
        out["db_storage_gib"] = out.get("db_storage_gib", 0.0) + row["db_storage_gib"]
        out["db_max_connections"] = out.get("db_max_connections", 0.0) + row["db_max_connections"]
    return out


def grouped_totals(records: list[dict], key) -> dict[Any, dict[str, float]]:
    """Totals per group; `key(record, component)` names the group (None skips the row)."""
    out: dict[Any, dict[str, float]] = {}
    for record in records:
        for component, row in components(record).items():
            group = key(record, component)
            if group is None:
                continue
            acc = out.setdefault(group, {})
            for measure in MEASURES:
                for scale in ("min", "max"):
                    name = f"{measure}_{scale}_scale"
                    acc[name] = acc.get(name, 0.0) + row[measure] * row[f"replicas_{scale}"]
            acc.setdefault("ids", set()).add(record["id"])
    return out


def timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def export_fleet(records: list[dict], types: dict[str, str], out_dir, snapshot_date: str) -> None:
    """Write one snapshot through the real export path, one Page per deployment_type listing."""
    from analysis import snapshot
    from analysis.pages import Page

    pages = []
    for kind in sorted(set(types.values())):
        chosen = [r for r in records if types[r["id"]] == kind]
        pages.append(Page(records=chosen, source=f"test type={kind}", deployment_type=kind))
    snapshot_at = datetime.fromisoformat(f"{snapshot_date}T06:00:00+00:00")
    day = date.fromisoformat(snapshot_date)
    snapshot.export_snapshot(pages, out_dir, snapshot_date=day, snapshot_at=snapshot_at)


#: OpenCost's custom-pricing defaults, written out here (not imported) so a wrong default in
#: the reports shows up as a difference.
OPENCOST_RATES = {"cpu_core_hour": 0.031611, "memory_gib_hour": 0.004237, "storage_gib_month": 0.04}
HOURS_PER_MONTH = 730


def monthly_costs(
    record: dict, rates: dict[str, float] = OPENCOST_RATES, hours: float = HOURS_PER_MONTH
) -> dict[str, float]:
    """One deployment's monthly cost in dollars: cores × $/core-hour × hours + GiB ×
    $/GiB-hour × hours, per basis (request, limit) and scale, plus storage once a month."""
    t = totals(record)
    storage = t["db_storage_gib"] * rates["storage_gib_month"]
    out = {"storage_cost_usd_month": storage}
    for basis in ("request", "limit"):
        for scale in ("min", "max"):
            cpu = t[f"cpu_{basis}_cores_{scale}_scale"] * rates["cpu_core_hour"] * hours
            memory = t[f"memory_{basis}_gib_{scale}_scale"] * rates["memory_gib_hour"] * hours
            out[f"cpu_cost_{basis}_{scale}_scale_usd_month"] = cpu
            out[f"memory_cost_{basis}_{scale}_scale_usd_month"] = memory
            out[f"cost_{basis}_{scale}_scale_usd_month"] = cpu + memory + storage
    return out
