"""`dims catalog`: a DuckDB file of views that a BI tool opens and reads the right numbers
from; rerun after an export, it follows the new day; on object storage its views name
`s3://` files and the file holds no credential.

Every check opens the file as a tool would, with a fresh read-only DuckDB connection, and
compares its counts with the Parquet files read back with pyarrow (dims._storage).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import fleet_math as fm
import pytest
from cli_in_process import run

from dims import _reports as reports
from dims import _storage as storage
from dims._errors import DatasetError
from dims._tables import TABLE_NAMES


def _open(file: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(file), read_only=True)


def _count(connection: duckdb.DuckDBPyConnection, view: str) -> int:
    (count,) = connection.execute(f'select count(*) from "{view}"').fetchone() or (0,)
    return int(count)


def _view_sql(connection: duckdb.DuckDBPyConnection) -> dict[str, str]:
    rows = connection.execute("select view_name, sql from duckdb_views() where not internal")
    return dict(rows.fetchall())


def _expected(out: Path | str) -> dict[str, int]:
    """Rows per view, read from the files: each table's latest day, and all its days."""
    days = storage.snapshot_dates(out)
    counts: dict[str, int] = {}
    for table in TABLE_NAMES:
        present = [d for d in days if storage.has_snapshot(out, table, d)]
        if days[-1] in present:
            counts[table] = storage.read_arrow(out, table, days[-1]).num_rows
        if present:
            counts[f"{table}_history"] = sum(
                storage.read_arrow(out, table, d).num_rows for d in present
            )
    return counts


def _counts(file: Path, views: list[str]) -> dict[str, int]:
    with _open(file) as connection:
        return {view: _count(connection, view) for view in views}


def test_the_catalog_holds_views_whose_counts_are_the_datasets(dataset, tmp_path) -> None:
    file = tmp_path / "dims.duckdb"
    catalog = storage.write_catalog(dataset, file)
    want = _expected(dataset)
    assert want["deployments"] == 300
    assert _counts(file, list(want)) == want
    with _open(file) as connection:
        assert connection.execute("select count(*) from duckdb_tables()").fetchone() == (0,)
        sql = _view_sql(connection)
        (info,) = connection.execute("select dataset, snapshot_date from dims_catalog").fetchall()
    assert set(sql) == set(catalog.views) == {*want, "dims_catalog"} | set(catalog.views)
    assert info == (str(dataset.resolve()), storage.snapshot_dates(dataset)[-1])
    for view, text in sql.items():  # every file by absolute path, none by a pattern
        if view.endswith("_intervals"):  # a query over its history view, no file of its own
            assert f" {view.removesuffix('_intervals')}_history " in text, view
            assert not re.findall(r"'([^']*)'", text), view
        elif view != "dims_catalog":
            files = re.findall(r"'([^']*)'", text)
            assert files and all(f.startswith(f"{dataset.resolve()}/") for f in files), view
            assert not any("*" in f for f in files), view


def test_a_rerun_after_a_new_snapshot_follows_it(fleet, dataset, tmp_path, monkeypatch, capsys):
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    monkeypatch.chdir(tmp_path)
    file = Path("dims.duckdb")  # relative names on the command line, absolute in the views
    code, _, _ = run(capsys, "catalog", str(file), "--out", "data")
    assert code == 0
    with _open(file) as connection:
        for view, text in _view_sql(connection).items():
            files = re.findall(r"'([^']*\.parquet)'", text)
            assert all(f.startswith(f"{tmp_path.resolve()}/data/") for f in files), view
    before = _counts(file, ["deployments", "deployments_history"])
    assert before == {"deployments": 300, "deployments_history": 300}
    kept = fleet.deployments[:240]
    fm.export_fleet(kept, fleet.deployment_types, out, "2025-06-09")
    assert _counts(file, ["deployments"]) == {"deployments": 300}  # until it is rerun
    code, _, _ = run(capsys, "catalog", str(file), "--out", "data")
    assert code == 0
    want = _expected(out)
    assert want["deployments"] == 240 and want["deployments_history"] == 540
    assert _counts(file, list(want)) == want
    with _open(file) as connection:
        (day,) = connection.execute("select snapshot_date from dims_catalog").fetchone()
        assert day.isoformat() == "2025-06-09"
        days = connection.execute("select distinct snapshot_date from deployments").fetchall()
        assert [d.isoformat() for (d,) in days] == ["2025-06-09"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "dims.duckdb"]


def test_the_report_tables_are_views_too(dataset, tmp_path) -> None:
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    shutil.rmtree(out / "reports", ignore_errors=True)
    reports.write_report(out)
    file = tmp_path / "dims.duckdb"
    catalog = storage.write_catalog(out, file)
    assert {"cost_by_deployment", "capacity_summary", "image_version_summary"} <= set(catalog.views)
    costs = reports.cost_by_deployment(reports.load_snapshot(out))
    with _open(file) as connection:
        total = connection.execute(
            "select sum(cost_request_max_scale_usd_month) from cost_by_deployment"
        ).fetchone()[0]
    assert round(total, 2) == round(costs["cost_request_max_scale_usd_month"].sum(), 2)


def test_on_object_storage_the_views_name_s3_files_and_no_secret(
    fleet, s3_out, s3_server, tmp_path
):
    fm.export_fleet(fleet.deployments[:50], fleet.deployment_types, s3_out, "2025-06-02")
    fm.export_fleet(fleet.deployments[:40], fleet.deployment_types, s3_out, "2025-06-03")
    file = tmp_path / "dims.duckdb"
    catalog = storage.write_catalog(s3_out, file)
    assert catalog.dataset == s3_out
    data = file.read_bytes()
    for secret in (s3_server.secret_key, s3_server.access_key):
        assert secret.encode() not in data
    with _open(file) as connection:
        sql = _view_sql(connection)
        setup = connection.execute("select setup_sql from dims_catalog").fetchone()[0]
        assert "CREATE SECRET" in setup and "<secret access key>" in setup
        assert s3_server.endpoint.split("://", 1)[1] in setup
        for view, text in sql.items():
            if view != "dims_catalog" and not view.endswith("_intervals"):
                assert f"'{s3_out}/" in text and "/tmp" not in text, view
        # a tool lends DuckDB a reader with its own credentials (here dims's, via pyarrow)
        connection.register_filesystem(storage.store_filesystem(storage.open_store(s3_out)))
        assert _count(connection, "deployments") == 40
        assert _count(connection, "deployments_history") == 90
        assert (
            _count(connection, "deployment_components")
            == storage.read_arrow(s3_out, "deployment_components").num_rows
        )


@pytest.mark.parametrize("file", ["s3://bucket/dims.duckdb", "gs://b/c.duckdb"])
def test_a_catalog_on_object_storage_is_a_usage_error(capsys, tmp_path, file) -> None:
    code, printed, err = run(capsys, "catalog", file, "--out", str(tmp_path))
    assert code == 2 and printed == ""
    assert err.count("\n") == 1 and "local file" in err


def test_a_dataset_without_a_snapshot_is_one_line(capsys, tmp_path) -> None:
    file = tmp_path / "dims.duckdb"
    code, printed, err = run(capsys, "catalog", str(file), "--out", str(tmp_path / "empty"))
    assert code == 1 and printed == ""
    assert err.count("\n") == 1 and err.startswith("dims catalog: error: no snapshot")
    assert not file.exists()


def test_a_failed_catalog_leaves_the_earlier_one(dataset, tmp_path, monkeypatch) -> None:
    file = tmp_path / "dims.duckdb"
    storage.write_catalog(dataset, file)
    before = file.read_bytes()
    from dims._storage import _catalog

    real = _catalog.parquet_view_sql
    monkeypatch.setattr(
        _catalog, "parquet_view_sql", lambda files: real(files).replace("read_parquet", "nope")
    )
    with pytest.raises(DatasetError, match="cannot write the catalog"):
        storage.write_catalog(dataset, file)
    assert file.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dims.duckdb"]


# -- names that are data: a planted file, a quote in a path --------------------------------------

#: A report file's name that, pasted into SQL as it is, ends the view's name and runs a COPY.
PLANTED = "x\" as select 1; copy (select 42 as pwned) to 'pwned.csv'; create view \"y"


def _planted(dataset: Path, tmp_path: Path) -> Path:
    """A copy of the dataset with a valid Parquet file of that name among its reports."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    day = storage.snapshot_dates(out)[-1]
    folder = out / "reports" / f"snapshot_date={day}"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"a": [1, 2, 3]}), folder / f"{PLANTED}.parquet")
    return out


def test_a_planted_report_file_runs_no_sql_in_the_catalog(dataset, tmp_path, monkeypatch, capsys):
    out = _planted(dataset, tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "catalog", "dims.duckdb", "--out", str(out))
    assert code == 0, err
    assert not (tmp_path / "pwned.csv").exists()
    with _open(tmp_path / "dims.duckdb") as connection:
        assert PLANTED in _view_sql(connection)  # a view of that very name, and no other
        (count,) = connection.execute(
            f'select count(*) from "{PLANTED.replace(chr(34), 2 * chr(34))}"'
        ).fetchone()
    assert count == 3
    assert not (tmp_path / "pwned.csv").exists()


def test_a_planted_report_file_runs_no_sql_in_dims_sql(dataset, tmp_path, monkeypatch, capsys):
    out = _planted(dataset, tmp_path)
    monkeypatch.chdir(tmp_path)
    code, printed, err = run(capsys, "sql", "--out", str(out), "--json", "show tables")
    assert code == 0, err
    assert PLANTED in {row["name"] for row in json.loads(printed)}
    assert not (tmp_path / "pwned.csv").exists()


def test_a_quote_in_the_datasets_path_keeps_the_views_whole(dataset, tmp_path) -> None:
    out = tmp_path / 'it\'s "the" data'
    shutil.copytree(dataset, out)
    shutil.rmtree(out / "reports", ignore_errors=True)
    reports.write_report(out)
    file = tmp_path / "dims.duckdb"
    catalog = storage.write_catalog(out, file)
    want = _expected(out)
    assert _counts(file, list(want)) == want
    assert "cost_by_deployment" in catalog.views
    assert _counts(file, ["cost_by_deployment"]) == {"cost_by_deployment": 300}
    with _open(file) as connection:
        (dataset_named,) = connection.execute("select dataset from dims_catalog").fetchone()
    assert dataset_named == str(out.resolve())


def test_sql_names_and_texts_double_their_quotes() -> None:
    from dims._escape import sql_name, sql_text

    with duckdb.connect() as connection:
        for text in ["plain", "it's", 'a "b"', "'; drop table x; --", '"; select 1; --', ""]:
            assert connection.execute(f"select {sql_text(text)}").fetchone() == (text,)
            if text:
                connection.execute(f"create view {sql_name(text)} as select 1 as one")
                assert connection.execute(f"select one from {sql_name(text)}").fetchone() == (1,)
