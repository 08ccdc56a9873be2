"""Charts as inline SVG strings, for a report that is one file and works offline.

Matplotlib's SVG is cleaned for inlining: no XML prolog or DOCTYPE (which names a remote
DTD), no metadata, no namespace URLs, and element ids prefixed per chart so that several
charts in one page cannot capture each other's clip paths. Text stays text (`svg.fonttype`
none): smaller, searchable, and drawn in the page's font. Text is never math: a namespace,
version or type such as `$x^$` is the service's text, and matplotlib's mathtext would fail on
it (or draw it as a formula), so `to_svg` turns math parsing off for every text it saves.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import re

import matplotlib as mpl
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, MaxNLocator
from matplotlib.typing import RcKeyType

from analysis.reports import _versions as versions
from analysis.reports._capacity import COMPONENT_ORDER
from analysis.reports._measures import SCALES

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
#: How every chart is saved: text as text, and as written (`$` in a service string is a
#: dollar sign, not mathtext).
_SAVING: dict[RcKeyType, str | bool] = {
    "text.parse_math": False,
    "svg.fonttype": "none",
    "svg.hashsalt": "dims",  # stable ids: the same data gives the same file
}
_STYLE: dict[RcKeyType, str | int | bool] = {
    **_SAVING,
    "font.family": "sans-serif",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#dddddd",
    "axes.axisbelow": True,
}


def component_colors() -> dict[str, str]:
    return dict(zip(COMPONENT_ORDER, PALETTE, strict=False))


def to_svg(fig: Figure, title: str) -> str:
    """The figure as an `<svg>` element ready to paste into HTML.

    Ids are prefixed from `title`, so charts on one page need distinct titles. Every text is
    plain (never mathtext): those made already, and the tick labels drawing makes.
    """
    for artist in fig.findobj(Text):
        artist.set_parse_math(False)
    buffer = io.StringIO()
    with mpl.rc_context(_SAVING):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", text)
    text = re.sub(r'(<svg\b[^>]*?)\s+width="[^"]*"\s+height="[^"]*"', r"\1", text, count=1)
    prefix = "c" + hashlib.sha1(title.encode(), usedforsecurity=False).hexdigest()[:8]
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', text)
    label = html.escape(title, quote=True)
    return text.replace("<svg", f'<svg role="img" aria-label="{label}"', 1).replace(
        ">", f"><title>{html.escape(title)}</title>", 1
    )


def _empty(title: str, message: str) -> str:
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(8, 1.2))
        ax = fig.subplots()
        ax.axis("off")
        ax.text(0.5, 0.5, message, ha="center", va="center", color="#666666")
        return to_svg(fig, title)


def _types(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["deployment_type"].fillna("(none)").astype(str).unique())


def capacity_chart(summary: pd.DataFrame) -> str:
    """Requested CPU and memory per deployment_type, min vs max scale, stacked by component.

    One panel per type and resource, each with its own axis: dev and dev_free stay readable
    next to a production fleet a hundred times larger. `summary` is `capacity_summary`.
    """
    title = "Requested capacity by deployment type and component, at min and max scale"
    if summary.empty:
        return _empty(title, "no deployments")
    frame = summary.assign(deployment_type=summary["deployment_type"].fillna("(none)"))
    types = _types(frame)
    colors = component_colors()
    rows = (("cpu_request_cores", "CPU (cores)"), ("memory_request_gib", "memory (GiB)"))
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(max(6.0, 2.6 * len(types)), 5.6))
        axes = fig.subplots(len(rows), len(types), squeeze=False)
        for r, (measure, label) in enumerate(rows):
            for c, kind in enumerate(types):
                ax = axes[r][c]
                mine = frame[frame["deployment_type"] == kind].set_index("component")
                bottoms = [0.0, 0.0]
                for component in COMPONENT_ORDER:
                    if component not in mine.index:
                        continue
                    values = [float(mine[f"{measure}_{s}_scale"][component] or 0.0) for s in SCALES]
                    ax.bar(
                        [0, 1],
                        values,
                        0.6,
                        bottom=bottoms,
                        color=colors[component],
                        edgecolor="white",
                        linewidth=0.4,
                        label=component,
                    )
                    bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
                ax.set_xticks([0, 1], ["min scale", "max scale"])
                ax.yaxis.set_major_locator(MaxNLocator(4))
                if r == 0:
                    ax.set_title(kind, fontsize=11, loc="left")
                if c == 0:
                    ax.set_ylabel(label)
        handles: dict[str, Artist] = {}
        for ax in axes.flat:
            for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(name, handle)
        labels = [c for c in COMPONENT_ORDER if c in handles]
        fig.legend([handles[n] for n in labels], labels, loc="lower center", ncol=7, frameon=False)
        fig.subplots_adjust(bottom=0.14, hspace=0.45, wspace=0.35)
        return to_svg(fig, title)


def cost_by_type_chart(by_type: pd.DataFrame) -> str:
    """Monthly cost per deployment_type: requests and limits at min and max scale.

    One panel per type with its own axis, so a small type is as readable as a large one.
    `by_type` is `capacity_by_type` (its cost columns).
    """
    title = "Monthly cost by deployment type (US dollars)"
    if by_type.empty:
        return _empty(title, "no deployments")
    frame = by_type.assign(deployment_type=by_type["deployment_type"].fillna("(none)"))
    types = _types(frame)
    bars = [
        (f"cost_{basis}_{scale}_scale_usd_month", f"{basis}s, {scale} scale", color)
        for (basis, scale), color in zip(
            [("request", "min"), ("request", "max"), ("limit", "min"), ("limit", "max")],
            [PALETTE[7], PALETTE[0], "#f6d58a", PALETTE[1]],
            strict=True,
        )
    ][::-1]  # top to bottom: requests at min scale first
    with mpl.rc_context({**_STYLE, "axes.grid.axis": "x"}):
        fig = Figure(figsize=(max(7.0, 2.6 * len(types) + 1.6), 2.6))
        axes = fig.subplots(1, len(types), squeeze=False, sharey=True)[0]
        for ax, kind in zip(axes, types, strict=True):
            row = frame[frame["deployment_type"] == kind].iloc[0]
            values = [float(row[column]) for column, _, _ in bars]
            ax.barh(range(len(bars)), values, 0.7, color=[color for _, _, color in bars])
            ax.set_yticks(range(len(bars)), [label for _, label, _ in bars])
            ax.xaxis.set_major_formatter(FuncFormatter(_short_usd))
            ax.xaxis.set_major_locator(MaxNLocator(3))
            ax.set_title(kind, fontsize=10, loc="left")
        fig.subplots_adjust(wspace=0.3)
        return to_svg(fig, title)


def _short_usd(value: float, _position: object = None) -> str:
    """Axis ticks in dollars: $950, $12k, $1.2M."""
    for factor, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"${value / factor:,.3g}{suffix}"
    return f"${value:,.0f}"


def requests_limits_chart(by_component: pd.DataFrame) -> str:
    """Requested vs limit CPU and memory per component at max scale (grouped bars): where
    the fleet may burst past what the scheduler reserved. `by_component` is
    `capacity_by_component`."""
    title = "Requests vs limits per component at max scale"
    if by_component.empty:
        return _empty(title, "no deployments")
    names = by_component["component"].astype(str).tolist()
    panels = (("cpu", "cores", "CPU (cores)"), ("memory", "gib", "Memory (GiB)"))
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(11, 3.8))
        axes = fig.subplots(1, 2)
        for ax, (resource, unit, label) in zip(axes, panels, strict=True):
            positions = range(len(names))
            for offset, basis, color in ((-0.2, "request", PALETTE[0]), (0.2, "limit", PALETTE[1])):
                values = by_component[f"{resource}_{basis}_{unit}_max_scale"].astype(float)
                ax.bar([p + offset for p in positions], values, 0.4, color=color, label=basis)
            ax.set_xticks(list(positions), names, rotation=30, ha="right")
            ax.set_title(label, fontsize=10, loc="left")
        axes[1].legend(frameon=False, loc="upper right")
        fig.subplots_adjust(wspace=0.25)
        return to_svg(fig, title)


def namespace_chart(by_namespace: pd.DataFrame, top: int = 15) -> str:
    """The namespaces asking for the most CPU at max scale: min and max scale side by side
    (never one drawn over the other)."""
    title = f"Top {top} namespaces by CPU requested (cores), at min and max scale"
    if by_namespace.empty:
        return _empty(title, "no deployments")
    rows = by_namespace.head(top).iloc[::-1]
    names = rows["k8s_namespace"].fillna("(none)").astype(str).tolist()
    with mpl.rc_context({**_STYLE, "axes.grid.axis": "x"}):
        fig = Figure(figsize=(10, 0.42 * len(rows) + 1.2))
        ax = fig.subplots()
        positions = list(range(len(rows)))
        for offset, scale, color in ((0.2, "min", PALETTE[1]), (-0.2, "max", PALETTE[0])):
            ax.barh(
                [p + offset for p in positions],
                rows[f"cpu_request_cores_{scale}_scale"].astype(float),
                0.4,
                color=color,
                label=f"{scale} scale",
            )
        ax.set_yticks(positions, names)
        ax.set_xlabel("cores")
        ax.set_title(title, fontsize=11, loc="left")
        ax.legend(frameon=False, fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return to_svg(fig, title)


def version_distribution_chart(by_type: pd.DataFrame, newest: str | None) -> str:
    """Deployments per image_version in version order, stacked by deployment_type.

    `by_type` is `versions_by_type`; the newest version's label is drawn bold.
    """
    title = "Deployments per image version (oldest → newest, unparseable last)"
    if by_type.empty:
        return _empty(title, "no deployments")
    order = [
        "(missing)" if v is None else v
        for v in versions.sort_versions(by_type["image_version"].astype("object").tolist())
    ]
    frame = by_type.assign(image_version=by_type["image_version"].fillna("(missing)"))
    types = sorted(frame["deployment_type"].fillna("(none)").unique())
    pivot = (
        frame.assign(deployment_type=frame["deployment_type"].fillna("(none)"))
        .pivot_table(
            index="image_version", columns="deployment_type", values="deployments", aggfunc="sum"
        )
        .reindex(index=order, columns=types)
        .fillna(0)
    )
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(max(8.0, 0.45 * len(order) + 3), 4.2))
        ax = fig.subplots()
        bottoms = [0.0] * len(order)
        for color, kind in zip(itertools.cycle(PALETTE), types, strict=False):
            values = pivot[kind].tolist()
            ax.bar(range(len(order)), values, bottom=bottoms, color=color, label=kind)
            bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
        ax.set_xticks(range(len(order)))
        labels = [f"{v} (newest)" if v == newest else str(v) for v in order]
        ax.set_xticklabels(labels, rotation=45, ha="right")
        for tick, value in zip(ax.get_xticklabels(), order, strict=True):
            if value == newest:
                tick.set_fontweight("bold")
        ax.set_ylabel("deployments")
        ax.set_title(title, fontsize=11, loc="left")
        ax.legend(  # beside the axes, so it never covers a bar
            title="deployment type",
            frameon=False,
            fontsize=9,
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
        )
        return to_svg(fig, title)


#: Up to this many snapshots the adoption chart has a bar per snapshot; beyond it, stacked
#: areas on an axis of fixed width with a few date labels: three years of daily snapshots
#: make a chart as wide and as cheap as a month's (a bar each would be 1,095 bars).
ADOPTION_BARS_UP_TO = 40
_ADOPTION_TICKS = 8


def adoption_chart(over_time: pd.DataFrame, keep: int = 7) -> str:
    """Share of deployments per image version at each snapshot date (stacked bars, or
    stacked areas for a long history: `ADOPTION_BARS_UP_TO`).

    The `keep` newest versions get their own colour; older parseable ones are `older`, and
    unparseable ones `unparseable`, so the legend stays readable.
    """
    title = "Image version adoption over time (share of deployments)"
    if over_time.empty:
        return _empty(title, "no snapshots")
    pivot = _adoption_pivot(over_time, keep)
    dates, series = list(pivot.index), list(pivot.columns)
    colors = {"older": "#c8c8c8", "unparseable": "#7f7f7f"}
    fresh = iter(PALETTE)
    shades = [colors.get(name) or next(fresh, "#333333") for name in series]
    shares = [[100.0 * v for v in pivot[name]] for name in series]
    bars = len(dates) <= ADOPTION_BARS_UP_TO
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(max(8.0, 0.6 * len(dates) + 4) if bars else 12.0, 4.2))
        ax = fig.subplots()
        if bars:
            bottoms = [0.0] * len(dates)
            for name, color, values in zip(series, shades, shares, strict=True):
                ax.bar(
                    range(len(dates)), values, bottom=bottoms, color=color, label=name, width=0.7
                )
                bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
            ticks = list(range(len(dates)))
        else:
            ax.stackplot(range(len(dates)), *shares, labels=series, colors=shades)
            ax.set_xlim(0, len(dates) - 1)
            step = (len(dates) - 1) / (_ADOPTION_TICKS - 1)
            ticks = sorted({round(n * step) for n in range(_ADOPTION_TICKS)})
        ax.set_xticks(ticks)
        ax.set_xticklabels(
            [dates[n] for n in ticks], rotation=30 if len(ticks) > 6 else 0, ha="right"
        )
        ax.set_ylim(0, 100)
        ax.set_ylabel("% of deployments")
        ax.set_title(title, fontsize=11, loc="left")
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(
            handles[::-1],
            labels[::-1],
            title="image version",
            frameon=False,
            fontsize=9,
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
        )
        return to_svg(fig, title)


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
