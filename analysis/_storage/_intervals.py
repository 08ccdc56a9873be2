"""`<table>_intervals`: validity intervals derived in SQL from the `<table>_history` views.

One row per stretch of consecutive snapshots over which a deployment's values (every
column but `snapshot_date` and `snapshot_at`, which change with each export) did not
change, keyed by the deployment (`id`) or the deployment and its component. No second
copy of the data: the view is a query over the history view, as Fivetran's history mode
gives each row `_fivetran_start`, `_fivetran_end` and `_fivetran_active`.

- `valid_from`: the first snapshot day of the stretch.
- `valid_to`: the last snapshot day of the stretch (inclusive), null while current. So
  `day BETWEEN valid_from AND coalesce(valid_to, DATE '9999-12-31')` is a point-in-time
  query that matches exactly one row per key for any snapshot day the key was present on
  (Fivetran's end = next start would match two rows on the day of a change).
- `is_current`: the stretch holds the latest snapshot.
- `removed_on`: the first snapshot day the key was absent after this stretch, null if the
  stretch ends by a change of values or is current.

"Consecutive" counts the snapshots that exist: a day not exported (a gap) neither breaks a
stretch nor removes a deployment; a day the question falls on inside such a gap matches only
when the values on both sides are equal. A re-exported day is its folder's files (a
re-export replaces them), so it counts once. Days of an older schema read the columns they
lack as nulls (`union_by_name`), so a column added later starts a new stretch on the first
day it holds a value.
"""

from __future__ import annotations

from .._escape import sql_name

#: The tables that get an intervals view, and the columns that name one row's subject.
INTERVAL_KEYS: dict[str, tuple[str, ...]] = {
    "deployments": ("id",),
    "deployment_components": ("deployment_id", "component"),
}

#: Columns that change with every export and so are not the row's values.
RUN_COLUMNS: tuple[str, ...] = ("snapshot_date", "snapshot_at")

#: The columns the view adds.
INTERVAL_COLUMNS: tuple[str, ...] = ("valid_from", "valid_to", "is_current", "removed_on")


def intervals_view_name(table: str) -> str:
    return f"{table}_intervals"


def intervals_sql(table: str, history_view: str | None = None) -> str:
    """The query of `<table>_intervals` over the view `history_view` (`<table>_history`)."""
    history = sql_name(history_view or f"{table}_history")
    keys = ", ".join(sql_name(k) for k in INTERVAL_KEYS[table])
    run = ", ".join(sql_name(c) for c in RUN_COLUMNS)
    return f"""
with _days as (
    select snapshot_date as _day, row_number() over (order by snapshot_date) as _n
    from (select distinct snapshot_date from {history})
),
_last as (select max(_n) as _last_n from _days),
_rows as (
    select h.*, struct_pack(*columns(* exclude ({run}))) as _values from {history} h
),
_marked as (
    select r.*, d._n, l._last_n,
        case when lag(d._n) over w = d._n - 1
            and lag(r._values) over w is not distinct from r._values then 0 else 1 end
            as _starts,
        case when d._n < l._last_n and lead(d._n) over w is distinct from d._n + 1
            then d._n + 1 end as _gone_n
    from _rows r join _days d on r.snapshot_date = d._day cross join _last l
    window w as (partition by {keys} order by d._n)
),
_stretched as (
    select *, sum(_starts) over (partition by {keys} order by _n
        rows between unbounded preceding and current row) as _stretch
    from _marked
),
_ends as (
    select *, max(_n) over s as _end_n, max(_gone_n) over s as _stretch_gone_n
    from _stretched
    window s as (partition by {keys}, _stretch)
)
select e.* exclude ({run}, _values, _n, _last_n, _starts, _gone_n, _stretch, _end_n,
        _stretch_gone_n),
    e.snapshot_date as valid_from,
    case when e._end_n = e._last_n then null else t._day end as valid_to,
    e._end_n = e._last_n as is_current,
    g._day as removed_on
from _ends e
join _days t on t._n = e._end_n
left join _days g on g._n = e._stretch_gone_n
where e._starts = 1
"""
