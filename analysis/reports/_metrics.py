"""A snapshot as Prometheus metrics (`dims metrics`): the report's figures as gauges.

Every value is one the report computes (`fleet_totals`, `capacity_by_type`,
`capacity_by_namespace`, `capacity_by_workspace`, `image_version_summary`,
`newest_share_total`), in base units: cores, bytes (GiB × 1024³), seconds, and dollars a
month. Each is a gauge: a snapshot's figure can go down, so no `_total` counter.

Unknown is never 0: a group whose figure nothing is known of (every deployment unpriced, or
for limits every priced one unbounded) has no sample for it, and each scope carries
`…_deployments_unpriced` and `…_deployments_unbounded`, how many deployments its figures leave
out. A value missing from the dataset (no namespace, type, workspace or version) is the label
value `__unallocated__`, as in the report's allocation.

Two formats: the Prometheus text format 0.0.4 (the default; what the node exporter's textfile
collector and a Pushgateway read), and OpenMetrics 1.0 (`openmetrics=True`: the same lines,
`"` escaped in HELP too, and a final `# EOF`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from analysis.reports import _prices as pr
from analysis.reports._allocation import UNALLOCATED
from analysis.reports._capacity import (
    capacity_by_namespace,
    capacity_by_type,
    capacity_by_workspace,
    fleet_totals,
)
from analysis.reports._frames import Snapshot, as_snapshot
from analysis.reports._images import image_version_summary, newest_share_total
from analysis.reports._measures import BASES, SCALES, decimals_of, total_column

BYTES_PER_GIB = 1024**3
#: Scope -> (the label its groups carry, None for the fleet).
SCOPES = {
    "fleet": None,
    "type": "deployment_type",
    "namespace": "k8s_namespace",
    "workspace": "tenant_id",
}


@dataclass(frozen=True)
class MetricSample:
    """One value of a metric and its labels (name, value), in label order."""

    labels: tuple[tuple[str, str], ...]
    value: float | int


@dataclass(frozen=True)
class MetricFamily:
    """A gauge: its name, its HELP text and its samples."""

    name: str
    help: str
    samples: tuple[MetricSample, ...]


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _value(column: str, value: Any) -> float | int:
    """A report figure in the metric's unit: GiB as whole bytes, counts as ints, cores and
    dollars rounded as the report rounds sums (a millicore, a cent)."""
    if column.endswith("_gib") or "_gib_" in column:
        return round(float(value) * BYTES_PER_GIB)
    if isinstance(value, int) or column.startswith(("deployments", "replicas")):
        return int(value)
    places = decimals_of(column)
    return round(float(value), places) if places is not None else float(value)


#: A metric of each scope: its suffix, HELP, the report column and the labels that pick it.
Measure = tuple[str, str, str, tuple[tuple[str, str], ...]]


def _measures() -> list[Measure]:
    """Every metric each scope has, in the order they are written."""
    out: list[Measure] = [
        ("deployments", "Deployments", "deployments", ()),
        (
            "deployments_unpriced",
            "Deployments left out of every figure (unpriced_reason: no resource spec, a request "
            "missing, a quantity Kubernetes refuses)",
            "deployments_unpriced",
            (),
        ),
        (
            "deployments_unbounded",
            "Priced deployments left out of the limits figures (a limit missing: no cap)",
            "deployments_unbounded",
            (),
        ),
        ("db_storage_bytes", "DB storage requested", "db_storage_gib", ()),
        ("storage_cost_usd_per_month", "DB storage's monthly cost", pr.STORAGE_COST, ()),
    ]
    out += [
        ("replicas", "Replicas of every component", f"replicas_{s}", (("scale", s),))
        for s in SCALES
    ]
    for basis in BASES:
        for scale in SCALES:
            labels = (("basis", basis), ("scale", scale))
            out.append(("cpu_cores", "CPU", total_column("cpu", basis, scale), labels))
            out.append(("memory_bytes", "Memory", total_column("memory", basis, scale), labels))
            help_ = "Monthly cost, CPU + memory + DB storage"
            out.append(("cost_usd_per_month", help_, pr.cost_column(basis, scale), labels))
    return out


_WHAT = {
    "replicas": "at min or max scale (scale)",
    "cpu_cores": "requested or allowed (basis: request, limit) at min or max scale, in cores",
    "memory_bytes": "requested or allowed (basis: request, limit) at min or max scale, in bytes",
    "cost_usd_per_month": "(basis: request, limit; scale: min, max), in US dollars",
}


def _scope_families(
    scope: str, rows: list[tuple[str | None, Mapping[str, Any]]]
) -> list[MetricFamily]:
    """The families of one scope: `rows` are (its label's value, the report's figures)."""
    label = SCOPES[scope]
    where = "of the fleet" if label is None else f"per {label}"
    families: dict[str, tuple[str, list[MetricSample]]] = {}
    for suffix, help_, column, labels in _measures():
        help_text = f"{help_} {_WHAT.get(suffix, '')}".strip() + f", {where}"
        _, samples = families.setdefault(f"dims_{scope}_{suffix}", (help_text, []))
        for value, figures in rows:
            if column not in figures or not _known(figures[column]):
                continue  # unknown: no sample, never 0
            group = () if label is None else ((label, value if value is not None else UNALLOCATED),)
            samples.append(MetricSample((*group, *labels), _value(column, figures[column])))
    return [
        MetricFamily(name, help_, tuple(samples)) for name, (help_, samples) in families.items()
    ]


def _group_rows(frame: Any, key: str) -> list[tuple[str | None, Mapping[str, Any]]]:
    records: list[dict[str, Any]] = frame.to_dict(orient="records")
    return [(r[key] if isinstance(r[key], str) else None, r) for r in records]


def _capacity_families(snap: Snapshot, prices: pr.PriceSheet) -> list[MetricFamily]:
    totals = fleet_totals(snap, prices)
    fleet = _scope_families("fleet", [(None, totals)])
    inverted = MetricSample((), int(totals["deployments_scale_inverted"]))
    fleet.append(
        MetricFamily(
            "dims_fleet_deployments_scale_inverted",
            "Deployments with a max_scale below min_scale (priced at min_scale), of the fleet",
            (inverted,),
        )
    )
    for scope, frame in (
        ("type", capacity_by_type(snap, prices)),
        ("namespace", capacity_by_namespace(snap, prices)),
        ("workspace", capacity_by_workspace(snap, prices)),
    ):
        fleet += _scope_families(scope, _group_rows(frame, str(SCOPES[scope])))
    return fleet


def _version_families(snap: Snapshot) -> list[MetricFamily]:
    summary = image_version_summary(snap).to_dict(orient="records")
    counts, behind = [], []
    for row in summary:
        version = row["image_version"] if isinstance(row["image_version"], str) else UNALLOCATED
        counts.append(MetricSample((("image_version", version),), int(row["deployments"])))
        if _known(row["versions_behind"]) and row["versions_behind"] is not None:
            behind.append(MetricSample((("image_version", version),), int(row["versions_behind"])))
    share = newest_share_total(snap)["share_on_newest"]
    return [
        MetricFamily(
            "dims_image_version_deployments", "Deployments per image version", tuple(counts)
        ),
        MetricFamily(
            "dims_image_version_versions_behind",
            "Versions newer than this one in the snapshot (0: the newest; none for a version "
            "that does not parse)",
            tuple(behind),
        ),
        MetricFamily(
            "dims_fleet_newest_version_ratio",
            "Share of the fleet's deployments on the newest image version, 0 to 1",
            (MetricSample((), float(share)),) if _known(share) else (),
        ),
    ]


def metric_families(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> list[MetricFamily]:
    """Every metric of `metrics_text`, as data: the snapshot's time, the capacity and cost of
    the fleet and of each type, namespace and workspace, and its image versions."""
    snap = as_snapshot(source)
    taken = snap.snapshot_at
    stamp = (MetricSample((), taken.timestamp()),) if taken is not None else ()
    when = MetricFamily(
        "dims_snapshot_timestamp_seconds",
        "When the snapshot was taken, Unix time; its age is time() - this",
        stamp,
    )
    return [when, *_capacity_families(snap, prices), *_version_families(snap)]


def escape_label(value: str) -> str:
    """A label value as the exposition formats write it: `\\`, `"` and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str, openmetrics: bool) -> str:
    escaped = text.replace("\\", "\\\\").replace("\n", "\\n")
    return escaped.replace('"', '\\"') if openmetrics else escaped


def _number(value: float | int) -> str:
    return str(value) if isinstance(value, int) else repr(float(value))


def _lines(family: MetricFamily, openmetrics: bool) -> Iterable[str]:
    yield f"# HELP {family.name} {_escape_help(family.help, openmetrics)}"
    yield f"# TYPE {family.name} gauge"
    for sample in family.samples:
        labels = ",".join(f'{k}="{escape_label(v)}"' for k, v in sample.labels)
        shown = f"{{{labels}}}" if labels else ""
        yield f"{family.name}{shown} {_number(sample.value)}"


def metrics_text(
    source: Snapshot | str, prices: pr.PriceSheet = pr.DEFAULT_PRICES, openmetrics: bool = False
) -> str:
    """The snapshot's metrics in the Prometheus text format (OpenMetrics with
    `openmetrics=True`), ending with a newline."""
    families = metric_families(source, prices)
    lines = [line for family in families for line in _lines(family, openmetrics)]
    if openmetrics:
        lines.append("# EOF")
    return "\n".join(lines) + "\n"
