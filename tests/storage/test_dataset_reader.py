"""Reading the dataset back: while a day is replaced, with bad files in it, and through the
views `dims sql` and `dims._storage.duckdb_connection` give (the latest snapshot by
default, every snapshot in `<table>_history`). Real Parquet files on a real filesystem."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_in_process import run
from repo import ROOT

from dims._errors import DatasetError
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._storage import duckdb_connection, read_table, read_tables
from dims._storage._reader import latest_date
from dims.sandbox import generate_fleet

DIMS = Path(sys.executable).parent / "dims"
D1, D2 = date(2025, 1, 1), date(2025, 1, 2)
PART = "part-0.parquet"


def dims(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DIMS), *args], capture_output=True, text=True, timeout=120)


def export(out: Path, day: date, count: int, seed: int, **options) -> set[str]:
    """Export a generated fleet as `day`; the ids of its deployments."""
    fleet = generate_fleet(count, seed=seed)
    export_snapshot([Page(fleet.deployments, source="t")], out, snapshot_date=day, **options)
    return {r["id"] for r in fleet.deployments if isinstance(r, dict) and "id" in r}


@pytest.fixture
def two_days(tmp_path):
    """D1 with 40 deployments, D2 (the latest) with 25."""
    out = tmp_path / "data"
    first = export(out, D1, 40, seed=1)
    second = export(out, D2, 25, seed=2)
    assert len(first) == 40 and len(second) == 25
    return out, first, second


# --- a reader while the day is replaced ------------------------------------------------------


def test_a_reader_racing_reexports_of_its_day_sees_one_version_or_the_other(tmp_path):
    """The day is re-exported again and again (two fleets in turn) while a thread reads it:
    every read succeeds and holds exactly one fleet's deployments, and `read_tables` gives
    the deployments and components of the same export."""
    out = tmp_path / "data"
    versions = [export(out, D1, 120, seed=1), export(out, D1, 90, seed=2)]
    whole = {frozenset(v) for v in versions}
    seen: list[frozenset[str]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def read_until_done() -> None:
        while not done.is_set() and len(seen) < 5000:
            try:
                assert frozenset(read_table(out, "deployments", D1)["id"]) in whole
                found = read_tables(out, {"deployments": ["id"], "deployment_components": None})
                ids = frozenset(found["deployments"]["id"].to_pylist())
                assert set(found["deployment_components"]["deployment_id"].to_pylist()) == ids
                seen.append(ids)
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)
                return

    reader = threading.Thread(target=read_until_done)
    reader.start()
    try:
        for n in range(16):
            export(out, D1, 120 if n % 2 == 0 else 90, seed=1 + n % 2)
    finally:
        done.set()
        reader.join(timeout=60)
    assert not reader.is_alive()
    assert errors == []
    assert seen and set(seen) <= whole
    assert len(list((out / "_replaced").iterdir())) == 3  # pruned to the last few versions


def test_read_tables_refuses_tables_of_two_exports(tmp_path):
    """A day whose tables came from two exports (what a reader would see mid-swap, made
    here by copying a file) is read again, then refused: never returned mixed."""
    out, other = tmp_path / "data", tmp_path / "other"
    export(out, D1, 30, seed=1)
    export(other, D1, 30, seed=2)
    part = Path("deployment_components") / "snapshot_date=2025-01-01" / PART
    (out / part).write_bytes((other / part).read_bytes())
    with pytest.raises(DatasetError, match="was replaced 12 times while it was read"):
        read_tables(out, {"deployments": None, "deployment_components": None})
    assert set(read_tables(out, {"deployments": None})) == {"deployments"}


# --- bad files in the dataset ----------------------------------------------------------------


def _foreign_parquet(path: Path) -> None:
    pq.write_table(pa.table({"id": ["x"], "name": ["not from dims"]}), path)


BAD_FILES = {
    "not-parquet": lambda path: path.write_text("id,name\nx,y\n"),
    "empty": lambda path: path.write_bytes(b""),
    "foreign-parquet": _foreign_parquet,
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_bad_part_file_is_one_line_naming_it(two_days, kind):
    """Reports and diff stop with one line naming the file, never a traceback, and `dims diff`
    never shows the fleet dropping to nothing because of a stranger's file."""
    out, _, _ = two_days
    bad = out / "deployments" / "snapshot_date=2025-01-02" / PART
    BAD_FILES[kind](bad)
    with pytest.raises(DatasetError, match=str(bad)) as info:
        read_table(out, "deployments")
    assert "\n" not in str(info.value)
    for command in (["diff"], ["report"], ["sql", "select count(*) from deployments"]):
        done = dims(*command, "--out", str(out))
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1, (command, done.stderr)
        assert "Traceback" not in done.stderr
        assert str(bad) in lines[0], lines[0]
        assert done.stdout == ""


def test_a_dims_file_of_an_older_schema_reads_with_its_missing_columns_as_nulls(tmp_path):
    """Not foreign: a dims file (it has the schema version) lacking a column of today's."""
    out = tmp_path / "data"
    export(out, D1, 10, seed=1)
    path = out / "deployments" / "snapshot_date=2025-01-01" / PART
    older = pq.read_table(path).drop_columns(["deployment_type"])
    pq.write_table(older, path)
    frame = read_table(out, "deployments")
    assert len(frame) == 10 and frame["deployment_type"].isna().all()


# --- the latest snapshot by default -----------------------------------------------------------


def test_views_count_the_latest_snapshot_and_history_counts_all(two_days):
    out, first, second = two_days
    assert latest_date(out) == D2
    with duckdb_connection(out) as connection:
        ((latest,),) = connection.execute("select count(*) from deployments").fetchall()
        ((history,),) = connection.execute("select count(*) from deployments_history").fetchall()
        days = connection.execute(
            "select snapshot_date, count(*) from deployments_history group by 1 order by 1"
        ).fetchall()
        ((orphans,),) = connection.execute(
            "select count(*) from deployment_components "
            "where deployment_id not in (select id from deployments)"
        ).fetchall()
    assert (latest, history) == (len(second), len(first) + len(second))
    assert days == [(D1, len(first)), (D2, len(second))]
    assert orphans == 0
    assert set(read_table(out, "deployments")["id"]) == second


def test_dims_sql_prints_a_table_or_json_rows(two_days):
    out, _, second = two_days
    done = dims("sql", "--out", str(out), "select count(*) as n from deployments")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["n", "--", str(len(second)), "(1", "row)"]
    done = dims(
        "sql",
        "--out",
        str(out),
        "--json",
        "select snapshot_date, count(*) as n from deployments_history group by 1 order by 1",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        {"snapshot_date": "2025-01-01", "n": 40},
        {"snapshot_date": "2025-01-02", "n": 25},
    ]


def test_dims_sql_returns_timestamps_as_utc_instants(two_days):
    """Timestamp columns reach Python (DuckDB needs pytz for that: a product dependency)."""
    out, _, _ = two_days
    query = "select min(created_at) as first, max(snapshot_at) as taken from deployments"
    done = dims("sql", "--out", str(out), "--json", query)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    first, taken = (datetime.fromisoformat(row[k]) for k in ("first", "taken"))
    assert first.utcoffset() == taken.utcoffset() == timedelta(0)
    assert first < taken


@pytest.mark.parametrize(
    "query", ["selec 1", "select * from no_such_table", "select 1/0::int from deployments"]
)
def test_dims_sql_a_bad_query_is_one_line(two_days, query):
    out, _, _ = two_days
    done = dims("sql", "--out", str(out), query)
    if query.startswith("select 1/0"):  # DuckDB answers NULL, not an error: still no traceback
        assert done.returncode == 0, done.stderr
        return
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("dims sql: error: the query failed: ")
    assert "Traceback" not in done.stderr


def test_dims_sql_without_a_dataset_says_what_to_do(tmp_path):
    done = dims("sql", "--out", str(tmp_path / "nothing"), "select 1")
    assert done.returncode == 1
    assert "run `dims export`" in done.stderr and "Traceback" not in done.stderr


def test_the_readme_duckdb_example_counts_each_deployment_once(two_days):
    """The dataset page's example, run as written (in the dataset's parent folder)."""
    out, _, second = two_days
    readme = (ROOT / "docs" / "dataset.md").read_text()
    block = readme.split("```python\nfrom dims import duckdb_connection", 1)[1]
    code = "from dims import duckdb_connection" + block.split("```", 1)[0]
    code = code.replace('"dims-data"', repr(str(out)))
    namespace: dict = {}
    exec(compile(code, "docs/dataset.md", "exec"), namespace)  # our own docs, run as written
    assert namespace["fleet"] == len(second)


#: Dataset folders side by side whose names DuckDB would take for globs matching the others.
GLOB_NAMES = ["ds1", "dsx", "ds[1]", "ds*", "ds?", "ds[!x]", "ds**", "d's*", "d\\[s"]


def test_each_dataset_reads_only_its_own_files_whatever_its_name(tmp_path, capsys):
    """`--out ds[1]` beside `ds1` (and `ds*`, `ds?` beside every other): `dims sql`'s views,
    `duckdb_connection` and `read_table` read that dataset's files only, never a neighbour's
    the name matches as a pattern."""
    counts = {name: 3 + n for n, name in enumerate(GLOB_NAMES)}
    for name, count in counts.items():
        export(tmp_path / name, D1, count, seed=count)
    for name, count in counts.items():
        out = tmp_path / name
        code, printed, err = run(
            capsys, "sql", "--out", str(out), "--json",
            "select (select count(*) from deployments) as latest, "
            "(select count(*) from deployments_history) as history, "
            "(select count(distinct deployment_id) from deployment_components) as components",
        )  # fmt: skip
        assert code == 0, err
        assert json.loads(printed) == [{"latest": count, "history": count, "components": count}]
        assert len(read_table(out, "deployments")) == count
        with duckdb_connection(out) as connection:
            ((labels,),) = connection.execute(
                "select count(distinct deployment_id) from deployment_labels"
            ).fetchall()
        assert labels == len(read_table(out, "deployment_labels")["deployment_id"].unique())
