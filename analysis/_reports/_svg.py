"""Chart panels as small inline SVG documents, drawn at their own size in pixels.

Why by hand rather than matplotlib: a panel here is a few dozen rectangles and labels, which
string formatting writes in microseconds, where matplotlib took a second to import and
draw the report's charts. And a panel drawn at its natural size is never scaled down on a
laptop: its text stays at `FONT` px, and panels no wider than `PANEL_WIDTH` sit side by side
on a wide screen and one under another on a phone (the page lays them out, not the chart).

Every text is escaped and stays text (searchable, in the page's font); no id, no link, no
script: a panel references nothing outside itself.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Text size in px; panels are never scaled down below their width, so this is what a
#: reader sees (the browser test holds it to at least 11 px at 390 px wide).
FONT = 12
#: The widest panel: fits a 390 px phone beside the page's 12 px margins.
PANEL_WIDTH = 360
INK, MUTED, GRID = "#1d2330", "#5b6475", "#e3e6ec"

Format = Callable[[float], str]


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def clip(text: str, limit: int) -> str:
    """At most `limit` characters (an ellipsis for the rest); the panel's title says all."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def label(x: float, y: float, text: str, anchor: str = "start", **style: str) -> str:
    attributes = "".join(f' {k.replace("_", "-")}="{esc(v)}"' for k, v in style.items())
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{FONT}" text-anchor="{anchor}"'
        f"{attributes}>{esc(text)}</text>"
    )


def box(x: float, y: float, width: float, height: float, fill: str, tip: str = "") -> str:
    """A rectangle; `tip` is shown on hover (an SVG title)."""
    title = f"<title>{esc(tip)}</title>" if tip else ""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(width, 0.0):.1f}" '
        f'height="{max(height, 0.0):.1f}" fill="{fill}">{title}</rect>'
    )


def panel(width: int, height: int, title: str, parts: Sequence[str]) -> str:
    """One panel: an `<svg>` `width` × `height` px with `title` drawn at its top."""
    return (
        f'<svg class="panel" role="img" aria-label="{esc(title)}" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}"><title>{esc(title)}</title>'
        + label(0, FONT + 2, clip(title, width // 7), font_weight="600", fill=INK)
        + "".join(parts)
        + "</svg>"
    )


def nice_step(top: float, ticks: int = 4) -> float:
    """A round step (1, 2 or 5 × 10^k) that covers `top` in about `ticks` steps."""
    if not top > 0 or not math.isfinite(top):
        return 1.0
    raw = top / ticks
    power = float(10.0 ** math.floor(math.log10(raw)))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def axis_top(values: Sequence[float]) -> tuple[float, float]:
    """(the axis' end, its step): the largest value rounded up to a step."""
    top = max([v for v in values if math.isfinite(v)] or [0.0])
    step = nice_step(top)
    return max(step, math.ceil(top / step) * step), step


@dataclass(frozen=True)
class Segment:
    """A part of a bar: its value, colour and what it is (shown on hover)."""

    value: float
    color: str
    name: str


@dataclass(frozen=True)
class Bar:
    """A bar of stacked segments, its label, and a note drawn after it (a total, "unbounded")."""

    label: str
    segments: Sequence[Segment]
    note: str = ""


def hbars(
    title: str,
    bars: Sequence[Bar],
    fmt: Format,
    width: int = PANEL_WIDTH,
    shared: Sequence[float] = (),
) -> str:
    """Horizontal stacked bars, one row each, labels on the left and notes after the bars.
    `shared`: every bar total of the panels compared with this one, so they share one axis
    (a longer bar is a larger figure in every panel)."""
    row, gap, top = 22, 6, FONT + 14
    left = min(120, max((len(b.label) for b in bars), default=4) * 7 + 8)
    right = 78
    room = max(width - left - right, 40)
    end, _ = axis_top([*shared, *(sum(s.value for s in b.segments) for b in bars)])
    parts = []
    for n, bar in enumerate(bars):
        y = top + n * (row + gap)
        parts.append(label(left - 6, y + row - 7, clip(bar.label, left // 7), "end", fill=INK))
        x = float(left)
        for segment in bar.segments:
            size = room * segment.value / end if end and math.isfinite(segment.value) else 0.0
            tip = f"{bar.label}, {segment.name}: {fmt(segment.value)}"
            parts.append(box(x, y, size, row, segment.color, tip))
            x += size
        parts.append(label(x + 4, y + row - 7, bar.note, fill=MUTED))
    height = top + len(bars) * (row + gap) + 4
    return panel(width, height, title, parts)


def vbars(
    title: str,
    bars: Sequence[Bar],
    fmt: Format,
    width: int = 170,
    height: int = 190,
    labelled: Sequence[int] | None = None,
) -> str:
    """Vertical stacked bars with a value axis on the left and the bars' labels below (only
    those in `labelled`, when given: many bars leave room for a few labels)."""
    top, bottom, left = FONT + 14, FONT + 10, 44
    plot = height - top - bottom
    end, step = axis_top([sum(s.value for s in b.segments) for b in bars])
    parts = _value_axis(left, top, plot, width, end, step, fmt)
    slot = (width - left) / max(len(bars), 1)
    for n, bar in enumerate(bars):
        x = left + n * slot + slot * 0.18
        y = float(top + plot)
        for segment in bar.segments:
            size = plot * segment.value / end if end and math.isfinite(segment.value) else 0.0
            y -= size
            tip = f"{bar.label}, {segment.name}: {fmt(segment.value)}"
            parts.append(box(x, y, slot * 0.64, size, segment.color, tip))
        if labelled is None or n in labelled:
            anchor = "middle" if labelled is None else _anchor(n, len(bars) - 1)
            parts.append(label(x + slot * 0.32, height - 4, clip(bar.label, 12), anchor, fill=INK))
    return panel(width, height, title, parts)


def _value_axis(
    left: float, top: float, plot: float, width: float, end: float, step: float, fmt: Format
) -> list[str]:
    """Grid lines and their values, from 0 to `end`."""
    parts = []
    ticks = round(end / step) if step else 0
    for n in range(ticks + 1):
        value = n * step
        y = top + plot - plot * value / end if end else top + plot
        parts.append(
            f'<line x1="{left:.1f}" x2="{width:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{GRID}" stroke-width="1"/>'
        )
        parts.append(label(left - 4, y + 4, fmt(value), "end", fill=MUTED))
    return parts


def areas(
    title: str,
    dates: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float]]],
    ticks: Sequence[int],
    width: int = PANEL_WIDTH,
    height: int = 220,
) -> str:
    """Stacked areas of shares (0..1) over `dates`, with the dates at `ticks` labelled."""
    top, bottom, left = FONT + 14, FONT + 12, 36
    plot_w, plot_h = width - left - 8, height - top - bottom
    count = max(len(dates) - 1, 1)

    def x(n: int) -> float:
        return left + plot_w * n / count

    parts = _value_axis(left, top, plot_h, width, 1.0, 0.25, lambda v: f"{v:.0%}")
    below = [0.0] * len(dates)
    for name, color, values in series:
        above = [b + v for b, v in zip(below, values, strict=True)]
        upper = [f"{x(n):.1f},{top + plot_h * (1 - v):.1f}" for n, v in enumerate(above)]
        lower = [f"{x(n):.1f},{top + plot_h * (1 - v):.1f}" for n, v in enumerate(below)]
        points = " ".join([*upper, *reversed(lower)])
        parts.append(
            f'<polygon points="{points}" fill="{color}"><title>{esc(name)}</title></polygon>'
        )
        below = above
    for n in ticks:
        parts.append(label(x(n), height - 4, dates[n], _anchor(n, count), fill=INK))
    return panel(width, height, title, parts)


def lines(
    title: str,
    dates: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float]]],
    ticks: Sequence[int],
    fmt: Format,
    width: int = PANEL_WIDTH,
    height: int = 240,
) -> str:
    """Lines of values over `dates` on one value axis from 0, the dates at `ticks` labelled;
    a point each where there are few dates. A value that is not finite breaks its line."""
    top, bottom, left = FONT + 14, FONT + 12, 52
    plot_w, plot_h = width - left - 8, height - top - bottom
    count = max(len(dates) - 1, 1)
    known = [v for _, _, values in series for v in values if math.isfinite(v)]
    end, step = axis_top(known or [0.0])

    def x(n: int) -> float:
        return left + plot_w * n / count if len(dates) > 1 else left + plot_w / 2

    def y(value: float) -> float:
        return top + plot_h * (1 - value / end) if end else top + plot_h

    parts = _value_axis(left, top, plot_h, width, end, step, fmt)
    for name, color, values in series:
        points = [(x(n), y(v)) if math.isfinite(v) else None for n, v in enumerate(values)]
        parts.extend(_polylines(name, color, points))
        if len(dates) <= 31:
            for n, value in enumerate(values):
                if math.isfinite(value):
                    tip = f"{name}, {dates[n]}: {fmt(value)}"
                    parts.append(
                        f'<circle cx="{x(n):.1f}" cy="{y(value):.1f}" r="3" fill="{color}">'
                        f"<title>{esc(tip)}</title></circle>"
                    )
    for n in ticks:
        anchor = "middle" if len(dates) == 1 else _anchor(n, count)
        parts.append(label(x(n), height - 4, dates[n], anchor, fill=INK))
    return panel(width, height, title, parts)


def _polylines(name: str, color: str, points: Sequence[tuple[float, float] | None]) -> list[str]:
    """A line through `points`, broken where a point is unknown (None)."""
    runs: list[list[str]] = [[]]
    for point in points:
        if point is not None:
            runs[-1].append(f"{point[0]:.1f},{point[1]:.1f}")
        elif runs[-1]:
            runs.append([])
    return [
        f'<polyline points="{" ".join(run)}" fill="none" stroke="{color}" '
        f'stroke-width="2"><title>{esc(name)}</title></polyline>'
        for run in runs
        if len(run) > 1
    ]


def _anchor(n: int, last: int) -> str:
    return "start" if n == 0 else "end" if n == last else "middle"


def legend(items: Sequence[tuple[str, str]]) -> str:
    """An HTML legend (name, colour): text of the page's size, wrapping on a phone."""
    keys = "".join(
        f'<span class="key"><i style="background:{color}"></i>{esc(name)}</span>'
        for name, color in items
    )
    return f'<div class="legend">{keys}</div>'
