"""One deployment's monthly cost as arithmetic a person can check (`dims explain`).

Every figure is read from the report's own frames (`component_capacity`, `pod_requests`,
`deployment_totals`, costs by `add_costs`, the pricing flags and Kubernetes' container rules
of `PodContainers`), never computed again by rules of its own, so an explanation cannot drift
from `cost_by_deployment`: it adds only the working (per-replica quantities, replicas as
written and as priced, the rates of the deployment's type, the pod rule's numbers) and what
each flag did to the figures.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from dims import _spec as spec
from dims._errors import DeploymentLookupError
from dims._escape import printable
from dims._reports import _prices as pr
from dims._reports._capacity import (
    POD_EXTRA,
    component_capacity,
    identity_of,
    pod_requests,
    status_of,
    totals_of,
)
from dims._reports._frames import Snapshot, as_snapshot, text_column
from dims._reports._measures import MEASURES
from dims._reports._pods import QUANTITIES, PodContainers, numeric
from dims._reports._pricing import (
    compute_set,
    not_set,
    replicas,
    resource_spec_absent,
    unreadable_sent,
)
from dims._tables import UNREADABLE_VALUES_COLUMN, figure_problem

#: How many matching ids an ambiguous name's error lists, and suggestions a typo gets.
_LISTED = 10
_SUGGESTED = 3


@dataclass(frozen=True)
class ContainerFigures:
    """A sidecar or init container as Kubernetes counts it, per replica (cores, GiB): an
    empty request is its limit (0 when both are empty), an empty limit is null (unbounded),
    and a figure fed by an unreadable quantity is null. `notes` say where a rule applied."""

    kind: str  # "sidecar", "init" or "native sidecar" (an init container, restartPolicy Always)
    name: str | None
    position: int | None
    cpu_request_cores: float | None
    cpu_limit_cores: float | None
    memory_request_gib: float | None
    memory_limit_gib: float | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class PodRule:
    """Kubernetes' rule for one measure of the main pod, per replica: `pod` = max(`main` +
    `sidecars`, `init_peak`); what the pod asks beyond `main` is the `sidecars_init` line."""

    measure: str
    main: float | None
    sidecars: float | None
    init_peak: float | None
    pod: float | None


@dataclass(frozen=True)
class ComponentFigures:
    """One component line: scale as written, replicas as priced (max never below min; None
    where the scale was unreadable), what one replica asks (cores, GiB), the line's monthly
    costs (`cpu_cost_…`, `memory_cost_…`, `storage_cost_usd_month`: null where the
    deployment's flags say) and its figures sent unreadable (field -> the value sent, as
    text)."""

    component: str
    min_scale: float | None
    max_scale: float | None
    replicas_min: int | None
    replicas_max: int | None
    cpu_request_cores: float | None
    cpu_limit_cores: float | None
    memory_request_gib: float | None
    memory_limit_gib: float | None
    db_storage_gib: float | None
    costs: Mapping[str, float | None]
    #: field -> the figure sent, as the record's JSON text: quoted, never a figure itself
    unreadable: Mapping[str, str]


@dataclass(frozen=True)
class Flag:
    """A pricing flag of the deployment: what was found, and what it did to the figures."""

    name: str
    finding: str
    effect: str


@dataclass(frozen=True)
class Explanation:
    """`explain`'s answer: who the deployment is, the rates its type is priced at, its
    component lines, containers and pod rule, its costs (`costs`: `cost_by_deployment`'s
    columns, the report's own figures) and its flags."""

    snapshot_date: str
    deployment_id: str
    name: str | None
    deployment_type: str | None
    k8s_namespace: str | None
    tenant_id: str | None
    image_version: str | None
    price_source: str
    #: the rates that apply to its type: cpu_core_hour, memory_gib_hour, storage_gib_month
    rates: Mapping[str, float]
    #: which of them come from the price sheet's override for its type
    overridden: tuple[str, ...]
    hours_per_month: float
    components: tuple[ComponentFigures, ...]
    containers: tuple[ContainerFigures, ...]
    pod: tuple[PodRule, ...]
    costs: Mapping[str, float | None]
    unpriced_reason: str | None
    limits_unbounded: bool
    scale_inverted: bool
    flags: tuple[Flag, ...]

    def as_dict(self) -> dict[str, object]:
        """Plain data for JSON: null (None) for every unknown figure, never NaN."""
        return _plain(asdict(self))  # type: ignore[return-value]


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _maybe(value: Any) -> float | None:
    """A figure as a float, None for a missing one (NaN, NA, None)."""
    return None if _missing(value) else float(value)


def _text(value: Any) -> str | None:
    return None if _missing(value) else str(value)


def _count(value: Any) -> int | None:
    return None if _missing(value) else int(value)


def quoted(text: str, limit: int = 60) -> str:
    """`text` for a one-line message: JSON-quoted (a newline reads `\\n`, every other
    control or bidi character escaped as JSON writes it: `dims._escape`), shortened."""
    shown = printable(json.dumps(text, ensure_ascii=False))
    return shown if len(shown) <= limit else f'{shown[: limit - 2]}…"'


def find_deployment(snap: Snapshot, key: str) -> int:
    """The position of the deployment whose id is `key`, else whose name is exactly `key`.

    Raises `DeploymentLookupError` when none is (with the nearest names and ids as
    suggestions), or when several deployments share the name (listing their ids)."""
    identity = identity_of(snap)
    ids = identity["deployment_id"].to_numpy(dtype=object)
    names = identity["name"].to_numpy(dtype=object)
    for column in (ids, names):
        hits = np.flatnonzero(column == key)
        if len(hits) == 1:
            return int(hits[0])
        if len(hits) > 1:
            raise _ambiguous(snap, key, [str(ids[h]) for h in hits])
    raise _unknown(snap, key, [str(v) for v in (*ids, *names) if isinstance(v, str)])


def _ambiguous(snap: Snapshot, key: str, ids: list[str]) -> DeploymentLookupError:
    listed = ", ".join(map(printable, ids[:_LISTED])) + (
        f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else ""
    )
    return DeploymentLookupError(
        f"{len(ids)} deployments are named {quoted(key)} in the snapshot of "
        f"{snap.snapshot_date}: give one of their ids: {listed}",
        ids=tuple(ids),
    )


def _unknown(snap: Snapshot, key: str, known: list[str]) -> DeploymentLookupError:
    folded = {k.casefold(): k for k in known}
    near = [folded[key.casefold()]] if key.casefold() in folded else []
    near += difflib.get_close_matches(key, known, n=_SUGGESTED, cutoff=0.6)
    near = list(dict.fromkeys(near))[:_SUGGESTED]
    hint = f"; did you mean {' or '.join(quoted(n) for n in near)}?" if near else ""
    return DeploymentLookupError(
        f"no deployment has the id or name {quoted(key)} in the snapshot of "
        f"{snap.snapshot_date}{hint}"
    )


def explain(
    source: Snapshot | str, deployment: str, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> Explanation:
    """How the monthly cost of one deployment (its id, or its exact name) comes about.

    Its `costs` are the deployment's row of `cost_by_deployment(source, prices)`; its
    component lines' costs (plus storage) add up to them. Raises `DeploymentLookupError`
    when no deployment, or more than one, answers to `deployment`."""
    snap = as_snapshot(source)
    at = find_deployment(snap, deployment)
    who = identity_of(snap).iloc[at]
    status = status_of(snap).iloc[at]
    kind = _text(who["deployment_type"])
    rates = prices.rates(kind)
    lines = _component_lines(snap, at, prices)
    containers = _containers(snap, str(who["deployment_id"]))
    totals = totals_of(snap, prices).iloc[at]
    record = _deployment(snap, at)
    flags = _Flags(snap, at, record, lines, containers, prices).found()
    return Explanation(
        snapshot_date=snap.snapshot_date,
        deployment_id=str(who["deployment_id"]),
        name=_text(who["name"]),
        deployment_type=kind,
        k8s_namespace=_text(who["k8s_namespace"]),
        tenant_id=_text(who["tenant_id"]),
        image_version=_text(who["image_version"]),
        price_source=prices.source,
        rates={r: float(getattr(rates, r)) for r in pr.RATES},
        overridden=tuple(
            r for r in pr.RATES if kind is not None and r in prices.types.get(kind, {})
        ),
        hours_per_month=float(prices.hours_per_month),
        components=tuple(_figures(row, record) for row in lines.to_dict(orient="records")),
        containers=containers,
        pod=_pod_rules(snap, at),
        costs={c: _maybe(totals[c]) for c in pr.COST_COLUMNS},
        unpriced_reason=_text(status["unpriced_reason"]),
        limits_unbounded=bool(status["limits_unbounded"]),
        scale_inverted=bool(status["scale_inverted"]),
        flags=flags,
    )


def _component_lines(snap: Snapshot, at: int, prices: pr.PriceSheet) -> pd.DataFrame:
    """The deployment's rows of `component_capacity`, priced by `add_costs` (the report's
    own rows and pricing), in the report's component order."""
    rows = snap.memo("explain component_capacity", component_capacity)
    mine = rows[(rows["deployment_id"] == identity_of(snap)["deployment_id"].iloc[at]).to_numpy()]
    return pr.add_costs(mine.reset_index(drop=True), prices)


def _deployment(snap: Snapshot, at: int) -> pd.DataFrame:
    """The deployment's resource fields, as a one-row frame (the pricing rules take frames)."""

    def build(s: Snapshot) -> pd.DataFrame:
        fields = [f for f in spec.resource_numeric_fields() if f in s.deployments.columns]
        if UNREADABLE_VALUES_COLUMN in s.deployments.columns:
            fields.append(UNREADABLE_VALUES_COLUMN)
        return s.deployments[fields].reset_index(drop=True)

    return snap.memo("explain resource fields", build).iloc[[at]].reset_index(drop=True)


def written_scale(record: pd.DataFrame, component: str) -> tuple[float | None, float | None]:
    """(min_scale, max_scale) of a component as the one-row `record` has them (the pod's
    sidecars and init containers scale with main)."""
    fields = spec.component_measures()["main" if component == POD_EXTRA else component]
    low, high = (numeric(record, fields.get(f)).iloc[0] for f in ("min_scale", "max_scale"))
    return _maybe(low), _maybe(high)


def _figures(row: Mapping[Any, Any], record: pd.DataFrame) -> ComponentFigures:
    component = str(row["component"])
    low, high = written_scale(record, component)
    costs = [c for c in pr.COST_COLUMNS if c not in pr.COST_TOTALS]
    sent = next(iter(unreadable_sent(record).values()), {})
    fields = spec.component_measures().get(component, {})
    return ComponentFigures(
        component=component,
        min_scale=low,
        max_scale=high,
        replicas_min=_count(row["replicas_min"]),
        replicas_max=_count(row["replicas_max"]),
        cpu_request_cores=_maybe(row["cpu_request_cores"]),
        cpu_limit_cores=_maybe(row["cpu_limit_cores"]),
        memory_request_gib=_maybe(row["memory_request_gib"]),
        memory_limit_gib=_maybe(row["memory_limit_gib"]),
        db_storage_gib=_maybe(row["db_storage_gib"]) if component == "db" else None,
        costs={c: _maybe(row[c]) for c in costs},
        unreadable={f: json.dumps(sent[f]) for f in fields.values() if f in sent},
    )


def _pod_rules(snap: Snapshot, at: int) -> tuple[PodRule, ...]:
    """The pod rule's numbers for each measure (none without sidecars or init containers)."""
    pods = snap.memo("explain pod_requests", pod_requests).iloc[at]
    if int(pods["sidecars"]) + int(pods["init_containers"]) == 0:
        return ()
    return tuple(
        PodRule(
            measure,
            _maybe(pods[f"main_{measure}"]),
            _maybe(pods[f"sidecars_{measure}"]),
            _maybe(pods[f"largest_init_{measure}"]),
            _maybe(pods[f"pod_{measure}"]),
        )
        for measure in MEASURES
    )


#: How a container measure is named in a note.
_SAID = {
    "cpu_request_cores": "CPU request",
    "cpu_limit_cores": "CPU limit",
    "memory_request_gib": "memory request",
    "memory_limit_gib": "memory limit",
}


def _containers(snap: Snapshot, deployment_id: str) -> tuple[ContainerFigures, ...]:
    """The deployment's sidecars and init containers, in pod order, under Kubernetes' rules
    (the report's own `PodContainers`, over this deployment's containers only)."""
    frame = snap.containers
    if frame.empty or "deployment_id" not in frame.columns:
        return ()
    mine = frame[(text_column(frame, "deployment_id") == deployment_id).to_numpy()]
    mine = mine.sort_values(["kind", "position"], ascending=[False, True]).reset_index(drop=True)
    pod = PodContainers(mine, pd.Series([deployment_id]))
    values = {m: pod.value(m) for m in QUANTITIES}
    notes = _container_notes(mine, pod)
    kinds = np.where(pod.native, "native sidecar", np.where(pod.init, "init", "sidecar"))
    positions = numeric(mine, "position")
    names = text_column(mine, "name")
    return tuple(
        ContainerFigures(
            kind=str(kinds[n]),
            name=_text(names.iloc[n]),
            position=None if pd.isna(positions.iloc[n]) else int(positions.iloc[n]),
            cpu_request_cores=_maybe(values["cpu_request_cores"][n]),
            cpu_limit_cores=_maybe(values["cpu_limit_cores"][n]),
            memory_request_gib=_maybe(values["memory_request_gib"][n]),
            memory_limit_gib=_maybe(values["memory_limit_gib"][n]),
            notes=tuple(notes[n]),
        )
        for n in range(len(mine))
    )


def _container_notes(frame: pd.DataFrame, pod: PodContainers) -> list[list[str]]:
    """Per container, where a Kubernetes rule applied: a request taken from the limit, a
    limit missing (unbounded), a quantity that is no Kubernetes quantity."""
    notes: list[list[str]] = [[] for _ in range(len(frame))]
    for measure, quantity in QUANTITIES.items():
        sent = numeric(frame, quantity.column).isna().to_numpy()
        unreadable = pod.unreadable_mask(measure)
        if measure.endswith("_limit_gib") or measure.endswith("_limit_cores"):
            absent = pod.limit_absent(measure)
            for n in np.flatnonzero(absent):
                notes[n].append(f"no {_SAID[measure]}: unbounded")
        else:
            limit = measure.replace("_request_", "_limit_")
            from_limit = sent & ~unreadable & ~pod.limit_absent(limit)
            for n in np.flatnonzero(from_limit):
                notes[n].append(f"{_SAID[measure]} not set: Kubernetes uses the limit")
            for n in np.flatnonzero(sent & ~unreadable & pod.limit_absent(limit)):
                notes[n].append(f"{_SAID[measure]} and limit not set: asks 0")
        found = pod.unreadable[measure]
        for row, value, why in zip(found.rows, found.sent, found.reasons, strict=True):
            shown = json.dumps(value, ensure_ascii=False)[:40]
            notes[int(row)].append(
                f"{quantity.section}.{quantity.key} {shown} is no Kubernetes quantity ({why})"
            )
    return notes


class _Flags:
    """The deployment's pricing flags with what each found and did (`Flag`)."""

    def __init__(
        self,
        snap: Snapshot,
        at: int,
        record: pd.DataFrame,
        lines: pd.DataFrame,
        containers: tuple[ContainerFigures, ...],
        prices: pr.PriceSheet,
    ) -> None:
        self.lines, self.prices, self.containers = lines, prices, containers
        self.record = record
        self.status = status_of(snap).iloc[at]

    def found(self) -> tuple[Flag, ...]:
        flags = []
        if isinstance(reason := _text(self.status["unpriced_reason"]), str):
            flags.append(Flag(reason, self._unpriced_finding(reason), _UNPRICED))
        if bool(self.status["limits_unbounded"]):
            flags.append(Flag("limits_unbounded", self._unbounded_finding(), _UNBOUNDED))
        if bool(self.status["scale_inverted"]):
            flags.append(self._inverted())
        return tuple(flags)

    def _fields_missing(self, kinds: tuple[str, str]) -> list[str]:
        """`component: field` for each component that asks compute without one of `kinds`
        (the spec's measures: `cpu`, `memory_mb`, or their limits)."""
        absent = resource_spec_absent(self.record)
        missing = []
        for component in spec.COMPONENTS:
            fields = spec.component_measures()[component]
            if not bool(compute_set(self.record, component, absent).iloc[0]):
                continue
            for measure in kinds:
                field = fields.get(measure)
                if bool(not_set(self.record, field).iloc[0]):
                    missing.append(f"{component}: {field or measure} not set")
        return missing

    def _figures_unreadable(self) -> list[str]:
        """`component: field value: why` for each resource figure no cluster runs."""
        sent = next(iter(unreadable_sent(self.record).values()), {})
        return [
            f"{spec.component_of(field)[0]}: {field} {json.dumps(value)} is unreadable "
            f"({_figure_problem(value)})"
            for field, value in sent.items()
        ]

    def _container_notes(self, words: str) -> list[str]:
        return [
            f"{c.kind} {quoted(c.name or '')}: {note}"
            for c in self.containers
            for note in c.notes
            if words in note
        ]

    def _unpriced_finding(self, reason: str) -> str:
        if reason == "resource_spec_absent":
            return "no resource field is set (an absent resource_spec and an empty one read alike)"
        if reason == "missing_resources":
            missing = self._fields_missing(("cpu", "memory_mb"))
            return "; ".join(missing) + " (the service's default is not known here)"
        found = [*self._figures_unreadable(), *self._container_notes("no Kubernetes quantity")]
        return "; ".join(found)

    def _unbounded_finding(self) -> str:
        found = self._fields_missing(("cpu_limit", "memory_limit_mb"))
        return "; ".join([*found, *self._container_notes("unbounded")])

    def _inverted(self) -> Flag:
        """Which components' max_scale is below min_scale, and the dollars that pricing them
        at min_scale adds to requests at max scale (their per-replica cost, the report's)."""
        shown, added = [], 0.0
        per_replica = pr.replica_costs(self.lines, self.prices, "request")
        for n, row in enumerate(self.lines.to_dict(orient="records")):
            component = str(row["component"])
            fields = spec.component_measures()["main" if component == POD_EXTRA else component]
            written = int(replicas(self.record, fields.get("max_scale")).iloc[0])
            if _missing(row["replicas_max"]) or written >= int(row["replicas_max"]):
                continue
            added += (int(row["replicas_max"]) - written) * float(np.nan_to_num(per_replica[n]))
            if component != POD_EXTRA:
                low, high = written_scale(self.record, component)
                shown.append(f"{component}: max_scale {_scale(high)} below min_scale {_scale(low)}")
        priced = _text(self.status["unpriced_reason"]) is None
        effect = "max scale is priced at min_scale replicas (the autoscaler never runs fewer)" + (
            f": +${added:,.2f} a month on requests at max scale" if priced else ""
        )
        return Flag("scale_inverted", "; ".join(shown), effect)


def _figure_problem(value: object) -> str:
    reason = figure_problem(float(value)) if isinstance(value, int | float) else None
    return reason or "not a number"


def _scale(value: float | None) -> str:
    return "not set (1 replica)" if value is None else f"{value:g}"


_UNPRICED = (
    "every capacity and cost figure of it is null, not $0 (storage too): left out of every "
    "total, which counts it in deployments_unpriced"
)
_UNBOUNDED = (
    "its limits basis (cores, GiB and dollars) is null, not $0: left out of every limits "
    "total, which counts it in deployments_unbounded; requests are priced as usual"
)
