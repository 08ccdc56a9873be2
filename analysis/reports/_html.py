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

from analysis.reports import _capacity as cap

CSS = """
:root { --ink:#1d2330; --muted:#5b6475; --line:#e3e6ec; --accent:#4269d0; --warn:#b3261e; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
       color:var(--ink); background:#f6f7f9; }
main { max-width:1180px; margin:0 auto; padding:24px 28px 60px; background:#fff; }
h1 { font-size:26px; margin:0 0 4px; overflow-wrap:anywhere; }
h2 { font-size:20px; margin:36px 0 8px; padding-top:12px; border-top:2px solid var(--line); }
h3 { font-size:15px; margin:22px 0 6px; }
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
.card.warn .v { color:var(--warn); }
figure { margin:10px 0 18px; overflow-x:auto; }
figure svg { display:block; width:100%; height:auto; max-width:100%; }
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
tr.total td { font-weight:600; border-top:2px solid #c9ced8; }
ul.assumptions li { margin:4px 0; }
@media (max-width: 600px) {
  main { padding:14px 12px 40px; }
  h1 { font-size:21px; }
  .cards { grid-template-columns:repeat(2,minmax(0,1fr)); }
  .card .v { font-size:18px; }
  figure svg { min-width:560px; }
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
    "storage_cost_usd_month": "DB storage ($/month)",
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
    parts = name.split("_")
    if name.endswith("_usd_month") and "cost" in parts:  # [cpu_]cost_request_max_scale_usd_month
        resource = parts[0] if parts[0] in _RESOURCE else None
        basis, scale = parts[-5], parts[-4]
        what = f"{_RESOURCE[resource]}, {basis}s" if resource else f"{basis.capitalize()}s"
        return f"{what} at {scale} scale ($/month)"
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
    kinds = {c: _format_of(str(c), frame[c]) for c in frame.columns}
    numeric = {"count", "usd", "percent", "ratio", "days", "decimal"}
    head = "".join(
        f'<th class="num" scope="col">{esc(label(c))}</th>'
        if kinds[c] in numeric
        else f'<th scope="col">{esc(label(c))}</th>'
        for c in frame.columns
    )
    rows = []
    for record in shown.itertuples(index=False, name=None):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            text = format_value(kinds[column], value)
            if kinds[column] in numeric:
                cls = ' class="num"'
            elif str(column).endswith("_id"):
                cls = ' class="id"'
            elif column in ("detail", "suggestion"):
                cls = ' class="text"'
            else:
                cls = ""
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


def with_total(frame: pd.DataFrame, total: Mapping[str, object]) -> pd.DataFrame:
    """`frame` with a total row appended, for display only: the frames themselves are tidy."""
    row = pd.DataFrame([{c: total.get(c) for c in frame.columns}])
    row = row.astype(frame.dtypes.to_dict(), errors="ignore")
    return pd.concat([frame, row], ignore_index=True)


def figure(svg: str, caption: str | None = None) -> str:
    cap_html = f'<p class="note">{esc(caption)}</p>' if caption else ""
    return f"<figure>{svg}{cap_html}</figure>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def inline_code(text: str) -> str:
    """`text` escaped, with `backticked` spans shown as <code> (never literal backticks)."""
    pieces = esc(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


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
