"""The report's charts: inline SVG panels drawn by `dims._reports._svg`, one file offline.

A chart is a group of panels (one per deployment type, resource, …), each drawn at its own
size in pixels, with an HTML legend: on a laptop the panels sit side by side, on a phone one
under another, and their text is never scaled below 12 px. Panels that compare groups by the
same measure (the cost by type) share one axis, so a longer bar is always a larger figure;
panels of different measures (cores and GiB of the capacity chart) have their own. Service
strings (`$x^$`, a name with `<`) are escaped text, drawn as written.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import pandas as pd

from dims._reports import _prices as pr
from dims._reports import _svg as svg
from dims._reports import _versions as versions
from dims._reports._capacity import COMPONENT_ORDER, COST_ORDER, SHARE

PALETTE = [
    "#4269d0",
    "#efb118",
    "#ff725c",
    "#6cc5b0",
    "#3ca951",
    "#ff8ab7",
    "#a463f2",
    "#97bbf5",
    "#9c6b4e",
    "#9498a0",
]
#: Up to this many snapshots the adoption chart has a bar per snapshot; beyond it, stacked
#: areas: three years of daily snapshots make a chart as wide and as cheap as a month's.
ADOPTION_BARS_UP_TO = 40
_ADOPTION_TICKS = 5
#: An area chart keeps at most this many dates (evenly spread, the last one kept): more
#: points than the panel has pixels draw nothing more.
_AREA_POINTS = 160


def component_colors() -> dict[str, str]:
    return dict(zip(COMPONENT_ORDER, PALETTE, strict=False))


def usd(value: float) -> str:
    """Dollars for an axis or a bar's end: $950, $12k, $1.2M."""
    if not math.isfinite(value):
        return "—"
    for factor, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"${value / factor:,.3g}{suffix}"
    return f"${value:,.0f}"


def amount(value: float) -> str:
    """Cores, GiB or deployments on an axis: 950, 12k, 1.2M."""
    if not math.isfinite(value):
        return "—"
    for factor, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:,.3g}{suffix}"
    return f"{value:,.3g}"


def chart(title: str, panels: Sequence[str], legend: Sequence[tuple[str, str]] = ()) -> str:
    """Panels under one title, with their legend."""
    keys = svg.legend(legend) if legend else ""
    return (
        f'<div class="chart" role="group" aria-label="{svg.esc(title)}">'
        f'<div class="panels">{"".join(panels)}</div>{keys}</div>'
    )


def _empty(title: str, message: str) -> str:
    return chart(title, [svg.panel(svg.PANEL_WIDTH, 60, title, [svg.label(0, 44, message)])])


def _name(value: object) -> str:
    return (
        "(none)"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else str(value)
    )


def cost_by_type_chart(by_type: pd.DataFrame) -> str:
    """Monthly cost per deployment type: requests and limits at min and max scale, one panel
    per type, all on one axis (the largest figure of any type), so bars compare across types.
    Limits that leave out unbounded deployments are starred.
    `by_type` is `capacity_by(snap, ["deployment_type"])`."""
    title = "Monthly cost by deployment type (US dollars)"
    if by_type.empty:
        return _empty(title, "no deployments")
    colors = {"request": PALETTE[0], "limit": PALETTE[1]}
    columns = [
        f"cost_{b}_{s}_scale_usd_month" for b in ("request", "limit") for s in ("min", "max")
    ]
    shared = [_finite(v) for c in columns for v in by_type[c]]
    panels = []
    for row in by_type.to_dict(orient="records"):
        star = "*" if row.get("deployments_unbounded") else ""
        bars = [
            svg.Bar(
                f"{basis}s, {scale}",
                [
                    svg.Segment(
                        _finite(row[f"cost_{basis}_{scale}_scale_usd_month"]), colors[basis], basis
                    )
                ],
                usd(row[f"cost_{basis}_{scale}_scale_usd_month"])
                + (star if basis == "limit" else ""),
            )
            for basis in ("request", "limit")
            for scale in ("min", "max")
        ]
        panels.append(svg.hbars(_name(row["deployment_type"]), bars, usd, shared=shared))
    return chart(title, panels, [("requests", colors["request"]), ("limits", colors["limit"])])


def _finite(value: object) -> float:
    number = float(value) if value is not None else math.nan  # type: ignore[arg-type]
    return number if math.isfinite(number) else 0.0


def allocation_chart(frame: pd.DataFrame, key: str, title: str, top: int = 10) -> str:
    """The `top` groups of an allocation (`cost_by`, `capacity_by`) by monthly cost,
    requests at max scale, with their share of the fleet."""
    if frame.empty:
        return _empty(title, "no deployments")
    bars = [
        svg.Bar(
            _name(row[key]),
            [svg.Segment(_finite(row[COST_ORDER]), PALETTE[0], "requests at max scale")],
            f"{usd(row[COST_ORDER])} · {_share(row[SHARE])}",
        )
        for row in frame.head(top).to_dict(orient="records")
    ]
    return chart(title, [svg.hbars(title, bars, usd)])


def _share(value: object) -> str:
    number = _finite(value)
    return f"{100 * number:.1f} %"


def namespace_chart(by_namespace: pd.DataFrame, top: int = 10) -> str:
    """The namespaces costing the most a month (requests at max scale)."""
    return allocation_chart(
        by_namespace, "k8s_namespace", f"Top {top} namespaces by monthly cost", top
    )


def capacity_chart(summary: pd.DataFrame) -> str:
    """Requested CPU and memory per deployment_type, min vs max scale, stacked by component.

    One panel per type and resource, each with its own axis: dev and dev_free stay readable
    next to a production fleet a hundred times larger. `summary` is `capacity_summary`.
    """
    title = "Requested capacity by deployment type and component, at min and max scale"
    if summary.empty:
        return _empty(title, "no deployments")
    frame = summary.assign(deployment_type=summary["deployment_type"].map(_name))
    colors = component_colors()
    panels = []
    for kind in sorted(frame["deployment_type"].unique()):
        mine = frame[frame["deployment_type"] == kind].set_index("component")
        present = [c for c in COMPONENT_ORDER if c in mine.index]
        for measure, unit in (
            ("cpu_request_cores", "CPU, cores"),
            ("memory_request_gib", "memory, GiB"),
        ):
            bars = [
                svg.Bar(
                    f"{scale} scale",
                    [
                        svg.Segment(_finite(mine.loc[c, f"{measure}_{scale}_scale"]), colors[c], c)
                        for c in present
                    ],
                )
                for scale in ("min", "max")
            ]
            panels.append(svg.vbars(f"{kind} · {unit}", bars, amount))
    legend = [(c, colors[c]) for c in COMPONENT_ORDER if c in set(frame["component"])]
    return chart(title, panels, legend)


def requests_limits_chart(overcommit: pd.DataFrame) -> str:
    """Requested CPU and memory per component at max scale, and the limit beyond it: where
    the fleet may burst past what the scheduler reserved ("unbounded" where a limit is
    missing). `overcommit` is `reports.overcommit`."""
    title = "Requests and limits per component at max scale"
    if overcommit.empty:
        return _empty(title, "no deployments")
    panels = []
    for resource, unit, shown in (
        ("cpu", "cores", "CPU (cores)"),
        ("memory", "gib", "Memory (GiB)"),
    ):
        bars = []
        for row in overcommit.to_dict(orient="records"):
            request = _finite(row[f"{resource}_request_{unit}_max_scale"])
            ratio = float(row[f"{resource}_overcommit"])
            beyond = request * (ratio - 1) if math.isfinite(ratio) and ratio > 1 else 0.0
            note = (
                "unbounded"
                if math.isinf(ratio)
                else f"limit {ratio:.2f}×"
                if ratio == ratio
                else ""
            )
            bars.append(
                svg.Bar(
                    str(row["component"]),
                    [
                        svg.Segment(request, PALETTE[0], "requested"),
                        svg.Segment(beyond, PALETTE[1], "limit beyond the request"),
                    ],
                    note,
                )
            )
        panels.append(svg.hbars(f"{shown}", bars, amount))
    return chart(
        title, panels, [("requested", PALETTE[0]), ("limit beyond the request", PALETTE[1])]
    )


def _version_rows(frame: pd.DataFrame, keep: int) -> list[str]:
    """The bars, newest version first: the `keep` newest parseable versions, `older` for the
    rest of them, then those that do not parse and `(missing)`."""
    present = [str(v) for v in frame["image_version"].unique()]
    ordered = [str(v) for v in versions.sort_versions([v for v in present if v != "(missing)"])]
    parseable = [v for v in ordered if versions.parse_version(v) is not None][::-1]
    others = [v for v in ordered if versions.parse_version(v) is None]
    older = ["older"] if len(parseable) > keep else []
    missing = ["(missing)"] if "(missing)" in present else []
    return [*parseable[:keep], *older, *others, *missing]


def version_distribution_chart(by_type: pd.DataFrame, newest: str | None, keep: int = 25) -> str:
    """Deployments per image_version in version order (newest first), stacked by
    deployment_type; beyond the `keep` newest, older versions share one bar.

    `by_type` is `versions_by_type`.
    """
    title = "Deployments per image version (newest first, unparseable last)"
    if by_type.empty:
        return _empty(title, "no deployments")
    frame = pd.DataFrame(
        {
            "image_version": [
                _name(v).replace("(none)", "(missing)") for v in by_type["image_version"]
            ],
            "deployment_type": [_name(v) for v in by_type["deployment_type"]],
            "deployments": by_type["deployments"].to_numpy(),
        }
    )
    rows = _version_rows(frame, keep)
    kept = set(rows)
    frame["bucket"] = [v if v in kept else "older" for v in frame["image_version"]]
    summed = frame.groupby(["bucket", "deployment_type"])["deployments"].sum()
    index = summed.index
    counts = {
        (str(v), str(t)): float(n)
        for v, t, n in zip(
            index.get_level_values(0), index.get_level_values(1), summed.to_numpy(), strict=True
        )
    }
    types = sorted(set(frame["deployment_type"]))
    colors = dict(zip(types, itertools.cycle(PALETTE), strict=False))
    bars = [
        svg.Bar(
            f"{v} (newest)" if v == newest else v,
            [svg.Segment(counts.get((v, t), 0.0), colors[t], t) for t in types],
            f"{sum(counts.get((v, t), 0.0) for t in types):,.0f}",
        )
        for v in rows
    ]
    return chart(title, [svg.hbars(title, bars, amount)], [(t, colors[t]) for t in types])


def adoption_chart(over_time: pd.DataFrame, keep: int = 7) -> str:
    """Share of deployments per image version at each snapshot date: stacked bars, or stacked
    areas for a long history (`ADOPTION_BARS_UP_TO`), always one panel wide.

    The `keep` newest versions get their own colour; older parseable ones are `older`, and
    unparseable ones `unparseable`, so the legend stays readable.
    """
    title = "Image version adoption over time (share of deployments)"
    if over_time.empty:
        return _empty(title, "no snapshots")
    pivot = _adoption_pivot(over_time, keep)
    if len(pivot) > _AREA_POINTS:
        step = (len(pivot) - 1) / (_AREA_POINTS - 1)
        pivot = pivot.iloc[sorted({round(n * step) for n in range(_AREA_POINTS)})]
    dates, names = [str(d) for d in pivot.index], list(pivot.columns)
    fixed = {"older": "#c8c8c8", "unparseable": "#7f7f7f"}
    fresh = iter(PALETTE)
    colors = {name: fixed.get(name) or next(fresh, "#333333") for name in names}
    ticks = _ticks(len(dates))
    if len(dates) <= ADOPTION_BARS_UP_TO:
        bars = [
            svg.Bar(day, [svg.Segment(float(pivot.loc[day, n]), colors[n], n) for n in names])
            for day in pivot.index
        ]
        drawn = svg.vbars(title, bars, lambda v: f"{v:.0%}", svg.PANEL_WIDTH, 220, ticks)
    else:
        series = [(n, colors[n], [float(v) for v in pivot[n]]) for n in names]
        drawn = svg.areas(title, dates, series, ticks)
    return chart(title, [drawn], [(n, colors[n]) for n in reversed(names)])


def cost_over_time_chart(trend: pd.DataFrame) -> str:
    """The fleet's month's cost at each snapshot: requests and limits at min and max scale,
    four lines on one axis. `trend` is `cost_over_time`."""
    title = "The month's cost at each snapshot (US dollars)"
    if trend.empty:
        return _empty(title, "no snapshots")
    dates = [str(d) for d in trend["snapshot_date"]]
    lines = [
        ("requests, max scale", PALETTE[0], pr.cost_column("request", "max")),
        ("requests, min scale", "#a9bbea", pr.cost_column("request", "min")),
        ("limits, max scale", PALETTE[1], pr.cost_column("limit", "max")),
        ("limits, min scale", "#f7d98b", pr.cost_column("limit", "min")),
    ]
    series = [(name, color, [float(v) for v in trend[column]]) for name, color, column in lines]
    drawn = svg.lines(title, dates, series, _ticks(len(dates)), usd)
    return chart(title, [drawn], [(name, color) for name, color, _ in lines])


def _ticks(count: int) -> list[int]:
    """Which of `count` dates get a label: all of a few, else about `_ADOPTION_TICKS`
    spread from the first to the last."""
    if count <= _ADOPTION_TICKS:
        return list(range(count))
    step = (count - 1) / (_ADOPTION_TICKS - 1)
    return sorted({round(n * step) for n in range(_ADOPTION_TICKS)})


def _adoption_pivot(over_time: pd.DataFrame, keep: int) -> pd.DataFrame:
    """Share per snapshot date (rows, oldest first) and version bucket (columns, oldest
    first): the `keep` newest versions, then `older` and `unparseable`."""
    frame = over_time.assign(image_version=over_time["image_version"].astype("object"))
    ordered = versions.sort_versions(frame["image_version"].dropna())
    parseable = [v for v in ordered if isinstance(v, str) and versions.parse_version(v) is not None]
    kept = parseable[-keep:]

    def bucket(value: object) -> str:
        if value in kept:
            return str(value)
        return "older" if versions.parse_version(value) is not None else "unparseable"

    frame["bucket"] = frame["image_version"].map(bucket)
    series = [b for b in ["older", *kept, "unparseable"] if (frame["bucket"] == b).any()]
    return (
        frame.pivot_table(index="snapshot_date", columns="bucket", values="share", aggfunc="sum")
        .reindex(columns=series)
        .fillna(0.0)
        .sort_index()
    )
