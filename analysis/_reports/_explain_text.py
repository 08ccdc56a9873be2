"""An `Explanation` as lines for a terminal: the working of one deployment's monthly cost.

Each cost line is `per replica × replicas × rate × hours = dollars`, each total the report's
own figure (`cost_by_deployment`), to the cent. Lines are rounded to the cent on their own,
so they may add up a cent away from the total, which is the sum of the unrounded parts.
"""

from __future__ import annotations

import math

from dims._escape import printable
from dims._reports import _prices as pr
from dims._reports._explain import ComponentFigures, Explanation, PodRule, quoted
from dims._reports._measures import BASES, SCALES

#: How a basis reads in a heading.
_BASIS = {"request": "requests", "limit": "limits"}
_RATE_UNIT = {"cpu_core_hour": "core-hour", "memory_gib_hour": "GiB-hour"}
_MEASURE = {
    "cpu_request_cores": "CPU request (cores)",
    "cpu_limit_cores": "CPU limit (cores)",
    "memory_request_gib": "memory request (GiB)",
    "memory_limit_gib": "memory limit (GiB)",
}


def number(value: float | None) -> str:
    """A quantity as a person reads it: up to 6 decimals, none trailing; `-` for none."""
    if value is None:
        return "-"
    text = f"{value:,.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def money(value: float | None) -> str:
    return "null" if value is None else f"${value:,.2f}"


def count(value: int | None) -> str:
    """Replicas: `-` where unknown (a scale sent unreadable)."""
    return "-" if value is None else str(value)


def lines(explanation: Explanation) -> list[str]:
    """The whole explanation: who, the prices, the components, the pod rule, the cost of
    each basis and scale line by line, the flags."""
    e = explanation
    out = _header(e)
    out += _component_table(e.components)
    if e.pod:
        out += _pod_lines(e)
    out.append(
        f"monthly cost = per replica × replicas × rate × {number(e.hours_per_month)} hours; "
        "DB storage = GiB × rate, once a month; each total includes storage"
    )
    for basis in BASES:
        for scale in SCALES:
            out += _cost_block(e, basis, scale)
    if e.flags:
        out.append("flags")
        out += [f"  {f.name}: {printable(f.finding)}\n    → {printable(f.effect)}" for f in e.flags]
    return out


def _header(e: Explanation) -> list[str]:
    who = quoted(e.name, 200) if e.name is not None else "(no name)"
    about = [
        f"type {printable(e.deployment_type or '-')}",
        f"namespace {printable(e.k8s_namespace or '-')}",
        f"workspace {printable(e.tenant_id or '-')}",
        f"image {printable(e.image_version or '-')}",
        f"snapshot {e.snapshot_date}",
    ]
    rates = (
        f"prices: ${e.rates['cpu_core_hour']:g} per core-hour, ${e.rates['memory_gib_hour']:g} "
        f"per GiB-hour of memory, ${e.rates['storage_gib_month']:g} per GiB-month of storage, "
        f"{number(e.hours_per_month)} hours a month ({e.price_source})"
    )
    if e.overridden:
        kind = printable(e.deployment_type)
        rates += f"; {', '.join(e.overridden)} from the sheet's rates for {kind}"
    return [f"deployment {who}  id {printable(e.deployment_id)}", "  " + " · ".join(about), rates]


def _component_table(components: tuple[ComponentFigures, ...]) -> list[str]:
    """Per replica: replicas at min and max scale, CPU and memory requests and limits."""
    head = f"  {'component':<14}{'replicas':>13}   {'CPU (cores)':<20}{'memory (GiB)':<20}"
    sub = (
        f"  {'':<14}{'min':>6}{'max':>7}   {'request':<10}{'limit':<10}{'request':<10}{'limit':<10}"
    )
    out = ["per replica", head.rstrip(), sub.rstrip()]
    for c in components:
        row = (
            f"  {c.component:<14}{count(c.replicas_min):>6}{count(c.replicas_max):>7}   "
            f"{number(c.cpu_request_cores):<10}{number(c.cpu_limit_cores):<10}"
            f"{number(c.memory_request_gib):<10}{number(c.memory_limit_gib):<10}"
        )
        if c.db_storage_gib is not None:
            row += f"storage {number(c.db_storage_gib)} GiB"
        out.append(row.rstrip() + _scale_note(c) + _unreadable_note(c))
    return out


def _unreadable_note(c: ComponentFigures) -> str:
    """`(unreadable: cpu -2)`: the figures sent that no cluster runs (null above)."""
    shown = ", ".join(
        f"{field} {value}" for field, value in c.unreadable.items() if not field.endswith("_scale")
    )
    return f"   (unreadable: {shown})" if shown else ""


_ENDS = ("min_scale", "max_scale")


def _scale_note(c: ComponentFigures) -> str:
    """`(scale written 3 → 1)` where max scale was priced above what the record says."""
    sent = {end: v for f, v in c.unreadable.items() for end in _ENDS if f.endswith(end)}
    if c.max_scale is None and c.min_scale is None and not sent.keys() & {"min_scale", "max_scale"}:
        return ""
    low, high = (
        number(v) if v is not None else f"{sent[end]} unreadable" if end in sent else "not set"
        for end, v in (("min_scale", c.min_scale), ("max_scale", c.max_scale))
    )
    written_max = 1 if c.max_scale is None else math.ceil(c.max_scale)
    priced = c.replicas_max
    inverted = f": inverted, max priced at {priced}" if priced and written_max < priced else ""
    return f"   (min_scale {low}, max_scale {high}{inverted})"


def _pod_lines(e: Explanation) -> list[str]:
    """The containers beside main, then max(main + sidecars, init peak) for each measure."""
    out = ["pod of main, per replica (Kubernetes: max(main + sidecars, the init phase's peak))"]
    for c in e.containers:
        figures = (
            f"CPU request {number(c.cpu_request_cores)}, limit {number(c.cpu_limit_cores)} "
            f"cores; memory request {number(c.memory_request_gib)}, limit "
            f"{number(c.memory_limit_gib)} GiB"
        )
        notes = f" ({printable('; '.join(c.notes))})" if c.notes else ""
        at = f" #{c.position}" if c.position is not None else ""
        out.append(f"  {c.kind} {quoted(c.name or '')}{at}: {figures}{notes}")
    out += [_rule_line(rule) for rule in e.pod]
    return out


def _rule_line(rule: PodRule) -> str:
    shown = (
        f"max({number(rule.main)} + {number(rule.sidecars)}, {number(rule.init_peak)}) "
        f"= {number(rule.pod)}"
    )
    if rule.pod is None:
        shown += "  (unknown: an unbounded limit or an unreadable quantity)"
    elif rule.main is not None:
        shown += f"; sidecars_init adds {number(rule.pod - rule.main)}"
    return f"  {_MEASURE[rule.measure]:<22}{shown}"


def _cost_block(e: Explanation, basis: str, scale: str) -> list[str]:
    """One basis at one scale: each component's CPU and memory, storage, the total."""
    total = e.costs[pr.cost_column(basis, scale)]
    heading = f"{_BASIS[basis]} at {scale} scale"
    if total is None:
        why = e.unpriced_reason or ("limits_unbounded" if e.limits_unbounded else "unknown")
        return [f"{heading}: null, not $0 ({why}, see flags)"]
    out = [heading]
    for c in e.components:
        replicas = c.replicas_min if scale == "min" else c.replicas_max
        parts = [
            _part(e, resource, per, replicas, c.costs[pr.cost_column(basis, scale, resource)])
            for resource, per in _quantities(c, basis)
        ]
        out.append(f"  {c.component:<14}{'   '.join(parts)}")
    storage = e.costs[pr.STORAGE_COST]
    gib = sum(c.db_storage_gib or 0.0 for c in e.components)
    out.append(
        f"  {'storage':<14}{number(gib)} GiB × ${e.rates['storage_gib_month']:g} = {money(storage)}"
    )
    out.append(f"  {'total':<14}{money(total)}  ({pr.cost_column(basis, scale)})")
    return out


def _quantities(c: ComponentFigures, basis: str) -> list[tuple[str, float | None]]:
    if basis == "request":
        return [("cpu", c.cpu_request_cores), ("memory", c.memory_request_gib)]
    return [("cpu", c.cpu_limit_cores), ("memory", c.memory_limit_gib)]


def _part(
    e: Explanation, resource: str, per: float | None, replicas: int | None, cost: float | None
) -> str:
    rate = "cpu_core_hour" if resource == "cpu" else "memory_gib_hour"
    label = "CPU" if resource == "cpu" else "memory"
    return (
        f"{label} {number(per)} × {count(replicas)} × ${e.rates[rate]:g} × "
        f"{number(e.hours_per_month)} = {money(cost)}"
    )


#: Its name at the package `dims._reports` (imported from here on first use, dims._lazy).
explain_lines = lines
