"""Independent, plain-Python figures over raw fleet dicts, for checking the reports.

Nothing here imports dims._tables (its quantities included) or dims._reports: the reports
read Parquet written by the export, these read the raw JSON-shaped records, so a shared bug
cannot make both sides agree. Only the field names come from dims._spec (the contract).
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Any

from dims import _spec as spec

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


#: The largest figure a cluster runs (2^32 cores, replicas, MiB, GiB, connections): written
#: out here, not imported, so that a wrong bound in the tables shows up as a difference.
LARGEST_FIGURE = 2**32


def _spelled(record: dict) -> dict[str, Any]:
    """The record's resource_spec under the spec's names (`redis_cpu` is `cache_cpu`; sent
    under both, the spec's name wins)."""
    published = spec.original_names()["ResourceSpec"]
    rs = resource_spec(record)
    out = {published[k]: v for k, v in rs.items() if k in published}
    out.update({k: v for k, v in rs.items() if k not in published})
    return out


def unreadable_figures(record: dict) -> dict[str, float]:
    """The resource_spec figures no cluster runs (negative, or above 2^32), by field."""
    rs = _spelled(record)
    found = {f: rs.get(f) for f in spec.resource_numeric_fields()}
    return {f: v for f, v in found.items() if v is not None and not 0 <= v <= LARGEST_FIGURE}


def figures(record: dict) -> dict[str, Any]:
    """The record's resource_spec under the spec's names, the figures no cluster runs taken
    out (None)."""
    rs, unreadable = _spelled(record), unreadable_figures(record)
    return {k: (None if k in unreadable else v) for k, v in rs.items()}


def namespace(record: dict) -> str | None:
    return ((record.get("source_config") or {}).get("listener_config") or {}).get("k8s_namespace")


#: Kubernetes' quantity grammar (k8s.io/apimachinery resource.Quantity), ASCII digits only.
_QUANTITY = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?"
)


def readable(raw: Any) -> bool:
    """Is `raw` a Kubernetes quantity (a JSON number, or text in its grammar)?"""
    if isinstance(raw, bool):
        return False
    if isinstance(raw, int | float):
        return math.isfinite(raw)
    return isinstance(raw, str) and _QUANTITY.fullmatch(raw) is not None


def quantity(container: dict, section: str, key: str) -> tuple[str, float | None]:
    """("value", figure), ("absent", None) or ("unreadable", None), in cores or GiB."""
    raw = (((container.get("resources") or {}).get(section)) or {}).get(key)
    if raw is None:
        return "absent", None
    if not readable(raw):
        return "unreadable", None
    value = (cpu if key == "cpu" else memory_gib)(raw)
    largest = LARGEST_FIGURE if key == "cpu" else LARGEST_FIGURE / 1024  # cores; MiB as GiB
    if value is None or not 0 <= value <= largest:  # no cluster runs it
        return "unreadable", None
    return "value", value + 0.0


def container_value(container: dict, measure: str) -> float | None:
    """One container's figure as Kubernetes applies it: an empty request is the limit, both
    empty ask 0; an empty limit is unbounded (None); what an unreadable quantity feeds is
    unknown (None)."""
    section, key = CONTAINER_KEYS[measure]
    state, value = quantity(container, section, key)
    if section == "limits" or state != "absent":
        return value
    limit_state, limit = quantity(container, "limits", key)
    return 0.0 if limit_state == "absent" else limit


def _plus(*values: float | None) -> float | None:
    return None if any(v is None for v in values) else sum(values)  # type: ignore[arg-type]


def pod_parts(
    sidecars: list[dict], inits: list[dict], measure: str
) -> tuple[float | None, float | None]:
    """(what runs beside the main container, the init phase's peak), the way the Kubernetes
    scheduler adds them up: an init container with restartPolicy Always is a native sidecar,
    running from its turn in the init phase on, beside the later init containers too. None
    where any part is unknown."""
    side = _plus(*(container_value(c, measure) for c in sidecars))
    running, peak = 0.0, 0.0  # native sidecars started so far; the most asked at once
    unknown = False
    for container in inits:
        value = container_value(container, measure)
        if value is None:
            unknown = True
            value = 0.0
        if container.get("restartPolicy") == "Always":
            running += value
            side = _plus(side, value)
            peak = max(peak, running)
        else:
            peak = max(peak, running + value)
    return (None if unknown else side), (None if unknown else peak)


def _containers(record: dict) -> list[dict]:
    rs = resource_spec(record)
    return [*(rs.get("sidecars") or []), *(rs.get("init_containers") or [])]


def _compute_set(values: dict, component: str, absent: bool, sent: set[str] = frozenset()) -> bool:
    """Does the component ask for compute: a CPU or memory field set (or sent unreadable)."""
    if component == "main":
        return not absent
    return any(
        values.get(k) is not None or k in sent
        for k in ("cpu", "cpu_limit", "memory_mb", "memory_limit_mb")
    )


def spec_absent(record: dict) -> bool:
    rs = _spelled(record)
    return all(rs.get(name) is None for name in spec.resource_numeric_fields())


def _sent(record: dict, fields: dict[str, str]) -> set[str]:
    """The component's measures whose figure was sent unreadable."""
    unreadable = unreadable_figures(record)
    return {m for m, f in fields.items() if f in unreadable}


def status(record: dict) -> dict[str, Any]:
    """The pricing rules of the reports, from the raw record: `unpriced_reason`,
    `limits_unbounded`, `scale_inverted`."""
    rs, absent = figures(record), spec_absent(record)
    missing = unbounded = inverted = False
    for component, fields in spec.component_measures().items():
        values, sent = {m: rs.get(f) for m, f in fields.items()}, _sent(record, fields)
        unset = {m for m in fields if values.get(m) is None and m not in sent}
        if _compute_set(values, component, absent, sent):
            missing |= bool(unset & {"cpu", "memory_mb"})
            unbounded |= bool(unset & {"cpu_limit", "memory_limit_mb"})
        if not sent & {"min_scale", "max_scale"}:
            inverted |= replicas(values.get("max_scale")) < replicas(values.get("min_scale"))
    states = [quantity(c, s, k) for c in _containers(record) for s, k in CONTAINER_KEYS.values()]
    unreadable = any(state == "unreadable" for state, _ in states)
    for container in _containers(record):
        unbounded |= any(quantity(container, "limits", k)[0] == "absent" for k in ("cpu", "memory"))
    reason = None
    if absent:
        reason = "resource_spec_absent"
    elif missing:
        reason = "missing_resources"
    elif unreadable or unreadable_figures(record):
        reason = "unreadable_quantity"
    return {
        "unpriced_reason": reason,
        "limits_unbounded": unbounded and not absent,
        "scale_inverted": inverted,
    }


def components(record: dict) -> dict[str, dict[str, float | None]]:
    """component -> per-replica figures (None where unknown or missing) and replicas, as the
    report's assumptions define them; max scale never below min scale.

    Includes the `sidecars_init` pseudo-component when the pod has sidecars or init containers.
    """
    rs, absent = figures(record), spec_absent(record)
    out: dict[str, dict[str, float | None]] = {}
    for component, fields in spec.component_measures().items():
        values, sent = {m: rs.get(f) for m, f in fields.items()}, _sent(record, fields)
        asks = _compute_set(values, component, absent, sent)
        present = (
            component == "main"
            or asks
            or any(
                values.get(k) is not None or k in sent for k in ("storage_gi", "max_connections")
            )
        )
        if not present:
            continue
        low = None if "min_scale" in sent else replicas(values.get("min_scale"))
        high = None if "max_scale" in sent else replicas(values.get("max_scale"))
        row: dict[str, float | None] = {
            "replicas_min": low,
            "replicas_max": None if low is None or high is None else max(low, high),
            "db_storage_gib": float(values.get("storage_gi") or 0.0),
            "db_max_connections": float(values.get("max_connections") or 0.0),
        }
        for out_name, (measure, factor) in MEASURES.items():
            raw = values.get(measure)
            if component != "main" and not asks:
                row[out_name] = 0.0
            else:
                row[out_name] = None if raw is None else float(raw) * factor
        out[component] = row
    sidecars = rs.get("sidecars") or []
    inits = rs.get("init_containers") or []
    if sidecars or inits:
        main = out["main"]
        extra: dict[str, float | None] = {
            "replicas_min": main["replicas_min"],
            "replicas_max": main["replicas_max"],
            "db_storage_gib": 0.0,
            "db_max_connections": 0.0,
        }
        for measure in MEASURES:
            side, init_peak = pod_parts(sidecars, inits, measure)
            pod = (
                None
                if None in (main[measure], side, init_peak)
                else max(
                    main[measure] + side,
                    init_peak,  # type: ignore[operator]
                )
            )
            extra[measure] = None if pod is None else pod - main[measure]  # type: ignore[operator]
        out["sidecars_init"] = extra
    return out


def replicas(scale: Any) -> float:
    """Pods of a component: 1 when no scale is set, else the scale rounded up (whole pods)."""
    return 1.0 if scale is None else float(math.ceil(scale))


def _known(measure: str, state: dict[str, Any]) -> bool:
    """Is `measure` of a deployment in `state` known? Unpriced: nothing; unbounded: no limit."""
    if state["unpriced_reason"] is not None:
        return False
    return not ("_limit_" in measure and state["limits_unbounded"])


def row_totals(row: dict[str, float | None], state: dict[str, Any]) -> dict[str, float | None]:
    """A component row's totals at min and max scale (None where the rules leave it out)."""
    out: dict[str, float | None] = {}
    for measure in MEASURES:
        for scale in ("min", "max"):
            value = row[measure]
            known = _known(measure, state) and value is not None
            out[f"{measure}_{scale}_scale"] = value * row[f"replicas_{scale}"] if known else None  # type: ignore[operator]
    priced = state["unpriced_reason"] is None
    out["db_storage_gib"] = row["db_storage_gib"] if priced else None
    out["db_max_connections"] = row["db_max_connections"] if priced else None
    return out


def totals(record: dict) -> dict[str, float | None]:
    """One deployment's totals at min and max scale over every component (None where the
    rules leave it out: unpriced, or the limits of an unbounded one)."""
    state = status(record)
    out: dict[str, float | None] = {}
    for row in components(record).values():
        for name, value in row_totals(row, state).items():
            if name not in out:
                out[name] = value
            elif value is None or out[name] is None:
                out[name] = None
            else:
                out[name] += value  # type: ignore[operator]
    return out


def grouped_totals(records: list[dict], key) -> dict[Any, dict[str, Any]]:
    """Totals per group, of what is known (None where nothing is); `key(record, component)`
    names the group (None skips the row). Each group also has `ids`, `unpriced` and
    `unbounded` (sets of ids: the unbounded ones priced)."""
    out: dict[Any, dict[str, Any]] = {}
    for record in records:
        state = status(record)
        for component, row in components(record).items():
            group = key(record, component)
            if group is None:
                continue
            acc = out.setdefault(group, {"ids": set(), "unpriced": set(), "unbounded": set()})
            for name, value in row_totals(row, state).items():
                if name.endswith("_scale"):
                    acc[name] = acc.get(name) if value is None else (acc.get(name) or 0.0) + value
            acc["ids"].add(record["id"])
            if state["unpriced_reason"] is not None:
                acc["unpriced"].add(record["id"])
            elif state["limits_unbounded"]:
                acc["unbounded"].add(record["id"])
    return out


def unbounded_resources(record: dict) -> set[str]:
    """The resources ("cpu", "memory") a priced deployment has no limit of somewhere: in a
    component that asks for compute, or in a sidecar or init container."""
    if status(record)["unpriced_reason"] is not None:
        return set()
    rs, found = resource_spec(record), set()
    for component, fields in spec.component_measures().items():
        values = {m: rs.get(f) for m, f in fields.items()}
        if _compute_set(values, component, False):
            found |= {
                r
                for r, f in (("cpu", "cpu_limit"), ("memory", "memory_limit_mb"))
                if values.get(f) is None
            }
    for container in _containers(record):
        found |= {k for k in ("cpu", "memory") if quantity(container, "limits", k)[0] == "absent"}
    return found


def fleet_sum(records: list[dict], measure: str) -> float:
    """`totals(record)[measure]` summed over the records where it is known."""
    values = [totals(r)[measure] for r in records]
    return sum(v for v in values if v is not None)


def timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def export_fleet(records: list[dict], types: dict[str, str], out_dir, snapshot_date: str) -> None:
    """Write one snapshot through the real export path, one Page per deployment_type listing."""
    from dims import _snapshot as snapshot
    from dims._pages import Page

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
) -> dict[str, float | None]:
    """One deployment's monthly cost in dollars: cores × $/core-hour × hours + GiB ×
    $/GiB-hour × hours, per basis (request, limit) and scale, plus storage once a month.
    None where the rules leave it out: every cost of an unpriced deployment, the limits of
    an unbounded one."""
    t = totals(record)
    storage = (
        None if t["db_storage_gib"] is None else t["db_storage_gib"] * rates["storage_gib_month"]
    )
    out: dict[str, float | None] = {"storage_cost_usd_month": storage}
    for basis in ("request", "limit"):
        for scale in ("min", "max"):
            cores, gib = (
                t[f"cpu_{basis}_cores_{scale}_scale"],
                t[f"memory_{basis}_gib_{scale}_scale"],
            )
            cpu_cost = None if cores is None else cores * rates["cpu_core_hour"] * hours
            memory = None if gib is None else gib * rates["memory_gib_hour"] * hours
            out[f"cpu_cost_{basis}_{scale}_scale_usd_month"] = cpu_cost
            out[f"memory_cost_{basis}_{scale}_scale_usd_month"] = memory
            out[f"cost_{basis}_{scale}_scale_usd_month"] = _plus(cpu_cost, memory, storage)
    return out


def fleet_cost(
    records: list[dict], column: str, rates=None, hours: float = HOURS_PER_MONTH
) -> float:
    """A cost column summed over the records whose cost is known."""
    rates_of = rates or (lambda record: OPENCOST_RATES)
    values = [monthly_costs(r, rates_of(r), hours)[column] for r in records]
    return sum(v for v in values if v is not None)
