"""Long history: a question about one snapshot opens only that snapshot's files.

The earlier days' part files are overwritten with bytes that are not Parquet: any reader
that opened one would fail naming it. The latest-snapshot readers (`read_table`,
`load_snapshot`, the `deployments` view, `dims sql` on it) still answer, so they never open
an old day; the history readers (`<table>_history`, `versions_over_time`) do read every
day, and say which file they cannot read in one line. Costs at 1, 30, 365 and 1,095 days
are measured by `python -m benchmarks history`, not here (no timed tests).
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from dims import _reports as reports
from dims._errors import DatasetError
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._storage import duckdb_connection, history_counts, read_table
from dims._storage._reader import latest_date
from dims._tables import TABLE_NAMES
from dims.sandbox import generate_fleet

DIMS = Path(sys.executable).parent / "dims"
LATEST = date(2025, 2, 1)
DAYS = [LATEST - timedelta(days=back) for back in (3, 2, 1, 0)]  # oldest first


def dims(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DIMS), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def fleets() -> dict[date, list[dict]]:
    """A different fleet each day (sizes 20, 21, 22, 23), so counts tell days apart."""
    return {day: generate_fleet(20 + n, seed=n).deployments for n, day in enumerate(DAYS)}


def _export_days(out: Path, fleets: dict[date, list[dict]]) -> Path:
    for day, records in fleets.items():
        export_snapshot([Page(records, source="t")], out, snapshot_date=day)
    return out


@pytest.fixture
def old_days_unreadable(tmp_path: Path, fleets: dict[date, list[dict]]) -> Path:
    """The dataset with every part file of every day but the latest made not-Parquet."""
    out = _export_days(tmp_path / "data", fleets)
    for table in TABLE_NAMES:
        for day in DAYS[:-1]:
            for part in (out / table / f"snapshot_date={day}").glob("*.parquet"):
                part.write_bytes(b"not parquet: a reader of the latest snapshot never opens me")
    return out


def test_latest_snapshot_readers_open_only_the_latest_days_files(
    old_days_unreadable: Path, fleets: dict[date, list[dict]]
) -> None:
    out = old_days_unreadable
    latest_ids = {record["id"] for record in fleets[LATEST]}
    assert latest_date(out) == LATEST
    assert set(read_table(out, "deployments")["id"]) == latest_ids
    snapshot = reports.load_snapshot(out)
    assert snapshot.snapshot_date == LATEST.isoformat()
    assert set(snapshot.deployments["id"]) == latest_ids
    assert len(reports.capacity_by(snapshot, ["deployment_type"])) > 0
    with duckdb_connection(out) as connection:  # every view made; only the latest opened
        ((count,),) = connection.execute("select count(*) from deployments").fetchall()
    assert count == len(latest_ids)
    done = dims("sql", "--out", str(out), "--json", "select count(*) as n from deployments")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[", "{", '"n":', f"{len(latest_ids)}", "}", "]"]


def test_history_readers_read_every_day_and_name_a_file_they_cannot_read(
    old_days_unreadable: Path,
) -> None:
    out = old_days_unreadable
    done = dims("sql", "--out", str(out), "select count(*) from deployments_history")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and str(out / "deployments") in lines[0], lines[0]
    with pytest.raises(DatasetError, match="cannot read the history of deployments") as info:
        reports.versions_over_time(out)
    assert "\n" not in str(info.value)


def test_history_counts_match_every_days_own_rows(
    tmp_path: Path, fleets: dict[date, list[dict]]
) -> None:
    out = _export_days(tmp_path / "data", fleets)
    counted = history_counts(out, "deployments", ["image_version"])
    got = {
        (day, version): rows
        for day, version, rows in zip(
            counted["snapshot_date"], counted["image_version"], counted["rows"], strict=True
        )
    }
    want = {
        (day.isoformat(), version): rows
        for day, records in fleets.items()
        for version, rows in Counter(record.get("image_version") for record in records).items()
    }
    assert {(d, None if pd.isna(v) else v): n for (d, v), n in got.items()} == want
    with duckdb_connection(out) as connection:
        per_day = connection.execute(
            "select snapshot_date, count(*) from deployments_history group by 1 order by 1"
        ).fetchall()
    assert per_day == [(day, len(fleets[day])) for day in DAYS]


#: The plain-DuckDB query of docs/dataset.md (Reading from other engines), the folder filled in.
README_DUCKDB = """
select deployment_type, count(*), sum(cpu)
from read_parquet('{out}/deployments/*/*.parquet', hive_partitioning = true)
where snapshot_date = (select max(snapshot_date)
                       from read_parquet('{out}/deployments/*/*.parquet', hive_partitioning = true))
group by 1;
"""


def test_the_readmes_plain_duckdb_query_reads_the_latest_snapshot(
    tmp_path: Path, fleets: dict[date, list[dict]]
) -> None:
    out = _export_days(tmp_path / "data", fleets)
    rows = duckdb.sql(README_DUCKDB.format(out=out)).fetchall()
    latest = read_table(out, "deployments")
    assert sum(count for _, count, _ in rows) == len(fleets[LATEST]) == len(latest)
    by_type = latest.groupby("deployment_type", dropna=False)["cpu"].sum(min_count=1)
    for kind, _, cpu in rows:
        want = by_type[kind] if kind is not None else by_type[by_type.index.isna()].iloc[0]
        assert (cpu is None and pd.isna(want)) or cpu == pytest.approx(want), kind


@pytest.mark.parametrize("older_first", [True, False], ids=["older-day-first", "newer-day-first"])
def test_history_counts_read_days_whose_columns_differ(tmp_path: Path, older_first: bool) -> None:
    """The history is counted over the days' own schemas at once (no union of thousands of
    schemas) when they agree; a day written before a column existed still counts, its rows
    under a null value, whichever day comes first, and no day is dropped."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    older = pa.table({"id": ["a", "b"], "image_version": ["0.1.0", "0.1.0"]})
    newer = pa.table({"id": ["a", "b", "c"], "image_version": ["0.2.0"] * 3, "name": ["x"] * 3})
    days = {"2025-01-01": older, "2025-01-02": newer}
    if not older_first:
        days = {"2025-01-01": newer, "2025-01-02": older}
    for day, rows in days.items():
        folder = tmp_path / "deployments" / f"snapshot_date={day}"
        folder.mkdir(parents=True)
        pq.write_table(rows, folder / "part-0.parquet")
    counted = history_counts(tmp_path, "deployments", ["name"])
    got = {
        (r.snapshot_date, None if pd.isna(r.name) else r.name, r.rows) for r in counted.itertuples()
    }
    want = {
        (day, None if "name" not in rows.column_names else "x", rows.num_rows)
        for day, rows in days.items()
    }
    assert got == want
    by_version = history_counts(tmp_path, "deployments", ["image_version"])
    assert by_version["rows"].sum() == 5 and set(by_version["snapshot_date"]) == set(days)


def _counts_without_duckdb(out: Path, by: list[str]) -> pd.DataFrame:
    """`history_counts` where `import duckdb` fails, as without the `sql` extra (the base
    install's own run of it is tests/spec/test_wheel.py's)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "duckdb", None)
        return history_counts(out, "deployments", by)


@pytest.mark.parametrize("by", [["image_version"], ["deployment_type", "image_version"]])
def test_without_duckdb_arrow_counts_the_history_as_duckdb_does(
    tmp_path: Path, fleets: dict[date, list[dict]], by: list[str]
) -> None:
    """The reports need no `dims[sql]`: without DuckDB, Arrow counts the same frame, row for
    row and in the same order (nulls last)."""
    out = _export_days(tmp_path / "data", fleets)
    by_duckdb = history_counts(out, "deployments", by)
    by_arrow = _counts_without_duckdb(out, by)
    assert len(by_arrow) > len(DAYS)
    pd.testing.assert_frame_equal(by_arrow, by_duckdb, check_dtype=False)


def test_without_duckdb_days_whose_columns_differ_still_count(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    older = pa.table({"id": ["a", "b"], "image_version": ["0.1.0", "0.1.0"]})
    newer = pa.table({"id": ["a", "b", "c"], "image_version": ["0.2.0"] * 3, "name": ["x"] * 3})
    for day, rows in {"2025-01-01": older, "2025-01-02": newer}.items():
        folder = tmp_path / "deployments" / f"snapshot_date={day}"
        folder.mkdir(parents=True)
        pq.write_table(rows, folder / "part-0.parquet")
    by_arrow = _counts_without_duckdb(tmp_path, ["name"])
    pd.testing.assert_frame_equal(
        by_arrow, history_counts(tmp_path, "deployments", ["name"]), check_dtype=False
    )
