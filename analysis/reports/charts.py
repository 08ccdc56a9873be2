"""Charts as inline SVG strings, for a report that is one file and works offline.

Matplotlib's SVG is cleaned for inlining: no XML prolog or DOCTYPE (which names a remote
DTD), no metadata, no namespace URLs, and element ids prefixed per chart so that several
charts in one page cannot capture each other's clip paths. Text stays text (`svg.fonttype`
none): smaller, searchable, and drawn in the page's font.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import re

import matplotlib as mpl
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from analysis import versions
from analysis.reports.capacity import COMPONENT_ORDER

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
_STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "dims",  # stable ids: the same data gives the same file
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

    Ids are prefixed from `title`, so charts on one page need distinct titles.
    """
    buffer = io.StringIO()
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


def capacity_chart(summary: pd.DataFrame) -> str:
    """Requested CPU and memory per deployment_type, min vs max scale, stacked by component.

    `summary` is `capacity_summary` (component × deployment_type totals).
    """
    title = "Requested capacity by deployment type and component, at min and max scale"
    if summary.empty:
        return _empty(title, "no deployments")
    types = sorted(summary["deployment_type"].fillna("(none)").unique())
    colors = component_colors()
    panels = (
        ("cpu_request_cores", "CPU requested (cores)"),
        ("memory_request_gib", "Memory requested (GiB)"),
    )
    frame = summary.assign(deployment_type=summary["deployment_type"].fillna("(none)"))
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(11, 4.2))
        axes = fig.subplots(1, 2)
        width = 0.38
        for ax, (measure, label) in zip(axes, panels, strict=True):
            for offset, scale, hatch in ((-0.2, "min", "//"), (0.2, "max", "")):
                bottoms = [0.0] * len(types)
                for component in COMPONENT_ORDER:
                    rows = frame[frame["component"] == component].set_index("deployment_type")
                    values = [
                        float(rows[f"{measure}_{scale}_scale"].get(t, 0.0) or 0.0) for t in types
                    ]
                    if not any(values):
                        continue
                    ax.bar(
                        [i + offset for i in range(len(types))],
                        values,
                        width,
                        bottom=bottoms,
                        color=colors[component],
                        hatch=hatch,
                        edgecolor="white",
                        linewidth=0.4,
                        label=component if scale == "max" else None,
                    )
                    bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
            ax.set_xticks(range(len(types)))
            ax.set_xticklabels([f"{t}\nmin | max" for t in types])
            ax.set_title(label, fontsize=11, loc="left")
        handles, labels = axes[1].get_legend_handles_labels()
        handles += [
            Patch(facecolor="#bbbbbb", hatch="//", edgecolor="white"),
            Patch(facecolor="#bbbbbb"),
        ]
        labels += ["left bar: at min scale (hatched)", "right bar: at max scale"]
        fig.legend(handles, labels, loc="lower center", ncol=5, frameon=False, fontsize=9)
        fig.subplots_adjust(bottom=0.27)
        return to_svg(fig, title)


def namespace_chart(by_namespace: pd.DataFrame, top: int = 15) -> str:
    """The namespaces asking for the most CPU at max scale, as horizontal bars."""
    title = f"Top {top} namespaces by CPU requested at max scale (cores)"
    if by_namespace.empty:
        return _empty(title, "no deployments")
    rows = by_namespace.head(top).iloc[::-1]
    names = rows["k8s_namespace"].fillna("(none)").astype(str)
    with mpl.rc_context({**_STYLE, "axes.grid.axis": "x"}):
        fig = Figure(figsize=(10, 0.32 * len(rows) + 1.0))
        ax = fig.subplots()
        ax.barh(names, rows["cpu_request_cores_max_scale"], color=PALETTE[0], label="max scale")
        ax.barh(names, rows["cpu_request_cores_min_scale"], color=PALETTE[1], label="min scale")
        ax.set_xlabel("cores")
        ax.set_title(title, fontsize=11, loc="left")
        ax.legend(frameon=False, fontsize=9, loc="lower right")
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
        ax.legend(title="deployment_type", frameon=False, fontsize=9)
        return to_svg(fig, title)


def adoption_chart(over_time: pd.DataFrame, keep: int = 7) -> str:
    """Share of deployments per image version at each snapshot date (stacked bars).

    The `keep` newest versions get their own colour; older parseable ones are `older`, and
    unparseable ones `unparseable`, so the legend stays readable.
    """
    title = "Image version adoption over time (share of deployments)"
    if over_time.empty:
        return _empty(title, "no snapshots")
    frame = over_time.assign(image_version=over_time["image_version"].astype("object"))
    ordered = versions.sort_versions(frame["image_version"].dropna())
    parseable = [v for v in ordered if versions.parse_version(v) is not None]
    kept = parseable[-keep:]

    def bucket(value: object) -> str:
        if value in kept:
            return str(value)
        return "older" if versions.parse_version(value) is not None else "unparseable"

    frame["bucket"] = frame["image_version"].map(bucket)
    series = [b for b in ["older", *kept, "unparseable"] if (frame["bucket"] == b).any()]
    pivot = (
        frame.pivot_table(index="snapshot_date", columns="bucket", values="share", aggfunc="sum")
        .reindex(columns=series)
        .fillna(0.0)
        .sort_index()
    )
    dates = list(pivot.index)
    colors = {"older": "#c8c8c8", "unparseable": "#7f7f7f"}
    fresh = iter(PALETTE)
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(max(8.0, 0.6 * len(dates) + 4), 4.2))
        ax = fig.subplots()
        bottoms = [0.0] * len(dates)
        for name in series:
            values = [100.0 * v for v in pivot[name]]
            color = colors.get(name) or next(fresh, "#333333")
            ax.bar(range(len(dates)), values, bottom=bottoms, color=color, label=name, width=0.7)
            bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
        ax.set_xticks(range(len(dates)))
        ax.set_xticklabels(dates, rotation=30 if len(dates) > 6 else 0, ha="right")
        ax.set_ylim(0, 100)
        ax.set_ylabel("% of deployments")
        ax.set_title(title, fontsize=11, loc="left")
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(
            handles[::-1],
            labels[::-1],
            title="image_version",
            frameon=False,
            fontsize=9,
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
        )
        return to_svg(fig, title)
