"""A dataset holding days of schema 1 (no tenant_id outside deployments, no
unreadable_values_json) and of the current schema: every reader unions them, old days
reading the newer columns as null (issue 17; schema 3, issue 35)."""

from __future__ import annotations

from datetime import date

import duckdb
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from dims import _reports as reports
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._storage import duckdb_connection, read_arrow, read_table
from dims._tables import SCHEMA_VERSION, SCHEMA_VERSION_KEY, TABLE_NAMES, TABLE_SCHEMAS
from dims.sandbox import generate_fleet

OLD_DAY, NEW_DAY = date(2025, 4, 1), date(2025, 4, 2)


def as_schema_1(out, day):
    """Rewrite a day's files the way schema 1 wrote them: tenant_id only in deployments."""
    for name in TABLE_NAMES:
        for path in (out / name / f"snapshot_date={day}").glob("*.parquet"):
            table = pq.read_table(path)
            if name != "deployments":
                table = table.drop_columns(["tenant_id"])
            else:
                table = table.drop_columns(["unreadable_values_json"])
            metadata = {**table.schema.metadata, SCHEMA_VERSION_KEY: b"1"}
            pq.write_table(table.replace_schema_metadata(metadata), path)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixed")
    fleet = generate_fleet(60, seed=4, tenants=2)
    for day in (OLD_DAY, NEW_DAY):
        export_snapshot(
            [Page(fleet.deployments, source="dump")],
            out,
            providers=fleet.providers,
            repositories=fleet.repositories,
            snapshot_date=day,
        )
    as_schema_1(out, OLD_DAY)
    return out, fleet


def test_the_new_day_is_the_current_schema_and_the_old_one_lacks_the_columns(mixed):
    out, _ = mixed
    assert SCHEMA_VERSION == 3
    for table, column in (("deployment_components", "tenant_id"),
                          ("deployments", "unreadable_values_json")):  # fmt: skip
        folder = out / table
        old = pq.read_schema(folder / f"snapshot_date={OLD_DAY}" / "part-0.parquet")
        new = pq.read_schema(folder / f"snapshot_date={NEW_DAY}" / "part-0.parquet")
        assert column not in old.names and column in new.names
        assert new.metadata[SCHEMA_VERSION_KEY] == str(SCHEMA_VERSION).encode()


def test_an_old_day_reads_unreadable_values_json_as_null(mixed):
    out, fleet = mixed
    old = read_arrow(out, "deployments", OLD_DAY)
    assert old.schema.field("unreadable_values_json").type == "string"
    assert old["unreadable_values_json"].null_count == old.num_rows == len(fleet.deployments)


def test_read_arrow_gives_an_old_day_null_tenant_ids(mixed):
    out, fleet = mixed
    old = read_arrow(out, "deployment_components", OLD_DAY)
    new = read_arrow(out, "deployment_components", NEW_DAY)
    assert old.schema.field("tenant_id").type == "string"
    assert old["tenant_id"].null_count == old.num_rows == new.num_rows
    assert new["tenant_id"].null_count == 0
    frame = read_table(out, "oauth_providers", OLD_DAY)
    assert frame["tenant_id"].isna().all() and len(frame) == len(fleet.providers)


def test_duckdb_history_views_union_both_schemas(mixed):
    out, fleet = mixed
    with duckdb_connection(out) as db:
        rows = db.execute(
            "select snapshot_date::text, count(*), count(tenant_id), count(distinct tenant_id) "
            "from deployment_components_history group by 1 order by 1"
        ).fetchall()
        per_tenant = db.execute(
            "select tenant_id, count(*) from deployments group by 1 order by 1"
        ).fetchall()
    components = 6 * len(fleet.deployments)
    assert rows == [
        (OLD_DAY.isoformat(), components, 0, 0),
        (NEW_DAY.isoformat(), components, components, 2),
    ]
    assert [tenant for tenant, _ in per_tenant] == fleet.tenant_ids()


def test_pyarrow_dataset_unifies_with_the_explicit_schema(mixed):
    out, _ = mixed
    schema = TABLE_SCHEMAS["deployment_labels"]
    found = ds.dataset(out / "deployment_labels", schema=schema, partitioning="hive").to_table()
    assert found.num_rows > 0
    assert found["tenant_id"].null_count == found.num_rows // 2  # the old day's half


def test_reports_and_diff_read_across_the_schema_change(mixed):
    out, fleet = mixed
    result = reports.diff(out, from_date=OLD_DAY, to_date=NEW_DAY)
    assert result.counts()["added"] == result.counts()["removed"] == 0
    assert reports.capacity_summary(out).deployments.sum() > 0
    assert len(fleet.deployments) == 60


def test_plain_duckdb_unions_both_schemas_by_name(mixed):
    out, fleet = mixed
    pattern = str(out / "deployment_secrets" / "*" / "*.parquet")
    with duckdb.connect() as db:
        rows = db.execute(
            "select snapshot_date::text, count(*), count(tenant_id) from read_parquet(?, "
            "hive_partitioning = true, union_by_name = true) group by 1 order by 1",
            [pattern],
        ).fetchall()
    secrets = sum(len(r.get("secrets") or []) for r in fleet.deployments)
    assert rows == [(OLD_DAY.isoformat(), secrets, 0), (NEW_DAY.isoformat(), secrets, secrets)]
