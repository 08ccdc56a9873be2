"""The self-contained `report.html`: inline CSS, inline SVG charts, no script, no link.

One file that opens offline, attaches to an email and archives with its snapshot. Every
value from the dataset is HTML-escaped; the page references nothing outside itself (only
`#section` anchors), which the tests check.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.reports import capacity as cap

CSS = """
:root { --ink:#1d2330; --muted:#5b6475; --line:#e3e6ec; --accent:#4269d0; --warn:#b3261e; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
       color:var(--ink); background:#f6f7f9; }
main { max-width:1180px; margin:0 auto; padding:24px 28px 60px; background:#fff; }
h1 { font-size:26px; margin:0 0 4px; }
h2 { font-size:20px; margin:36px 0 8px; padding-top:12px; border-top:2px solid var(--line); }
h3 { font-size:15px; margin:22px 0 6px; }
p.meta, p.note, .muted { color:var(--muted); }
p.note { font-size:12.5px; margin:4px 0 10px; }
nav a { margin-right:14px; color:var(--accent); text-decoration:none; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(170px,1fr)); gap:10px;
         margin:16px 0; }
.card { border:1px solid var(--line); border-radius:8px; padding:10px 12px; }
.card .v { font-size:21px; font-weight:600; }
.card .k { font-size:12px; color:var(--muted); }
.card.warn .v { color:var(--warn); }
figure { margin:10px 0 18px; }
figure svg { width:100%; height:auto; max-width:100%; }
table { border-collapse:collapse; margin:6px 0 14px; font-size:12.5px; width:auto; }
th, td { border-bottom:1px solid var(--line); padding:4px 8px; text-align:left;
         vertical-align:top; }
th { background:#f0f2f5; font-weight:600; max-width:11em; }
td.id { font-family:ui-monospace,Menlo,Consolas,monospace; font-size:11.5px; white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
tr.total td { font-weight:600; border-top:2px solid #c9ced8; }
.scroll { overflow-x:auto; }
ul.assumptions li { margin:4px 0; }
"""


@dataclass
class Section:
    """A titled part of the report: HTML fragments in order."""

    anchor: str
    title: str
    parts: list[str] = field(default_factory=list)

    def add(self, *parts: str) -> Section:
        self.parts.extend(parts)
        return self


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _is_missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def format_value(column: str, value: object) -> tuple[str, bool]:
    """(text, is_number) for one cell; shares as percent, durations in days."""
    if _is_missing(value):
        return "—", False
    if isinstance(value, bool | np.bool_):
        return ("yes" if value else "no"), False
    if isinstance(value, pd.Timedelta):
        return f"{value.total_seconds() / 86400:,.1f} d", True
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M UTC"), False
    if isinstance(value, int | np.integer):
        return f"{int(value):,}", True
    if isinstance(value, float):
        if "share" in column:
            return f"{100 * value:.1f} %", True
        if "overcommit" in column:
            return f"{value:.2f}×", True
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}", True
        return f"{value:,.2f}", True
    return str(value), False


def _label(column: object) -> str:
    """A column header that may wrap after underscores, keeping the exact column name."""
    return esc(column).replace("_", "_<wbr>")


def table(
    frame: pd.DataFrame,
    *,
    max_rows: int | None = 25,
    total_label: str | None = None,
    columns: Iterable[str] | None = None,
) -> str:
    """An HTML table; beyond `max_rows` rows, a note says how many are left out."""
    if columns is not None:
        frame = frame[[c for c in columns if c in frame.columns]]
    if frame.empty:
        return '<p class="muted">None.</p>'
    shown = frame if max_rows is None else frame.head(max_rows)
    head = "".join(
        f'<th class="num">{_label(c)}</th>'
        if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        else f"<th>{_label(c)}</th>"
        for c in frame.columns
    )
    rows = []
    for record in shown.itertuples(index=False, name=None):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            text, numeric = format_value(column, value)
            cls = ' class="num"' if numeric else ' class="id"' if column.endswith("_id") else ""
            cells.append(f"<td{cls}>{esc(text)}</td>")
        first = record[0] if record else None
        is_total = total_label is not None and first == total_label
        rows.append(f"<tr{' class=total' if is_total else ''}>{''.join(cells)}</tr>")
    more = ""
    if max_rows is not None and len(frame) > max_rows:
        more = (
            f'<p class="note">Showing {max_rows} of {len(frame):,} rows; '
            "the Python API returns all of them.</p>"
        )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{more}"
    )


def figure(svg: str, caption: str | None = None) -> str:
    cap_html = f'<p class="note">{esc(caption)}</p>' if caption else ""
    return f"<figure>{svg}{cap_html}</figure>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def heading(text: str) -> str:
    return f"<h3>{esc(text)}</h3>"


def cards(items: Iterable[tuple[str, str, bool]]) -> str:
    """Key figures: (label, value, warn)."""
    out = []
    for label, value, warn in items:
        cls = "card warn" if warn else "card"
        out.append(
            f'<div class="{cls}"><div class="v">{esc(value)}</div>'
            f'<div class="k">{esc(label)}</div></div>'
        )
    return f'<div class="cards">{"".join(out)}</div>'


ASSUMPTIONS = (
    "CPU is in cores; memory fields (memory_mb) are read as MiB and reported in GiB "
    "(1024 MiB per GiB); DB storage is GiB.",
    "A component's total is replicas × per-replica resources, at min_scale and at max_scale. "
    "Components without scale fields (executor, cache, db), and scale fields left empty, "
    "count one replica.",
    "Sidecars and init containers belong to the main workload's pod and count as Kubernetes "
    "schedules a pod: per replica, max(main + sum of sidecars, largest init container). A "
    "container request left empty defaults to its limit. What they add on top of the main "
    f"container is shown as the component `{cap.POD_EXTRA}`.",
    "Missing resource values count as zero in totals and are listed under anomalies. A "
    "deployment with no resource field at all is listed as resource_spec_absent.",
    "Versions behind counts the distinct, newer image versions present in the same snapshot. "
    "Versions that do not parse (for example `latest`) are listed after all others and are "
    "never counted as behind or newest.",
    "Right-sizing compares the main workload with the documented development defaults "
    f"({cap.DEV_DEFAULT_CPU_CORES:g} CPU, {cap.DEV_DEFAULT_MEMORY_MIB:g} MiB, "
    f"{cap.DEV_MAX_REPLICAS:g} replica); the dataset has no usage figures.",
)


def page(title: str, meta: str, sections: list[Section]) -> str:
    """The whole document."""
    nav = "".join(f'<a href="#{esc(s.anchor)}">{esc(s.title)}</a>' for s in sections)
    body = "".join(
        f'<section id="{esc(s.anchor)}"><h2>{esc(s.title)}</h2>{"".join(s.parts)}</section>'
        for s in sections
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f'<body><main><h1>{esc(title)}</h1><p class="meta">{esc(meta)}</p>'
        f"<nav>{nav}</nav>{body}</main></body></html>\n"
    )
