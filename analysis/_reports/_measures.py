"""The report's measures, units and column names: one place that capacity and costs share.

Units are in every column name: CPU in cores, memory in GiB (the service's `memory_mb` is read
as MiB, 1024 per GiB), DB storage in GiB, money in US dollars a month (`_usd_month`).
"""

from __future__ import annotations

MIB_PER_GIB = 1024.0

#: per-replica output column -> (component measure in the spec, factor to the output unit)
MEASURES: dict[str, tuple[str, float]] = {
    "cpu_request_cores": ("cpu", 1.0),
    "cpu_limit_cores": ("cpu_limit", 1.0),
    "memory_request_gib": ("memory_mb", 1.0 / MIB_PER_GIB),
    "memory_limit_gib": ("memory_limit_mb", 1.0 / MIB_PER_GIB),
}
SCALES = ("min", "max")
#: what a figure is based on: what the scheduler reserves (request) or may burst to (limit)
BASES = ("request", "limit")
TOTALS = [f"{m}_{s}_scale" for m in MEASURES for s in SCALES]
DB_COLUMNS = ["db_storage_gib", "db_max_connections"]
#: Who a row is: the deployment, and the workspace (`tenant_id`) it belongs to.
IDENTITY = ["deployment_id", "name", "deployment_type", "k8s_namespace", "tenant_id"]

#: Decimals a summed figure is rounded to, by unit: a millicore is Kubernetes' CPU resolution,
#: a thousandth of a GiB is about one MiB, a cent is the smallest amount of money.
DECIMALS = {"cores": 3, "gib": 3, "usd_month": 2}


def total_column(resource: str, basis: str, scale: str) -> str:
    """`cpu`, `request`, `max` -> `cpu_request_cores_max_scale`."""
    unit = "cores" if resource == "cpu" else "gib"
    return f"{resource}_{basis}_{unit}_{scale}_scale"


def decimals_of(column: str) -> int | None:
    """How many decimals a sum in `column` keeps (None: not a rounded measure)."""
    for unit, places in DECIMALS.items():
        if f"_{unit}" in column or column.endswith(unit):
            return places
    return None
