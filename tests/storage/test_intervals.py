"""`<table>_intervals` (dims._storage._intervals) against an independent computation in
Python over the daily files, on a history with gaps (days not exported), a re-exported day,
removed and returning deployments, a change of values and a schema change (the first days
written as schema 1 wrote them)."""

from __future__ import annotations

import copy
import math
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._storage import duckdb_connection
from dims._storage._catalog import write_catalog
from dims._storage._intervals import INTERVAL_KEYS, RUN_COLUMNS
from dims._tables import SCHEMA_VERSION_KEY, TABLE_NAMES
from dims.sandbox import generate_fleet

START = date(2025, 3, 1)
DAYS = [START + timedelta(days=n) for n in range(10)]
GAPS = {DAYS[3], DAYS[6]}  # not exported
EXPORTED = [d for d in DAYS if d not in GAPS]
OLD_SCHEMA = DAYS[:2]


def _fleet_of(day: date, base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    n = DAYS.index(day)
    records = copy.deepcopy(base)
    if n >= 4:  # a change of values (first seen after the gap of day 3)
        records[0]["image_version"] = "2.0.0"
    if n >= 8:  # a second change
        records[0]["image_version"] = "2.1.0"
    if 2 <= n < 5:  # removed on day 2, back on day 5
        records[1] = None
    if n >= 8:  # removed on day 8 for good
        records[2] = None
    return [r for r in records if r is not None]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("intervals") / "data"
    base = generate_fleet(12, seed=7, tenants=2).deployments
    for day in EXPORTED:
        if day == DAYS[7]:  # exported first with other values, then again: the second counts
            wrong = copy.deepcopy(_fleet_of(day, base))
            wrong[0]["image_version"] = "9.9.9"
            export_snapshot([Page(wrong, source="t")], out, snapshot_date=day)
        export_snapshot([Page(_fleet_of(day, base), source="t")], out, snapshot_date=day)
    for day in OLD_SCHEMA:  # schema 1: tenant_id only in deployments
        for name in TABLE_NAMES:
            for path in (out / name / f"snapshot_date={day}").glob("*.parquet"):
                table = pq.read_table(path)
                if name != "deployments" and "tenant_id" in table.column_names:
                    table = table.drop_columns(["tenant_id"])
                elif name == "deployments":
                    table = table.drop_columns(["unreadable_values_json"])
                metadata = {**(table.schema.metadata or {}), SCHEMA_VERSION_KEY: b"1"}
                pq.write_table(table.replace_schema_metadata(metadata), path)
    return out


def _plain(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def expected_intervals(out: Path, table: str) -> set[tuple[Any, ...]]:
    """Stretches computed from each day's files, read one day at a time."""
    keys = INTERVAL_KEYS[table]
    days = sorted(
        date.fromisoformat(p.name.split("=", 1)[1])
        for p in (out / table).glob("snapshot_date=*")
        if any(p.glob("*.parquet"))
    )
    by_day: dict[date, dict[tuple[Any, ...], dict[str, Any]]] = {}
    columns: set[str] = set()
    for day in days:
        folder = out / table / f"snapshot_date={day}"
        tables = [pq.read_table(p) for p in sorted(folder.glob("*.parquet"))]
        rows = pa.concat_tables(tables, promote_options="default").to_pylist()
        by_day[day] = {tuple(row[k] for k in keys): row for row in rows}
        for row in rows:
            columns.update(c for c in row if c not in RUN_COLUMNS)
    found: set[tuple[Any, ...]] = set()
    for key in {k for rows in by_day.values() for k in rows}:
        start: date | None = None
        values: Any = None
        last: date | None = None
        for i, day in enumerate(days):
            row = by_day[day].get(key)
            now = None if row is None else tuple(_plain(row.get(c)) for c in sorted(columns))
            if start is not None and now != values:  # the stretch ends at `last`
                removed = day if row is None else None
                found.add((*key, start, last, False, removed))
                start = None
            if row is not None and start is None:
                start, values = day, now
            if row is not None:
                last = day
            if i == len(days) - 1 and start is not None:
                found.add((*key, start, None, True, None))
    return found


@pytest.mark.parametrize("table", sorted(INTERVAL_KEYS))
def test_intervals_equal_an_independent_computation(history: Path, table: str) -> None:
    keys = ", ".join(INTERVAL_KEYS[table])
    with duckdb_connection(history) as connection:
        got = connection.execute(
            f"select {keys}, valid_from, valid_to, is_current, removed_on from {table}_intervals"
        ).fetchall()
    assert len(got) == len(set(got))
    assert set(got) == expected_intervals(history, table)


def test_the_history_holds_what_the_test_means(history: Path) -> None:
    """The cases are there: a removed and returning deployment, one removed for good, a
    change seen after a gap, and the re-exported day's first values gone."""
    with duckdb_connection(history) as connection:
        rows = connection.execute(
            "select id, image_version, valid_from, valid_to, is_current, removed_on "
            "from deployments_intervals order by id, valid_from"
        ).fetchall()
        ids = [
            r[0]
            for r in connection.execute(
                f"select id from deployments_history where snapshot_date = date '{DAYS[0]}' "
                "order by id"
            ).fetchall()
        ]
    assert not any(r[1] == "9.9.9" for r in rows)
    removed = [r for r in rows if r[5] is not None]
    assert {r[5] for r in removed} == {DAYS[2], DAYS[8]}
    returning = [r for r in rows if r[5] == DAYS[2]]
    assert len(returning) == 1
    later = [r for r in rows if r[0] == returning[0][0] and r[2] > DAYS[2]]
    assert [r[2] for r in later] == [DAYS[5]]
    assert len(ids) == 12
    assert {r[2] for r in rows if r[1] == "2.0.0"} == {DAYS[4]}


def test_a_point_in_time_query_gives_each_days_snapshot(history: Path) -> None:
    """`day BETWEEN valid_from AND coalesce(valid_to, ...)` is the day's snapshot."""
    with duckdb_connection(history) as connection:
        for day in EXPORTED:
            at = connection.execute(
                "select id, image_version from deployments_intervals where ? between "
                "valid_from and coalesce(valid_to, date '9999-12-31') order by id",
                [day],
            ).fetchall()
            seen = connection.execute(
                "select id, image_version from deployments_history where snapshot_date = ? "
                "order by id",
                [day],
            ).fetchall()
            assert at == seen, day


def test_the_catalog_carries_the_intervals_views(history: Path, tmp_path: Path) -> None:
    import duckdb

    catalog = write_catalog(history, tmp_path / "c.duckdb")
    assert {"deployments_intervals", "deployment_components_intervals"} <= set(catalog.views)
    with duckdb.connect(str(catalog.file), read_only=True) as connection:
        got = connection.execute(
            "select id, valid_from, valid_to, is_current, removed_on from deployments_intervals"
        ).fetchall()
    assert set(got) == expected_intervals(history, "deployments")
