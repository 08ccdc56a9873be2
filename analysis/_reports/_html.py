"""The self-contained `report.html`: inline CSS, inline SVG charts, no script, no link.

One file that opens offline, attaches to an email and archives with its snapshot. Every
value from the dataset is HTML-escaped; the page references nothing outside itself (only
`#section` anchors), which the tests check.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import SupportsFloat, SupportsInt

import pandas as pd

from dims._reports import _capacity as cap

CSS = """
:root { --ink:#1d2330; --muted:#5b6475; --line:#e3e6ec; --accent:#4269d0; --warn:#b3261e; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
       color:var(--ink); background:#f6f7f9; }
main { max-width:1180px; margin:0 auto; padding:24px 28px 60px; background:#fff; }
h1 { font-size:26px; margin:0 0 4px; overflow-wrap:anywhere; }
h1 .date { white-space:nowrap; }
h2 { font-size:20px; margin:36px 0 8px; padding-top:12px; border-top:2px solid var(--line); }
h3 { font-size:15px; margin:22px 0 6px; overflow-wrap:anywhere; }
p.meta, p.note, .muted { color:var(--muted); }
p.note { font-size:12.5px; margin:4px 0 10px; }
nav { display:flex; flex-wrap:wrap; gap:4px 14px; }
nav a { color:var(--accent); text-decoration:none; }
code { font-family:ui-monospace,Menlo,Consolas,monospace; font-size:0.92em;
       background:#f0f2f5; padding:0 3px; border-radius:3px; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(160px,1fr)); gap:10px;
         margin:16px 0; }
.card { border:1px solid var(--line); border-radius:8px; padding:10px 12px; min-width:0; }
.card .v { font-size:21px; font-weight:600; overflow-wrap:anywhere; }
.card .k { font-size:12px; color:var(--muted); }
.card .n { font-size:12px; color:var(--muted); margin-top:2px; }
.card.warn .v, .card.warn .n { color:var(--warn); }
.cards.money { grid-template-columns:repeat(auto-fill,minmax(230px,1fr)); }
.where { display:grid; grid-template-columns:repeat(auto-fill,minmax(250px,1fr)); gap:4px 18px; }
.where ol { margin:4px 0 8px; padding-left:22px; font-size:13px; }
.where h3 { margin:10px 0 2px; }
figure { margin:10px 0 18px; }
.panels { display:flex; flex-wrap:wrap; gap:14px 22px; align-items:flex-start; }
svg.panel { display:block; max-width:100%; height:auto; overflow:visible; }
.legend { display:flex; flex-wrap:wrap; gap:4px 14px; font-size:12px; color:var(--muted);
          margin-top:8px; }
.legend i { display:inline-block; width:11px; height:11px; margin-right:5px;
            vertical-align:-1px; border-radius:2px; }
details.more { margin:-8px 0 14px; }
details.more summary { cursor:pointer; color:var(--accent); font-size:12.5px; }
.scroll { overflow-x:auto; width:fit-content; max-width:100%; margin:6px 0 14px;
          border:1px solid var(--line); border-radius:6px; }
table { border-collapse:collapse; font-size:12.5px; width:auto; }
th, td { border-bottom:1px solid var(--line); padding:4px 8px; text-align:left;
         vertical-align:bottom; }
td { vertical-align:top; white-space:nowrap; }
th { background:#f0f2f5; font-weight:600; min-width:5.5em; max-width:10em; line-height:1.25; }
tbody tr:last-child td { border-bottom:none; }
td.id { font-family:ui-monospace,Menlo,Consolas,monospace; font-size:11.5px; white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
td.num { white-space:nowrap; }
td.text { min-width:16em; white-space:normal; }
tr.total td { font-weight:600; border-top:2px solid #c9ced8; border-bottom:none; }
ul.assumptions li { margin:4px 0; }
@media (max-width: 600px) {
  main { padding:14px 12px 40px; }
  h1 { font-size:21px; }
  .cards { grid-template-columns:repeat(2,minmax(0,1fr)); }
  .card .v { font-size:18px; }
  .cards.money { grid-template-columns:minmax(0,1fr); }
}
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


#: Column headers a reader understands, with units; patterns below name the rest.
LABELS = {
    "deployment_id": "Deployment ID",
    "name": "Name",
    "deployment_type": "Type",
    "k8s_namespace": "Namespace",
    "component": "Component",
    "image_version": "Image version",
    "deployments": "Deployments",
    "replicas_min": "Replicas at min scale",
    "replicas_max": "Replicas at max scale",
    "sidecars": "Sidecars",
    "init_containers": "Init containers",
    "db_storage_gib": "DB storage (GiB)",
    "db_storage_gib_mean": "Mean DB storage (GiB)",
    "db_storage_gib_max": "Largest DB storage (GiB)",
    "db_max_connections": "DB connections",
    "deployments_with_db": "Deployments with a DB",
    "cpu_overcommit": "CPU limit ÷ request",
    "memory_overcommit": "Memory limit ÷ request",
    "cpu_request_cores": "CPU request per replica (cores)",
    "memory_request_gib": "Memory request per replica (GiB)",
    "max_scale": "Max scale (replicas)",
    "storage_cost_usd_month": "DB storage ($/month, in every total)",
    "deployments_unpriced": "Unpriced (in no figure)",
    "deployments_unbounded": "Limits unbounded (not in limits)",
    "cost_share": "Share of the month (requests, max scale)",
    "scale_inverted": "Scale inverted",
    "limits_unbounded": "Limits unbounded",
    "unpriced_reason": "Unpriced because",
    "tenant_id": "Workspace",
    "savings_usd_month": "Saves ($/month)",
    "signal": "Signal",
    "suggestion": "Suggestion",
    "anomaly": "Anomaly",
    "detail": "Detail",
    "findings": "Findings",
    "versions_behind": "Versions behind newest",
    "share": "Share of fleet",
    "version_order": "Version order",
    "is_newest": "Newest",
    "parseable": "Parses as a version",
    "newest_version": "Newest version",
    "on_newest": "On newest",
    "share_on_newest": "Share on newest",
    "mean_versions_behind": "Mean versions behind",
    "max_versions_behind": "Most versions behind",
    "unparseable_versions": "Unparseable versions",
    "updated_at": "Updated",
    "time_since_update": "Since update (days)",
    "days_since_update": "Since update (days)",
    "measure": "Measure",
    "from_value": "From",
    "to_value": "To",
    "delta": "Change",
    "change": "Change",
    "from_version": "From version",
    "to_version": "To version",
    "snapshot_date": "Snapshot date",
}
_RESOURCE = {"cpu": "CPU", "memory": "Memory"}
_UNIT = {"cores": "cores", "gib": "GiB"}
_BASIS = {"request": "requested", "limit": "limit"}
_POD_PART = {"main": "Main", "sidecars": "Sidecars", "largest_init": "Largest init", "pod": "Pod"}


def label(column: object) -> str:
    """The header for a column: a human label with its unit (`cpu_request_cores_max_scale`
    reads "CPU requested at max scale (cores)"); unknown names lose their underscores."""
    name = str(column)
    if name in LABELS:
        return LABELS[name]
    if name.startswith("label:"):
        return f"{name.removeprefix('label:')} (label)"
    parts = name.split("_")
    if name.endswith("_usd_month") and "cost" in parts:  # [cpu_]cost_request_max_scale_usd_month
        resource = parts[0] if parts[0] in _RESOURCE else None
        basis, scale = parts[-5], parts[-4]
        if resource:
            return f"{_RESOURCE[resource]}, {basis}s at {scale} scale ($/month)"
        return f"{basis.capitalize()}s at {scale} scale, with DB storage ($/month)"
    for prefix, part in _POD_PART.items():  # pod_requests: main_cpu_request_cores, …
        rest = name.removeprefix(prefix + "_")
        if rest != name and rest.split("_")[0] in _RESOURCE and len(rest.split("_")) == 3:
            resource, basis, unit = rest.split("_")
            return f"{part} {_RESOURCE[resource]} {_BASIS[basis]} ({_UNIT[unit]})"
    if len(parts) == 5 and parts[0] in _RESOURCE and parts[-1] == "scale":  # totals
        resource, basis, unit, scale, _ = parts
        return f"{_RESOURCE[resource]} {_BASIS[basis]} at {scale} scale ({_UNIT[unit]})"
    return name.replace("_", " ").capitalize()


def _format_of(column: str, values: pd.Series) -> str:
    """One number format per column, chosen from its unit, so every cell of a column (and
    every column of a unit) shows the same decimals: money `$1,234.56`, counts `1,234`,
    cores and GiB `1,234.50`, shares `12.3 %`, ratios `1.95×`, days `3.2 d`."""
    if pd.api.types.is_bool_dtype(values):
        return "bool"
    if pd.api.types.is_timedelta64_dtype(values):
        return "days"
    if pd.api.types.is_datetime64_any_dtype(values):
        return "time"
    if not pd.api.types.is_numeric_dtype(values):
        return "text"
    if pd.api.types.is_integer_dtype(values):
        return "count"
    if "usd" in column:
        return "usd"
    if "share" in column:
        return "percent"
    if "overcommit" in column:
        return "ratio"
    if column.startswith("days") or "_days" in column:
        return "days"
    return "decimal"


def format_value(kind: str, value: object) -> str:
    """The text of one cell in a column of format `kind` (see `_format_of`).

    The kind comes from the column's dtype, so a `time` cell is a datetime, a `days` cell a
    Timedelta or a number, and the other numeric kinds hold numbers; the isinstance checks
    say so to the type checker, and anything else is shown as its text.
    """
    if _is_missing(value):
        return "—"
    if kind == "ratio" and isinstance(value, float) and math.isinf(value):
        return "unbounded"
    if kind == "bool":
        return "yes" if value else "no"
    if kind == "time" and isinstance(value, datetime):
        return pd.Timestamp(value).strftime("%Y-%m-%d %H:%M UTC")
    if kind == "days" and isinstance(value, pd.Timedelta):
        value = value.total_seconds() / 86400
    if kind == "count" and isinstance(value, SupportsInt):
        return f"{int(value):,}"
    if kind in _NUMBER_FORMATS and isinstance(value, SupportsFloat):
        scale, template = _NUMBER_FORMATS[kind]
        return template.format(scale * float(value))
    return str(value)


#: format kind -> (factor, template) of the numeric kinds other than counts
_NUMBER_FORMATS: dict[str, tuple[float, str]] = {
    "days": (1.0, "{:,.1f} d"),
    "usd": (1.0, "${:,.2f}"),
    "percent": (100.0, "{:.1f} %"),
    "ratio": (1.0, "{:.2f}×"),
    "decimal": (1.0, "{:,.2f}"),
}


#: Rows a long table shows, and how many more it keeps in a `<details>` below them.
SHOWN_ROWS = 10
MORE_ROWS = 90
_NUMERIC = {"count", "usd", "percent", "ratio", "days", "decimal"}


def _cell(kind: str, column: object, value: object) -> str:
    text = format_value(kind, value)
    if kind in _NUMERIC:
        cls = ' class="num"'
    elif str(column).endswith("_id"):
        cls = ' class="id"'
    elif column in ("detail", "suggestion"):
        cls = ' class="text"'
    else:
        cls = ""
    return f"<td{cls}>{esc(text)}</td>"


def _rows(frame: pd.DataFrame, kinds: dict[object, str], css: str = "") -> str:
    return "".join(
        f"<tr{css}>"
        + "".join(_cell(kinds[c], c, v) for c, v in zip(frame.columns, record, strict=True))
        + "</tr>"
        for record in frame.itertuples(index=False, name=None)
    )


def _grid(frame: pd.DataFrame, kinds: dict[object, str], body: pd.DataFrame, foot: str = "") -> str:
    head = "".join(
        f'<th class="num" scope="col">{esc(label(c))}</th>'
        if kinds[c] in _NUMERIC
        else f'<th scope="col">{esc(label(c))}</th>'
        for c in frame.columns
    )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{_rows(body, kinds)}</tbody>{foot}</table></div>"
    )


def table(
    frame: pd.DataFrame,
    *,
    max_rows: int | None = SHOWN_ROWS,
    more: int = MORE_ROWS,
    total: Mapping[str, object] | None = None,
    columns: Iterable[str] | None = None,
    where: str = "the Python API",
) -> str:
    """An HTML table: its first `max_rows` rows (None: all), the next `more` in a
    `<details>` below, and a note of how many are left out (`where` has them all).
    `total` (the fleet's figures) is a last row, shown under the first rows."""
    if columns is not None:
        frame = frame[[c for c in columns if c in frame.columns]]
    if frame.empty:
        return '<p class="muted">None.</p>'
    kinds: dict[object, str] = {c: _format_of(str(c), frame[c]) for c in frame.columns}
    foot = ""
    if total is not None:
        row = pd.DataFrame([{c: total.get(str(c)) for c in frame.columns}])
        foot = f"<tfoot>{_rows(row, kinds, ' class=total')}</tfoot>"
    shown = frame if max_rows is None else frame.head(max_rows)
    out = _grid(frame, kinds, shown, foot)
    rest = frame.iloc[len(shown) : len(shown) + more]
    if len(rest):
        out += (
            f'<details class="more"><summary>{len(rest):,} more rows</summary>'
            f"{_grid(frame, kinds, rest)}</details>"
        )
    left = len(frame) - len(shown) - len(rest)
    if left > 0:
        out += (
            f'<p class="note">{left:,} more of {len(frame):,} rows are left out here; '
            f"{esc(where)} has all of them.</p>"
        )
    return out


def figure(chart: str, caption: str | None = None) -> str:
    """A chart (`dims._reports.charts`) with its caption."""
    cap_html = f'<p class="note">{esc(caption)}</p>' if caption else ""
    return f"<figure>{chart}{cap_html}</figure>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def inline_code(text: str) -> str:
    """`text` escaped, with `backticked` spans shown as <code> (never literal backticks)."""
    pieces = esc(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


def heading(text: str) -> str:
    return f"<h3>{esc(text)}</h3>"


@dataclass(frozen=True)
class Card:
    """A key figure: its value, what it is, a short note under it, and whether it warns."""

    label: str
    value: str
    note: str = ""
    warn: bool = False


def cards(items: Iterable[Card], kind: str = "") -> str:
    """Key figures side by side (`kind` "money": wider cards)."""
    out = []
    for card in items:
        cls = "card warn" if card.warn else "card"
        note = f'<div class="n">{esc(card.note)}</div>' if card.note else ""
        out.append(
            f'<div class="{cls}"><div class="v">{esc(card.value)}</div>'
            f'<div class="k">{esc(card.label)}</div>{note}</div>'
        )
    return f'<div class="cards {kind}">{"".join(out)}</div>'


ASSUMPTIONS = (
    "CPU is in cores; memory fields (memory_mb) are read as MiB and reported in GiB "
    "(1024 MiB per GiB); DB storage is GiB.",
    "A component's total is replicas × per-replica resources, at min_scale and at max_scale. "
    "Components without scale fields (executor, cache, db), and scale fields left empty, "
    "count one replica; a fractional scale rounds up. Max scale is never below min scale: a "
    "deployment whose max_scale is below its min_scale is flagged `scale_inverted` and its "
    "max-scale figures use min_scale.",
    "Sidecars and init containers belong to the main workload's pod and count as Kubernetes "
    "schedules a pod: per replica, max(main + sum of sidecars, largest init container). A "
    "container request left empty defaults to its limit (0 when both are empty). What they "
    f"add on top of the main container is shown as the component `{cap.POD_EXTRA}`.",
    "Never silently cheaper: a deployment with no resource field (`resource_spec_absent`), a "
    "component without its CPU or memory request (`missing_resources`) or a quantity no "
    "cluster runs (`unreadable_quantity`: a container quantity Kubernetes refuses, or a "
    "resource figure that is negative or above 2^32, null in the dataset and kept in "
    "unreadable_values_json) is unpriced: none of its figures is in any total, and every "
    "total says how many it leaves out. A component or container "
    "with no CPU or memory limit may use what the node has: the deployment's limits are "
    "unbounded, its limits-basis figures are left out of the limits totals (counted beside "
    "them), and limit ÷ request reads unbounded.",
    "Versions behind counts the distinct, newer image versions present in the same snapshot. "
    "Versions that do not parse (for example `latest`) are listed after all others and are "
    "never counted as behind or newest.",
    "Right-sizing compares the main workload with the documented development defaults "
    f"({cap.DEV_DEFAULT_CPU_CORES:g} CPU, {cap.DEV_DEFAULT_MEMORY_MIB:g} MiB, "
    f"{cap.DEV_MAX_REPLICAS:g} replica); the dataset has no usage figures.",
)


def page(title: str, meta: str, sections: list[Section], date: str = "") -> str:
    """The whole document; `date` ends the title and never breaks across lines."""
    nav = "".join(f'<a href="#{esc(s.anchor)}">{esc(s.title)}</a>' for s in sections)
    dated = f' — <span class="date">{esc(date)}</span>' if date else ""
    body = "".join(
        f'<section id="{esc(s.anchor)}"><h2>{esc(s.title)}</h2>{"".join(s.parts)}</section>'
        for s in sections
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}{' — ' + esc(date) if date else ''}</title><style>{CSS}</style></head>"
        f'<body><main><h1>{esc(title)}{dated}</h1><p class="meta">{esc(meta)}</p>'
        f"<nav>{nav}</nav>{body}</main></body></html>\n"
    )
