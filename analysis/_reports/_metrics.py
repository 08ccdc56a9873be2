"""A snapshot as Prometheus metrics (`dims metrics`): the report's figures as gauges.

Every value is one the report computes (`fleet_totals`, `capacity_by` per
deployment type, namespace and workspace, `image_version_summary`,
`newest_share_total`), in base units: cores, bytes (GiB × 1024³), seconds, and dollars a
month. Each is a gauge: a snapshot's figure can go down, so no `_total` counter.

Unknown is never 0: a group whose figure nothing is known of (every deployment unpriced, or
for limits every priced one unbounded) has no sample for it, and each scope carries
`…_deployments_unpriced` and `…_deployments_unbounded`, how many deployments its figures leave
out.

Label values are service text, named so that no two groups are ever one series
(`label_names`): a value missing from the dataset is `__unallocated__`, as in the report's
allocation, and a real value written like one of dims' names is wrapped (`group_name`); an
empty value, which Prometheus reads as no label at all, is `__empty__`; control, bidi and
line-separator characters, which a terminal showing the output would act on, are shown as
every command shows service text (`dims._escape`: `\\u001b`, `\\u202e`); two values that then
read alike are made distinct by a short hash of the real one (a `GroupNameWarning` says so
each time).

Sized for a scrape: no family holds more than `max_series` series (`MAX_SERIES` unless
`--max-series` says otherwise). A scope past it keeps its most expensive groups (versions:
those with the most deployments), as many as fit with one more, `__other__`, the sum of the
rest (a `SeriesLimitWarning`).

Two formats: the Prometheus text format 0.0.4 (the default; what the node exporter's textfile
collector and a Pushgateway read), and OpenMetrics 1.0 (`openmetrics=True`: the same lines,
`"` escaped in HELP too, and a final `# EOF`).
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dims import _defaults as defaults
from dims._errors import GroupNameWarning, ReportError, SeriesLimitWarning
from dims._escape import printable_lines
from dims._reports import _prices as pr
from dims._reports._allocation import group_name, warn_renamed
from dims._reports._capacity import capacity_by, fleet_totals
from dims._reports._frames import Snapshot, as_snapshot
from dims._reports._images import image_version_summary, newest_share_total
from dims._reports._measures import BASES, SCALES, decimals_of, total_column

BYTES_PER_GIB = 1024**3
#: The most series one family holds by default: a scope past it is cut (`--max-series`).
MAX_SERIES = defaults.MAX_SERIES
#: The group that sums those a cut scope leaves out.
OTHER = "__other__"
#: An empty value: `label=""` is, to Prometheus, a series without the label.
EMPTY = "__empty__"
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
    """The families of one scope: `rows` are (its label's value as written, None for the
    fleet; the report's figures)."""
    label = SCOPES[scope]
    where = "of the fleet" if label is None else f"per {label}"
    families: dict[str, tuple[str, list[MetricSample]]] = {}
    for suffix, help_, column, labels in _measures():
        help_text = f"{help_} {_WHAT.get(suffix, '')}".strip() + f", {where}"
        _, samples = families.setdefault(f"dims_{scope}_{suffix}", (help_text, []))
        for value, figures in rows:
            if column not in figures or not _known(figures[column]):
                continue  # unknown: no sample, never 0
            group = () if label is None or value is None else ((label, value),)
            samples.append(MetricSample((*group, *labels), _value(column, figures[column])))
    return [
        MetricFamily(name, help_, tuple(samples)) for name, (help_, samples) in families.items()
    ]


def label_value(value: object) -> str:
    """A group's value as a label value, before two that read alike are told apart
    (`label_names`): `group_name`'s (`__unallocated__` for none, a real `__x__` wrapped),
    `EMPTY` for "", and what a terminal would act on shown as every command shows service
    text (`escape.printable_lines`: `\\u001b`, `\\u202e`; the newline is kept, the format
    writes it `\\n`)."""
    if value == "":
        return EMPTY
    return printable_lines(group_name(value))


def _digest(value: object) -> str:
    text = value if isinstance(value, str) else ""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def label_names(key: str, values: Sequence[object]) -> list[str | None]:
    """The label value of each group of `key` (`values`: distinct, None for the one without):
    `label_value`'s, and where several read alike, each shown otherwise than written gets
    `~` and a short hash of its own value. None (its series left out) for one that still
    meets another: never two groups in one series. Warns (`GroupNameWarning`) of each."""
    names = [label_value(value) for value in values]
    count = Counter(names)
    told = [
        f"{name}~{_digest(value)}" if count[name] > 1 and name != value else name
        for value, name in zip(values, names, strict=True)
    ]
    count = Counter(told)
    out = [
        name if count[name] == 1 or name == value else None  # one shown as written keeps it
        for value, name in zip(values, told, strict=True)
    ]
    pairs = [(v, n) for v, n in zip(values, out, strict=True) if isinstance(v, str) and v != n]
    warn_renamed(
        key,
        ((v, n) for v, n in pairs if n is not None),
        "so that no two groups are one series, none is taken for a group dims names itself, "
        "and no terminal reads it as control",
    )
    left_out = [v for v, n in pairs if n is None]
    if left_out:
        warnings.warn(
            GroupNameWarning(
                f"{key} {left_out[0][:60]!r} (and {len(left_out) - 1:,} more) left out of the "
                "metrics: even made distinct, it reads as another group does"
            ),
            stacklevel=3,
        )
    return out


def _per_group(measures: Iterable[Measure]) -> int:
    """The series one group adds to the widest family of a scope."""
    return max(Counter(suffix for suffix, *_ in measures).values())


#: the series each group of a capacity scope adds to its widest family (cost: 4 per group)
PER_GROUP = _per_group(_measures())
#: the fewest series a family may be held to: one group and the sum of the rest
MIN_SERIES = 2 * PER_GROUP


def _cut(groups: int, per_group: int, max_series: int) -> int | None:
    """How many groups a scope of `groups` keeps beside `OTHER`, None where all fit."""
    if groups * per_group <= max_series:
        return None
    return max_series // per_group - 1


def _warn_cut(key: str, groups: int, kept: int, per_group: int, max_series: int, by: str) -> None:
    warnings.warn(
        SeriesLimitWarning(
            f"{groups:,} values of {key} would be {groups * per_group:,} series in one "
            f"family, past --max-series {max_series:,}: the {kept:,} {by} are kept and the "
            f'{groups - kept:,} others summed in {key}="{OTHER}"'
        ),
        stacklevel=4,
    )


def _rows(frame: pd.DataFrame, key: str, max_series: int) -> list[tuple[str | None, Any]]:
    """(label value, figures) of each group of a capacity frame (most expensive first), cut
    to `max_series` with the rest summed in `OTHER` (a sum of what is known: none where
    nothing is)."""
    kept = _cut(len(frame), PER_GROUP, max_series)
    head = frame if kept is None else frame.iloc[:kept]
    records: list[dict[Any, Any]] = head.to_dict(orient="records")
    values = [r[key] if isinstance(r[key], str) else None for r in records]
    rows = list(zip(label_names(key, values), records, strict=True))
    if kept is not None:
        _warn_cut(key, len(frame), kept, PER_GROUP, max_series, "most expensive")
        columns = [column for _, _, column, _ in _measures() if column in frame.columns]
        rest = frame.iloc[kept:]
        rows.append((OTHER, {c: rest[c].sum(min_count=1) for c in columns}))
    return [(name, figures) for name, figures in rows if name is not None]


def _capacity_families(
    snap: Snapshot, prices: pr.PriceSheet, max_series: int
) -> list[MetricFamily]:
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
        ("type", capacity_by(snap, ["deployment_type"], prices)),
        ("namespace", capacity_by(snap, ["k8s_namespace"], prices)),
        ("workspace", capacity_by(snap, ["tenant_id"], prices)),
    ):
        fleet += _scope_families(scope, _rows(frame, str(SCOPES[scope]), max_series))
    return fleet


def _version_rows(snap: Snapshot, max_series: int) -> list[tuple[str, int, int | None]]:
    """(label value, deployments, versions behind) of each image version, oldest first; cut
    to the `max_series` - 1 with the most deployments and `OTHER` (no versions behind: a sum
    of versions is none) where there are more."""
    summary = image_version_summary(snap)
    kept = _cut(len(summary), 1, max_series)
    head = summary
    if kept is not None:
        order = summary["deployments"].sort_values(ascending=False, kind="stable")
        head = summary.loc[sorted(order.index[:kept])]
    records = head.to_dict(orient="records")
    values = [r["image_version"] if isinstance(r["image_version"], str) else None for r in records]
    rows: list[tuple[str | None, int, int | None]] = [
        (name, int(r["deployments"]), _behind(r["versions_behind"]))
        for name, r in zip(label_names("image_version", values), records, strict=True)
    ]
    if kept is not None:
        _warn_cut("image_version", len(summary), kept, 1, max_series, "with the most deployments")
        rows.append((OTHER, int(summary["deployments"].sum()) - sum(n for _, n, _ in rows), None))
    return [(name, n, behind) for name, n, behind in rows if name is not None]


def _behind(value: Any) -> int | None:
    return int(value) if _known(value) and value is not None and value is not pd.NA else None


def _version_families(snap: Snapshot, max_series: int) -> list[MetricFamily]:
    rows = _version_rows(snap, max_series)
    counts = [MetricSample((("image_version", v),), n) for v, n, _ in rows]
    behind = [MetricSample((("image_version", v),), b) for v, _, b in rows if b is not None]
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
    source: Snapshot | str,
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
    max_series: int = MAX_SERIES,
) -> list[MetricFamily]:
    """Every metric of `metrics_text`, as data: the snapshot's time, the capacity and cost of
    the fleet and of each type, namespace and workspace, and its image versions; no family
    past `max_series` series (a scope past it is cut: `SeriesLimitWarning`). Raises
    `ReportError` for a `max_series` below `MIN_SERIES`."""
    if isinstance(max_series, bool) or not isinstance(max_series, int) or max_series < MIN_SERIES:
        raise ReportError(
            f"--max-series: expected a whole number of at least {MIN_SERIES} (one group and "
            f"the sum of the others), got {str(max_series)[:40]}"
        )
    snap = as_snapshot(source)
    taken = snap.snapshot_at
    stamp = (MetricSample((), taken.timestamp()),) if taken is not None else ()
    when = MetricFamily(
        "dims_snapshot_timestamp_seconds",
        "When the snapshot was taken, Unix time; its age is time() - this",
        stamp,
    )
    capacity = _capacity_families(snap, prices, max_series)
    return [when, *capacity, *_version_families(snap, max_series)]


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


def format_metrics(families: Iterable[MetricFamily], openmetrics: bool = False) -> str:
    """`families` in the Prometheus text format 0.0.4 (OpenMetrics 1.0 with
    `openmetrics=True`: `"` escaped in HELP too, and a final `# EOF`), ending with a
    newline."""
    lines = [line for family in families for line in _lines(family, openmetrics)]
    if openmetrics:
        lines.append("# EOF")
    return "\n".join(lines) + "\n"


def metrics_text(
    source: Snapshot | str,
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
    openmetrics: bool = False,
    max_series: int = MAX_SERIES,
) -> str:
    """The snapshot's metrics in the Prometheus text format (OpenMetrics with
    `openmetrics=True`), ending with a newline; see `metric_families`."""
    return format_metrics(metric_families(source, prices, max_series), openmetrics)
