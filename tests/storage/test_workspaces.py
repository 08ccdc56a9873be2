"""Several workspaces in one snapshot and one day, over the loopback sandbox, read back from
real Parquet (issue 17): fetched concurrently, never replacing each other, a failure named."""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools

import msgspec
import orjson
import pyarrow.compute as pc
import pytest

from dims._connection import RetryPolicy, connect
from dims._errors import TenantMismatchWarning
from dims._evidence import Workspace
from dims._pages import Page
from dims._snapshot import WorkspacesFailed, export_snapshot, take_snapshot
from dims._storage import duckdb_connection, read_arrow
from dims._tables import TABLE_NAMES
from dims.sandbox import Faults, generate_fleet, roll_out, run_sandbox

DAY = dt.date(2026, 2, 3)
SEED = 11


def clients(sandbox, tenants):
    return {t: connect(sandbox.base_url, tenant_id=t, retry=RetryPolicy.none()) for t in tenants}


def export(sandbox, out, tenants, **options):
    options.setdefault("snapshot_date", DAY)
    return take_snapshot(clients(sandbox, tenants), out, **options)


def manifest(out):
    return orjson.loads((out / "_manifests" / f"{DAY}.json").read_bytes())


def ids_by_tenant(out, table="deployments", column="id"):
    found = read_arrow(out, table, DAY, [column, "tenant_id"]).to_pydict()
    by_tenant: dict[str, set[str]] = {}
    for value, tenant in zip(found[column], found["tenant_id"], strict=True):
        by_tenant.setdefault(tenant, set()).add(value)
    return by_tenant


def fleet_ids(fleet):
    by_tenant: dict[str, set[str]] = {}
    for record in fleet.deployments:
        by_tenant.setdefault(record["tenant_id"], set()).add(record["id"])
    return by_tenant


def day_digest(out):
    """Every file of the day and its manifest, byte for byte."""
    manifest_file = out / "_manifests" / f"{DAY}.json"
    files = [*sorted(out.glob(f"*/snapshot_date={DAY}/*.parquet")), manifest_file]
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def test_three_workspaces_land_in_one_snapshot_each_with_its_evidence(tmp_path):
    with run_sandbox(deployments=150, seed=SEED, tenants=3) as sandbox:
        tenants = sandbox.fleet.tenant_ids()
        result = export(sandbox, tmp_path, tenants)
        fleet = sandbox.fleet
        # each workspace was listed with its own X-Tenant-Id: providers once per workspace
        assert sandbox.stats.requests["/v2/auth/providers"] == 3
    assert len(tenants) == 3
    assert ids_by_tenant(tmp_path) == fleet_ids(fleet)
    for table in TABLE_NAMES:
        found = read_arrow(tmp_path, table, DAY, ["tenant_id"])["tenant_id"]
        assert found.null_count == 0, table
        if table not in ("rejected_records", "repositories"):
            assert sorted(pc.unique(found).to_pylist()) == tenants, table
    on_disk = manifest(tmp_path)
    assert on_disk == result.manifest.to_dict()
    assert on_disk["fetch"]["complete"] is True
    for tenant in tenants:
        section = on_disk["workspaces"][tenant]
        assert section["status"] == "exported"
        assert section["deployments"] == len(fleet_ids(fleet)[tenant])
        evidence = on_disk["fetch"]["workspaces"][tenant]
        assert evidence["complete"] is True and evidence["deployments"] == section["deployments"]
        assert {listing["listing"] for listing in evidence["listings"]} >= {"all"}
    summary = result.summary()
    for tenant in tenants:
        assert f"workspace {tenant}: exported, {len(fleet_ids(fleet)[tenant]):,} deployments" in (
            summary
        )


def test_two_exports_of_one_day_keep_each_other_and_a_reexport_replaces_only_its_own(tmp_path):
    with run_sandbox(deployments=120, seed=SEED, tenants=2) as sandbox:
        a, b = sandbox.fleet.tenant_ids()
        expected = fleet_ids(sandbox.fleet)
        export(sandbox, tmp_path, [a])
        first_a = manifest(tmp_path)["workspaces"][a]
        export(sandbox, tmp_path, [b])
        assert ids_by_tenant(tmp_path) == expected  # both present
        assert ids_by_tenant(tmp_path, "deployment_components", "deployment_id") == expected
        b_rows = read_arrow(tmp_path, "deployments", DAY).filter(pc.equal(pc.field("tenant_id"), b))
        moved = set(roll_out(sandbox.fleet, "9.9.9", 1.0))
        export(sandbox, tmp_path, [a])  # A changed since: its rows are replaced, B's kept
    day = read_arrow(tmp_path, "deployments", DAY)
    assert ids_by_tenant(tmp_path) == expected
    versions = dict(zip(day["id"].to_pylist(), day["image_version"].to_pylist(), strict=True))
    assert all(versions[i] == "9.9.9" for i in expected[a])
    assert any(versions[i] != "9.9.9" for i in expected[b] & moved)  # B not re-fetched
    assert (
        day.filter(pc.equal(pc.field("tenant_id"), b))
        .select(b_rows.column_names)
        .equals(b_rows.select(b_rows.column_names))
    )
    sections = manifest(tmp_path)["workspaces"]
    assert sections[a]["status"] == "exported" and sections[a]["export_id"] != first_a["export_id"]
    assert sections[b]["status"] == "carried" and sections[b]["deployments"] == len(expected[b])
    assert manifest(tmp_path)["rows"]["deployments"] == 120
    with duckdb_connection(tmp_path) as db:  # one id once, every table readable together
        ((count, distinct),) = db.execute(
            "select count(*), count(distinct id) from deployments"
        ).fetchall()
    assert count == distinct == 120


def test_a_failed_second_export_leaves_the_first_untouched(tmp_path):
    with run_sandbox(deployments=60, seed=SEED, tenants=2) as probe:
        a, b = probe.fleet.tenant_ids()
    faults = Faults(fail_tenant=b, fail_tenant_status=403)
    with run_sandbox(deployments=60, seed=SEED, tenants=2, faults=faults) as sandbox:
        export(sandbox, tmp_path, [a])
        before = day_digest(tmp_path)
        with pytest.raises(WorkspacesFailed) as failure:
            export(sandbox, tmp_path, [b])
        with pytest.raises(WorkspacesFailed):  # the failure of one of two: still nothing
            export(sandbox, tmp_path, [a, b])
    assert day_digest(tmp_path) == before
    message = str(failure.value)
    assert "\n" not in message and b in message and "403" in message
    assert "nothing was published" in message
    assert not list(tmp_path.glob(".tmp-*"))


def test_allow_partial_publishes_the_others_and_names_the_failed_one(tmp_path):
    with run_sandbox(deployments=90, seed=SEED, tenants=3) as probe:
        a, b, c = probe.fleet.tenant_ids()
        expected = fleet_ids(probe.fleet)
    faults = Faults(fail_tenant=b, fail_tenant_status=500)
    with run_sandbox(deployments=90, seed=SEED, tenants=3) as sandbox:
        export(sandbox, tmp_path, [b])  # an earlier export of B that day
    with run_sandbox(deployments=90, seed=SEED, tenants=3, faults=faults) as sandbox:
        result = export(sandbox, tmp_path, [a, b, c], allow_partial=True)
    assert ids_by_tenant(tmp_path) == expected  # B's earlier rows kept, not lost
    sections = manifest(tmp_path)["workspaces"]
    assert sections[b]["status"] == "failed" and "500" in sections[b]["error"]
    assert sections[b]["kept"]["deployments"] == len(expected[b])
    assert manifest(tmp_path)["fetch"]["complete"] is False
    first = result.summary().splitlines()[0]
    assert first.startswith("PARTIAL: 1 workspace(s) failed") and b in first
    assert f"workspace {b}: FAILED" in result.summary()


def test_allow_partial_drops_what_a_failed_workspace_had_sent(tmp_path):
    """B fails mid-listing (its service ignores `offset`: a paging error after its first
    pages were written); none of B's rows are published, A's are."""
    broken = Faults(ignore_offset=True)
    shape = {"deployments": 90, "seed": SEED, "tenants": 2, "embed_deployment_type": True}
    with (  # records name their type, so pages go to the writer at once (no typed listings)
        run_sandbox(**shape) as sandbox,
        run_sandbox(**shape, faults=broken) as other,
    ):
        a, b = sandbox.fleet.tenant_ids()
        result = take_snapshot(
            {a: connect(sandbox.base_url, tenant_id=a), b: connect(other.base_url, tenant_id=b)},
            tmp_path,
            snapshot_date=DAY,
            page_size=10,
            allow_partial=True,
        )
        expected = fleet_ids(sandbox.fleet)[a]
    assert result.records > len(expected)  # B's first pages did reach the writer
    assert ids_by_tenant(tmp_path) == {a: expected}
    for table in TABLE_NAMES:
        tenants = read_arrow(tmp_path, table, DAY, ["tenant_id"])["tenant_id"]
        assert b not in tenants.to_pylist(), table
    assert result.manifest.workspaces[b].kept is None
    assert "ignore" in result.manifest.workspaces[b].error
    assert result.manifest.rows["deployments"] == len(expected)


def test_workspaces_are_fetched_concurrently(tmp_path):
    """Pages reach the writer as they come: in the written file, the workspaces' rows
    interleave instead of following one another (as a fetch one by one would write them)."""
    shape = {"deployments": 120, "seed": SEED, "tenants": 2, "embed_deployment_type": True}
    with run_sandbox(**shape, latency_ms=20) as sandbox:
        tenants = sandbox.fleet.tenant_ids()
        export(sandbox, tmp_path, tenants, page_size=10, concurrency=1)
    order = read_arrow(tmp_path, "deployments", DAY, ["tenant_id"])["tenant_id"].to_pylist()
    switches = sum(1 for before, after in itertools.pairwise(order) if before != after)
    assert sorted(set(order)) == tenants
    assert switches >= 3, order


def test_worker_processes_keep_each_pages_workspace_and_count_mismatches(tmp_path):
    """Batches read by worker processes (small row groups make several) carry their pages'
    tenant_id, and deployments naming another workspace are counted in the manifest."""
    fleet = generate_fleet(120, seed=SEED, tenants=2)
    a, b = fleet.tenant_ids()
    records = {t: [dict(r) for r in fleet.deployments if r["tenant_id"] == t] for t in (a, b)}
    del records[a][0]["tenant_id"]  # takes its workspace
    records[b][0]["tenant_id"] = a  # fetched from B, names A: kept under A, counted for B
    pages = [
        Page([msgspec.Raw(orjson.dumps(r)) for r in chunk], source="page", tenant_id=tenant)
        for tenant, rows in records.items()
        for chunk in (rows[i : i + 10] for i in range(0, len(rows), 10))
    ]
    found = [Workspace(a), Workspace(b)]
    with pytest.warns(TenantMismatchWarning, match=f"workspace {b}: 1 deployment"):
        result = export_snapshot(
            pages, tmp_path, snapshot_date=DAY, workers=1, row_group_records=20,
            workspaces=found,
        )  # fmt: skip
    day = read_arrow(tmp_path, "deployments", DAY, ["id", "tenant_id"]).to_pydict()
    tenant_of = dict(zip(day["id"], day["tenant_id"], strict=True))
    assert tenant_of[records[a][0]["id"]] == a and tenant_of[records[b][0]["id"]] == a
    assert sum(t == b for t in tenant_of.values()) == len(records[b]) - 1
    components = read_arrow(tmp_path, "deployment_components", DAY, ["deployment_id", "tenant_id"])
    for deployment_id, tenant in zip(*components.to_pydict().values(), strict=True):
        assert tenant == tenant_of[deployment_id]
    assert result.manifest.fetch.workspaces[b].tenant_id_elsewhere == 1
    assert result.manifest.fetch.workspaces[a].tenant_id_elsewhere == 0


def test_workspaces_failed_says_and_carries_each_workspaces_outcome():
    """Built from plain data (errors.py knows no storage), with the message it always had."""
    outcomes = {
        "B": {"status": "failed", "error": "GET /v2/deployments failed: HTTP 403: no"},
        "A": {"status": "fetched", "deployments": 1234},
    }
    failure = WorkspacesFailed(outcomes)
    assert str(failure) == (
        "1 of 2 workspace(s) failed, so nothing was published: B: GET /v2/deployments failed: "
        "HTTP 403: no; fetched: A (1,234 deployments); fix the failed ones, or pass "
        "--allow-partial to publish the others"
    )
    assert failure.workspaces == outcomes and failure.workspaces is not outcomes
    everyone = WorkspacesFailed({"A": {"status": "failed", "error": "e1"}, "B": outcomes["B"]})
    assert str(everyone).endswith("A: e1; B: GET /v2/deployments failed: HTTP 403: no; every "
                                  "workspace failed")  # fmt: skip
